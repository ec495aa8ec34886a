/**
 * Fixtures for the pipeline tests: a small handler and reducer table (enough to bootstrap an
 * Organization and a Group through real signed Commands, change and end Memberships, renew the
 * Coordinator lease, and misbehave on purpose), an Authority over it on a test clock, and helpers
 * that sign Commands to bytes.
 */
import type { CommandKind, Membership } from '@weft/spec'
import type { CommandHandlers } from '../src/gen/handlers.js'
import type { EventReducers } from '../src/gen/reducers.js'
import { draft, reject, requireGroup, type CommandOf, type HandlerFor, type ReducerFor } from '../src/commit/handler.js'
import { actorKey, emptyState, type GroupState } from '../src/model.js'
import { createPipeline, type Authority } from '../src/commit/pipeline.js'
import type { AuthorityStore } from '../src/log/store.js'
import { agentCard, cast, GROUP, MISSION, seededRandom, signed, testClock, testRegistry, type Cast, type TestClock } from '@weft/testkit/fixtures'
import { seedGroup } from './fixtures-state.js'

/** The agents the bootstrap registers and opens a session for. */
export const AGENTS = [cast.coordinator, cast.worker1, cast.worker2, cast.worker3, cast.reviewer] as const

const partialHandlers: Partial<CommandHandlers> = {
  'ext.missionweaveprotocol.registry.agent_card_register': (cmd, ctx) => {
    ctx.verifyDocument('agent-card', cmd.payload.card)
    return [draft('ext.missionweaveprotocol.registry.agent_card_registered', { card: cmd.payload.card })]
  },
  'ext.missionweaveprotocol.identity.session_open': (cmd, ctx) => {
    const sessionEpoch = (ctx.state.org.agents.get(cmd.payload.agentId)?.sessionEpoch ?? 0) + 1
    return [draft('ext.missionweaveprotocol.identity.session_opened', { agentId: cmd.payload.agentId, sessionEpoch })]
  },
  // The genesis documents are those of the hand-seeded Group of fixtures.ts, under the Command's IDs.
  'mission.create': (cmd, ctx) => {
    if (ctx.group !== undefined) reject('INVALID_COMMAND', 'group exists')
    const g = seedGroup(emptyState(), cmd.groupId!, cmd.payload.missionId)
    return [
      draft('mission.created', {
        mission: g.mission,
        group: g.group,
        conversation: [...g.conversations.values()][0]!,
        coordinatorLease: g.coordinatorLease,
        memberships: [...g.memberships.values()],
      }),
    ]
  },
  'membership.change': (cmd, ctx) => {
    const group = requireGroup(ctx)
    const { membershipId, member, role, scopes } = cmd.payload
    const membershipEpoch = (group.memberships.get(membershipId)?.membershipEpoch ?? 0) + 1
    const membership: Membership = {
      membershipId,
      missionId: group.missionId,
      groupId: group.groupId,
      member,
      role,
      state: 'active',
      membershipEpoch,
      scopes,
      visibilityStartSequence: group.head,
      grantedAt: ctx.now,
      activatedAt: ctx.now,
    }
    return [draft('membership.changed', { membership })]
  },
  'membership.end': (cmd, ctx) => {
    const m = requireGroup(ctx).memberships.get(cmd.payload.membershipId)
    if (m === undefined) reject('INVALID_COMMAND', 'no such membership')
    return [draft('membership.ended', { membershipId: m.membershipId, member: m.member, membershipEpoch: m.membershipEpoch, reason: cmd.payload.reason })]
  },
  'mission.renew_coordinator': (cmd, ctx) => {
    const lease = requireGroup(ctx).coordinatorLease
    return [
      draft('mission.coordinator.renewed', {
        coordinatorEpoch: lease.coordinatorEpoch!,
        leaseId: lease.leaseId,
        leaseExpiresAt: ctx.after(cmd.payload.leaseSeconds),
        renewalCount: lease.renewalCount + 1,
      }),
    ]
  },
  // A reason of `reducer bug` makes the reducer fail half-way (see below).
  'mission.cancel': (cmd) => [draft('mission.cancelled', { reason: cmd.payload.reason })],
  // A handler that refuses, and one with a bug, chosen by the reason.
  'work.cancel': (cmd) => {
    if (cmd.payload.reason === 'throw') throw new Error('handler bug')
    if (cmd.payload.reason === 'wrong kind') return [draft('mission.cancelled', { reason: 'not allowed here' })]
    return reject('INVALID_STATE_TRANSITION', 'the test WorkItem cannot be cancelled')
  },
}

const partialReducers: Partial<EventReducers> = {
  'ext.missionweaveprotocol.registry.agent_card_registered': (state, event) => {
    const card = event.payload.card
    const known = state.org.agents.get(card.agentId)
    if (known === undefined) state.org.agents.set(card.agentId, { agentId: card.agentId, card, cardVersions: [card], sessionEpoch: 0 })
    else {
      known.card = card
      known.cardVersions.push(card)
    }
  },
  'ext.missionweaveprotocol.identity.session_opened': (state, event) => {
    state.org.agents.get(event.payload.agentId)!.sessionEpoch = event.payload.sessionEpoch
  },
  // The handler sent the documents seedGroup builds for these IDs, so seedGroup rebuilds the same Group.
  'mission.created': (state, event) => void seedGroup(state, event.groupId!, event.payload.mission.missionId),
  'membership.changed': (state, event) => putMembership(state.groups.get(event.groupId!)!, event.payload.membership),
  'membership.ended': (state, event) => {
    const group = state.groups.get(event.groupId!)!
    const m = group.memberships.get(event.payload.membershipId)!
    group.memberships.set(m.membershipId, { ...m, state: 'ended', endedAt: event.occurredAt })
  },
  'mission.coordinator.renewed': (state, event) => {
    const group = state.groups.get(event.groupId!)!
    group.coordinatorLease = { ...group.coordinatorLease, expiresAt: event.payload.leaseExpiresAt, renewalCount: event.payload.renewalCount }
  },
  'mission.cancelled': (state, event) => {
    const group = state.groups.get(event.groupId!)!
    group.mission = { ...group.mission, state: 'cancelled' }
    if (event.payload.reason === 'reducer bug') throw new Error('reducer bug')
  },
}

