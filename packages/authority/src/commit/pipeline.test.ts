import { signedVerifier } from '@weft/validators/signed'
import { describe, expect, it } from 'vitest'
import { cast, GROUP, testClock, testRegistry, type TestClock, seededRandom, signed } from '@weft/testkit/fixtures'
import { bootstrapCommands, inGroup, missionCreatePayload, started, testHandlers, testReducers, workerMembership } from '../../test/fixtures-pipeline.js'
import type { CommandHandlers } from '../gen/handlers.js'
import { draft } from './handler.js'
import { createPipelineWith, REFERENCE_ENGINE, TUNED_ENGINE, type Authority, type CommitEngine, type PipelineOptions } from './pipeline.js'

/** A pipeline over the test tables (or `handlers`) on `clock`, with `options`, running the transaction steps of `engine`. */
function testPipeline(clock: TestClock, options: Partial<PipelineOptions> = {}, engine: CommitEngine = TUNED_ENGINE): Authority {
  return createPipelineWith(
    {
      handlers: testHandlers,
      reducers: testReducers,
      registry: testRegistry(),
      keys: { authority: cast.authority.actor as { type: 'service'; id: string }, signingKey: cast.authority.key },
      clock: { now: () => clock.nowMs },
      random: seededRandom(),
      policy: { controlPlane: [cast.controlPlane.actor.id] },
      ...options,
    },
    engine,
  )
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
  const open = (clock: TestClock, checkEventPayloads?: boolean): Authority => testPipeline(clock, { handlers: offSchema, ...(checkEventPayloads === undefined ? {} : { checkEventPayloads }) })
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

describe('differential: the tuned pipeline and the reference path', () => {
  it('accepts and refuses the same Commands with byte-identical receipts, logs and state, eager or deferred', async () => {
    for (const deferEventSignatures of [false, true]) {
      const clock = testClock()
      const open = (engine: CommitEngine): Authority => testPipeline(clock, { deferEventSignatures }, engine)
      const [tuned, reference] = [open(TUNED_ENGINE), open(REFERENCE_ENGINE)]
      // The bootstrap, a retry and a refusal, signed; then the bootstrap again on the trusted path.
      const commands = bootstrapCommands(clock)
      const outcome = async (authority: Authority, bytes: string): Promise<string> => JSON.stringify(await authority.submit(bytes).catch((error: Error) => error.message))
      for (const bytes of [...commands, commands.at(-1)!, '{}']) expect(await outcome(tuned, bytes)).toBe(await outcome(reference, bytes))
      const [tunedTrusted, referenceTrusted] = [open(TUNED_ENGINE), open(REFERENCE_ENGINE)]
      const trusted = (authority: Authority, bytes: string): string => JSON.stringify(authority.submitTrusted(JSON.parse(bytes) as object))
      for (const bytes of commands) expect(trusted(tunedTrusted, bytes)).toBe(trusted(referenceTrusted, bytes))
      expect(tunedTrusted.state).toEqual(referenceTrusted.state)
      const log = (authority: Authority): string => JSON.stringify([...authority.organizationEvents(), ...authority.events(GROUP)])
      expect(log(tuned)).toBe(log(reference))
      expect(tuned.state).toEqual(reference.state)
      expect(tuned.replayState()).toEqual(tuned.state)
    }
  })
})
