/**
 * The Mission domain (§7, §14): creation of root, follow-up and child Missions with their Groups,
 * the Coordinator lease, submission and the MissionOwner's decision, and the reducers of every
 * Mission Event. Cancellation and termination, with their propagation to WorkItems, child Missions
 * and parent WorkItems, are decided in `mission-ending.ts`.
 *
 * Every state check asks the rows of `MISSION_TRANSITIONS` / `WORK_ITEM_TRANSITIONS` of
 * `@weft/spec/machines`, as the generator flattened them (`mission-machine.ts`); the rows are the
 * machines.
 * @module
 */
import type { Approval, Conversation, EventPayload, Group, Lease, Membership, Mission, MissionParent, WorkItem } from '@weft/spec'
import { TERMINAL_MISSION_STATES, TERMINAL_WORK_ITEM_STATES } from '@weft/spec/machines'
import { draft, reject, requireGroup, type AnyEventDraft, type CommandOf, type EventOf, type HandlerContext, type HandlerFor, type ReducerFor } from '../commit/handler.js'
import { aggregateKey, emptyGroupState, type ActorRef, type AgentRecord, type AuthorityState, type GroupState } from '../model.js'
import { isControlPlane, isMissionOwner, membershipOf, putMembership, requireRole, sameActor, seatMembership } from './memberships.js'
import { committedBudget, inheritanceOf, linkChildGroup, requireAllocation, settleParentOf } from './work-budget.js'
import { retireLease } from './leases.js'
import { parseInstant } from '@weft/codec/time'
import { missionAllows, requireMissionTransition } from './mission-machine.js'
import { targetOf } from './work-machine.js'
import { cancelMission, parentLink, terminateMission } from './mission-ending.js'

type MissionCommandKind =
  | 'mission.create'
  | 'mission.assign_coordinator'
  | 'mission.renew_coordinator'
  | 'mission.submit_for_approval'
  | 'mission.approve'
  | 'mission.request_changes'
  | 'mission.cancel'
  | 'mission.terminate'
  | 'mission.create_child'
  | 'mission.create_follow_up'

type MissionEventKind =
  | 'mission.created'
  | 'mission.coordinator.assigned'
  | 'mission.coordinator.renewed'
  | 'mission.submitted_for_approval'
  | 'mission.approved'
  | 'mission.changes_requested'
  | 'mission.cancelled'
  | 'mission.terminated'
  | 'mission.child.created'
  | 'mission.follow_up.created'

/** The Group whose Mission has `missionId`, if the Authority serves it. */
function groupOfMission(state: AuthorityState, missionId: string): GroupState | undefined {
  for (const group of state.groups.values()) if (group.missionId === missionId) return group
  return undefined
}

/** The current revision of the Group's Mission aggregate. */
function missionRevision(group: GroupState): number {
  return group.revisions.get(aggregateKey('mission', group.groupId)) ?? group.mission.revision
}

/**
 * The registry record of an Agent that can take a Coordinator lease now: registered, with an
 * active card and an open session (§6.3, §7.2); `INVALID_COMMAND` otherwise.
 */
function requireCoordinatorCandidate(ctx: HandlerContext, agentId: string): AgentRecord {
  const agent = ctx.state.org.agents.get(agentId)
  if (agent === undefined || agent.sessionEpoch < 1 || agent.card.status !== 'active') {
    reject('INVALID_COMMAND', 'the coordinator must be a registered agent with an active card and an open session')
  }
  return agent
}

/** A new Coordinator lease under `coordinatorEpoch`, bound to the Agent's current Session Epoch (§7.2). */
function coordinatorLease(ctx: HandlerContext, at: { groupId: string; missionId: string }, agent: AgentRecord, coordinatorEpoch: number, seconds: number): Lease {
  return {
    leaseId: ctx.newId(),
    leaseType: 'coordinator',
    missionId: at.missionId,
    groupId: at.groupId,
    holderAgentId: agent.agentId,
    sessionEpoch: agent.sessionEpoch,
    coordinatorEpoch,
    issuedAt: ctx.now,
    startsAt: ctx.now,
    expiresAt: ctx.after(seconds),
    state: 'active',
    renewalCount: 0,
  }
}

