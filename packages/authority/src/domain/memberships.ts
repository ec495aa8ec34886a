/**
 * The Membership domain (§8, §9.1): who holds which seat in a Group, Membership changes and ends
 * (each fencing the previous epoch), and Delegation Grant issuance. The role predicates exported
 * here are shared by the other Group domains.
 * @module
 */
import type { DelegationGrant, Membership } from '@weft/spec'
import { draft, reject, requireGroup, type AnyEventDraft, type CommandOf, type HandlerContext, type HandlerFor, type ReducerFor } from '../commit/handler.js'
import { actorKey, type ActorRef, type AuthorityState, type GroupState } from '../model.js'
import { parseInstant } from '@weft/codec/time'
import { requireCoordinatorOr } from './work-roles.js'
import { inheritanceOf, requireAllocation } from './work-budget.js'

type MembershipCommandKind = 'membership.change' | 'membership.end' | 'membership.grant_delegation'
type MembershipEventKind = 'membership.changed' | 'membership.ended' | 'membership.delegation.granted'

/**
 * The scopes of a Membership with complete Group visibility. §8 requires them (with a visibility
 * start of 0) for the MissionOwner and Coordinator seats.
 */
export const COMPLETE_VISIBILITY_SCOPES: readonly string[] = ['group:read', 'group:write']

/** Whether two Principals are the same (type and ID). */
export function sameActor(a: ActorRef, b: ActorRef): boolean {
  return a.type === b.type && a.id === b.id
}

/** Whether `actor` is the Group's MissionOwner (a human for a root Mission, the parent Coordinator for a child, §3). */
export function isMissionOwner(group: GroupState, actor: ActorRef): boolean {
  return sameActor(group.mission.missionOwner as ActorRef, actor)
}

/**
 * Whether `actor` is the Agent named as the Mission's current Coordinator (§7.2): its seat. Whether a
 * Command acts with the Coordinator's authority is `isCurrentCoordinator`'s question (`work-roles.ts`).
 */
export function isCoordinator(group: GroupState, actor: ActorRef): boolean {
  return actor.type === 'agent' && group.mission.coordinator.agentId === actor.id
}

/** Whether `actor` is a service Principal the Organization trusts as its control plane (§7.1, §7.2, §15.1). */
export function isControlPlane(ctx: HandlerContext, actor: ActorRef): boolean {
  return actor.type === 'service' && ctx.policy.controlPlane.includes(actor.id)
}

/** Rejects with `AUTH_FORBIDDEN` unless one of `allowed` holds; `what` names the action. */
export function requireRole(allowed: readonly boolean[], what: string): void {
  if (!allowed.includes(true)) reject('AUTH_FORBIDDEN', `actor may not ${what}`)
}

/** The member's latest Membership in the Group, ended or not. */
export function membershipOf(group: GroupState, member: ActorRef): Membership | undefined {
  const id = group.membershipByMember.get(actorKey(member))
  return id === undefined ? undefined : group.memberships.get(id)
}

/** Whether the member currently holds an active or provisional Membership (§8). */
export function hasLiveMembership(group: GroupState, member: ActorRef): boolean {
  const state = membershipOf(group, member)?.state
  return state === 'active' || state === 'provisional'
}

/**
 * An active Membership with complete visibility for a MissionOwner or Coordinator seat (§8).
 * When the member already holds a Membership it is changed in place under the next epoch, which
 * fences the old one; otherwise a new one starts at epoch 1.
 */
export function seatMembership(
  ctx: HandlerContext,
  at: { readonly groupId: string; readonly missionId: string },
  member: ActorRef,
  role: 'mission_owner' | 'coordinator',
  existing?: Membership,
): Membership {
  return {
    membershipId: existing?.membershipId ?? ctx.newId(),
    missionId: at.missionId,
    groupId: at.groupId,
    member: { type: member.type, id: member.id },
    role,
    state: 'active',
    membershipEpoch: (existing?.membershipEpoch ?? 0) + 1,
    scopes: [...COMPLETE_VISIBILITY_SCOPES],
    ...(existing?.delegationGrants === undefined ? {} : { delegationGrants: existing.delegationGrants }),
    visibilityStartSequence: 0,
    grantedAt: existing?.grantedAt ?? ctx.now,
    activatedAt: ctx.now,
  }
}

/** Whether the member occupies the MissionOwner or Coordinator seat, and which. */
function seatOf(group: GroupState, member: ActorRef): Membership['role'] | undefined {
  if (isMissionOwner(group, member)) return 'mission_owner'
  if (isCoordinator(group, member)) return 'coordinator'
  return undefined
}

