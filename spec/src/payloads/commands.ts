/**
 * Payload schemas of every catalogued Command kind. The normative Command envelope leaves
 * `payload` a free object; these schemas fill that gap (ARCHITECTURE, "Payload contract").
 *
 * Conventions:
 * - camelCase keys, `additionalProperties: false` everywhere;
 * - leases and offer lifetimes are relative seconds (`...Seconds`); the authority turns them into
 *   absolute instants in the resulting Events. Grant expiries and deadlines the issuer fixes are
 *   absolute timestamps, as in the reference runtime;
 * - what the envelope already carries (`groupId`, epochs, `expectedRevision`,
 *   `cooperationOverrideGrantId`, the actor) is never repeated in a payload;
 * - signed documents the protocol defines (Work Contract, Evidence, Artifact manifest, Approval,
 *   Context Package, Agent Card, Group Snapshot) are embedded whole, by `$ref`.
 * @module
 */
import Type, { type Static, type TSchema } from 'typebox'
import type { CommandKind } from '../catalog/commands.js'
import {
  AcceptanceCriterion,
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
  ApprovalPolicyShape,
  ArtifactManifest,
  CheckpointRecord,
  ChildFailurePolicyShape,
  CommandKindShape,
  ContextPackageDocument,
  CooperationPolicyName,
  EvidenceDocument,
  FullResourceBudget,
  GroupSnapshotDocument,
  MAX_OFFER_CANDIDATES,
  MembershipRoleShape,
  MembershipScopesShape,
  MessageContentShape,
  ObjectiveText,
  OperationName,
  PinnedProfileShape,
  ProgressShape,
  ReasonText,
  RelativeSeconds,
  ScheduleEstimateShape,
  SelectionBasisShape,
  TitleText,
  UsageDelta,
  WorkContractDocument,
} from './parts.js'

const closed = { additionalProperties: false } as const

const DependencyIds = Type.Array(Id, { uniqueItems: true })
const EvidenceList = Type.Array(EvidenceDocument, { minItems: 1 })
const MessageContent = Type.Array(MessageContentShape, { minItems: 1 })

// ---------------------------------------------------------------------------------------------
// Missions (§7, §14)
// ---------------------------------------------------------------------------------------------

/**
 * `mission.create` (§7.1): everything a root Mission must declare. The new Group's ID is the
 * envelope's `groupId`; the signing human becomes the MissionOwner. `title` names the Group-level
 * planning Conversation. For a root Mission `approvalPolicy.finalHumanApproval` must be `true`
 * (the Mission document enforces it).
 */
export const MissionCreatePayload = Type.Object(
  {
    missionId: Id,
    title: TitleText,
    objective: ObjectiveText,
    definitionOfDone: Type.Array(AcceptanceCriterion, { minItems: 1 }),
    deadline: Timestamp,
    budget: ResourceBudget,
    approvalPolicy: ApprovalPolicyShape,
    coordinatorAgentId: Id,
    coordinatorLeaseSeconds: RelativeSeconds,
    pinnedProfiles: Type.Optional(Type.Array(PinnedProfileShape, { uniqueItems: true })),
  },
  closed,
)

/**
 * `mission.assign_coordinator` (§7.2): appoints a Coordinator under the next Coordinator Epoch.
 * The replacement must receive a signed Context Package and reconcile WorkItem state before it
 * assigns anything.
 */
export const MissionAssignCoordinatorPayload = Type.Object(
  {
    coordinatorAgentId: Id,
    leaseSeconds: RelativeSeconds,
    contextPackage: ContextPackageDocument,
    reason: Type.Optional(ReasonText),
  },
  closed,
)

/** `mission.renew_coordinator` (§7.2): the lease is named by the envelope's Coordinator Epoch. */
export const MissionRenewCoordinatorPayload = Type.Object({ leaseSeconds: RelativeSeconds }, closed)

/**
 * `mission.submit_for_approval` (§7.3): the exact Artifact set. `missionRevision` names the revision
 * explicitly; when absent, the envelope's `expectedRevision` (or the current revision) is the one
 * submitted, as in the reference runtime.
 */
export const MissionSubmitForApprovalPayload = Type.Object(
  {
    missionRevision: Type.Optional(SafeInteger),
    artifactHashes: Type.Array(Sha256, { minItems: 1, uniqueItems: true }),
  },
  closed,
)

/**
 * `mission.approve` (§7.3, §14): the MissionOwner's signed Approval (`kind` `mission_final` or
 * `child_mission`, `decision` `approved`) of one revision and Artifact set. Embedded whole so the
 * decision stays verifiable on its own.
 */