/** What a genesis (`mission.created` / `mission.follow_up.created`) is built from. */
interface GenesisSpec {
  readonly groupId: string | undefined
  readonly owner: ActorRef
  readonly payload: CommandOf<'mission.create'>['payload']
  readonly parent?: MissionParent
  readonly followUpToMissionId?: string
}

/**
 * The genesis of a new Group (§7.1): Mission, Group, Group-level planning Conversation,
 * Coordinator lease under Coordinator Epoch 1, and the MissionOwner and Coordinator Memberships.
 */
function genesis(ctx: HandlerContext, spec: GenesisSpec): EventPayload<'mission.created'> {
  const { payload: p, owner } = spec
  const groupId = spec.groupId ?? reject('INVALID_COMMAND', 'the new group id is missing')
  // §7.1: Mission and Group IDs are stable, so neither may be reused.
  if (ctx.state.groups.has(groupId)) reject('INVALID_COMMAND', `group ${groupId} already exists`)
  if (groupOfMission(ctx.state, p.missionId) !== undefined) reject('INVALID_COMMAND', `mission ${p.missionId} already exists`)
  // §7.1: a root Mission always requires final human approval.
  if (spec.parent === undefined && !p.approvalPolicy.finalHumanApproval) reject('INVALID_COMMAND', 'a root mission requires final human approval')
  if (parseInstant(p.deadline) <= ctx.nowMs) reject('INVALID_COMMAND', 'the mission deadline has passed')
  // §7.2: the Coordinator may not be the sole reviewer of its own output, so it is never the MissionOwner.
  if (owner.type === 'agent' && owner.id === p.coordinatorAgentId) reject('INVALID_COMMAND', 'the coordinator cannot be the mission owner')
  const at = { groupId, missionId: p.missionId }
  const agent = requireCoordinatorCandidate(ctx, p.coordinatorAgentId)
  const lease = coordinatorLease(ctx, at, agent, 1, p.coordinatorLeaseSeconds)
  const conversationId = ctx.newId()
  const mission: Mission = {
    missionId: p.missionId,
    groupId,
    revision: 1,
    objective: p.objective,
    definitionOfDone: p.definitionOfDone,
    missionOwner: owner,
    coordinator: { agentId: p.coordinatorAgentId, agentCardVersion: agent.card.cardVersion, coordinatorEpoch: 1, leaseId: lease.leaseId },
    state: requireMissionTransition(
      'none',
      spec.parent !== undefined ? 'mission.create_child' : spec.followUpToMissionId !== undefined ? 'mission.create_follow_up' : 'mission.create',
    ) as Mission['state'],
    budget: p.budget,
    deadline: p.deadline,
    approvalPolicy: p.approvalPolicy,
    ...(spec.parent === undefined ? {} : { parent: spec.parent }),
    ...(spec.followUpToMissionId === undefined ? {} : { followUpToMissionId: spec.followUpToMissionId }),
    ...(p.pinnedProfiles === undefined ? {} : { pinnedProfiles: p.pinnedProfiles }),
    createdAt: ctx.now,
  }
  const group: Group = { groupId, missionId: p.missionId, state: 'active', mainConversationId: conversationId, createdAt: ctx.now }
  const conversation: Conversation = {
    conversationId,
    missionId: p.missionId,
    groupId,
    type: 'group',
    title: p.title,
    access: { mode: 'group' },
    createdBy: owner,
    createdAt: ctx.now,
    state: 'active',
    revision: 1,
  }
  const memberships: Membership[] = [seatMembership(ctx, at, owner, 'mission_owner'), seatMembership(ctx, at, { type: 'agent', id: p.coordinatorAgentId }, 'coordinator')]
  return { mission, group, conversation, coordinatorLease: lease, memberships }
}

function create(command: CommandOf<'mission.create'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  return [draft('mission.created', genesis(ctx, { groupId: command.groupId, owner: command.actor as ActorRef, payload: command.payload }))]
}

