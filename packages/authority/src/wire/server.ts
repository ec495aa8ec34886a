/**
 * `createWireServer`: the WebSocket binding of a Group Authority (§17) on TLS 1.3, or on a plain
 * loopback socket for development. It authenticates Agents with the HELLO challenge (§6.3),
 * opens each session's Epoch through the Authority, and serves every Group of an Agent over its
 * one connection. On the same listener it can serve people (§5 human interface: sessions a
 * {@link HumanSessionGate} admits at the upgrade) and plain HTTP requests (the console's app).
 * @module
 */
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { createClient } from '@weft/client'
import { DEFAULT_MAX_FRAME_BYTES, frameIdSource } from '@weft/client/wire'
import { ProtocolError, UsageError, type KeyResolver, type SigningKey } from '@weft/codec'
import { isEventOf, payloadOf, type PresenceRecord } from '@weft/spec'
import { WebSocketServer, type WebSocket } from 'ws'
import { systemClock, systemRandom, timestampOf, type Clock, type RandomSource } from '@weft/codec/time'
import { createDelivery, type Delivery } from '../delivery/delivery.js'
import { serveConnection } from './connection.js'
import { admitHuman, isHumanPath, type AdmittedHuman, type HumanSessionGate, type UpgradeRefusal } from './human-sessions.js'
import { endHumanSessionsPastStanding, endRevokedSessions, endSessionsPastStanding, STANDING_SWEEP_MS } from './revocation.js'
import type { ConnectionContext, ServerConnection, WireAuthority, WireLogEntry } from './types.js'

/** §6.3: the Event a session_open commits, carrying the new Session Epoch. */
const SESSION_OPENED = 'ext.missionweaveprotocol.identity.session_opened'

export type { WireAuthority, WireLogEntry } from './types.js'

/** The Organization service that opens Agent sessions (§6.3, §15.1 `session_open`): a control-plane Principal of the Authority. */
export interface SessionIssuer {
  readonly actor: { readonly type: 'service'; readonly id: string }
  /** Its key; the Registry binds it to `actor`, and the Authority's `policy.controlPlane` lists `actor.id`. */
  readonly signingKey: SigningKey
}

