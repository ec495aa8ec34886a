/**
 * The WorkItem (`work-item.schema.json`, §10, §11): one unit of work with its Work Contract, state,
 * offers, owner, selection basis, schedule estimate, structured progress and submission.
 * @module
 */
import Type, { type Static } from 'typebox'
import { document, oneOfValues, ref } from '../schema.js'
import { Actor, CapabilityRef, Extensions, Id, PositiveInteger, SafeInteger, Sha256, Timestamp } from './common.js'
import { WorkContract } from './work-contract.js'

/**
 * WorkItem states of the §10.2 machine, in normative order. `verified` and `cancelled` are
 * terminal; `failed` leaves only through a new offer.
 */
export const WORK_ITEM_STATES = ['open', 'offered', 'queued', 'active', 'blocked', 'submitted', 'verified', 'failed', 'cancelled'] as const

/** A WorkItem state. */
export type WorkItemState = (typeof WORK_ITEM_STATES)[number]

/** States in which the WorkItem has an owner and a recorded selection basis (§10.3). */
export const OWNED_WORK_ITEM_STATES = ['queued', 'active', 'blocked', 'submitted', 'verified'] as const

/** States in which the WorkItem carries a submission (§13.2). */
export const SUBMITTED_WORK_ITEM_STATES = ['submitted', 'verified'] as const

/** Status of one offer (§10.3); `lost_race` marks a losing candidate of a bounded offer set. */
export const WORK_OFFER_STATUSES = ['pending', 'accepted', 'declined', 'withdrawn', 'expired', 'lost_race'] as const

/** An offer status. */
export type WorkOfferStatus = (typeof WORK_OFFER_STATUSES)[number]

/** Structured reasons a Worker gives when declining an offer (§10.3). */
export const OFFER_DECLINE_REASONS = ['capacity', 'deadline', 'capability', 'authorization', 'dependency', 'budget', 'other'] as const

/** An offer decline reason. */
export type OfferDeclineReason = (typeof OFFER_DECLINE_REASONS)[number]

/** Capacity status a Worker discloses with its schedule estimate (§11.2). */
export const CAPACITY_STATUSES = ['available', 'queued', 'constrained', 'blocked'] as const

/** A disclosed capacity status. */
export type CapacityStatus = (typeof CAPACITY_STATUSES)[number]

/** A durable, expiring offer to one Agent; it reserves nothing until accepted (§10.3). */
export const WorkOffer = Type.Object(
  {
    offerId: Id,
    agentId: Id,
    agentCardVersion: PositiveInteger,
    expiresAt: Timestamp,
    status: oneOfValues(WORK_OFFER_STATUSES),
    declineReason: Type.Optional(oneOfValues(OFFER_DECLINE_REASONS)),
  },
  { additionalProperties: false },
)

/** A WorkItem offer. */
export type WorkOffer = Static<typeof WorkOffer>

/**
 * The accepted owner (§6.1, §10.3, §11.3): Agent, pinned card and capability versions, Ownership
 * Epoch and ownership lease.
 */
export const WorkOwner = Type.Object(
  {
    agentId: Id,
    agentCardVersion: PositiveInteger,
    capabilityPins: Type.Array(CapabilityRef, { minItems: 1 }),
    ownershipEpoch: PositiveInteger,
    ownershipLeaseId: Id,
    acceptedAt: Timestamp,
  },
  { additionalProperties: false },
)

/** The owner of a WorkItem. */
export type WorkOwner = Static<typeof WorkOwner>

/**
 * Why the owner was chosen (§10.3): capability matches, authorization eligibility, availability,
 * expected cost, reliability Evidence and the policy rules applied. No private reasoning.
 */
export const SelectionBasis = Type.Object(
  {
    requiredCapabilities: Type.Array(CapabilityRef, { minItems: 1 }),
    verifiedMatches: Type.Array(CapabilityRef, { minItems: 1 }),
    authorizationEligible: Type.Boolean(),
    availabilityEstimate: Timestamp,
    expectedCost: Type.Number({ minimum: 0 }),
    reliabilityEvidence: Type.Array(Id),
    policyRulesApplied: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1 }),
  },
  { additionalProperties: false },
)

