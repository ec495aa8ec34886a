/**
 * @weft/codec: the protocol's byte- and text-level rules for MissionWeaveProtocol 0.1.
 * @packageDocumentation
 */
export { ProtocolError, UsageError, isErrorCode } from './errors.js'
export type { ProtocolErrorOptions, WireError } from './errors.js'
export { ERROR_CODE_INFO, ERROR_CODES } from './gen/error-codes.js'
export type { ErrorCode } from './gen/error-codes.js'

// Format rules of §2, shared with @weft/validators.
export { isAbsoluteUri, isProtocolTimestamp, isSha256, isCanonicalBase64url } from './formats.js'
