/**
 * Building blocks of the Command and Event payload schemas.
 *
 * Whole normative documents embedded in a payload (a Work Contract, an Evidence record, an
 * Artifact manifest, ...) are `$ref`s to the document's schema file, and shapes the normative
 * documents define inline (a selection basis, a Delegation Grant, ...) are `$ref`s with a JSON
 * Pointer into that file, so a payload can never drift from the normative shape. The static types
 * come from the document modules through type-only imports; nothing here depends on them at run
 * time.
 * @module
 */
import Type, { type Static, type TUnsafe } from 'typebox'
import type { AgentCard } from '../documents/agent-card.js'
import type { Approval } from '../documents/approval.js'
import type { Artifact } from '../documents/artifact.js'
import type { Command } from '../documents/command.js'
import { ResourceBudget, SafeInteger, Sha256, Timestamp, type ResourceBudget as ResourceBudgetType } from '../documents/common.js'
import type { ContextPackage } from '../documents/context-package.js'
import type { Conversation } from '../documents/conversation.js'
import type { Evidence } from '../documents/evidence.js'
import type { GroupSnapshot } from '../documents/group-snapshot.js'
import type { Group } from '../documents/group.js'
import type { Lease } from '../documents/lease.js'
import type { DelegationGrant, Membership } from '../documents/membership.js'
import type { Message, MessageContentPart } from '../documents/message.js'
import type { ApprovalPolicy, Mission, MissionCoordinator, PinnedProfile } from '../documents/mission.js'
import type { WorkContract } from '../documents/work-contract.js'
import type { ScheduleEstimate, SelectionBasis, WorkOffer, WorkProgress, WorkItem } from '../documents/work-item.js'
import { oneOfValues } from '../schema.js'

/** A `$ref` to a normative document or a JSON Pointer inside one, typed as `T`. */
function documentRef<T>(target: string): TUnsafe<T> {
  return Type.Unsafe<T>({ $ref: target })
}

// Whole documents (§21).

/** A Work Contract document (`work-contract.schema.json`, §10.1). */
export const WorkContractDocument = documentRef<WorkContract>('work-contract.schema.json')
/** A signed Evidence record (`evidence.schema.json`): subject, criteria, method, result, producer, time, Artifacts (§13.2). */
export const EvidenceDocument = documentRef<Evidence>('evidence.schema.json')
/** A signed Artifact manifest (`artifact.schema.json`, §13.1). */
export const ArtifactManifest = documentRef<Artifact>('artifact.schema.json')
/** A signed Approval decision (`approval.schema.json`, §7.3). */
export const ApprovalDocument = documentRef<Approval>('approval.schema.json')
/** A fenced lease (`lease.schema.json`, §7.2, §11.3). */
export const LeaseDocument = documentRef<Lease>('lease.schema.json')
/** A Group Membership (`membership.schema.json`, §8). */
export const MembershipDocument = documentRef<Membership>('membership.schema.json')
/** A Committed Message (`message.schema.json`, §9). */
export const MessageDocument = documentRef<Message>('message.schema.json')
/** A Mission (`mission.schema.json`, §7). */
export const MissionDocument = documentRef<Mission>('mission.schema.json')
/** A Mission Group (`group.schema.json`, §7). */
export const GroupDocument = documentRef<Group>('group.schema.json')
/** A Conversation (`conversation.schema.json`, §9). */
export const ConversationDocument = documentRef<Conversation>('conversation.schema.json')
/** A signed Context Package (`context-package.schema.json`, §13.3). */
export const ContextPackageDocument = documentRef<ContextPackage>('context-package.schema.json')
/** A signed Agent Card (`agent-card.schema.json`, §6.1). */
export const AgentCardDocument = documentRef<AgentCard>('agent-card.schema.json')
/** A signed Group Snapshot (`group-snapshot.schema.json`, §7.4). */
export const GroupSnapshotDocument = documentRef<GroupSnapshot>('group-snapshot.schema.json')
/** A WorkItem (`work-item.schema.json`, §10). */
export const WorkItemDocument = documentRef<WorkItem>('work-item.schema.json')

