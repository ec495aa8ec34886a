import { ProtocolError } from '@weft/codec'
import type { Event } from '@weft/spec'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { actorKey } from '../src/model.js'
import type { Authority } from '../src/commit/pipeline.js'
import { createMemoryStore } from '../src/log/store.js'
import { cast, GROUP, testClock, type Cast, type TestClock, refusal, signed } from '@weft/testkit/fixtures'
import { AGENTS, bootstrap, inGroup, missionCreatePayload, testAuthority, workerMembership } from './fixtures-pipeline.js'

/** Envelope epochs read from the Authority's current state, as a well-behaved client tracks them. */
function current(authority: Authority, by: Cast, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const group = authority.group(GROUP)!
  const membershipId = group.membershipByMember.get(actorKey(by.actor))
  const membershipEpoch = membershipId === undefined ? 1 : group.memberships.get(membershipId)!.membershipEpoch
  const sessionEpoch = authority.state.org.agents.get(by.actor.id)?.sessionEpoch
  return { groupId: GROUP, membershipEpoch, ...(by.actor.type === 'agent' ? { sessionEpoch: sessionEpoch ?? 1 } : {}), ...extra }
}

function expectContiguous(events: readonly Event[]): void {
  expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1))
}

describe('state = fold(log)', () => {
  it('replayState() equals the live state after accepted, refused and failed Commands in two Groups', async () => {
    const clock = testClock()
    const authority = testAuthority(clock)
    await bootstrap(authority, clock)
    await authority.submit(signed('membership.change', workerMembership(cast.worker1), cast.coordinator, inGroup(cast.coordinator), clock))
    await authority.submit(signed('mission.create', missionCreatePayload(), cast.owner, { groupId: 'urn:weft:test:group:two' }, clock))
    await refusal(authority.submit(signed('mission.cancel', { reason: 'reducer bug' }, cast.owner, inGroup(cast.owner), clock)))
    await refusal(authority.submit(signed('mission.cancel', { reason: 'stale' }, cast.owner, inGroup(cast.owner, { membershipEpoch: 3 }), clock)))
    clock.advance(30)
    await authority.submit(signed('mission.renew_coordinator', { leaseSeconds: 600 }, cast.coordinator, inGroup(cast.coordinator, { coordinatorEpoch: 1 }), clock))
    await authority.submit(signed('membership.end', { membershipId: workerMembership(cast.worker1).membershipId, reason: 'done' }, cast.coordinator, inGroup(cast.coordinator), clock))
    expect(authority.replayState()).toEqual(authority.state)
    expect(authority.replayState()).not.toBe(authority.state)
  })

  it('a new Authority over the same store starts from the same state and continues the sequence', async () => {
    const clock = testClock()
    const store = createMemoryStore()
    const first = testAuthority(clock, { store })
    await bootstrap(first, clock)
    const grant = signed('membership.change', workerMembership(cast.worker2), cast.coordinator, inGroup(cast.coordinator), clock)
    await first.submit(grant)
    const second = testAuthority(clock, { store })
    expect(second.state).toEqual(first.state)
    expect(await second.submit(grant)).toMatchObject({ duplicate: true })
    const next = await second.submit(signed('mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, inGroup(cast.coordinator, { coordinatorEpoch: 1 }), clock))
    expect(next.events[0]?.sequence).toBe(3)
    expectContiguous(second.events(GROUP))
  })

  it('holds for any sequence of Commands: live state = replay, sequences contiguous, every refusal audited', async () => {
    const worker = fc.constantFrom(cast.worker1, cast.worker2, cast.worker3)
    type Step = (a: Authority, clock: TestClock, sent: string[]) => string | undefined
    const steps: fc.Arbitrary<Step>[] = [
      worker.map(
        (w): Step =>
          (a, clock) =>
            signed('membership.change', workerMembership(w), cast.coordinator, current(a, cast.coordinator), clock),
      ),
      worker.map(
        (w): Step =>
          (a, clock) =>
            signed('membership.end', { membershipId: workerMembership(w).membershipId, reason: 'done' }, cast.coordinator, current(a, cast.coordinator), clock),
      ),
      worker.map(
        (w): Step =>
          (a, clock) =>
            signed('membership.end', { membershipId: workerMembership(w).membershipId, reason: 'leaving' }, w, current(a, w), clock),
      ),
      fc.constantFrom(...AGENTS).map(
        (who): Step =>
          (_a, clock) =>
            signed('ext.missionweaveprotocol.identity.session_open', { agentId: who.actor.id }, cast.controlPlane, {}, clock),
      ),
      fc.integer({ min: 1, max: 3600 }).map(
        (s): Step =>
          (a, clock) =>
            signed('mission.renew_coordinator', { leaseSeconds: s }, cast.coordinator, current(a, cast.coordinator, { coordinatorEpoch: 1 }), clock),
      ),
      fc.constantFrom('reducer bug', 'stale').map(
        (reason): Step =>
          (a, clock) =>
            signed('mission.cancel', { reason }, cast.owner, current(a, cast.owner, reason === 'stale' ? { membershipEpoch: 9 } : {}), clock),
      ),
      fc.nat().map(
        (i): Step =>
          (_a, _clock, sent) =>
            sent.length === 0 ? undefined : sent[i % sent.length],
      ),
      fc.integer({ min: 1, max: 400 }).map(
        (s): Step =>
          (_a, clock) =>
            void clock.advance(s),
      ),
    ]
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(...steps), { maxLength: 14 }), async (run) => {
        const clock = testClock()
        const authority = testAuthority(clock)
        await bootstrap(authority, clock)
        const sent: string[] = []
        let refusals = 0
        for (const step of run) {
          const bytes = step(authority, clock, sent)
          if (bytes === undefined) continue
          sent.push(bytes)
          await authority.submit(bytes).catch((error: unknown) => {
            expect(error).toBeInstanceOf(ProtocolError)
            refusals++
          })
        }
        expect(authority.replayState()).toEqual(authority.state)
        expectContiguous(authority.events(GROUP))
        expect(authority.audit()).toHaveLength(refusals)
      }),
      { numRuns: 25 },
    )
  })
})

