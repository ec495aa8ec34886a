/**
 * `connectWebSocket`: one Principal's authenticated connection to a Group Authority over the
 * WebSocket binding (§6.3, §17): an Agent's, opened by the HELLO handshake, or a session the
 * server authenticated before the socket opened (a person signed in to a web console). It gives a
 * {@link Transport} for signed Commands and an {@link EventFeed} for every Group the Principal
 * reads, over one socket (§17.1), and reconnects on its own (an Agent with a new handshake, which
 * opens a new Session Epoch, §6.3). The socket is the platform's (`#socket`: `ws` in Node, the
 * global `WebSocket` in a browser).
 * @module
 */
import { encodeBase64url, ProtocolError, signingHash, UsageError, type AsyncSigningKey, type SigningKey } from '@weft/codec'
import type { Actor, Command, CommandKind, ErrorFrame, Event, EventFrame, HelloServerAcceptFrame, HelloServerChallengeFrame, PingFrame, PresenceRecord, WebSocketFrame } from '@weft/spec'
import { openSocket } from '#socket'
import type { EventFeed } from '../feed.js'
import { newUrnUuid, systemRandom, timestampOf, type Clock, type RandomSource } from '../ids.js'
import type { Receipt, Transport } from '../sender.js'
import { CLOSE_CODES, errorOfFrame, frameIdSource, helloTranscriptBytes, newNonce, parseReceiptFrameId, PROTOCOL_VERSION, readFrame } from './frames.js'
import type { WireSocket } from './socket.js'
import { createWireFeed } from './subscriptions.js'

const transportBrand = Symbol.for('@weft/TransportUnavailableError')

/**
 * The Authority could not be reached: the connection is down, reconnecting, or closed. It is never
 * a `ProtocolError`: a Command rejected with it was not refused. It may or may not have been
 * applied if it was already sent; an unchanged retry of the same signed bytes (same Action ID)
 * after the connection is back is always safe and answers the original receipt if it was (§15.1).
 */
