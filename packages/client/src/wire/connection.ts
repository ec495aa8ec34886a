/**
 * `connectWebSocket`: one Principal's authenticated connection to a Group Authority over the
 * WebSocket binding (§6.3, §17): an Agent's, opened by the HELLO handshake, or a session the
 * server authenticated before the socket opened (a person signed in to a web console). It gives a
 * {@link Transport} for signed Commands and an {@link EventFeed} for every Group the Principal
 * reads, over one socket (§17.1), and reconnects on its own (an Agent with a new handshake, which
 * opens a new Session Epoch, §6.3). The socket is the platform's (`#socket`: `ws` in Node, the
 * global `WebSocket` in a browser).
 *
 * The parts: the options and their defaults (`options.ts`), one attempt's socket and handshake
 * (`handshake.ts`), what a socket owes its callers (`link.ts`), and the lifecycle the connection
 * moves through, with every transition (`lifecycle.ts`). This module holds the one lifecycle value
 * and performs the effects of each move.
 * @module
 */
import { ProtocolError, UsageError } from '@weft/codec'
import type { ErrorFrame, PingFrame, PresenceRecord, WebSocketFrame } from '@weft/spec'
import type { EventFeed } from '../feed.js'
import { newUrnUuid, timestampOf } from '@weft/codec/time'
import type { Receipt, Transport } from '../sender.js'
import { CLOSE_CODES, errorOfFrame, frameIdSource, newNonce, PROTOCOL_VERSION } from './frames.js'
import { openLink, type SessionHooks } from './handshake.js'
import { advance, currentLink, endingOf, reconnectDelayMs, terminalError, unrefTimer, type Lifecycle, type LifecycleInput } from './lifecycle.js'
import { commandFrameText, failAll, sendFrame, takePong, takeReceiptPart, takeRefusal, trackCommand, type Link, type PendingCommand } from './link.js'
import { settingsOf, type PreAuthenticatedSession, type WebSocketOptions } from './options.js'
import { createWireFeed } from './subscriptions.js'
import { TransportUnavailableError } from './transport-error.js'

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
  const settings = settingsOf(options)
  const { clock, random, reconnect, heartbeatMs, bufferLimit } = settings
  const now = (): string => timestampOf(clock.now())
  const nextFrameId = frameIdSource(random)

  let state: Lifecycle = { phase: 'connecting' }
  /** The status listeners were last told; it follows {@link state} at the points where the connection reports it. */
  let reported: ConnectionStatus = 'connecting'
  let sessionEpoch = 0
  let closing: Promise<void> | undefined
  const buffered: PendingCommand[] = []
  const listeners = new Set<(state: ConnectionState) => void>()

  const move = (input: LifecycleInput): Lifecycle => {
    const from = state
    state = advance(state, input)
    return from
  }

  const report = (next: ConnectionStatus, error?: Error): void => {
    reported = next
    const change: ConnectionState = { status: next, sessionEpoch, ...(error === undefined ? {} : { error }) }
    for (const listener of [...listeners]) {
      try {
        listener(change)
      } catch {
        // A listener's failure does not change the connection.
      }
    }
  }

  const wire = createWireFeed({
    send(build) {
      const link = currentLink(state)
      if (link === undefined) return undefined
      const frameId = nextFrameId()
      return sendFrame(link, build(frameId)) ? frameId : undefined
    },
    now,
    newId: () => newUrnUuid(random),
  })

  // ---- Commands -------------------------------------------------------------------------------

  const dispatch = (l: Link, p: PendingCommand): void => {
    const frameId = nextFrameId()
    // The signed bytes go on the wire as they are.
    if (!sendFrame(l, commandFrameText(frameId, p.bytes))) return p.reject(new TransportUnavailableError('the connection to the Authority is down'))
    trackCommand(l, p, frameId)
  }

  const transport: Transport = {
    submit(command, bytes) {
      return new Promise<Receipt>((resolve, reject) => {
        if (typeof bytes !== 'string' || typeof command?.['actionId'] !== 'string') {
          reject(new UsageError('submit: pass the signed Command and its exact JSON text'))
          return
        }
        const p: PendingCommand = { command, bytes, actionId: command['actionId'], resolve, reject }
        const terminal = terminalError(state)
        if (terminal !== undefined) return reject(terminal)
        const link = currentLink(state)
        if (link !== undefined) return dispatch(link, p)
        if (reported !== 'closed' && buffered.length < bufferLimit) {
          buffered.push(p)
          return
        }
        reject(new TransportUnavailableError(reported === 'closed' ? 'the connection to the Authority is closed' : 'the connection to the Authority is down; the Command was not sent'))
      })
    },
  }

  // ---- Frames of an open session --------------------------------------------------------------

  const onError = (l: Link, frame: ErrorFrame): void => {
    const error = errorOfFrame(frame)
    if (frame.error.fatal === true) l.fatal = error
    if (!takeRefusal(l, error)) wire.fail(error)
  }

  const onPing = (l: Link, frame: PingFrame): void => {
    if (frame.replyToNonce === undefined) {
      sendFrame(l, { protocolVersion: PROTOCOL_VERSION, frameId: nextFrameId(), frameType: 'PING', nonce: newNonce(random), replyToNonce: frame.nonce, sentAt: now() })
      return
    }
    takePong(l, frame.replyToNonce)
  }

  const onFrame = (l: Link, frame: WebSocketFrame): void => {
    switch (frame.frameType) {
      case 'EVENT':
        if (!takeReceiptPart(l, frame)) wire.deliver(frame.event)
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

  // ---- The lifecycle's effects ----------------------------------------------------------------

  /** Every buffered Command rejects, and listeners hear that the connection closed. */
  const finish = (error?: Error): void => {
    for (const p of buffered.splice(0)) p.reject(terminalError(state) ?? new TransportUnavailableError('the connection to the Authority is closed'))
    report('closed', error)
  }

  /** A session is open (first or after a reconnect): keep it alive, resubscribe, repeat ACKs, send what was buffered. */
  const sessionOpened = (l: Link): void => {
    // An attempt that finished after close() was not taken: its socket is closed at once.
    if (state.phase !== 'open' || state.link !== l) {
      l.socket.close(1000)
      return
    }
    if (heartbeatMs > 0) {
      l.heartbeat = setInterval(() => {
        // §17.3: the previous PING is still unanswered, so the peer is gone.
        if (l.heartbeatNonce !== undefined) return l.socket.terminate()
        l.heartbeatNonce = newNonce(random)
        sendFrame(l, { protocolVersion: PROTOCOL_VERSION, frameId: nextFrameId(), frameType: 'PING', nonce: l.heartbeatNonce, sentAt: now() })
      }, heartbeatMs)
      unrefTimer(l.heartbeat)
    }
    report('open')
    wire.opened()
    for (const p of buffered.splice(0)) dispatch(l, p)
  }

  /** The socket of the current session closed: reject what it carried, then reconnect or close. */
  const socketClosed = (l: Link, code: number, cause: unknown): void => {
    if (currentLink(state) !== l) return
    const terminal = endingOf(code, l.fatal, sessionEpoch)
    const from = move({ on: 'socket-closed', link: l, terminal, reconnect: reconnect !== false })
    clearInterval(l.heartbeat)
    wire.closed()
    const lost = terminal ?? new TransportUnavailableError('the connection closed before the Authority answered; resend the same bytes to learn the outcome (§15.1)', { cause })
    failAll(l, lost)
    // close() reports the close itself, once the socket is gone.
    if (from.phase === 'closing') return
    if (state.phase === 'closed') return finish(terminal ?? lost)
    report('reconnecting', l.fatal ?? (cause instanceof Error ? cause : lost))
    scheduleRetry()
  }

  /** Waits out the backoff, and not less than `notBeforeMs` (a refusal's `retryAfterMs`), then makes the next attempt. */
  const scheduleRetry = (notBeforeMs = 0): void => {
    if (state.phase !== 'reconnecting' || reconnect === false) return
    const delay = reconnectDelayMs(reconnect, state.attempts, random, notBeforeMs)
    const timer = setTimeout(() => {
      move({ on: 'retry-due' })
      openLink(attemptSettings, hooks).then(sessionOpened, attemptFailed)
    }, delay)
    unrefTimer(timer)
    move({ on: 'retry-scheduled', timer })
  }

  const attemptFailed = (error: unknown): void => {
    // close() was called meanwhile: nothing more to do.
    if (state.phase !== 'reconnecting') return
    // A refused handshake fails again the same way, unless the refusal says to retry (§19: a
    // RATE_LIMITED HELLO, say, with its retryAfterMs); an unreachable server is retried too.
    if (error instanceof ProtocolError && !error.retryable) {
      move({ on: 'attempt-refused', error })
      return finish(error)
    }
    if (error instanceof ProtocolError) report('reconnecting', error)
    scheduleRetry(error instanceof ProtocolError ? (error.retryAfterMs ?? 0) : 0)
  }

  const hooks: SessionHooks = {
    opened(l, epoch) {
      if (epoch !== undefined) sessionEpoch = epoch
      move({ on: 'session-opened', link: l })
    },
    frame: onFrame,
    closed: socketClosed,
    wanted: () => state.phase === 'connecting' || state.phase === 'reconnecting',
  }
  const attemptSettings = { ...settings, agentId: settings.actor.id, nextFrameId }

  sessionOpened(await openLink(attemptSettings, hooks))

  return {
    transport,
    feed: wire.feed,
    sessionEpoch: () => sessionEpoch,
    get status() {
      return reported
    },
    on(event, listener) {
      if (event !== 'state' || typeof listener !== 'function') throw new UsageError("on: listen to 'state' with a function")
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    ping(presence) {
      return new Promise<void>((resolve, reject) => {
        const l = currentLink(state)
        if (l === undefined) return reject(terminalError(state) ?? new TransportUnavailableError('the connection to the Authority is down'))
        const nonce = newNonce(random)
        const frameId = nextFrameId()
        l.pings.set(nonce, { frameId, resolve, reject })
        sendFrame(l, { protocolVersion: PROTOCOL_VERSION, frameId, frameType: 'PING', nonce, sentAt: now(), ...(presence === undefined ? {} : { presence }) })
      })
    },
    close() {
      if (closing !== undefined) return closing
      if (state.phase === 'backing-off') clearTimeout(state.timer)
      move({ on: 'close-requested' })
      const l = state.phase === 'closing' ? state.link : undefined
      closing = new Promise<void>((resolve) => {
        if (l === undefined) return resolve()
        void l.closed.then(resolve)
        l.socket.close(1000, 'client closing')
      }).then(() => {
        // The socket's close normally reached socketClosed already; if not, it is taken as closed here.
        if (l !== undefined) socketClosed(l, 1000, undefined)
        finish()
      })
      return closing
    },
  }
}
