/**
 * The Worker's reducers: how each accepted Group Event changes the per-Group view the queues are
 * read from (§11.1). Every change is derived from the Event and its kind's row in the WorkItem
 * machine (§10.2), never from the clock, so replaying a Group log from sequence 1 rebuilds the
 * view exactly. Each reducer touches one record and a few set entries: O(1) per Event, whatever
 * the size of the Group.
 *
 * What the view deliberately leaves out: Messages, Memberships, Artifacts, policy grants and
 * archival facts (the Worker reads them elsewhere or not at all), and the two Organization-scoped
 * facts, which never enter a Group log (§15.2). A replacement Session's effect on this Worker's
 * WorkItems arrives as the Group fact `ext.missionweaveprotocol.core.work_execution_lease_revoked`,
 * one per WorkItem (§11.3), which is what the view folds.
 * @module
 */
import { UsageError } from '@weft/codec'
import { eventInfo, type Event, type MissionState } from '@weft/spec'
import type { GroupView, TrackedWork, WorkerView } from './seams.js'
import type { WorkerEventReducers } from './gen/reducers.js'

/** The envelope members the reducers read besides the payload. */
type Envelope = Pick<Event, 'groupId' | 'sequence' | 'aggregateRevision' | 'kind'>

/**
 * The view of `groupId`, created empty on first sight. The projection opens a Group before its
 * first Event is folded; reducers call it too, so `applyWorkerEvent` also works on a bare view.
 */
export function openGroup(view: WorkerView, groupId: string): GroupView {
  let group = view.groups.get(groupId)
  if (group === undefined) {
    group = { groupId, missionId: undefined, head: 0, work: new Map(), verified: new Set(), queuedForMe: new Set() }
    view.groups.set(groupId, group)
  }
  return group
}

/** A new, empty {@link WorkerView} of the Worker `self`. */
export function emptyView(self: string): WorkerView {
  return { self, groups: new Map(), changed: new Set() }
}

function groupOf(view: WorkerView, event: Envelope): GroupView {
  // §15.2: every kind these reducers fold is Group-scoped, so the schema requires a Group ID.
  if (event.groupId === undefined) throw new UsageError(`${event.kind}: a Group Event without groupId cannot be folded`)
  return openGroup(view, event.groupId)
}

/** A fresh record of a WorkItem with nothing known about it beyond its IDs. */
function blank(group: GroupView, workItemId: string, missionId: string): TrackedWork {
  return {
    workItemId,
    groupId: group.groupId,
    missionId,
    state: 'open',
    contract: undefined,
    dependencyIds: [],
    offeredTo: [],
    offerExpiresAt: undefined,
    owner: undefined,
    ownershipEpoch: 0,
    ownershipLeaseExpiresAt: undefined,
    executionLeaseId: undefined,
    executionLeaseExpiresAt: undefined,
    lastCheckpoint: undefined,
    updatedAtSequence: 0,
    // Every optional member is present from the start, so all records share one shape and the
    // reducers' property accesses stay monomorphic.
    revision: undefined,
    startBy: undefined,
    blockedReason: undefined,
    requiresReacceptance: undefined,
    executionApproval: undefined,
    usage: undefined,
    remainingBudget: undefined,
    childGroupId: undefined,
  }
}

/**
 * A record for a WorkItem first seen through an Event after its authorization (§8: a late joiner
 * sees history from its visibility start only). Its Mission ID is empty when the Mission's genesis
 * preceded this Worker's visibility too.
 */
function stub(group: GroupView, workItemId: string): TrackedWork {
  const work = blank(group, workItemId, group.missionId ?? '')
  group.work.set(workItemId, work)
  return work
}

/**
 * Applies `change` to the WorkItem whose new state the Event states, then records the change. A
 * WorkItem not seen before is tracked from here on (its contract stays unknown, so it is never
 * ready to run).
 */
function restate(view: WorkerView, event: Envelope, workItemId: string, change: (work: TrackedWork) => void): void {
  const group = groupOf(view, event)
  const work = group.work.get(workItemId) ?? stub(group, workItemId)
  change(work)
  touch(view, group, work, event)
}

/** Applies `change` to a WorkItem the Event only refines; skipped when the view never saw the WorkItem. */
function refine(view: WorkerView, event: Envelope, workItemId: string, change: (work: TrackedWork) => void): void {
  const group = groupOf(view, event)
  const work = group.work.get(workItemId)
  if (work === undefined) return
  change(work)
  touch(view, group, work, event)
}

/**
 * Records that `work` changed with `event`: sequence, revision (for WorkItem-aggregate Events,
 * §15.3), the change set the Scheduler drains, and the two per-Group indexes derived from state.
 */
