import { signedVerifier } from '@weft/validators/signed'
import { describe, expect, it } from 'vitest'
import { cast, GROUP, testClock, testRegistry, type TestClock } from '../../test/fixtures.js'
import { bootstrapCommands, inGroup, missionCreatePayload, seededRandom, signed, started, testHandlers, testReducers, workerMembership } from '../../test/fixtures-pipeline.js'
import type { CommandHandlers } from '../gen/handlers.js'
import { draft } from './handler.js'
import { createPipeline, type Authority, type PipelineOptions } from './pipeline.js'

/** A pipeline over the test tables (or `handlers`) on `clock`, with `options`. */
function testPipeline(clock: TestClock, options: Partial<PipelineOptions> = {}): Authority {
  return createPipeline({
    handlers: testHandlers,
    reducers: testReducers,
    registry: testRegistry(),
    keys: { authority: cast.authority.actor as { type: 'service'; id: string }, signingKey: cast.authority.key },
    clock: { now: () => clock.nowMs },
    random: seededRandom(),
    policy: { controlPlane: [cast.controlPlane.actor.id] },
    ...options,
  })
}

describe('deferEventSignatures', () => {
  it('appends the same signed Events, byte for byte, as signing in the transaction, and replays to the same state', async () => {
    const clock = testClock()
    const open = (deferEventSignatures: boolean): Authority => testPipeline(clock, { deferEventSignatures })
    const commands = bootstrapCommands(clock)
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

describe('checkEventPayloads', () => {
  // A handler bug: a `mission.cancelled` payload off its schema (the reason must be text).
  const offSchema = new Proxy(testHandlers, {
    get: (target, kind: string) => (kind === 'mission.cancel' ? () => [draft('mission.cancelled', { reason: 42 } as never)] : target[kind as keyof CommandHandlers]),
  })
  const open = (clock: TestClock, checkEventPayloads?: boolean): Authority =>
    testPipeline(clock, { handlers: offSchema, ...(checkEventPayloads === undefined ? {} : { checkEventPayloads }) })
  const setUp = async (authority: Authority, clock: TestClock): Promise<void> => {
    await authority.submit(signed('mission.create', missionCreatePayload(), cast.owner, { groupId: GROUP }, clock))
  }

  it('checks drafted payloads on submit always, on submitTrusted only when asked; a failure appends nothing', async () => {
    const clock = testClock()
    const [signedPath, checked, unchecked] = [open(clock), open(clock, true), open(clock)]
    for (const authority of [signedPath, checked, unchecked]) await setUp(authority, clock)
    const cancel = signed('mission.cancel', { reason: 'r' }, cast.owner, inGroup(cast.owner), clock)
    await expect(signedPath.submit(cancel)).rejects.toMatchObject({ code: 'INTERNAL_ERROR' })
    expect(() => checked.submitTrusted(JSON.parse(cancel) as object)).toThrow(expect.objectContaining({ code: 'INTERNAL_ERROR' }))
    for (const authority of [signedPath, checked]) {
      expect(authority.audit().at(-1)).toMatchObject({ stage: 'commit', detail: expect.stringContaining('mission.cancelled payload fails its schema') })
      expect(authority.events(GROUP)).toHaveLength(1)
    }
    // Off by default on the trusted path: the package's own handlers are checked by their tests.
    expect(unchecked.submitTrusted(JSON.parse(cancel) as object).events[0]?.payload).toEqual({ reason: 42 })
  })
})

describe('submitTrusted', () => {
  it('freezes the objects of the Command that its Events hold, in place, rather than copying them', async () => {
    const { authority, clock } = await started()
    const membership = workerMembership(cast.worker2)
    const cmd = JSON.parse(signed('membership.change', membership, cast.coordinator, inGroup(cast.coordinator), clock)) as { payload: { member: object; scopes: string[] } }
    const [event] = authority.submitTrusted(cmd).events
    const held = (event!.payload as { membership: { member: object; scopes: string[] } }).membership
    expect(held.member).toBe(cmd.payload.member)
    expect(held.scopes).toBe(cmd.payload.scopes)
    expect(Object.isFrozen(cmd.payload.scopes) && Object.isFrozen(cmd.payload.member)).toBe(true)
    expect(() => cmd.payload.scopes.push('group:admin')).toThrow(TypeError)
  })
})
