/**
 * The Mission (`mission.schema.json`, §7, §14): a bounded objective with a definition of done,
 * budget, deadline, approval policy, MissionOwner and one Coordinator lease, owning one Group.
 * @module
 */
import Type, { type Static } from 'typebox'
import { constant, document, oneOfValues } from '../schema.js'
import { AcceptanceCriterion, Actor, AgentActor, Extensions, HumanActor, Id, PositiveInteger, ResourceBudget, SafeInteger, Semver, Timestamp } from './common.js'

/** Mission lifecycle states (§7.1); `approved`, `failed` and `cancelled` are terminal. */
export const MISSION_STATES = ['active', 'awaiting_approval', 'approved', 'failed', 'cancelled'] as const

/** A Mission state. */
export type MissionState = (typeof MISSION_STATES)[number]

/** The current Coordinator: Agent, pinned card version, Coordinator Epoch and lease (§7.2). */
export const MissionCoordinator = Type.Object(
  {
    agentId: Id,
    agentCardVersion: PositiveInteger,
    coordinatorEpoch: PositiveInteger,
    leaseId: Id,
  },
  { additionalProperties: false },
)

/** The current Coordinator of a Mission. */
export type MissionCoordinator = Static<typeof MissionCoordinator>

/** Which approvals the Mission needs (§7.3, §12). */
export const ApprovalPolicy = Type.Object(
  {
    finalHumanApproval: Type.Boolean(),
    highRiskExecutionApproval: Type.Boolean(),
    policyVersion: Type.Optional(Semver),
  },
  { additionalProperties: false },
)

/** A Mission approval policy. */
export type ApprovalPolicy = Static<typeof ApprovalPolicy>

/** Link of a child Mission to the parent Mission and WorkItem it was promoted from (§14). */
export const MissionParent = Type.Object(
  {
    missionId: Id,
    workItemId: Id,
    depth: PositiveInteger,
  },
  { additionalProperties: false },
)

/** The parent link of a child Mission. */
export type MissionParent = Static<typeof MissionParent>

/** An Extension Profile the Group pins by major version (§18). */
export const PinnedProfile = Type.Object(
  {
    profileUri: Id,
    majorVersion: SafeInteger,
  },
  { additionalProperties: false },
)

/** A pinned Extension Profile. */
export type PinnedProfile = Static<typeof PinnedProfile>

/**
 * A Mission (§7). A root Mission (no `parent`) has a human MissionOwner and always requires final
 * human approval; a child Mission's owner is the parent Coordinator, an Agent (§14).
 */
export const Mission = Type.Object(
  {
    missionId: Id,
    groupId: Id,
    revision: SafeInteger,
    objective: Type.String({ minLength: 1, maxLength: 10000 }),
    definitionOfDone: Type.Array(AcceptanceCriterion, { minItems: 1 }),
    missionOwner: Actor,
    coordinator: MissionCoordinator,
    state: oneOfValues(MISSION_STATES),
    budget: ResourceBudget,
    deadline: Timestamp,
    approvalPolicy: ApprovalPolicy,
    parent: Type.Optional(MissionParent),
    followUpToMissionId: Type.Optional(Id),
    pinnedProfiles: Type.Optional(Type.Array(PinnedProfile, { uniqueItems: true })),
    createdAt: Timestamp,
    extensions: Type.Optional(Extensions),
  },
  {
    additionalProperties: false,
    allOf: [
      // §7.1, §14: root Missions belong to a human; child Missions to the parent Coordinator.
      {
        if: { not: { required: ['parent'] } },
        then: {
          properties: {
            missionOwner: HumanActor,
            approvalPolicy: { properties: { finalHumanApproval: constant(true) } },
          },
        },
        else: { properties: { missionOwner: AgentActor } },
      },
    ],
  },
)

/** A Mission. */
export type Mission = Static<typeof Mission>

/** `mission.schema.json` (§7, §21). */
export const missionDocument = document('mission', 'mission.schema.json', 'MissionWeaveProtocol 0.1 Mission', Mission)
