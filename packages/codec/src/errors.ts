/**
 * The one wire error type of Weft, and the separate type for local misuse of the library.
 * @module
 */
import { isAbsoluteUri, isSha256 } from './formats.js'
import { ERROR_CODE_INFO, type ErrorCode } from './gen/error-codes.js'

const brand = Symbol.for('@weft/ProtocolError')
const usageBrand = Symbol.for('@weft/UsageError')

/** Options of a {@link ProtocolError}. */
export interface ProtocolErrorOptions {
  /** Overrides the catalog's retry-safety of the code (§19: an error states whether retry is safe). */
  readonly retryable?: boolean
  /** The Action ID of the Command the error answers (§19). */
  readonly relatedActionId?: string
  /** The frame the error answers (§19). */
  readonly relatedFrameId?: string
  /** The Group concerned, only where the caller may know it exists (§17.2). */
  readonly groupId?: string
  /** The error ends the connection: the sender closes right after it (§17.1). */
  readonly fatal?: boolean
  /** `REVISION_CONFLICT`: the revision the Command expected (§15.3). */
  readonly expectedRevision?: number
  /** `REVISION_CONFLICT`: the aggregate's current revision (§15.3). */
  readonly currentRevision?: number
  /** `RATE_LIMITED`, `BACKPRESSURE`: milliseconds to wait before sending again (§17.3, §20). */
  readonly retryAfterMs?: number
  /** `CURSOR_TOO_OLD`: the content hash of the Signed Group Snapshot to restore from (§16). */
  readonly snapshotArtifactHash?: string
  /**
   * Machine-readable details that reveal no unauthorized data (error.schema.json `details`). An
   * entry named like one of the members above (`retryAfterMs`, `expectedRevision`,
   * `currentRevision`, `snapshotArtifactHash`, `fatal`) also sets that member when the option
   * itself is absent.
   */
  readonly details?: Record<string, unknown>
  /** The underlying reason; kept for audit, never serialized onto the wire. */
  readonly cause?: unknown
}

/** A protocol error in the shape of `error.schema.json`, ready for the wire. */
export interface WireError {
  code: ErrorCode
  message: string
  retryable: boolean
  occurredAt: string
  fatal?: boolean
  relatedFrameId?: string
  relatedActionId?: string
  groupId?: string
  expectedRevision?: number
  currentRevision?: number
  retryAfterMs?: number
  snapshotArtifactHash?: string
  details?: Record<string, unknown>
}

/** The members error.schema.json gives a meaning of their own, each with the form it requires there. */
const SCHEMA_MEMBERS = {
  fatal: (v: unknown): v is boolean => typeof v === 'boolean',
  expectedRevision: isSafeInteger,
  currentRevision: isSafeInteger,
  retryAfterMs: isSafeInteger,
  snapshotArtifactHash: (v: unknown): v is string => typeof v === 'string' && isSha256(v),
} as const

/** The members {@link ProtocolError.with} carries over besides `retryable` and `cause`. */
const KEPT_MEMBERS = ['relatedActionId', 'relatedFrameId', 'groupId', 'details', ...(Object.keys(SCHEMA_MEMBERS) as (keyof typeof SCHEMA_MEMBERS)[])] as const

/** The common `safeInteger` of the schemas: an integer from 0 to 2^53 - 1. */
function isSafeInteger(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) >= 0
}

/** The common `id` of the schemas: an absolute URI of at most 512 characters. */
function isWireId(v: string | undefined): v is string {
  return v !== undefined && v.length <= 512 && isAbsoluteUri(v)
}

/**
 * The value of schema member `name`: the option when given, else a `details` entry of that name
 * (handlers report through `details`, §19 wants the member); `undefined` when neither has the
 * member's form, so nothing outside the schema reaches the wire.
 */
function member<K extends keyof typeof SCHEMA_MEMBERS>(name: K, options: ProtocolErrorOptions): ProtocolErrorOptions[K] {
  const valid = SCHEMA_MEMBERS[name] as (v: unknown) => boolean
  const given = options[name]
  if (given !== undefined) return (valid(given) ? given : undefined) as ProtocolErrorOptions[K]
  const reported = options.details?.[name]
  return (valid(reported) ? reported : undefined) as ProtocolErrorOptions[K]
}

/**
 * A MissionWeaveProtocol error (§19): a closed code from the catalog, whether an unchanged retry
 * is safe, and what it relates to.
 *
 * `instanceof ProtocolError` holds across duplicate copies of this package (two versions in one
 * `node_modules`), because the check looks for a process-wide brand rather than the prototype.
 *
 * @example
 * ```ts
 * try { validators.command.parse(input) }
 * catch (e) { if (e instanceof ProtocolError && e.code === 'SCHEMA_VALIDATION_FAILED') reply(e.toWire(now)) }
 * ```
 */
