/**
 * Payload schemas of every catalogued Event kind. The normative Event envelope leaves `payload` a
 * free object; these schemas fill that gap (ARCHITECTURE, "Payload contract").
 *
 * Events state what became true in absolute terms: relative durations of the causing Command
 * become absolute instants (`...ExpiresAt`, `resumeBy`), and defaults are written out. The instant
 * of the fact itself is the envelope's `occurredAt`, the actor and cause are envelope members, so
 * payloads do not repeat them. An Event carries enough to rebuild state by folding the log: the
 * signed documents a Command brought in (Evidence, manifests, Approvals, ...) are kept whole.
 * @module
 */
import Type, { type Static, type TSchema } from 'typebox'
import type { EventKind } from '../catalog/events.js'
import {
  Actor,
  CapabilityRef,
  Id,
  PositiveInteger,
  ResourceBudget,
  SafeInteger,
  Sha256,
  Timestamp,
} from '../documents/common.js'
import { constant, oneOfValues } from '../schema.js'
import {
  AgentCardDocument,
  ApprovalDocument,
  ArtifactManifest,
  CheckpointRecord,
  ChildFailurePolicyShape,
  CommandKindShape,
  ContextPackageDocument,
  ConversationDocument,
  CooperationPolicyName,
  DelegationGrantShape,
  EvidenceDocument,
  GroupDocument,
  LeaseDocument,
  MAX_OFFER_CANDIDATES,
  MembershipDocument,
  MessageDocument,
  MissionCoordinatorShape,
  MissionDocument,
  OperationName,
  ProgressShape,
  ReasonText,
  RemainingBudget,
  ScheduleEstimateShape,
  SelectionBasisShape,
  UsageDelta,
  UsageTotals,
  WorkContractDocument,
  WorkItemDocument,
  WorkOfferShape,
} from './parts.js'

const closed = { additionalProperties: false } as const

const DependencyIds = Type.Array(Id, { uniqueItems: true })
/** Worker-reported failure names both its Ownership Epoch and Execution Lease, or neither. */
const epochAndLeaseTogether = {
  dependentRequired: { ownershipEpoch: ['executionLeaseId'], executionLeaseId: ['ownershipEpoch'] },
}

// ---------------------------------------------------------------------------------------------
// Missions (§7, §14)
// ---------------------------------------------------------------------------------------------

/**
 * `mission.created` (§7.1, §14): the genesis of a Group. Holds the Mission (with `parent` for a
 * child Mission), the Group, its Group-level planning Conversation, the Coordinator lease, and the
 * first Memberships (MissionOwner and Coordinator, both with complete visibility, §8).
 */
export const MissionCreatedPayload = Type.Object(
  {
    mission: MissionDocument,
    group: GroupDocument,
    conversation: ConversationDocument,
    coordinatorLease: LeaseDocument,
    memberships: Type.Array(MembershipDocument, { minItems: 2 }),
  },
  closed,
)

/**
 * `mission.coordinator.assigned` (§7.2): the new Coordinator, its lease under the new Coordinator
 * Epoch and the Context Package it received. `replacedCoordinatorEpoch` names the fenced epoch.
 */
export const MissionCoordinatorAssignedPayload = Type.Object(
  {
    coordinator: MissionCoordinatorShape,
    coordinatorLease: LeaseDocument,
    contextPackage: ContextPackageDocument,
    replacedCoordinatorEpoch: Type.Optional(PositiveInteger),
    reason: Type.Optional(ReasonText),
  },
  closed,
)

/** `mission.coordinator.renewed` (§7.2): the lease's new expiry and renewal count. */
export const MissionCoordinatorRenewedPayload = Type.Object(
  {
    coordinatorEpoch: PositiveInteger,
    leaseId: Id,
    leaseExpiresAt: Timestamp,
    renewalCount: PositiveInteger,
  },
  closed,
)

