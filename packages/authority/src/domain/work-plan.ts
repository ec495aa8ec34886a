/**
 * Planning WorkItems (§9.1, §10.1–§10.4): proposals, authorization, offers, the first-accept-wins
 * ownership race, and dependency insertion. Handlers only; the reducers are in `work-reducers.ts`.
 * @module
 */
import type { Membership, WorkContract, WorkItem, WorkOffer } from '@weft/spec'
import { draft, reject, requireGroup, type AnyEventDraft, type EventDraft, type HandlerContext, type HandlerFor } from '../commit/handler.js'
import { actorKey, type ActorRef, type AuthorityState, type GroupState, type WorkItemRecord } from '../model.js'
import { requireAcyclicDependencies } from './dag.js'
import { ownerLive } from './leases.js'
import { activeWorkItemsOf, queuedWorkItems, requireWithinCount, requireWithinRate } from './runaway.js'
import { cardCapabilityFor, reconcileDependencies, requireCompleteContract, requireContractFits } from './work-contract.js'
import { requireRetryAllowed } from './retry.js'
import { hasGuard, machineStateOf, nextState } from './work-machine.js'
import { childMissionRunning, isMissionOwner, nextWorkItemRevision, present, requireCoordinatorOr, requireMissionActive, requireWorkAuthor, requireWorkItem, workDraft } from './work-roles.js'
import { parseInstant } from '@weft/codec/time'

/** Scopes of a Worker Membership created on acceptance: its WorkItems, not the whole Group (§8). */
export const WORKER_SCOPES: readonly string[] = ['work_item:read', 'work_item:write']

/** `work.propose` (§10.2): any member proposes work; no WorkItem exists until it is authorized. */
export const proposeWork: HandlerFor<'work.propose'> = (command, ctx) => {
  const group = requireGroup(ctx)
  const p = command.payload
  nextState('none', command.kind)
  if (group.proposals.has(p.proposalId) || group.workItems.has(p.proposalId)) reject('INVALID_COMMAND', `${p.proposalId} is already in use`, { proposalId: p.proposalId })
  // §20: an Organization proposal rate, unless a one-shot override names this very proposal.
  requireWithinRate(command, ctx, group, 'proposal_rate', ctx.policy.maxProposalsPerMinute)
  requireCompleteContract(p.contract)
  if (p.parentWorkItemId !== undefined) requireWorkItem(group, p.parentWorkItemId)
  const dependencyIds = reconcileDependencies(p.contract, p.dependencyIds)
  requireAcyclicDependencies(group.workItems, p.proposalId, dependencyIds)
  return [
    draft('work.proposed', {
      proposalId: p.proposalId,
      contract: { ...p.contract, dependencyWorkItemIds: dependencyIds },
      dependencyIds,
      ...present({ parentWorkItemId: p.parentWorkItemId }),
    }),
  ]
}

/**
 * `work.authorize` (§10.2, §9.1): creates the WorkItem in `open` with its own Conversation (§9),
 * from a complete contract that fits its Mission or parent WorkItem and keeps the dependency graph
 * acyclic.
 */
