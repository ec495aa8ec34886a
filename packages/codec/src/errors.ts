/**
 * The one wire error type of Weft, and the separate type for local misuse of the library.
 * @module
 */
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
  /** Machine-readable details that reveal no unauthorized data (error.schema.json `details`). */
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
  details?: Record<string, unknown>
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

  /** The error as an `error.schema.json` object; `cause` is never included. */
  toWire(occurredAt: string): WireError {
    const wire: WireError = { code: this.code, message: this.message.slice(0, 2000) || this.code, retryable: this.retryable, occurredAt }
    if (this.relatedFrameId !== undefined) wire.relatedFrameId = this.relatedFrameId
    if (this.relatedActionId !== undefined) wire.relatedActionId = this.relatedActionId
    if (this.groupId !== undefined) wire.groupId = this.groupId
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
