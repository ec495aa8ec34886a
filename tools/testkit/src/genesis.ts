/**
 * The genesis of a test Group as plain data: what a `mission.created` Event carries (§7.1; §14
 * for a child Mission's `parent`). The Authority's hand-seeded state, the client's scripted feeds
 * and the Worker's fabricated logs all start their Groups from it, so the three state one genesis
 * and differ only in the options below.
 */
import type { Actor, EventPayload, Lease, Membership, Mission } from '@weft/spec'

/** What the test Groups' geneses differ in. */
export interface GroupGenesisOptions {
  readonly groupId: string
  readonly missionId: string
  /** The human MissionOwner (§7.1: a root Mission's owner is human). */
  readonly owner: Actor
  /** The Mission's Coordinator entry (§7.2); the coordinator Lease takes its Agent, epoch and Lease ID. */
  readonly coordinator: Mission['coordinator']
  /** When the Mission, Group, Conversation, Lease and Memberships were created. */
  readonly createdAt: string
  /** When the coordinator Lease expires. */
  readonly leaseExpiresAt: string
  readonly budget: Mission['budget']
  /** Default `'Ship the feature.'`. */
  readonly objective?: string
  /** A child Mission's link to its parent (§14). */
  readonly parent?: Mission['parent']
  /** The ID of the Membership of `member` in `role`; default `<groupId>:membership:<last segment of the member's ID>`. */
  readonly membershipId?: (member: Actor, role: 'mission_owner' | 'coordinator') => string
}

/**
 * The `mission.created` payload of a Group whose Mission is active (§7.1): the Mission, the Group,
 * its main Conversation, the coordinator Lease, and active Memberships at epoch 1 for the owner
 * and the Coordinator, both reading and writing the whole history.
 *
 * @example
 * ```ts
 * groupGenesis({ groupId, missionId, owner, coordinator: { agentId, agentCardVersion: 1, coordinatorEpoch: 1, leaseId }, createdAt: T0, leaseExpiresAt, budget: { currency: 'USD', financialLimit: 1000 } })
 * ```
 */
export function groupGenesis(o: GroupGenesisOptions): EventPayload<'mission.created'> {
  const { groupId, missionId, owner, coordinator, createdAt } = o
  const conversationId = `${groupId}:conversation:main`
  const membershipId = o.membershipId ?? ((member: Actor) => `${groupId}:membership:${member.id.split(':').pop()}`)
  const membership = (member: Actor, role: 'mission_owner' | 'coordinator'): Membership => ({
    membershipId: membershipId(member, role),
    missionId,
    groupId,
    member,
    role,
    state: 'active',
    membershipEpoch: 1,
    scopes: ['group:read', 'group:write'],
    visibilityStartSequence: 0,
    grantedAt: createdAt,
    activatedAt: createdAt,
  })
  const coordinatorLease: Lease = {
    leaseId: coordinator.leaseId,
    leaseType: 'coordinator',
    missionId,
    groupId,
    holderAgentId: coordinator.agentId,
    sessionEpoch: 1,
    coordinatorEpoch: coordinator.coordinatorEpoch,
    issuedAt: createdAt,
    startsAt: createdAt,
    expiresAt: o.leaseExpiresAt,
    state: 'active',
    renewalCount: 0,
  }
  const mission: Mission = {
    missionId,
    groupId,
    revision: 1,
    objective: o.objective ?? 'Ship the feature.',
    definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
    missionOwner: owner,
    coordinator,
    state: 'active',
    budget: o.budget,
    deadline: '2026-09-01T00:00:00Z',
    approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    createdAt,
    ...(o.parent === undefined ? {} : { parent: o.parent }),
  }
  return {
    mission,
    group: { groupId, missionId, state: 'active', mainConversationId: conversationId, createdAt },
    conversation: { conversationId, missionId, groupId, type: 'group', title: 'Planning', access: { mode: 'group' }, createdBy: owner, createdAt, state: 'active', revision: 1 },
    coordinatorLease,
    memberships: [membership(owner, 'mission_owner'), membership({ type: 'agent', id: coordinator.agentId }, 'coordinator')],
  }
}
