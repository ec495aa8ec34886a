/**
 * Agent revocation (§4 invariant 4, §6.1, §6.3, §6.4, §11.3, §11.5, §19): the control plane
 * registers a card version whose `status` is not `active`, or one that states a key's `revokedAt`,
 * and the Agent stops acting at once. Its next Command is refused (the card at the Command's
 * time, the key at its signed time), its open WebSocket sessions close as fenced sessions, a fresh
 * HELLO is refused, and its WorkItems can be offered again at once. Nothing but the accepted
 * `agent_card_registered` Event carries the revocation, so a fold of the log gives the same state.
 */
import { timestampOf } from '@weft/codec/time'
import { createDelivery } from '../src/delivery/delivery.js'
import { deliveryFeed } from '../src/delivery/feed.js'
import { connectWebSocket } from '@weft/client/wire'
import type { PublicKey } from '@weft/spec'
import { afterEach, describe, expect, it } from 'vitest'
import { agentCard, cast, T0_MS, refusal } from '@weft/testkit/fixtures'
import { accept, codeOf, expectIntegrity, expectRefused, offer, payloadOf, reach, renew, start, started, type Who, type World } from '@weft/testkit/world'
import { rawSocket, until, wireWorld, type WireWorld } from './wire-world.js'

let world: WireWorld | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

let posts = 0
/** `who` posts a Message in the world's Main Conversation. */
function post(w: World, who: Who): Promise<unknown> {
  return w.as[who].messagePost({ messageId: `urn:weft:test:message:revocation-${++posts}`, conversationId: w.group().group.mainConversationId, content: [{ type: 'text', text: 'Progress.' }] })
}

/** The control plane registers card version `version` of `who` with `changes` (§6.1). */
function register(w: World, who: Who, version: number, changes: Parameters<typeof agentCard>[2]): Promise<unknown> {
  return w.as.controlPlane.registryAgentCardRegister({ card: agentCard(cast[who], version, changes) })
}

/** `who`'s key as its cards state it, with `boundaries`. */
function keyOf(who: Who, boundaries: Pick<PublicKey, 'revokedAt' | 'validUntil'>): PublicKey[] {
  return [{ ...agentCard(cast[who]).publicKeys[0]!, ...boundaries }]
}

