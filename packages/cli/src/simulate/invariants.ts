/**
 * The §4 invariants the simulator checks after every step, read from the Authority's stored log
 * and live state:
 *
 * - `contiguous-sequences` (§4.7, §15.2): each Group's log is 1, 2, 3, … with no gap or repeat,
 *   and ends at the head the state records;
 * - `one-current-epoch` (§4.5, §10.3): an Ownership Epoch begins only by accepting an open offer,
 *   is higher than every earlier one, and never while another is current; the live WorkItem's
 *   owner holds exactly the current epoch;
 * - `no-stale-completion` (§4.5, §11.5): every owner report cites the current epoch, a submission
 *   also the current Execution Lease, and a result is accepted only for a submission of the
 *   epoch that is still current;
 * - `usage-charged-once` (§12, §19): no WorkItem is charged more usage, in any dimension, than its
 *   executors reported; a Command retried after a lost answer must not be charged a second time;
 * - `fold-equals-live-state` (§4.6, ARCHITECTURE step 5): folding the whole log again gives the
 *   live state, deep-equal. This one costs a full replay, so the simulator runs it every few
 *   steps and at the end.
 *
 * Besides these, the simulator reports `actors-return`: an agent runtime whose round never
 * returned (a deadlock). It is no §4 invariant, but a run that hangs proves nothing. And
 * `action-applied-once` (§15.1, §19): a request the network delivered twice got the same answer
 * both times (the same Events, or the same refusal), as a repeated Action ID must.
 *
 * The first four are incremental: each step reads only the Events appended since the last one.
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { Authority } from '@weft/authority'
import { catalogued, type Event, type EventOf, isEventOf } from '@weft/spec'

/** The name of a checked invariant. */
export type InvariantName = 'contiguous-sequences' | 'one-current-epoch' | 'no-stale-completion' | 'usage-charged-once' | 'action-applied-once' | 'fold-equals-live-state' | 'actors-return'

/** A broken invariant, with what broke it. */
export interface InvariantBreach {
  readonly invariant: InvariantName
  readonly detail: string
}

/** Incremental invariant checks over one Authority. */
export interface InvariantChecker {
  /** The cheap checks over what was appended since the last call; the first breach, if any. */
  check(): InvariantBreach | undefined
  /** `fold(log)` deep-equals the live state (§4.6). */
  replay(): InvariantBreach | undefined
  /** Events read so far across every Group. */
  events(): number
}

/** What the log says about one WorkItem's ownership so far. */
interface Fence {
  /** The highest Ownership Epoch ever begun. */
  highest: number
  /** The epoch in force; absent when nobody owns the WorkItem. */
  current?: number
  /** The open offer: its candidates and when it stops being acceptable (§10.3); absent when none is open. */
  offer?: { readonly candidates: readonly string[]; readonly expiresAtMs: number }
  /** The Execution Lease in force. */
  lease?: string | undefined
  /** The epoch of the pending submission. */
  submitted?: number | undefined
}

/** Owner reports (§11.3): each cites an Ownership Epoch and, for these kinds, an Execution Lease. */
const OWNER_REPORTS: ReadonlySet<string> = new Set([
  'work.started',
  'work.progressed',
  'work.checkpointed',
  'work.blocked',
  'work.submitted',
  'artifact.published',
  'ext.missionweaveprotocol.core.work_execution_lease_revoked',
])

/** States in which a WorkItem has an owner (§10.2). */
const OWNED: ReadonlySet<string> = new Set(['queued', 'active', 'blocked', 'submitted'])

function workItemOf(event: Event): string | undefined {
  const p = event.payload as { workItemId?: unknown; artifact?: { workItemId?: unknown } }
  if (typeof p.workItemId === 'string') return p.workItemId
  return event.kind === 'artifact.published' && typeof p.artifact?.workItemId === 'string' ? p.artifact.workItemId : undefined
}