export class TransportUnavailableError extends Error {
  constructor(message: string, options: { readonly cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'TransportUnavailableError'
    Object.defineProperty(this, transportBrand, { value: true })
  }

  /** True for any TransportUnavailableError, including one made by another copy of this package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[transportBrand] === true
  }
}

/** Delays between reconnect attempts: exponential from `initialDelayMs` up to `maxDelayMs`, with jitter. */
export interface ReconnectOptions {
  readonly initialDelayMs: number
  readonly maxDelayMs: number
}

/**
 * A session the server authenticated before the socket opened, such as a person's sign-in to a
 * web console: the socket carries proof of it as WebSocket subprotocols (a browser can send no
 * other header), and no HELLO handshake runs (§6.3 defines the handshake for Agents only).
 */
export interface PreAuthenticatedSession {
  /**
   * The subprotocols to offer (`Sec-WebSocket-Protocol`, RFC 6455 §4.1), e.g. a protocol name
   * and a one-time ticket the server issued at sign-in. Called for every socket, reconnects
   * included, so a single-use ticket can be fetched fresh each time; a rejection fails that
   * attempt with what it rejected with (a non-retryable `ProtocolError` ends the connection).
   */
  protocols(): readonly string[] | Promise<readonly string[]>
}

/** Options of {@link connectWebSocket}. */
export interface WebSocketOptions {
  /** `wss://…` (TLS 1.3, §17.1); `ws://` only to a loopback host. */
  readonly url: string
  /**
   * The Principal of the connection. With the HELLO handshake an Agent (§6.3: the handshake is
   * an Agent's); with {@link WebSocketOptions.session} an Agent or a human.
   */
  readonly actor: Actor
  /**
   * The Agent's Ed25519 key, which signs the handshake transcript (§6.3); the Registry must bind
   * `signingKey.keyId` to the Agent. Synchronous, or asynchronous such as a browser's WebCrypto
   * key (`webCryptoKeyPair` of `@weft/codec`). Required unless `session` is given; a
   * pre-authenticated session signs nothing on the connection.
   */
  readonly signingKey?: SigningKey | AsyncSigningKey
  /**
   * A session the server authenticated before the socket opened, instead of the HELLO
   * handshake: the socket offers `session.protocols()` as subprotocols and sends no HELLO. The
   * server opens the session by sending a `PING` first (answered as usual); an `ERROR` instead
   * refuses it (connectWebSocket rejects with its `ProtocolError`), and a close before any frame
   * rejects with `AUTH_REQUIRED`. No Session Epoch is issued: {@link WebSocketConnection.sessionEpoch}
   * stays 0, and a human's Commands carry none anyway (§6.3, §15.1).
   */
  readonly session?: PreAuthenticatedSession
  /**
   * Trusted CA certificates (PEM) for the server's certificate, e.g. a private CA or a self-signed
   * test certificate. Node only: in a browser the browser's own trust store decides, and giving
   * `ca` there is a `UsageError`.
   */
  readonly ca?: string | Uint8Array | readonly (string | Uint8Array)[]
  /** Milliseconds since the epoch, like `Date.now` (the default). */
  readonly clock?: Clock
  /** Random bytes for nonces and IDs; WebCrypto's `getRandomValues` by default. */
  readonly random?: RandomSource
  /** Reconnect policy; `false` closes the connection for good on the first drop. Default `{ initialDelayMs: 250, maxDelayMs: 30000 }`. */
  readonly reconnect?: ReconnectOptions | false
  /** Commands accepted for sending while the connection is down (sent, in order, once it is back). Default 0: they are rejected with {@link TransportUnavailableError}. */
  readonly bufferWhileDisconnected?: number
  /** Largest inbound frame in bytes. Default 16 MiB. */
  readonly maxFrameBytes?: number
  /** Interval of liveness `PING`s (§17.3); an unanswered one drops the socket. 0 disables them. Default 15000. */
  readonly heartbeatMs?: number
  /** How long the WebSocket upgrade and the HELLO exchange (or the wait for a pre-authenticated session's first frame) may take. Default 10000. */
  readonly handshakeTimeoutMs?: number
}

/** Where a connection stands. */
export type ConnectionStatus = 'connecting' | 'open' | 'reconnecting' | 'closed'

/** A connection state change, as {@link WebSocketConnection.on} reports it. */
export interface ConnectionState {
  readonly status: ConnectionStatus
  /** The Session Epoch of the current (or, when not open, the last) session; 0 for a pre-authenticated session, which has none. */
  readonly sessionEpoch: number
  /** Why the connection dropped or closed, when it did not close on request. */
  readonly error?: Error
}

/** An open connection of one Agent (or, with a pre-authenticated session, of one human or Agent). */
export interface WebSocketConnection {
  /**
   * Sends signed Commands (`COMMAND` frames carrying the exact signed bytes) and resolves with the
   * receipt, or rejects with the `ProtocolError` of the refusal, or with a
   * {@link TransportUnavailableError} when the Authority cannot be reached.
   */
  readonly transport: Transport
  /** The Agent's Event feed: every Group on this one connection (§17.1). Subscribers must ACK (§16) to keep each Group flowing. */
  readonly feed: EventFeed
  /**
   * The Session Epoch the server issued in the last handshake (§6.3). Every reconnect opens a new
   * one, fencing Commands built under the old one: feed it to the client's `epochs.setSession`.
   * Always 0 for a pre-authenticated session: no handshake issued one.
   */
  sessionEpoch(): number
  /** The current status. */
  readonly status: ConnectionStatus
  /** Listens to status changes; returns a function that stops listening. */
  on(event: 'state', listener: (state: ConnectionState) => void): () => void
  /**
   * Sends a `PING` (optionally with this Agent's Presence Record, §6.2) and resolves when the
   * server's reply echoes its nonce (§17.3). Frames the server sent before the reply have been handled.
   */
  ping(presence?: PresenceRecord): Promise<void>
  /** Closes the connection for good; pending and buffered Commands reject with {@link TransportUnavailableError}. */
  close(): Promise<void>
}

/** A Command sent, or waiting to be sent, and its caller. */
interface Pending {
  /** The `COMMAND` frame that carries it, once sent. */
  frameId?: string
  readonly command: Readonly<Record<string, unknown>>
  readonly bytes: string
  readonly actionId: string
  resolve(receipt: Receipt): void
  reject(error: Error): void
}

/** One live socket and its handshake. */
interface Link {
  readonly socket: WireSocket
  /** Resolves once the socket reported its close. */
  readonly closed: Promise<void>
  /** `COMMAND` frames sent on this socket and not yet answered, by frame ID. */
  readonly commands: Map<string, Pending>
  /** The same, by Action ID, oldest first: receipts name the Action ID (`cause.id`), not the frame. */
  readonly byAction: Map<string, Pending[]>
  /** Receipt `EVENT` frames collected so far, by receipt serial. */
  readonly receipts: Map<string, Event[]>
  /** `PING`s awaiting their reply, by nonce. */
  readonly pings: Map<string, { readonly frameId: string; resolve(): void; reject(error: Error): void }>
  open: boolean
  /** The last `fatal` ERROR the server sent before closing. */
  fatal: ProtocolError | undefined
  heartbeat: ReturnType<typeof setInterval> | undefined
  heartbeatNonce: string | undefined
}

const DEFAULTS = { maxFrameBytes: 16 * 1024 * 1024, heartbeatMs: 15_000, handshakeTimeoutMs: 10_000, reconnect: { initialDelayMs: 250, maxDelayMs: 30_000 } }

/**
 * Connects an Agent: opens the socket, runs the HELLO challenge handshake (§6.3: the Agent signs
 * the canonical transcript of the server's challenge, with a synchronous key or an asynchronous
 * one such as a browser's WebCrypto key) and resolves once the server has issued a Session Epoch.
 * Afterwards, a dropped socket is reconnected with a new handshake (and so a new Session Epoch)
 * and every Group resubscribed from the last position handed to its handler.
 *
 * With `session` (a {@link PreAuthenticatedSession}, e.g. a person signed in to a web console) no
 * HELLO runs: the socket offers the session's subprotocols and resolves when the server opens the
 * session with its first `PING`; the actor may be a human, whose Commands carry no Session Epoch
 * (§6.3, §15.1). Receipts, subscriptions and ACKs work the same way.
 *
 * Commands in flight when the socket drops reject with {@link TransportUnavailableError}: resend
 * the same bytes (`client.resend(built)`) once it is back to learn their outcome. Commands built
 * under the previous Session Epoch and never accepted are then refused with `AUTH_STALE_SESSION`,
 * whose `details.currentSessionEpoch` is the new epoch: build new ones (§19). When another runtime
 * of the same Agent opens a session, this one is fenced for good: the state turns `closed` and
 * every Command rejects with that `AUTH_STALE_SESSION`.
 *
 * @throws UsageError on bad options; rejects with the handshake's `ProtocolError` (wrong key,
 * unregistered Agent, unsupported version; for a pre-authenticated session the `ERROR` the server
 * sent instead of its `PING`, or `AUTH_REQUIRED` when it closed the socket before any frame) or a
 * {@link TransportUnavailableError} when the first connection cannot be made.
 * @example
 * ```ts
 * const conn = await connectWebSocket({ url: 'wss://authority.example:7443', actor, signingKey, ca })
 * const worker = createClient({ actor, signingKey, transport: conn.transport, groupId })
 * worker.epochs.setSession(conn.sessionEpoch())
 * conn.on('state', (s) => { if (s.status === 'open') worker.epochs.setSession(s.sessionEpoch) })
 * conn.feed.subscribe([{ groupId, afterSequence: cursor }], { onEvent: (e) => inbox.receive(e) })
 *
 * // A person signed in to a web console: the server issued a ticket at sign-in.
 * const human = await connectWebSocket({ url, actor: { type: 'human', id: ownerId }, session: { protocols: async () => ['weft.console', await freshTicket()] } })
 * const owner = createClient({ actor: { type: 'human', id: ownerId }, signingKey: { keyId, pair: await webCryptoKeyPair(seed, publicKey) }, transport: human.transport, groupId })
 * ```
 */
export async function connectWebSocket(options: WebSocketOptions): Promise<WebSocketConnection> {
  const o = checkOptions(options)
  const clock = o.clock ?? Date.now
  const random = o.random ?? systemRandom
  const reconnect = o.reconnect === undefined ? DEFAULTS.reconnect : o.reconnect
  const maxFrameBytes = o.maxFrameBytes ?? DEFAULTS.maxFrameBytes
  const heartbeatMs = o.heartbeatMs ?? DEFAULTS.heartbeatMs
  const handshakeTimeoutMs = o.handshakeTimeoutMs ?? DEFAULTS.handshakeTimeoutMs
  const bufferLimit = o.bufferWhileDisconnected ?? 0
  const agentId = o.actor.id
  const { session, signingKey } = o
  const now = (): string => timestampOf(clock())

  let status: ConnectionStatus = 'connecting'
  let sessionEpoch = 0
  let link: Link | undefined
  /** Set when the connection can never be used again (fenced or refused); Commands then reject with it. */
  let terminal: Error | undefined
  let userClosed = false
  let attempts = 0
  let retryTimer: ReturnType<typeof setTimeout> | undefined
  let closing: Promise<void> | undefined
  const buffered: Pending[] = []
  const listeners = new Set<(state: ConnectionState) => void>()
  const nextFrameId = frameIdSource(random)

  const setStatus = (next: ConnectionStatus, error?: Error): void => {
    status = next
    const state: ConnectionState = { status: next, sessionEpoch, ...(error === undefined ? {} : { error }) }
    for (const listener of [...listeners]) {
      try {
        listener(state)
      } catch {
        // A listener's failure does not change the connection.
      }
    }
  }

  const sendFrame = (l: Link, frame: WebSocketFrame | string): boolean => {
    if (!l.socket.isOpen) return false
    l.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame))
    return true
  }

