import { ProtocolError, UsageError } from '@weft/codec'
import { COMMAND_KINDS, commandInfo, type CommandKind, type CommandPayload } from '@weft/spec'
import { commandPayloads } from '@weft/validators/payloads'
import { signedVerifier } from '@weft/validators/signed'
import { describe, expect, it } from 'vitest'
import { COMMAND_BUILDER_NAMES, createClient, type Client, type Transport } from '../src/index.js'
import { cast, clientOf, fakeAuthority, GROUP, lastCommand, membership, missionCreated, OTHER_GROUP, registry, rejectionOf, type Principal } from './fixtures.js'

const WORK = 'urn:weft:client-test:work:1'

/** A client for `who` with every epoch it may hold set by hand (session 3, membership 2, lease 1 for the Coordinator). */
function ready(who: Principal, transport: Transport): Client {
  const client = clientOf(who, transport)
  if (who.actor.type !== 'service') client.epochs.setMembership(GROUP, 2)
  if (who.actor.type === 'agent') client.epochs.setSession(3)
  if (who === cast.coordinator) client.epochs.setCoordinator(GROUP, 1)
  return client
}

/** The Principal of the cast that the catalog lets issue `kind` first. */
function issuerOf(kind: CommandKind): Principal {
  const type = commandInfo(kind).issuerTypes[0]
  return type === 'human' ? cast.owner : type === 'service' ? cast.controlPlane : cast.coordinator
}

describe('generated builders', () => {
  it('name every catalogued kind once, with distinct method names', () => {
    expect(Object.keys(COMMAND_BUILDER_NAMES).sort()).toEqual([...COMMAND_KINDS].sort())
    expect(new Set(Object.values(COMMAND_BUILDER_NAMES)).size).toBe(COMMAND_KINDS.length)
  })

  it.each(Object.entries(COMMAND_BUILDER_NAMES))('%s: client.%s sends exactly that kind, verified by the Authority', async (kind, name) => {
    const { transport, submissions } = fakeAuthority()
    const client = ready(issuerOf(kind as CommandKind), transport)
    const builder = client[name] as (payload: unknown) => Promise<unknown>
    const receipt = await builder({})
    expect(receipt).toMatchObject({ kind, duplicate: false })
    expect(lastCommand(submissions).kind).toBe(kind)
  })

  // Valid payloads; the Worker issues work.accept_offer, the catalog's first issuer the others.
  const samples: { readonly [K in CommandKind]?: CommandPayload<K> } = {
    'work.accept_offer': { workItemId: WORK, ownershipLeaseSeconds: 600 },
    'mission.renew_coordinator': { leaseSeconds: 3600 },
    'work.cancel': { workItemId: WORK, reason: 'No longer needed.' },
    'mission.cancel': { reason: 'The objective moved.' },
    'ext.missionweaveprotocol.identity.session_open': { agentId: cast.worker.actor.id },
    'ext.missionweaveprotocol.core.work_dependency_add': { workItemId: WORK, dependencyId: 'urn:weft:client-test:work:0' },
  }

  it.each(Object.entries(samples))('%s with a valid payload sends that payload unchanged', async (kind, payload) => {
    expect(commandPayloads[kind as CommandKind].check(payload)).toBe(true)
    const { transport, submissions } = fakeAuthority()
    const client = ready(kind === 'work.accept_offer' ? cast.worker : issuerOf(kind as CommandKind), transport)
    await (client[COMMAND_BUILDER_NAMES[kind as CommandKind]] as (p: unknown) => Promise<unknown>)(payload)
    expect(lastCommand(submissions).payload).toEqual(payload)
  })
})

