/**
 * A run's external side effects, each at most once per idempotency key (§11.4, §16).
 * @module
 */
import { ProtocolError } from '@weft/codec'
import { attemptKey, sideEffectKey } from '@weft/client'
import type { SideEffectOptions } from './executor.js'
import type { SlotHost, SlotWork } from './slot-host.js'
import type { SlotLease } from './slot-lifecycle.js'

/** What the side effects of a run ask of its slot's lease. */
export interface LeaseGuard {
  /** The lease held; throws the loss, or `WORK_LEASE_EXPIRED` when none is held. */
  requireLive(): SlotLease
  /** Whether the slot acts as offline (§11.5). */
  offline(): boolean
  /** Loses the lease for `why` and throws the loss. */
  expire(why: string): never
}

/** The side effects of one run, as its context offers them ({@link SlotContext.sideEffect}). */
export interface SideEffects {
  /** The idempotency key of `operationId` for this WorkItem and Ownership Epoch (§16). */
  keyOf(operationId: string): string
  /**
   * Runs `fn` once for the key of `operationId` (per attempt with `perAttempt`): a recorded result
   * is returned as it is, a call for a key in flight shares that one, and `fn` runs only under a
   * live lease or, offline, when reversible, allowed by the contract's risk and within the grace (§11.5).
   */
  run<T>(operationId: string, fn: (key: string) => T | Promise<T>, options: SideEffectOptions): Promise<T>
}

/** The side effects of attempt `attempt` of `work`, recorded in the Worker's store. */
export function createSideEffects(host: Pick<SlotHost, 'store' | 'offline' | 'now'>, work: SlotWork, attempt: number, lease: LeaseGuard): SideEffects {
  const inFlight = new Map<string, Promise<unknown>>()
  const keyOf = (operationId: string): string => sideEffectKey({ missionId: work.missionId, workItemId: work.workItemId, ownershipEpoch: work.ownershipEpoch, operationId })

  async function run<T>(operationId: string, fn: (key: string) => T | Promise<T>, options: SideEffectOptions): Promise<T> {
    const base = keyOf(operationId)
    const key = options.perAttempt === true ? attemptKey(base, attempt) : base
    const recorded = host.store.sideEffect(key)
    if (recorded !== undefined) return recorded.result as T
    const running = inFlight.get(key)
    if (running !== undefined) return (await running) as T
    const l = lease.requireLive()
    const t = host.now()
    if (lease.offline()) {
      const risky = work.contract.sideEffectRisk === 'high_risk' || work.contract.sideEffectRisk === 'destructive'
      // §11.5: offline, only reversible effects of already-active work, within the lease grace.
      if (options.reversible !== true || risky || !host.offline.withinGrace(l.expiresAtMs, t)) {
        throw new ProtocolError('WORK_LEASE_EXPIRED', `side effect ${operationId} needs a currently valid lease and the Group service is unreachable (§11.5)`, {
          retryable: true,
          details: { offline: true },
        })
      }
    } else if (t >= l.expiresAtMs) {
      lease.expire(`the Execution Lease of WorkItem ${work.workItemId} expired`)
    }
    const promise = (async () => {
      const result = await fn(key)
      host.store.recordSideEffect(key, result)
      return result
    })()
    inFlight.set(key, promise)
    try {
      return await promise
    } finally {
      inFlight.delete(key)
    }
  }

  return { keyOf, run }
}