  const wire = createWireFeed({
    send(build) {
      if (link === undefined || !link.open) return undefined
      const frameId = nextFrameId()
      return sendFrame(link, build(frameId)) ? frameId : undefined
    },
    now,
    newId: () => newUrnUuid(random),
  })

  // ---- Commands -------------------------------------------------------------------------------

  const dispatch = (l: Link, p: Pending): void => {
    const frameId = nextFrameId()
    // The signed bytes go on the wire as they are: the `command` member is exactly the text that was signed.
    const text = `{"protocolVersion":"${PROTOCOL_VERSION}","frameId":"${frameId}","frameType":"COMMAND","command":${p.bytes}}`
    if (!sendFrame(l, text)) return p.reject(new TransportUnavailableError('the connection to the Authority is down'))
    p.frameId = frameId
    l.commands.set(frameId, p)
    const queue = l.byAction.get(p.actionId)
    if (queue === undefined) l.byAction.set(p.actionId, [p])
    else queue.push(p)
  }

  const settle = (l: Link, p: Pending): void => {
    if (p.frameId !== undefined) l.commands.delete(p.frameId)
    const queue = l.byAction.get(p.actionId)
    const at = queue?.indexOf(p) ?? -1
    if (queue !== undefined && at >= 0) queue.splice(at, 1)
    if (queue?.length === 0) l.byAction.delete(p.actionId)
  }

