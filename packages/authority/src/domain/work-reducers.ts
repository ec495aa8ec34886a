/**
 * The reducers of the WorkItem Events (§10–§13): the only code that writes WorkItem records. Each
 * derives everything from its Event, so live acceptance and replay build the same state, and keeps
 * the WorkItem document valid against `work-item.schema.json` with `revision` equal to the Event's
 * aggregate revision. Documents are replaced, never edited in place, because they may share
 * objects with stored Event payloads.
 * @module
 */
import type { Event, WorkItem, WorkOffer } from '@weft/spec'
import type { EventOf, ReducerFor } from '../commit/handler.js'
import type { ActorRef, AuthorityState, GroupState, WorkItemRecord } from '../model.js'
import { acceptEvidence, fileSubmission, submissionOf } from './evidence.js'
import { clearMember, renewLease, retireLease, workLease } from './leases.js'
import { noteFailure } from './retry.js'
import { recordUsage, settleReservations } from './work-budget.js'
import { indexWorkItem } from './work-index.js'
import { present } from './work-roles.js'
import { noteRate } from './runaway.js'
import { parseInstant } from '@weft/codec/time'

type WorkItemEvent = Pick<Event, 'groupId' | 'aggregateRevision' | 'occurredAt' | 'eventId' | 'kind'> & { readonly payload: { readonly workItemId: string } }

function groupOf(state: AuthorityState, event: Pick<Event, 'groupId' | 'kind'>): GroupState {
  const group = event.groupId === undefined ? undefined : state.groups.get(event.groupId)
  if (group === undefined) throw new Error(`${event.kind}: unknown Group ${event.groupId}`)
  return group
}

function locate(state: AuthorityState, event: WorkItemEvent): { readonly group: GroupState; readonly record: WorkItemRecord } {
  const group = groupOf(state, event)
  const record = group.workItems.get(event.payload.workItemId)
  if (record === undefined) throw new Error(`${event.kind}: unknown WorkItem ${event.payload.workItemId}`)
  return { group, record }
}

/** Replaces the document with `changes` applied and `drop` removed, at the Event's revision and time. */
function advance(record: WorkItemRecord, event: WorkItemEvent, changes: Partial<WorkItem>, drop: readonly (keyof WorkItem)[] = []): void {
  const revision = event.aggregateRevision ?? record.doc.revision + 1
  if (drop.length === 0) {
    // A clone, then the changes: the same members in the same order as one spread of both, for less.
    const doc = Object.assign({ ...record.doc }, changes)
    doc.revision = revision
    doc.updatedAt = event.occurredAt
    record.doc = doc
    return
  }
  // Members are left out rather than deleted: a delete would turn the document into a slow
  // dictionary object for every later read and copy. The member order is the spread's.
  const doc: Record<string, unknown> = {}
  const from = record.doc as unknown as Record<string, unknown>
  const change = changes as Record<string, unknown>
  // Documents and changes are plain objects: `for in` walks their own members, with no entry arrays.
  for (const key in from) if (!drop.includes(key as keyof WorkItem)) doc[key] = from[key]
  for (const key in change) if (!drop.includes(key as keyof WorkItem)) doc[key] = change[key]
  doc['revision'] = revision
  doc['updatedAt'] = event.occurredAt
  record.doc = doc as unknown as WorkItem
}

/** The offers with every pending one settled by `status`. */
function settlePending(offers: readonly WorkOffer[] | undefined, status: (offer: WorkOffer) => WorkOffer['status']): WorkOffer[] {
  return (offers ?? []).map((o) => (o.status === 'pending' ? { ...o, status: status(o) } : o))
}

/**
 * A WorkItem leaves execution for good or for the Coordinator: leases closed, pending offers
 * withdrawn (§10.2, §12), and the unconsumed part of its reservation back to its parent.
 */
