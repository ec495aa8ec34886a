/**
 * Retry limits of the Work Contract, enforced by the Authority (§10.1, §10.2, §11.4): attempts,
 * back-off, deadline and cost. `failed` leaves only through a new `work.offer` (§10.2); when the
 * failure was an execution failure classified under the contract's retry policy, that offer is a
 * retry and must fit the policy.
 *
 * **Classified failures.** The policy's vocabulary is the failure code: `work.fail` Evidence that
 * reports the failure (`result: failed` or type `failure_report`) names it in `details.code`
 * (upper-case, as `retryableFailures` lists codes) and may say in `details.attempts` how many
 * attempts the owner made, as the reference Worker does. A failure whose Evidence names no code is
 * a decision of the Coordinator, the MissionOwner or policy rather than an exhausted execution; it
 * still counts as one attempt, but the Coordinator decides what follows it (§10.2), unlimited.
 *
 * **Attempts.** Each offer round is an attempt; a `work.failed` closes it and uses the attempts
 * its Evidence reports (at least one). The ledger lives here, keyed by the WorkItem record like
 * the budget ledger of `work-budget.ts`; the `work.failed` reducer is its only writer, so it is a
 * fold of the log, rebuilt by any replay or restore.
 *
 * **A retry** (a `work.offer` from `failed` after a classified failure) is refused:
 * - `BUDGET_EXCEEDED` once the attempts used reach `retryPolicy.maxAttempts`, at or after the
 *   contract `deadline`, or while a budget on the WorkItem's path is exhausted. §11.4 calls these
 *   the attempt, deadline and cost budgets that limit retries, and §19 gives `BUDGET_EXCEEDED` to
 *   an exhausted WorkItem budget;
 * - `INVALID_STATE_TRANSITION` after a permanent failure: a code the policy does not list as
 *   retryable, or Evidence saying `stopped: 'permanent'`. The failed state forbids a retry of the
 *   same contract;
 * - `RATE_LIMITED` (retryable, with `retryAfterMs`) before the back-off has passed since the
 *   failure: none, a fixed second, or one second doubling per attempt used, never above
 *   `retryPolicy.maxDelay`, the same schedule the reference Worker waits by.
 *
 * An offer carrying a corrected contract (§10.1: a revision the Coordinator issues in response) is
 * judged by that contract's policy, deadline and budget, and may follow a permanent failure; the
 * attempts already used still count.
 *
 * **Exhaustion** is recorded when the failure happens, from the Event and the contract then in
 * force: `permanent`, `attempts` (the last attempt failed), `deadline` (it failed at or after the
 * deadline) or `cost` (a budget on its path was exhausted). {@link retryStatusOf} reports it.
 * @module
 */
import type { Evidence, RetryPolicy, WorkContract } from '@weft/spec'
import { retryBackoffMs } from '@weft/client'
import { reject, type EventOf, type HandlerContext } from '../commit/handler.js'
import type { AuthorityState, GroupState, WorkItemRecord } from '../model.js'
import { requireNotExhausted } from './work-budget.js'
import { parseInstant } from '@weft/codec/time'
import type { FailureFacts, RetryExhaustion } from './ledgers.js'

export type { RetryExhaustion } from './ledgers.js'

/** The retry position of one WorkItem (§11.4). */
export interface RetryStatus {
  /** Attempts used by the failures so far. */
  readonly attemptsUsed: number
  readonly maxAttempts: number
  readonly lastFailure?: FailureFacts
  /** Set when the last failure left no retry under the contract then in force. */
  readonly exhausted?: RetryExhaustion
  /** When the back-off after the last classified failure ends (epoch ms); absent when none applies. */
  readonly retryNotBeforeMs?: number
}

const FAILURE_CODE = /^[A-Z][A-Z0-9_]{1,127}$/

/** The base delay of `fixed` and `exponential` back-off, the reference Worker's default. */
const BASE_DELAY_MS = 1000

/** Where WorkItem `record` stands against its contract's retry policy. */
export function retryStatusOf(record: WorkItemRecord): RetryStatus {
  const ledger = record.retryLedger
  const policy = record.doc.contract.retryPolicy
  const status = { attemptsUsed: ledger?.attemptsUsed ?? 0, maxAttempts: policy.maxAttempts }
  const last = ledger?.lastFailure
  if (last === undefined) return status
  return {
    ...status,
    lastFailure: last,
    ...(ledger?.exhausted === undefined ? {} : { exhausted: ledger.exhausted }),
    ...(last.code === undefined ? {} : { retryNotBeforeMs: parseInstant(last.failedAt) + backoffMs(policy, status.attemptsUsed) }),
  }
}

/**
 * Reducer side (`work.failed`): books the failed round on the WorkItem's ledger and records whether
 * it exhausted the retries the contract in force allows.
 */