function createFollowUp(command: CommandOf<'mission.create_follow_up'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const { followUpToMissionId, reason, approvalRevocation, ...rest } = command.payload
  const actor = command.actor as ActorRef
  const original = groupOfMission(ctx.state, followUpToMissionId) ?? reject('INVALID_COMMAND', `mission ${followUpToMissionId} is unknown`)
  // §7.1: a follow-up links to an approved Mission, which stays untouched, and has the same human MissionOwner.
  if (original.mission.state !== 'approved') reject('INVALID_STATE_TRANSITION', `mission ${followUpToMissionId} is ${original.mission.state}, not approved`)
  requireRole([actor.type === 'human' && isMissionOwner(original, actor)], 'open a follow-up of a mission it does not own')
  if (approvalRevocation !== undefined) {
    ctx.verifyDocument('approval', approvalRevocation)
    const revoked = approvalRevocation.revokesApprovalId === undefined ? undefined : original.approvals.get(approvalRevocation.revokesApprovalId)
    const valid =
      approvalRevocation.decision === 'revoked' &&
      revoked?.decision === 'approved' &&
      approvalRevocation.missionId === original.missionId &&
      approvalRevocation.groupId === original.groupId &&
      sameActor(approvalRevocation.approver as ActorRef, actor)
    if (!valid) reject('INVALID_COMMAND', 'the approval revocation must be the owner’s revocation of an approval of the linked mission')
  }
  const created = genesis(ctx, { groupId: command.groupId, owner: actor, payload: rest, followUpToMissionId })
  return [draft('mission.follow_up.created', { ...created, reason, ...(approvalRevocation === undefined ? {} : { approvalRevocation }) })]
}

function assignCoordinator(command: CommandOf<'mission.assign_coordinator'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  const actor = command.actor as ActorRef
  const p = command.payload
  // §7.2: the MissionOwner (human for a root, the parent Coordinator for a child) or the control plane appoints.
  requireRole([isMissionOwner(group, actor), isControlPlane(ctx, actor)], 'appoint the coordinator')
  requireMissionTransition(group.mission.state, 'mission.assign_coordinator')
  if (sameActor(group.mission.missionOwner as ActorRef, { type: 'agent', id: p.coordinatorAgentId })) reject('INVALID_COMMAND', 'the coordinator cannot be the mission owner')
  // §7.2, §13.3: the replacement receives a signed Context Package of this Mission; another Mission's content never enters it.
  ctx.verifyDocument('context-package', p.contextPackage)
  if (p.contextPackage.missionId !== group.missionId || p.contextPackage.groupId !== group.groupId) {
    reject('AUTH_FORBIDDEN', 'the context package belongs to another mission')
  }
  const previous = group.mission.coordinator
  const coordinatorEpoch = previous.coordinatorEpoch + 1
  const agent = requireCoordinatorCandidate(ctx, p.coordinatorAgentId)
  const lease = coordinatorLease(ctx, group, agent, coordinatorEpoch, p.leaseSeconds)
  const drafts: AnyEventDraft[] = [
    draft('mission.coordinator.assigned', {
      coordinator: { agentId: p.coordinatorAgentId, agentCardVersion: agent.card.cardVersion, coordinatorEpoch, leaseId: lease.leaseId },
      coordinatorLease: lease,
      contextPackage: p.contextPackage,
      replacedCoordinatorEpoch: previous.coordinatorEpoch,
      ...(p.reason === undefined ? {} : { reason: p.reason }),
    }),
  ]
  if (previous.agentId === p.coordinatorAgentId) return drafts
  // §8: the incoming Coordinator's seat has complete visibility; the outgoing one's Membership ends.
  const incoming: ActorRef = { type: 'agent', id: p.coordinatorAgentId }
  const held = membershipOf(group, incoming)
  const reusable = held !== undefined && held.state !== 'ended' ? held : undefined
  drafts.push(draft('membership.changed', { membership: { ...seatMembership(ctx, group, incoming, 'coordinator', reusable), contextPackageId: p.contextPackage.contextPackageId } }))
  const outgoing = membershipOf(group, { type: 'agent', id: previous.agentId })
  if (outgoing !== undefined && outgoing.state !== 'ended') {
    drafts.push(
      draft('membership.ended', {
        membershipId: outgoing.membershipId,
        member: outgoing.member,
        membershipEpoch: outgoing.membershipEpoch,
        reason: `replaced as coordinator under coordinator epoch ${coordinatorEpoch}`,
      }),
    )
  }
  return drafts
}

