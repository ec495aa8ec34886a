/**
 * Evidence-based review (§13.2): Evidence embedded in `work.submit`, `work.accept_result` and
 * `work.fail` is verified as a signed document, must be bound to the WorkItem it is offered for, and
 * must map onto the acceptance criteria of the Work Contract.
 * @module
 */
import type { Evidence, WorkContract } from '@weft/spec'
import { reject, type HandlerContext } from '../commit/handler.js'
import type { GroupState, WorkItemRecord } from '../model.js'
import type { SubmissionFacts } from './ledgers.js'

/**
 * Verifies each Evidence document (§6.4, through `ctx.verifyDocument`) and checks it is about this
 * Mission, Group and WorkItem, that a `work_item` subject names this WorkItem (a `mission` subject
 * does not belong here), and that no Evidence ID repeats.
 * @throws ProtocolError from verification, or `INVALID_COMMAND` naming the Evidence.
 */
export function requireBoundEvidence(ctx: HandlerContext, group: GroupState, record: WorkItemRecord, evidence: readonly Evidence[]): void {
  const workItemId = record.doc.workItemId
  const seen = new Set<string>()
  for (const e of evidence) {
    ctx.verifyDocument('evidence', e)
    if (seen.has(e.evidenceId)) reject('INVALID_COMMAND', `Evidence ${e.evidenceId} appears twice`, { evidenceId: e.evidenceId })
    seen.add(e.evidenceId)
    const bound = e.missionId === group.missionId && e.groupId === group.groupId && e.workItemId === workItemId
    const subjectOk = e.subject.type === 'artifact' || (e.subject.type === 'work_item' && e.subject.id === workItemId)
    if (!bound || !subjectOk) reject('INVALID_COMMAND', `Evidence ${e.evidenceId} is not about WorkItem ${workItemId}`, { evidenceId: e.evidenceId })
  }
}

/**
 * The acceptance criteria of `contract` that `evidence` leaves uncovered. A criterion is covered by
 * passing Evidence that names it and has one of its required types; with `every`, each required
 * type needs its own passing Evidence.
 */
export function uncoveredCriteria(contract: WorkContract, evidence: readonly Evidence[], mode: 'any' | 'every'): string[] {
  // Plain loops: every submission and review runs this, with a handful of criteria and Evidence.
  const uncovered: string[] = []
  for (const criterion of contract.acceptanceCriteria) {
    const required = criterion.evidenceRequired
    let covered = mode === 'every'
    for (const type of required) {
      const found = passedFor(evidence, criterion.criterionId, type)
      if (mode === 'any' && found) {
        covered = true
        break
      }
      if (mode === 'every' && !found) {
        covered = false
        break
      }
    }
    if (!covered) uncovered.push(criterion.criterionId)
  }
  return uncovered
}

/** Whether some passing Evidence of `type` names `criterionId`. */
function passedFor(evidence: readonly Evidence[], criterionId: string, type: string): boolean {
  for (const e of evidence) if (e.result === 'passed' && e.type === type && e.criterionIds.includes(criterionId)) return true
  return false
}

/**
 * Checks that `evidence` is bound to the WorkItem of `record` ({@link requireBoundEvidence}) and
 * covers every acceptance criterion of its contract with passing Evidence of a required type
 * (§13.2: a submission maps Evidence to the acceptance criteria).
 * @throws ProtocolError `INVALID_COMMAND` with `details.uncoveredCriteria`, or what
 * {@link requireBoundEvidence} throws.
 */
export function checkEvidenceCovers(ctx: HandlerContext, group: GroupState, record: WorkItemRecord, evidence: readonly Evidence[]): void {
  requireBoundEvidence(ctx, group, record, evidence)
  const uncovered = uncoveredCriteria(record.doc.contract, evidence, 'any')
  if (uncovered.length > 0) reject('INVALID_COMMAND', `no passing Evidence covers ${uncovered.join(', ')}`, { uncoveredCriteria: uncovered })
}

/**
 * Files the latest submission of `record` (reducer side). The WorkItem document keeps only Evidence
 * IDs; review needs the documents and the epoch, so `WorkItemRecord.submissionFacts` keeps them.
 */
export function fileSubmission(record: WorkItemRecord, facts: SubmissionFacts): void {
  record.submissionFacts = facts
}

/** The latest submission of `record`, if any. */
export function submissionOf(record: WorkItemRecord): SubmissionFacts | undefined {
  return record.submissionFacts
}

/**
 * Rebuilds `group.acceptedEvidenceIds` from `group.acceptedEvidence` (a state read from a checkpoint,
 * or an array filled by hand).
 */
export function reindexAcceptedEvidence(group: GroupState): void {
  const ids = group.acceptedEvidenceIds
  ids.clear()
  for (const e of group.acceptedEvidence) ids.add(e.evidenceId)
}

/**
 * Appends to `group.acceptedEvidence` each of `evidence` whose ID it does not hold yet (reducer
 * side of §7.3's derived progress), in order.
 */
export function acceptEvidence(group: GroupState, evidence: Iterable<Evidence>): void {
  // The ID set is derived from the array: whenever their sizes part, it is rebuilt first.
  const ids = group.acceptedEvidenceIds
  if (ids.size !== group.acceptedEvidence.length) reindexAcceptedEvidence(group)
  for (const e of evidence) {
    if (ids.has(e.evidenceId)) continue
    ids.add(e.evidenceId)
    group.acceptedEvidence.push(e)
  }
}
