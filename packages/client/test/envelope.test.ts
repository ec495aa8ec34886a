import { sign, UsageError } from '@weft/codec'
import { COMMAND_CATALOG, commandInfo, type CommandKind } from '@weft/spec'
import { signedVerifier } from '@weft/validators/signed'
import { describe, expect, it } from 'vitest'
import { envelopeEpochs, newUrnUuid, timestampOf } from '../src/index.js'
import { cast, clientOf, counterRandom, fakeAuthority, GROUP, OTHER_GROUP, registry, T0 } from './fixtures.js'

const UUID_V4 = /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const EPOCH_MEMBERS = ['sessionEpoch', 'membershipEpoch', 'coordinatorEpoch'] as const

/** Clients with every epoch they can hold known: session 7, membership 5, and (for `coordinator`) the lease at 2. */
function equipped() {
  const { transport } = fakeAuthority()
  const worker = clientOf(cast.worker, transport)
  worker.epochs.setSession(7)
  worker.epochs.setMembership(GROUP, 5)
  const coordinator = clientOf(cast.coordinator, transport)
  coordinator.epochs.setSession(7)
  coordinator.epochs.setMembership(GROUP, 5)
  coordinator.epochs.setCoordinator(GROUP, 2)
  const owner = clientOf(cast.owner, transport)
  owner.epochs.setMembership(GROUP, 5)
  const service = clientOf(cast.controlPlane, transport)
  return { worker, coordinator, owner, service }
}

const epochsOf = (command: Record<string, unknown>) => Object.fromEntries(EPOCH_MEMBERS.filter((m) => m in command).map((m) => [m, command[m]]))

describe('envelope per issuer type (§15.1)', () => {
  it('an Agent carries Group, Session and Membership Epochs, and no Coordinator Epoch without the lease', () => {
    const { command, bytes } = equipped().worker.build('work.accept_offer', { workItemId: 'urn:weft:client-test:work:1', ownershipLeaseSeconds: 600 })
    expect(command).toMatchObject({ protocolVersion: '0.1', actor: cast.worker.actor, kind: 'work.accept_offer', groupId: GROUP, issuedAt: T0 })
    expect(epochsOf(command)).toEqual({ sessionEpoch: 7, membershipEpoch: 5 })
    expect(signedVerifier.verify('command', bytes, registry).ok).toBe(true)
  })

  it('an Agent holding the Coordinator lease adds its Coordinator Epoch to every Command in that Group', () => {
    const { coordinator } = equipped()
    for (const kind of ['work.offer', 'membership.change', 'work.accept_result'] as const) {
      expect(epochsOf(coordinator.build(kind, {} as never).command)).toEqual({ sessionEpoch: 7, membershipEpoch: 5, coordinatorEpoch: 2 })
    }
  })

  it('the Coordinator Epoch belongs to its Group: elsewhere the same Agent carries none', () => {
    const { coordinator } = equipped()
    coordinator.epochs.setMembership(OTHER_GROUP, 9)
    const { command } = coordinator.build('work.offer', {} as never, { groupId: OTHER_GROUP })
    expect(command.groupId).toBe(OTHER_GROUP)
    expect(epochsOf(command)).toEqual({ sessionEpoch: 7, membershipEpoch: 9 })
  })

  it('a kind that needs the Coordinator Epoch is refused locally when the Agent holds no lease', () => {
    const { worker } = equipped()
    for (const kind of ['work.accept_result', 'mission.renew_coordinator', 'mission.terminate'] as const) {
      expect(() => worker.build(kind, {} as never)).toThrow(UsageError)
      expect(() => worker.build(kind, {} as never)).toThrow(/Coordinator lease/)
    }
  })

  it('a human carries its Membership Epoch and never a Session or Coordinator Epoch', () => {
    const { command, bytes } = equipped().owner.build('work.cancel', { workItemId: 'urn:weft:client-test:work:1', reason: 'Not needed.' })
    expect(command.groupId).toBe(GROUP)
    expect(epochsOf(command)).toEqual({ membershipEpoch: 5 })
    expect(signedVerifier.verify('command', bytes, registry).ok).toBe(true)
  })

  it('mission.create and mission.create_follow_up name the new Group and carry no epoch', () => {
    const { owner } = equipped()
    for (const kind of ['mission.create', 'mission.create_follow_up'] as const) {
      const { command, bytes } = owner.build(kind, {} as never, { groupId: OTHER_GROUP })
      expect(command.groupId).toBe(OTHER_GROUP)
      expect(epochsOf(command)).toEqual({})
      expect(signedVerifier.verify('command', bytes, registry).ok).toBe(true)
    }
  })

  it('a service carries no epoch, with or without a Group', () => {
    const { service } = equipped()
    const inGroup = service.build('work.cancel', { workItemId: 'urn:weft:client-test:work:1', reason: 'Policy.' }).command
    expect(inGroup.groupId).toBe(GROUP)
    expect(epochsOf(inGroup)).toEqual({})
    const bootstrap = service.build('ext.missionweaveprotocol.identity.session_open', { agentId: cast.worker.actor.id }).command
    expect('groupId' in bootstrap).toBe(false)
    expect(epochsOf(bootstrap)).toEqual({})
  })

  it('an Organization-scoped kind refuses an explicit groupId', () => {
    expect(() => equipped().service.build('ext.missionweaveprotocol.registry.agent_card_register', {} as never, { groupId: GROUP })).toThrow(/Organization-scoped/)
  })
})

