/**
 * Automatic retries (§11.4): which executor failures are retried under the Work Contract's
 * `retryPolicy` (attempts, back-off, maximum delay, retryable failure codes) and its deadline, and
 * how long to wait first. Pure functions; the Worker counts attempts durably in its checkpoint
 * state and waits on its injected clock.
 * @module
 */
import { ProtocolError, UsageError } from '@weft/codec'
import { retryBackoffMs as backoffMs } from '@weft/client'
import type { RetryPolicy } from '@weft/spec'

/** The code given to an executor failure that names none. */
export const UNCLASSIFIED_FAILURE = 'EXECUTOR_ERROR'

const FAILURE_CODE = /^[A-Z][A-Z0-9_]{1,127}$/

/**
 * A failure an executor reports on purpose: a code in the vocabulary of the contract's
 * `retryPolicy.retryableFailures` (e.g. `TRANSIENT`, `RATE_LIMITED_UPSTREAM`) and a message safe to
 * put in failure Evidence (no private reasoning, §13.2).
 * @example
 * ```ts
 * throw new ExecutorFailure('TRANSIENT', 'the build cache was unreachable')
 * ```
 */
export class ExecutorFailure extends Error {
  /** The failure code matched against `retryPolicy.retryableFailures`. */
  readonly code: string
  /** `false` marks the failure permanent whatever the policy lists. */
  readonly retryable: boolean | undefined

  constructor(code: string, message: string, options: { readonly retryable?: boolean; readonly cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    if (!FAILURE_CODE.test(code)) throw new UsageError(`ExecutorFailure code must match ${FAILURE_CODE.source}, got ${JSON.stringify(code)}`)
    this.name = 'ExecutorFailure'
    this.code = code
    this.retryable = options.retryable
  }
}

/** What a thrown value says about a failure: its code, message and whether it forbids retry. */
export interface FailureFacts {
  readonly code: string
  readonly message: string
  /** `true` when the failure itself says it must not be retried. */
  readonly permanent: boolean
}

/**
 * Classifies anything an executor threw. An {@link ExecutorFailure} keeps its code; a
 * `ProtocolError` keeps its §19 code and is permanent unless the catalog marks it retry-safe; any
 * other error with an upper-case `code` member keeps it; the rest are {@link UNCLASSIFIED_FAILURE}.
 */
export function failureFacts(error: unknown): FailureFacts {
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof ExecutorFailure) return { code: error.code, message, permanent: error.retryable === false }
  if (error instanceof ProtocolError) return { code: error.code, message, permanent: !error.retryable }
  const code = (error as { code?: unknown } | null)?.code
  return { code: typeof code === 'string' && FAILURE_CODE.test(code) ? code : UNCLASSIFIED_FAILURE, message, permanent: false }
}

// §2 durations and the §11.4 back-off are the protocol's rules, shared with the Authority.
export { durationMs } from '@weft/codec'
export { backoffMs }

/** Why no retry follows. */
export type NoRetryReason = 'permanent' | 'not_retryable' | 'exhausted' | 'deadline'

/** The outcome of {@link retryDecision}. */
export type RetryDecision = { readonly retry: true; readonly delayMs: number; readonly nextAttempt: number } | { readonly retry: false; readonly reason: NoRetryReason }

/** What {@link retryDecision} weighs. */
export interface RetryFacts {
  readonly policy: RetryPolicy
  readonly failure: FailureFacts
  /** Attempts made so far, the failed one included (1 after the first failure). */
  readonly attempts: number
  readonly nowMs: number
  /** The contract deadline, epoch ms. */
  readonly deadlineMs: number
  /** The expected run time of one attempt, ms: a retry that cannot end before the deadline is not made. */
  readonly attemptMs?: number
  /** The base delay of `fixed` and `exponential` back-off. Default 1000 ms. */
  readonly baseDelayMs?: number
}

/**
 * Whether a failed attempt is retried (§11.4): only a failure whose code the policy lists as
 * retryable and that does not declare itself permanent, while attempts remain, and only when the
 * retry after its back-off can still finish by the deadline. Otherwise the WorkItem fails with
 * Evidence.
 * @example
 * ```ts
 * const d = retryDecision({ policy, failure: failureFacts(error), attempts: 1, nowMs, deadlineMs })
 * if (d.retry) wakeAt(nowMs + d.delayMs)
 * ```
 */
export function retryDecision(facts: RetryFacts): RetryDecision {
  const { policy, failure, attempts, nowMs, deadlineMs } = facts
  if (failure.permanent) return { retry: false, reason: 'permanent' }
  if (!policy.retryableFailures.includes(failure.code)) return { retry: false, reason: 'not_retryable' }
  if (attempts >= policy.maxAttempts) return { retry: false, reason: 'exhausted' }
  const delayMs = backoffMs(policy, attempts, facts.baseDelayMs)
  if (nowMs + delayMs + (facts.attemptMs ?? 0) > deadlineMs) return { retry: false, reason: 'deadline' }
  return { retry: true, delayMs, nextAttempt: attempts + 1 }
}