function endWork(state: AuthorityState, group: GroupState, record: WorkItemRecord, event: WorkItemEvent, to: 'verified' | 'failed' | 'cancelled', changes: Partial<WorkItem> = {}): void {
  const leaseState = to === 'verified' ? 'released' : 'revoked'
  retireLease(record, 'executionLease', leaseState, event.occurredAt, to)
  retireLease(record, 'ownershipLease', leaseState, event.occurredAt, to)
  clearMember(record, 'offerExpiresAt')
  advance(record, event, { ...changes, state: to, offers: settlePending(record.doc.offers, () => 'withdrawn') })
  // §12: ended work keeps reserved only what it and its subtree consumed or still hold.
  settleReservations(group, record, state)
}

/** Tracks a WorkItem created or offered under a Delegation Grant against its ceilings (§9.1). */
function chargeGrant(group: GroupState, grantId: string | undefined, workItemId: string): void {
  if (grantId !== undefined) group.grants.get(grantId)?.workItemIds.add(workItemId)
}

const proposed: ReducerFor<'work.proposed'> = (state, event) => {
  // §20: the proposal rate counts from the log.
  noteRate(state, event, 'proposal_rate')
  const p = event.payload
  groupOf(state, event).proposals.set(p.proposalId, {
    proposalId: p.proposalId,
    proposedBy: event.actor as ActorRef,
    eventId: event.eventId,
    contract: p.contract,
    dependencyIds: p.dependencyIds,
    ...present({ parentWorkItemId: p.parentWorkItemId }),
  })
}

const authorized: ReducerFor<'work.authorized'> = (state, event) => {
  const group = groupOf(state, event)
  const p = event.payload
  const doc: WorkItem = { ...p.workItem, revision: event.aggregateRevision ?? p.workItem.revision, updatedAt: event.occurredAt }
  const parent = p.parentWorkItemId === undefined ? undefined : group.workItems.get(p.parentWorkItemId)
  const record = {
    doc,
    dependencyIds: [...p.dependencyIds],
    // Always present, `undefined` when absent (as `clearMember` leaves members): every record has one shape.
    parentWorkItemId: p.parentWorkItemId,
    proposalId: p.proposalId,
    delegationGrantId: p.delegationGrantId,
    depth: parent === undefined ? 0 : parent.depth + 1,
    lastOwnershipEpoch: 0,
    executionLeaseIds: new Set<string>(),
    executionApprovals: [],
    artifactIds: new Set<string>(),
    reservedBudget: doc.contract.budget,
    // The ledgers (model.ts), `undefined` until their reducers first write them.
    usage: undefined,
    retryLedger: undefined,
    submissionFacts: undefined,
    closedLeases: undefined,
  } as WorkItemRecord
  group.workItems.set(doc.workItemId, record)
  // The Group's index of WorkItems by parent follows the new record (§4.11 tree, §12 reservations).
  indexWorkItem(group, record)
  // §9: the WorkItem's own Conversation, open to the Group (the Coordinator and MissionOwner see it).
  group.conversations.set(doc.conversationId, {
    conversationId: doc.conversationId,
    missionId: doc.missionId,
    groupId: doc.groupId,
    type: 'work_item',
    primaryWorkItemId: doc.workItemId,
    title: doc.contract.goal.trim().slice(0, 500),
    access: { mode: 'group' },
    createdBy: event.actor,
    createdAt: event.occurredAt,
    state: 'active',
    revision: 1,
  })
  const proposal = p.proposalId === undefined ? undefined : group.proposals.get(p.proposalId)
  if (proposal !== undefined) proposal.authorizedAs = doc.workItemId
  chargeGrant(group, p.delegationGrantId, doc.workItemId)
}

const offerCreated: ReducerFor<'work.offer.created'> = (state, event) => {
  const { group, record } = locate(state, event)
  const p = event.payload
  // §10.2: an expired owner is fenced; its leases close before the WorkItem is offered again.
  retireLease(record, 'executionLease', 'expired', event.occurredAt, 'ownership fenced by a new offer')
  retireLease(record, 'ownershipLease', 'expired', event.occurredAt, 'ownership fenced by a new offer')
  record.offerExpiresAt = p.offerExpiresAt
  // §10.2: a new offer replaces the pending ones.
  const offers = [...settlePending(record.doc.offers, () => 'withdrawn'), ...p.offers]
  advance(record, event, { state: 'offered', offers, selectionBasis: p.selectionBasis }, ['owner', 'scheduleEstimate'])
  // §12: a failed WorkItem offered again reserves its whole budget again.
  settleReservations(group, record, state)
  chargeGrant(group, p.delegationGrantId, p.workItemId)
}