describe('envelope for every catalogued kind and issuer', () => {
  // §15.1: the two Mission-creating kinds omit Membership Epochs; every other human Command carries one.
  const createsGroup = new Set<string>(['mission.create', 'mission.create_follow_up'])
  const cases = COMMAND_CATALOG.flatMap((entry) => entry.issuerTypes.map((type) => [entry.kind, type] as const))

  it.each(cases)('%s by a %s passes the envelope schema and carries exactly the §15.1 members', (kind, type) => {
    const clients = equipped()
    const client = type === 'human' ? clients.owner : type === 'service' ? clients.service : clients.coordinator
    const { command, bytes } = client.build(kind as CommandKind, {} as never)
    const result = signedVerifier.verify('command', bytes, registry)
    expect(result.ok, JSON.stringify(result.ok ? null : [result.stage, result.reason, result.detail])).toBe(true)
    expect(command.kind).toBe(kind)
    const organization = commandInfo(kind).scope === 'organization'
    expect(command.groupId).toBe(organization ? undefined : GROUP)
    const expected = organization || type === 'service' ? {} : type === 'human' ? (createsGroup.has(kind) ? {} : { membershipEpoch: 5 }) : { sessionEpoch: 7, membershipEpoch: 5, coordinatorEpoch: 2 }
    expect(epochsOf(command)).toEqual(expected)
  })

  it('the schema check used above does reject a wrong epoch set (control)', () => {
    const { owner } = equipped()
    const { command } = owner.build('work.cancel', { workItemId: 'urn:weft:client-test:work:1', reason: 'x' })
    // §6.3: a human never carries a Session Epoch.
    const forged = sign('command', { ...command, sessionEpoch: 1 }, cast.owner.key)
    const result = signedVerifier.verify('command', JSON.stringify(forged), registry)
    expect(result.ok ? 'ok' : result.stage).toBe('schema')
  })

  it('an Agent without the lease carries exactly Session and Membership Epochs on every kind that does not need the lease', () => {
    const { worker } = equipped()
    const kinds = COMMAND_CATALOG.filter((e) => (e.issuerTypes as readonly string[]).includes('agent') && !(e.requiredEpochs.agent as readonly string[]).includes('coordinator'))
    expect(kinds.length).toBeGreaterThan(10)
    for (const { kind } of kinds) expect(epochsOf(worker.build(kind, {} as never).command)).toEqual({ sessionEpoch: 7, membershipEpoch: 5 })
  })

  it('an issuer outside the catalog still gets a schema-valid envelope, so the Authority decides (AUTH_FORBIDDEN)', () => {
    const { owner, worker } = equipped()
    // work.accept_offer is Agent-only; mission.create is human-only.
    const human = owner.build('work.accept_offer', {} as never)
    expect(epochsOf(human.command)).toEqual({ membershipEpoch: 5 })
    expect(signedVerifier.verify('command', human.bytes, registry).ok).toBe(true)
    expect(envelopeEpochs('mission.create', 'agent', false)).toEqual(['session', 'membership'])
    expect(epochsOf(worker.build('mission.create', {} as never).command)).toEqual({ sessionEpoch: 7, membershipEpoch: 5 })
  })
})

