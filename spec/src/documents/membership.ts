/**
 * The Group Membership (`membership.schema.json`, §8, §9.1): binds one Principal to one Group with
 * a role, an epoch, scopes and a visibility start, and holds the Delegation Grants it received.
 * @module
 */
import Type, { type Static } from 'typebox'
import { constant, document, oneOfValues } from '../schema.js'
import { Actor, AgentActor, CapabilityRef, Extensions, Id, PositiveInteger, ResourceBudget, SafeInteger, Timestamp } from './common.js'

/** Roles a member can hold (§3, §8); `work_delegate` alone grants no authority (§9.1). */
export const MEMBERSHIP_ROLES = ['mission_owner', 'coordinator', 'worker', 'reviewer', 'observer', 'work_delegate'] as const

/** A Membership role. */
export type MembershipRole = (typeof MEMBERSHIP_ROLES)[number]

/** Membership states: provisional for a pending offer, active after acceptance, then ended (§8). */
export const MEMBERSHIP_STATES = ['provisional', 'active', 'ended'] as const

/** A Membership state. */
export type MembershipState = (typeof MEMBERSHIP_STATES)[number]

/** A Resource Budget with every one of its seven members present. */
export type CompleteResourceBudget = Required<Static<typeof ResourceBudget>>

/**
 * A Resource Budget in which the currency and all six limits are present, as a Delegation Grant
 * needs (§9.1). The normative spelling adds `required` beside an `allOf` of the common budget, with
 * no `type`, which `Type.Object` cannot emit, so it is written with `Type.Unsafe`.
 */
export const CompleteResourceBudget = Type.Unsafe<CompleteResourceBudget>({
  allOf: [ResourceBudget],
  required: ['currency', 'financialLimit', 'modelTokenLimit', 'toolCallLimit', 'computeSecondsLimit', 'wallClockSecondsLimit', 'externalSideEffectLimit'],
})

/**
 * A Delegation Grant (§9.1): lets one `work_delegate` Agent authorize and offer work under one
 * target WorkItem, within allowed capabilities, explicit budget ceilings and a depth limit, for as
 * long as the Mission, Group, Coordinator Epoch, Membership Epoch and validity still match.
 */
export const DelegationGrant = Type.Object(
  {
    grantId: Id,
    granteeAgentId: Id,
    missionId: Id,
    groupId: Id,
    targetWorkItemId: Id,
    allowedCapabilities: Type.Array(CapabilityRef, { minItems: 1, uniqueItems: true }),
    budget: CompleteResourceBudget,
    maxDescendantDepth: SafeInteger,
    granteeMembershipEpoch: PositiveInteger,
    coordinatorEpoch: PositiveInteger,
    grantedBy: AgentActor,
    grantedAt: Timestamp,
    expiresAt: Timestamp,
  },
  { additionalProperties: false },
)

/** A Delegation Grant. */
export type DelegationGrant = Static<typeof DelegationGrant>

/**
 * A Group Membership (§8). A provisional Membership expires and points at the Context Package the
 * candidate received; an active one records its activation; an ended one its end.
 */
export const Membership = Type.Object(
  {
    membershipId: Id,
    missionId: Id,
    groupId: Id,
    member: Actor,
    role: oneOfValues(MEMBERSHIP_ROLES),
    state: oneOfValues(MEMBERSHIP_STATES),
    membershipEpoch: PositiveInteger,
    scopes: Type.Array(Type.String({ pattern: '^[a-z][a-z0-9._:-]*$', maxLength: 160 }), {
      minItems: 1,
      uniqueItems: true,
    }),
    delegationGrants: Type.Optional(Type.Array(DelegationGrant, { uniqueItems: true })),
    visibilityStartSequence: SafeInteger,
    contextPackageId: Type.Optional(Id),
    provisionalExpiresAt: Type.Optional(Timestamp),
    grantedAt: Timestamp,
    activatedAt: Type.Optional(Timestamp),
    endedAt: Type.Optional(Timestamp),
    extensions: Type.Optional(Extensions),
  },
  {
    additionalProperties: false,
    allOf: [
      {
        if: { properties: { state: constant('provisional') }, required: ['state'] },
        then: { required: ['provisionalExpiresAt', 'contextPackageId'] },
      },
      {
        if: { properties: { state: constant('active') }, required: ['state'] },
        then: { required: ['activatedAt'] },
      },
      {
        if: { properties: { state: constant('ended') }, required: ['state'] },
        then: { required: ['endedAt'] },
      },
    ],
  },
)

/** A Group Membership. */
export type Membership = Static<typeof Membership>

/** `membership.schema.json` (§8, §21). */
export const membershipDocument = document('membership', 'membership.schema.json', 'MissionWeaveProtocol 0.1 Group Membership', Membership)
