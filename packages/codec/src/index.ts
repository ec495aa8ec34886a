/**
 * @weft/codec: the byte- and text-level rules of MissionWeaveProtocol 0.1 (§2, §6.4, §17.4) and
 * its one wire error type.
 *
 * @example
 * ```ts
 * import { Registry, verify } from '@weft/codec'
 * import { schemaCheckForKind } from '@weft/validators/signed'
 *
 * const registry = Registry.fromEvidence(evidence) // validated once, keys checked once
 * const result = verify('command', bytes, registry, { validate: schemaCheckForKind })
 * if (!result.ok) reply(result.error) // generic wire message; result.stage and result.reason stay in audit
 * ```
 * @packageDocumentation
 */
export { ProtocolError, UsageError, isErrorCode } from './errors.js'
export type { ProtocolErrorOptions, WireError } from './errors.js'
export { ERROR_CODE_INFO, ERROR_CODES } from './gen/error-codes.js'
export type { ErrorCode } from './gen/error-codes.js'

// §2 format rules, shared with @weft/validators, and timestamps with exact instants.
export { isAbsoluteUri, isProtocolTimestamp, isSha256, isCanonicalBase64url, durationMs } from './formats.js'
export { parseTimestamp, compareTimestamps, withinInterval } from './timestamp.js'
export type { ProtocolTimestamp } from './timestamp.js'

// Time and randomness: the injected Clock and RandomSource, RFC 3339 UTC times and urn:uuid IDs.
export { systemClock, systemRandom, timestampOf, parseInstant, isoTimeOfDay, timestampMs, knownTimestampMs, newUrnUuid, uuidSource } from './time.js'
export type { Clock, RandomSource } from './time.js'

// Bytes, strict JSON (stage 1) and JCS (stage 5).
export { encodeBase64url, decodeBase64url, sha256, sha256Tagged, utf8Encode } from './bytes.js'
export { parseStrictJson, parseStrictJsonOrThrow, DEFAULT_MAX_JSON_BYTES, DEFAULT_MAX_JSON_DEPTH } from './json.js'
export type { JsonValue, StrictJsonOptions, StrictJsonFailure, StrictJsonResult } from './json.js'
export { canonicalize, canonicalizeOrThrow, MAX_JCS_DEPTH } from './jcs.js'
export type { JcsFailure, JcsResult } from './jcs.js'
// Frozen JSON (§4.6): deep-frozen values inside the JCS data model, and their RFC 8785 text without a second canonicalization.
export { deepFreeze, frozenJson, freezeMembers, jcsFormOf, canonicalBytes } from './frozen.js'
export type { JcsForm } from './frozen.js'

// Signed documents (§6.4): the six stages, signing, and the signing hash.
export {
  verify,
  verifyAsync,
  verifyOrThrow,
  createVerifier,
  sign,
  signAsync,
  signingHash,
  signingInput,
  expectedSignerOf,
  samePrincipal,
  genericError,
  isDocumentKind,
  DOCUMENT_KINDS,
  STAGES,
  SIGNED_PROFILES,
  STAGE_WIRE_CODES,
  GENERIC_WIRE_MESSAGES,
} from './signed.js'
export type {
  DocumentKind,
  Stage,
  ExpectedSignerRule,
  SignedProfile,
  Principal,
  ExpectedSigner,
  SignatureEnvelope,
  SchemaCheck,
  VerifyOptions,
  Verified,
  VerifyFailure,
  VerifyResult,
  SignedVerifier,
  SigningKey,
  AsyncSigningKey,
} from './signed.js'

// Registry evidence and key resolution (stage 4): the deployment seam is KeyResolver.
export { Registry, createLiveRegistry } from './registry.js'
export type {
  KeyResolver,
  LiveRegistry,
  RegistryUpdate,
  AgentCardOptions,
  Resolution,
  ResolvedKey,
  RegistryEvidence,
  RegistryBinding,
  RegistryFault,
  RegistryProblem,
  PrincipalType,
  ValidityStatusRecord,
} from './registry.js'

// First admission and historical replay, above the six stages.
export { admitFirst, replayHistorical, InMemoryAdmissionLog } from './admission.js'
export type {
  AdmissionLog,
  LookupOutcome,
  AppendOutcome,
  FirstAdmissionRecord,
  ServicePrincipal,
  TrustedAcceptance,
  AdmissionReason,
  AdmissionSource,
  Admitted,
  AdmissionFailure,
  CryptographicFailure,
  AdmissionResult,
  FirstAdmissionOptions,
  HistoricalReplayOptions,
  InMemoryAdmissionLogOptions,
} from './admission.js'

// Library-author surface: Ed25519 with the strict checks of §6.4.
export {
  checkPublicKeyEncoding,
  checkSignatureEncoding,
  precheckSignatureEncoding,
  importPublicKey,
  isVerifiedPublicKey,
  verifyEd25519,
  verifyEd25519Async,
  keyPairFromSeed,
  webCryptoKeyPair,
  subgroupCheckCount,
} from './ed25519.js'
export type { KeyCheck, PublicKeyFault, SignatureFault, VerifiedPublicKey, Ed25519KeyPair, AsyncEd25519KeyPair } from './ed25519.js'
export { loneSurrogateIndex } from './bytes.js'