function renewCoordinator(command: CommandOf<'mission.renew_coordinator'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  requireMissionTransition(group.mission.state, 'mission.renew_coordinator')
  const lease = group.coordinatorLease
  // §7.2: an expired lease is not renewed; the MissionOwner or control plane appoints a Coordinator instead.
  if (lease.state !== 'active' || parseInstant(lease.expiresAt) <= ctx.nowMs) reject('WORK_LEASE_EXPIRED', 'the coordinator lease has expired')
  return [
    draft('mission.coordinator.renewed', {
      coordinatorEpoch: group.mission.coordinator.coordinatorEpoch,
      leaseId: lease.leaseId,
      leaseExpiresAt: ctx.after(command.payload.leaseSeconds),
      renewalCount: lease.renewalCount + 1,
    }),
  ]
}

function submitForApproval(command: CommandOf<'mission.submit_for_approval'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  requireMissionTransition(group.mission.state, 'mission.submit_for_approval')
  const current = missionRevision(group)
  const submitted = command.payload.missionRevision ?? command.expectedRevision ?? current
  if (submitted !== current) reject('REVISION_CONFLICT', `mission is at revision ${current}`, { expectedRevision: submitted, currentRevision: current })
  // §7.3: every WorkItem result is reviewed first: each must be verified or cancelled.
  const open = [...group.workItems.values()].filter((r) => !(TERMINAL_WORK_ITEM_STATES as readonly string[]).includes(r.doc.state)).map((r) => ({ workItemId: r.doc.workItemId, state: r.doc.state }))
  if (open.length > 0) reject('INVALID_STATE_TRANSITION', 'every work item must be verified or cancelled before submission', { workItems: open })
  const published = new Set([...group.artifacts.values()].map((a) => a.manifest.contentHash))
  const unknown = command.payload.artifactHashes.filter((h) => !published.has(h))
  if (unknown.length > 0) reject('INVALID_COMMAND', 'the artifact set names hashes not published in this group', { artifactHashes: unknown })
  return [draft('mission.submitted_for_approval', { missionRevision: submitted, artifactHashes: command.payload.artifactHashes })]
}

/**
 * Checks the MissionOwner's signed decision on the pending submission (§7.3, §14): signer and
 * approver are the MissionOwner, and it is bound to this Mission, the submitted revision and
 * exactly the submitted Artifact set.
 */
function requireDecision(ctx: HandlerContext, group: GroupState, actor: ActorRef, approval: Approval, decision: 'approved' | 'changes_requested'): void {
  requireRole([isMissionOwner(group, actor)], 'decide on the mission')
  ctx.verifyDocument('approval', approval)
  if (!sameActor(approval.approver as ActorRef, actor)) reject('AUTH_FORBIDDEN', 'the approver must be the mission owner')
  const submission = group.submission ?? reject('INVALID_STATE_TRANSITION', 'no submission is pending')
  const kind = group.mission.parent === undefined ? 'mission_final' : 'child_mission'
  const sameSet = approval.artifactHashes.length === submission.artifactHashes.length && approval.artifactHashes.every((h) => submission.artifactHashes.includes(h))
  const problems = [
    approval.decision === decision ? undefined : `decision must be ${decision}`,
    approval.kind === kind ? undefined : `kind must be ${kind}`,
    approval.missionId === group.missionId && approval.groupId === group.groupId ? undefined : 'bound to another mission',
    approval.missionRevision === submission.missionRevision ? undefined : `must name the submitted revision ${submission.missionRevision}`,
    sameSet ? undefined : 'must name exactly the submitted artifact set',
    group.approvals.has(approval.approvalId) ? 'approval id already used' : undefined,
  ].filter((x) => x !== undefined)
  if (problems.length > 0) reject('INVALID_COMMAND', 'the approval does not match the submission', { problems })
}