  const transport: Transport = {
    submit(command, bytes) {
      return new Promise<Receipt>((resolve, reject) => {
        if (typeof bytes !== 'string' || typeof command?.['actionId'] !== 'string') {
          reject(new UsageError('submit: pass the signed Command and its exact JSON text'))
          return
        }
        const p: Pending = { command, bytes, actionId: command['actionId'], resolve, reject }
        if (terminal !== undefined) return reject(terminal)
        if (link?.open === true) return dispatch(link, p)
        if (status !== 'closed' && buffered.length < bufferLimit) {
          buffered.push(p)
          return
        }
        reject(new TransportUnavailableError(status === 'closed' ? 'the connection to the Authority is closed' : 'the connection to the Authority is down; the Command was not sent'))
      })
    },
  }

  const receiptPart = (l: Link, frame: EventFrame): boolean => {
    const part = parseReceiptFrameId(frame.frameId)
    if (part === undefined) return false
    const events = l.receipts.get(part.serial) ?? []
    l.receipts.set(part.serial, events)
    events[part.index] = frame.event
    if (events.length < part.count || events.some((e) => e === undefined)) return true
    l.receipts.delete(part.serial)
    const first = events[0]!
    const p = l.byAction.get(first.cause.id)?.[0]
    if (p === undefined) return true
    settle(l, p)
    p.resolve(receiptOf(p.command, events, part.duplicate))
    return true
  }

  // ---- Frames ---------------------------------------------------------------------------------

  const onError = (l: Link, frame: ErrorFrame): void => {
    const error = errorOfFrame(frame)
    if (frame.error.fatal === true) l.fatal = error
    const related = error.relatedFrameId === undefined ? undefined : l.commands.get(error.relatedFrameId)
    if (related !== undefined) {
      settle(l, related)
      related.reject(error)
      return
    }
    const ping = [...l.pings].find(([, waiting]) => waiting.frameId === error.relatedFrameId)
    if (ping !== undefined) {
      l.pings.delete(ping[0])
      ping[1].reject(error)
      return
    }
    wire.fail(error)
  }

