/**
 * Who may do what to a WorkItem (§7.1, §7.2, §9.1, §12), the lookups every WorkItem handler
 * starts with, and the small helpers they build their Event drafts with.
 * @module
 */
import type { EventKind, EventPayload } from '@weft/spec'
import { TERMINAL_MISSION_STATES } from '@weft/spec/machines'
import { draft, reject, type EventDraft, type HandlerContext } from '../commit/handler.js'
import { aggregateKey, type ActorRef, type AuthorityState, type GroupState, type WorkItemRecord } from '../model.js'
import { checkDelegatedUse, type DelegatedUse } from './delegation.js'
import { parseInstant } from '@weft/codec/time'

/**
 * The WorkItem `workItemId` of `group`.
 * @throws ProtocolError `INVALID_COMMAND` when the Group has no such WorkItem.
 */
export function requireWorkItem(group: GroupState, workItemId: string): WorkItemRecord {
  const record = group.workItems.get(workItemId)
  if (record === undefined) reject('INVALID_COMMAND', `unknown WorkItem ${workItemId}`, { workItemId })
  return record
}

/** The revision the next Event of WorkItem `workItemId` will carry (§15.2: current + 1). */
export function nextWorkItemRevision(group: GroupState, workItemId: string): number {
  return (group.revisions.get(aggregateKey('workItem', workItemId)) ?? 0) + 1
}

/** Whether `actor` is the Coordinator of the current Coordinator Epoch under an unexpired lease (§7.2), whatever the Command carries. */
function holdsCoordinatorLease(group: GroupState, actor: ActorRef, nowMs: number): boolean {
  const lease = group.coordinatorLease
  return (
    actor.type === 'agent' &&
    actor.id === group.mission.coordinator.agentId &&
    lease.holderAgentId === actor.id &&
    lease.coordinatorEpoch === group.mission.coordinator.coordinatorEpoch &&
    lease.state === 'active' &&
    nowMs < parseInstant(lease.expiresAt)
  )
}

/**
 * Whether the Command acts as the current Coordinator (§7.2): `actor` holds the current
 * Coordinator lease and the Command carries the current Coordinator Epoch. §15.1: a Command whose
 * authority derives from the lease must carry that epoch, so one without it has no Coordinator
 * authority, even from the Coordinator; it may still rest on another (owner, MissionOwner, Grant).
 */
export function isCurrentCoordinator(ctx: HandlerContext, group: GroupState, actor: ActorRef): boolean {
  return ctx.coordinatorEpoch === group.mission.coordinator.coordinatorEpoch && holdsCoordinatorLease(group, actor, ctx.nowMs)
}

/**
 * Checks that the Command rests on `otherAuthority` or acts as the current Coordinator
 * ({@link isCurrentCoordinator}). When neither holds but the actor is the current Coordinator
 * without the Coordinator Epoch, the Command relied on the role outside the lease: fenced (§15.1).
 * @throws ProtocolError `AUTH_STALE_COORDINATOR` then, `AUTH_FORBIDDEN` otherwise (`message`).
 */
export function requireCoordinatorOr(ctx: HandlerContext, group: GroupState, actor: ActorRef, otherAuthority: boolean, message: string): void {
  if (otherAuthority || isCurrentCoordinator(ctx, group, actor)) return
  if (ctx.coordinatorEpoch === undefined && holdsCoordinatorLease(group, actor, ctx.nowMs)) {
    reject('AUTH_STALE_COORDINATOR', `${message}: a Command under the Coordinator lease carries the current Coordinator Epoch`)
  }
  reject('AUTH_FORBIDDEN', message)
}

/** Whether `actor` is the Mission's MissionOwner. */
export function isMissionOwner(group: GroupState, actor: ActorRef): boolean {
  return actor.type === group.mission.missionOwner.type && actor.id === group.mission.missionOwner.id
}

/** Whether `actor` is an Organization policy service: the control plane or the Authority itself. */
export function isPolicyService(ctx: HandlerContext, actor: ActorRef): boolean {
  return actor.type === 'service' && (ctx.policy.controlPlane.includes(actor.id) || actor.id === ctx.authority.id)
}