// The client-driven run over the domain handlers lives in lifecycle-scenarios.test.ts and lifecycle-kinds.test.ts (createWorld of world.ts).

describe('the in-memory store', () => {
  const event = (groupId: string | undefined, sequence: number | undefined, id: string) =>
    ({ eventId: id, kind: 'membership.changed', ...(groupId === undefined ? {} : { groupId, sequence }) }) as unknown as Event
  const receipt = (actionId: string) => ({ actionId, actor: cast.owner.actor, kind: 'mission.cancel' as const, commandHash: 'sha256:0', events: [], acceptedAt: 'now' })

  it('appends a transaction whole or not at all: a gap or a reused receipt key leaves nothing behind', () => {
    const store = createMemoryStore()
    store.appendTransaction([event('g', 1, 'e1'), event(undefined, undefined, 'o1'), event('g', 2, 'e2')], receipt('a1'))
    expect(() => store.appendTransaction([event('g', 3, 'e3'), event('g', 5, 'e5')], receipt('a2'))).toThrow(/sequence 5/)
    expect(() => store.appendTransaction([event('g', 3, 'e3')], receipt('a1'))).toThrow(/already exists/)
    expect([...store.allEvents()].map((e) => e.eventId)).toEqual(['e1', 'o1', 'e2'])
    expect(store.receipt(actorKey(cast.owner.actor), 'a2')).toBeUndefined()
    expect(store.receipt(actorKey(cast.owner.actor), 'a1')?.actionId).toBe('a1')
  })

  it('pages a Group log by sequence', () => {
    const store = createMemoryStore()
    store.appendTransaction(
      [1, 2, 3, 4].map((n) => event('g', n, `e${n}`)),
      receipt('a'),
    )
    expect(store.groupEvents('g', 1, 2).map((e) => e.sequence)).toEqual([2, 3])
    expect(store.groupEvents('g', 4)).toEqual([])
    expect(store.groupEvents('other')).toEqual([])
    expect(store.organizationEvents()).toEqual([])
  })
})