// Shapes the documents define inline, referenced by JSON Pointer.

/** A structured selection basis (§10.3), as in `WorkItem.selectionBasis`. */
export const SelectionBasisShape = documentRef<SelectionBasis>('work-item.schema.json#/properties/selectionBasis')
/** A Worker's schedule disclosure (§11.2), as in `WorkItem.scheduleEstimate`. */
export const ScheduleEstimateShape = documentRef<ScheduleEstimate>('work-item.schema.json#/properties/scheduleEstimate')
/** A structured progress report (§11.4), as in `WorkItem.progress`. */
export const ProgressShape = documentRef<WorkProgress>('work-item.schema.json#/properties/progress')
/** One per-candidate offer record (§10.3), as in `WorkItem.offers`. */
export const WorkOfferShape = documentRef<WorkOffer>('work-item.schema.json#/properties/offers/items')
/** A Delegation Grant with every field §9.1 requires, as in `Membership.delegationGrants`. */
export const DelegationGrantShape = documentRef<DelegationGrant>('membership.schema.json#/properties/delegationGrants/items')
/** A Membership role (§8). */
export const MembershipRoleShape = documentRef<Membership['role']>('membership.schema.json#/properties/role')
/** Membership scopes (§8): at least one, unique. */
export const MembershipScopesShape = documentRef<Membership['scopes']>('membership.schema.json#/properties/scopes')
/** One part of a Message's content: text, an Artifact reference or structured data (§9). */
export const MessageContentShape = documentRef<MessageContentPart>('message.schema.json#/properties/content/items')
/** A Mission approval policy (§7.1, §12), as in `Mission.approvalPolicy`. */
export const ApprovalPolicyShape = documentRef<ApprovalPolicy>('mission.schema.json#/properties/approvalPolicy')
/** The current Coordinator of a Mission (§7.2), as in `Mission.coordinator`. */
export const MissionCoordinatorShape = documentRef<MissionCoordinator>('mission.schema.json#/properties/coordinator')
/** An Extension Profile pinned by major version (§18), as in `Mission.pinnedProfiles`. */
export const PinnedProfileShape = documentRef<PinnedProfile>('mission.schema.json#/properties/pinnedProfiles/items')
/** Any Command kind the envelope accepts (core or `ext.`), as in `Command.kind`. */
export const CommandKindShape = documentRef<Command['kind']>('command.schema.json#/properties/kind')

// Weft's own parts.

/**
 * The longest relative duration a Command may ask for: one year. Commands state leases and
 * expiries as relative seconds; the authority turns them into absolute instants in Events.
 */
export const MAX_RELATIVE_SECONDS = 31_536_000

/** A relative duration in whole seconds, 1 to {@link MAX_RELATIVE_SECONDS}. */
export const RelativeSeconds = Type.Integer({ minimum: 1, maximum: MAX_RELATIVE_SECONDS })

/**
 * The largest candidate set one `work.offer` may name. §10.3 lets a Coordinator offer urgent
 * work to a bounded set; the bound itself is Weft's choice.
 */
export const MAX_OFFER_CANDIDATES = 16

/** A human-readable reason or explanation (no private reasoning, §4). */
export const ReasonText = Type.String({ minLength: 1, maxLength: 4000 })

/** A short display title. */
export const TitleText = Type.String({ minLength: 1, maxLength: 500 })

/** A WorkItem or Mission objective. */
export const ObjectiveText = Type.String({ minLength: 1, maxLength: 10000 })

/** An operation name, spelled like the operations of a common `resourceGrant` (§12). */
export const OperationName = Type.String({ pattern: '^[a-z][a-z0-9._:-]*$', maxLength: 128 })

/**
 * The six resource-usage dimensions of the Budget Ledger (§12), as the reference runtime names
 * them. Money is counted in whole millionths (`financialMicrounits`) of the budget's currency.
 */