function touch(view: WorkerView, group: GroupView, work: TrackedWork, event: Envelope): void {
  if (event.sequence !== undefined) work.updatedAtSequence = event.sequence
  if (event.aggregateRevision !== undefined && eventInfo(event.kind)?.aggregate === 'workItem') work.revision = event.aggregateRevision
  view.changed.add(work.workItemId)
  const id = work.workItemId
  if (work.state === 'verified') group.verified.add(id)
  else group.verified.delete(id)
  if (work.state === 'queued' && work.owner === view.self) group.queuedForMe?.add(id)
  else group.queuedForMe?.delete(id)
}

/** §11.3: checkpoint, block and submission release the Execution Lease; failure, cancellation and revocation end it. */
function endExecution(work: TrackedWork): void {
  work.executionLeaseId = undefined
  work.executionLeaseExpiresAt = undefined
}

/** Ownership leases end (§11.3); `owner` keeps mirroring the WorkItem document, which names the last owner. */
function endLeases(work: TrackedWork): void {
  endExecution(work)
  work.ownershipLeaseExpiresAt = undefined
  work.startBy = undefined
}

/** Execution stops at a durable checkpoint and ownership is retained until `until` (§11.3, §11.4). */
function pause(work: TrackedWork, until: string, checkpoint: unknown): void {
  endExecution(work)
  work.ownershipLeaseExpiresAt = until
  work.lastCheckpoint = checkpoint
}

/** No offer is pending any more (§10.3). */
function endOffer(work: TrackedWork): void {
  work.offeredTo = []
  work.offerExpiresAt = undefined
}

/** A terminal or Coordinator-bound end (§10.2): leases closed, pending offers withdrawn. */
function end(view: WorkerView, event: Envelope & { readonly payload: { readonly workItemId: string } }, state: 'verified' | 'failed' | 'cancelled'): void {
  restate(view, event, event.payload.workItemId, (work) => {
    work.state = state
    endLeases(work)
    endOffer(work)
    work.blockedReason = undefined
  })
}

/** A Group's first Event names its Mission and the Mission's state (§7.1). */
function genesis(view: WorkerView, event: Envelope & { readonly payload: { readonly mission: { readonly missionId: string; readonly state: MissionState } } }): void {
  const group = groupOf(view, event)
  group.missionId = event.payload.mission.missionId
  group.missionState = event.payload.mission.state
}

/** The Mission moved to `state` (§7.1, §7.3); its WorkItems follow through their own Events. */
function missionTo(state: MissionState): (view: WorkerView, event: Envelope) => void {
  return (view, event) => {
    groupOf(view, event).missionState = state
  }
}

/** A fact the Worker's view does not fold (see the module comment). */
const ignore = (): void => {}

/**
 * The reducer of every Event kind, typed by the generated {@link WorkerEventReducers}: a kind
 * added to the catalog does not compile here until it is decided.
 */
