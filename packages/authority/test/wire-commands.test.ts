/**
 * `COMMAND` frames over the WebSocket binding (§15.1, §17.1, §19): receipts, correlated refusals
 * that keep the connection, exact retries across a reconnect, stale epochs after one, and local
 * rejection while disconnected.
 */
import { createClient } from '@weft/client'
import { TransportUnavailableError } from '@weft/client/wire'
import { ProtocolError, signingHash } from '@weft/codec'
import { afterEach, describe, expect, it } from 'vitest'
import { cast } from '@weft/testkit/fixtures'
import { dropAgent, rejection, until, wireWorld, type WireWorld } from './wire-world.js'

let world: WireWorld | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

let messages = 0
const message = (ww: WireWorld, text = 'Progress report.') => ({
  messageId: `urn:weft:test:message:wire-${++messages}`,
  conversationId: ww.w.group().group.mainConversationId,
  content: [{ type: 'text' as const, text }],
})

describe('a COMMAND frame', () => {
  it('is answered with the receipt of its transaction', async () => {
    world = await wireWorld()
    const { client } = await world.connect('worker1')
    const head = world.w.group().head
    const built = client.build('message.post', message(world))
    const receipt = await client.resend(built)
    expect(receipt).toMatchObject({ actionId: built.command.actionId, kind: 'message.post', groupId: world.w.groupId, duplicate: false, commandHash: signingHash(built.command) })
    expect(receipt.events.map((e) => [e.kind, e.sequence, e.cause.id])).toEqual([['message.posted', head + 1, built.command.actionId]])
    expect(receipt.events).toEqual(world.w.authority.events(world.w.groupId, head))
    expect(receipt.acceptedAt).toBe(receipt.events[0]!.occurredAt)
  })

  it('is refused with a correlated ERROR, appends nothing, and the connection goes on', async () => {
    world = await wireWorld()
    const { conn, client } = await world.connect('worker1')
    const head = world.w.group().head
    const built = client.build('message.post', { ...message(world), conversationId: 'urn:weft:test:conversation:none' })
    const refused = await rejection(client.resend(built))
    expect(refused).toBeInstanceOf(ProtocolError)
    expect((refused as ProtocolError).relatedActionId).toBe(built.command.actionId)
    expect((refused as ProtocolError).relatedFrameId).toMatch(/^urn:weft:frame:/)
    // Another Agent's Command on this Agent's connection is refused, not relayed (§17.1).
    const other = createClient({ actor: cast.worker2.actor, signingKey: cast.worker2.key, transport: conn.transport, groupId: world.w.groupId, clock: { now: () => world!.w.clock.nowMs } })
    other.epochs.setSession(1)
    other.epochs.setMembership(world.w.groupId, 1)
    expect(await rejection(other.messagePost(message(world)))).toMatchObject({ code: 'AUTH_FORBIDDEN' })
    expect(world.w.group().head).toBe(head)
    expect(conn.status).toBe('open')
    await client.messagePost(message(world, 'Still connected.'))
    expect(world.w.group().head).toBe(head + 1)
  })

  it('answers an exact retry with the original receipt marked duplicate (§15.1)', async () => {
    world = await wireWorld()
    const { client } = await world.connect('worker1')
    const built = client.build('message.post', message(world))
    const first = await client.resend(built)
    const again = await client.resend(built)
    expect([first.duplicate, again.duplicate]).toEqual([false, true])
    expect(again.events).toEqual(first.events)
  })

  it('keeps Action ID and bytes across a reconnect: a receipt lost with the socket is recovered as a duplicate', async () => {
    world = await wireWorld()
    const { conn, client } = await world.connect('worker1')
    const epoch = conn.sessionEpoch()
    const built = client.build('message.post', message(world))
    // The socket dies right after the Authority accepted the Command, before the receipt leaves.
    const stop = world.w.authority.onCommit((events) => {
      if (events.some((e) => e.cause.id === built.command.actionId)) dropAgent(world!.server, cast.worker1.actor.id)
    })
    const lost = await rejection(client.resend(built))
    stop()
    expect(lost).toBeInstanceOf(TransportUnavailableError)
    expect(lost).not.toBeInstanceOf(ProtocolError)
    await until(conn, 'open')
    expect(conn.sessionEpoch()).toBeGreaterThan(epoch)
    const recovered = await client.resend(built)
    expect(recovered.duplicate).toBe(true)
    expect(recovered.events.map((e) => e.cause.id)).toEqual([built.command.actionId])
    expect(world.w.authority.events(world.w.groupId).filter((e) => e.cause.id === built.command.actionId)).toHaveLength(1)
  })

  it('refuses a Command built under the previous session with AUTH_STALE_SESSION and the current epoch', async () => {
    world = await wireWorld()
    const { conn, client } = await world.connect('worker1')
    const built = client.build('message.post', message(world))
    dropAgent(world.server, cast.worker1.actor.id)
    await until(conn, 'reconnecting')
    await until(conn, 'open')
    const head = world.w.group().head
    const stale = (await rejection(client.resend(built))) as ProtocolError
    expect([stale.code, stale.retryable, stale.details?.['currentSessionEpoch'], stale.details?.['commandSessionEpoch']]).toEqual([
      'AUTH_STALE_SESSION',
      false,
      conn.sessionEpoch(),
      built.command.sessionEpoch,
    ])
    expect(world.w.group().head).toBe(head)
    // A new Command under the current epoch goes through (the client learned it from the state event).
    await client.messagePost(message(world))
    expect(world.w.group().head).toBe(head + 1)
  })
})

describe('while disconnected', () => {
  it('rejects new Commands locally with TransportUnavailableError, not a ProtocolError', async () => {
    world = await wireWorld()
    const { conn, client } = await world.connect('worker1', { reconnect: { initialDelayMs: 60_000, maxDelayMs: 60_000 } })
    dropAgent(world.server, cast.worker1.actor.id)
    await until(conn, 'reconnecting')
    const rejected = await rejection(client.messagePost(message(world)))
    expect(rejected).toBeInstanceOf(TransportUnavailableError)
    expect(rejected).not.toBeInstanceOf(ProtocolError)
    await conn.close()
    expect(conn.status).toBe('closed')
    expect(await rejection(client.messagePost(message(world)))).toBeInstanceOf(TransportUnavailableError)
  })

  it('buffers Commands with bufferWhileDisconnected and sends them once the session is back', async () => {
    world = await wireWorld()
    const { conn, client } = await world.connect('worker1', { bufferWhileDisconnected: 2 })
    const staleEpoch = conn.sessionEpoch()
    dropAgent(world.server, cast.worker1.actor.id)
    await until(conn, 'reconnecting')
    const buffered = client.resend(client.build('message.post', message(world)))
    const overflow = [client.messagePost(message(world)), client.messagePost(message(world))]
    expect(await rejection(overflow[1]!)).toBeInstanceOf(TransportUnavailableError)
    await until(conn, 'open')
    // Built under the fenced epoch, the buffered Commands reached the Authority and were refused there (§19).
    for (const sent of [buffered, overflow[0]!])
      expect(await rejection(sent)).toMatchObject({ code: 'AUTH_STALE_SESSION', details: { commandSessionEpoch: staleEpoch, currentSessionEpoch: conn.sessionEpoch() } })
  })
})
