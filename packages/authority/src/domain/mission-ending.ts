/**
 * Ending a Mission (§7.1, §12, §14): `mission.cancel` and `mission.terminate`, and how the end
 * travels. A cancelled Mission cancels its unfinished WorkItems and, recursively, its running child
 * Missions. A failed Mission fails its unfinished WorkItems and, for a child Mission, reaches the
 * parent WorkItem as the declared child-failure policy says, failing the parent Mission too when
 * the child was indispensable. The reducers of the ending Events are the Mission reducers
 * (`missions.ts`); this module only decides which Events a Command appends.
 * @module
 */
import type { Evidence } from '@weft/spec'
import { draft, requireGroup, type AnyEventDraft, type CommandOf, type HandlerContext } from '../commit/handler.js'
import type { ActorRef, AuthorityState, GroupState, WorkItemRecord } from '../model.js'
import { isControlPlane, isMissionOwner, requireRole } from './memberships.js'
import { missionAllows, requireMissionTransition } from './mission-machine.js'
import { targetOf } from './work-machine.js'
import { requireCoordinatorOr } from './work-roles.js'

/** The longest reason text a payload accepts. */
const MAX_REASON = 4000

/** Keeps a composed reason within the payload limit. */
function clip(text: string): string {
  return text.length <= MAX_REASON ? text : `${text.slice(0, MAX_REASON - 1)}…`
}

/** The parent Group and WorkItem of a child Mission's Group, while the link is current (§14). */
export function parentLink(state: AuthorityState, child: GroupState): { group: GroupState; record: WorkItemRecord } | undefined {
  const link = state.childLinks.get(child.groupId)
  const group = link === undefined ? undefined : state.groups.get(link.parentGroupId)
  const record = link === undefined ? undefined : group?.workItems.get(link.parentWorkItemId)
  // A replacement child re-links the parent WorkItem; an older child no longer speaks for it.
  if (group === undefined || record === undefined || record.childGroupId !== child.groupId) return undefined
  return { group, record }
}

/**
 * The drafts of cancelling `group`'s Mission (§7.1, §12): the Mission, its unfinished WorkItems
 * (`system.mission_cancelled`) and, recursively, its running child Missions
 * (`system.parent_mission_cancelled`).
 */
function cancellation(ctx: HandlerContext, group: GroupState, reason: string, propagated: boolean): AnyEventDraft[] {
  const drafts: AnyEventDraft[] = [draft('mission.cancelled', { reason }, { groupId: group.groupId, ...(propagated ? { actor: ctx.authority } : {}) })]
  for (const record of group.workItems.values()) {
    if (targetOf(record.doc.state, 'system.mission_cancelled') === undefined) continue
    const workItemId = record.doc.workItemId
    drafts.push(draft('work.cancelled', { workItemId, reason: clip(`mission cancelled: ${reason}`) }, { groupId: group.groupId, workItemId, actor: ctx.authority }))
  }
  for (const [childGroupId, link] of ctx.state.childLinks) {
    const child = link.parentGroupId === group.groupId ? ctx.state.groups.get(childGroupId) : undefined
    if (child === undefined || !missionAllows(child.mission.state, 'system.parent_mission_cancelled')) continue
    drafts.push(...cancellation(ctx, child, clip(`parent mission ${group.missionId} cancelled: ${reason}`), true))
  }
  return drafts
}

/** `mission.cancel` (§7.1, §12): the Mission, its unfinished WorkItems and its running child Missions end as cancelled. */
export function cancelMission(command: CommandOf<'mission.cancel'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  const actor = command.actor as ActorRef
  // §7.1: normal cancellation belongs to the MissionOwner or Organization policy, not the Coordinator.
  requireRole([isMissionOwner(group, actor), isControlPlane(ctx, actor)], 'cancel the mission')
  requireMissionTransition(group.mission.state, 'mission.cancel')
  return cancellation(ctx, group, command.payload.reason, false)
}

/**
 * The drafts of `group`'s Mission failing (§7.1, §14): the Mission, its unfinished WorkItems
 * (`system.mission_failed`) and, for a child Mission, the parent WorkItem and Mission as the
 * declared child-failure policy says (`system.child_mission_failed`).
 */
function termination(ctx: HandlerContext, group: GroupState, reason: string, evidence: readonly Evidence[] | undefined, propagated: boolean, failed: Set<string>): AnyEventDraft[] {
  const at = { groupId: group.groupId, ...(propagated ? { actor: ctx.authority } : {}) }
  const drafts: AnyEventDraft[] = [draft('mission.terminated', { reason, ...(evidence === undefined ? {} : { evidence: [...evidence] }) }, at)]
  for (const record of group.workItems.values()) {
    const workItemId = record.doc.workItemId
    if (failed.has(`${group.groupId} ${workItemId}`) || targetOf(record.doc.state, 'system.mission_failed') === undefined) continue
    drafts.push(draft('work.failed', { workItemId, reason: clip(`mission failed: ${reason}`), evidence: [] }, { groupId: group.groupId, workItemId, actor: ctx.authority }))
  }
  const parent = parentLink(ctx.state, group)
  // §14: a failed child blocks its parent WorkItem unless the policy declares it indispensable.
  const policy = parent?.record.childFailurePolicy ?? 'block_parent_work_item'
  const indispensable = policy !== 'block_parent_work_item'
  const next = parent === undefined ? undefined : targetOf(parent.record.doc.state, 'system.child_mission_failed', { childIndispensable: indispensable })
  // A parent WorkItem no longer waiting for this child (cancelled meanwhile) takes nothing from it.
  if (parent === undefined || next === undefined) return drafts
  if (next === 'failed') {
    const workItemId = parent.record.doc.workItemId
    failed.add(`${parent.group.groupId} ${workItemId}`)
    drafts.push(
      draft(
        'work.failed',
        { workItemId, reason: clip(`child mission ${group.missionId} failed: ${reason}`), evidence: evidence === undefined ? [] : [...evidence] },
        { groupId: parent.group.groupId, workItemId, actor: ctx.authority },
      ),
    )
  }
  const parentMission = parent.group.mission.state
  if (policy === 'fail_parent_mission' && missionAllows(parentMission, 'system.child_mission_failed', { childIndispensable: true })) {
    drafts.push(...termination(ctx, parent.group, clip(`indispensable child mission ${group.missionId} failed: ${reason}`), evidence, true, failed))
  }
  return drafts
}

/** `mission.terminate` (§7.1, §14): the Mission fails, and the failure reaches its WorkItems and its parent as declared. */
export function terminateMission(command: CommandOf<'mission.terminate'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  const actor = command.actor as ActorRef
  // §7.1: the Coordinator (under its current epoch, checked by the pipeline) or Organization policy.
  requireCoordinatorOr(ctx, group, actor, isControlPlane(ctx, actor), 'actor may not terminate the mission')
  requireMissionTransition(group.mission.state, 'mission.terminate')
  for (const e of command.payload.evidence ?? []) ctx.verifyDocument('evidence', e)
  return termination(ctx, group, command.payload.reason, command.payload.evidence, false, new Set())
}
