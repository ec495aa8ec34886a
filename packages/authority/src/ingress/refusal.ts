/**
 * How the ingress refuses (§19, §6.4): the check that refused ({@link IngressStage}), and the
 * protected {@link Diagnostic} every refusal carries as its `cause`. The Authority keeps the
 * diagnostic in its audit record and never sends it; the wire sees only the code and a generic
 * message.
 * @module
 */
import { ProtocolError, type ErrorCode, type Stage } from '@weft/codec'

/** Where in the ingress a Command was refused; kept in the audit record, never sent (§6.4). */
export type IngressStage =
  | 'size'
  | Stage
  | 'kind'
  | 'payload'
  | 'extensions'
  | 'freshness'
  | 'admission'
  | 'card'
  | 'idempotency'
  | 'session'
  | 'group'
  | 'membership'
  | 'coordinator'
  | 'role'
  | 'revision'
  | 'handler'
  | 'commit'

/**
 * The protected diagnostic of a refusal: the check (`stage`), a stable kebab-case `reason`, and
 * free text. For an embedded Signed Document the stage reads `<document kind>:<§6.4 stage>`.
 */
export interface Diagnostic {
  readonly stage: string
  readonly reason: string
  readonly detail?: string
}

/** Throws the refusal `code` with a wire `message` and the protected diagnostic as its cause. */
export function refuse(code: ErrorCode, message: string, stage: IngressStage, reason: string, options: { detail?: string; details?: Record<string, unknown> } = {}): never {
  const cause: Diagnostic = options.detail === undefined ? { stage, reason } : { stage, reason, detail: options.detail }
  throw new ProtocolError(code, message, options.details === undefined ? { cause } : { cause, details: options.details })
}

/** The diagnostic a refusal carries, or one made up for an error thrown without one (a handler's). */
export function diagnosticOf(error: ProtocolError, fallbackStage: IngressStage): Diagnostic {
  const cause = error.cause as Partial<Diagnostic> | undefined
  if (typeof cause?.stage === 'string' && typeof cause.reason === 'string') return cause as Diagnostic
  const detail = cause instanceof Error ? cause.message : undefined
  return detail === undefined ? { stage: fallbackStage, reason: error.message } : { stage: fallbackStage, reason: error.message, detail }
}