describe('send and resend', () => {
  it('resolves the receipt of the Authority', async () => {
    const { transport } = fakeAuthority(() => [{ kind: 'work.cancelled', payload: { workItemId: WORK } }])
    const receipt = await ready(cast.owner, transport).workCancel({ workItemId: WORK, reason: 'x' })
    expect(receipt.groupId).toBe(GROUP)
    expect(receipt.events.map((e) => [e.kind, e.sequence])).toEqual([['work.cancelled', 1]])
    // The synthetic Events are genuine Authority-signed Event envelopes.
    for (const event of receipt.events) expect(signedVerifier.verify('event', JSON.stringify(event), registry).ok).toBe(true)
  })

  it('resend submits the same bytes and Action ID; the Authority answers with the original receipt (§19)', async () => {
    const { transport, submissions } = fakeAuthority()
    const client = ready(cast.worker, transport)
    const built = client.build('work.unblock', { workItemId: WORK })
    const first = await client.resend(built)
    const second = await client.resend(built)
    expect(submissions.map((s) => s.bytes)).toEqual([built.bytes, built.bytes])
    expect(second).toMatchObject({ actionId: built.command.actionId, commandHash: first.commandHash, duplicate: true })
    // A new send of the same payload is a new Command.
    await client.workUnblock({ workItemId: WORK })
    expect(lastCommand(submissions).actionId).not.toBe(built.command.actionId)
  })

  it('a refusal reaches the caller as the very ProtocolError the transport raised', async () => {
    const refusal = new ProtocolError('WORK_OFFER_EXPIRED', 'The offer expired.', { relatedActionId: 'urn:weft:client-test:action:x' })
    const { transport } = fakeAuthority(() => {
      throw refusal
    })
    const error = await rejectionOf(ready(cast.worker, transport).workAcceptOffer({ workItemId: WORK, ownershipLeaseSeconds: 60 }))
    expect(error).toBe(refusal)
  })

  it('a key the Registry does not bind to the actor is refused by the Authority with AUTH_INVALID_SIGNATURE', async () => {
    const { transport } = fakeAuthority()
    const impostor = createClient({ actor: cast.owner.actor, signingKey: cast.worker.key, transport, groupId: GROUP })
    impostor.epochs.setMembership(GROUP, 2)
    const error = await rejectionOf(impostor.missionCancel({ reason: 'x' }))
    expect(error).toBeInstanceOf(ProtocolError)
    expect((error as ProtocolError).code).toBe('AUTH_INVALID_SIGNATURE')
  })

  it('a local misuse rejects with UsageError and sends nothing', async () => {
    const { transport, submissions } = fakeAuthority()
    const error = await rejectionOf(clientOf(cast.worker, transport).workUnblock({ workItemId: WORK }))
    expect(error).toBeInstanceOf(UsageError)
    expect(submissions).toHaveLength(0)
  })

  it('withGroup shares the Principal and epochs but changes the default Group', async () => {
    const { transport, submissions } = fakeAuthority()
    const client = ready(cast.worker, transport)
    const other = client.withGroup(OTHER_GROUP)
    other.epochs.setMembership(OTHER_GROUP, 8)
    expect(client.epochs.membership(OTHER_GROUP)).toBe(8)
    await other.workUnblock({ workItemId: WORK })
    expect(lastCommand(submissions)).toMatchObject({ groupId: OTHER_GROUP, membershipEpoch: 8, sessionEpoch: 3 })
    expect(client.groupId).toBe(GROUP)
  })

  it('createClient refuses malformed options', () => {
    const { transport } = fakeAuthority()
    const good = { actor: cast.worker.actor, signingKey: cast.worker.key, transport }
    expect(() => createClient({ ...good, actor: { type: 'robot', id: 'x' } as never })).toThrow(UsageError)
    expect(() => createClient({ ...good, signingKey: {} as never })).toThrow(UsageError)
    expect(() => createClient({ ...good, transport: {} as never })).toThrow(UsageError)
    expect(() => createClient({ ...good, clock: 5 as never })).toThrow(UsageError)
    // The clock is { now() }, as every Weft factory takes it; a bare function is refused, not called.
    expect(() => createClient({ ...good, clock: (() => 0) as never })).toThrow(/clock must be \{ now\(\): number \}/)
  })
})

