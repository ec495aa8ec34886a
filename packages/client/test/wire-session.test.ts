/**
 * Pre-authenticated sessions of `connectWebSocket` (issue 24: a person signed in to the web
 * console): a `ws` server in this file checks the `Sec-WebSocket-Protocol` header the session
 * offers, opens the session by sending a `PING` first (or refuses it with an `ERROR` then a close,
 * or closes without a frame), and answers `COMMAND`s with receipt `EVENT` frames the way
 * `@weft/authority/wire` does (`receiptFrameId`). No HELLO runs; a human's Commands carry no
 * Session Epoch (§6.3, §15.1); subscriptions, receipts and ACKs work as for Agents (§16, §17).
 */
import type { IncomingMessage } from 'node:http'
import { ProtocolError, UsageError, webCryptoKeyPair } from '@weft/codec'
import type { Command, Event, WebSocketFrame } from '@weft/spec'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocketServer, type WebSocket } from 'ws'
import { createClient } from '../src/index.js'
import { connectWebSocket, errorFrame, receiptFrameId, type ConnectionState, type ConnectionStatus, type WebSocketConnection, type WebSocketOptions } from '../src/wire/index.js'
import { cast, fakeAuthority, GROUP, missionCreated, T0_MS } from './fixtures.js'
import { groupEvent } from './wire-fake-server.js'

/** What the server does with the next socket. */
type Answer = { readonly open: true } | { readonly error: ProtocolError } | { readonly closeCode: number } | { readonly first: object }

/** One socket as the server saw it. */
interface Seen {
  readonly socket: WebSocket
  /** The subprotocols of the `Sec-WebSocket-Protocol` request header, in order (RFC 6455 §4.1: comma-separated). */
  readonly offered: readonly string[]
  readonly frames: WebSocketFrame[]
}

/** The server's opening `PING` nonce on every socket. */
const OPENING_NONCE = 'b3BlbmluZy1waW5n'

/**
 * A session server: accepts a socket whose subprotocols are `weft.console` and a known ticket;
 * `answers` decide what each socket gets (default: opened).
 */
