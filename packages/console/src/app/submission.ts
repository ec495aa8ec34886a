/**
 * What the Approval page shows (§7.3), as the demo's MissionOwner describes a submission: each
 * submitted Artifact with the deliverable it delivers and the Evidence citing it per acceptance
 * criterion, and the Mission's definition of done with the Evidence naming each criterion.
 * @module
 */
import type { AcceptanceCriterion, Artifact, Evidence, WorkContract } from '@weft/spec'
import type { EvidenceSource, EvidenceView, GroupView, SubmissionView } from './model.js'

/** One piece of Evidence that cites a submitted Artifact, by criterion. */
export interface CitingEvidence {
  readonly evidenceId: string
  readonly type: Evidence['type']
  readonly result: Evidence['result']
  readonly source: EvidenceSource
  readonly method: string
  readonly generatedBy: string
}

/** A submitted Artifact, described for the decision. */
export interface SubmittedArtifact {
  readonly hash: string
  readonly manifest: Artifact | undefined
  readonly workItemId: string | undefined
  /** The Work Contract deliverable it delivers (same media type and schema). */
  readonly deliverable: WorkContract['requiredDeliverables'][number] | undefined
  /** The producing WorkItem's criteria, each with the Evidence citing this Artifact. */
  readonly criteria: readonly { readonly criterion: AcceptanceCriterion | undefined; readonly criterionId: string; readonly evidence: readonly CitingEvidence[] }[]
}

/** Describes each hash of the pending submission: manifest, deliverable and Evidence per criterion. */
export function describeSubmission(view: GroupView, submission: SubmissionView): SubmittedArtifact[] {
  return submission.artifactHashes.map((hash) => {
    const manifest = view.artifacts.get(hash)?.manifest
    const w = manifest === undefined ? undefined : view.workItems.get(manifest.workItemId)
    const contract = w?.contract
    const citing = [...view.evidence.values()].filter((e) => e.evidence.artifactHashes.includes(hash) || (w !== undefined && e.evidence.workItemId === w.workItemId && e.source !== 'failure'))
    const ids = [...new Set([...(contract?.acceptanceCriteria.map((c) => c.criterionId) ?? []), ...citing.flatMap((e) => e.evidence.criterionIds)])]
    return {
      hash,
      manifest,
      workItemId: manifest?.workItemId,
      deliverable: manifest === undefined ? undefined : contract?.requiredDeliverables.find((d) => d.mediaType === manifest.mediaType && d.schema === manifest.schemaUri),
      criteria: ids.map((criterionId) => ({
        criterionId,
        criterion: contract?.acceptanceCriteria.find((c) => c.criterionId === criterionId),
        evidence: citing
          .filter((e) => e.evidence.criterionIds.includes(criterionId))
          .map((e) => ({ evidenceId: e.evidence.evidenceId, type: e.evidence.type, result: e.evidence.result, source: e.source, method: e.evidence.method, generatedBy: e.evidence.generatedBy.id })),
      })),
    }
  })
}

/** The Mission's definition of done with the Evidence naming each criterion. */
export function definitionOfDoneEvidence(view: GroupView): { readonly criterion: AcceptanceCriterion; readonly evidence: readonly EvidenceView[] }[] {
  return (view.mission?.definitionOfDone ?? []).map((criterion) => ({ criterion, evidence: [...view.evidence.values()].filter((e) => e.evidence.criterionIds.includes(criterion.criterionId)) }))
}