export const MissionApprovePayload = Type.Object({ approval: ApprovalDocument }, closed)

/**
 * `mission.request_changes` (§7.3): the MissionOwner's signed change request, an Approval with
 * `decision: changes_requested`; feedback goes in its `comments` and `conditions`.
 */
export const MissionRequestChangesPayload = Type.Object({ approval: ApprovalDocument }, closed)

/** `mission.cancel` (§7.1, §12): leases and tokens are revoked and cleanup follows the contracts. */
export const MissionCancelPayload = Type.Object({ reason: ReasonText }, closed)

/**
 * `mission.terminate` (§7.1, §14): ends the Mission as failed. A child Mission's failure should
 * carry structured failure Evidence for the parent WorkItem.
 */
export const MissionTerminatePayload = Type.Object(
  {
    reason: ReasonText,
    evidence: Type.Optional(EvidenceList),
  },
  closed,
)

/**
 * `mission.create_child` (§14): promotes the parent WorkItem to a child Mission. The envelope names
 * the parent Group, so the child's new Mission and Group IDs are in the payload. Budget and deadline
 * must fit within the parent WorkItem; capabilities and resource access stay those of the parent's
 * Work Contract. The parent Coordinator becomes the child's MissionOwner.
 */
export const MissionCreateChildPayload = Type.Object(
  {
    parentWorkItemId: Id,
    childMissionId: Id,
    childGroupId: Id,
    title: TitleText,
    objective: ObjectiveText,
    definitionOfDone: Type.Array(AcceptanceCriterion, { minItems: 1 }),
    deadline: Timestamp,
    budget: ResourceBudget,
    approvalPolicy: ApprovalPolicyShape,
    coordinatorAgentId: Id,
    coordinatorLeaseSeconds: RelativeSeconds,
    childFailurePolicy: ChildFailurePolicyShape,
    pinnedProfiles: Type.Optional(Type.Array(PinnedProfileShape, { uniqueItems: true })),
  },
  closed,
)

/**
 * `mission.create_follow_up` (§7.1): a new root Mission linked to an approved one, which stays
 * untouched. When the follow-up revokes the earlier Approval, the signed revocation (an Approval
 * with `decision: revoked` and `revokesApprovalId`) travels with it.
 */
export const MissionCreateFollowUpPayload = Type.Object(
  {
    missionId: Id,
    followUpToMissionId: Id,
    reason: ReasonText,
    title: TitleText,
    objective: ObjectiveText,
    definitionOfDone: Type.Array(AcceptanceCriterion, { minItems: 1 }),
    deadline: Timestamp,
    budget: ResourceBudget,
    approvalPolicy: ApprovalPolicyShape,
    coordinatorAgentId: Id,
    coordinatorLeaseSeconds: RelativeSeconds,
    approvalRevocation: Type.Optional(ApprovalDocument),
    pinnedProfiles: Type.Optional(Type.Array(PinnedProfileShape, { uniqueItems: true })),
  },
  closed,
)

// ---------------------------------------------------------------------------------------------
// Membership and delegation (§8, §9.1)
// ---------------------------------------------------------------------------------------------

/**
 * `membership.change` (§8): grants or alters one Membership. A provisional Membership (just-in-time
 * Worker Membership) expires and names the Context Package the candidate received. The visibility
 * start defaults to the Group's current sequence: late joiners get no unrestricted history.
 */
export const MembershipChangePayload = Type.Object(
  {
    membershipId: Id,
    member: Actor,
    role: MembershipRoleShape,
    state: oneOfValues(['provisional', 'active'] as const),
    scopes: MembershipScopesShape,
    visibilityStartSequence: Type.Optional(SafeInteger),
    contextPackageId: Type.Optional(Id),
    provisionalExpiresInSeconds: Type.Optional(RelativeSeconds),
  },
  {
    ...closed,
    allOf: [
      {
        if: { properties: { state: constant('provisional') }, required: ['state'] },
        then: { required: ['contextPackageId', 'provisionalExpiresInSeconds'] },
        else: { not: { required: ['provisionalExpiresInSeconds'] } },
      },
    ],
  },
)

/** `membership.end` (§8): ends a Membership and fences its epoch. */
export const MembershipEndPayload = Type.Object({ membershipId: Id, reason: ReasonText }, closed)

/**
 * `membership.grant_delegation` (§9.1): everything the Grant records that the envelope does not
 * already say. Mission and Group come from the envelope's Group, the Coordinator Epoch from the
 * envelope, the issuing Coordinator from the actor and the grant time from acceptance. The budget
 * names the currency and all six ceilings; capabilities are minimum versions.
 */
