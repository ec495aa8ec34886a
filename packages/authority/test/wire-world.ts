/**
 * The test world of the WebSocket binding: the client-driven world of `world.ts` behind a real
 * loopback server of `createWireServer`, Agents that connect with `connectWebSocket` over real
 * sockets, a raw socket for hand-written frames, and waits on events (never on time).
 */
import { createClient, type Client } from '@weft/client'
import { connectWebSocket, helloTranscriptBytes, type ConnectionStatus, type WebSocketConnection, type WebSocketOptions } from '@weft/client/wire'
import { encodeBase64url, type ErrorCode } from '@weft/codec'
import type { ErrorFrame, Event, WebSocketFrame } from '@weft/spec'
import { expect } from 'vitest'
import { WebSocket } from 'ws'
import { createDelivery, type Delivery } from '../src/delivery/delivery.js'
import { createWireServer, type WireServer, type WireServerOptions } from '../src/wire/index.js'
import { cast, seededRandom } from '@weft/testkit/fixtures'
import { enrol, MEMBERS, openMission, started, type Who, type World } from '@weft/testkit/world'

/** A second Group, opened by {@link withSecondGroup}. */
export const GROUP_TWO = 'urn:weft:test:group:two'

/** An Agent connected over the wire, with a client whose transport is the connection. */
export interface WireAgent {
  readonly conn: WebSocketConnection
  readonly client: Client
}

/** A started world behind a wire server. */
export interface WireWorld {
  readonly w: World
  readonly server: WireServer
  /** The delivery the server subscribes through (its ACK Cursors are readable). */
  readonly delivery: Delivery
  /** Connects `who` (an Agent of the cast) with test defaults: the world clock, no heartbeat, fast reconnects. */
  connect(who: Who, options?: Partial<WebSocketOptions>): Promise<WireAgent>
  /** Closes every connection made by {@link connect} and the server. */
  close(): Promise<void>
}

/** Starts {@link started}'s world (or `world`) and a loopback wire server over its Authority. */
export async function wireWorld(options: { readonly server?: Partial<WireServerOptions>; readonly world?: World } = {}): Promise<WireWorld> {
  const w = options.world ?? (await started())
  const delivery = createDelivery(w.authority)
  const server = await createWireServer({
    authority: w.authority,
    registry: w.registry,
    sessionIssuer: { actor: { type: 'service', id: cast.controlPlane.actor.id }, signingKey: cast.controlPlane.key },
    delivery,
    insecureLoopback: true,
    clock: { now: () => w.clock.nowMs },
    random: seededRandom(7),
    ...options.server,
  })
  const opened: WebSocketConnection[] = []
  let seed = 500
  return {
    w,
    server,
    delivery,
    async connect(who, extra = {}) {
      const { actor, key } = cast[who]
      const conn = await connectWebSocket({
        url: server.url,
        actor,
        signingKey: key,
        clock: { now: () => w.clock.nowMs },
        random: seededRandom(seed++),
        heartbeatMs: 0,
        reconnect: { initialDelayMs: 5, maxDelayMs: 40 },
        ...extra,
      })
      opened.push(conn)
      const client = createClient({ actor, signingKey: key, transport: conn.transport, groupId: w.groupId, clock: { now: () => w.clock.nowMs }, random: seededRandom(seed++) })
      // The client learns its Memberships from the logs (compacted parts included) and its Session Epoch from each handshake.
      for (const groupId of w.authority.state.groups.keys()) client.observe(w.authority.history(groupId, 0, Number.MAX_SAFE_INTEGER).events)
      client.epochs.setSession(conn.sessionEpoch())
      conn.on('state', (s) => {
        if (s.status === 'open') client.epochs.setSession(s.sessionEpoch)
      })
      return { conn, client }
    },
    async close() {
      await Promise.all(opened.map((c) => c.close()))
      await server.close()
    },
  }
}

/** Opens {@link GROUP_TWO}'s Mission and enrols the members there too. */
export async function withSecondGroup(w: World): Promise<World> {
  const two = w.in(GROUP_TWO)
  await openMission(two)
  await enrol(two, MEMBERS)
  return two
}

/** The MissionOwner posts `n` Messages in `w`'s Group (in process), returning the Group head after. */
export async function post(w: World, n = 1): Promise<number> {
  const conversationId = w.group().group.mainConversationId
  for (let i = 0; i < n; i++) await w.as.owner.messagePost({ messageId: `urn:weft:test:message:${w.fresh('m')}`, conversationId, content: [{ type: 'text', text: 'Status update.' }] })
  return w.group().head
}

/** Resolves when `conn` next reports `status` (at once if it is there already). */
export function until(conn: WebSocketConnection, status: ConnectionStatus): Promise<void> {
  if (conn.status === status) return Promise.resolve()
  return new Promise((resolve) => {
    const stop = conn.on('state', (s) => {
      if (s.status !== status) return
      stop()
      resolve()
    })
  })
}

/** Drops the server side of every connection of `agentId`, as a network failure would. */
export function dropAgent(server: WireServer, agentId: string): void {
  for (const c of server.connections) if (c.agentId === agentId) c.terminate()
}