function change(command: CommandOf<'membership.change'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  const actor = command.actor as ActorRef
  const p = command.payload
  // §8: Memberships are granted by the Coordinator (just in time), the MissionOwner or Organization policy.
  requireCoordinatorOr(ctx, group, actor, isMissionOwner(group, actor) || isControlPlane(ctx, actor), 'actor may not change Memberships')
  const existing = group.memberships.get(p.membershipId)
  if (existing !== undefined && !sameActor(existing.member as ActorRef, p.member as ActorRef)) {
    reject('INVALID_COMMAND', `membership ${p.membershipId} belongs to another member`)
  }
  if (existing === undefined) {
    const held = membershipOf(group, p.member as ActorRef)
    if (held !== undefined && held.state !== 'ended') reject('INVALID_COMMAND', `member already holds membership ${held.membershipId}`)
  }
  if (p.member.type === 'agent' && !ctx.state.org.agents.has(p.member.id)) reject('INVALID_COMMAND', 'member is not a registered agent')
  if (existing?.state === 'active' && p.state === 'provisional') reject('INVALID_COMMAND', 'an active membership cannot become provisional again')
  // The seats follow the Mission document: a role cannot be handed out, or taken away, here (§7.2).
  const seat = seatOf(group, p.member as ActorRef)
  if ((p.role === 'mission_owner' || p.role === 'coordinator' || seat !== undefined) && p.role !== seat) {
    reject('INVALID_COMMAND', `role ${p.role} does not match the member's seat in the Mission`)
  }
  if (seat !== undefined) {
    // §8: MissionOwner and Coordinator Memberships have complete Group visibility.
    const complete = p.state === 'active' && (p.visibilityStartSequence ?? 0) === 0 && COMPLETE_VISIBILITY_SCOPES.every((s) => p.scopes.includes(s))
    if (!complete) reject('INVALID_COMMAND', `the ${seat} membership must stay active with complete visibility`)
  }
  const provisional = p.state === 'provisional'
  const contextPackageId = p.contextPackageId ?? existing?.contextPackageId
  const membership: Membership = {
    membershipId: p.membershipId,
    missionId: group.missionId,
    groupId: group.groupId,
    member: p.member,
    role: p.role,
    state: p.state,
    // §8: every change issues the next epoch, fencing Commands under the previous one.
    membershipEpoch: (existing?.membershipEpoch ?? 0) + 1,
    scopes: p.scopes,
    ...(existing?.delegationGrants === undefined ? {} : { delegationGrants: existing.delegationGrants }),
    // §8: late joiners get no unrestricted history unless the visibility start is granted explicitly.
    visibilityStartSequence: p.visibilityStartSequence ?? (seat === undefined ? (existing?.visibilityStartSequence ?? group.head) : 0),
    ...(contextPackageId === undefined ? {} : { contextPackageId }),
    ...(provisional ? { provisionalExpiresAt: ctx.after(p.provisionalExpiresInSeconds ?? reject('INVALID_COMMAND', 'provisional membership needs an expiry')) } : {}),
    grantedAt: existing?.grantedAt ?? ctx.now,
    ...(provisional ? {} : { activatedAt: existing?.state === 'active' && existing.activatedAt !== undefined ? existing.activatedAt : ctx.now }),
  }
  return [draft('membership.changed', { membership })]
}

function end(command: CommandOf<'membership.end'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  const actor = command.actor as ActorRef
  const membership = group.memberships.get(command.payload.membershipId) ?? reject('INVALID_COMMAND', 'unknown membership')
  const self = sameActor(membership.member as ActorRef, actor)
  requireCoordinatorOr(ctx, group, actor, self || isMissionOwner(group, actor) || isControlPlane(ctx, actor), 'actor may not end this membership')
  if (membership.state === 'ended') reject('INVALID_STATE_TRANSITION', 'membership already ended')
  // The seats end only through the Mission: a new Coordinator is appointed with mission.assign_coordinator (§7.2).
  if (seatOf(group, membership.member as ActorRef) !== undefined) reject('INVALID_COMMAND', 'the MissionOwner or current Coordinator membership cannot be ended')
  return [
    draft('membership.ended', {
      membershipId: membership.membershipId,
      member: membership.member,
      membershipEpoch: membership.membershipEpoch,
      reason: command.payload.reason,
    }),
  ]
}

/** §9.1: a Grant's target must not be finished in one of these ways. */
const CLOSED_GRANT_TARGET_STATES: readonly string[] = ['verified', 'failed', 'cancelled']