export const MembershipGrantDelegationPayload = Type.Object(
  {
    grantId: Id,
    granteeAgentId: Id,
    targetWorkItemId: Id,
    allowedCapabilities: Type.Array(CapabilityRef, { minItems: 1, uniqueItems: true }),
    budget: FullResourceBudget,
    maxDescendantDepth: SafeInteger,
    granteeMembershipEpoch: PositiveInteger,
    expiresAt: Timestamp,
  },
  closed,
)

// ---------------------------------------------------------------------------------------------
// Messages (§9)
// ---------------------------------------------------------------------------------------------

/** `message.post` (§9): completed content only; large data goes by Artifact reference. */
export const MessagePostPayload = Type.Object(
  {
    messageId: Id,
    conversationId: Id,
    content: MessageContent,
    mentions: Type.Optional(Type.Array(Actor, { uniqueItems: true })),
    references: Type.Optional(Type.Array(Id, { uniqueItems: true })),
  },
  closed,
)

/** `message.correct` (§9.1): a new Message with the corrected content, pointing at the original. */
export const MessageCorrectPayload = Type.Object(
  {
    messageId: Id,
    targetMessageId: Id,
    content: MessageContent,
    reason: ReasonText,
    mentions: Type.Optional(Type.Array(Actor, { uniqueItems: true })),
    references: Type.Optional(Type.Array(Id, { uniqueItems: true })),
  },
  closed,
)

/** `message.retract` (§9.1): a new Message withdrawing the original; `content` is the notice shown in its place. */
export const MessageRetractPayload = Type.Object(
  {
    messageId: Id,
    targetMessageId: Id,
    content: MessageContent,
    reason: ReasonText,
  },
  closed,
)

/**
 * `message.redact` (§9.1, §7.4): a new Message hiding the original's content; the reason must be an
 * auditable policy reason and `content` the tombstone shown in its place.
 */
export const MessageRedactPayload = Type.Object(
  {
    messageId: Id,
    targetMessageId: Id,
    content: MessageContent,
    reason: ReasonText,
  },
  closed,
)

// ---------------------------------------------------------------------------------------------
// WorkItems (§10, §11, §13)
// ---------------------------------------------------------------------------------------------

/** `work.propose` (§10.2): any member proposes work with a complete Work Contract. */
export const WorkProposePayload = Type.Object(
  {
    proposalId: Id,
    contract: WorkContractDocument,
    dependencyIds: Type.Optional(DependencyIds),
    parentWorkItemId: Type.Optional(Id),
  },
  closed,
)

/**
 * `work.authorize` (§10.2, §9.1): creates a WorkItem. A delegate cites its persisted Grant and links
 * the new WorkItem into the Grant's subtree with `parentWorkItemId`; a MissionOwner acting outside
 * the Coordinator says so with `emergencyOverride` (§7.1). `exclusive` defaults to `true`.
 */
export const WorkAuthorizePayload = Type.Object(
  {
    workItemId: Id,
    contract: WorkContractDocument,
    dependencyIds: Type.Optional(DependencyIds),
    proposalId: Type.Optional(Id),
    parentWorkItemId: Type.Optional(Id),
    delegationGrantId: Type.Optional(Id),
    exclusive: Type.Optional(Type.Boolean()),
    emergencyOverride: Type.Optional(constant(true)),
  },
  closed,
)

/**
 * `work.offer` (§10.3): an expiring offer to a bounded, duplicate-free candidate set with the
 * structured selection basis. `contract` carries a corrected Work Contract when an essential
 * ambiguity was resolved (§10.1); it becomes a new contract version.
 */
export const WorkOfferPayload = Type.Object(
  {
    workItemId: Id,
    candidateAgentIds: Type.Array(Id, { minItems: 1, maxItems: MAX_OFFER_CANDIDATES, uniqueItems: true }),
    selectionBasis: SelectionBasisShape,
    offerExpiresInSeconds: RelativeSeconds,
    delegationGrantId: Type.Optional(Id),
    contract: Type.Optional(WorkContractDocument),
    emergencyOverride: Type.Optional(constant(true)),
  },
  closed,
)

/**
 * `work.accept_offer` (§10.3, §11.2): a durable scheduling commitment after admission control, with
 * the ownership lease wanted and, optionally, the Worker's schedule disclosure.
 */
export const WorkAcceptOfferPayload = Type.Object(
  {
    workItemId: Id,
    ownershipLeaseSeconds: RelativeSeconds,
    scheduleEstimate: Type.Optional(ScheduleEstimateShape),
  },
  closed,
)