describe('a revoked Agent Card (§6.1)', () => {
  it("refuses the Agent's next Command with AUTH_FORBIDDEN, and a fold of the log gives the same state", async () => {
    const w = await started()
    const id = await reach(w, 'active')
    await post(w, 'worker1')
    await register(w, 'worker1', 2, { status: 'revoked' })
    await expectRefused(w, () => post(w, 'worker1'), 'AUTH_FORBIDDEN')
    expect(w.authority.audit().at(-1)).toMatchObject({ stage: 'card', reason: 'agent-card-revoked', actor: cast.worker1.actor })
    // §11.3: its Execution Lease cannot be renewed any more; the WorkItem stays as it was.
    await expectRefused(w, () => renew(w, id), 'AUTH_FORBIDDEN', id)
    // §6.3: no new session either.
    expect(await codeOf(w.as.controlPlane.identitySessionOpen({ agentId: cast.worker1.actor.id }))).toBe('AUTH_FORBIDDEN')
    // Other Agents go on.
    await post(w, 'worker2')
    expectIntegrity(w)
  })

  it('ends the in-process feed of a revoked Agent with AUTH_FORBIDDEN, and refuses its next subscription and replay', async () => {
    const w = await started()
    const delivery = createDelivery(w.authority)
    const feed = deliveryFeed(delivery, cast.worker1.actor)
    const received: number[] = []
    const errors: string[] = []
    feed.subscribe([{ groupId: w.groupId, afterSequence: 0 }], { onEvent: (e) => void received.push(e.sequence!), onError: (error) => void errors.push(error.code) })
    await post(w, 'worker2')
    const before = received.length
    expect(before).toBeGreaterThan(0)
    await register(w, 'worker1', 2, { status: 'revoked' })
    expect(errors).toEqual(['AUTH_FORBIDDEN'])
    // Nothing more reaches it, and it cannot read again.
    await post(w, 'worker2')
    expect(received.length).toBe(before)
    expect(() => delivery.replay(cast.worker1.actor, w.groupId, 0)).toThrow(expect.objectContaining({ code: 'AUTH_FORBIDDEN' }))
    expect(() => feed.subscribe([{ groupId: w.groupId, afterSequence: 0 }], { onEvent: () => undefined })).toThrow(expect.objectContaining({ code: 'AUTH_FORBIDDEN' }))
    // Another member's feed goes on.
    expect(delivery.replay(cast.worker2.actor, w.groupId, 0).events.length).toBeGreaterThan(0)
    delivery.close()
  })

  it('lets the Coordinator offer the revoked owner’s WorkItem again at once, fencing its ownership (§11.5)', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const epoch = w.item(id).doc.owner!.ownershipEpoch
    await register(w, 'worker1', 2, { status: 'revoked' })
    const offered = await offer(w, id, ['worker2'])
    expect(payloadOf(offered, 'work.offer.created').fencedOwnershipEpoch).toBe(epoch)
    expect(w.item(id).executionLease).toBeUndefined()
    await accept(w, id, 'worker2')
    await start(w, id)
    expect([w.item(id).doc.state, w.item(id).doc.owner?.agentId, w.item(id).doc.owner?.ownershipEpoch]).toEqual(['active', cast.worker2.actor.id, epoch + 1])
    expectIntegrity(w)
  })

  it('is final: a later card version may not make the Agent active again', async () => {
    const w = await started()
    await register(w, 'worker1', 2, { status: 'revoked' })
    expect(await codeOf(register(w, 'worker1', 3, { status: 'active' }))).toBe('INVALID_STATE_TRANSITION')
    expect(await codeOf(register(w, 'worker1', 3, { status: 'deprecated' }))).toBe('INVALID_STATE_TRANSITION')
    await register(w, 'worker1', 3, { status: 'revoked', publicKeys: keyOf('worker1', { revokedAt: timestampOf(T0_MS) }) })
    expect(w.authority.state.org.agents.get(cast.worker1.actor.id)?.card.cardVersion).toBe(3)
  })

  it('stops a deprecated Agent as well: only an active card acts', async () => {
    const w = await started()
    await register(w, 'worker2', 2, { status: 'deprecated' })
    await expectRefused(w, () => post(w, 'worker2'), 'AUTH_FORBIDDEN')
    // A deprecation is not final.
    await register(w, 'worker2', 3, { status: 'active' })
    await post(w, 'worker2')
  })
})

describe('a key revoked on the Agent Card (§6.4)', () => {
  it('refuses a Command signed at or after its revokedAt with AUTH_INVALID_SIGNATURE, whatever the Registry the Authority started with says', async () => {
    const w = await started()
    await register(w, 'worker1', 2, { publicKeys: keyOf('worker1', { revokedAt: timestampOf(T0_MS + 60_000) }) })
    // Before the boundary the key signs as before.
    await post(w, 'worker1')
    w.clock.advance(60)
    await expectRefused(w, () => post(w, 'worker1'), 'AUTH_INVALID_SIGNATURE')
    expect(w.authority.audit().at(-1)).toMatchObject({ stage: 'admission', reason: 'card-key-revoked' })
    expectIntegrity(w)
  })

  it('keeps the earliest boundary: a later card may not clear or postpone it', async () => {
    const w = await started()
    await register(w, 'worker1', 2, { publicKeys: keyOf('worker1', { revokedAt: timestampOf(T0_MS) }) })
    expect(await codeOf(register(w, 'worker1', 3, {}))).toBe('INVALID_COMMAND')
    expect(await codeOf(register(w, 'worker1', 3, { publicKeys: keyOf('worker1', { revokedAt: timestampOf(T0_MS + 1000) }) }))).toBe('INVALID_COMMAND')
    await register(w, 'worker1', 3, { publicKeys: keyOf('worker1', { revokedAt: timestampOf(T0_MS - 1000), validUntil: timestampOf(T0_MS + 1000) }) })
    await expectRefused(w, () => post(w, 'worker1'), 'AUTH_INVALID_SIGNATURE')
  })
})

