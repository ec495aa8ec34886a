/**
 * The frame layer of the WebSocket binding (§17), shared by both ends: strict reading of one
 * inbound text message into a schema-valid frame (§17.1, §17.4), the canonical HELLO transcript
 * an Agent signs (§6.3), the receipt convention for `EVENT` frames that answer a `COMMAND`, the
 * `ERROR` frame codec (§19) and the close codes this binding uses.
 * @module
 */
import { canonicalizeOrThrow, encodeBase64url, isAbsoluteUri, isErrorCode, parseStrictJson, ProtocolError, type ErrorCode } from '@weft/codec'
import { FRAME_TYPES, type ErrorFrame, type WebSocketFrame } from '@weft/spec'
import { validators } from '@weft/validators'
import type { RandomSource } from '@weft/codec/time'

/** The one protocol version this binding speaks (§21). */
export const PROTOCOL_VERSION = '0.1'

/** Default bound of one inbound frame, in UTF-8 bytes: a 1 MiB Command (the Authority's default limit) plus room for the frame around it. */
export const DEFAULT_MAX_FRAME_BYTES = 2 * 1024 * 1024

/**
 * Close codes of the binding. The standard ones keep their RFC 6455 meaning; the 44xx range
 * (application codes, RFC 6455 §7.4.2) says why a session ended, which decides whether a client
 * may reconnect on its own.
 */
export const CLOSE_CODES = Object.freeze({
  /** The peer went away (server shutdown); reconnecting is fine. */
  goingAway: 1001,
  /** A framing violation (§17.1): the message could not be taken as one frame. */
  protocolError: 1002,
  /** A binary message (§17.1: binary messages carry no protocol objects). */
  unsupportedData: 1003,
  /** A message over the frame size bound. */
  tooLarge: 1009,
  /**
   * The peer did not read what it was sent (§17.3 bounded buffering), after a fatal `BACKPRESSURE`
   * with `retryAfterMs`: 1013 "Try Again Later" of the IANA WebSocket close code registry, since
   * §17 defines no close codes. Reconnecting after the wait is fine.
   */
  tryAgainLater: 1013,
  /** The handshake was refused (§6.3): reconnecting with the same credentials fails again. */
  authenticationFailed: 4401,
  /** The session expired; a new handshake opens a new one. */
  sessionExpired: 4408,
  /** A newer Session Epoch of the same Agent fenced this one (§6.3); this runtime must stop. */
  sessionFenced: 4409,
})

/** A frame read from the wire, or why it was refused and which frame the refusal answers. */
export type FrameReading = { readonly ok: true; readonly frame: WebSocketFrame } | { readonly ok: false; readonly error: ProtocolError }

/**
 * Reads one text message as a frame, checking in the order §17.4 asks: size, strict JSON (one
 * UTF-8 value, no duplicate member names, before any schema), a known frame type, a protocol
 * version this peer speaks, finite numbers, then `websocket-frame.schema.json`. A refusal is
 * `PROTOCOL_VIOLATION` (not a frame, an unknown frame type, a non-finite number),
 * `UNSUPPORTED_VERSION` (another `protocolVersion`, or a `client_init` whose `supportedVersions`
 * lack this one) or `SCHEMA_VALIDATION_FAILED` (a known frame type that does not conform), with
 * `relatedFrameId` when the message names a usable frame ID.
 * @example
 * ```ts
 * const reading = readFrame(data, DEFAULT_MAX_FRAME_BYTES)
 * if (!reading.ok) reply(reading.error) // nothing of the message is acted on
 * ```
 */
