/**
 * Delegated work authority (§9.1): the checks a `work.authorize` or `work.offer` citing a
 * Delegation Grant passes at every use. Any failure is `AUTH_FORBIDDEN`, except a budget ceiling
 * (`BUDGET_EXCEEDED`) or a budget leaving out a dimension no WorkItem of the Grant bounds
 * (`WORK_CONTRACT_INCOMPLETE`).
 * @module
 */
import { USAGE_DIMENSIONS, type WorkContract, type WorkItemState } from '@weft/spec'
import { reject, type HandlerContext } from '../commit/handler.js'
import { actorKey, type ActorRef, type GrantRecord, type GroupState } from '../model.js'
import { requireAllocation } from './work-budget.js'
import { LIMIT_KEY, limitOf } from './budget-limits.js'
import { compareSemver } from './work-contract.js'
import { parseInstant } from '@weft/codec/time'

/** §9.1: a target root in one of these states immediately invalidates further use of its Grant. */
const ROOT_STATES_ENDING_GRANT: readonly WorkItemState[] = ['failed', 'cancelled', 'verified']

/** What a delegate wants to do under a Grant. */
export type DelegatedUse =
  /** Offer the Grant's root or an existing descendant, with the contract it is offered under. */
  | { readonly use: 'offer'; readonly workItemId: string; readonly contract: WorkContract }
  /** Authorize a new WorkItem linked into the Grant's subtree by `parentWorkItemId`. */
  | { readonly use: 'authorize'; readonly workItemId: string; readonly parentWorkItemId: string | undefined; readonly contract: WorkContract }

function forbid(message: string, details?: Record<string, unknown>): never {
  return reject('AUTH_FORBIDDEN', message, details)
}

/** How many parent links lead from `workItemId` up to `rootId`; `undefined` when `rootId` is not on the way. */
function depthBelow(group: GroupState, workItemId: string, rootId: string): number | undefined {
  let depth = 0
  for (let id: string | undefined = workItemId; id !== undefined; depth++) {
    if (id === rootId) return depth
    id = group.workItems.get(id)?.parentWorkItemId
  }
  return undefined
}

/**
 * §9.1: the cumulative budgets under a Grant stay within every ceiling. A dimension the contract
 * leaves out is inherited (§12), bounded by the nearest WorkItem above that lists it; the ceilings
 * count that bound only when that WorkItem is itself one of the Grant's, so only below such a
 * WorkItem may a dimension be left out.
 * @param parentId - The parent of the WorkItem authorized or offered under the Grant.
 */
function requireInheritedWithinGrant(group: GroupState, record: GrantRecord, parentId: string | undefined, contract: WorkContract): void {
  for (const d of USAGE_DIMENSIONS) {
    if (limitOf(contract.budget, d) !== undefined) continue
    let bounded = false
    // A parent link that loops back would otherwise spin forever; `seen` stops it.
    for (let id = parentId, seen = new Set<string>(); id !== undefined && record.workItemIds.has(id) && !seen.has(id); ) {
      seen.add(id)
      const ancestor = group.workItems.get(id)
      if (ancestor === undefined) break
      if (limitOf(ancestor.doc.contract.budget, d) !== undefined) {
        bounded = true
        break
      }
      id = ancestor.parentWorkItemId
    }
    if (!bounded) {
      const key = LIMIT_KEY[d]
      reject('WORK_CONTRACT_INCOMPLETE', `under Delegation Grant ${record.grant.grantId} the budget must limit ${key}: no WorkItem of the Grant above it does`, { missing: key })
    }
  }
}

/**
 * Checks one use of Delegation Grant `grantId` by `actor` (§9.1): the actor is the grantee with an
 * active `work_delegate` Membership at the Grant's Membership Epoch; the Grant's Mission, Group,
 * Coordinator Epoch and issuing Coordinator are still current and it is within its validity; the
 * target root exists and is not failed, cancelled or verified; the WorkItem is the root or in its
 * subtree (a new one linked by `parentWorkItemId`); its depth below the root is within the Grant's
 * maximum and the Organization's `maxDelegationDepth`; every required capability is allowed at its
 * minimum version; and the budgets of all WorkItems created or offered under the Grant stay within
 * every ceiling, a dimension left out only below a WorkItem of the Grant that limits it.
 * @returns The Grant's record.
 * @throws ProtocolError `AUTH_FORBIDDEN`, `BUDGET_EXCEEDED`, `WORK_CONTRACT_INCOMPLETE` or
 * `INVALID_COMMAND` (another currency).
 */