  const onPing = (l: Link, frame: PingFrame): void => {
    if (frame.replyToNonce === undefined) {
      sendFrame(l, { protocolVersion: PROTOCOL_VERSION, frameId: nextFrameId(), frameType: 'PING', nonce: newNonce(random), replyToNonce: frame.nonce, sentAt: now() })
      return
    }
    if (frame.replyToNonce === l.heartbeatNonce) l.heartbeatNonce = undefined
    const waiting = l.pings.get(frame.replyToNonce)
    if (waiting === undefined) return
    l.pings.delete(frame.replyToNonce)
    waiting.resolve()
  }

  const onFrame = (l: Link, frame: WebSocketFrame): void => {
    switch (frame.frameType) {
      case 'EVENT':
        if (!receiptPart(l, frame)) wire.deliver(frame.event)
        return
      case 'ERROR':
        return onError(l, frame)
      case 'PING':
        return onPing(l, frame)
      default:
        // A server sends no HELLO after the handshake, nor SUBSCRIBE, COMMAND or ACK frames.
        l.socket.close(CLOSE_CODES.protocolError, 'unexpected frame from the server')
    }
  }

  // ---- Sockets --------------------------------------------------------------------------------

  /**
   * The subprotocols of the next socket: none for the HELLO handshake, `session.protocols()` (asked
   * again for every socket) for a pre-authenticated session.
   */
  const protocolsOfAttempt = async (): Promise<readonly string[]> => {
    if (session === undefined) return []
    const protocols = await session.protocols()
    if (!Array.isArray(protocols) || protocols.some((p) => typeof p !== 'string')) throw new UsageError('connectWebSocket: session.protocols() must give a list of strings')
    return protocols
  }