const offerAccepted: ReducerFor<'work.offer.accepted'> = (state, event) => {
  const { record } = locate(state, event)
  const p = event.payload
  record.lastOwnershipEpoch = p.ownershipEpoch
  clearMember(record, 'offerExpiresAt')
  record.ownershipLease = workLease('ownership', record, {
    leaseId: p.ownershipLeaseId,
    holderAgentId: p.assigneeId,
    // The payload does not carry the Session Epoch; the Agent's current one is the one it accepted under.
    sessionEpoch: p.sessionEpoch,
    ownershipEpoch: p.ownershipEpoch,
    at: event.occurredAt,
    expiresAt: p.ownershipLeaseExpiresAt,
    startBy: p.startBy,
  })
  // §10.3: the winner's offer is accepted, every other pending one lost the race.
  const offers = settlePending(record.doc.offers, (o) => (o.agentId === p.assigneeId ? 'accepted' : 'lost_race'))
  const owner = {
    agentId: p.assigneeId,
    agentCardVersion: p.agentCardVersion,
    capabilityPins: p.capabilityPins,
    ownershipEpoch: p.ownershipEpoch,
    ownershipLeaseId: p.ownershipLeaseId,
    acceptedAt: event.occurredAt,
  }
  advance(record, event, { state: 'queued', offers, owner, ...present({ scheduleEstimate: p.scheduleEstimate }) })
}

const contractRevised: ReducerFor<'work.contract.revised'> = (state, event) => {
  const { group, record } = locate(state, event)
  record.dependencyIds = [...event.payload.dependencyIds]
  advance(record, event, { contract: event.payload.contract })
  settleReservations(group, record, state)
}

const started: ReducerFor<'work.started'> = (state, event) => {
  const { record } = locate(state, event)
  record.executionLease = event.payload.executionLease
  record.executionLeaseIds.add(event.payload.executionLease.leaseId)
  advance(record, event, { state: 'active' })
}

const progressed: ReducerFor<'work.progressed'> = (state, event) => {
  const { record } = locate(state, event)
  record.executionLease = event.payload.executionLease
  advance(record, event, present({ progress: event.payload.progress }))
}

/** Execution stops with a durable checkpoint; ownership stays until `until` (§11.3, §11.4). */
function pause(record: WorkItemRecord, event: EventOf<'work.checkpointed' | 'work.blocked'>, until: string, reason: string): void {
  retireLease(record, 'executionLease', 'released', event.occurredAt, reason)
  if (record.ownershipLease !== undefined) record.ownershipLease = renewLease(record.ownershipLease, event.occurredAt, until)
  record.lastCheckpoint = event.payload.checkpoint
}

const checkpointed: ReducerFor<'work.checkpointed'> = (state, event) => {
  const { record } = locate(state, event)
  pause(record, event, event.payload.resumeBy, 'checkpoint')
  const { progress } = event.payload
  advance(record, event, progress === undefined ? { state: 'queued' } : { state: 'queued', progress })
}

const blocked: ReducerFor<'work.blocked'> = (state, event) => {
  const { record } = locate(state, event)
  pause(record, event, event.payload.blockedLeaseExpiresAt, 'blocked')
  const progress = record.doc.progress
  advance(record, event, { state: 'blocked', ...(progress === undefined ? {} : { progress: { ...progress, blockers: [event.payload.reason] } }) })
}

const unblocked: ReducerFor<'work.unblocked'> = (state, event) => {
  const { record } = locate(state, event)
  const progress = record.doc.progress === undefined ? {} : { progress: { ...record.doc.progress, blockers: [] } }
  if (event.payload.nextState === 'queued') {
    advance(record, event, { state: 'queued', ...progress })
    return
  }
  // §10.2: ownership lapsed while blocked; the WorkItem is open to be offered again.
  retireLease(record, 'ownershipLease', 'expired', event.occurredAt, 'ownership lapsed while blocked')
  advance(record, event, { state: 'open', ...progress }, ['owner'])
}