/** Options of {@link createWireServer}. */
export interface WireServerOptions {
  /** The Authority whose Commands and Events this server carries. */
  readonly authority: WireAuthority
  /** Resolves the Agents' handshake keys (§6.3); normally the Registry the Authority verifies with. */
  readonly registry: KeyResolver
  /** Signs the `session_open` Command each successful handshake submits. */
  readonly sessionIssuer: SessionIssuer
  /** The delivery subscriptions go through. Default: a new `createDelivery(authority)`, closed with the server. */
  readonly delivery?: Delivery
  /** TCP port; 0 (the default) picks a free one. */
  readonly port?: number
  /** Interface to listen on. Default `127.0.0.1`. */
  readonly host?: string
  /** PEM certificate chain and key: the server speaks `wss` with TLS 1.3 only (§17.1). */
  readonly tls?: { readonly cert: string | Uint8Array; readonly key: string | Uint8Array }
  /** Serve plain `ws` without TLS. Allowed only on a loopback host, for development and tests. */
  readonly insecureLoopback?: boolean
  /** Largest accepted frame in bytes; a larger message is refused and the connection closed. Default 2 MiB. */
  readonly maxFrameBytes?: number
  /** Events one Group may have in flight unacknowledged before it pauses with `BACKPRESSURE` (§17.3). Default 1000. */
  readonly maxUnackedPerGroup?: number
  /** The `retryAfterMs` guidance of `BACKPRESSURE`. Default 1000. */
  readonly retryAfterMs?: number
  /**
   * Bytes one connection may hold for its peer (§17.3 bounded buffering): frames written to its
   * socket and not yet sent, plus answers (PING replies, `ERROR` frames, receipts) queued behind
   * them. Event frames are written only while the socket holds less than an eighth of it; the
   * other Events wait in the delivery. When the queued answers would pass it, the connection gets
   * a fatal `BACKPRESSURE` with `retryAfterMs` and closes with 1013 (`CLOSE_CODES.tryAgainLater`).
   * Default {@link DEFAULT_MAX_OUTBOUND_BYTES}.
   */
  readonly maxOutboundBytes?: number
  /**
   * A connection whose socket takes none of the bytes waiting for it this long (its peer stopped
   * reading) is closed the same way; 0 never. Default {@link DEFAULT_SEND_TIMEOUT_MS}.
   */
  readonly sendTimeoutMs?: number
  /**
   * Frames one connection may send per second, sustained, with bursts of as many (§17.3, §20). A
   * peer that sends faster is not refused: its socket is read no further until its allowance
   * refills, so TCP holds it back, and a PING flood costs the server what this many frames cost.
   * Default {@link DEFAULT_MAX_FRAMES_PER_SECOND}; 0: no limit.
   */
  readonly maxFramesPerSecond?: number
  /** Time allowed from connection to `server_accept`; each connection gets between three quarters of it and all of it, so that a flood opened at once does not time out at once. Default 10000 ms. */
  readonly handshakeTimeoutMs?: number
  /** A connection silent this long (no frame, not even a PING) is closed; 0 never. Default 120000 ms. */
  readonly idleTimeoutMs?: number
  /** Lifetime of a session (the `expiresAt` of `server_accept`); frames after it are refused and the connection closed. Default 86400 s. */
  readonly sessionTtlSeconds?: number
  /** Time source for handshakes, session expiry and frame times; use the Authority's. Default: the wall clock. */
  readonly clock?: Clock
  /** Random bytes for nonces, challenges and IDs. Default: `node:crypto`. */
  readonly random?: RandomSource
  /** Receives one entry per notable connection event (sessions, refusals, closes). Default: none. */
  readonly log?: (entry: WireLogEntry) => void
  /**
   * Connections open at once, handshakes included; the upgrade of one more is refused with HTTP 503
   * and a `RATE_LIMITED` error body (§19, §20). Default: no limit.
   */
  readonly maxConnections?: number
  /**
   * Connections open at once from one peer address; the upgrade of one more is refused with HTTP
   * 429 and a `RATE_LIMITED` error body. Peers behind one proxy or NAT share an address. Default: no limit.
   */
  readonly maxConnectionsPerPeer?: number
  /**
   * Human sessions (§5 human interface) on this listener; absent: none (every upgrade is an Agent's).
   * An upgrade to `humanSessions.path` must offer `humanSessions.protocol` (else HTTP 400) and be
   * admitted by `humanSessions.admit` (else its `status`), each refusal with a `{ "error": … }` JSON
   * body and `Cache-Control: no-store`. An admitted session is open at once, without HELLO and
   * without a Session Epoch (§6.3); its first frame is a server `PING`. It counts against
   * `maxConnections` and `maxConnectionsPerPeer` like an Agent's.
   */
  readonly humanSessions?: HumanSessionGate
  /** Plain HTTP requests (not upgrades), e.g. the console's app and API; absent: 426 as today. */
  readonly http?: (request: IncomingMessage, response: ServerResponse) => void
}

/** What the server reports about one connection. */
export interface WireConnectionInfo {
  readonly id: string
  /** The Agent, once it sent `client_init`; `undefined` for a person's session. */
  readonly agentId: string | undefined
  /** Whom the connection speaks for: the Agent once it sent `client_init`, or the person a {@link HumanSessionGate} admitted. */
  readonly principal: { readonly type: 'agent' | 'human'; readonly id: string } | undefined
  /** The Session Epoch, once an Agent's session is open; a person's session has none (§6.3). */
  readonly sessionEpoch: number | undefined
  readonly status: 'handshake' | 'open'
  /** The Groups subscribed on the connection. */
  readonly groupIds: readonly string[]
  /** Bytes held for the peer now: written to the socket and not yet sent, plus queued answers. */
  readonly outboundBytes: number
  /** Drops the connection at once, as a network failure would. */
  terminate(): void
}

/** Counters of a {@link WireServer}'s outbound buffering (§17.3). */
export interface WireServerStats {
  /** Connections open now, handshakes included. */
  readonly connections: number
  /** Bytes held for peers now, over all connections (see {@link WireConnectionInfo.outboundBytes}). */
  readonly outboundBytes: number
  /** The most bytes one connection ever held at once, closed connections included. */
  readonly peakOutboundBytes: number
  /** The most bytes of received messages one connection ever had waiting to be handled, closed connections included. */
  readonly peakInboundBytes: number
  /** Connections closed because they could not keep {@link WireServerOptions.maxOutboundBytes} or {@link WireServerOptions.sendTimeoutMs}. */
  readonly backpressureCloses: number
}

