/**
 * Evidence (`evidence.schema.json`, §13.2): a signed record that a subject was checked against
 * acceptance criteria, by what method, with what result and on which Artifacts.
 * @module
 */
import Type, { type Static } from 'typebox'
import { document, freeObject, oneOfValues } from '../schema.js'
import { Actor, Id, Sha256, Signature, Timestamp } from './common.js'

/**
 * Evidence types: the seven an acceptance criterion may require (§10.1) plus `failure_report` for
 * failed work (§11.4).
 */
export const EVIDENCE_TYPES = ['artifact_integrity', 'schema_validation', 'deterministic_test', 'business_rule', 'reviewer_assessment', 'human_review', 'policy_check', 'failure_report'] as const

/** An Evidence type. */
export type EvidenceType = (typeof EVIDENCE_TYPES)[number]

/** What Evidence can be about. */
export const EVIDENCE_SUBJECT_TYPES = ['work_item', 'artifact', 'mission'] as const

/** An Evidence subject type. */
export type EvidenceSubjectType = (typeof EVIDENCE_SUBJECT_TYPES)[number]

/** Outcomes of a check. */
export const EVIDENCE_RESULTS = ['passed', 'failed', 'inconclusive'] as const

/** An Evidence result. */
export type EvidenceResult = (typeof EVIDENCE_RESULTS)[number]

/** The checked subject: a WorkItem, Mission or Artifact, named by ID or (for content) by hash. */
export const EvidenceSubject = Type.Object(
  {
    type: oneOfValues(EVIDENCE_SUBJECT_TYPES),
    id: Type.Union([Id, Sha256]),
  },
  { additionalProperties: false },
)

/** The subject of Evidence. */
export type EvidenceSubject = Static<typeof EvidenceSubject>

/**
 * Evidence (§13.2). Signed by `generatedBy` over `createdAt` (§6.4); it records method and result,
 * never private reasoning.
 */
export const Evidence = Type.Object(
  {
    evidenceId: Id,
    missionId: Id,
    groupId: Id,
    workItemId: Id,
    type: oneOfValues(EVIDENCE_TYPES),
    subject: EvidenceSubject,
    criterionIds: Type.Array(Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._-]{0,127}$' }), {
      minItems: 1,
      uniqueItems: true,
    }),
    method: Type.String({ minLength: 1, maxLength: 4000 }),
    result: oneOfValues(EVIDENCE_RESULTS),
    details: Type.Optional(freeObject()),
    artifactHashes: Type.Array(Sha256, { uniqueItems: true }),
    generatedBy: Actor,
    toolVersion: Type.Optional(Type.String({ maxLength: 500 })),
    modelVersion: Type.Optional(Type.String({ maxLength: 500 })),
    createdAt: Timestamp,
    signature: Signature,
  },
  { additionalProperties: false },
)

/** Evidence. */
export type Evidence = Static<typeof Evidence>

/** `evidence.schema.json` (§13.2, §21). */
export const evidenceDocument = document('evidence', 'evidence.schema.json', 'MissionWeaveProtocol 0.1 Evidence', Evidence)
