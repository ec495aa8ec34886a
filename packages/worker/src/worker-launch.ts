/**
 * Filling the slots (§11.1, §11.3): the Scheduler's picks are started in isolated slots under a
 * new Execution Lease, their leases are checked for expiry while the service is unreachable (§11.5;
 * online, the round renews and checks them itself), the way each run ended
 * is taken in (retry back-off, a risk gate learned from a refused start, re-queueing), and queued
 * critical work asks the least urgent running work of its Group to yield at a safe point.
 * @module
 */
import { ProtocolError } from '@weft/codec'
import { newUrnUuid } from '@weft/client'
import { type CapabilityRef, type Event, payloadOf } from '@weft/spec'
import { runOf } from './executor.js'
import { isTransportUnavailable } from './offline.js'
import type { SchedulerItem, TrackedWork } from './seams.js'
import { createSlot, type Slot, type SlotOutcome } from './slot.js'
import type { SlotHost, SlotTiming } from './slot-host.js'
import type { RunRecord } from './worker.js'
import type { Queue } from './worker-queue.js'
import type { Running, WorkerParts, WorkerState } from './worker-state.js'

/** What the Worker keeps of an assignment: the pinned card and capability versions (§6.1). */
interface Pins {
  readonly ownershipEpoch: number
  readonly agentCardVersion: number
  readonly capabilityPins: readonly CapabilityRef[]
}

/** The slot-filling loop of a Worker. */
export interface Launcher {
  /** Learns the pins of this Worker's assignments from `work.offer.accepted` Events (§6.1). */
  learnAssignments(events: readonly Event[]): void
  /** Starts picked work while a slot is free and the service is reachable. */
  fill(nowMs: number): Promise<void>
  /** Loses the leases that expired (offline: past the grace, §11.5). */
  checkExpiries(nowMs: number): void
  /**
   * §11.3: when every slot is busy, queued work at or above the preemption urgency asks the
   * lowest-urgency running work of its own Group (urgency orders work only inside a Group, §11.1)
   * to stop at its next safe point. One request per queued item.
   */
  preemptForUrgent(): void
  /** Every run outcome so far, oldest first. */
  runs(): readonly RunRecord[]
}

/** The services of the Worker its slots use (§11.1: shared identity and store, nothing else). */
function slotHost(parts: WorkerParts): SlotHost {
  const { options, leases, client, clock } = parts
  return {
    actor: parts.actor,
    signingKey: options.signingKey,
    store: parts.store,
    offline: parts.offline,
    timing: {
      leaseSeconds: leases.executionLeaseSeconds,
      resumeWithinSeconds: leases.resumeWithinSeconds,
      blockedLeaseSeconds: leases.blockedLeaseSeconds,
      baseRetryDelayMs: options.retryBaseDelayMs ?? 1000,
    } satisfies SlotTiming,
    blobs: options.blobs,
    artifactUri: options.artifactUri ?? ((hash) => `urn:weft:blob:${hash.slice('sha256:'.length)}`),
    tokenFor: (scope) => options.tokenFor?.(scope),
    now: () => clock.now(),
    newId: () => newUrnUuid(parts.random),
    build: (kind, payload, opts) => client.build(kind, payload, opts),
    submit: (built) => client.resend(built),
    expectedDurationMs: (contract) => parts.executors.durationOf(contract),
  }
}

