/**
 * What a slot writes for its run, apart from Commands: the signed Evidence (§13.2) and Artifact
 * manifests (§13.1) it produces, the canonical bytes of a checkpoint state (§11.3), a §11.4
 * progress record, and the frozen WorkItem an executor sees (§11.1 isolation). Plain functions of
 * their inputs and the Worker's identity.
 * @module
 */
import { canonicalize, deepFreeze, ProtocolError, sign, UsageError } from '@weft/codec'
import { timestampOf } from '@weft/codec/time'
import type { Artifact, Evidence, WorkProgress } from '@weft/spec'
import type { ArtifactMeta, EvidenceInput, ExecutorResult, ProgressReport, WorkSnapshot } from './executor.js'
import type { FailureFacts } from './retry.js'
import type { CheckpointEnvelope } from './slot.js'
import type { SlotHost, SlotWork } from './slot-host.js'

/** The WorkItem as one run sees it (§11.1): a frozen copy of `work`, sharing nothing with it. */
export function snapshotOf(work: SlotWork): WorkSnapshot {
  return deepFreeze(
    structuredClone({
      workItemId: work.workItemId,
      groupId: work.groupId,
      missionId: work.missionId,
      ownershipEpoch: work.ownershipEpoch,
      contract: work.contract,
      dependencyIds: [...work.dependencyIds],
    }),
  )
}

/**
 * The canonical JSON bytes of a checkpoint envelope (§11.3: the state is identified by their hash).
 * @throws UsageError when the executor's state is not JSON.
 */
export function canonicalEnvelope(env: CheckpointEnvelope): Uint8Array {
  const json = env.state === undefined ? { attempt: env.attempt } : env
  const result = canonicalize(json)
  if (!result.ok) throw new UsageError(`a checkpoint state must be JSON (no canonical form: ${result.reason} at ${result.path || 'the root'})`)
  return result.bytes
}

/** The §11.4 progress record of `report`; `defaultEstimateMs` is asked only when the report revises no completion estimate. */
export function progressOf(report: ProgressReport, defaultEstimateMs: () => number): WorkProgress {
  return {
    currentPhase: report.phase,
    completedMilestones: [...(report.completedMilestones ?? [])],
    nextCheckpoint: report.nextCheckpoint ?? 'next safe point',
    blockers: [...(report.blockers ?? [])],
    updatedCompletionEstimate: timestampOf(report.completionEstimateMs ?? defaultEstimateMs()),
    evidenceIds: [...new Set(report.evidenceIds ?? [])],
  }
}

/** The parts of the Worker a signed document needs. */
type Signer = Pick<SlotHost, 'actor' | 'signingKey' | 'newId' | 'now'>

/** A signed Evidence document about `work` (or the input's subject), produced by this Worker (§13.2). */
export function signEvidence(host: Signer, work: SlotWork, input: EvidenceInput): Evidence {
  const unsigned = {
    evidenceId: host.newId(),
    missionId: work.missionId,
    groupId: work.groupId,
    workItemId: work.workItemId,
    type: input.type,
    subject: input.subject ?? { type: 'work_item' as const, id: work.workItemId },
    criterionIds: [...input.criterionIds],
    method: input.method,
    result: input.result,
    ...(input.details === undefined ? {} : { details: input.details }),
    artifactHashes: [...(input.artifactHashes ?? [])],
    generatedBy: { type: host.actor.type, id: host.actor.id },
    ...(input.toolVersion === undefined ? {} : { toolVersion: input.toolVersion }),
    ...(input.modelVersion === undefined ? {} : { modelVersion: input.modelVersion }),
    createdAt: timestampOf(host.now()),
  }
  return sign('evidence', unsigned, host.signingKey) as unknown as Evidence
}

/**
 * The signed manifest (§13.1) of Artifact bytes `content` with hash `contentHash`, produced under
 * the assignment's pinned Agent Card and capability versions (§6.1). The schema defaults to that of
 * the contract deliverable with the same media type, else the first.
 */
export function signArtifactManifest(host: Signer & Pick<SlotHost, 'artifactUri'>, work: SlotWork, content: Uint8Array, contentHash: string, meta: ArtifactMeta): Artifact {
  const deliverable = work.contract.requiredDeliverables.find((d) => d.mediaType === meta.mediaType) ?? work.contract.requiredDeliverables[0]
  return sign(
    'artifact',
    {
      artifactId: host.newId(),
      contentHash,
      uri: meta.uri ?? host.artifactUri(contentHash),
      sizeBytes: content.byteLength,
      mediaType: meta.mediaType,
      schemaUri: meta.schemaUri ?? deliverable?.schema ?? 'urn:weft:schema:unspecified',
      producer: { agentId: host.actor.id, agentCardVersion: work.agentCardVersion, capabilities: work.capabilityPins.map((c) => ({ id: c.id, version: c.version })) },
      missionId: work.missionId,
      groupId: work.groupId,
      workItemId: work.workItemId,
      sourceArtifactHashes: [...(meta.sourceArtifactHashes ?? [])],
      toolVersions: [...(meta.toolVersions ?? [])],
      modelVersions: [...(meta.modelVersions ?? [])],
      classification: meta.classification ?? 'internal',
      createdAt: timestampOf(host.now()),
    },
    host.signingKey,
  ) as unknown as Artifact
}

/**
 * What an executor's result submits (`work.submit`, §13.2): its Artifact IDs, each once, and its
 * Evidence.
 * @throws ProtocolError `INVALID_COMMAND` when it has no Artifact or no Evidence.
 */
export function submissionOf(result: ExecutorResult): { readonly artifactIds: string[]; readonly evidence: Evidence[] } {
  const artifactIds = [...new Set((result?.artifacts ?? []).map((a) => (typeof a === 'string' ? a : a.artifactId)))]
  const evidence = [...(result?.evidence ?? [])]
  if (artifactIds.length === 0 || evidence.length === 0)
    throw new ProtocolError('INVALID_COMMAND', 'an executor result needs at least one Artifact and one piece of Evidence (§13.2)', { retryable: false })
  return { artifactIds, evidence }
}

/** The failure report a failing run attaches to `work.fail` (§11.4, §13.2): every criterion, the attempts made, why it stopped. */
export function failureReportOf(work: SlotWork, attempt: number, failure: FailureFacts, why: string): EvidenceInput {
  return {
    type: 'failure_report',
    criterionIds: work.contract.acceptanceCriteria.map((c) => c.criterionId),
    method: `Executor run, attempt ${attempt} of at most ${work.contract.retryPolicy.maxAttempts} under the contract retry policy (§11.4).`,
    result: 'failed',
    details: { code: failure.code, message: failure.message.slice(0, 2000), attempts: attempt, stopped: why },
  }
}