export class ProtocolError extends Error {
  /** The §19 error code. */
  readonly code: ErrorCode
  /** Whether the same Command (same Action ID and signed bytes) may be sent again unchanged. */
  readonly retryable: boolean
  /** The Action ID of the Command this error answers, if any. */
  readonly relatedActionId: string | undefined
  /** The frame this error answers, if any. */
  readonly relatedFrameId: string | undefined
  /** The Group concerned, if it may be disclosed. */
  readonly groupId: string | undefined
  /** Whether the error ends the connection (§17.1), when said. */
  readonly fatal: boolean | undefined
  /** `REVISION_CONFLICT`: the revision the Command expected (§15.3). */
  readonly expectedRevision: number | undefined
  /** `REVISION_CONFLICT`: the aggregate's current revision (§15.3). */
  readonly currentRevision: number | undefined
  /** `RATE_LIMITED`, `BACKPRESSURE`: milliseconds to wait before sending again (§17.3, §20). */
  readonly retryAfterMs: number | undefined
  /** `CURSOR_TOO_OLD`: the content hash of the Signed Group Snapshot to restore from (§16). */
  readonly snapshotArtifactHash: string | undefined
  /** Machine-readable details. */
  readonly details: Record<string, unknown> | undefined

  constructor(code: ErrorCode, message: string, options: ProtocolErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'ProtocolError'
    this.code = code
    this.retryable = options.retryable ?? ERROR_CODE_INFO[code].retryable
    this.relatedActionId = options.relatedActionId
    this.relatedFrameId = options.relatedFrameId
    this.groupId = options.groupId
    this.fatal = member('fatal', options)
    this.expectedRevision = member('expectedRevision', options)
    this.currentRevision = member('currentRevision', options)
    this.retryAfterMs = member('retryAfterMs', options)
    this.snapshotArtifactHash = member('snapshotArtifactHash', options)
    this.details = options.details
    Object.defineProperty(this, brand, { value: true })
  }

  /** True for any ProtocolError, including one made by another copy of this package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true
  }

  /**
   * Turns anything thrown into a ProtocolError: a ProtocolError is returned as it is; anything
   * else becomes `fallback` (by default `INTERNAL_ERROR`, whose message reveals nothing of the
   * cause) with the original kept as `cause`.
   */
  static from(reason: unknown, fallback: ErrorCode = 'INTERNAL_ERROR'): ProtocolError {
    if (reason instanceof ProtocolError) return reason
    const message = fallback === 'INTERNAL_ERROR' ? ERROR_CODE_INFO[fallback].meaning : reason instanceof Error ? reason.message : String(reason)
    return new ProtocolError(fallback, message, { cause: reason })
  }

  /**
   * A copy of this error with `overrides` applied (e.g. the Action ID it answers, once known) and
   * every other member kept, `cause` included, so no member of error.schema.json is lost on the way.
   */
  with(overrides: ProtocolErrorOptions): ProtocolError {
    const kept: Record<string, unknown> = { retryable: this.retryable }
    for (const name of KEPT_MEMBERS) if (this[name] !== undefined) kept[name] = this[name]
    if (this.cause !== undefined) kept['cause'] = this.cause
    return new ProtocolError(this.code, this.message, { ...(kept as ProtocolErrorOptions), ...overrides })
  }

  /**
   * The error as an `error.schema.json` object: every member the error carries, except an
   * identifier that is not a schema `id` (at most 512 characters of absolute URI); `cause` is
   * never included.
   */
  toWire(occurredAt: string): WireError {
    const wire: WireError = { code: this.code, message: this.message.slice(0, 2000) || this.code, retryable: this.retryable, occurredAt }
    if (this.fatal !== undefined) wire.fatal = this.fatal
    if (isWireId(this.relatedFrameId)) wire.relatedFrameId = this.relatedFrameId
    if (isWireId(this.relatedActionId)) wire.relatedActionId = this.relatedActionId
    if (isWireId(this.groupId)) wire.groupId = this.groupId
    if (this.expectedRevision !== undefined) wire.expectedRevision = this.expectedRevision
    if (this.currentRevision !== undefined) wire.currentRevision = this.currentRevision
    if (this.retryAfterMs !== undefined) wire.retryAfterMs = this.retryAfterMs
    if (this.snapshotArtifactHash !== undefined) wire.snapshotArtifactHash = this.snapshotArtifactHash
    if (this.details !== undefined) wire.details = this.details
    return wire
  }
}

/** Is `value` one of the 27 closed §19 codes? */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODE_INFO, value)
}

/**
 * Local misuse of a Weft API (a bad option, a negative limit). It is a programming error of the
 * caller and never goes on the wire; protocol failures are {@link ProtocolError}s.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UsageError'
    Object.defineProperty(this, usageBrand, { value: true })
  }

  /** True for any UsageError, including one made by another copy of this package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[usageBrand] === true
  }
}