const submitted: ReducerFor<'work.submitted'> = (state, event) => {
  const { record } = locate(state, event)
  const p = event.payload
  retireLease(record, 'executionLease', 'released', event.occurredAt, 'submitted')
  fileSubmission(record, { ownershipEpoch: p.ownershipEpoch, evidence: p.evidence })
  advance(record, event, {
    state: 'submitted',
    submission: { artifactHashes: p.artifactHashes, evidenceIds: p.evidence.map((e) => e.evidenceId), submittedAt: event.occurredAt },
  })
}

const resultAccepted: ReducerFor<'work.result.accepted'> = (state, event) => {
  const { group, record } = locate(state, event)
  const p = event.payload
  acceptEvidence(group, [...(submissionOf(record)?.evidence ?? []), ...p.evidence])
  // §14: an approved child Mission's Approval stands in for the submission of the parent WorkItem.
  const approval = p.childApproval
  const submission =
    record.doc.submission === undefined && approval !== undefined ? { submission: { artifactHashes: approval.artifactHashes, evidenceIds: [approval.approvalId], submittedAt: event.occurredAt } } : {}
  endWork(state, group, record, event, 'verified', submission)
}

const failed: ReducerFor<'work.failed'> = (state, event) => {
  const { group, record } = locate(state, event)
  endWork(state, group, record, event, 'failed')
  // §11.4: the failed round is booked on the retry ledger the next work.offer is checked against.
  noteFailure(state, group, record, event)
}

const cancelled: ReducerFor<'work.cancelled'> = (state, event) => {
  const { group, record } = locate(state, event)
  endWork(state, group, record, event, 'cancelled')
}

const executionApproved: ReducerFor<'approval.execution.granted'> = (state, event) => {
  const { record } = locate(state, event)
  // The Event advances the approval aggregate, not the WorkItem: the document stays as it is.
  record.executionApprovals.push({
    approvalId: event.payload.approvalId,
    ownershipEpoch: event.payload.ownershipEpoch,
    expiresAt: event.payload.expiresAt,
    grantedBy: event.actor as ActorRef,
    operations: event.payload.operations,
    resources: event.payload.resources,
    budget: event.payload.budget,
  })
}

const usageRecorded: ReducerFor<'ext.missionweaveprotocol.core.resource_usage_recorded'> = (state, event) => {
  const { group, record } = locate(state, event)
  // §12, §14: the delta is booked on every level up to the root Mission, in parent Groups too.
  recordUsage(group, record, event.payload.usageDelta, state)
  advance(record, event, {})
}

const executionRevoked: ReducerFor<'ext.missionweaveprotocol.core.work_execution_lease_revoked'> = (state, event) => {
  const { record } = locate(state, event)
  const revoked = record.executionLease
  retireLease(record, 'executionLease', 'revoked', event.occurredAt, event.payload.reason)
  // §11.3: the WorkItem is queued again under the same Ownership Epoch; the new runtime may start it
  // within the bound the revoked lease had.
  const ownership = record.ownershipLease
  if (ownership !== undefined) {
    const later = revoked !== undefined && parseInstant(revoked.expiresAt) > parseInstant(ownership.expiresAt)
    record.ownershipLease = renewLease(ownership, event.occurredAt, later ? revoked.expiresAt : ownership.expiresAt)
  }
  advance(record, event, { state: 'queued' })
}

/** The reducers of every WorkItem Event kind this module owns. */
export const workItemReducers = {
  'work.proposed': proposed,
  'work.authorized': authorized,
  'work.offer.created': offerCreated,
  'work.offer.accepted': offerAccepted,
  'work.contract.revised': contractRevised,
  'work.started': started,
  'work.progressed': progressed,
  'work.checkpointed': checkpointed,
  'work.blocked': blocked,
  'work.unblocked': unblocked,
  'work.submitted': submitted,
  'work.result.accepted': resultAccepted,
  'work.failed': failed,
  'work.cancelled': cancelled,
  'approval.execution.granted': executionApproved,
  'ext.missionweaveprotocol.core.resource_usage_recorded': usageRecorded,
  'ext.missionweaveprotocol.core.work_execution_lease_revoked': executionRevoked,
} as const
