/**
 * Per-slot timeline of a run, derived from the accepted Events alone (§15.2): every Execution
 * Lease is one record, from its `work.started` to the Event that released, revoked or fenced it
 * (§11.3). Records of one Agent are laid out on its execution slots, so a report can draw who
 * ran what, when, for which Mission, and where preemption happened.
 * @module
 */
import { catalogued, type Event } from '@weft/spec'

/** How an Execution Lease ended (§11.3), or `running` when the log shows no end. */
export type LeaseEnd = 'checkpointed' | 'preempted' | 'blocked' | 'submitted' | 'failed' | 'cancelled' | 'revoked' | 'promoted' | 'fenced' | 'running'

/** One Execution Lease on one slot of one Agent. */
export interface SlotRecord {
  readonly agentId: string
  /** 0-based slot of the Agent, assigned in start order to the lowest free slot. */
  readonly slot: number
  readonly groupId: string
  readonly workItemId: string
  readonly ownershipEpoch: number
  readonly executionLeaseId: string
  readonly startMs: number
  /** When the lease ended; `undefined` while {@link ended} is `running`. */
  readonly endMs: number | undefined
  readonly ended: LeaseEnd
}

interface Open {
  readonly agentId: string
  readonly groupId: string
  readonly workItemId: string
  readonly ownershipEpoch: number
  readonly executionLeaseId: string
  readonly startMs: number
}

/** `workItemId@ms`: the key of a checkpoint that was a preemption (§11.3). */
export function preemptionKey(workItemId: string, atMs: number): string {
  return `${workItemId}@${atMs}`
}

/** The preemptions of a run as they happen (§11.3), by {@link preemptionKey}. */
export interface PreemptionLog {
  /** A Worker's Scheduler asked the run of `workItemId` to stop at its next safe point. */
  requested(workItemId: string): void
  /** `workItemId` checkpointed at `atMs`: a preemption if one was requested since its last checkpoint. */
  checkpointed(workItemId: string, atMs: number): void
  /** A Worker reports that its run of `workItemId` ended at a safe point on request at `atMs`. */
  ended(workItemId: string, atMs: number): void
  /** The checkpoints that were preemptions. */
  readonly keys: ReadonlySet<string>
}

/** An empty {@link PreemptionLog}. */
export function preemptionLog(): PreemptionLog {
  const pending = new Set<string>()
  const keys = new Set<string>()
  return {
    requested: (workItemId) => void pending.add(workItemId),
    checkpointed(workItemId, atMs) {
      if (pending.delete(workItemId)) keys.add(preemptionKey(workItemId, atMs))
    },
    ended: (workItemId, atMs) => void keys.add(preemptionKey(workItemId, atMs)),
    keys,
  }
}

/** Events of several Groups in one order: by occurrence time, then Group, then sequence. */
export function mergeLogs(logs: readonly (readonly Event[])[]): Event[] {
  return logs
    .flat()
    .map((event) => ({ event, at: Date.parse(event.occurredAt) }))
    .sort((a, b) => a.at - b.at || (a.event.groupId ?? '').localeCompare(b.event.groupId ?? '') || (a.event.sequence ?? 0) - (b.event.sequence ?? 0))
    .map((x) => x.event)
}

/**
 * The slot timeline of `events` (in the order of {@link mergeLogs}). A `work.checkpointed` whose
 * {@link preemptionKey} is in `preempted` ends its lease as `preempted`.
 */
export function slotTimeline(events: readonly Event[], preempted: ReadonlySet<string> = new Set()): SlotRecord[] {
  const open = new Map<string, Open>()
  const done: (Open & { endMs: number | undefined; ended: LeaseEnd })[] = []
  const close = (leaseId: string | undefined, atMs: number, ended: LeaseEnd): void => {
    const o = leaseId === undefined ? undefined : open.get(leaseId)
    if (o === undefined) return
    open.delete(o.executionLeaseId)
    done.push({ ...o, endMs: atMs, ended })
  }
  const leaseOfItem = (workItemId: string): string | undefined => [...open.values()].find((o) => o.workItemId === workItemId)?.executionLeaseId
  for (const event of events) {
    const atMs = Date.parse(event.occurredAt)
    const e = catalogued(event)
    switch (e.kind) {
      case 'work.started': {
        const s = e.payload
        open.set(s.executionLease.leaseId, {
          agentId: s.executionLease.holderAgentId,
          groupId: event.groupId ?? '',
          workItemId: s.workItemId,
          ownershipEpoch: s.ownershipEpoch,
          executionLeaseId: s.executionLease.leaseId,
          startMs: atMs,
        })
        break
      }
      case 'work.checkpointed':
        close(e.payload.executionLeaseId, atMs, preempted.has(preemptionKey(e.payload.workItemId, atMs)) ? 'preempted' : 'checkpointed')
        break
      case 'work.blocked':
        close(e.payload.executionLeaseId, atMs, 'blocked')
        break
      case 'work.submitted':
        close(e.payload.executionLeaseId, atMs, 'submitted')
        break
      case 'ext.missionweaveprotocol.core.work_execution_lease_revoked':
        close(e.payload.executionLeaseId, atMs, 'revoked')
        break
      case 'work.failed':
        close(e.payload.executionLeaseId ?? leaseOfItem(e.payload.workItemId), atMs, 'failed')
        break
      case 'work.cancelled':
        close(leaseOfItem(e.payload.workItemId), atMs, 'cancelled')
        break
      case 'mission.child.created':
        close(leaseOfItem(e.payload.parentWorkItemId), atMs, 'promoted')
        break
      case 'work.offer.created':
        // §10.2: an offer over a lapsed owner fences its lease.
        if (e.payload.fencedOwnershipEpoch !== undefined) close(leaseOfItem(e.payload.workItemId), atMs, 'fenced')
        break
      default:
        break
    }
  }
  for (const o of open.values()) done.push({ ...o, endMs: undefined, ended: 'running' })
  return placeOnSlots(done)
}

/** Lays each Agent's leases on its slots: in start order, each on the lowest slot free by then. */
function placeOnSlots(records: readonly (Open & { endMs: number | undefined; ended: LeaseEnd })[]): SlotRecord[] {
  const busyUntil = new Map<string, (number | undefined)[]>()
  const out: SlotRecord[] = []
  for (const r of [...records].sort((a, b) => a.startMs - b.startMs || a.agentId.localeCompare(b.agentId))) {
    let slots = busyUntil.get(r.agentId)
    if (slots === undefined) busyUntil.set(r.agentId, (slots = []))
    let slot = slots.findIndex((until) => until !== undefined && until <= r.startMs)
    if (slot < 0) slot = slots.length
    slots[slot] = r.endMs ?? Number.POSITIVE_INFINITY
    out.push({ ...r, slot })
  }
  return out
}
