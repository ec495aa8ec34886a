/**
 * Authority-internal state fixtures: a hand-seeded Group (so handlers can be tested before, and
 * independently of, `mission.create`), and a `run` helper that drives one handler the way the
 * pipeline does: handler -> materialize -> applyEvents. The cast and documents come from
 * `@weft/testkit/fixtures`.
 */
import { agentCard, cast, counterIds, DEFAULT_TEST_POLICY, GROUP, MISSION, T0, testClock, type Cast, type TestClock } from '@weft/testkit/fixtures'
import { sign, signingHash } from '@weft/codec'
import type { CommandKind, Event, Membership } from '@weft/spec'
import { groupGenesis } from '@weft/testkit/genesis'
import type { AnyEventDraft, CommandOf, HandlerContext, HandlerFor } from '../src/commit/handler.js'
import { actorKey, emptyGroupState, emptyState, type ActorRef, type AuthorityState, type GroupState } from '../src/model.js'
import { applyEvents, materialize, type ReducerTable } from '../src/commit/transact.js'

/**
 * Seeds a Group as `mission.created` would leave it, without running any handler: an active
 * Mission owned by `cast.owner` with `cast.coordinator` at Coordinator Epoch 1 (Session Epoch 1),
 * both with active Memberships at epoch 1, and every cast Agent registered at Session Epoch 1.
 * Returns the Group state; `state.groups` holds it.
 */
export function seedGroup(state: AuthorityState = emptyState(), groupId = GROUP, missionId = MISSION): GroupState {
  for (const who of [cast.coordinator, cast.worker1, cast.worker2, cast.worker3, cast.reviewer]) {
    if (state.org.agents.has(who.actor.id)) continue
    const card = agentCard(who)
    state.org.agents.set(who.actor.id, { agentId: who.actor.id, card, cardVersions: [card], sessionEpoch: 1 })
  }
  const genesis = groupGenesis({
    groupId,
    missionId,
    owner: cast.owner.actor,
    coordinator: { agentId: cast.coordinator.actor.id, agentCardVersion: 1, coordinatorEpoch: 1, leaseId: `${groupId}:lease:coordinator:1` },
    createdAt: T0,
    leaseExpiresAt: '2026-07-16T00:00:00.000Z',
    budget: { currency: 'USD', financialLimit: 1000, modelTokenLimit: 1_000_000, toolCallLimit: 10_000 },
  })
  const group = emptyGroupState({ groupId, missionId, mission: genesis.mission, group: genesis.group, coordinatorLease: genesis.coordinatorLease, conversation: genesis.conversation })
  group.head = 1
  group.revisions.set(`mission:${groupId}`, 1)
  for (const m of genesis.memberships) {
    group.memberships.set(m.membershipId, m)
    group.membershipByMember.set(actorKey(m.member), m.membershipId)
    group.revisions.set(`membership:${m.membershipId}`, 1)
  }
  state.groups.set(groupId, group)
  return group
}

/** A {@link HandlerContext} over `state` at `clock`, verifying embedded documents with the test Registry. */
export function context(state: AuthorityState, groupId: string | undefined, clock: TestClock = testClock(), ids = counterIds()): HandlerContext {
  return {
    state,
    group: groupId === undefined ? undefined : state.groups.get(groupId),
    now: new Date(clock.nowMs).toISOString(),
    nowMs: clock.nowMs,
    authority: cast.authority.actor,
    policy: DEFAULT_TEST_POLICY,
    newId: ids,
    after: (seconds) => new Date(clock.nowMs + seconds * 1000).toISOString(),
    commandHash: `sha256:${'0'.repeat(64)}`,
    coordinatorEpoch: undefined,
    verifyDocument: () => {},
  }
}

/**
 * Runs one handler the way the pipeline does: handler, then materialize (sequences, revisions,
 * Authority signatures), then the reducers. Returns the appended Events. A rejection propagates as
 * the handler's `ProtocolError` with the state untouched.
 */
export function run<K extends CommandKind>(
  state: AuthorityState,
  handler: HandlerFor<K>,
  cmd: CommandOf<K>,
  reducers: Partial<ReducerTable>,
  clock: TestClock = testClock(),
  ids = counterIds(),
): Event[] {
  const ctx = { ...context(state, cmd.groupId, clock, ids), commandHash: signingHash(cmd as object), coordinatorEpoch: cmd.coordinatorEpoch }
  const drafts: readonly AnyEventDraft[] = handler(cmd, ctx)
  const events = materialize(
    state,
    { type: 'command', id: cmd.actionId, actor: cmd.actor as ActorRef, correlationId: cmd.correlationId, ...(cmd.groupId === undefined ? {} : { groupId: cmd.groupId }), commandHash: ctx.commandHash },
    drafts,
    { now: ctx.now, newId: ids, authority: cast.authority.actor, sign: (e) => sign('event', e, cast.authority.key) as unknown as Event },
  )
  const missing = events.filter((e) => (reducers as Record<string, unknown>)[e.kind] === undefined).map((e) => e.kind)
  if (missing.length > 0) throw new Error(`run: no reducer given for ${missing.join(', ')}`)
  applyEvents(state, events, reducers as ReducerTable)
  return events
}

/** An active Membership document of `who` in `group` at epoch 1, seeing the whole history; `overrides` last. */
export function memberDoc(group: GroupState, who: Cast, role: Membership['role'], overrides: Partial<Membership> = {}): Membership {
  return {
    membershipId: `${group.groupId}:membership:${who.actor.id}`,
    missionId: group.missionId,
    groupId: group.groupId,
    member: who.actor,
    role,
    state: 'active',
    membershipEpoch: 1,
    scopes: ['group:read'],
    visibilityStartSequence: 0,
    grantedAt: T0,
    activatedAt: T0,
    ...overrides,
  }
}