function grantDelegation(command: CommandOf<'membership.grant_delegation'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  const p = command.payload
  if (group.grants.has(p.grantId)) reject('INVALID_COMMAND', `grant ${p.grantId} already exists`)
  // §9.1: the grantee is eligible only through an active work_delegate Membership at the named epoch.
  const grantee = membershipOf(group, { type: 'agent', id: p.granteeAgentId })
  if (grantee === undefined || grantee.state !== 'active' || grantee.role !== 'work_delegate') {
    reject('MEMBERSHIP_REQUIRED', 'grantee holds no active work_delegate membership')
  }
  if (grantee.membershipEpoch !== p.granteeMembershipEpoch) {
    reject('MEMBERSHIP_STALE', `grantee membership is at epoch ${grantee.membershipEpoch}`, { currentEpoch: grantee.membershipEpoch })
  }
  const target = group.workItems.get(p.targetWorkItemId) ?? reject('INVALID_COMMAND', 'target work item does not exist')
  if (CLOSED_GRANT_TARGET_STATES.includes(target.doc.state)) reject('INVALID_STATE_TRANSITION', `target work item is ${target.doc.state}`)
  // §4 invariant 11: the Grant's ceilings narrow the target's budget; where the target inherits a
  // dimension (§12), the ceiling must fit what the target's ancestry has left.
  requireAllocation(target.doc.contract.budget, `target WorkItem ${p.targetWorkItemId}`, [], p.budget, inheritanceOf(group, target, ctx.state))
  if (parseInstant(p.expiresAt) <= ctx.nowMs) reject('INVALID_COMMAND', 'grant expiry is not in the future')
  // §9.1, §20: descendant depth is bounded by Organization cooperation policy as well.
  if (p.maxDescendantDepth > ctx.policy.maxDelegationDepth) {
    reject('RATE_LIMITED', `maximum descendant depth exceeds the organization limit of ${ctx.policy.maxDelegationDepth}`)
  }
  const grant: DelegationGrant = {
    grantId: p.grantId,
    granteeAgentId: p.granteeAgentId,
    missionId: group.missionId,
    groupId: group.groupId,
    targetWorkItemId: p.targetWorkItemId,
    allowedCapabilities: p.allowedCapabilities,
    budget: p.budget,
    maxDescendantDepth: p.maxDescendantDepth,
    granteeMembershipEpoch: p.granteeMembershipEpoch,
    coordinatorEpoch: group.mission.coordinator.coordinatorEpoch,
    grantedBy: { type: 'agent', id: command.actor.id },
    grantedAt: ctx.now,
    expiresAt: p.expiresAt,
  }
  return [draft('membership.delegation.granted', { grant })]
}

/** Command handlers of the Membership domain (§8, §9.1). */
export const membershipHandlers = {
  'membership.change': change,
  'membership.end': end,
  'membership.grant_delegation': grantDelegation,
} satisfies { readonly [K in MembershipCommandKind]: HandlerFor<K> }

/** Stores `membership` as the member's current one. */
export function putMembership(group: GroupState, membership: Membership): void {
  group.memberships.set(membership.membershipId, membership)
  group.membershipByMember.set(actorKey(membership.member as ActorRef), membership.membershipId)
}

/** Event reducers of the Membership domain. `membership.changed` also serves other domains' drafts (offer acceptance, §8). */
export const membershipReducers = {
  'membership.changed': (state: AuthorityState, event) => {
    const group = state.groups.get(event.groupId as string)
    if (group !== undefined) putMembership(group, event.payload.membership)
  },
  'membership.ended': (state, event) => {
    const group = state.groups.get(event.groupId as string)
    const membership = group?.memberships.get(event.payload.membershipId)
    if (group === undefined || membership === undefined) return
    group.memberships.set(membership.membershipId, { ...membership, state: 'ended', endedAt: event.occurredAt })
  },
  'membership.delegation.granted': (state, event) => {
    const group = state.groups.get(event.groupId as string)
    if (group === undefined) return
    const { grant } = event.payload
    group.grants.set(grant.grantId, { grant, workItemIds: new Set() })
    const holder = membershipOf(group, { type: 'agent', id: grant.granteeAgentId })
    if (holder !== undefined) group.memberships.set(holder.membershipId, { ...holder, delegationGrants: [...(holder.delegationGrants ?? []), grant] })
  },
} satisfies { readonly [K in MembershipEventKind]: ReducerFor<K> }