/** `mission.submitted_for_approval` (§7.3): the exact revision and Artifact set under decision. */
export const MissionSubmittedForApprovalPayload = Type.Object(
  {
    missionRevision: SafeInteger,
    artifactHashes: Type.Array(Sha256, { minItems: 1, uniqueItems: true }),
  },
  closed,
)

/** `mission.approved` (§7.3): the signed Approval; the Mission is now immutable. */
export const MissionApprovedPayload = Type.Object({ approval: ApprovalDocument }, closed)

/** `mission.changes_requested` (§7.3): the signed change request; earlier submissions remain in history. */
export const MissionChangesRequestedPayload = Type.Object({ approval: ApprovalDocument }, closed)

/**
 * `mission.cancelled` (§7.1): why. When caused by the parent's cancellation the envelope's cause is
 * that Event.
 */
export const MissionCancelledPayload = Type.Object({ reason: ReasonText }, closed)

/** `mission.terminated` (§7.1, §14): why, with structured failure Evidence for a parent when there is one. */
export const MissionTerminatedPayload = Type.Object(
  {
    reason: ReasonText,
    evidence: Type.Optional(Type.Array(EvidenceDocument)),
  },
  closed,
)

/**
 * `mission.child.created` (§14, §10.2), in the parent Group: the link between the parent WorkItem
 * (now `blocked`, its ownership fenced: the ownership lease and any Execution Lease of
 * `fencedOwnershipEpoch` are revoked, §11.3) and the child Mission whose Group opens with its own
 * `mission.created`. Budget and deadline are what the child received from the parent.
 */
export const MissionChildCreatedPayload = Type.Object(
  {
    parentWorkItemId: Id,
    childMissionId: Id,
    childGroupId: Id,
    depth: PositiveInteger,
    coordinatorAgentId: Id,
    budget: ResourceBudget,
    deadline: Timestamp,
    childFailurePolicy: ChildFailurePolicyShape,
    fencedOwnershipEpoch: Type.Optional(PositiveInteger),
  },
  closed,
)

/**
 * `mission.follow_up.created` (§7.1): the genesis of a follow-up Mission's Group, as for
 * `mission.created`, plus why it exists and, when it revokes the earlier Approval, the signed
 * revocation (the original Approval is never erased).
 */
export const MissionFollowUpCreatedPayload = Type.Object(
  {
    mission: MissionDocument,
    group: GroupDocument,
    conversation: ConversationDocument,
    coordinatorLease: LeaseDocument,
    memberships: Type.Array(MembershipDocument, { minItems: 2 }),
    reason: ReasonText,
    approvalRevocation: Type.Optional(ApprovalDocument),
  },
  closed,
)

// ---------------------------------------------------------------------------------------------
// Membership and delegation (§8, §9.1)
// ---------------------------------------------------------------------------------------------

/** `membership.changed` (§8): the Membership as it now stands, with its current epoch. */
export const MembershipChangedPayload = Type.Object({ membership: MembershipDocument }, closed)

/** `membership.ended` (§8): which Membership ended at which epoch, and why. */
export const MembershipEndedPayload = Type.Object(
  {
    membershipId: Id,
    member: Actor,
    membershipEpoch: PositiveInteger,
    reason: ReasonText,
  },
  closed,
)

/** `membership.delegation.granted` (§9.1): the complete, persisted Grant. */
export const MembershipDelegationGrantedPayload = Type.Object({ grant: DelegationGrantShape }, closed)

// ---------------------------------------------------------------------------------------------
// Messages (§9): the payload is the Committed Message itself
// ---------------------------------------------------------------------------------------------

/** `message.posted` (§9): the Committed Message (`kind: message`, `authority: false`). */
export const MessagePostedPayload = MessageDocument
/** `message.corrected` (§9.1): the correcting Message (`kind: correction`). */
export const MessageCorrectedPayload = MessageDocument
/** `message.retracted` (§9.1): the retracting Message (`kind: retraction`). */
export const MessageRetractedPayload = MessageDocument
/** `message.redacted` (§9.1): the redacting Message (`kind: redaction`) with its policy reason. */
export const MessageRedactedPayload = MessageDocument