/** Advances `fence` over one Event of its WorkItem; returns what the Event broke. */
function advance(fence: Fence, event: Event): InvariantBreach | undefined {
  const at = `${event.kind} #${event.sequence}`
  const p = event.payload as { ownershipEpoch?: number; executionLeaseId?: string; executionLease?: { leaseId: string } }
  let breach: InvariantBreach | undefined
  if (OWNER_REPORTS.has(event.kind) && p.ownershipEpoch !== fence.current) {
    breach = { invariant: 'no-stale-completion', detail: `${at} cites Ownership Epoch ${p.ownershipEpoch}, current ${fence.current ?? 'none'}` }
  }
  const e = catalogued(event)
  switch (e.kind) {
    case 'work.offer.created': {
      // §10.2: an offer fences an expired owner first, and replaces any earlier offer.
      const o = e.payload
      fence.offer = { candidates: o.candidateAgentIds, expiresAtMs: Date.parse(o.offerExpiresAt) }
      delete fence.current
      delete fence.lease
      delete fence.submitted
      return breach
    }
    case 'work.offer.accepted': {
      const { ownershipEpoch: epoch, assigneeId } = e.payload
      const offer = fence.offer
      if (offer === undefined) breach = { invariant: 'one-current-epoch', detail: `${at} accepts an offer that is no longer open (epoch ${epoch}, current ${fence.current ?? 'none'})` }
      else if (!offer.candidates.includes(assigneeId)) breach = { invariant: 'one-current-epoch', detail: `${at} gives epoch ${epoch} to ${assigneeId}, whom the offer does not name` }
      else if (Date.parse(event.occurredAt) >= offer.expiresAtMs)
        breach = { invariant: 'one-current-epoch', detail: `${at} accepts an offer that expired at ${new Date(offer.expiresAtMs).toISOString()}` }
      else if (epoch <= fence.highest) breach = { invariant: 'one-current-epoch', detail: `${at} begins epoch ${epoch}, not above the highest so far (${fence.highest})` }
      delete fence.offer
      fence.highest = Math.max(fence.highest, epoch)
      fence.current = epoch
      return breach
    }
    case 'work.started':
    case 'work.progressed':
      fence.lease = p.executionLease?.leaseId
      return breach
    case 'work.submitted':
      if (breach === undefined && p.executionLeaseId !== fence.lease) {
        breach = { invariant: 'no-stale-completion', detail: `${at} cites Execution Lease ${p.executionLeaseId}, current ${fence.lease ?? 'none'}` }
      }
      fence.submitted = p.ownershipEpoch
      delete fence.lease
      return breach
    case 'work.result.accepted': {
      const child = e.payload.childMissionId !== undefined
      if (!child && (fence.submitted === undefined || fence.submitted !== fence.current)) {
        breach = { invariant: 'no-stale-completion', detail: `${at} completes a submission of epoch ${fence.submitted ?? 'none'}, current ${fence.current ?? 'none'}` }
      }
      delete fence.current
      delete fence.lease
      delete fence.submitted
      return breach
    }
    case 'work.failed':
      if (p.ownershipEpoch !== undefined && p.ownershipEpoch !== fence.current) {
        breach = { invariant: 'no-stale-completion', detail: `${at} reports a failure under epoch ${p.ownershipEpoch}, current ${fence.current ?? 'none'}` }
      }
      delete fence.current
      delete fence.lease
      delete fence.submitted
      return breach
    case 'work.cancelled':
    case 'mission.child.created':
      delete fence.current
      delete fence.lease
      delete fence.submitted
      return breach
    case 'work.unblocked':
      if (e.payload.nextState === 'open') delete fence.current
      return breach
    case 'work.checkpointed':
    case 'work.blocked':
    case 'ext.missionweaveprotocol.core.work_execution_lease_revoked':
      // §11.3: checkpoint and block release the lease; a replacement Session revokes it.
      delete fence.lease
      return breach
    default:
      return breach
  }
}

/** What the executors reported of a WorkItem's usage (see `SimWorld.reportedUsage`). */
export type ReportedUsage = (workItemId: string) => Readonly<Record<string, number>> | undefined

const USAGE_RECORDED = 'ext.missionweaveprotocol.core.resource_usage_recorded'