/** Default of {@link WireServerOptions.maxOutboundBytes}: 4 MiB, room for a few receipts of the largest Commands (1 MiB) behind a full socket. */
export const DEFAULT_MAX_OUTBOUND_BYTES = 4 * 1024 * 1024

/**
 * Default of {@link WireServerOptions.maxFramesPerSecond}: 2000, far above an Agent's heartbeats,
 * ACKs and Commands (each Command waits for the store), far below a PING flood's 30,000 and more.
 */
export const DEFAULT_MAX_FRAMES_PER_SECOND = 2000

/** Default of {@link WireServerOptions.sendTimeoutMs}: a minute without the socket taking a byte. */
export const DEFAULT_SEND_TIMEOUT_MS = 60_000

/** A running WebSocket server. */
export interface WireServer {
  /** `wss://host:port` (or `ws://` on the insecure loopback). */
  readonly url: string
  readonly port: number
  /** The current connections. */
  readonly connections: readonly WireConnectionInfo[]
  /** The latest Presence Record an Agent sent in a `PING` of its current session (§6.2). */
  presence(agentId: string): PresenceRecord | undefined
  /** What the server holds for its peers now, and the most it held. */
  stats(): WireServerStats
  /**
   * Ends every open human session with this `sessionId` (sign-out, revocation): a fatal ERROR
   * `error` (default AUTH_REQUIRED 'The session ended.'), then close 4401. Returns how many ended.
   */
  endHumanSessions(sessionId: string, error?: ProtocolError): number
  /** Closes every connection (code 1001) and stops listening. */
  close(): Promise<void>
}

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '::1', 'localhost'])

/**
 * Starts a WebSocket server for `authority`.
 *
 * A connection starts with the HELLO challenge (§6.3): the Agent names itself and its key, signs
 * the canonical transcript of a fresh challenge (`helloTranscriptBytes` of `@weft/client/wire`),
 * and the server, after verifying it against `registry`, submits
 * `ext.missionweaveprotocol.identity.session_open` as `sessionIssuer`. The new Session Epoch fences
 * the Agent's older sessions: their connections get `AUTH_STALE_SESSION` and close. An Agent Card
 * registered for the Agent that is not `active`, or that revokes the key a session authenticated
 * with, ends that session likewise (`AUTH_FORBIDDEN` or `AUTH_INVALID_SIGNATURE`, close code 4409),
 * also when another process sharing the Authority's log accepted it.
 *
 * In a session: `SUBSCRIBE` subscribes each named Group through the delivery (replay, then live
 * without a gap); `COMMAND` submits the Command to the Authority and answers with its receipt as
 * `EVENT` frames (see `receiptFrameId`) or a correlated `ERROR`; `ACK` records Cursors and reopens
 * a Group paused by `BACKPRESSURE`; `PING` is answered with the nonce echoed.
 *
 * With `humanSessions`, an upgrade to its path is a person's (§5): admitted before any WebSocket
 * exists, then served the same frames as the person (§8 visibility through the delivery, only their
 * own Commands, no Presence), until its expiry, {@link WireServer.endHumanSessions}, or its key
 * leaving the Registry. With `http`, plain requests go to it rather than being answered 426.
 *
 * @throws UsageError on bad options, e.g. no `tls` without `insecureLoopback` on a loopback host.
 * @example
 * ```ts
 * const server = await createWireServer({ authority, registry, sessionIssuer: controlPlane, tls: { cert, key }, host: '0.0.0.0', port: 7443 })
 * console.log(server.url) // wss://0.0.0.0:7443
 * await server.close()
 * ```
 * @example A console on the same listener (its gate and HTTP handler come from the console's server):
 * ```ts
 * const server = await createWireServer({ authority, registry, sessionIssuer, tls, http: (req, res) => console.handle(req, res), humanSessions: console.gate })
 * server.endHumanSessions(sessionId) // on sign-out: that person's sockets get AUTH_REQUIRED and close 4401
 * ```
 */