export function noteFailure(state: AuthorityState, group: GroupState, record: WorkItemRecord, event: EventOf<'work.failed'>): void {
  const contract = record.doc.contract
  const facts = failureFacts(event.payload.evidence, contract.retryPolicy, event.occurredAt)
  let ledger = record.retryLedger
  if (ledger === undefined) record.retryLedger = ledger = { attemptsUsed: 0 }
  ledger.attemptsUsed += facts.attempts
  ledger.lastFailure = facts
  // An unclassified failure is not bound by the policy, so it exhausts nothing.
  const exhausted = facts.code === undefined ? undefined : exhaustionOf(facts, ledger.attemptsUsed, contract, parseInstant(event.occurredAt), () => budgetSpent(state, group, record))
  if (exhausted === undefined) delete ledger.exhausted
  else ledger.exhausted = exhausted
}

/**
 * Handler side (`work.offer` from `failed`): refuses a retry the contract does not allow (see the
 * module notes). `contract` governs the new attempt: the corrected one when the offer carries it.
 * @throws ProtocolError `BUDGET_EXCEEDED`, `INVALID_STATE_TRANSITION` or `RATE_LIMITED` (with `details.retryAfterMs`).
 */
export function requireRetryAllowed(ctx: HandlerContext, group: GroupState, record: WorkItemRecord, contract: WorkContract, corrected: boolean): void {
  const ledger = record.retryLedger
  const last = ledger?.lastFailure
  // §10.2: after an unclassified failure the Coordinator decides what follows.
  if (ledger === undefined || last?.code === undefined) return
  const policy = contract.retryPolicy
  const workItemId = record.doc.workItemId
  const details = { workItemId, attemptsUsed: ledger.attemptsUsed, maxAttempts: policy.maxAttempts, failureCode: last.code }
  if (ledger.attemptsUsed >= policy.maxAttempts) reject('BUDGET_EXCEEDED', `WorkItem ${workItemId} used ${ledger.attemptsUsed} of ${policy.maxAttempts} attempts`, { ...details, limit: 'attempts' })
  if (last.permanent && !corrected) reject('INVALID_STATE_TRANSITION', `WorkItem ${workItemId} failed permanently (${last.code}); only a corrected contract may follow`, details)
  if (ctx.nowMs >= parseInstant(contract.deadline))
    reject('BUDGET_EXCEEDED', `the deadline of WorkItem ${workItemId} passed at ${contract.deadline}`, { ...details, limit: 'deadline', deadline: contract.deadline })
  // §12: a corrected contract is how an exhausted WorkItem budget is escalated; its budget is checked as an allocation.
  if (!corrected) requireNotExhausted(group, record, ctx.state)
  const notBefore = parseInstant(last.failedAt) + backoffMs(policy, ledger.attemptsUsed)
  if (ctx.nowMs < notBefore) {
    const retryAfterMs = notBefore - ctx.nowMs
    reject('RATE_LIMITED', `the retry back-off of WorkItem ${workItemId} ends in ${retryAfterMs} ms`, { ...details, limit: 'backoff', retryAfterMs })
  }
}

/** What the failure Evidence of a `work.failed` says: the first reported failure code, the attempts it used, permanence. */
export function failureFacts(evidence: readonly Evidence[], policy: RetryPolicy, failedAt: string): FailureFacts {
  for (const e of evidence) {
    if (e.result !== 'failed' && e.type !== 'failure_report') continue
    const details = e.details ?? {}
    const code = details['code']
    if (typeof code !== 'string' || !FAILURE_CODE.test(code)) continue
    const reported = details['attempts']
    const attempts = Number.isSafeInteger(reported) && (reported as number) > 0 ? Math.min(reported as number, policy.maxAttempts) : 1
    const permanent = !policy.retryableFailures.includes(code) || details['stopped'] === 'permanent'
    return { failedAt, code, attempts, permanent }
  }
  return { failedAt, attempts: 1, permanent: false }
}

/** The wait after `attemptsUsed` attempts before the next (§11.4), the rule the Worker also waits by. */
export function backoffMs(policy: RetryPolicy, attemptsUsed: number): number {
  return retryBackoffMs(policy, attemptsUsed, BASE_DELAY_MS)
}

function exhaustionOf(facts: FailureFacts, attemptsUsed: number, contract: WorkContract, atMs: number, spent: () => boolean): RetryExhaustion | undefined {
  if (facts.permanent) return 'permanent'
  if (attemptsUsed >= contract.retryPolicy.maxAttempts) return 'attempts'
  if (atMs >= parseInstant(contract.deadline)) return 'deadline'
  return spent() ? 'cost' : undefined
}

/** Whether a budget on the WorkItem's path is exhausted (the check `work.start` makes, §12). */
function budgetSpent(state: AuthorityState, group: GroupState, record: WorkItemRecord): boolean {
  try {
    requireNotExhausted(group, record, state)
    return false
  } catch {
    return true
  }
}