export const workerReducers: WorkerEventReducers = {
  'mission.created': genesis,
  'mission.coordinator.assigned': ignore,
  'mission.coordinator.renewed': ignore,
  // §7.1 Mission rows: submission awaits approval; approval is final; a change request reopens.
  'mission.submitted_for_approval': missionTo('awaiting_approval'),
  'mission.approved': missionTo('approved'),
  'mission.changes_requested': missionTo('active'),
  // §10.2: the Authority appends `work.cancelled` / `work.failed` for each unfinished WorkItem in
  // the same transaction; those Events, not this one, change the WorkItems.
  'mission.cancelled': missionTo('cancelled'),
  'mission.terminated': missionTo('failed'),
  'mission.child.created': (view, event) =>
    restate(view, event, event.payload.parentWorkItemId, (work) => {
      // §14, §10.2: the parent waits for its child; pending offers are withdrawn, ownership fenced.
      work.state = 'blocked'
      work.childGroupId = event.payload.childGroupId
      endLeases(work)
      endOffer(work)
    }),
  'mission.follow_up.created': genesis,
  'membership.changed': ignore,
  'membership.ended': ignore,
  'membership.delegation.granted': ignore,
  'message.posted': ignore,
  'message.corrected': ignore,
  'message.retracted': ignore,
  'message.redacted': ignore,
  // §10.2: a proposal is not a WorkItem; nothing can be queued from it.
  'work.proposed': ignore,
  'work.authorized': (view, event) => {
    const group = groupOf(view, event)
    const doc = event.payload.workItem
    const work = blank(group, doc.workItemId, doc.missionId)
    work.state = doc.state
    work.contract = doc.contract
    work.dependencyIds = event.payload.dependencyIds
    group.work.set(doc.workItemId, work)
    touch(view, group, work, event)
  },
  'work.offer.created': (view, event) =>
    restate(view, event, event.payload.workItemId, (work) => {
      // §10.2: an expired owner is fenced first; the offer replaces any pending one.
      work.state = 'offered'
      work.owner = undefined
      endLeases(work)
      work.offeredTo = event.payload.candidateAgentIds
      work.offerExpiresAt = event.payload.offerExpiresAt
      work.blockedReason = undefined
    }),
  'work.offer.accepted': (view, event) =>
    restate(view, event, event.payload.workItemId, (work) => {
      const p = event.payload
      // §10.3: the winner holds a new Ownership Epoch; every other offer is withdrawn.
      work.state = 'queued'
      work.owner = p.assigneeId
      work.ownershipEpoch = p.ownershipEpoch
      work.ownershipLeaseExpiresAt = p.ownershipLeaseExpiresAt
      work.startBy = p.startBy
      work.requiresReacceptance = undefined
      endOffer(work)
    }),
  'work.contract.revised': (view, event) =>
    refine(view, event, event.payload.workItemId, (work) => {
      // §10.4, §10.1: the complete dependency set after the change, and the new contract version.
      work.contract = event.payload.contract
      work.dependencyIds = event.payload.dependencyIds
      work.requiresReacceptance = event.payload.requiresReacceptance
    }),
  'work.started': (view, event) =>
    restate(view, event, event.payload.workItemId, (work) => {
      work.state = 'active'
      work.ownershipEpoch = event.payload.ownershipEpoch
      work.executionLeaseId = event.payload.executionLease.leaseId
      work.executionLeaseExpiresAt = event.payload.executionLeaseExpiresAt
    }),
  'work.progressed': (view, event) =>
    refine(view, event, event.payload.workItemId, (work) => {
      // §11.3: a renewal keeps or replaces the lease record and moves its expiry.
      work.executionLeaseId = event.payload.executionLease.leaseId
      work.executionLeaseExpiresAt = event.payload.executionLeaseExpiresAt
    }),
  'work.checkpointed': (view, event) =>
    restate(view, event, event.payload.workItemId, (work) => {
      // §11.3: the checkpoint releases execution; ownership is retained until `resumeBy`.
      work.state = 'queued'
      pause(work, event.payload.resumeBy, event.payload.checkpoint)
    }),
  'work.blocked': (view, event) =>
    restate(view, event, event.payload.workItemId, (work) => {
      // §11.4: checkpoint, release the slot, keep ownership for the bounded blocked lease.
      work.state = 'blocked'
      pause(work, event.payload.blockedLeaseExpiresAt, event.payload.checkpoint)
      work.blockedReason = event.payload.reason
    }),
  'work.unblocked': (view, event) =>
    restate(view, event, event.payload.workItemId, (work) => {
      work.state = event.payload.nextState
      work.blockedReason = undefined
      // §10.2: back to `open` means ownership lapsed while blocked; the WorkItem will be offered again.
      if (event.payload.nextState === 'open') {
        work.owner = undefined
        endLeases(work)
      }
    }),
  'work.submitted': (view, event) =>
    restate(view, event, event.payload.workItemId, (work) => {
      work.state = 'submitted'
      endExecution(work)
    }),
  'work.result.accepted': (view, event) => end(view, event, 'verified'),
  'work.failed': (view, event) => end(view, event, 'failed'),
  'work.cancelled': (view, event) => end(view, event, 'cancelled'),
  'artifact.published': ignore,
  'approval.execution.granted': (view, event) =>
    refine(view, event, event.payload.workItemId, (work) => {
      const p = event.payload
      // §12: the start gate of one Ownership Epoch; the Event advances the approval aggregate, not the WorkItem's revision.
      work.executionApproval = { approvalId: p.approvalId, ownershipEpoch: p.ownershipEpoch, expiresAt: p.expiresAt }
    }),
  'policy.cooperation_override.granted': ignore,
  'group.snapshot.created': ignore,
  'group.archived': ignore,
  'ext.missionweaveprotocol.registry.agent_card_registered': ignore,
  'ext.missionweaveprotocol.identity.session_opened': ignore,
  'ext.missionweaveprotocol.core.resource_usage_recorded': (view, event) =>
    refine(view, event, event.payload.workItemId, (work) => {
      work.usage = event.payload.cumulativeUsage
      work.remainingBudget = event.payload.remainingBudget
    }),
  'ext.missionweaveprotocol.core.work_execution_lease_revoked': (view, event) =>
    restate(view, event, event.payload.workItemId, (work) => {
      // §11.3: queued again under the same Ownership Epoch. The retained ownership lasts at least as
      // long as the revoked Execution Lease would have, as the Authority records it.
      const revokedUntil = work.executionLeaseExpiresAt
      const ownedUntil = work.ownershipLeaseExpiresAt
      if (revokedUntil !== undefined && (ownedUntil === undefined || Date.parse(revokedUntil) > Date.parse(ownedUntil))) work.ownershipLeaseExpiresAt = revokedUntil
      work.state = 'queued'
      endExecution(work)
    }),
}