/** The sequences of `events` per Group. */
export function sequencesByGroup(events: readonly Event[]): Record<string, number[]> {
  const out: Record<string, number[]> = {}
  for (const e of events) (out[e.groupId ?? 'org'] ??= []).push(e.sequence ?? 0)
  return out
}

/** Awaits a promise that must reject and returns what it rejected with. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (e: unknown) => e,
  )
}

/** 1, 2, …, n. */
export function oneTo(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1)
}

// ---------------------------------------------------------------------------------------------
// A raw socket: frames written by hand, every frame received kept in order
// ---------------------------------------------------------------------------------------------

/** A socket speaking frames by hand. */
export interface RawSocket {
  /** Sends an object as JSON, or text / bytes as they are. */
  send(frame: object | string | Uint8Array, binary?: boolean): void
  /** The next frame received (parsed). */
  next(): Promise<WebSocketFrame>
  /** The next frame, which must be an `ERROR` with `code`; returns it. */
  nextError(code: ErrorCode): Promise<ErrorFrame>
  /** Resolves with the close code once the server closed the socket. */
  readonly closed: Promise<number>
  /** Runs the handshake as `who` (or with `override`s of the response) and returns the `server_accept` or the refusal. */
  hello(who: Who, override?: Partial<Record<'clientNonce' | 'keyId' | 'agentId', string>> & { readonly response?: object }): Promise<WebSocketFrame>
  /** Sends a PING and resolves when its reply arrives, with every frame received before it. */
  barrier(): Promise<WebSocketFrame[]>
  /** Stops reading the socket, as a peer that never reads would (the server's writes pile up). */
  pause(): void
  /** Reads the socket again. */
  resume(): void
  /** Takes every frame received and not yet taken by {@link next}. */
  taken(): WebSocketFrame[]
  /** The subprotocol the server selected ('' for none). */
  readonly protocol: string
  close(): void
}

let rawFrames = 0

/** Opens a raw socket to `url`, offering `protocols` (none by default). */
export async function rawSocket(url: string, protocols: readonly string[] = []): Promise<RawSocket> {
  const socket = new WebSocket(url, [...protocols], { perMessageDeflate: false })
  const inbox: WebSocketFrame[] = []
  const waiting: ((frame: WebSocketFrame) => void)[] = []
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as WebSocketFrame
    const take = waiting.shift()
    if (take === undefined) inbox.push(frame)
    else take(frame)
  })
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)))
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  const id = (): string => `urn:weft:test:frame:${++rawFrames}`
  const raw: RawSocket = {
    send(frame, binary = false) {
      socket.send(typeof frame === 'string' || frame instanceof Uint8Array ? frame : JSON.stringify(frame), { binary })
    },
    next: () => {
      const ready = inbox.shift()
      return ready === undefined ? new Promise((resolve) => waiting.push(resolve)) : Promise.resolve(ready)
    },
    async nextError(code) {
      const frame = await raw.next()
      expect(frame.frameType === 'ERROR' ? frame.error.code : frame.frameType).toBe(code)
      return frame as ErrorFrame
    },
    closed,
    async hello(who, override = {}) {
      const { actor, key } = cast[who]
      const init = {
        protocolVersion: '0.1',
        frameId: id(),
        frameType: 'HELLO',
        phase: 'client_init',
        agentId: override.agentId ?? actor.id,
        keyId: override.keyId ?? key.keyId,
        clientNonce: override.clientNonce ?? encodeBase64url(new Uint8Array(32).fill(rawFrames)),
        supportedVersions: ['0.1'],
      }
      raw.send(init)
      const challenge = await raw.next()
      if (challenge.frameType !== 'HELLO' || challenge.phase !== 'server_challenge') return challenge
      const signature = key.pair.sign(
        helloTranscriptBytes({ agentId: init.agentId, keyId: init.keyId, selectedVersion: '0.1', clientNonce: init.clientNonce, serverNonce: challenge.serverNonce, challenge: challenge.challenge }),
      )
      raw.send(
        override.response ?? {
          protocolVersion: '0.1',
          frameId: id(),
          frameType: 'HELLO',
          phase: 'client_response',
          agentId: init.agentId,
          keyId: init.keyId,
          clientNonce: init.clientNonce,
          serverNonce: challenge.serverNonce,
          challengeSignature: encodeBase64url(signature),
        },
      )
      return raw.next()
    },
    async barrier() {
      const nonce = encodeBase64url(new Uint8Array(16).fill(++rawFrames % 250))
      raw.send({ protocolVersion: '0.1', frameId: id(), frameType: 'PING', nonce, sentAt: '2026-07-15T00:00:00Z' })
      const before: WebSocketFrame[] = []
      for (;;) {
        const frame = await raw.next()
        if (frame.frameType === 'PING' && frame.replyToNonce === nonce) return before
        before.push(frame)
      }
    },
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    taken: () => inbox.splice(0),
    get protocol() {
      return socket.protocol
    },
    close: () => socket.close(),
  }
  return raw
}
