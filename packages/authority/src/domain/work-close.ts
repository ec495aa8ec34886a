/**
 * Ending WorkItems (§7.2, §10.2, §11.4, §13.2): Coordinator review of a submission, failure with
 * Evidence and cancellation. Handlers only; the reducers are in `work-reducers.ts`.
 * @module
 */
import { reject, requireGroup, type HandlerContext, type HandlerFor } from '../commit/handler.js'
import type { ActorRef, GroupState } from '../model.js'
import { requireBoundEvidence, submissionOf, uncoveredCriteria } from './evidence.js'
import { requireCurrentExecution } from './leases.js'
import { nextState, requireRows } from './work-machine.js'
import { isMissionOwner, isPolicyService, present, requireCoordinatorOr, requireWorkItem, workDraft } from './work-roles.js'

/**
 * `work.accept_result` (§13.2, §7.2): the current Coordinator verifies a submission made under the
 * current Ownership Epoch. The Evidence of that submission and of the review, taken together, must
 * supply every required Evidence type of every acceptance criterion and report no failure, and a
 * Coordinator that owned the WorkItem needs at least one piece of Evidence from someone else.
 */
export const acceptResult: HandlerFor<'work.accept_result'> = (command, ctx) => {
  const group = requireGroup(ctx)
  const p = command.payload
  const actor = command.actor as ActorRef
  const record = requireWorkItem(group, p.workItemId)
  requireCoordinatorOr(ctx, group, actor, false, 'only the current Coordinator accepts results')
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
  // §13.2: the Coordinator evaluates the combined Evidence, so a type the submission already
  // passed need not be repeated by the review, and a failure on either side stands. The filed
  // submission is the latest, of the current epoch (checked above): a fenced one's Evidence covers nothing (§4.5).
  const combined = [...submission.evidence, ...p.evidence]
  const uncovered = uncoveredCriteria(record.doc.contract, combined, 'every')
  const failed = combined.filter((e) => e.result === 'failed').map((e) => e.evidenceId)
  if (uncovered.length > 0 || failed.length > 0) {
    reject('INVALID_COMMAND', 'the submission and review Evidence together do not meet the acceptance criteria', { uncoveredCriteria: uncovered, failedEvidence: failed })
  }
  nextState(record.doc.state, command.kind, { acceptanceCriteriaMet: true })
  return [workDraft('work.result.accepted', { workItemId: p.workItemId, evidence: p.evidence })]
}

/** Checks that `actor` may end a WorkItem without owning it: the Coordinator, the MissionOwner or Organization policy. */
function requireMayEndWork(ctx: HandlerContext, group: GroupState, actor: ActorRef, message: string): void {
  requireCoordinatorOr(ctx, group, actor, isMissionOwner(group, actor) || isPolicyService(ctx, actor), message)
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
  else requireMayEndWork(ctx, group, actor, 'only the owner, the Coordinator, the MissionOwner or policy may fail a WorkItem')
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
  requireMayEndWork(ctx, group, command.actor as ActorRef, 'only the Coordinator, the MissionOwner or policy may cancel a WorkItem')
  nextState(record.doc.state, command.kind)
  return [workDraft('work.cancelled', { workItemId: p.workItemId, reason: p.reason })]
}