export function readFrame(data: Uint8Array | string, maxBytes: number): FrameReading {
  const parsed = parseStrictJson(data, { maxBytes })
  if (!parsed.ok) return refused('PROTOCOL_VIOLATION', `The message is not a strict JSON frame: ${parsed.message}.`, undefined, { reason: parsed.reason, offset: parsed.offset })
  const value: unknown = parsed.value
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return refused('PROTOCOL_VIOLATION', 'A frame is a JSON object.', undefined, { reason: 'not-an-object' })
  const record = value as Record<string, unknown>
  const frameId = isWireId(record['frameId']) ? record['frameId'] : undefined
  const frameType = record['frameType']
  if (typeof frameType !== 'string' || !(FRAME_TYPES as readonly string[]).includes(frameType)) {
    // §17.1: the core frame types are closed; partial streaming frames and anything else are unknown.
    return refused('PROTOCOL_VIOLATION', 'Unknown frame type.', frameId, { reason: 'unknown-frame-type' })
  }
  // §21: a peer speaking only other versions is told so, rather than that its frame is malformed.
  const versions = record['phase'] === 'client_init' && Array.isArray(record['supportedVersions']) ? record['supportedVersions'] : [record['protocolVersion']]
  if (!versions.includes(PROTOCOL_VERSION)) {
    return refused('UNSUPPORTED_VERSION', `This peer speaks protocol version ${PROTOCOL_VERSION} only.`, frameId, { supportedVersions: [PROTOCOL_VERSION] })
  }
  // §2, §17.4: numbers are finite binary64; the strict parser leaves `1e400` for this check.
  if (hasNonFiniteNumber(value)) {
    return refused('PROTOCOL_VIOLATION', 'The frame holds a number outside finite binary64.', frameId, { reason: 'non-finite-number', path: nonFiniteNumberPath(value, '') })
  }
  if (!validators.websocketFrame.check(value)) {
    return refused('SCHEMA_VALIDATION_FAILED', `The ${frameType} frame does not conform to websocket-frame.schema.json.`, frameId, { issues: frameIssues(record, frameType) })
  }
  return { ok: true, frame: value }
}

/** The bounded issues of an invalid frame: the embedded document's own issues when that is what fails. */
function frameIssues(record: Record<string, unknown>, frameType: string): unknown[] {
  const inner = frameType === 'COMMAND' ? validators.command.errors(record['command'], { maxErrors: 8 }).map((i) => ({ ...i, path: `/command${i.path}` })) : []
  return inner.length > 0 ? inner : validators.websocketFrame.errors(record, { maxErrors: 8 })
}

function refused(code: ErrorCode, message: string, relatedFrameId: string | undefined, details: Record<string, unknown>): FrameReading {
  return { ok: false, error: new ProtocolError(code, message, { details, ...(relatedFrameId === undefined ? {} : { relatedFrameId }) }) }
}

/** Whether `value` holds a number that is not finite; the walk builds no paths (every inbound frame pays for it). */
function hasNonFiniteNumber(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value)
  if (typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (hasNonFiniteNumber(value[i])) return true
    return false
  }
  for (const key in value) if (hasNonFiniteNumber((value as Record<string, unknown>)[key])) return true
  return false
}

/** The JSON Pointer of the first non-finite number in `value` (which has one). */
function nonFiniteNumberPath(value: unknown, path: string): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : path || '/'
  if (typeof value !== 'object' || value === null) return undefined
  for (const [key, member] of Object.entries(value)) {
    if (!hasNonFiniteNumber(member)) continue
    return nonFiniteNumberPath(member, `${path}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`)
  }
  return undefined
}

/** Whether `value` may stand where `common.schema.json#/$defs/id` is required (an absolute URI of at most 512 characters). */
export function isWireId(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 512 && isAbsoluteUri(value)
}

// ---------------------------------------------------------------------------------------------
// The HELLO transcript (§6.3)
// ---------------------------------------------------------------------------------------------

/** Domain separation of the transcript signature: these bytes can never be mistaken for a signed document. */
export const HELLO_TRANSCRIPT_CONTEXT = 'urn:weft:missionweaveprotocol:0.1:hello-transcript'

/** Everything both ends agreed on during the challenge, bound by the Agent's signature. */
export interface HelloTranscript {
  readonly agentId: string
  readonly keyId: string
  readonly selectedVersion: string
  readonly clientNonce: string
  readonly serverNonce: string
  readonly challenge: string
}

/**
 * The bytes an Agent signs in `HELLO/client_response` (§6.3): the RFC 8785 canonical JSON of the
 * transcript members plus {@link HELLO_TRANSCRIPT_CONTEXT} as `context`. Binding both nonces, the
 * challenge, the key and the selected version means a response answers exactly one challenge.
 * @example
 * ```ts
 * const signature = signingKey.pair.sign(helloTranscriptBytes({ agentId, keyId, selectedVersion: '0.1', clientNonce, serverNonce, challenge }))
 * ```
 */
export function helloTranscriptBytes(transcript: HelloTranscript): Uint8Array {
  const { agentId, keyId, selectedVersion, clientNonce, serverNonce, challenge } = transcript
  return canonicalizeOrThrow({ context: HELLO_TRANSCRIPT_CONTEXT, agentId, keyId, selectedVersion, clientNonce, serverNonce, challenge })
}

/** A fresh nonce: 32 random bytes as unpadded base64url (§2 `base64url`). */
export function newNonce(random: RandomSource): string {
  return encodeBase64url(random(32))
}