export function checkDelegatedUse(ctx: HandlerContext, group: GroupState, actor: ActorRef, grantId: string, target: DelegatedUse): GrantRecord {
  const record = group.grants.get(grantId)
  if (record === undefined) forbid(`no persisted Delegation Grant ${grantId} in this Group`, { grantId })
  const grant = record.grant
  // §9.1: a Grant is non-transferable.
  if (actor.type !== 'agent' || actor.id !== grant.granteeAgentId) forbid(`only the grantee may use Delegation Grant ${grantId}`, { grantId })
  const membershipId = group.membershipByMember.get(actorKey(actor))
  const membership = membershipId === undefined ? undefined : group.memberships.get(membershipId)
  if (membership === undefined || membership.state !== 'active' || membership.role !== 'work_delegate' || membership.membershipEpoch !== grant.granteeMembershipEpoch) {
    forbid(`Delegation Grant ${grantId} needs an active work_delegate Membership at epoch ${grant.granteeMembershipEpoch}`, { grantId })
  }
  const coordinator = group.mission.coordinator
  if (grant.missionId !== group.missionId || grant.groupId !== group.groupId) forbid(`Delegation Grant ${grantId} belongs to another Mission or Group`, { grantId })
  if (grant.coordinatorEpoch !== coordinator.coordinatorEpoch || grant.grantedBy.id !== coordinator.agentId) {
    forbid(`Delegation Grant ${grantId} was issued under a replaced Coordinator`, { grantId })
  }
  if (ctx.nowMs < parseInstant(grant.grantedAt) || ctx.nowMs >= parseInstant(grant.expiresAt)) forbid(`Delegation Grant ${grantId} is outside its validity`, { grantId })
  const root = group.workItems.get(grant.targetWorkItemId)
  if (root === undefined || ROOT_STATES_ENDING_GRANT.includes(root.doc.state)) forbid(`the target of Delegation Grant ${grantId} is missing or ended`, { grantId })

  let depth: number | undefined
  if (target.use === 'offer') {
    depth = depthBelow(group, target.workItemId, grant.targetWorkItemId)
  } else if (target.parentWorkItemId !== undefined) {
    const parentDepth = depthBelow(group, target.parentWorkItemId, grant.targetWorkItemId)
    depth = parentDepth === undefined ? undefined : parentDepth + 1
  }
  if (depth === undefined) forbid(`WorkItem ${target.workItemId} is outside the subtree of Delegation Grant ${grantId}`, { grantId })
  if (depth > grant.maxDescendantDepth || depth > ctx.policy.maxDelegationDepth) {
    forbid(`WorkItem ${target.workItemId} is deeper than Delegation Grant ${grantId} or policy allows`, { grantId, depth })
  }
  for (const need of target.contract.requiredCapabilities) {
    const allowed = grant.allowedCapabilities.some((c) => c.id === need.id && compareSemver(need.version, c.version) >= 0)
    if (!allowed) forbid(`capability ${need.id}@${need.version} is not allowed by Delegation Grant ${grantId}`, { grantId, capability: need })
  }
  const others = [...record.workItemIds]
    .filter((id) => id !== target.workItemId)
    .flatMap((id) => {
      const other = group.workItems.get(id)
      return other === undefined ? [] : [other.doc.contract.budget]
    })
  requireAllocation(grant.budget, `Delegation Grant ${grantId}`, others, target.contract.budget)
  const parentId = target.use === 'authorize' ? target.parentWorkItemId : group.workItems.get(target.workItemId)?.parentWorkItemId
  requireInheritedWithinGrant(group, record, parentId, target.contract)
  return record
}