function approve(command: CommandOf<'mission.approve'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  requireMissionTransition(group.mission.state, 'mission.approve')
  const { approval } = command.payload
  requireDecision(ctx, group, command.actor as ActorRef, approval, 'approved')
  const drafts: AnyEventDraft[] = [draft('mission.approved', { approval })]
  // §14: the approved child result becomes the parent WorkItem's Evidence (`system.child_mission_approved`).
  const parent = parentLink(ctx.state, group)
  if (parent !== undefined && targetOf(parent.record.doc.state, 'system.child_mission_approved') === 'verified') {
    drafts.push(
      draft(
        'work.result.accepted',
        { workItemId: parent.record.doc.workItemId, evidence: [], childMissionId: group.missionId, childApproval: approval },
        { groupId: parent.group.groupId, workItemId: parent.record.doc.workItemId, actor: ctx.authority },
      ),
    )
  }
  return drafts
}

function requestChanges(command: CommandOf<'mission.request_changes'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  requireMissionTransition(group.mission.state, 'mission.request_changes')
  requireDecision(ctx, group, command.actor as ActorRef, command.payload.approval, 'changes_requested')
  return [draft('mission.changes_requested', { approval: command.payload.approval })]
}

/** The Missions above `group`, nearest first (§14). */
function ancestors(state: AuthorityState, group: GroupState): GroupState[] {
  const chain: GroupState[] = []
  for (let link = state.childLinks.get(group.groupId); link !== undefined; link = state.childLinks.get(link.parentGroupId)) {
    const parent = state.groups.get(link.parentGroupId)
    // A corrupt link that loops back would otherwise spin forever.
    if (parent === undefined || chain.includes(parent)) break
    chain.push(parent)
  }
  return chain
}

function createChild(command: CommandOf<'mission.create_child'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  const p = command.payload
  const record = group.workItems.get(p.parentWorkItemId) ?? reject('INVALID_COMMAND', 'the parent work item does not exist')
  if (targetOf(record.doc.state, 'mission.create_child') === undefined) reject('INVALID_STATE_TRANSITION', `work item is ${record.doc.state}; it cannot be promoted`, { state: record.doc.state })
  // §10.2 lists `open` and `offered` as promotable, but work-item.schema.json requires an owner and a
  // selection basis in `blocked`; an item never accepted cannot be represented there, so it must be
  // accepted (or replaced) before promotion. Listed as a divergence in the package README.
  if (record.doc.owner === undefined) {
    reject('INVALID_STATE_TRANSITION', `work item is ${record.doc.state} with no owner; a blocked work item needs one (work-item.schema.json), so accept it before promoting it`, {
      state: record.doc.state,
    })
  }
  const running = record.childGroupId === undefined ? undefined : ctx.state.groups.get(record.childGroupId)
  if (running !== undefined && missionAllows(running.mission.state, 'mission.cancel')) {
    reject('INVALID_STATE_TRANSITION', `work item is already promoted to running mission ${running.missionId}`)
  }
  // §20: Mission ancestry is acyclic.
  if ([group, ...ancestors(ctx.state, group)].some((g) => g.missionId === p.childMissionId || g.groupId === p.childGroupId)) {
    reject('INVALID_COMMAND', 'the child would create cyclic mission ancestry')
  }
  // §4 invariant 11, §14: the child's budget and deadline are subsets of the parent WorkItem's;
  // §12: each listed limit comes out of what the parent WorkItem has not consumed or allocated yet,
  // or, where the parent inherits the dimension, out of what its ancestry has left.
  requireAllocation(record.doc.contract.budget, `parent WorkItem ${p.parentWorkItemId}`, [committedBudget(group, record, ctx.state)], p.budget, inheritanceOf(group, record, ctx.state))
  if (parseInstant(p.deadline) > parseInstant(record.doc.contract.deadline)) reject('INVALID_COMMAND', 'the child deadline is after the parent work item deadline')
  const depth = (group.mission.parent?.depth ?? 0) + 1
  // §14, §20: beyond the configured depth explicit approval is needed; without it the guardrail holds.
  if (depth > ctx.policy.maxMissionDepth) reject('RATE_LIMITED', `mission depth ${depth} exceeds the organization limit of ${ctx.policy.maxMissionDepth}`)
  const owner = command.actor as ActorRef
  const { parentWorkItemId, childMissionId, childGroupId, childFailurePolicy, ...rest } = p
  const created = genesis(ctx, {
    groupId: childGroupId,
    owner,
    payload: { ...rest, missionId: childMissionId },
    parent: { missionId: group.missionId, workItemId: parentWorkItemId, depth },
  })
  const fenced = record.executionLease ?? record.ownershipLease
  return [
    draft(
      'mission.child.created',
      {
        parentWorkItemId,
        childMissionId,
        childGroupId,
        depth,
        coordinatorAgentId: p.coordinatorAgentId,
        budget: p.budget,
        deadline: p.deadline,
        childFailurePolicy,
        ...(fenced?.ownershipEpoch === undefined ? {} : { fencedOwnershipEpoch: fenced.ownershipEpoch }),
      },
      { workItemId: parentWorkItemId },
    ),
    draft('mission.created', created, { groupId: childGroupId }),
  ]
}