describe('epochs learned from receipts', () => {
  it('the MissionOwner learns its Membership Epoch from mission.created and can act in the new Group at once', async () => {
    const { transport, submissions } = fakeAuthority((command) => (command.kind === 'mission.create' ? [{ kind: 'mission.created', payload: missionCreated(OTHER_GROUP, cast.coordinator) }] : []))
    const owner = clientOf(cast.owner, transport)
    expect(owner.epochs.membership(OTHER_GROUP)).toBeUndefined()
    const receipt = await owner.missionCreate({} as never, { groupId: OTHER_GROUP })
    expect(owner.epochs.membership(OTHER_GROUP)).toBe(1)
    await owner.missionCancel({ reason: 'x' }, { groupId: OTHER_GROUP })
    expect(lastCommand(submissions)).toMatchObject({ groupId: OTHER_GROUP, membershipEpoch: 1 })

    // The Coordinator learns its lease and Membership from the same Events, by observing them.
    const coordinator = clientOf(cast.coordinator, transport, OTHER_GROUP)
    coordinator.epochs.setSession(1)
    coordinator.observe(receipt.events)
    expect([coordinator.epochs.membership(OTHER_GROUP), coordinator.epochs.coordinator(OTHER_GROUP)]).toEqual([1, 1])
    await coordinator.workOffer({} as never)
    expect(lastCommand(submissions)).toMatchObject({ sessionEpoch: 1, membershipEpoch: 1, coordinatorEpoch: 1 })
  })

  it('a Worker learns its Session Epoch from the session_opened fact of the control plane’s receipt', async () => {
    const { transport } = fakeAuthority((command) => [
      { kind: 'ext.missionweaveprotocol.identity.session_opened', payload: { agentId: (command.payload as { agentId: string }).agentId, sessionEpoch: 4 }, groupId: null },
    ])
    const controlPlane = clientOf(cast.controlPlane, transport)
    const receipt = await controlPlane.identitySessionOpen({ agentId: cast.worker.actor.id })
    expect(receipt.events[0]?.groupId).toBeUndefined()
    const worker = clientOf(cast.worker, transport)
    const coordinator = clientOf(cast.coordinator, transport)
    for (const c of [worker, coordinator]) c.observe(receipt.events)
    expect([worker.epochs.sessionEpoch, coordinator.epochs.sessionEpoch]).toEqual([4, undefined])
  })

  it('a Membership granted, then ended, for this actor is learned then forgotten', async () => {
    const { transport } = fakeAuthority((command) =>
      command.kind === 'membership.change'
        ? [{ kind: 'membership.changed', payload: { membership: membership(cast.worker, 6, GROUP, 'provisional') } }]
        : [{ kind: 'membership.ended', payload: { membershipId: membership(cast.worker, 6).membershipId, member: cast.worker.actor, membershipEpoch: 6, reason: 'Done.' } }],
    )
    const coordinator = ready(cast.coordinator, transport)
    const worker = clientOf(cast.worker, transport)
    worker.epochs.setSession(3)
    const granted = await coordinator.membershipChange({} as never)
    expect(coordinator.epochs.membership(GROUP)).toBe(2) // about someone else: unchanged
    worker.observe(granted.events)
    expect(worker.epochs.membership(GROUP)).toBe(6)
    expect(worker.build('work.accept_offer', { workItemId: WORK, ownershipLeaseSeconds: 60 }).command.membershipEpoch).toBe(6)
    worker.observe((await coordinator.membershipEnd({} as never)).events)
    expect(worker.epochs.membership(GROUP)).toBeUndefined()
    expect(() => worker.build('work.unblock', { workItemId: WORK })).toThrow(/join the Group/)
  })

  it('a Coordinator assignment to another Agent forgets our lease; one naming us sets it', async () => {
    const assign = (who: Principal, epoch: number) => ({
      kind: 'mission.coordinator.assigned' as const,
      payload: { coordinator: { agentId: who.actor.id, agentCardVersion: 1, coordinatorEpoch: epoch, leaseId: `urn:weft:client-test:lease:${epoch}` } },
    })
    let next = assign(cast.worker, 2)
    const { transport, submissions } = fakeAuthority(() => [next])
    const owner = ready(cast.owner, transport)
    const coordinator = ready(cast.coordinator, transport)
    coordinator.observe((await owner.missionAssignCoordinator({} as never)).events)
    expect(coordinator.epochs.coordinator(GROUP)).toBeUndefined()
    await coordinator.workOffer({} as never)
    expect('coordinatorEpoch' in lastCommand(submissions)).toBe(false)
    await expect(coordinator.workAcceptResult({} as never)).rejects.toThrow(UsageError)
    next = assign(cast.coordinator, 3)
    coordinator.observe((await owner.missionAssignCoordinator({} as never)).events)
    expect(coordinator.epochs.coordinator(GROUP)).toBe(3)
    // The owner, a human, never takes a Coordinator Epoch from these Events.
    expect(owner.epochs.coordinator(GROUP)).toBeUndefined()
  })

  it('learns from the receipt of its own Command; a replayed (duplicate) receipt changes nothing', async () => {
    const { transport } = fakeAuthority(() => [{ kind: 'membership.changed', payload: { membership: membership(cast.worker, 9) } }])
    const worker = ready(cast.worker, transport)
    const built = worker.build('work.unblock', { workItemId: WORK })
    await worker.resend(built)
    expect(worker.epochs.membership(GROUP)).toBe(9)
    worker.epochs.setMembership(GROUP, 10)
    const again = await worker.resend(built)
    expect(again.duplicate).toBe(true)
    expect(worker.epochs.membership(GROUP)).toBe(10)
  })
})