export async function createWireServer(options: WireServerOptions): Promise<WireServer> {
  const o = checkOptions(options)
  const clock = o.clock ?? systemClock
  const random = o.random ?? systemRandom
  const host = o.host ?? '127.0.0.1'
  const ownDelivery = o.delivery === undefined
  const delivery = o.delivery ?? createDelivery(o.authority)
  const log = o.log ?? (() => undefined)
  const maxFrameBytes = o.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES
  const connections = new Set<ServerConnection>()
  const presence = new Map<string, PresenceRecord>()
  const outbound = { peak: 0, peakInbound: 0, backpressureCloses: 0 }
  const issuer = createClient({ actor: o.sessionIssuer.actor, signingKey: o.sessionIssuer.signingKey, transport: o.authority.connect(), clock, random })

  const ctx: ConnectionContext = {
    authority: o.authority,
    delivery,
    registry: o.registry,
    clock,
    random,
    maxFrameBytes,
    maxUnackedPerGroup: o.maxUnackedPerGroup ?? 1000,
    retryAfterMs: o.retryAfterMs ?? 1000,
    handshakeTimeoutMs: o.handshakeTimeoutMs ?? 10_000,
    idleTimeoutMs: o.idleTimeoutMs ?? 120_000,
    sessionTtlMs: (o.sessionTtlSeconds ?? 86_400) * 1000,
    maxOutboundBytes: o.maxOutboundBytes ?? DEFAULT_MAX_OUTBOUND_BYTES,
    maxFramesPerSecond: o.maxFramesPerSecond ?? DEFAULT_MAX_FRAMES_PER_SECOND,
    sendTimeoutMs: o.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS,
    outbound,
    presence,
    log,
    async openSession(agentId) {
      const receipt = await issuer.identitySessionOpen({ agentId })
      const opened = receipt.events.find((e) => isEventOf(e, SESSION_OPENED))?.payload
      // The Authority's receipt of a session_open always carries the Event (§6.3); say so if not.
      if (opened === undefined) throw new Error('session_open was accepted without its session_opened Event')
      return opened.sessionEpoch
    },
    forget(connection) {
      outbound.peak = Math.max(outbound.peak, connection.peakOutboundBytes)
      outbound.peakInbound = Math.max(outbound.peakInbound, connection.peakInboundBytes)
      connections.delete(connection)
      if (connection.agentId !== undefined && connection.sessionEpoch !== undefined && presence.get(connection.agentId)?.sessionEpoch === connection.sessionEpoch) presence.delete(connection.agentId)
    },
  }

  // §6.3: a new Session Epoch, however it was opened (here or by the control plane in process),
  // fences every connection of that Agent on an older one.
  const detach = o.authority.onCommit((events) => {
    for (const event of events) {
      // §6.1, §6.4: a card that stops its Agent ends the Agent's sessions here, whichever process accepted it.
      endRevokedSessions(event, connections, o.authority.state, clock.now())
      const opened = payloadOf(event, SESSION_OPENED)
      if (opened === undefined) continue
      const { agentId, sessionEpoch } = opened
      for (const connection of [...connections]) if (connection.agentId === agentId) connection.fence(sessionEpoch)
    }
  })

  // §6.4: a key boundary a card stated ahead of time ends the sessions it authenticated when it arrives.
  // A person's session ends likewise once the Registry no longer holds their key, and at its expiry.
  const sweep = setInterval(() => {
    endSessionsPastStanding(connections, o.authority.state, clock.now())
    endHumanSessionsPastStanding(connections, o.registry, clock.now())
  }, STANDING_SWEEP_MS)
  sweep.unref()

  const refuseHttp = (_request: IncomingMessage, response: ServerResponse): void => {
    response.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' }).end('This endpoint speaks the MissionWeaveProtocol WebSocket binding only.\n')
  }
  const serveHttp = o.http === undefined ? refuseHttp : plainHttp(o.http, log)
  const http: HttpServer =
    o.tls === undefined ? createHttpServer(serveHttp) : createHttpsServer({ cert: pem(o.tls.cert), key: pem(o.tls.key), minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' }, serveHttp)
  // The socket cap sits above the frame bound, so a moderately oversized frame is still read and
  // answered with an ERROR before the close; beyond the cap the socket is cut (1009) unread.
  const peers = connectionCounter(o, clock, log)
  const gate = o.humanSessions
  /**
   * The admissions of upgrades ws is completing, handed from `verifyClient` to the connection. An
   * upgrade that never completes (its peer left meanwhile) leaves with its socket.
   */
  const admitted = new Map<IncomingMessage, AdmittedHuman>()
  const verifyClient = (info: { req: IncomingMessage }, done: UpgradeDone): void => {
    const request = info.req
    const human = gate !== undefined && isHumanPath(gate, request)
    if (!peers.admit(request, done, human)) return
    if (!human) return done(true)
    const decided = admitHuman(gate, request, clock.now(), (message) => log({ level: 'error', message }))
    if ('ok' in decided) {
      admitted.set(request, decided)
      request.socket.once('close', () => admitted.delete(request))
      return done(true)
    }
    log({ level: 'warn', message: `human session refused from ${request.socket.remoteAddress ?? 'unknown'}: ${decided.error.message}`, code: decided.error.code })
    refuseUpgrade(done, decided, clock, true)
  }
  const wss = new WebSocketServer({
    server: http,
    maxPayload: maxFrameBytes * 2,
    perMessageDeflate: false,
    clientTracking: false,
    verifyClient,
    // An admitted person gets the gate's subprotocol (the others they offered carry their token);
    // an Agent's upgrade gets ws's own choice, the first offered, as without human sessions.
    ...(gate === undefined ? {} : { handleProtocols: (protocols: Set<string>, request: IncomingMessage) => (admitted.has(request) ? gate.protocol : (protocols.values().next().value ?? false)) }),
  })
  const newId = frameIdSource(random)
  wss.on('connection', (socket, request) => {
    const id = newId().replace('urn:weft:frame:', 'urn:weft:connection:')
    peers.hold(socket, request)
    const tlsProtocol = (request.socket as TLSSocket).getProtocol?.() ?? undefined
    log({ level: 'info', message: `connection from ${request.socket.remoteAddress ?? 'unknown'}${tlsProtocol === undefined ? '' : ` over ${tlsProtocol}`}`, connectionId: id })
    const human = admitted.get(request)
    admitted.delete(request)
    connections.add(serveConnection(socket, ctx, id, human))
  })

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(o.port ?? 0, host, () => {
      http.off('error', reject)
      resolve()
    })
  })
  const port = (http.address() as AddressInfo).port
  const url = `${o.tls === undefined ? 'ws' : 'wss'}://${host.includes(':') ? `[${host}]` : host}:${port}`
  let closed: Promise<void> | undefined

  return {
    url,
    port,
    get connections() {
      return [...connections].map(
        (c): WireConnectionInfo => ({
          id: c.id,
          agentId: c.agentId,
          principal: principalOf(c),
          sessionEpoch: c.sessionEpoch,
          status: c.open ? 'open' : 'handshake',
          groupIds: c.groupIds,
          outboundBytes: c.outboundBytes,
          terminate: () => c.terminate(),
        }),
      )
    },
    presence: (agentId) => presence.get(agentId),
    endHumanSessions(sessionId, error = new ProtocolError('AUTH_REQUIRED', 'The session ended.')) {
      let ended = 0
      for (const connection of [...connections]) {
        if (!connection.open || connection.humanSessionId !== sessionId) continue
        connection.revoke(error)
        ended++
      }
      return ended
    },
    stats() {
      let outboundBytes = 0
      let peakOutboundBytes = outbound.peak
      let peakInboundBytes = outbound.peakInbound
      for (const c of connections) {
        outboundBytes += c.outboundBytes
        peakOutboundBytes = Math.max(peakOutboundBytes, c.peakOutboundBytes)
        peakInboundBytes = Math.max(peakInboundBytes, c.peakInboundBytes)
      }
      return { connections: connections.size, outboundBytes, peakOutboundBytes, peakInboundBytes, backpressureCloses: outbound.backpressureCloses }
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        detach()
        clearInterval(sweep)
        for (const connection of [...connections]) connection.shutdown()
        if (ownDelivery) delivery.close()
        wss.close()
        http.close(() => resolve())
        http.closeAllConnections?.()
      })
      return closed
    },
  }
}