function putMembership(group: GroupState, m: Membership): void {
  group.memberships.set(m.membershipId, m)
  group.membershipByMember.set(actorKey(m.member), m.membershipId)
}

/** A table whose missing members throw: the test tables cover only the kinds the tests use. */
function complete<T extends object>(partial: Partial<T>, missing: (kind: string) => unknown): T {
  return new Proxy(partial, { get: (target, kind: string) => (target as Record<string, unknown>)[kind] ?? missing(kind) }) as T
}

/** The test handler table: unlisted kinds refuse with INVALID_COMMAND. */
export const testHandlers: CommandHandlers = complete<CommandHandlers>(partialHandlers, (kind) => (() => reject('INVALID_COMMAND', `${kind} is not in the test table`)) as HandlerFor<CommandKind>)

/** The test reducer table: unlisted kinds fail (the handlers above never emit them). */
export const testReducers: EventReducers = complete<EventReducers>(
  partialReducers,
  (kind) =>
    (() => {
      throw new Error(`no test reducer for ${kind}`)
    }) as ReducerFor<never>,
)

/** An Authority over the test tables, on `clock`, with `cast.controlPlane` as the control plane. */
export function testAuthority(clock: TestClock = testClock(), options: { maxCommandBytes?: number; store?: AuthorityStore; maxAuditEntries?: number } = {}): Authority {
  return createPipeline({
    handlers: testHandlers,
    reducers: testReducers,
    registry: testRegistry(),
    keys: { authority: { type: 'service', id: cast.authority.actor.id }, signingKey: cast.authority.key },
    clock: { now: () => clock.nowMs },
    random: seededRandom(),
    policy: { controlPlane: [cast.controlPlane.actor.id], ...(options.maxCommandBytes === undefined ? {} : { maxCommandBytes: options.maxCommandBytes }) },
    ...(options.store === undefined ? {} : { store: options.store }),
    ...(options.maxAuditEntries === undefined ? {} : { maxAuditEntries: options.maxAuditEntries }),
  })
}

/** The envelope epochs of a Group member at Session / Membership Epoch 1 in {@link GROUP}. */
export function inGroup(by: Cast, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { groupId: GROUP, ...(by.actor.type === 'agent' ? { sessionEpoch: 1 } : {}), membershipEpoch: 1, ...extra }
}

/** `mission.create` payload for {@link MISSION} with `cast.coordinator`. */
export function missionCreatePayload(): CommandOf<'mission.create'>['payload'] {
  return {
    missionId: MISSION,
    title: 'Planning',
    objective: 'Ship the feature.',
    definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
    deadline: '2026-09-01T00:00:00Z',
    budget: { currency: 'USD', financialLimit: 1000 },
    approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    coordinatorAgentId: cast.coordinator.actor.id,
    coordinatorLeaseSeconds: 86_400,
  }
}

/** A `membership.change` payload making `who` an active worker of {@link GROUP}. */
export function workerMembership(who: Cast): CommandOf<'membership.change'>['payload'] {
  return { membershipId: `${GROUP}:membership:${who.actor.id.split(':').pop()}`, member: who.actor, role: 'worker', state: 'active', scopes: ['group:read'] }
}

/**
 * The Commands of {@link bootstrap} as texts, then a first worker Membership and a Coordinator
 * renewal: a short log with Organization and Group Events, for tests that replay it several ways.
 */
export function bootstrapCommands(clock: TestClock): string[] {
  return [
    ...AGENTS.flatMap((who) => [
      signed('ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(who) }, cast.controlPlane, {}, clock),
      signed('ext.missionweaveprotocol.identity.session_open', { agentId: who.actor.id }, cast.controlPlane, {}, clock),
    ]),
    signed('mission.create', missionCreatePayload(), cast.owner, { groupId: GROUP }, clock),
    signed('membership.change', workerMembership(cast.worker1), cast.coordinator, inGroup(cast.coordinator), clock),
    signed('mission.renew_coordinator', { leaseSeconds: 600 }, cast.coordinator, inGroup(cast.coordinator, { coordinatorEpoch: 1 }), clock),
  ]
}

/**
 * Registers and opens a session for every agent of {@link AGENTS} (control plane), then has the
 * owner create {@link GROUP} (Coordinator `cast.coordinator` at epoch 1): the state `seedGroup`
 * hand-builds, reached through real Commands.
 */
export async function bootstrap(authority: Authority, clock: TestClock): Promise<void> {
  for (const who of AGENTS) {
    await authority.submit(signed('ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(who) }, cast.controlPlane, {}, clock))
    await authority.submit(signed('ext.missionweaveprotocol.identity.session_open', { agentId: who.actor.id }, cast.controlPlane, {}, clock))
  }
  await authority.submit(signed('mission.create', missionCreatePayload(), cast.owner, { groupId: GROUP }, clock))
}

/** A fresh test Authority on a fresh test clock, bootstrapped (see {@link bootstrap}). */
export async function started(): Promise<{ clock: TestClock; authority: Authority }> {
  const clock = testClock()
  const authority = testAuthority(clock)
  await bootstrap(authority, clock)
  return { clock, authority }
}