// ---------------------------------------------------------------------------------------------
// WorkItems (§10, §11, §13)
// ---------------------------------------------------------------------------------------------

/** `work.proposed` (§10.2): the open proposal; the proposer is the Event actor. */
export const WorkProposedPayload = Type.Object(
  {
    proposalId: Id,
    contract: WorkContractDocument,
    dependencyIds: DependencyIds,
    parentWorkItemId: Type.Optional(Id),
  },
  closed,
)

/**
 * `work.authorized` (§10.2, §9.1): the new WorkItem in state `open` with its Conversation, plus the
 * links the WorkItem document does not hold.
 */
export const WorkAuthorizedPayload = Type.Object(
  {
    workItem: WorkItemDocument,
    dependencyIds: DependencyIds,
    proposalId: Type.Optional(Id),
    parentWorkItemId: Type.Optional(Id),
    delegationGrantId: Type.Optional(Id),
    emergencyOverride: Type.Optional(constant(true)),
  },
  closed,
)

/**
 * `work.offer.created` (§10.3): the candidates, one pending offer record each (pinning the Agent
 * Card version), the absolute expiry and the selection basis. `fencedOwnershipEpoch` names an
 * expired owner fenced before the offer (§10.2).
 */
export const WorkOfferCreatedPayload = Type.Object(
  {
    workItemId: Id,
    candidateAgentIds: Type.Array(Id, { minItems: 1, maxItems: MAX_OFFER_CANDIDATES, uniqueItems: true }),
    offers: Type.Array(WorkOfferShape, { minItems: 1, maxItems: MAX_OFFER_CANDIDATES }),
    offerExpiresAt: Timestamp,
    selectionBasis: SelectionBasisShape,
    delegationGrantId: Type.Optional(Id),
    emergencyOverride: Type.Optional(constant(true)),
    fencedOwnershipEpoch: Type.Optional(PositiveInteger),
  },
  closed,
)

/**
 * `work.offer.accepted` (§10.3, §11.3, §6.1): the winner, its new Ownership Epoch and ownership
 * lease with start-by deadline, the pinned Agent Card and capability versions, and the losing
 * candidates whose offers were withdrawn in the same transaction.
 */
export const WorkOfferAcceptedPayload = Type.Object(
  {
    workItemId: Id,
    assigneeId: Id,
    // §11.3: the ownership lease binds the Session Epoch the Worker accepted under; recorded so
    // replay rebuilds the lease exactly, whatever sessions the Agent opened later.
    sessionEpoch: PositiveInteger,
    ownershipEpoch: PositiveInteger,
    ownershipLeaseId: Id,
    ownershipLeaseExpiresAt: Timestamp,
    startBy: Timestamp,
    agentCardVersion: PositiveInteger,
    capabilityPins: Type.Array(CapabilityRef, { minItems: 1 }),
    withdrawnAgentIds: Type.Array(Id, { uniqueItems: true }),
    scheduleEstimate: Type.Optional(ScheduleEstimateShape),
  },
  closed,
)

/** Why a Work Contract was revised (§10.1, §10.4). */
export const CONTRACT_REVISION_REASONS = ['dependency_added', 'offer_correction'] as const

/**
 * `work.contract.revised` (§10.1, §10.4, §15.2): the new contract version, the complete dependency
 * set after the change, and whether the current owner must accept again.
 */
export const WorkContractRevisedPayload = Type.Object(
  {
    workItemId: Id,
    contract: WorkContractDocument,
    previousContractVersion: PositiveInteger,
    revisionReason: oneOfValues(CONTRACT_REVISION_REASONS),
    dependencyIds: DependencyIds,
    addedDependencyId: Type.Optional(Id),
    requiresReacceptance: Type.Boolean(),
  },
  {
    ...closed,
    allOf: [
      {
        if: { properties: { revisionReason: constant('dependency_added') }, required: ['revisionReason'] },
        then: { required: ['addedDependencyId'] },
      },
    ],
  },
)