/** The `Retry-After` of a refused upgrade, in seconds: connections free up as peers leave. */
const CONNECTION_RETRY_AFTER_SECONDS = 1

/** The callback of ws's `verifyClient`: accept, or refuse with an HTTP status, body and headers. */
type UpgradeDone = (ok: boolean, status?: number, message?: string, headers?: Record<string, string | number>) => void

/**
 * Refuses an upgrade before ws creates a socket, with `refusal.status` and the §19 error object as
 * the JSON body. Agents' refusals keep their bare error body; a person's (`wrapped`) is
 * `{ "error": … }`, as the console's HTTP API answers, and is never cached (it concerns a session).
 */
function refuseUpgrade(done: UpgradeDone, refusal: UpgradeRefusal, clock: Clock, wrapped: boolean, headers: Record<string, string | number> = {}): void {
  const wire = refusal.error.toWire(timestampOf(clock.now()))
  const body = JSON.stringify(wrapped ? { error: wire } : wire)
  done(false, refusal.status, body, { 'Content-Type': 'application/json', ...(wrapped ? { 'Cache-Control': 'no-store' } : {}), ...headers })
}

/** Hands a plain HTTP request to `handler`; one that throws or rejects gets a 500 (or its socket cut, once answering began). */
function plainHttp(handler: (request: IncomingMessage, response: ServerResponse) => void, log: (entry: WireLogEntry) => void) {
  const failed = (response: ServerResponse, thrown: unknown): void => {
    log({ level: 'error', message: `the http handler failed: ${thrown instanceof Error ? thrown.message : String(thrown)}`, code: 'INTERNAL_ERROR' })
    if (response.headersSent) response.destroy()
    else response.writeHead(500, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end('Internal server error.\n')
  }
  return (request: IncomingMessage, response: ServerResponse): void => {
    try {
      const result: unknown = handler(request, response)
      if (result instanceof Promise) result.catch((thrown: unknown) => failed(response, thrown))
    } catch (thrown) {
      failed(response, thrown)
    }
  }
}

/** What {@link WireConnectionInfo.principal} reports: an Agent or a person; the server serves no other Principal. */
function principalOf(connection: ServerConnection): WireConnectionInfo['principal'] {
  const principal = connection.principal
  return principal === undefined ? undefined : { type: principal.type === 'human' ? 'human' : 'agent', id: principal.id }
}

/**
 * Counts the open WebSockets, Agents' and people's alike, in all and per peer address, and refuses
 * an upgrade beyond `maxConnections` or `maxConnectionsPerPeer` before any WebSocket exists for it.
 * ws completes an admitted upgrade synchronously, so `hold` runs before the next `admit` and the
 * counts are exact.
 */
function connectionCounter(o: WireServerOptions, clock: Clock, log: (entry: WireLogEntry) => void) {
  const perPeer = new Map<string, number>()
  let open = 0
  const peerOf = (request: IncomingMessage): string => request.socket.remoteAddress ?? 'unknown'
  const refusal = (peer: string): { status: number; message: string } | undefined => {
    if (o.maxConnections !== undefined && open >= o.maxConnections) return { status: 503, message: `The server holds its limit of ${o.maxConnections} connections.` }
    if (o.maxConnectionsPerPeer !== undefined && (perPeer.get(peer) ?? 0) >= o.maxConnectionsPerPeer)
      return { status: 429, message: `${peer} holds its limit of ${o.maxConnectionsPerPeer} connections.` }
    return undefined
  }
  return {
    /** Whether one more connection fits; when not, the upgrade has been refused through `done` (a person's with the `{ error }` body). */
    admit(request: IncomingMessage, done: UpgradeDone, human: boolean): boolean {
      const peer = peerOf(request)
      const refused = refusal(peer)
      if (refused === undefined) return true
      // §19, §20: a limit reached is RATE_LIMITED and safe to retry; the body is the error object.
      const error = new ProtocolError('RATE_LIMITED', refused.message, { retryable: true, details: { retryAfterMs: CONNECTION_RETRY_AFTER_SECONDS * 1000 } })
      log({ level: 'warn', message: `connection refused from ${peer}: ${refused.message}`, code: error.code })
      refuseUpgrade(done, { status: refused.status, error }, clock, human, { 'Retry-After': CONNECTION_RETRY_AFTER_SECONDS })
      return false
    },
    hold(socket: WebSocket, request: IncomingMessage): void {
      const peer = peerOf(request)
      open++
      perPeer.set(peer, (perPeer.get(peer) ?? 0) + 1)
      // Registered before the connection's own listeners: its place is free before its close is logged.
      socket.once('close', () => {
        open--
        const left = (perPeer.get(peer) ?? 1) - 1
        if (left === 0) perPeer.delete(peer)
        else perPeer.set(peer, left)
      })
    },
  }
}

function pem(value: string | Uint8Array): string | Buffer {
  return typeof value === 'string' ? value : Buffer.from(value)
}

function checkOptions(options: WireServerOptions): WireServerOptions {
  const { authority, registry, sessionIssuer, tls, insecureLoopback, host } = options ?? ({} as WireServerOptions)
  if (typeof authority?.submit !== 'function' || typeof authority.onCommit !== 'function') throw new UsageError('createWireServer: authority must be an Authority (createAuthority)')
  if (typeof registry?.resolve !== 'function') throw new UsageError('createWireServer: registry must be a KeyResolver (the Registry the Authority verifies with)')
  if (sessionIssuer?.actor?.type !== 'service' || typeof sessionIssuer.actor.id !== 'string' || typeof sessionIssuer.signingKey?.pair?.sign !== 'function') {
    throw new UsageError('createWireServer: sessionIssuer must be a control-plane service { actor: { type: "service", id }, signingKey }')
  }
  if (tls !== undefined) {
    if (tls.cert === undefined || tls.key === undefined) throw new UsageError('createWireServer: tls needs cert and key (PEM)')
    if (insecureLoopback === true) throw new UsageError('createWireServer: pass either tls or insecureLoopback, not both')
  } else {
    // §17.1: servers provide wss with TLS 1.3; a plain socket is only for a loopback development host.
    if (insecureLoopback !== true) throw new UsageError('createWireServer: pass tls { cert, key } (§17.1: wss over TLS 1.3), or insecureLoopback: true on a loopback host')
    if (!LOOPBACK_HOSTS.has(host ?? '127.0.0.1')) throw new UsageError(`createWireServer: insecureLoopback serves loopback hosts only (127.0.0.1, ::1, localhost), not ${String(host)}`)
  }
  const port = options.port
  if (port !== undefined && (!Number.isSafeInteger(port) || port < 0 || port > 65535)) throw new UsageError('createWireServer: port must be an integer from 0 to 65535')
  for (const name of ['maxFrameBytes', 'maxUnackedPerGroup', 'retryAfterMs', 'handshakeTimeoutMs', 'sessionTtlSeconds', 'maxConnections', 'maxConnectionsPerPeer', 'maxOutboundBytes'] as const) {
    const value = options[name]
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) throw new UsageError(`createWireServer: ${name} must be a positive integer`)
  }
  for (const name of ['idleTimeoutMs', 'sendTimeoutMs', 'maxFramesPerSecond'] as const) {
    const value = options[name]
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) throw new UsageError(`createWireServer: ${name} must be a non-negative integer`)
  }
  if (options.clock !== undefined && typeof options.clock.now !== 'function') throw new UsageError('createWireServer: clock must be { now(): number }')
  const gate = options.humanSessions
  if (gate !== undefined) {
    if (typeof gate.path !== 'string' || !gate.path.startsWith('/') || gate.path.includes('?'))
      throw new UsageError('createWireServer: humanSessions.path must be a request path such as "/console/ws"')
    // RFC 6455 §4.1: a subprotocol is an HTTP token (no separators, no spaces).
    if (typeof gate.protocol !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(gate.protocol))
      throw new UsageError('createWireServer: humanSessions.protocol must be a WebSocket subprotocol token such as "weft-console.v1"')
    if (typeof gate.admit !== 'function') throw new UsageError('createWireServer: humanSessions.admit must be a function (request) => HumanAdmission')
  }
  if (options.http !== undefined && typeof options.http !== 'function') throw new UsageError('createWireServer: http must be a function (request, response) => void')
  if (options.random !== undefined && typeof options.random !== 'function') throw new UsageError('createWireServer: random must be a function (n) => Uint8Array')
  return options
}