async function sessionServer(tickets: ReadonlySet<string>) {
  const authority = fakeAuthority((command) =>
    command.kind === 'mission.create' ? [{ kind: 'mission.created', payload: missionCreated(command.groupId!, cast.coordinator) }] : [{ kind: 'message.posted', payload: {} }],
  )
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false })
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()))
  const seen: Seen[] = []
  const answers: Answer[] = []
  let frames = 0
  let receipts = 0
  const frameId = (): string => `urn:weft:session-test:frame:${++frames}`
  const send = (socket: WebSocket, frame: object): void => socket.send(JSON.stringify(frame))

  const onFrame = async (c: Seen, frame: WebSocketFrame): Promise<void> => {
    if (frame.frameType === 'PING' && frame.replyToNonce === undefined) {
      return send(c.socket, { protocolVersion: '0.1', frameId: frameId(), frameType: 'PING', nonce: 'cmVwbHk', replyToNonce: frame.nonce, sentAt: '2026-07-15T00:00:00Z' })
    }
    if (frame.frameType !== 'COMMAND') return
    // As @weft/authority/wire answers: the receipt's Events, each in an EVENT frame placing it in the receipt.
    try {
      const receipt = await authority.transport.submit(frame.command, JSON.stringify(frame.command))
      const serial = String(++receipts)
      receipt.events.forEach((event, index) =>
        send(c.socket, { protocolVersion: '0.1', frameId: receiptFrameId({ serial, index, count: receipt.events.length, duplicate: receipt.duplicate }), frameType: 'EVENT', event }),
      )
    } catch (thrown) {
      send(c.socket, errorFrame(ProtocolError.from(thrown), frameId(), '2026-07-15T00:00:00Z', { relatedFrameId: frame.frameId, relatedActionId: frame.command.actionId }))
    }
  }

  wss.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    const offered = request.headers['sec-websocket-protocol']
    const c: Seen = { socket, offered: typeof offered === 'string' ? offered.split(',').map((p) => p.trim()) : [], frames: [] }
    seen.push(c)
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as WebSocketFrame
      c.frames.push(frame)
      void onFrame(c, frame)
    })
    const [name, ticket] = c.offered
    const answer: Answer =
      answers.shift() ?? (name === 'weft.console' && ticket !== undefined && tickets.has(ticket) ? { open: true } : { error: new ProtocolError('AUTH_REQUIRED', 'Sign in again.') })
    if ('open' in answer) return send(socket, { protocolVersion: '0.1', frameId: frameId(), frameType: 'PING', nonce: OPENING_NONCE, sentAt: '2026-07-15T00:00:00Z' })
    if ('error' in answer) {
      send(socket, errorFrame(answer.error, frameId(), '2026-07-15T00:00:00Z', { fatal: true }))
      return socket.close(4401, 'refused')
    }
    if ('first' in answer) return send(socket, answer.first)
    socket.close(answer.closeCode)
  })

  return {
    url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}`,
    seen,
    authority,
    /** What the next sockets get, first first. */
    answerNext: (...next: Answer[]) => void answers.push(...next),
    get last(): Seen {
      return seen.at(-1)!
    },
    received<T extends WebSocketFrame['frameType']>(type: T, c: Seen = seen.at(-1)!): Extract<WebSocketFrame, { frameType: T }>[] {
      return c.frames.filter((f): f is Extract<WebSocketFrame, { frameType: T }> => f.frameType === type)
    },
    send: (frame: object) => send(seen.at(-1)!.socket, frame),
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of seen) c.socket.terminate()
        wss.close(() => resolve())
      }),
  }
}

type Server = Awaited<ReturnType<typeof sessionServer>>
let server: Server | undefined
let conn: WebSocketConnection | undefined
afterEach(async () => {
  await conn?.close()
  await server?.close()
  conn = server = undefined
})

/** A session that offers `weft.console` and the next ticket of `tickets` on every socket. */
function ticketing(tickets: readonly string[]) {
  let next = 0
  return {
    asked: () => next,
    session: { protocols: async () => ['weft.console', tickets[Math.min(next++, tickets.length - 1)]!] },
  }
}

async function open(tickets: readonly string[], options: Partial<WebSocketOptions> = {}): Promise<{ server: Server; conn: WebSocketConnection; asked: () => number }> {
  server = await sessionServer(new Set(['ticket-1', 'ticket-2']))
  const { session, asked } = ticketing(tickets)
  conn = await connectWebSocket({ url: server.url, actor: cast.owner.actor, session, clock: { now: () => T0_MS }, heartbeatMs: 0, reconnect: { initialDelayMs: 2, maxDelayMs: 20 }, ...options })
  return { server, conn, asked }
}

function until(c: WebSocketConnection, status: ConnectionStatus): Promise<ConnectionState> {
  return new Promise((resolve) => {
    const stop = c.on('state', (s) => {
      if (s.status !== status) return
      stop()
      resolve(s)
    })
  })
}

const post = { messageId: 'urn:weft:client-test:message:1', conversationId: 'urn:weft:client-test:conversation:1', content: [{ type: 'text' as const, text: 'Hello.' }] }

describe('opening a pre-authenticated session', () => {
  it("offers the session's subprotocols, sends no HELLO, opens on the server's PING and answers it", async () => {
    const { server, conn } = await open(['ticket-1'])
    expect(server.last.offered).toEqual(['weft.console', 'ticket-1'])
    expect([conn.status, conn.sessionEpoch()]).toEqual(['open', 0])
    await conn.ping()
    expect(server.received('HELLO')).toEqual([])
    expect(server.received('PING').map((p) => p.replyToNonce)).toContain(OPENING_NONCE)
  })

  it('asks protocols() again for every reconnect, so a single-use ticket is fresh each time', async () => {
    const { server, conn, asked } = await open(['ticket-1', 'ticket-2'])
    server.last.socket.terminate()
    await until(conn, 'open')
    expect(server.seen.map((c) => c.offered)).toEqual([
      ['weft.console', 'ticket-1'],
      ['weft.console', 'ticket-2'],
    ])
    expect(asked()).toBe(2)
  })

  it("rejects with the ERROR frame's ProtocolError when the server refuses the session", async () => {
    const refused = await open(['ticket-9']).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ProtocolError)
    expect((refused as ProtocolError).code).toBe('AUTH_REQUIRED')
    expect((refused as ProtocolError).message).toBe('Sign in again.')
    expect(server!.last.offered).toEqual(['weft.console', 'ticket-9'])
    await server!.close()
    server = await sessionServer(new Set())
    server.answerNext({ error: new ProtocolError('AUTH_FORBIDDEN', 'Not a person of this Organization.') })
    const forbidden = await connectWebSocket({ url: server.url, actor: cast.owner.actor, session: { protocols: () => ['weft.console', 'x'] }, reconnect: false }).catch((e: unknown) => e)
    expect((forbidden as ProtocolError).code).toBe('AUTH_FORBIDDEN')
  })

  it('rejects with AUTH_REQUIRED when the server closes the socket before any frame', async () => {
    server = await sessionServer(new Set())
    server.answerNext({ closeCode: 4401 })
    const refused = await connectWebSocket({ url: server.url, actor: cast.owner.actor, session: { protocols: () => ['weft.console', 'stale'] }, reconnect: false }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ProtocolError)
    expect([(refused as ProtocolError).code, (refused as ProtocolError).details]).toEqual(['AUTH_REQUIRED', { closeCode: 4401 }])
  })

  it('treats any other first frame as a PROTOCOL_VIOLATION, and an unreachable server as unavailable, not refused', async () => {
    server = await sessionServer(new Set())
    const url = server.url
    await server.close()
    server = undefined
    const unreachable = await connectWebSocket({ url, actor: cast.owner.actor, session: { protocols: () => ['weft.console', 't'] }, reconnect: false }).catch((e: unknown) => e)
    expect(unreachable).not.toBeInstanceOf(ProtocolError)
    expect((unreachable as Error).name).toBe('TransportUnavailableError')
    server = await sessionServer(new Set())
    server.answerNext({ first: { protocolVersion: '0.1', frameId: 'urn:weft:session-test:e:1', frameType: 'EVENT', event: groupEvent(GROUP, 1) } })
    const early = await connectWebSocket({ url: server.url, actor: cast.owner.actor, session: { protocols: () => ['weft.console', 't'] }, reconnect: false }).catch((e: unknown) => e)
    expect((early as ProtocolError).code).toBe('PROTOCOL_VIOLATION')
  })

  it('reports a refusal on reconnect in the state: a retryable one keeps reconnecting, a final one closes', async () => {
    const { server, conn } = await open(['ticket-1', 'ticket-2'])
    const states: [string, string | undefined][] = []
    conn.on('state', (s) => states.push([s.status, s.error instanceof ProtocolError ? s.error.code : undefined]))
    server.answerNext({ error: new ProtocolError('RATE_LIMITED', 'Too many sessions.', { retryAfterMs: 5 }) })
    server.last.socket.terminate()
    await until(conn, 'open')
    server.answerNext({ error: new ProtocolError('AUTH_REQUIRED', 'The sign-in expired.') })
    server.last.socket.terminate()
    const closed = await until(conn, 'closed')
    expect((closed.error as ProtocolError).message).toBe('The sign-in expired.')
    expect(states).toEqual([
      ['reconnecting', undefined],
      ['reconnecting', 'RATE_LIMITED'],
      ['open', undefined],
      ['reconnecting', undefined],
      ['closed', 'AUTH_REQUIRED'],
    ])
  })

  it('in Node, reads a refused upgrade (HTTP 401, 429 with its JSON error object or Retry-After) as the ProtocolError it stands for', async () => {
    const refusals: { status: number; body: string; headers?: Record<string, string> }[] = [
      { status: 401, body: JSON.stringify({ error: { code: 'AUTH_REQUIRED', message: 'The session expired; sign in again.', retryable: false, occurredAt: '2026-07-15T00:00:00Z' } }) },
      { status: 429, body: 'slow down', headers: { 'Retry-After': '3' } },
    ]
    const wss = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      verifyClient: (_info, callback) => {
        const { status, body, headers } = refusals.shift()!
        callback(false, status, body, { 'Content-Type': 'application/json', ...headers })
      },
    })
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()))
    try {
      const url = `ws://127.0.0.1:${(wss.address() as { port: number }).port}/console/ws`
      const options = { url, actor: cast.owner.actor, session: { protocols: () => ['weft.console', 'old'] }, reconnect: false } as const
      const expired = (await connectWebSocket(options).catch((e: unknown) => e)) as ProtocolError
      expect(expired).toBeInstanceOf(ProtocolError)
      expect([expired.code, expired.message]).toEqual(['AUTH_REQUIRED', 'The session expired; sign in again.'])
      const limited = (await connectWebSocket(options).catch((e: unknown) => e)) as ProtocolError
      expect([limited.code, limited.retryAfterMs]).toEqual(['RATE_LIMITED', 3000])
    } finally {
      await new Promise((resolve) => wss.close(resolve))
    }
  })

  it('rejects with what protocols() rejects with', async () => {
    server = await sessionServer(new Set())
    const failing = { protocols: async (): Promise<readonly string[]> => Promise.reject(new ProtocolError('AUTH_REQUIRED', 'No ticket: signed out.')) }
    await expect(connectWebSocket({ url: server.url, actor: cast.owner.actor, session: failing, reconnect: false })).rejects.toThrow('No ticket: signed out.')
    expect(server.seen).toHaveLength(0)
  })

  it('refuses bad session options with a UsageError', async () => {
    const base = { url: 'ws://127.0.0.1:9', actor: cast.owner.actor }
    await expect(connectWebSocket({ ...base, session: {} as never })).rejects.toBeInstanceOf(UsageError)
    await expect(connectWebSocket({ ...base, actor: cast.controlPlane.actor, session: { protocols: () => [] } })).rejects.toBeInstanceOf(UsageError)
    // Without a session a human cannot connect (§6.3: the handshake is an Agent's), nor an Agent without a key.
    await expect(connectWebSocket({ ...base, signingKey: cast.owner.key })).rejects.toThrow(/pre-authenticated session/)
    await expect(connectWebSocket({ ...base, actor: cast.worker.actor })).rejects.toBeInstanceOf(UsageError)
  })
})