/** `work.started` (§11.3): the new Execution Lease and its expiry. */
export const WorkStartedPayload = Type.Object(
  {
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    executionLease: LeaseDocument,
    executionLeaseExpiresAt: Timestamp,
  },
  closed,
)

/** `work.progressed` (§11.3, §11.4): the renewed Execution Lease, with progress when reported. */
export const WorkProgressedPayload = Type.Object(
  {
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    executionLease: LeaseDocument,
    executionLeaseExpiresAt: Timestamp,
    progress: Type.Optional(ProgressShape),
  },
  closed,
)

/**
 * `work.checkpointed` (§11.3): the checkpoint; the Execution Lease is released and the retained
 * ownership lasts until `resumeBy`.
 */
export const WorkCheckpointedPayload = Type.Object(
  {
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    executionLeaseId: Id,
    checkpoint: CheckpointRecord,
    resumeBy: Timestamp,
    progress: Type.Optional(ProgressShape),
  },
  closed,
)

/** `work.blocked` (§11.4): checkpoint, blocker and the blocked lease's expiry. */
export const WorkBlockedPayload = Type.Object(
  {
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    executionLeaseId: Id,
    checkpoint: CheckpointRecord,
    reason: ReasonText,
    requiredResolution: Type.Optional(ReasonText),
    blockedLeaseExpiresAt: Timestamp,
  },
  closed,
)

/**
 * `work.unblocked` (§10.2, §11.4): back to `queued` under the still-live Ownership Epoch, or to
 * `open` when ownership expired meanwhile.
 */
export const WorkUnblockedPayload = Type.Object(
  {
    workItemId: Id,
    nextState: oneOfValues(['queued', 'open'] as const),
    ownershipEpoch: Type.Optional(PositiveInteger),
    resolution: Type.Optional(ReasonText),
  },
  {
    ...closed,
    allOf: [
      {
        if: { properties: { nextState: constant('queued') }, required: ['nextState'] },
        then: { required: ['ownershipEpoch'] },
        else: { not: { required: ['ownershipEpoch'] } },
      },
    ],
  },
)

/** `work.submitted` (§13.2): the Artifacts (by ID and content hash) and the Evidence; the Execution Lease is released. */
export const WorkSubmittedPayload = Type.Object(
  {
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    executionLeaseId: Id,
    artifactIds: Type.Array(Id, { minItems: 1, uniqueItems: true }),
    artifactHashes: Type.Array(Sha256, { minItems: 1, uniqueItems: true }),
    evidence: Type.Array(EvidenceDocument, { minItems: 1 }),
  },
  closed,
)

/**
 * `work.result.accepted` (§13.2, §14): the review Evidence, or, when a linked child Mission was
 * approved, that child's Approval (which becomes the parent WorkItem's Evidence).
 */
export const WorkResultAcceptedPayload = Type.Object(
  {
    workItemId: Id,
    evidence: Type.Array(EvidenceDocument),
    childMissionId: Type.Optional(Id),
    childApproval: Type.Optional(ApprovalDocument),
  },
  {
    ...closed,
    anyOf: [{ properties: { evidence: { minItems: 1 } } }, { required: ['childMissionId', 'childApproval'] }],
  },
)

/**
 * `work.failed` (§10.2, §11.4, §14): why, with the failure Evidence; epoch and lease appear when the
 * owner reported it. Failure propagated from a Mission or child may carry no Evidence of its own.
 */
export const WorkFailedPayload = Type.Object(
  {
    workItemId: Id,
    reason: ReasonText,
    ownershipEpoch: Type.Optional(PositiveInteger),
    executionLeaseId: Type.Optional(Id),
    evidence: Type.Array(EvidenceDocument),
  },
  { ...closed, ...epochAndLeaseTogether },
)