export const authorizeWork: HandlerFor<'work.authorize'> = (command, ctx) => {
  const group = requireGroup(ctx)
  const p = command.payload
  const actor = command.actor as ActorRef
  requireMissionActive(group)
  const state = nextState(machineStateOf(group.workItems.get(p.workItemId)), command.kind)
  const dependencyIds = reconcileDependencies(p.contract, p.dependencyIds)
  const contract: WorkContract = { ...p.contract, dependencyWorkItemIds: dependencyIds }
  const authoring = requireWorkAuthor(ctx, group, actor, p, { use: 'authorize', workItemId: p.workItemId, parentWorkItemId: p.parentWorkItemId, contract })
  const proposal = p.proposalId === undefined ? undefined : group.proposals.get(p.proposalId)
  if (p.proposalId !== undefined && (proposal === undefined || proposal.authorizedAs !== undefined)) {
    reject('INVALID_COMMAND', `no open Work Proposal ${p.proposalId}`, { proposalId: p.proposalId })
  }
  requireCompleteContract(contract)
  const parent = p.parentWorkItemId === undefined ? undefined : requireWorkItem(group, p.parentWorkItemId)
  requireAcyclicDependencies(group.workItems, p.workItemId, dependencyIds)
  requireContractFits(group, contract, parent, p.workItemId, ctx.state)
  // §20: the Group's backlog of work waiting to run is bounded by policy.
  requireWithinCount(command, ctx, group, 'queued_work_items', () => queuedWorkItems(group), ctx.policy.maxQueuedWorkItems)
  const workItem: WorkItem = {
    workItemId: p.workItemId,
    missionId: group.missionId,
    groupId: group.groupId,
    // §9: every WorkItem owns a dedicated Conversation; the reducer registers it.
    conversationId: ctx.newId(),
    revision: nextWorkItemRevision(group, p.workItemId),
    state: state as WorkItem['state'],
    exclusive: p.exclusive ?? true,
    contract,
    createdBy: proposal?.proposedBy ?? actor,
    authorizedBy: actor,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  }
  return [
    draft(
      'work.authorized',
      { workItem, dependencyIds, ...present({ proposalId: p.proposalId, parentWorkItemId: p.parentWorkItemId }), ...authoring },
      { workItemId: p.workItemId, conversationId: workItem.conversationId },
    ),
  ]
}

/** Checks that every candidate is a registered Agent whose active card holds every required capability (§10.3). */
function offerRecords(ctx: HandlerContext, contract: WorkContract, candidateAgentIds: readonly string[], expiresAt: string): WorkOffer[] {
  return candidateAgentIds.map((agentId) => {
    const agent = ctx.state.org.agents.get(agentId)
    if (agent === undefined || agent.card.status !== 'active') reject('INVALID_COMMAND', `candidate ${agentId} is not a registered active Agent`, { agentId })
    const lacking = contract.requiredCapabilities.filter((need) => cardCapabilityFor(agent.card, need) === undefined)
    if (lacking.length > 0) reject('INVALID_COMMAND', `candidate ${agentId} lacks a required capability`, { agentId, lacking })
    // §6.1: the offer pins the card version the candidate was chosen under.
    return { offerId: ctx.newId(), agentId, agentCardVersion: agent.card.cardVersion, expiresAt, status: 'pending' as const }
  })
}

/**
 * `work.offer` (§10.2, §10.3): a new expiring offer to a bounded candidate set, from `open`,
 * `offered` or `failed`, or from an owned state whose owner is no longer live (that owner is fenced
 * first). A corrected contract (§10.1) is appended as `work.contract.revised` before the offer.
 */
export const offerWork: HandlerFor<'work.offer'> = (command, ctx) => {
  const group = requireGroup(ctx)
  const p = command.payload
  requireMissionActive(group)
  const record = requireWorkItem(group, p.workItemId)
  const from = record.doc.state
  nextState(from, command.kind, { noLiveOwner: !ownerLive(record, ctx.nowMs, ctx.state.org.agents) })
  if (childMissionRunning(ctx.state, record)) reject('INVALID_STATE_TRANSITION', `WorkItem ${p.workItemId} waits for its child Mission`)
  const previous = record.doc.contract
  const contract: WorkContract = p.contract === undefined ? previous : { ...p.contract, contractVersion: previous.contractVersion + 1 }
  const authoring = requireWorkAuthor(ctx, group, command.actor as ActorRef, p, { use: 'offer', workItemId: p.workItemId, contract })
  const drafts: AnyEventDraft[] = []
  if (p.contract !== undefined) drafts.push(contractCorrection(group, record, contract, ctx.state))
  // §12: a failed item kept only what it consumed; offered again it reserves its whole budget, which must still fit its parent.
  else if (record.doc.state === 'failed')
    requireContractFits(group, contract, record.parentWorkItemId === undefined ? undefined : group.workItems.get(record.parentWorkItemId), p.workItemId, ctx.state)
  // §11.4: a retry after a classified failure must fit the attempts, deadline, cost and back-off of its contract.
  if (from === 'failed') requireRetryAllowed(ctx, group, record, contract, p.contract !== undefined)
  const missing = contract.requiredCapabilities.filter((need) => !p.selectionBasis.requiredCapabilities.some((c) => c.id === need.id))
  if (missing.length > 0) reject('INVALID_COMMAND', 'the selection basis must cover every required capability', { missing })
  const offerExpiresAt = ctx.after(p.offerExpiresInSeconds)
  const owner = record.doc.owner
  // §10.2: an expired owner is fenced before its WorkItem is offered again.
  const fenced = owner !== undefined && hasGuard(from, command.kind, 'noLiveOwner') ? { fencedOwnershipEpoch: owner.ownershipEpoch } : {}
  const offers = offerRecords(ctx, contract, p.candidateAgentIds, offerExpiresAt)
  drafts.push(workDraft('work.offer.created', { workItemId: p.workItemId, candidateAgentIds: p.candidateAgentIds, offers, offerExpiresAt, selectionBasis: p.selectionBasis, ...authoring, ...fenced }))
  return drafts
}