/** The launcher of picked work into `state.running`. */
export function createLauncher(parts: WorkerParts, state: WorkerState, queue: Queue): Launcher {
  const { options, self, clock, store, projection, scheduler, offline, executors, log } = parts
  const { running, unstarted, enqueued, readyAt, preemptedFor, backoff, needsApproval } = state
  const preemptAt = options.preemptAtUrgency ?? 3
  const host = slotHost(parts)
  const pins = new Map<string, Pins>()
  const runLog: RunRecord[] = []

  function learnAssignments(events: readonly Event[]): void {
    for (const event of events) {
      const p = payloadOf(event, 'work.offer.accepted')
      if (p !== undefined && p.assigneeId === self) pins.set(p.workItemId, { ownershipEpoch: p.ownershipEpoch, agentCardVersion: p.agentCardVersion, capabilityPins: p.capabilityPins })
    }
  }

  /** The pins of the current assignment: from live Events, else from the stored log (after a restart). */
  function pinsOf(w: TrackedWork): Pins | undefined {
    const known = pins.get(w.workItemId)
    if (known?.ownershipEpoch === w.ownershipEpoch) return known
    const found = store
      .events(w.groupId)
      .flatMap((e) => payloadOf(e, 'work.offer.accepted') ?? [])
      .findLast((p) => p.workItemId === w.workItemId && p.assigneeId === self && p.ownershipEpoch === w.ownershipEpoch)
    if (found === undefined) return undefined
    const p: Pins = { ownershipEpoch: found.ownershipEpoch, agentCardVersion: found.agentCardVersion, capabilityPins: found.capabilityPins }
    pins.set(w.workItemId, p)
    return p
  }

  function record(w: { readonly workItemId: string; readonly groupId: string }, outcome: RunRecord['outcome'], extra: { attempt?: number; code?: string } = {}): void {
    runLog.push({ workItemId: w.workItemId, groupId: w.groupId, atMs: clock.now(), outcome, ...extra })
  }

  function ended(slot: Slot, outcome: SlotOutcome): void {
    const id = slot.work.workItemId
    running.delete(id)
    if (parts.stopped()) return
    scheduler.release(id)
    if (outcome.kind === 'retry') backoff.set(id, clock.now() + outcome.delayMs)
    const extra = outcome.kind === 'retry' ? { attempt: outcome.attempt } : outcome.kind === 'lost' ? { code: outcome.error.code } : outcome.kind === 'failed' ? { code: outcome.failure.code } : {}
    record(slot.work, outcome.kind, extra)
    if (outcome.kind === 'lost') log({ level: 'warn', message: `lease lost: ${outcome.error.message}`, workItemId: id, code: outcome.error.code })
    // The item left its slot: what the log says about it now decides whether it queues again (§11.3 step 5).
    const w = projection.work(id)
    if (w !== undefined) queue.resync(w, clock.now())
    parts.wake()
  }

  async function launch(w: TrackedWork, item: SchedulerItem): Promise<void> {
    const id = w.workItemId
    const assignment = pinsOf(w)
    const executor = w.contract === undefined ? undefined : executors.forContract(w.contract)
    if (assignment === undefined || executor === undefined || w.contract === undefined) {
      scheduler.release(id)
      log({ level: 'warn', message: 'cannot start: the assignment or an executor is unknown', workItemId: id })
      return
    }
    // §19: a slot whose start lost its answer is taken again, so that it sends the same start.
    const parked = unstarted.get(id)
    unstarted.delete(id)
    const slot =
      parked?.work.ownershipEpoch === w.ownershipEpoch
        ? parked
        : createSlot(host, {
            workItemId: id,
            groupId: w.groupId,
            missionId: w.missionId,
            ownershipEpoch: w.ownershipEpoch,
            contract: w.contract,
            dependencyIds: w.dependencyIds,
            agentCardVersion: assignment.agentCardVersion,
            capabilityPins: assignment.capabilityPins,
          })
    const run: Running = { slot, urgency: item.urgency, done: Promise.resolve() }
    running.set(id, run)
    try {
      await slot.start()
    } catch (error) {
      running.delete(id)
      scheduler.release(id)
      if (isTransportUnavailable(error)) {
        unstarted.set(id, slot)
        return
      }
      const e = ProtocolError.from(error)
      // §12: the Authority's policy may gate work the contract does not; wait for an approval Event.
      if (e.code === 'APPROVAL_REQUIRED') needsApproval.add(id)
      record(w, 'start_refused', { code: e.code })
      log({ level: 'warn', message: `start refused: ${e.message}`, workItemId: id, code: e.code })
      const now = projection.work(id)
      if (now !== undefined && e.code === 'APPROVAL_REQUIRED') queue.resync(now, clock.now())
      return
    }
    backoff.delete(id)
    needsApproval.delete(id)
    run.done = slot.run(runOf(executor)).then((outcome) => ended(slot, outcome))
  }

  async function fill(nowMs: number): Promise<void> {
    while (running.size < options.slots && !offline.offline) {
      const item = scheduler.pick(nowMs)
      if (item === undefined) return
      enqueued.delete(item.id)
      preemptedFor.delete(item.id)
      // §11.1 aging counts time spent waiting in the queue: work that ran (and is preempted,
      // checkpointed or blocked) re-enters with a fresh ready time, never ahead of what preempted it.
      readyAt.delete(item.id)
      const w = projection.work(item.id)
      if (w === undefined || !queue.ready(w, nowMs)) {
        scheduler.release(item.id)
        continue
      }
      await launch(w, item)
    }
  }

  function checkExpiries(nowMs: number): void {
    for (const r of running.values()) r.slot.checkExpiry(nowMs)
  }

  function preemptForUrgent(): void {
    if (preemptAt === false || running.size < options.slots) return
    for (const item of enqueued.values()) {
      if (item.urgency < preemptAt || item.riskGated === true || preemptedFor.has(item.id)) continue
      let victim: Running | undefined
      for (const r of running.values()) {
        if (r.slot.work.groupId !== item.groupId || r.urgency >= item.urgency || r.slot.preemptionRequested) continue
        if (victim === undefined || r.urgency < victim.urgency) victim = r
      }
      if (victim === undefined) continue
      preemptedFor.add(item.id)
      victim.slot.requestPreemption()
      log({ level: 'info', message: `preemption requested for ${item.id}`, workItemId: victim.slot.work.workItemId })
    }
  }

  return { learnAssignments, fill, checkExpiries, preemptForUrgent, runs: () => [...runLog] }
}