/** `work.cancelled` (§10.2): why; leases and tokens of the WorkItem are revoked (§12). */
export const WorkCancelledPayload = Type.Object({ workItemId: Id, reason: ReasonText }, closed)

// ---------------------------------------------------------------------------------------------
// Artifacts, approvals, policy, archival (§7.4, §12, §13, §20)
// ---------------------------------------------------------------------------------------------

/** `artifact.published` (§13.1): the signed manifest and the execution it came from. */
export const ArtifactPublishedPayload = Type.Object(
  {
    artifact: ArtifactManifest,
    ownershipEpoch: PositiveInteger,
    executionLeaseId: Id,
  },
  closed,
)

/** `approval.execution.granted` (§12): the Execution Approval with its absolute expiry; the approver is the Event actor. */
export const ApprovalExecutionGrantedPayload = Type.Object(
  {
    approvalId: Id,
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    operations: Type.Array(OperationName, { minItems: 1, uniqueItems: true }),
    resources: Type.Array(Id, { uniqueItems: true }),
    budget: ResourceBudget,
    expiresAt: Timestamp,
    comments: Type.Optional(Type.String({ maxLength: 10000 })),
  },
  closed,
)

/**
 * A Cooperation Override Grant with every binding §20 lists: Mission, Group, policy name,
 * beneficiary, target Command kind and Action ID, reason, approver, grant time and expiry.
 */
export const CooperationOverrideGrant = Type.Object(
  {
    grantId: Id,
    missionId: Id,
    groupId: Id,
    policyName: CooperationPolicyName,
    beneficiary: Actor,
    targetCommandKind: CommandKindShape,
    targetActionId: Id,
    reason: ReasonText,
    approver: Actor,
    grantedAt: Timestamp,
    expiresAt: Timestamp,
  },
  closed,
)

/** A Cooperation Override Grant. */
export type CooperationOverrideGrant = Static<typeof CooperationOverrideGrant>

/** `policy.cooperation_override.granted` (§20): the complete, unconsumed grant. */
export const PolicyCooperationOverrideGrantedPayload = Type.Object({ grant: CooperationOverrideGrant }, closed)

/**
 * `group.snapshot.created` (§7.4, §16): a reference to the signed snapshot, which is stored by
 * content hash outside the log (the snapshot's own `eventIds` list grows with the Group).
 */
export const GroupSnapshotCreatedPayload = Type.Object(
  {
    snapshotId: Id,
    throughSequence: PositiveInteger,
    stateHash: Sha256,
    snapshotArtifactHash: Sha256,
  },
  closed,
)

/** `group.archived` (§7.4): the snapshot the archived Group points at. */
export const GroupArchivedPayload = Type.Object({ archiveSnapshotId: Id }, closed)

// ---------------------------------------------------------------------------------------------
// Reference extension Events (§6, §11, §12)
// ---------------------------------------------------------------------------------------------

/** `ext.missionweaveprotocol.registry.agent_card_registered` (§6.1): the registered, signed card. */
export const AgentCardRegisteredPayload = Type.Object({ card: AgentCardDocument }, closed)

/** `ext.missionweaveprotocol.identity.session_opened` (§6.3): the Agent and its new Session Epoch. */
export const SessionOpenedPayload = Type.Object({ agentId: Id, sessionEpoch: PositiveInteger }, closed)

/**
 * The §11.5 offline-reconciliation facts of a usage charge: the historical execution session and
 * the reconciling one, the buffering window, and the buffered Command that carried the delta.
 */
export const OfflineReconciliation = Type.Object(
  {
    historicalSessionEpoch: PositiveInteger,
    reconciliationSessionEpoch: PositiveInteger,
    disconnectedAt: Timestamp,
    bufferedAt: Timestamp,
    graceDeadline: Timestamp,
    historicalLeaseExpiresAt: Timestamp,
    reconciledActionId: Id,
  },
  closed,
)

/** Offline-reconciliation facts. */
export type OfflineReconciliation = Static<typeof OfflineReconciliation>