/** The `work.contract.revised` of an offer carrying a corrected contract (§10.1), after the same checks as authorization. */
function contractCorrection(group: GroupState, record: WorkItemRecord, contract: WorkContract, state: AuthorityState): EventDraft<'work.contract.revised'> {
  const workItemId = record.doc.workItemId
  const dependencyIds = [...new Set(contract.dependencyWorkItemIds)]
  requireCompleteContract(contract)
  requireAcyclicDependencies(group.workItems, workItemId, dependencyIds)
  requireContractFits(group, contract, record.parentWorkItemId === undefined ? undefined : group.workItems.get(record.parentWorkItemId), workItemId, state)
  return workDraft('work.contract.revised', {
    workItemId,
    contract: { ...contract, dependencyWorkItemIds: dependencyIds },
    previousContractVersion: record.doc.contract.contractVersion,
    revisionReason: 'offer_correction',
    dependencyIds,
    // §10.1: a materially revised contract needs renewed Worker acceptance.
    requiresReacceptance: true,
  })
}

/**
 * §8: accepting an offer activates the Worker's Membership just in time: a provisional Membership
 * becomes active under the next epoch; without a usable one the Worker gets a new active `worker`
 * Membership that sees history from now on. An active Membership needs no change.
 */
function membershipActivation(ctx: HandlerContext, group: GroupState, actor: ActorRef): EventDraft<'membership.changed'> | undefined {
  const membershipId = group.membershipByMember.get(actorKey(actor))
  const current = membershipId === undefined ? undefined : group.memberships.get(membershipId)
  if (current?.state === 'active') return undefined
  if (current?.state === 'provisional') {
    const { provisionalExpiresAt: _expiry, ...kept } = current
    return draft('membership.changed', { membership: { ...kept, state: 'active', membershipEpoch: current.membershipEpoch + 1, activatedAt: ctx.now } })
  }
  const membership: Membership = {
    membershipId: ctx.newId(),
    missionId: group.missionId,
    groupId: group.groupId,
    member: actor,
    role: 'worker',
    state: 'active',
    membershipEpoch: 1,
    scopes: [...WORKER_SCOPES],
    visibilityStartSequence: group.head,
    grantedAt: ctx.now,
    activatedAt: ctx.now,
  }
  return draft('membership.changed', { membership })
}

/**
 * `work.accept_offer` (§10.3): the first valid acceptance wins a new Ownership Epoch with an
 * ownership lease and start-by deadline; every other pending candidate is withdrawn in the same
 * transaction, and the Worker's Membership is activated (§8).
 */