// ---------------------------------------------------------------------------------------------
// Frame IDs and receipts
// ---------------------------------------------------------------------------------------------

/**
 * A source of frame IDs for one connection end: `urn:weft:frame:<random>:<n>`. Frame IDs only
 * correlate frames within a connection, so a random prefix and a counter suffice.
 */
export function frameIdSource(random: RandomSource): () => string {
  const prefix = `urn:weft:frame:${encodeBase64url(random(12))}:`
  let n = 0
  return () => prefix + ++n
}

/** Where the frame IDs of receipt `EVENT` frames start. */
export const RECEIPT_FRAME_PREFIX = 'urn:weft:receipt:'

/** What the frame ID of one receipt `EVENT` frame says. */
export interface ReceiptPart {
  /** Groups the frames of one receipt; unique within the connection. */
  readonly serial: string
  /** Zero-based position of this Event in the receipt. */
  readonly index: number
  /** How many Events the receipt holds. */
  readonly count: number
  /** The receipt answers an exact retry of an accepted Command (§15.1). */
  readonly duplicate: boolean
}

/**
 * The frame ID of one `EVENT` frame of a receipt. §17.1 has no receipt frame: an accepted
 * `COMMAND` is answered by the Events of its transaction, each in an `EVENT` frame whose frame ID
 * (always a valid `id`) tells its place in the receipt, so the sender can tell a receipt from a
 * subscription delivery and knows when it is complete. Each Event's `cause.id` is the Command's
 * Action ID. A peer that ignores the convention still receives ordinary, signed `EVENT` frames.
 * @example
 * ```ts
 * receiptFrameId({ serial: '7', index: 0, count: 2, duplicate: false }) // 'urn:weft:receipt:accepted:1-of-2:7'
 * ```
 */
export function receiptFrameId(part: ReceiptPart): string {
  return `${RECEIPT_FRAME_PREFIX}${part.duplicate ? 'duplicate' : 'accepted'}:${part.index + 1}-of-${part.count}:${part.serial}`
}

const RECEIPT_ID = /^urn:weft:receipt:(accepted|duplicate):([1-9][0-9]{0,8})-of-([1-9][0-9]{0,8}):(.+)$/

/** The {@link ReceiptPart} a frame ID names, or `undefined` for any other frame ID. */
export function parseReceiptFrameId(frameId: string): ReceiptPart | undefined {
  if (!frameId.startsWith(RECEIPT_FRAME_PREFIX)) return undefined
  const m = RECEIPT_ID.exec(frameId)
  if (m === null) return undefined
  const index = Number(m[2]) - 1
  const count = Number(m[3])
  if (index >= count) return undefined
  return { serial: m[4]!, index, count, duplicate: m[1] === 'duplicate' }
}

// ---------------------------------------------------------------------------------------------
// ERROR frames (§19)
// ---------------------------------------------------------------------------------------------

/** What an `ERROR` frame adds to the error itself. */
export interface ErrorFrameOptions {
  /** The error ends the connection: the sender closes right after the frame. */
  readonly fatal?: boolean
  readonly relatedFrameId?: string | undefined
  readonly relatedActionId?: string | undefined
  readonly groupId?: string | undefined
}

/** The members an {@link ErrorFrameOptions} may set, each an `id` of the schema or left out. */
const RELATIONS = ['relatedFrameId', 'relatedActionId', 'groupId'] as const

/**
 * The `ERROR` frame of `error` (§19): machine-readable, with its retry safety, the frame, Action ID
 * and Group it relates to when known (the options win over the error's own), and every member
 * error.schema.json gives the code (`snapshotArtifactHash`, `retryAfterMs`, revisions; see
 * `ProtocolError.toWire`).
 */
export function errorFrame(error: ProtocolError, frameId: string, occurredAt: string, options: ErrorFrameOptions = {}): ErrorFrame {
  const wire = error.toWire(occurredAt)
  if (options.fatal === true) wire.fatal = true
  for (const name of RELATIONS) {
    const value = options[name]
    if (value === undefined) continue
    if (isWireId(value)) wire[name] = value
    else delete wire[name]
  }
  return { protocolVersion: PROTOCOL_VERSION, frameId, frameType: 'ERROR', error: wire }
}

/** The `ProtocolError` an `ERROR` frame carries, as the receiver throws it, every schema member read back. */
export function errorOfFrame(frame: ErrorFrame): ProtocolError {
  const { code, message, occurredAt: _occurredAt, ...members } = frame.error
  return new ProtocolError(isErrorCode(code) ? code : 'INTERNAL_ERROR', message, members)
}