describe('revocation on the WebSocket binding (§6.3, §17)', () => {
  it('closes the open session as a fenced one (4409) when the card is revoked in process, and refuses a fresh HELLO', async () => {
    world = await wireWorld()
    const raw = await rawSocket(world.server.url)
    const accepted = await raw.hello('worker1')
    expect(accepted.frameType === 'HELLO' && accepted.phase).toBe('server_accept')
    const { conn, client } = await world.connect('worker2')
    await register(world.w, 'worker1', 2, { status: 'revoked' })
    const ended = await raw.nextError('AUTH_FORBIDDEN')
    expect([ended.error.fatal, ended.error.retryable]).toEqual([true, false])
    expect(await raw.closed).toBe(4409)
    expect(world.server.connections.map((c) => c.agentId)).toEqual([cast.worker2.actor.id])
    const again = await rawSocket(world.server.url)
    const refused = await again.hello('worker1')
    expect(refused.frameType === 'ERROR' && refused.error.code).toBe('AUTH_FORBIDDEN')
    expect(await again.closed).toBe(4401)
    // A client's connection ends for good, and its next Command is refused with the revocation's code.
    await register(world.w, 'worker2', 2, { status: 'revoked' })
    await until(conn, 'closed')
    expect(
      (await refusal(client.messagePost({ messageId: 'urn:weft:test:message:revoked', conversationId: world.w.group().group.mainConversationId, content: [{ type: 'text', text: 'Still here?' }] })))
        .code,
    ).toBe('AUTH_FORBIDDEN')
    expect(world.server.connections).toEqual([])
    expectIntegrity(world.w)
  })

  it('closes a session whose key the new card revokes, and refuses its HELLO although the server’s Registry still holds the key valid', async () => {
    world = await wireWorld()
    const raw = await rawSocket(world.server.url)
    await raw.hello('worker1')
    const other = await rawSocket(world.server.url)
    await other.hello('worker2')
    // A boundary still ahead leaves the session open.
    await register(world.w, 'worker2', 2, { publicKeys: keyOf('worker2', { validUntil: timestampOf(T0_MS + 3_600_000) }) })
    await register(world.w, 'worker1', 2, { publicKeys: keyOf('worker1', { revokedAt: timestampOf(T0_MS) }) })
    const ended = await raw.nextError('AUTH_INVALID_SIGNATURE')
    expect(ended.error.message).toBe('The signed document could not be verified.')
    expect(await raw.closed).toBe(4409)
    expect(await other.barrier()).toEqual([])
    const refused = await connectWebSocket({
      url: world.server.url,
      actor: cast.worker1.actor,
      signingKey: cast.worker1.key,
      clock: { now: () => world!.w.clock.nowMs },
      heartbeatMs: 0,
      reconnect: false,
    }).then(
      () => 'session opened',
      (e: { code?: string }) => e.code,
    )
    expect(refused).toBe('AUTH_INVALID_SIGNATURE')
    other.close()
  })

  it('ends a session when a key boundary the card stated ahead of time arrives, within a second, with nothing sent by the Agent', async () => {
    world = await wireWorld()
    const raw = await rawSocket(world.server.url)
    await raw.hello('worker1')
    await register(world.w, 'worker1', 2, { publicKeys: keyOf('worker1', { validUntil: timestampOf(T0_MS + 60_000) }) })
    // Before the boundary the session stays, across sweeps.
    await new Promise((resolve) => setTimeout(resolve, 1200))
    expect(await raw.barrier()).toEqual([])
    world.w.clock.advance(61)
    const ended = await raw.nextError('AUTH_INVALID_SIGNATURE')
    expect([ended.error.fatal, ended.error.retryable]).toEqual([true, false])
    expect(await raw.closed).toBe(4409)
    expect(world.server.connections).toEqual([])
  })
})