/**
 * A checker over `authority`, starting from an empty log; with `reported`, it also checks
 * `usage-charged-once` against what the executors reported.
 * @example
 * ```ts
 * const invariants = createInvariantChecker(authority, world.reportedUsage)
 * // after every step:
 * const breach = invariants.check() ?? (step % 10 === 0 ? invariants.replay() : undefined)
 * ```
 */
export function createInvariantChecker(authority: Authority, reported?: ReportedUsage): InvariantChecker {
  const heads = new Map<string, number>()
  const fences = new Map<string, Fence>()
  const charged = new Map<string, Record<string, number>>()
  let read = 0

  /** Adds a charge to its WorkItem's sum; a dimension above what the executors reported is a breach. */
  function charge(workItemId: string, event: EventOf<typeof USAGE_RECORDED>): InvariantBreach | undefined {
    if (reported === undefined) return undefined
    const sum = charged.get(workItemId) ?? {}
    charged.set(workItemId, sum)
    const { usageDelta } = event.payload
    const told = reported(workItemId) ?? {}
    for (const [dimension, n] of Object.entries(usageDelta)) {
      sum[dimension] = (sum[dimension] ?? 0) + (n ?? 0)
      if (sum[dimension]! > (told[dimension] ?? 0)) {
        return { invariant: 'usage-charged-once', detail: `${event.kind} #${event.sequence} brings ${dimension} to ${sum[dimension]}; the executors reported ${told[dimension] ?? 0}` }
      }
    }
    return undefined
  }

  function logOf(groupId: string): InvariantBreach | undefined {
    const group = authority.group(groupId)!
    let last = heads.get(groupId) ?? 0
    for (const event of authority.events(groupId, last)) {
      read++
      if (event.sequence !== last + 1) return { invariant: 'contiguous-sequences', detail: `Group ${groupId}: sequence ${event.sequence} follows ${last}` }
      last = event.sequence
      heads.set(groupId, last)
      const workItemId = workItemOf(event)
      if (workItemId === undefined) continue
      let fence = fences.get(workItemId)
      if (fence === undefined) fences.set(workItemId, (fence = { highest: 0 }))
      const breach = advance(fence, event) ?? (isEventOf(event, USAGE_RECORDED) ? charge(workItemId, event) : undefined)
      if (breach !== undefined) return { invariant: breach.invariant, detail: `${workItemId}: ${breach.detail}` }
    }
    if (group.head !== last) return { invariant: 'contiguous-sequences', detail: `Group ${groupId}: the state's head is ${group.head}, the log ends at ${last}` }
    return undefined
  }

  /** §4.5 on the live state: an owned WorkItem's owner holds the current epoch, the highest ever begun. */
  function ownersOf(groupId: string): InvariantBreach | undefined {
    for (const [workItemId, record] of authority.group(groupId)!.workItems) {
      const fence = fences.get(workItemId)
      const epoch = record.doc.owner?.ownershipEpoch
      if (!OWNED.has(record.doc.state) || record.childGroupId !== undefined) continue
      if (epoch === undefined || epoch !== fence?.current || epoch !== record.lastOwnershipEpoch) {
        return {
          invariant: 'one-current-epoch',
          detail: `${workItemId} is ${record.doc.state} under epoch ${epoch ?? 'none'}; the log's current epoch is ${fence?.current ?? 'none'}, the highest issued ${record.lastOwnershipEpoch}`,
        }
      }
    }
    return undefined
  }

  return {
    check() {
      for (const groupId of authority.state.groups.keys()) {
        const breach = logOf(groupId) ?? ownersOf(groupId)
        if (breach !== undefined) return breach
      }
      return undefined
    },
    replay() {
      const replayed = authority.replayState()
      if (isDeepStrictEqual(replayed, authority.state)) return undefined
      // Name the first part that differs, so the report points somewhere.
      const group = [...authority.state.groups.keys()].find((g) => !isDeepStrictEqual(replayed.groups.get(g), authority.state.groups.get(g)))
      const where = group === undefined ? 'the Organization state' : `Group ${group}`
      return { invariant: 'fold-equals-live-state', detail: `replaying the log does not give the live state of ${where}` }
    },
    events: () => read,
  }
}
