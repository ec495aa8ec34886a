/**
 * Deterministic idempotency keys for external side effects (§11.4, §16), and the retry back-off
 * both sides of a retry read from the Work Contract (§11.4). An executor calling a
 * tool, an API or anything else outside the protocol passes one of these keys along, so that a
 * retry after a lost reply, a crash or a reconnect is recognized by the other side instead of
 * acting twice. Network delivery alone never gives exactly-once effects (§16); a stable key is
 * what lets the receiving system deduplicate.
 *
 * Every function here is pure: the same inputs give the same result in every process, on every machine.
 * @module
 */
import { canonicalizeOrThrow, durationMs, sha256Tagged, UsageError } from '@weft/codec'
import type { RetryPolicy } from '@weft/spec'

/** What a side-effect key is derived from (§16: exactly these four facts). */
export interface SideEffectScope {
  readonly missionId: string
  readonly workItemId: string
  /** The Ownership Epoch the effect is performed under: a reassigned owner gets other keys (§4.5). */
  readonly ownershipEpoch: number
  /** The executor's stable name for the logical operation, e.g. `deploy:web` or `email:welcome`. */
  readonly operationId: string
}

const KEY = /^sha256:[0-9a-f]{64}$/

function requireText(value: unknown, name: string): void {
  if (typeof value !== 'string' || value.length === 0) throw new UsageError(`${name} must be a non-empty string`)
}

function requirePositive(value: unknown, name: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new UsageError(`${name} must be a positive safe integer, got ${String(value)}`)
}

/**
 * The idempotency key of one logical external operation (§16): `sha256:` and the hex SHA-256 of
 * the RFC 8785 form of `{ missionId, operationId, ownershipEpoch, workItemId }`. Every retry of the
 * operation under the same Ownership Epoch carries the same key.
 * @throws UsageError when a member is missing or malformed.
 * @example
 * ```ts
 * const key = sideEffectKey({ missionId, workItemId, ownershipEpoch: 2, operationId: 'deploy:web' })
 * await fetch(url, { method: 'POST', headers: { 'Idempotency-Key': key }, body })
 * ```
 */
export function sideEffectKey(scope: SideEffectScope): string {
  requireText(scope?.missionId, 'missionId')
  requireText(scope.workItemId, 'workItemId')
  requirePositive(scope.ownershipEpoch, 'ownershipEpoch')
  requireText(scope.operationId, 'operationId')
  // Only the four named members: anything else a caller's object carries must not change the key.
  const { missionId, workItemId, ownershipEpoch, operationId } = scope
  return sha256Tagged(canonicalizeOrThrow({ missionId, workItemId, ownershipEpoch, operationId }))
}

/**
 * The key of attempt `attempt` (1, 2, …) of the operation whose {@link sideEffectKey} is `base`:
 * the hex SHA-256 of the RFC 8785 form of `{ attempt, base }`, tagged `sha256:`.
 *
 * §11.4 allows either key. Pass the base key when the external system should treat every retry as
 * the same request (the usual case). Use an attempt key only when an earlier attempt is known to
 * have failed for good and the next one must not be deduplicated against it; the attempt number
 * then comes from durable state (a checkpoint), never from a counter that restarts.
 * @throws UsageError when `base` is not a `sha256:` key or `attempt` is not a positive safe integer.
 */
export function attemptKey(base: string, attempt: number): string {
  if (typeof base !== 'string' || !KEY.test(base)) throw new UsageError('base must be a key made by sideEffectKey (sha256: and 64 hex digits)')
  requirePositive(attempt, 'attempt')
  return sha256Tagged(canonicalizeOrThrow({ base, attempt }))
}

/**
 * The wait before the next attempt after `attemptsUsed` failed ones (§11.4), as the Work Contract's
 * retry policy states it: none, a fixed `baseMs`, or `baseMs` doubling per attempt used, never above
 * the policy's `maxDelay`. The Worker waits it out and the Authority enforces it, from this one rule.
 * @throws UsageError when `maxDelay` is not a §2 duration.
 */
export function retryBackoffMs(policy: Pick<RetryPolicy, 'backoff' | 'maxDelay'>, attemptsUsed: number, baseMs = 1000): number {
  const cap = durationMs(policy.maxDelay)
  switch (policy.backoff) {
    case 'none':
      return 0
    case 'fixed':
      return Math.min(baseMs, cap)
    case 'exponential':
      return Math.min(baseMs * 2 ** Math.max(0, attemptsUsed - 1), cap)
  }
}
