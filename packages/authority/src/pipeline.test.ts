import { signedVerifier } from '@weft/validators/signed'
import { describe, expect, it } from 'vitest'
import { agentCard, cast, GROUP, testClock, testRegistry } from '../test/fixtures.js'
import { AGENTS, inGroup, missionCreatePayload, seededRandom, signed, testHandlers, testReducers, workerMembership } from '../test/fixtures-pipeline.js'
import { createPipeline, type Authority } from './pipeline.js'

describe('deferEventSignatures', () => {
  it('appends the same signed Events, byte for byte, as signing in the transaction, and replays to the same state', async () => {
    const clock = testClock()
    const open = (deferEventSignatures: boolean): Authority =>
      createPipeline({
        handlers: testHandlers,
        reducers: testReducers,
        registry: testRegistry(),
        keys: { authority: cast.authority.actor as { type: 'service'; id: string }, signingKey: cast.authority.key },
        clock: { now: () => clock.nowMs },
        random: seededRandom(),
        policy: { controlPlane: [cast.controlPlane.actor.id] },
        deferEventSignatures,
      })
    const commands = [
      ...AGENTS.flatMap((who) => [
        signed('ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(who) }, cast.controlPlane, {}, clock),
        signed('ext.missionweaveprotocol.identity.session_open', { agentId: who.actor.id }, cast.controlPlane, {}, clock),
      ]),
      signed('mission.create', missionCreatePayload(), cast.owner, { groupId: GROUP }, clock),
      signed('membership.change', workerMembership(cast.worker1), cast.coordinator, inGroup(cast.coordinator), clock),
      signed('mission.renew_coordinator', { leaseSeconds: 600 }, cast.coordinator, inGroup(cast.coordinator, { coordinatorEpoch: 1 }), clock),
    ]
    const eager = open(false)
    const deferred = open(true)
    // The trusted path computes the Command's signing hash on first read: the same hash either way.
    const trusted = open(true)
    for (const bytes of commands) {
      const [a, b] = [await eager.submit(bytes), await deferred.submit(bytes)]
      const c = trusted.submitTrusted(JSON.parse(bytes) as object)
      expect(JSON.stringify(b)).toBe(JSON.stringify(a))
      expect(JSON.stringify(c)).toBe(JSON.stringify(a))
    }
    const log = (authority: Authority): string => JSON.stringify([...authority.organizationEvents(), ...authority.events(GROUP)])
    expect(log(deferred)).toBe(log(eager))
    expect(log(trusted)).toBe(log(eager))
    const events = [...deferred.organizationEvents(), ...deferred.events(GROUP)]
    expect(events).toHaveLength(commands.length)
    expect(events.filter((e) => !signedVerifier.verify('event', JSON.stringify(e), testRegistry()).ok)).toEqual([])
    expect(deferred.replayState()).toEqual(deferred.state)
    expect(deferred.state).toEqual(eager.state)
    expect(trusted.state).toEqual(eager.state)
    const retried = commands.at(-1)!
    expect(trusted.submitTrusted(JSON.parse(retried) as object)).toMatchObject({ duplicate: true, events: trusted.events(GROUP).slice(-1) })
    const changed = { ...(JSON.parse(retried) as { payload: object }), payload: { leaseSeconds: 601 } }
    expect(() => trusted.submitTrusted(changed)).toThrow(expect.objectContaining({ code: 'ACTION_ID_COLLISION' }))
  })
})