/** Command handlers of the Mission domain (§7, §14). */
export const missionHandlers = {
  'mission.create': create,
  'mission.assign_coordinator': assignCoordinator,
  'mission.renew_coordinator': renewCoordinator,
  'mission.submit_for_approval': submitForApproval,
  'mission.approve': approve,
  'mission.request_changes': requestChanges,
  'mission.cancel': cancelMission,
  'mission.terminate': terminateMission,
  'mission.create_child': createChild,
  'mission.create_follow_up': createFollowUp,
} satisfies { readonly [K in MissionCommandKind]: HandlerFor<K> }

/** Builds the whole {@link GroupState} a genesis Event describes. */
function openGroup(state: AuthorityState, event: EventOf<'mission.created' | 'mission.follow_up.created'>, payload: EventPayload<'mission.created'>): GroupState {
  const groupId = event.groupId as string
  const group = emptyGroupState({
    groupId,
    missionId: payload.mission.missionId,
    mission: { ...payload.mission, revision: event.aggregateRevision as number },
    group: payload.group,
    coordinatorLease: payload.coordinatorLease,
    conversation: payload.conversation,
  })
  for (const membership of payload.memberships) {
    putMembership(group, membership)
    // The first Memberships are born with the Group; later changes continue from revision 1.
    group.revisions.set(aggregateKey('membership', membership.membershipId), 1)
  }
  state.groups.set(groupId, group)
  return group
}

/** Applies `changes` to the Group's Mission and stamps the Event's aggregate revision on it. */
function advanceMission(state: AuthorityState, event: EventOf<MissionEventKind>, changes: Partial<Mission> = {}): GroupState | undefined {
  const group = state.groups.get(event.groupId as string)
  if (group === undefined) return group
  group.mission = { ...group.mission, ...changes, revision: event.aggregateRevision as number }
  // §12, §14: an ended child Mission holds only what it consumed of its parent WorkItem's budget.
  if ((TERMINAL_MISSION_STATES as readonly string[]).includes(group.mission.state)) settleParentOf(state, group)
  return group
}

/** Closes the Coordinator lease when the Mission ends (§12: cancellation and termination revoke leases). */
function closeCoordinatorLease(group: GroupState, state: 'revoked' | 'released', at: string, reason: string): void {
  if (group.coordinatorLease.state !== 'active') return
  group.coordinatorLease = { ...group.coordinatorLease, state, closedAt: at, closureReason: reason }
}