  /**
   * One connection attempt: socket, then the HELLO exchange (§6.3) or a pre-authenticated
   * session's first frame. Resolves when the session is open.
   */
  const attempt = async (): Promise<void> => {
    const protocols = await protocolsOfAttempt()
    if (userClosed) throw new TransportUnavailableError('the connection to the Authority is closed')
    return new Promise<void>((resolve, reject) => {
      const clientNonce = newNonce(random)
      let settled = false
      let cause: unknown
      /** The WebSocket upgrade succeeded: a close after it is the server's answer, not an unreachable server. */
      let upgraded = false
      let markClosed!: () => void
      const closed = new Promise<void>((done) => (markClosed = done))
      let socket: WireSocket
      const handlers = {
        open: () => {
          upgraded = true
          // A pre-authenticated session waits for the server's first frame; an Agent starts the handshake.
          if (session === undefined) sendFrame(l, { protocolVersion: PROTOCOL_VERSION, frameId: nextFrameId(), frameType: 'HELLO', phase: 'client_init', agentId, keyId: signingKey!.keyId, clientNonce, supportedVersions: [PROTOCOL_VERSION] })
        },
        message: (data: Uint8Array | string, isBinary: boolean) => {
          const reading = isBinary ? undefined : readFrame(data, maxFrameBytes)
          if (reading === undefined || !reading.ok) {
            // §17.1: a peer that sends something other than one valid frame per message breaks the
            // framing; the socket is dropped (and, when the session was open, reconnected).
            socket.close(isBinary ? CLOSE_CODES.unsupportedData : CLOSE_CODES.protocolError, 'invalid frame from the server')
            return
          }
          if (l.open) onFrame(l, reading.frame)
          else if (session === undefined) hello(reading.frame)
          else first(reading.frame)
        },
        error: (error: unknown) => {
          cause ??= error
        },
        close: (code: number, reason: string) => {
          clearTimeout(timer)
          markClosed()
          if (!settled) {
            settled = true
            const refusal = l.fatal ?? (cause instanceof ProtocolError ? cause : undefined)
            if (refusal !== undefined) return reject(refusal)
            if (cause instanceof TransportUnavailableError) return reject(cause)
            const closedAs = `(${code}${reason.length > 0 ? ` ${reason}` : ''})`
            // The server accepted the socket and closed it without a frame: it did not take the session's credentials.
            if (session !== undefined && upgraded) return reject(new ProtocolError('AUTH_REQUIRED', `the server closed the pre-authenticated session before opening it ${closedAs}`, { details: { closeCode: code } }))
            return reject(new TransportUnavailableError(`the connection closed during the handshake ${closedAs}`, { cause }))
          }
          if (link === l) dropped(l, code, cause)
        },
      }
      try {
        // A pre-authenticated session may be refused at the upgrade; where the platform shows how (Node), say so.
        socket = openSocket({ url: o.url, protocols, ca: o.ca, maxPayload: maxFrameBytes, handshakeTimeoutMs, readRefusals: session !== undefined }, handlers)
      } catch (thrown) {
        // A subprotocol the platform refuses (RFC 6455 token rules), `ca` in a browser: the caller's mistake.
        reject(thrown instanceof Error && !(thrown instanceof UsageError) ? new UsageError(`connectWebSocket: the socket cannot be opened (${thrown.message})`) : thrown)
        return
      }
      const l: Link = { socket, closed, commands: new Map(), byAction: new Map(), receipts: new Map(), pings: new Map(), open: false, fatal: undefined, heartbeat: undefined, heartbeatNonce: undefined }
      const timer = setTimeout(() => {
        cause = new TransportUnavailableError('the handshake timed out')
        socket.terminate()
      }, handshakeTimeoutMs)
      const fail = (error: Error): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        reject(error)
        socket.terminate()
      }
      const open = (): void => {
        settled = true
        clearTimeout(timer)
        l.open = true
        link = l
        resolve()
      }
      const hello = (frame: WebSocketFrame): void => {
        if (frame.frameType === 'ERROR') return fail(errorOfFrame(frame))
        if (frame.frameType !== 'HELLO') return fail(new ProtocolError('PROTOCOL_VIOLATION', `the server sent ${frame.frameType} during the handshake`))
        if (frame.phase === 'server_challenge') return respond(frame)
        if (frame.phase === 'server_accept') return accept(frame)
        fail(new ProtocolError('PROTOCOL_VIOLATION', `the server sent HELLO/${frame.phase}`))
      }
      const respond = (challenge: HelloServerChallengeFrame): void => {
        if (challenge.clientNonce !== clientNonce || challenge.selectedVersion !== PROTOCOL_VERSION) {
          return fail(new ProtocolError('PROTOCOL_VIOLATION', 'the server challenge does not answer this client_init'))
        }
        const key = signingKey!
        const transcript = { agentId, keyId: key.keyId, selectedVersion: challenge.selectedVersion, clientNonce, serverNonce: challenge.serverNonce, challenge: challenge.challenge }
        const reply = (signature: Uint8Array): void => {
          if (settled) return
          const challengeSignature = encodeBase64url(signature)
          sendFrame(l, { protocolVersion: PROTOCOL_VERSION, frameId: nextFrameId(), frameType: 'HELLO', phase: 'client_response', agentId, keyId: key.keyId, clientNonce, serverNonce: challenge.serverNonce, challengeSignature })
        }
        let signature: Uint8Array | PromiseLike<Uint8Array>
        try {
          signature = key.pair.sign(helloTranscriptBytes(transcript))
        } catch (thrown) {
          return fail(thrown instanceof Error ? thrown : new Error(String(thrown)))
        }
        // A WebCrypto key (`webCryptoKeyPair`) signs asynchronously; a synchronous key answers at once.
        if (signature instanceof Uint8Array) return reply(signature)
        Promise.resolve(signature).then(reply, (thrown: unknown) => fail(thrown instanceof Error ? thrown : new Error(String(thrown))))
      }
      const accept = (frame: HelloServerAcceptFrame): void => {
        if (settled) return
        sessionEpoch = frame.sessionEpoch
        open()
      }
      /** A pre-authenticated session's first frame: the server's `PING` opens it, an `ERROR` refuses it. */
      const first = (frame: WebSocketFrame): void => {
        if (settled) return
        if (frame.frameType === 'ERROR') return fail(errorOfFrame(frame))
        if (frame.frameType !== 'PING' || frame.replyToNonce !== undefined) return fail(new ProtocolError('PROTOCOL_VIOLATION', `the server sent ${frame.frameType} before opening the session with a PING`))
        open()
        onPing(l, frame)
      }
    })
  }

  /** The socket of an open session closed: reject what it carried, then reconnect or close. */
  const dropped = (l: Link, code: number, cause: unknown): void => {
    l.open = false
    link = undefined
    clearInterval(l.heartbeat)
    wire.closed()
    const fenced = code === CLOSE_CODES.sessionFenced || l.fatal?.code === 'AUTH_STALE_SESSION'
    if (fenced) terminal = l.fatal ?? new ProtocolError('AUTH_STALE_SESSION', 'a newer session of this Agent fenced this connection (§6.3)', { details: { sessionEpoch } })
    else if (code === CLOSE_CODES.authenticationFailed) terminal = l.fatal ?? new ProtocolError('AUTH_REQUIRED', 'the server ended the session')
    const lost = terminal ?? new TransportUnavailableError('the connection closed before the Authority answered; resend the same bytes to learn the outcome (§15.1)', { cause })
    for (const p of l.commands.values()) p.reject(lost)
    for (const waiting of l.pings.values()) waiting.reject(lost)
    l.commands.clear()
    l.byAction.clear()
    l.pings.clear()
    if (userClosed) return
    if (terminal !== undefined || reconnect === false) return finish(terminal ?? lost)
    setStatus('reconnecting', l.fatal ?? (cause instanceof Error ? cause : lost))
    schedule()
  }

  const finish = (error?: Error): void => {
    for (const p of buffered.splice(0)) p.reject(terminal ?? new TransportUnavailableError('the connection to the Authority is closed'))
    setStatus('closed', error)
  }

  /** Reconnects after the backoff, and not before `notBeforeMs` (a refusal's `retryAfterMs`). */
  const schedule = (notBeforeMs = 0): void => {
    if (reconnect === false || userClosed) return
    const base = Math.min(reconnect.maxDelayMs, reconnect.initialDelayMs * 2 ** Math.min(attempts, 30))
    // Jitter spreads the reconnects of many Agents after a server restart.
    const draw = random(4)
    const delay = Math.max(notBeforeMs, Math.round(base * (0.5 + ((draw[0]! ^ draw[3]!) / 255) * 0.5)))
    attempts++
    retryTimer = setTimeout(() => {
      retryTimer = undefined
      attempt().then(opened, (error: unknown) => {
        if (userClosed) return
        // A refused handshake fails again the same way, unless the refusal says to retry (§19: a
        // RATE_LIMITED HELLO, say, with its retryAfterMs); an unreachable server is retried too.
        if (error instanceof ProtocolError && !error.retryable) {
          terminal = error
          return finish(error)
        }
        if (error instanceof ProtocolError) setStatus('reconnecting', error)
        schedule(error instanceof ProtocolError ? (error.retryAfterMs ?? 0) : 0)
      })
    }, delay)
    unrefTimer(retryTimer)
  }

  /** A session is open (first or after a reconnect): resubscribe, repeat ACKs, send what was buffered. */
  const opened = (): void => {
    if (userClosed) {
      link?.socket.close(1000)
      return
    }
    attempts = 0
    const l = link!
    if (heartbeatMs > 0) {
      l.heartbeat = setInterval(() => {
        // §17.3: the previous PING is still unanswered, so the peer is gone.
        if (l.heartbeatNonce !== undefined) return l.socket.terminate()
        l.heartbeatNonce = newNonce(random)
        sendFrame(l, { protocolVersion: PROTOCOL_VERSION, frameId: nextFrameId(), frameType: 'PING', nonce: l.heartbeatNonce, sentAt: now() })
      }, heartbeatMs)
      unrefTimer(l.heartbeat)
    }
    setStatus('open')
    wire.opened()
    for (const p of buffered.splice(0)) dispatch(l, p)
  }

  await attempt()
  opened()

  return {
    transport,
    feed: wire.feed,
    sessionEpoch: () => sessionEpoch,
    get status() {
      return status
    },
    on(event, listener) {
      if (event !== 'state' || typeof listener !== 'function') throw new UsageError("on: listen to 'state' with a function")
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    ping(presence) {
      return new Promise<void>((resolve, reject) => {
        const l = link
        if (l === undefined || !l.open) return reject(terminal ?? new TransportUnavailableError('the connection to the Authority is down'))
        const nonce = newNonce(random)
        const frameId = nextFrameId()
        l.pings.set(nonce, { frameId, resolve, reject })
        sendFrame(l, { protocolVersion: PROTOCOL_VERSION, frameId, frameType: 'PING', nonce, sentAt: now(), ...(presence === undefined ? {} : { presence }) })
      })
    },
    close() {
      if (closing !== undefined) return closing
      userClosed = true
      clearTimeout(retryTimer)
      const l = link
      closing = new Promise<void>((resolve) => {
        if (l === undefined) return resolve()
        void l.closed.then(resolve)
        l.socket.close(1000, 'client closing')
      }).then(() => {
        if (l !== undefined) dropped(l, 1000, undefined)
        finish()
      })
      return closing
    },
  }
}

