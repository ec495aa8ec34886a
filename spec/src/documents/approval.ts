/**
 * The Approval Decision (`approval.schema.json`, §7.1, §7.3, §12, §14): a signed decision on a
 * Mission revision and Artifact set, a child Mission result, or a WorkItem's execution gate.
 * @module
 */
import Type, { type Static } from 'typebox'
import { constant, document, oneOfValues } from '../schema.js'
import { Actor, HumanActor, Id, SafeInteger, Semver, Sha256, Signature, Timestamp } from './common.js'

/**
 * What is being decided: a root Mission's final result (§7.3), a child Mission's result (§14), or
 * a pre-execution gate of one WorkItem (§12).
 */
export const APPROVAL_KINDS = ['mission_final', 'child_mission', 'work_execution'] as const

/** An approval kind. */
export type ApprovalKind = (typeof APPROVAL_KINDS)[number]

/** Decisions; a revocation is a new decision that names the one it revokes (§7.1). */
export const APPROVAL_DECISIONS = ['approved', 'changes_requested', 'denied', 'revoked'] as const

/** An approval decision. */
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number]

/**
 * An Approval Decision, signed by `approver` over `occurredAt` (§6.4). Approving a Mission result
 * names at least one Artifact; a final Mission approval comes from a human; an execution approval
 * names its WorkItem; a revocation names the revoked Approval.
 */
export const Approval = Type.Object(
  {
    approvalId: Id,
    kind: oneOfValues(APPROVAL_KINDS),
    decision: oneOfValues(APPROVAL_DECISIONS),
    missionId: Id,
    groupId: Id,
    workItemId: Type.Optional(Id),
    missionRevision: SafeInteger,
    artifactHashes: Type.Array(Sha256, { uniqueItems: true }),
    acceptancePolicyVersion: Semver,
    approver: Actor,
    comments: Type.String({ maxLength: 10000 }),
    conditions: Type.Array(Type.String({ minLength: 1, maxLength: 2000 })),
    revokesApprovalId: Type.Optional(Id),
    occurredAt: Timestamp,
    signature: Signature,
  },
  {
    additionalProperties: false,
    allOf: [
      {
        if: {
          properties: { kind: oneOfValues(['mission_final', 'child_mission']), decision: constant('approved') },
          required: ['kind', 'decision'],
        },
        then: { properties: { artifactHashes: { minItems: 1 } } },
      },
      {
        if: { properties: { kind: constant('mission_final') }, required: ['kind'] },
        then: { properties: { approver: HumanActor } },
      },
      {
        if: { properties: { kind: constant('work_execution') }, required: ['kind'] },
        then: { required: ['workItemId'] },
      },
      {
        if: { properties: { decision: constant('revoked') }, required: ['decision'] },
        then: { required: ['revokesApprovalId'] },
      },
    ],
  },
)

/** An Approval Decision. */
export type Approval = Static<typeof Approval>

/** `approval.schema.json` (§7.3, §21). */
export const approvalDocument = document('approval', 'approval.schema.json', 'MissionWeaveProtocol 0.1 Approval Decision', Approval)
