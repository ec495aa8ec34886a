/**
 * `connectWebSocket` against a scripted server (`wire-fake-server.ts`): the handshake it signs,
 * receipts and refusals, the feed's resumption and deduplication around reconnects (§16), ACKs,
 * liveness (§17.3), and what it refuses to accept from a server.
 */
import { ProtocolError, UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import { afterEach, describe, expect, it } from 'vitest'
import { connectWebSocket, TransportUnavailableError, type ConnectionStatus, type WebSocketConnection, type WebSocketOptions } from '../src/wire/index.js'
import { cast, clientOf, counterRandom, GROUP, OTHER_GROUP, T0_MS } from './fixtures.js'
import { fakeServer, type FakeServerOptions } from './wire-fake-server.js'

type Fake = Awaited<ReturnType<typeof fakeServer>>
let server: Fake | undefined
let conn: WebSocketConnection | undefined
afterEach(async () => {
  await conn?.close()
  await server?.close()
  conn = undefined
  server = undefined
})

async function start(fake: FakeServerOptions = {}, options: Partial<WebSocketOptions> = {}): Promise<{ fake: Fake; conn: WebSocketConnection }> {
  server = await fakeServer(fake)
  conn = await connectWebSocket({
    url: server.url,
    actor: cast.worker.actor,
    signingKey: cast.worker.key,
    clock: { now: () => T0_MS },
    random: counterRandom(),
    heartbeatMs: 0,
    reconnect: { initialDelayMs: 2, maxDelayMs: 20 },
    ...options,
  })
  return { fake: server, conn }
}

function until(c: WebSocketConnection, status: ConnectionStatus): Promise<void> {
  if (c.status === status) return Promise.resolve()
  return new Promise((resolve) => {
    const stop = c.on('state', (s) => {
      if (s.status === status) {
        stop()
        resolve()
      }
    })
  })
}

/** The worker's client over `c`, with Session and Membership Epochs set. */
function workerOn(c: WebSocketConnection) {
  const client = clientOf(cast.worker, c.transport)
  client.epochs.setSession(c.sessionEpoch())
  client.epochs.setMembership(GROUP, 1)
  return client
}

const post = { messageId: 'urn:weft:client-test:message:1', conversationId: 'urn:weft:client-test:conversation:1', content: [{ type: 'text' as const, text: 'Hello.' }] }

describe('handshake (§6.3)', () => {
  it('signs the canonical transcript of the challenge; every reconnect opens a new Session Epoch', async () => {
    const { fake, conn } = await start()
    expect([fake.last.verified, conn.sessionEpoch(), conn.status]).toEqual([true, 1, 'open'])
    const states: [string, number][] = []
    conn.on('state', (s) => states.push([s.status, s.sessionEpoch]))
    fake.last.socket.terminate()
    await until(conn, 'reconnecting')
    await until(conn, 'open')
    expect([fake.last.verified, conn.sessionEpoch()]).toEqual([true, 2])
    expect(states).toEqual([
      ['reconnecting', 1],
      ['open', 2],
    ])
  })

  it("refuses a challenge that answers another client_init, and reports the server's refusal as its ProtocolError", async () => {
    await expect(start({ wrongNonce: true })).rejects.toMatchObject({ code: 'PROTOCOL_VIOLATION' })
    await server!.close()
    const refused = await start({ refuse: 'AUTH_INVALID_SIGNATURE' }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ProtocolError)
    expect((refused as ProtocolError).code).toBe('AUTH_INVALID_SIGNATURE')
  })

  it('reconnects after a retryable refusal of the handshake (a RATE_LIMITED HELLO), waiting its retryAfterMs; a final refusal ends it', async () => {
    const { fake, conn } = await start()
    const states: [string, string | undefined][] = []
    conn.on('state', (s) => states.push([s.status, s.error instanceof ProtocolError ? s.error.code : undefined]))
    fake.refuseNext(new ProtocolError('RATE_LIMITED', 'Too many sessions.', { retryAfterMs: 150 }))
    const dropped = performance.now()
    fake.last.socket.terminate()
    await until(conn, 'reconnecting')
    await until(conn, 'open')
    // The backoff alone is 2-20 ms: the wait is the refusal's.
    expect(performance.now() - dropped).toBeGreaterThanOrEqual(140)
    expect(states).toEqual([
      ['reconnecting', undefined],
      ['reconnecting', 'RATE_LIMITED'],
      ['open', undefined],
    ])
    expect(conn.sessionEpoch()).toBe(2)
    // A refusal that is not retryable ends the connection with it.
    fake.refuseNext(new ProtocolError('AUTH_INVALID_SIGNATURE', 'Revoked.'))
    fake.last.socket.terminate()
    await until(conn, 'closed')
    expect(states.at(-1)).toEqual(['closed', 'AUTH_INVALID_SIGNATURE'])
  })

  it('refuses bad options with UsageError before connecting', async () => {
    const base = { url: 'ws://127.0.0.1:9', actor: cast.worker.actor, signingKey: cast.worker.key }
    for (const bad of [{ url: 'http://127.0.0.1:9' }, { actor: cast.owner.actor }, { reconnect: { initialDelayMs: 10, maxDelayMs: 5 } }, { heartbeatMs: -1 }, { maxFrameBytes: 0 }]) {
      await expect(connectWebSocket({ ...base, ...bad })).rejects.toBeInstanceOf(UsageError)
    }
  })
})

describe('Commands', () => {
  it('sends the exact signed bytes and assembles the receipt from its EVENT frames; a retry answers duplicate', async () => {
    const { fake, conn } = await start({
      respond: () => [
        { kind: 'message.posted', payload: {} },
        { kind: 'message.posted', payload: { n: 2 } },
      ],
    })
    const client = workerOn(conn)
    const built = client.build('message.post', post)
    const receipt = await client.resend(built)
    expect(JSON.stringify(fake.received('COMMAND')[0]!.command)).toBe(built.bytes)
    expect([receipt.actionId, receipt.duplicate, receipt.events.length, receipt.events.every((e) => e.cause.id === built.command.actionId)]).toEqual([built.command.actionId, false, 2, true])
    const again = await client.resend(built)
    expect([again.duplicate, again.events]).toEqual([true, receipt.events])
  })

  it("rejects with the ERROR frame's ProtocolError, correlated by frame and Action ID", async () => {
    const { conn } = await start({
      respond: () => {
        throw new ProtocolError('REVISION_CONFLICT', 'Stale revision.', { details: { currentRevision: 4 } })
      },
    })
    const client = workerOn(conn)
    const built = client.build('message.post', post)
    const refused = (await client.resend(built).catch((e: unknown) => e)) as ProtocolError
    expect([refused.code, refused.relatedActionId, refused.details]).toEqual(['REVISION_CONFLICT', built.command.actionId, { currentRevision: 4 }])
    expect(conn.status).toBe('open')
  })

  it('rejects a Command in flight when the socket drops with TransportUnavailableError', async () => {
    const { fake, conn } = await start({ holdCommands: true })
    const client = workerOn(conn)
    const pending = client.messagePost(post).catch((e: unknown) => e)
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (fake.received('COMMAND').length > 0) {
          clearInterval(check)
          resolve()
        }
      }, 1)
    })
    fake.last.socket.terminate()
    const lost = await pending
    expect(lost).toBeInstanceOf(TransportUnavailableError)
    expect(lost).not.toBeInstanceOf(ProtocolError)
  })
})