export const USAGE_DIMENSIONS = ['financialMicrounits', 'modelTokens', 'toolCalls', 'computeSeconds', 'wallClockSeconds', 'externalActions'] as const

/** One dimension of resource usage. */
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number]

/**
 * A nonzero resource delta (§12): any subset of the six dimensions, non-negative, at least one of
 * them positive. Absent dimensions mean zero.
 */
export const UsageDelta = Type.Object(
  {
    financialMicrounits: Type.Optional(SafeInteger),
    modelTokens: Type.Optional(SafeInteger),
    toolCalls: Type.Optional(SafeInteger),
    computeSeconds: Type.Optional(SafeInteger),
    wallClockSeconds: Type.Optional(SafeInteger),
    externalActions: Type.Optional(SafeInteger),
  },
  {
    additionalProperties: false,
    anyOf: USAGE_DIMENSIONS.map((d) => ({ required: [d], properties: { [d]: { minimum: 1 } } })),
  },
)

/** A nonzero resource delta. */
export type UsageDelta = Static<typeof UsageDelta>

/** Cumulative usage of a WorkItem: all six dimensions, absolute (§12). */
export const UsageTotals = Type.Object(
  {
    financialMicrounits: SafeInteger,
    modelTokens: SafeInteger,
    toolCalls: SafeInteger,
    computeSeconds: SafeInteger,
    wallClockSeconds: SafeInteger,
    externalActions: SafeInteger,
  },
  { additionalProperties: false },
)

/** What is left of the WorkItem's budget per dimension; an absent dimension has no limit (§12). */
export const RemainingBudget = Type.Object(
  {
    financialMicrounits: Type.Optional(SafeInteger),
    modelTokens: Type.Optional(SafeInteger),
    toolCalls: Type.Optional(SafeInteger),
    computeSeconds: Type.Optional(SafeInteger),
    wallClockSeconds: Type.Optional(SafeInteger),
    externalActions: Type.Optional(SafeInteger),
  },
  { additionalProperties: false },
)

/** A Resource Budget with the currency and all six limits present, as a Delegation Grant needs (§9.1). */
export const FullResourceBudget = Type.Unsafe<Required<ResourceBudgetType>>({
  allOf: [ResourceBudget],
  required: ['currency', 'financialLimit', 'modelTokenLimit', 'toolCallLimit', 'computeSecondsLimit', 'wallClockSecondsLimit', 'externalSideEffectLimit'],
})

/**
 * A durable, safe-to-resume checkpoint (§11.3, §11.4): the phase reached, milestones done, the
 * next step, the content hash of the saved state Artifact, and when it was taken.
 */
export const CheckpointRecord = Type.Object(
  {
    phase: Type.String({ minLength: 1, maxLength: 500 }),
    completedMilestones: Type.Array(Type.String({ minLength: 1, maxLength: 500 })),
    nextStep: Type.String({ minLength: 1, maxLength: 500 }),
    stateArtifactHash: Sha256,
    createdAt: Timestamp,
  },
  { additionalProperties: false },
)

/** A checkpoint. */
export type CheckpointRecord = Static<typeof CheckpointRecord>

/** What a child Mission's failure does to its parent (§14); blocking the parent WorkItem is the default. */
export const CHILD_FAILURE_POLICIES = ['block_parent_work_item', 'fail_parent_work_item', 'fail_parent_mission'] as const

/** A child-failure policy. */
export type ChildFailurePolicy = (typeof CHILD_FAILURE_POLICIES)[number]

/** A child-failure policy (§14). */
export const ChildFailurePolicyShape = oneOfValues(CHILD_FAILURE_POLICIES)

/**
 * The name of an Organization cooperation policy (§20), e.g. `message_rate`, `proposal_rate`,
 * `clarification_rounds`, `active_work_items`, `queued_work_items`, `delegation_depth`,
 * `mission_depth`, `decomposition`. Organizations define the set, so the name is open.
 */
export const CooperationPolicyName = Type.String({ pattern: '^[a-z][a-z0-9_.-]*$', minLength: 1, maxLength: 128 })