/** Why a promoted WorkItem's leases closed; the child Mission is the Event's `childMissionId`. */
const PROMOTED = 'promoted to a child Mission'

/** Event reducers of the Mission domain. */
export const missionReducers = {
  'mission.created': (state, event) => {
    openGroup(state, event, event.payload)
  },
  'mission.follow_up.created': (state, event) => {
    const { reason: _reason, approvalRevocation, ...genesisPayload } = event.payload
    const group = openGroup(state, event, genesisPayload)
    // §7.1: the revocation is a new decision; the original Approval stays in the linked Group.
    if (approvalRevocation !== undefined) group.approvals.set(approvalRevocation.approvalId, approvalRevocation)
  },
  'mission.coordinator.assigned': (state, event) => {
    const group = advanceMission(state, event, { coordinator: event.payload.coordinator })
    if (group === undefined) return
    group.coordinatorLease = event.payload.coordinatorLease
    group.contextPackages.set(event.payload.contextPackage.contextPackageId, event.payload.contextPackage)
  },
  'mission.coordinator.renewed': (state, event) => {
    const group = advanceMission(state, event)
    if (group === undefined) return
    const p = event.payload
    group.coordinatorLease = { ...group.coordinatorLease, expiresAt: p.leaseExpiresAt, renewalCount: p.renewalCount, lastRenewedAt: event.occurredAt }
  },
  'mission.submitted_for_approval': (state, event) => {
    const group = advanceMission(state, event, { state: 'awaiting_approval' })
    if (group !== undefined) group.submission = { missionRevision: event.payload.missionRevision, artifactHashes: event.payload.artifactHashes, eventId: event.eventId }
  },
  'mission.approved': (state, event) => {
    const group = advanceMission(state, event, { state: 'approved' })
    if (group === undefined) return
    group.approvals.set(event.payload.approval.approvalId, event.payload.approval)
    closeCoordinatorLease(group, 'released', event.occurredAt, 'mission approved')
  },
  'mission.changes_requested': (state, event) => {
    const group = advanceMission(state, event, { state: 'active' })
    if (group === undefined) return
    group.approvals.set(event.payload.approval.approvalId, event.payload.approval)
    // §7.3: the submission stays in the log; no decision is pending any more.
    delete group.submission
  },
  'mission.cancelled': (state, event) => {
    const group = advanceMission(state, event, { state: 'cancelled' })
    if (group !== undefined) closeCoordinatorLease(group, 'revoked', event.occurredAt, 'mission cancelled')
  },
  'mission.terminated': (state, event) => {
    const group = advanceMission(state, event, { state: 'failed' })
    if (group !== undefined) closeCoordinatorLease(group, 'revoked', event.occurredAt, 'mission failed')
  },
  'mission.child.created': (state, event) => {
    const group = state.groups.get(event.groupId as string)
    const p = event.payload
    const record = group?.workItems.get(p.parentWorkItemId)
    if (group === undefined || record === undefined) return
    // §14, §10.2: the item waits for its child; pending offers are withdrawn and ownership is fenced.
    const offers = record.doc.offers?.map((o) => (o.status === 'pending' ? { ...o, status: 'withdrawn' as const } : o))
    const doc: WorkItem = { ...record.doc, state: 'blocked', revision: event.aggregateRevision as number, updatedAt: event.occurredAt, ...(offers === undefined ? {} : { offers }) }
    record.doc = doc
    // §11.3: the fenced owner's leases end here, revoked as on reassignment, so the log tells their end.
    retireLease(record, 'executionLease', 'revoked', event.occurredAt, PROMOTED)
    retireLease(record, 'ownershipLease', 'revoked', event.occurredAt, PROMOTED)
    delete record.offerExpiresAt
    record.childMissionId = p.childMissionId
    record.childGroupId = p.childGroupId
    record.childFailurePolicy = p.childFailurePolicy
    linkChildGroup(state, p.childGroupId, { parentGroupId: group.groupId, parentWorkItemId: p.parentWorkItemId })
  },
} satisfies { readonly [K in MissionEventKind]: ReducerFor<K> }
