/**
 * Ending WorkItems (§7.2, §10.2, §11.4, §13.2): Coordinator review of a submission, failure with
 * Evidence and cancellation. Handlers only; the reducers are in `work-reducers.ts`.
 * @module
 */
import { reject, requireGroup, type HandlerContext, type HandlerFor } from '../handler.js'
import type { ActorRef, GroupState } from '../model.js'
import { requireBoundEvidence, submissionOf, uncoveredCriteria } from './evidence.js'
import { requireCurrentExecution } from './leases.js'
import { nextState, requireRows } from './work-machine.js'
import { isCurrentCoordinator, isMissionOwner, isPolicyService, present, requireWorkItem, workDraft } from './work-roles.js'

/**
 * `work.accept_result` (§13.2, §7.2): the current Coordinator verifies a submission made under the
 * current Ownership Epoch. Its review Evidence must cover every acceptance criterion and report no
 * failure, the submission and review together must supply every required Evidence type, and a
 * Coordinator that owned the WorkItem needs at least one piece of Evidence from someone else.
 */
export const acceptResult: HandlerFor<'work.accept_result'> = (command, ctx) => {
  const group = requireGroup(ctx)
  const p = command.payload
  const actor = command.actor as ActorRef
  const record = requireWorkItem(group, p.workItemId)
  if (!isCurrentCoordinator(group, actor, ctx.nowMs)) reject('AUTH_FORBIDDEN', 'only the current Coordinator accepts results')
  requireRows(record.doc.state, command.kind)
  const submission = submissionOf(record)
  // §11.5: only a submission of the current Ownership Epoch may complete the WorkItem.
  if (submission === undefined || submission.ownershipEpoch !== record.doc.owner?.ownershipEpoch) {
    reject('WORK_STALE_OWNERSHIP', `the submission of WorkItem ${p.workItemId} is not from the current Ownership Epoch`)
  }
  requireBoundEvidence(ctx, group, record, p.evidence)
  // §7.2: the Coordinator must not be the sole reviewer of its own output.
  const ownOutput = record.doc.owner?.agentId === actor.id
  if (ownOutput && p.evidence.every((e) => e.generatedBy.type === actor.type && e.generatedBy.id === actor.id)) {
    reject('AUTH_FORBIDDEN', 'the Coordinator cannot be the sole reviewer of its own output')
  }
  const contract = record.doc.contract
  const uncovered = [...new Set([...uncoveredCriteria(contract, p.evidence, 'any'), ...uncoveredCriteria(contract, [...submission.evidence, ...p.evidence], 'every')])]
  const failed = p.evidence.filter((e) => e.result === 'failed').map((e) => e.evidenceId)
  if (uncovered.length > 0 || failed.length > 0) {
    reject('INVALID_COMMAND', 'the review Evidence does not meet the acceptance criteria', { uncoveredCriteria: uncovered, failedEvidence: failed })
  }
  nextState(record.doc.state, command.kind, { acceptanceCriteriaMet: true })
  return [workDraft('work.result.accepted', { workItemId: p.workItemId, evidence: p.evidence })]
}

/** Whether `actor` may end a WorkItem without owning it: the Coordinator, the MissionOwner or Organization policy. */
function mayEndWork(ctx: HandlerContext, group: GroupState, actor: ActorRef): boolean {
  return isCurrentCoordinator(group, actor, ctx.nowMs) || isMissionOwner(group, actor) || isPolicyService(ctx, actor)
}

/**
 * `work.fail` (§10.2, §11.4): the owner under its current Execution Lease, or the Coordinator, the
 * MissionOwner or Organization policy without one, fails an unfinished WorkItem. Failure Evidence
 * (a failed result or a `failure_report`) about this WorkItem is required.
 */
export const failWork: HandlerFor<'work.fail'> = (command, ctx) => {
  const group = requireGroup(ctx)
  const p = command.payload
  const actor = command.actor as ActorRef
  const record = requireWorkItem(group, p.workItemId)
  requireRows(record.doc.state, command.kind)
  const ownerReport = p.ownershipEpoch !== undefined && p.executionLeaseId !== undefined
  if (ownerReport) requireCurrentExecution(group, record, actor, p.ownershipEpoch!, p.executionLeaseId!, ctx.nowMs)
  else if (!mayEndWork(ctx, group, actor)) reject('AUTH_FORBIDDEN', 'only the owner, the Coordinator, the MissionOwner or policy may fail a WorkItem')
  requireBoundEvidence(ctx, group, record, p.evidence)
  if (!p.evidence.some((e) => e.result === 'failed' || e.type === 'failure_report')) reject('INVALID_COMMAND', 'failing a WorkItem needs failure Evidence')
  nextState(record.doc.state, command.kind)
  return [workDraft('work.failed', { workItemId: p.workItemId, reason: p.reason, ...present({ ownershipEpoch: p.ownershipEpoch, executionLeaseId: p.executionLeaseId }), evidence: p.evidence })]
}

/** `work.cancel` (§10.2, §12): the Coordinator, the MissionOwner or Organization policy cancels unfinished work; its leases are revoked. */
export const cancelWork: HandlerFor<'work.cancel'> = (command, ctx) => {
  const group = requireGroup(ctx)
  const p = command.payload
  const record = requireWorkItem(group, p.workItemId)
  if (!mayEndWork(ctx, group, command.actor as ActorRef)) reject('AUTH_FORBIDDEN', 'only the Coordinator, the MissionOwner or policy may cancel a WorkItem')
  nextState(record.doc.state, command.kind)
  return [workDraft('work.cancelled', { workItemId: p.workItemId, reason: p.reason })]
}