/** A selection basis. */
export type SelectionBasis = Static<typeof SelectionBasis>

/** The Worker's disclosed schedule: start and completion estimates, confidence, capacity (§11.2). */
export const ScheduleEstimate = Type.Object(
  {
    estimatedStart: Timestamp,
    estimatedCompletion: Timestamp,
    confidence: Type.Number({ minimum: 0, maximum: 1 }),
    capacityStatus: oneOfValues(CAPACITY_STATUSES),
    lastCalculatedAt: Timestamp,
  },
  { additionalProperties: false },
)

/** A schedule estimate. */
export type ScheduleEstimate = Static<typeof ScheduleEstimate>

/** Structured progress (§11.4): phase, milestones, next checkpoint, blockers, estimate, Evidence. */
export const WorkProgress = Type.Object(
  {
    currentPhase: Type.String({ minLength: 1, maxLength: 500 }),
    completedMilestones: Type.Array(Type.String({ minLength: 1, maxLength: 500 })),
    nextCheckpoint: Type.String({ minLength: 1, maxLength: 500 }),
    blockers: Type.Array(Type.String({ minLength: 1, maxLength: 2000 })),
    updatedCompletionEstimate: Timestamp,
    evidenceIds: Type.Array(Id, { uniqueItems: true }),
  },
  { additionalProperties: false },
)

/** WorkItem progress. */
export type WorkProgress = Static<typeof WorkProgress>

/** A submission: the Artifacts and the Evidence mapped to acceptance criteria (§13.2). */
export const WorkSubmission = Type.Object(
  {
    artifactHashes: Type.Array(Sha256, { minItems: 1, uniqueItems: true }),
    evidenceIds: Type.Array(Id, { minItems: 1, uniqueItems: true }),
    submittedAt: Timestamp,
  },
  { additionalProperties: false },
)

/** A WorkItem submission. */
export type WorkSubmission = Static<typeof WorkSubmission>

/**
 * A WorkItem (§10). Owned states need `owner` and `selectionBasis`; `submitted` and `verified`
 * also need `submission`. Transition legality itself (§10.2) is enforced by the authority.
 */
export const WorkItem = Type.Object(
  {
    workItemId: Id,
    missionId: Id,
    groupId: Id,
    conversationId: Id,
    revision: SafeInteger,
    state: oneOfValues(WORK_ITEM_STATES),
    exclusive: Type.Boolean(),
    contract: ref('work-contract.schema.json', WorkContract),
    offers: Type.Optional(Type.Array(WorkOffer)),
    owner: Type.Optional(WorkOwner),
    selectionBasis: Type.Optional(SelectionBasis),
    scheduleEstimate: Type.Optional(ScheduleEstimate),
    progress: Type.Optional(WorkProgress),
    submission: Type.Optional(WorkSubmission),
    createdBy: Actor,
    authorizedBy: Type.Optional(Actor),
    createdAt: Timestamp,
    updatedAt: Type.Optional(Timestamp),
    extensions: Type.Optional(Extensions),
  },
  {
    additionalProperties: false,
    allOf: [
      {
        if: { properties: { state: oneOfValues(OWNED_WORK_ITEM_STATES) }, required: ['state'] },
        then: { required: ['owner', 'selectionBasis'] },
      },
      {
        if: { properties: { state: oneOfValues(SUBMITTED_WORK_ITEM_STATES) }, required: ['state'] },
        then: { required: ['submission'] },
      },
    ],
  },
)

/** A WorkItem. */
export type WorkItem = Static<typeof WorkItem>

/** `work-item.schema.json` (§10, §21). */
export const workItemDocument = document('workItem', 'work-item.schema.json', 'MissionWeaveProtocol 0.1 WorkItem', WorkItem)