/**
 * Checks that the Mission still accepts new work commitments (§7.1 terminal states, §12:
 * cancellation stops new assignments; a Mission awaiting approval is under review).
 * @throws ProtocolError `INVALID_STATE_TRANSITION`.
 */
export function requireMissionActive(group: GroupState): void {
  if (group.mission.state !== 'active') reject('INVALID_STATE_TRANSITION', `the Mission is ${group.mission.state}`, { missionState: group.mission.state })
}

/**
 * Whether the child Mission linked to `record` still runs (§14: ownership stays fenced meanwhile).
 * A child Group this Authority does not serve counts as running.
 */
export function childMissionRunning(state: AuthorityState, record: WorkItemRecord): boolean {
  if (record.childMissionId === undefined) return false
  const child = record.childGroupId === undefined ? undefined : state.groups.get(record.childGroupId)
  return child === undefined || !(TERMINAL_MISSION_STATES as readonly string[]).includes(child.mission.state)
}

/** The authority a `work.authorize` or `work.offer` was accepted under, as its Event records it. */
export interface WorkAuthoring {
  readonly delegationGrantId?: string
  readonly emergencyOverride?: true
}

/**
 * Checks that `actor` may author work (§9.1): the current Coordinator under its Coordinator Epoch;
 * the MissionOwner when the Command says `emergencyOverride` (§7.1: an explicit, audited override);
 * or a delegate citing a persisted Grant, checked by {@link checkDelegatedUse}.
 * @throws ProtocolError `AUTH_FORBIDDEN`, `AUTH_STALE_COORDINATOR` (see {@link requireCoordinatorOr})
 * or what {@link checkDelegatedUse} throws.
 */
export function requireWorkAuthor(
  ctx: HandlerContext,
  group: GroupState,
  actor: ActorRef,
  cited: { readonly delegationGrantId?: string | undefined; readonly emergencyOverride?: true | undefined },
  use: DelegatedUse,
): WorkAuthoring {
  if (cited.delegationGrantId !== undefined && cited.emergencyOverride !== undefined) reject('INVALID_COMMAND', 'a Command cites either a Delegation Grant or an emergency override')
  if (cited.delegationGrantId !== undefined) {
    checkDelegatedUse(ctx, group, actor, cited.delegationGrantId, use)
    return { delegationGrantId: cited.delegationGrantId }
  }
  if (cited.emergencyOverride !== undefined) {
    if (!isMissionOwner(group, actor)) reject('AUTH_FORBIDDEN', 'only the MissionOwner may use an emergency override')
    return { emergencyOverride: true }
  }
  // §9.1: only the current Coordinator authors work without a Grant or override.
  requireCoordinatorOr(ctx, group, actor, false, 'only the current Coordinator, a MissionOwner override or a Grant delegate may do this')
  return {}
}

/**
 * A draft of a WorkItem-aggregate Event whose envelope names the WorkItem its payload names (the
 * aggregate rule of `EventDraft`).
 */
export function workDraft<K extends EventKind>(kind: K, payload: EventPayload<K> & { readonly workItemId: string }): EventDraft<K> {
  return draft(kind, payload, { workItemId: payload.workItemId })
}

/** `fields` without its `undefined` members, for optional payload members under `exactOptionalPropertyTypes`. */
export function present<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  // A plain loop: most handlers and reducers call this, and entry arrays would be garbage at once.
  const out: Record<string, unknown> = {}
  for (const key in fields) {
    const value = fields[key]
    if (value !== undefined) out[key] = value
  }
  return out as { [K in keyof T]?: Exclude<T[K], undefined> }
}

/** The execution a WorkItem owner Command cites (§11.3): WorkItem, Ownership Epoch and Execution Lease ID. */
export function executionRef(p: { readonly workItemId: string; readonly ownershipEpoch: number; readonly executionLeaseId: string }): {
  readonly workItemId: string
  readonly ownershipEpoch: number
  readonly executionLeaseId: string
} {
  return { workItemId: p.workItemId, ownershipEpoch: p.ownershipEpoch, executionLeaseId: p.executionLeaseId }
}