describe("a human's Commands and reads over the session", () => {
  it('carry the Membership Epoch and no Session Epoch (§6.3, §15.1); receipts arrive as for Agents', async () => {
    const { server, conn } = await open(['ticket-1'])
    const pair = await webCryptoKeyPair(new Uint8Array(32).fill(11), cast.owner.key.pair.publicKey)
    const owner = createClient({ actor: cast.owner.actor, signingKey: { keyId: cast.owner.key.keyId, pair }, transport: conn.transport, groupId: GROUP, clock: { now: () => T0_MS } })
    const created = await owner.missionCreate({} as never)
    // The client learned its Membership Epoch from the mission.created receipt.
    expect(created.events.map((e) => e.kind)).toEqual(['mission.created'])
    expect(owner.epochs.membership(GROUP)).toBe(1)
    const receipt = await owner.messagePost(post)
    const [first, second] = server.received('COMMAND').map((f) => f.command as Command)
    expect(['sessionEpoch' in first!, 'membershipEpoch' in first!]).toEqual([false, false])
    expect([second!.kind, 'sessionEpoch' in second!, second!.membershipEpoch]).toEqual(['message.post', false, 1])
    expect([receipt.actionId, receipt.duplicate, receipt.events[0]!.cause.id]).toEqual([second!.actionId, false, second!.actionId])
    // The fake Authority verified both signatures (§6.4) before answering.
    expect(server.authority.submissions).toHaveLength(2)
  })

  it("rejects a refused Command with the ERROR frame's ProtocolError", async () => {
    const { conn } = await open(['ticket-1'])
    const owner = createClient({ actor: cast.owner.actor, signingKey: cast.controlPlane.key, transport: conn.transport, groupId: GROUP, clock: { now: () => T0_MS } })
    owner.epochs.setMembership(GROUP, 1)
    // Signed with a key the Registry binds to another Principal: the Authority refuses it (§6.4).
    const refused = (await owner.messagePost(post).catch((e: unknown) => e)) as ProtocolError
    expect(refused).toBeInstanceOf(ProtocolError)
    expect([refused.code, refused.relatedActionId]).toEqual(['AUTH_INVALID_SIGNATURE', server!.received('COMMAND')[0]!.command.actionId])
    expect(conn.status).toBe('open')
  })

  it('subscribes, receives Events (told apart from receipts) and ACKs, resubscribing after a reconnect', async () => {
    const { server, conn } = await open(['ticket-1', 'ticket-2'])
    const seen: Event[] = []
    conn.feed.subscribe([{ groupId: GROUP, afterSequence: 0 }], { onEvent: (e) => seen.push(e) })
    await conn.ping()
    expect(server.received('SUBSCRIBE')[0]!.groups).toEqual([{ groupId: GROUP, afterSequence: 0 }])
    for (const sequence of [1, 2]) server.send({ protocolVersion: '0.1', frameId: `urn:weft:session-test:event:${sequence}`, frameType: 'EVENT', event: groupEvent(GROUP, sequence) })
    await conn.ping()
    expect(seen.map((e) => e.sequence)).toEqual([1, 2])
    await conn.feed.ack(GROUP, 2)
    await conn.ping()
    expect(server.received('ACK').map((a) => a.acknowledgements)).toEqual([[{ groupId: GROUP, sequence: 2 }]])
    server.last.socket.terminate()
    await until(conn, 'open')
    await conn.ping()
    expect(server.received('SUBSCRIBE')[0]!.groups).toEqual([{ groupId: GROUP, afterSequence: 2 }])
    expect(server.received('ACK').map((a) => a.acknowledgements)).toEqual([[{ groupId: GROUP, sequence: 2 }]])
  })
})