/** The {@link Receipt} of `command` from the Events of its receipt frames. */
function receiptOf(command: Readonly<Record<string, unknown>>, events: readonly Event[], duplicate: boolean): Receipt {
  const c = command as unknown as Command
  const first = events[0]!
  return {
    actionId: c.actionId,
    actor: c.actor,
    kind: c.kind as CommandKind,
    ...(c.groupId === undefined ? {} : { groupId: c.groupId }),
    commandHash: first.commandHash ?? signingHash(c),
    events,
    acceptedAt: first.occurredAt,
    duplicate,
  }
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i

function checkOptions(options: WebSocketOptions): WebSocketOptions {
  const { url, actor, signingKey, session, clock, random, reconnect } = options ?? ({} as WebSocketOptions)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError(`connectWebSocket: url must be a ws:// or wss:// URL, got ${String(url)}`)
  }
  // §17.1: the binding is WebSocket over TLS 1.3; plain sockets are for a loopback development server only.
  if (parsed.protocol !== 'wss:' && !(parsed.protocol === 'ws:' && LOOPBACK.test(parsed.hostname))) {
    throw new UsageError(`connectWebSocket: url must be wss:// (ws:// only to a loopback host), got ${url}`)
  }
  if (session !== undefined) {
    if (typeof session?.protocols !== 'function') throw new UsageError('connectWebSocket: session must be { protocols(): string[] | Promise<string[]> }')
    // A session the server authenticated beforehand may be a person's (the console's) or an Agent's.
    if ((actor?.type !== 'agent' && actor?.type !== 'human') || typeof actor.id !== 'string') throw new UsageError('connectWebSocket: with a session, actor must be { type: "human" | "agent", id }')
  } else if (actor?.type !== 'agent' || typeof actor.id !== 'string') {
    throw new UsageError('connectWebSocket: actor must be an Agent { type: "agent", id } (§6.3: the HELLO handshake is an Agent\'s; a human connects with a pre-authenticated session)')
  }
  if (signingKey !== undefined || session === undefined) {
    if (typeof signingKey?.keyId !== 'string' || typeof signingKey.pair?.sign !== 'function') throw new UsageError('connectWebSocket: signingKey must be { keyId, pair } with an Ed25519 key pair (synchronous, or asynchronous such as webCryptoKeyPair)')
  }
  if (clock !== undefined && typeof clock !== 'function') throw new UsageError('connectWebSocket: clock must be a function returning milliseconds')
  if (random !== undefined && typeof random !== 'function') throw new UsageError('connectWebSocket: random must be a function (size) => Uint8Array')
  if (reconnect !== undefined && reconnect !== false) {
    const { initialDelayMs, maxDelayMs } = reconnect
    if (!Number.isSafeInteger(initialDelayMs) || initialDelayMs < 1 || !Number.isSafeInteger(maxDelayMs) || maxDelayMs < initialDelayMs) {
      throw new UsageError('connectWebSocket: reconnect needs integers 1 <= initialDelayMs <= maxDelayMs')
    }
  }
  for (const name of ['bufferWhileDisconnected', 'heartbeatMs'] as const) {
    const value = options[name]
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) throw new UsageError(`connectWebSocket: ${name} must be a non-negative integer`)
  }
  for (const name of ['maxFrameBytes', 'handshakeTimeoutMs'] as const) {
    const value = options[name]
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) throw new UsageError(`connectWebSocket: ${name} must be a positive integer`)
  }
  return options
}

/**
 * Lets Node exit while a retry or heartbeat timer is pending. Browsers return a number from
 * `setTimeout` and have no `unref`, so the call is optional there.
 */
function unrefTimer(timer: unknown): void {
  ;(timer as { unref?: () => void } | undefined)?.unref?.()
}