describe('epochs given explicitly (a restarted or late-joining runtime)', () => {
  it('createClient takes the epochs to start with; the first Command carries them', async () => {
    const { transport, submissions } = fakeAuthority()
    const worker = createClient({ actor: cast.worker.actor, signingKey: cast.worker.key, transport, groupId: GROUP, epochs: { session: 4, groupId: GROUP, membership: 7 } })
    await worker.workUnblock({ workItemId: WORK })
    expect(lastCommand(submissions)).toMatchObject({ sessionEpoch: 4, membershipEpoch: 7 })
    const coordinator = createClient({
      actor: cast.coordinator.actor,
      signingKey: cast.coordinator.key,
      transport,
      groupId: GROUP,
      epochs: [
        { session: 1, groupId: GROUP, membership: 2, coordinator: 3 },
        { groupId: OTHER_GROUP, membership: 5 },
      ],
    })
    await coordinator.workOffer({} as never)
    expect(lastCommand(submissions)).toMatchObject({ sessionEpoch: 1, membershipEpoch: 2, coordinatorEpoch: 3 })
    expect(coordinator.epochs.membership(OTHER_GROUP)).toBe(5)
    const good = { actor: cast.owner.actor, signingKey: cast.owner.key, transport }
    expect(() => createClient({ ...good, epochs: { session: 1 } })).toThrow(UsageError) // a human has no Session Epoch
    expect(() => createClient({ ...good, epochs: 3 as never })).toThrow(UsageError)
  })

  it('one Command can carry other epochs; the client keeps its own', async () => {
    const { transport, submissions } = fakeAuthority()
    const worker = ready(cast.worker, transport)
    await worker.workUnblock({ workItemId: WORK }, { sessionEpoch: 9, membershipEpoch: 8 })
    expect(lastCommand(submissions)).toMatchObject({ sessionEpoch: 9, membershipEpoch: 8 })
    expect([worker.epochs.sessionEpoch, worker.epochs.membership(GROUP)]).toEqual([3, 2])
    // An Agent naming a Coordinator Epoch acts under the lease (§7.2), even for a kind that does not require it.
    await worker.workUnblock({ workItemId: WORK }, { coordinatorEpoch: 4 })
    expect(lastCommand(submissions)).toMatchObject({ sessionEpoch: 3, membershipEpoch: 2, coordinatorEpoch: 4 })
    expect(worker.epochs.coordinator(GROUP)).toBeUndefined()
    // An epoch missing from the client may come from the options alone.
    const other = fakeAuthority()
    await clientOf(cast.worker, other.transport).workUnblock({ workItemId: WORK }, { sessionEpoch: 1, membershipEpoch: 1 })
    expect(lastCommand(other.submissions)).toMatchObject({ sessionEpoch: 1, membershipEpoch: 1 })
  })

  it('refuses an epoch the envelope does not carry (§15.1) or that is not a positive integer, sending nothing', async () => {
    const { transport, submissions } = fakeAuthority()
    const misuses: [Client, () => Promise<unknown>][] = []
    const owner = ready(cast.owner, transport)
    const service = ready(cast.controlPlane, transport)
    const worker = ready(cast.worker, transport)
    misuses.push([owner, () => owner.workCancel({ workItemId: WORK, reason: 'x' }, { sessionEpoch: 1 })])
    misuses.push([owner, () => owner.workCancel({ workItemId: WORK, reason: 'x' }, { coordinatorEpoch: 1 })])
    misuses.push([service, () => service.missionCancel({ reason: 'x' }, { membershipEpoch: 1 })])
    misuses.push([service, () => service.identitySessionOpen({ agentId: cast.worker.actor.id }, { sessionEpoch: 1 })])
    misuses.push([worker, () => worker.workUnblock({ workItemId: WORK }, { membershipEpoch: 0 })])
    for (const [, act] of misuses) expect(await rejectionOf(act())).toBeInstanceOf(UsageError)
    expect(submissions).toHaveLength(0)
  })

  it('Events seen after the epochs were set move them only forward', async () => {
    const { transport, submissions } = fakeAuthority()
    const coordinator = createClient({
      actor: cast.coordinator.actor,
      signingKey: cast.coordinator.key,
      transport,
      groupId: GROUP,
      epochs: { session: 2, groupId: GROUP, membership: 2, coordinator: 2 },
    })
    // A replay of the Group from its start: the Mission created under epoch 1 of both.
    const { transport: replaying } = fakeAuthority(() => [{ kind: 'mission.created', payload: missionCreated(GROUP, cast.coordinator, 1) }])
    coordinator.observe((await ready(cast.owner, replaying).missionCreate({} as never)).events)
    await coordinator.workOffer({} as never)
    expect(lastCommand(submissions)).toMatchObject({ sessionEpoch: 2, membershipEpoch: 2, coordinatorEpoch: 2 })
  })
})