/**
 * `ext.missionweaveprotocol.core.resource_usage_recorded` (§12, §11.5): the delta, the WorkItem's
 * cumulative usage and remaining budget after it, and for a reconciled offline charge both
 * sessions involved.
 */
export const ResourceUsageRecordedPayload = Type.Object(
  {
    workItemId: Id,
    executionLeaseId: Id,
    ownershipEpoch: PositiveInteger,
    usageDelta: UsageDelta,
    cumulativeUsage: UsageTotals,
    remainingBudget: RemainingBudget,
    offlineReconciliation: Type.Optional(OfflineReconciliation),
  },
  closed,
)

/**
 * `ext.missionweaveprotocol.core.work_execution_lease_revoked` (§11.3; name chosen by Weft): a
 * replacement Session revoked the Agent's Execution Lease; the WorkItem is `queued` again under the
 * same Ownership Epoch.
 */
export const WorkExecutionLeaseRevokedPayload = Type.Object(
  {
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    executionLeaseId: Id,
    agentId: Id,
    revokedSessionEpoch: PositiveInteger,
    reason: ReasonText,
  },
  closed,
)

// ---------------------------------------------------------------------------------------------

/** The payload schema of every catalogued Event kind. */
export const EventPayloads = {
  'mission.created': MissionCreatedPayload,
  'mission.coordinator.assigned': MissionCoordinatorAssignedPayload,
  'mission.coordinator.renewed': MissionCoordinatorRenewedPayload,
  'mission.submitted_for_approval': MissionSubmittedForApprovalPayload,
  'mission.approved': MissionApprovedPayload,
  'mission.changes_requested': MissionChangesRequestedPayload,
  'mission.cancelled': MissionCancelledPayload,
  'mission.terminated': MissionTerminatedPayload,
  'mission.child.created': MissionChildCreatedPayload,
  'mission.follow_up.created': MissionFollowUpCreatedPayload,
  'membership.changed': MembershipChangedPayload,
  'membership.ended': MembershipEndedPayload,
  'membership.delegation.granted': MembershipDelegationGrantedPayload,
  'message.posted': MessagePostedPayload,
  'message.corrected': MessageCorrectedPayload,
  'message.retracted': MessageRetractedPayload,
  'message.redacted': MessageRedactedPayload,
  'work.proposed': WorkProposedPayload,
  'work.authorized': WorkAuthorizedPayload,
  'work.offer.created': WorkOfferCreatedPayload,
  'work.offer.accepted': WorkOfferAcceptedPayload,
  'work.contract.revised': WorkContractRevisedPayload,
  'work.started': WorkStartedPayload,
  'work.progressed': WorkProgressedPayload,
  'work.checkpointed': WorkCheckpointedPayload,
  'work.blocked': WorkBlockedPayload,
  'work.unblocked': WorkUnblockedPayload,
  'work.submitted': WorkSubmittedPayload,
  'work.result.accepted': WorkResultAcceptedPayload,
  'work.failed': WorkFailedPayload,
  'work.cancelled': WorkCancelledPayload,
  'artifact.published': ArtifactPublishedPayload,
  'approval.execution.granted': ApprovalExecutionGrantedPayload,
  'policy.cooperation_override.granted': PolicyCooperationOverrideGrantedPayload,
  'group.snapshot.created': GroupSnapshotCreatedPayload,
  'group.archived': GroupArchivedPayload,
  'ext.missionweaveprotocol.registry.agent_card_registered': AgentCardRegisteredPayload,
  'ext.missionweaveprotocol.identity.session_opened': SessionOpenedPayload,
  'ext.missionweaveprotocol.core.resource_usage_recorded': ResourceUsageRecordedPayload,
  'ext.missionweaveprotocol.core.work_execution_lease_revoked': WorkExecutionLeaseRevokedPayload,
} as const satisfies { readonly [K in EventKind]: TSchema }

/** The static payload type of an Event kind. */
export type EventPayload<K extends EventKind> = Static<(typeof EventPayloads)[K]>
