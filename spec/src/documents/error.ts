/**
 * The Protocol Error object (`error.schema.json`, §19): a machine-readable refusal that says
 * whether retrying is safe and, where allowed, which frame or Action it answers.
 * @module
 */
import Type, { type Static } from 'typebox'
import { document, freeObject, oneOfValues } from '../schema.js'
import { Id, SafeInteger, Sha256, Timestamp } from './common.js'

/** The closed set of core error codes, in normative order (§19). */
export const ERROR_CODES = [
  'UNSUPPORTED_VERSION',
  'AUTH_REQUIRED',
  'AUTH_INVALID_SIGNATURE',
  'AUTH_STALE_SESSION',
  'AUTH_STALE_COORDINATOR',
  'AUTH_FORBIDDEN',
  'GROUP_NOT_FOUND',
  'MEMBERSHIP_REQUIRED',
  'MEMBERSHIP_STALE',
  'SCHEMA_VALIDATION_FAILED',
  'INVALID_COMMAND',
  'INVALID_STATE_TRANSITION',
  'REVISION_CONFLICT',
  'ACTION_ID_COLLISION',
  'UNKNOWN_CRITICAL_EXTENSION',
  'WORK_CONTRACT_INCOMPLETE',
  'WORK_OFFER_EXPIRED',
  'WORK_ALREADY_OWNED',
  'WORK_LEASE_EXPIRED',
  'WORK_STALE_OWNERSHIP',
  'APPROVAL_REQUIRED',
  'BUDGET_EXCEEDED',
  'RATE_LIMITED',
  'BACKPRESSURE',
  'CURSOR_TOO_OLD',
  'PROTOCOL_VIOLATION',
  'INTERNAL_ERROR',
] as const

/** A core error code. */
export type ErrorCode = (typeof ERROR_CODES)[number]

/**
 * A Protocol Error as sent on the wire (§19), e.g. inside an `ERROR` frame. Named `WireError`
 * rather than `Error` so it never shadows the global constructor; `@weft/codec`'s
 * `ProtocolError` class is the thrown counterpart. `CURSOR_TOO_OLD` may point at a signed
 * snapshot through `snapshotArtifactHash` (§16); `retryAfterMs` gives back-off guidance (§17.3).
 */
export const WireError = Type.Object(
  {
    code: oneOfValues(ERROR_CODES),
    message: Type.String({ minLength: 1, maxLength: 2000 }),
    retryable: Type.Boolean(),
    fatal: Type.Optional(Type.Boolean()),
    relatedFrameId: Type.Optional(Id),
    relatedActionId: Type.Optional(Id),
    groupId: Type.Optional(Id),
    expectedRevision: Type.Optional(SafeInteger),
    currentRevision: Type.Optional(SafeInteger),
    retryAfterMs: Type.Optional(SafeInteger),
    snapshotArtifactHash: Type.Optional(Sha256),
    details: Type.Optional(freeObject()),
    occurredAt: Timestamp,
  },
  { additionalProperties: false },
)

/** A Protocol Error object. */
export type WireError = Static<typeof WireError>

/** `error.schema.json` (§19, §21). */
export const errorDocument = document('error', 'error.schema.json', 'MissionWeaveProtocol 0.1 Protocol Error', WireError, 'WireError')