describe('envelope members and local misuse', () => {
  it('fills fresh v4 urn:uuid Action and correlation IDs, and issuedAt from the clock', () => {
    const { worker } = equipped()
    const a = worker.build('work.unblock', { workItemId: 'urn:weft:client-test:work:1' }).command
    const b = worker.build('work.unblock', { workItemId: 'urn:weft:client-test:work:1' }).command
    for (const id of [a.actionId, a.correlationId, b.actionId, b.correlationId]) expect(id).toMatch(UUID_V4)
    expect(new Set([a.actionId, a.correlationId, b.actionId, b.correlationId]).size).toBe(4)
    expect(a.issuedAt).toBe(T0)
    expect(a.signature.createdAt).toBe(T0)
  })

  it('copies every optional member given and leaves absent ones out', () => {
    const { worker } = equipped()
    const options = {
      expectedRevision: 4,
      correlationId: 'urn:weft:client-test:correlation:1',
      causedByEventId: 'urn:weft:client-test:event:9',
      conversationId: 'urn:weft:client-test:conversation:1',
      workItemId: 'urn:weft:client-test:work:1',
      cooperationOverrideGrantId: 'urn:weft:client-test:override:1',
      actionId: 'urn:weft:client-test:action:1',
      issuedAt: '2026-07-15T01:02:03Z',
      extensions: { 'urn:weft:client-test:profile': { version: '1.0.0', critical: false, data: { note: 'kept' } } },
    }
    const { command, bytes } = worker.build('work.unblock', { workItemId: 'urn:weft:client-test:work:1' }, options)
    expect(command).toMatchObject(options)
    expect(command.signature.createdAt).toBe(options.issuedAt)
    expect(signedVerifier.verify('command', bytes, registry).ok).toBe(true)
    const bare = worker.build('work.unblock', { workItemId: 'urn:weft:client-test:work:1' }).command
    for (const member of ['expectedRevision', 'causedByEventId', 'conversationId', 'workItemId', 'cooperationOverrideGrantId', 'extensions']) {
      expect(member in bare, member).toBe(false)
    }
  })

  it('bytes are the JSON text of the signed command', () => {
    const { command, bytes } = equipped().owner.build('mission.cancel', { reason: 'Changed plans.' })
    expect(JSON.parse(bytes)).toEqual(command)
  })

  it('a missing Session Epoch says to open a session', () => {
    const { worker } = equipped()
    worker.epochs.setSession(undefined)
    expect(() => worker.build('work.unblock', {} as never)).toThrow(UsageError)
    expect(() => worker.build('work.unblock', {} as never)).toThrow(/open a session/)
  })

  it('a missing Membership Epoch says to join the Group, for Agents and humans alike', () => {
    const { worker, owner } = equipped()
    for (const client of [worker, owner]) {
      expect(() => client.build('work.unblock', {} as never, { groupId: OTHER_GROUP })).toThrow(UsageError)
      expect(() => client.build('work.unblock', {} as never, { groupId: OTHER_GROUP })).toThrow(/join the Group/)
    }
  })

  it('a Group-scoped kind without any Group is refused; mission.create asks for the Group it creates', () => {
    const { transport } = fakeAuthority()
    const owner = clientOf(cast.owner, transport, null)
    expect(() => owner.build('mission.cancel', { reason: 'x' })).toThrow(/options.groupId/)
    expect(() => owner.build('mission.create', {} as never)).toThrow(/Group it creates/)
  })

  it('an unknown kind is refused', () => {
    expect(() => equipped().service.build('mission.pause' as CommandKind, {} as never)).toThrow(UsageError)
  })
})

describe('ids', () => {
  it('newUrnUuid sets version 4 and the RFC 9562 variant whatever the random bytes', () => {
    expect(newUrnUuid(() => new Uint8Array(16).fill(0xff))).toBe('urn:uuid:ffffffff-ffff-4fff-bfff-ffffffffffff')
    expect(newUrnUuid(() => new Uint8Array(16))).toBe('urn:uuid:00000000-0000-4000-8000-000000000000')
    expect(newUrnUuid(counterRandom())).toMatch(UUID_V4)
  })

  it('refuses a short random source and a non-finite clock', () => {
    expect(() => newUrnUuid(() => new Uint8Array(8))).toThrow(UsageError)
    expect(() => timestampOf(Number.NaN)).toThrow(UsageError)
    expect(timestampOf(0)).toBe('1970-01-01T00:00:00.000Z')
  })
})