/** `work.start` (§11.3): starts under the current Ownership Epoch with a new Execution Lease. */
export const WorkStartPayload = Type.Object(
  {
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    executionLeaseSeconds: RelativeSeconds,
  },
  closed,
)

/**
 * `work.checkpoint` (§11.3, §11.4): a safe checkpoint that releases the Execution Lease; the owner
 * keeps ownership if it resumes within `resumeWithinSeconds`.
 */
export const WorkCheckpointPayload = Type.Object(
  {
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    executionLeaseId: Id,
    checkpoint: CheckpointRecord,
    resumeWithinSeconds: RelativeSeconds,
    progress: Type.Optional(ProgressShape),
  },
  closed,
)

/**
 * `work.block` (§11.4): checkpoint plus the blocker; ownership survives for `blockedLeaseSeconds`.
 * `requiredResolution` states what would unblock the work.
 */
export const WorkBlockPayload = Type.Object(
  {
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    executionLeaseId: Id,
    checkpoint: CheckpointRecord,
    reason: ReasonText,
    blockedLeaseSeconds: RelativeSeconds,
    requiredResolution: Type.Optional(ReasonText),
  },
  closed,
)

/** `work.unblock` (§11.4): the blocker is resolved. */
export const WorkUnblockPayload = Type.Object(
  {
    workItemId: Id,
    resolution: Type.Optional(ReasonText),
  },
  closed,
)

/** `work.submit` (§13.2): published Artifacts and Evidence mapped to the acceptance criteria. */
export const WorkSubmitPayload = Type.Object(
  {
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    executionLeaseId: Id,
    artifactIds: Type.Array(Id, { minItems: 1, uniqueItems: true }),
    evidence: EvidenceList,
  },
  closed,
)

/** `work.accept_result` (§13.2): the Coordinator's review Evidence; it must not be the sole reviewer of its own output (§7.2). */
export const WorkAcceptResultPayload = Type.Object(
  {
    workItemId: Id,
    evidence: EvidenceList,
  },
  closed,
)

/**
 * `work.fail` (§10.2, §11.4): failure with Evidence (typically `failure_report`). A Worker reporting
 * its own failure cites both its Ownership Epoch and current Execution Lease; a Coordinator or
 * policy cites neither.
 */
export const WorkFailPayload = Type.Object(
  {
    workItemId: Id,
    reason: ReasonText,
    ownershipEpoch: Type.Optional(PositiveInteger),
    executionLeaseId: Type.Optional(Id),
    evidence: EvidenceList,
  },
  {
    ...closed,
    dependentRequired: { ownershipEpoch: ['executionLeaseId'], executionLeaseId: ['ownershipEpoch'] },
  },
)

/** `work.cancel` (§10.2, §12): cancels unfinished work; cleanup follows the contract. */
export const WorkCancelPayload = Type.Object({ workItemId: Id, reason: ReasonText }, closed)

// ---------------------------------------------------------------------------------------------
// Artifacts, approvals, policy (§12, §13, §20)
// ---------------------------------------------------------------------------------------------

/** `artifact.publish` (§13.1, §11.3): a signed manifest, published under the current Execution Lease. */
export const ArtifactPublishPayload = Type.Object(
  {
    artifact: ArtifactManifest,
    ownershipEpoch: PositiveInteger,
    executionLeaseId: Id,
  },
  closed,
)

/**
 * `approval.grant_execution` (§12): a time-bounded Execution Approval for named operations,
 * resources and budget, bound to one WorkItem Ownership Epoch.
 */
export const ApprovalGrantExecutionPayload = Type.Object(
  {
    approvalId: Id,
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    operations: Type.Array(OperationName, { minItems: 1, uniqueItems: true }),
    resources: Type.Array(Id, { uniqueItems: true }),
    budget: ResourceBudget,
    expiresInSeconds: RelativeSeconds,
    comments: Type.Optional(Type.String({ maxLength: 10000 })),
  },
  closed,
)

/**
 * `policy.grant_cooperation_override` (§20): a one-shot grant for exactly one future Command —
 * its kind, Action ID and beneficiary — past one named policy limit. Mission and Group come from
 * the envelope, the approver from the actor, the grant time from acceptance.
 */
export const PolicyGrantCooperationOverridePayload = Type.Object(
  {
    grantId: Id,
    policyName: CooperationPolicyName,
    beneficiary: Actor,
    targetCommandKind: CommandKindShape,
    targetActionId: Id,
    reason: ReasonText,
    expiresAt: Timestamp,
  },
  closed,
)

