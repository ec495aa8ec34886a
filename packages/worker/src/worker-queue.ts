/**
 * The queue projection (§11.1, §11.3): what the Scheduler holds follows the projection. Each
 * change of a WorkItem re-syncs it: the offers to decide, the held set admission counts, the
 * fencing of a slot that runs it, and its Scheduler entry (ready, dependencies verified, start-by
 * not passed, behind a risk gate while an Execution Approval is missing).
 * @module
 */
import { ProtocolError } from '@weft/codec'
import type { SchedulerItem, TrackedWork } from './seams.js'
import { urgencyLevel } from './scheduler.js'
import type { Slot } from './slot.js'
import type { WorkerParts, WorkerState } from './worker-state.js'

/** The states in which an owned WorkItem counts as held (§10.3 capacity). */
const HELD_STATES: ReadonlySet<string> = new Set(['queued', 'active', 'blocked'])

/** The queue projection of a Worker. */
export interface Queue {
  /** Whether `w` may be started now as far as this Worker can tell (§10.4, §11.3). */
  ready(w: TrackedWork, nowMs: number): boolean
  /** Re-syncs one WorkItem: offers to decide, held set, slot fencing and the Scheduler entry. */
  resync(w: TrackedWork, nowMs: number): void
  /** Re-syncs every WorkItem of the projection. */
  resyncAll(nowMs: number): void
  /** Drains projection changes; a Group with a change also re-checks its ready set (a dependency may have been verified, §10.4). */
  drain(nowMs: number): void
  /** Ends the retry back-offs (§11.4) due at `nowMs`; their WorkItems may queue again. */
  endBackoffs(nowMs: number): void
}

/** The queue projection over `parts.projection` into `parts.scheduler`. */
export function createQueue(parts: WorkerParts, state: WorkerState): Queue {
  const { self, projection, scheduler } = parts
  const { joined, held, offers, enqueued, readyAt, preemptedFor, running, unstarted, backoff, needsApproval } = state

  function ready(w: TrackedWork, nowMs: number): boolean {
    // An `active` one is ready only with a start whose answer was lost: its slot sends that start again.
    const startable = w.state === 'queued' || (w.state === 'active' && unstarted.get(w.workItemId)?.work.ownershipEpoch === w.ownershipEpoch)
    if (w.owner !== self || !startable || w.contract === undefined || backoff.has(w.workItemId)) return false
    const startBy = w.startBy ?? w.ownershipLeaseExpiresAt
    if (startBy !== undefined && nowMs >= Date.parse(startBy)) return false
    const group = projection.group(w.groupId)
    return w.dependencyIds.every((d) => group?.verified.has(d) === true)
  }

  /** §12: work whose contract (or the Authority) requires an Execution Approval waits behind a risk gate until one for its epoch is live. */
  function gated(w: TrackedWork, nowMs: number): boolean {
    const required = w.contract?.executionApproval !== 'not_required' || needsApproval.has(w.workItemId)
    if (!required) return false
    const a = w.executionApproval
    return a === undefined || a.ownershipEpoch !== w.ownershipEpoch || nowMs >= Date.parse(a.expiresAt)
  }

  function dequeue(id: string): void {
    if (enqueued.delete(id)) scheduler.remove(id)
    preemptedFor.delete(id)
  }

  function resync(w: TrackedWork, nowMs: number): void {
    const id = w.workItemId
    if (!joined.has(w.groupId)) return
    if (w.owner === self && HELD_STATES.has(w.state)) held.add(id)
    else held.delete(id)
    const offered = w.state === 'offered' && w.owner === undefined && w.offeredTo.includes(self) && w.offerExpiresAt !== undefined && nowMs < Date.parse(w.offerExpiresAt)
    if (offered) offers.set(id, w)
    else offers.delete(id)
    const run = running.get(id)
    if (run !== undefined) return fence(run.slot, w)
    if (unstarted.has(id) && (w.owner !== self || unstarted.get(id)!.work.ownershipEpoch !== w.ownershipEpoch)) unstarted.delete(id)
    if (!ready(w, nowMs)) return dequeue(id)
    const contract = w.contract!
    const item: SchedulerItem = {
      id,
      groupId: w.groupId,
      urgency: urgencyLevel(contract.requestedUrgency),
      deadlineMs: Date.parse(contract.deadline),
      readyAtMs: readyAt.get(id) ?? nowMs,
      riskGated: gated(w, nowMs),
    }
    readyAt.set(id, item.readyAtMs)
    const before = enqueued.get(id)
    // §11.3: a changed urgency, deadline or gate reorders at once; an unchanged item keeps its place.
    if (before !== undefined && before.urgency === item.urgency && before.deadlineMs === item.deadlineMs && before.riskGated === item.riskGated) return
    enqueued.set(id, item)
    scheduler.enqueue(item)
  }

  /** §11.3: a slot whose owner, epoch or lease the log no longer shows has lost its lease. */
  function fence(slot: Slot, w: TrackedWork): void {
    if (slot.transitioning) return
    // A projection behind the Event that issued or renewed the slot's lease (the feed lags the
    // receipts) describes an older state: nothing in it can have closed that lease.
    const issued = slot.lease?.sequence
    if (issued !== undefined && (projection.group(w.groupId)?.head ?? 0) < issued) return
    if (w.owner !== self || w.ownershipEpoch !== slot.work.ownershipEpoch) {
      slot.lose(new ProtocolError('WORK_STALE_OWNERSHIP', `WorkItem ${w.workItemId} is no longer owned under Ownership Epoch ${slot.work.ownershipEpoch}`, { retryable: false }))
      return
    }
    const lease = slot.lease
    if (lease !== undefined && (w.state !== 'active' || (w.executionLeaseId !== undefined && w.executionLeaseId !== lease.leaseId))) {
      slot.lose(new ProtocolError('WORK_LEASE_EXPIRED', `Execution Lease ${lease.leaseId} of WorkItem ${w.workItemId} was closed (${w.state})`, { retryable: false }))
    }
  }

  function resyncAll(nowMs: number): void {
    for (const group of projection.view.groups.values()) for (const w of group.work.values()) resync(w, nowMs)
  }

  function drain(nowMs: number): void {
    const touched = new Set<string>()
    for (const w of projection.drainChanges()) {
      resync(w, nowMs)
      touched.add(w.groupId)
    }
    for (const groupId of touched) for (const w of projection.readyForMe(groupId)) if (!enqueued.has(w.workItemId)) resync(w, nowMs)
  }

  function endBackoffs(nowMs: number): void {
    for (const [id, until] of backoff) {
      if (until > nowMs) continue
      backoff.delete(id)
      const w = projection.work(id)
      if (w !== undefined) resync(w, nowMs)
    }
  }

  return { ready, resync, resyncAll, drain, endBackoffs }
}