describe('feed (§16, §17.2)', () => {
  it('hands each Event out once and in order, resubscribing from the last one after a reconnect whose replay overlaps', async () => {
    const { fake, conn } = await start()
    const seen: Event[] = []
    conn.feed.subscribe(
      [
        { groupId: GROUP, afterSequence: 0 },
        { groupId: OTHER_GROUP, afterSequence: 5 },
      ],
      { onEvent: (e) => seen.push(e) },
    )
    await conn.ping()
    expect(fake.received('SUBSCRIBE')[0]!.groups).toEqual([
      { groupId: GROUP, afterSequence: 0 },
      { groupId: OTHER_GROUP, afterSequence: 5 },
    ])
    fake.events(GROUP, [1, 2, 3])
    fake.events(OTHER_GROUP, [6])
    await conn.ping()
    fake.last.socket.terminate()
    await until(conn, 'reconnecting')
    await until(conn, 'open')
    await conn.ping()
    expect(fake.received('SUBSCRIBE')[0]!.groups).toEqual([
      { groupId: GROUP, afterSequence: 3 },
      { groupId: OTHER_GROUP, afterSequence: 6 },
    ])
    // §16: the server may repeat Events around the disconnect; the feed drops what it handed out.
    fake.events(GROUP, [2, 3, 4])
    fake.events(OTHER_GROUP, [6, 7])
    await conn.ping()
    expect(seen.map((e) => [e.groupId, e.sequence])).toEqual([
      [GROUP, 1],
      [GROUP, 2],
      [GROUP, 3],
      [OTHER_GROUP, 6],
      [GROUP, 4],
      [OTHER_GROUP, 7],
    ])
  })

  it('sends ACK Cursors, only forward, and repeats them on a new session', async () => {
    const { fake, conn } = await start()
    conn.feed.subscribe([{ groupId: GROUP, afterSequence: 0 }], { onEvent: () => undefined })
    await conn.feed.ack(GROUP, 3)
    await conn.feed.ack(GROUP, 2)
    await conn.ping()
    expect(fake.received('ACK').map((a) => a.acknowledgements)).toEqual([[{ groupId: GROUP, sequence: 3 }]])
    fake.last.socket.terminate()
    await until(conn, 'reconnecting')
    await until(conn, 'open')
    await conn.ping()
    expect(fake.received('ACK').map((a) => a.acknowledgements)).toEqual([[{ groupId: GROUP, sequence: 3 }]])
    expect(() => conn.feed.ack(GROUP, -1)).toThrow(UsageError)
  })

  it('routes Group errors to the subscription and stops resubscribing a Group reported GROUP_NOT_FOUND', async () => {
    const { fake, conn } = await start()
    const errors: [string, string][] = []
    conn.feed.subscribe(
      [
        { groupId: GROUP, afterSequence: 0 },
        { groupId: OTHER_GROUP, afterSequence: 0 },
      ],
      { onEvent: () => undefined, onError: (e, g) => errors.push([g, e.code]) },
    )
    await conn.ping()
    const subscribe = fake.received('SUBSCRIBE')[0]!
    fake.send({
      protocolVersion: '0.1',
      frameId: 'urn:weft:fake:e:1',
      frameType: 'ERROR',
      error: { code: 'GROUP_NOT_FOUND', message: 'group not found', retryable: false, occurredAt: '2026-07-15T00:00:00Z', relatedFrameId: subscribe.frameId, groupId: OTHER_GROUP },
    })
    fake.send({
      protocolVersion: '0.1',
      frameId: 'urn:weft:fake:e:2',
      frameType: 'ERROR',
      error: { code: 'BACKPRESSURE', message: 'slow down', retryable: true, occurredAt: '2026-07-15T00:00:00Z', groupId: GROUP, retryAfterMs: 100 },
    })
    await conn.ping()
    expect(errors).toEqual([
      [OTHER_GROUP, 'GROUP_NOT_FOUND'],
      [GROUP, 'BACKPRESSURE'],
    ])
    fake.last.socket.terminate()
    await until(conn, 'reconnecting')
    await until(conn, 'open')
    await conn.ping()
    expect(fake.received('SUBSCRIBE')[0]!.groups.map((g) => g.groupId)).toEqual([GROUP])
    expect(() => conn.feed.subscribe([{ groupId: GROUP, afterSequence: 0 }], { onEvent: () => undefined })).toThrow(UsageError)
  })
})