// ---------------------------------------------------------------------------------------------
// Reference Organization-owned extension Commands (§15.1)
// ---------------------------------------------------------------------------------------------

/** `ext.missionweaveprotocol.registry.agent_card_register` (§6.1): the Organization-signed Agent Card. */
export const AgentCardRegisterPayload = Type.Object({ card: AgentCardDocument }, closed)

/**
 * `ext.missionweaveprotocol.identity.session_open` (§6.3): activates the next Session Epoch of an
 * Agent whose handshake succeeded; the authority assigns the epoch.
 */
export const SessionOpenPayload = Type.Object({ agentId: Id }, closed)

/** `ext.missionweaveprotocol.core.work_dependency_add` (§10.4): one new edge; a cycle is rejected. */
export const WorkDependencyAddPayload = Type.Object({ workItemId: Id, dependencyId: Id }, closed)

/**
 * `ext.missionweaveprotocol.core.work_execution_lease_renew` (§11.3, §11.4): renews the current
 * Execution Lease, optionally with a structured progress report.
 */
export const WorkExecutionLeaseRenewPayload = Type.Object(
  {
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    executionLeaseId: Id,
    leaseSeconds: RelativeSeconds,
    progress: Type.Optional(ProgressShape),
  },
  closed,
)

/** `ext.missionweaveprotocol.core.resource_usage_record` (§12): a nonzero delta bound to WorkItem, epoch and lease. */
export const ResourceUsageRecordPayload = Type.Object(
  {
    workItemId: Id,
    ownershipEpoch: PositiveInteger,
    executionLeaseId: Id,
    usageDelta: UsageDelta,
  },
  closed,
)

/** `ext.missionweaveprotocol.core.group_archive` (§7.4, §15.2): the signed final snapshot with its Policy Log. */
export const GroupArchivePayload = Type.Object({ snapshot: GroupSnapshotDocument }, closed)

// ---------------------------------------------------------------------------------------------

/** The payload schema of every catalogued Command kind. */
export const CommandPayloads = {
  'mission.create': MissionCreatePayload,
  'mission.assign_coordinator': MissionAssignCoordinatorPayload,
  'mission.renew_coordinator': MissionRenewCoordinatorPayload,
  'mission.submit_for_approval': MissionSubmitForApprovalPayload,
  'mission.approve': MissionApprovePayload,
  'mission.request_changes': MissionRequestChangesPayload,
  'mission.cancel': MissionCancelPayload,
  'mission.terminate': MissionTerminatePayload,
  'mission.create_child': MissionCreateChildPayload,
  'mission.create_follow_up': MissionCreateFollowUpPayload,
  'membership.change': MembershipChangePayload,
  'membership.end': MembershipEndPayload,
  'membership.grant_delegation': MembershipGrantDelegationPayload,
  'message.post': MessagePostPayload,
  'message.correct': MessageCorrectPayload,
  'message.retract': MessageRetractPayload,
  'message.redact': MessageRedactPayload,
  'work.propose': WorkProposePayload,
  'work.authorize': WorkAuthorizePayload,
  'work.offer': WorkOfferPayload,
  'work.accept_offer': WorkAcceptOfferPayload,
  'work.start': WorkStartPayload,
  'work.checkpoint': WorkCheckpointPayload,
  'work.block': WorkBlockPayload,
  'work.unblock': WorkUnblockPayload,
  'work.submit': WorkSubmitPayload,
  'work.accept_result': WorkAcceptResultPayload,
  'work.fail': WorkFailPayload,
  'work.cancel': WorkCancelPayload,
  'artifact.publish': ArtifactPublishPayload,
  'approval.grant_execution': ApprovalGrantExecutionPayload,
  'policy.grant_cooperation_override': PolicyGrantCooperationOverridePayload,
  'ext.missionweaveprotocol.registry.agent_card_register': AgentCardRegisterPayload,
  'ext.missionweaveprotocol.identity.session_open': SessionOpenPayload,
  'ext.missionweaveprotocol.core.work_dependency_add': WorkDependencyAddPayload,
  'ext.missionweaveprotocol.core.work_execution_lease_renew': WorkExecutionLeaseRenewPayload,
  'ext.missionweaveprotocol.core.resource_usage_record': ResourceUsageRecordPayload,
  'ext.missionweaveprotocol.core.group_archive': GroupArchivePayload,
} as const satisfies { readonly [K in CommandKind]: TSchema }

/** The static payload type of a Command kind. */
export type CommandPayload<K extends CommandKind> = Static<(typeof CommandPayloads)[K]>