export const acceptOffer: HandlerFor<'work.accept_offer'> = (command, ctx) => {
  const group = requireGroup(ctx)
  const p = command.payload
  const actor = command.actor as ActorRef
  const record = requireWorkItem(group, p.workItemId)
  const offers = record.doc.offers ?? []
  const offer = offers.findLast((o) => o.agentId === actor.id)
  if (offer === undefined || actor.type !== 'agent') reject('AUTH_FORBIDDEN', `${actor.id} holds no offer of WorkItem ${p.workItemId}`)
  if (offer.status === 'lost_race') reject('WORK_ALREADY_OWNED', `another candidate won WorkItem ${p.workItemId}`)
  if (offer.status === 'accepted') reject('INVALID_STATE_TRANSITION', `the offer of WorkItem ${p.workItemId} was already accepted`)
  if (offer.status !== 'pending') reject('WORK_OFFER_EXPIRED', `the offer of WorkItem ${p.workItemId} is ${offer.status}`)
  if (record.doc.owner !== undefined) reject('WORK_ALREADY_OWNED', `WorkItem ${p.workItemId} already has an owner`)
  requireMissionActive(group)
  const offerValid = ctx.nowMs < parseInstant(offer.expiresAt)
  if (record.doc.state === 'offered' && !offerValid) reject('WORK_OFFER_EXPIRED', `the offer of WorkItem ${p.workItemId} expired at ${offer.expiresAt}`)
  nextState(record.doc.state, command.kind, { offerValid })
  // §20: how much unfinished work one Worker may hold at once is bounded by policy.
  requireWithinCount(command, ctx, group, 'active_work_items', () => activeWorkItemsOf(group, actor.id), ctx.policy.maxActiveWorkItems)
  const agent = ctx.state.org.agents.get(actor.id)
  const card = agent?.cardVersions.find((c) => c.cardVersion === offer.agentCardVersion) ?? agent?.card
  const capabilityPins = record.doc.contract.requiredCapabilities.map((need) => (card === undefined ? undefined : cardCapabilityFor(card, need)))
  if (card === undefined || capabilityPins.some((c) => c === undefined)) reject('INVALID_COMMAND', `the pinned Agent Card of ${actor.id} no longer meets the contract`)
  const expiresAt = ctx.after(p.ownershipLeaseSeconds)
  const withdrawnAgentIds = [...new Set(offers.filter((o) => o.status === 'pending' && o.agentId !== actor.id).map((o) => o.agentId))]
  const drafts: AnyEventDraft[] = [
    workDraft('work.offer.accepted', {
      workItemId: p.workItemId,
      assigneeId: actor.id,
      // §11.3: the pipeline already checked the envelope's Session Epoch is the Agent's current one.
      sessionEpoch: agent?.sessionEpoch ?? command.sessionEpoch ?? 1,
      ownershipEpoch: record.lastOwnershipEpoch + 1,
      ownershipLeaseId: ctx.newId(),
      ownershipLeaseExpiresAt: expiresAt,
      startBy: expiresAt,
      agentCardVersion: offer.agentCardVersion,
      capabilityPins: capabilityPins.filter((c) => c !== undefined),
      withdrawnAgentIds,
      ...present({ scheduleEstimate: p.scheduleEstimate }),
    }),
  ]
  const activation = membershipActivation(ctx, group, actor)
  if (activation !== undefined) drafts.push(activation)
  return drafts
}

/**
 * `ext.missionweaveprotocol.core.work_dependency_add` (§10.4): one new dependency edge, by the
 * Coordinator or the MissionOwner, while no offer or owner holds a commitment to the contract; the
 * contract gets a new version.
 */
export const addDependency: HandlerFor<'ext.missionweaveprotocol.core.work_dependency_add'> = (command, ctx) => {
  const group = requireGroup(ctx)
  const p = command.payload
  const actor = command.actor as ActorRef
  const record = requireWorkItem(group, p.workItemId)
  requireCoordinatorOr(ctx, group, actor, isMissionOwner(group, actor), 'only the current Coordinator or the MissionOwner may add dependencies')
  nextState(record.doc.state, command.kind)
  if (record.dependencyIds.includes(p.dependencyId)) reject('INVALID_COMMAND', `WorkItem ${p.workItemId} already depends on ${p.dependencyId}`)
  requireAcyclicDependencies(group.workItems, p.workItemId, [p.dependencyId])
  const dependencyIds = [...record.dependencyIds, p.dependencyId]
  const previous = record.doc.contract
  return [
    workDraft('work.contract.revised', {
      workItemId: p.workItemId,
      contract: { ...previous, contractVersion: previous.contractVersion + 1, dependencyWorkItemIds: dependencyIds },
      previousContractVersion: previous.contractVersion,
      revisionReason: 'dependency_added',
      dependencyIds,
      addedDependencyId: p.dependencyId,
      requiresReacceptance: false,
    }),
  ]
}