describe('liveness and a misbehaving server (§17.1, §17.3)', () => {
  it("answers the server's PING by echoing its nonce", async () => {
    const { fake, conn } = await start()
    fake.send({ protocolVersion: '0.1', frameId: 'urn:weft:fake:p:1', frameType: 'PING', nonce: 'c2VydmVyLXBpbmc', sentAt: '2026-07-15T00:00:00Z' })
    await conn.ping()
    expect(fake.received('PING').map((p) => p.replyToNonce)).toContain('c2VydmVyLXBpbmc')
  })

  it('drops a socket that sends an invalid frame (here a duplicate member) and reconnects', async () => {
    const { fake, conn } = await start()
    const first = fake.last
    fake.send('{"frameType":"PING","frameType":"PING"}')
    await until(conn, 'reconnecting')
    await until(conn, 'open')
    expect([first.closeCode, fake.connections.length]).toEqual([1002, 2])
  })

  it('treats an unanswered heartbeat PING as a dead peer and reconnects', async () => {
    const { fake, conn } = await start({ silent: true }, { heartbeatMs: 5 })
    await until(conn, 'reconnecting')
    expect(fake.received('PING', fake.connections[0]).length).toBeGreaterThan(0)
  })

  it('close() ends for good: Commands reject with TransportUnavailableError and nothing reconnects', async () => {
    const { fake, conn } = await start()
    const client = workerOn(conn)
    await conn.close()
    expect(conn.status).toBe('closed')
    expect(await client.messagePost(post).catch((e: unknown) => e)).toBeInstanceOf(TransportUnavailableError)
    await expect(conn.ping()).rejects.toBeInstanceOf(TransportUnavailableError)
    expect(fake.connections).toHaveLength(1)
  })
})
