/**
 * One server-side connection of the WebSocket binding (§6.3, §16, §17): the HELLO challenge
 * handshake, then `SUBSCRIBE`, `COMMAND`, `ACK` and `PING` frames of one authenticated Agent; or,
 * for a person the server admitted at the upgrade (§5 human interface, `human-sessions.ts`), the
 * same frames without a handshake and without a Session Epoch.
 *
 * Only a broken WebSocket framing (§17.1), a failed, fenced or expired session (§6.3) or a peer that
 * does not read (§17.3) ends the connection: a binary or oversized message, anything but a valid
 * handshake before the session is open, a newer Session Epoch of the Agent, the session's expiry,
 * answers piling up past the outbound bound. Everything else, including malformed JSON, duplicate member names,
 * an unknown frame type and every refused Command, is answered with an `ERROR` frame and the
 * connection goes on. What the connection buffers is bounded both ways (§17.3): outbound see
 * `outbox.ts`; inbound see `inbound.ts`.
 *
 * This module holds the connection's one lifecycle value (`lifecycle.ts`: every transition in one
 * pure function) and performs its effects: timers, the close, the socket. The handshake
 * (`handshake.ts`), the session's frames (`session-frames.ts`) and its subscribed Groups
 * (`channels.ts`) act through a {@link ConnectionLink}.
 * @module
 */
import { ProtocolError } from '@weft/codec'
import { CLOSE_CODES, errorFrame, frameIdSource, newNonce, PROTOCOL_VERSION, readFrame, type ErrorFrameOptions } from '@weft/client/wire'
import type { WebSocket } from 'ws'
import { timestampOf } from '@weft/codec/time'
import { boundedError } from '../ingress/bounded.js'
import type { ActorRef } from '../model.js'
import { createChannels } from './channels.js'
import { createHandshake } from './handshake.js'
import type { AdmittedHuman } from './human-sessions.js'
import { readInbound } from './inbound.js'
import { INITIAL_LIFECYCLE, initOf, sessionOf, transition, type ConnectionLifecycle, type LifecycleInput } from './lifecycle.js'
import type { ConnectionLink } from './link.js'
import { createOutbox, type OverflowReason } from './outbox.js'
import { createSessionFrames } from './session-frames.js'
import type { ConnectionContext, ServerConnection, WireLogEntry } from './types.js'

/** How long a closing connection whose socket is paused (its peer sends faster than it is read) waits before it drops the socket. */
const PAUSED_CLOSE_GRACE_MS = 1000

/** How long a connection closed for `BACKPRESSURE` waits for its peer's close frame before it drops the socket. */
const OVERFLOW_CLOSE_GRACE_MS = 5000

/**
 * Takes over an accepted socket: runs the handshake, then serves the session. Frames are handled
 * one at a time in arrival order, so answers leave in the order their frames came. With `human`
 * (a person the server admitted at the upgrade), the session is open at once and its first frame
 * is a server `PING`, which tells the console it was accepted.
 */
export function serveConnection(socket: WebSocket, ctx: ConnectionContext, id: string, human?: AdmittedHuman): ServerConnection {
  const nextFrameId = frameIdSource(ctx.random)
  let state: ConnectionLifecycle = INITIAL_LIFECYCLE
  const now = (): string => timestampOf(ctx.clock.now())

  const log = (level: WireLogEntry['level'], message: string, code?: string): void => {
    const session = sessionOf(state)
    ctx.log({ level, message, connectionId: id, ...(session?.kind === 'agent' ? { agentId: session.actor.id } : {}), ...(code === undefined ? {} : { code }) })
  }

  const outbox = createOutbox(socket, { maxBytes: ctx.maxOutboundBytes, sendTimeoutMs: ctx.sendTimeoutMs, onDrain: () => channels.unblock(), onOverflow: (reason) => overflow(reason) })
  /** Every frame but an Event goes out through the outbox, so it counts against the connection's bound. */
  const send = (text: string): void => outbox.answer(text)
  const sendError = (error: ProtocolError, options: ErrorFrameOptions = {}): void => {
    send(JSON.stringify(errorFrame(error, nextFrameId(), now(), options)))
  }

  /** Moves the lifecycle; a session that opens ends the handshake's timer. */
  const advance = (input: LifecycleInput): ConnectionLifecycle => {
    const before = state
    state = transition(state, input)
    if (state !== before && state.phase === 'open') clearTimeout(handshakeTimer)
    return state
  }

  /** Ends the connection: the `ERROR` frame (marked fatal), then the close. */
  const fatal = (error: ProtocolError, closeCode: number, options: ErrorFrameOptions = {}): void => {
    if (state.phase === 'closed') return
    log('warn', `closing: ${error.message}`, error.code)
    // What waits goes out first, unless waiting is why the connection ends: its peer is not reading.
    outbox.last(JSON.stringify(errorFrame(error, nextFrameId(), now(), { ...options, fatal: true })), error.code === 'BACKPRESSURE')
    end()
    socket.close(closeCode, error.code)
  }

  /**
   * §17.3: the connection cannot keep its bound, because its peer does not read what it asked for.
   * It learns why and when to come back, and the connection closes with 1013 (try again later).
   */
  const overflow = (reason: OverflowReason): void => {
    const details =
      reason === 'outbound-queue-full'
        ? { reason, retryAfterMs: ctx.retryAfterMs, maxOutboundBytes: ctx.maxOutboundBytes }
        : { reason, retryAfterMs: ctx.retryAfterMs, sendTimeoutMs: ctx.sendTimeoutMs }
    ctx.outbound.backpressureCloses++
    const message =
      reason === 'outbound-queue-full' ? `More than ${ctx.maxOutboundBytes} bytes wait for this connection, which is not reading them.` : `The connection took nothing for ${ctx.sendTimeoutMs} ms.`
    fatal(new ProtocolError('BACKPRESSURE', message, { retryAfterMs: ctx.retryAfterMs, details }), CLOSE_CODES.tryAgainLater)
    // A peer that does not read will not answer the close either: its socket is dropped after a
    // grace in which one that reads again still gets the close, rather than ws's 30 s.
    setTimeout(() => socket.terminate(), OVERFLOW_CLOSE_GRACE_MS).unref()
  }

  const end = (): void => {
    if (state.phase === 'closed') return
    advance({ on: 'ended' })
    clearTimeout(handshakeTimer)
    clearTimeout(idleTimer)
    inbound.close()
    clearTimeout(expiryTimer)
    // The close handshake needs the peer's close frame, which a socket paused for flow control
    // does not read: reading it again would parse all the flood still queued behind it, so such a
    // socket is cut after a grace instead (the peer has the close frame by then).
    if (socket.isPaused) setTimeout(() => socket.terminate(), PAUSED_CLOSE_GRACE_MS).unref()
    channels.close()
    outbox.close()
    ctx.forget(connection)
  }

  // ---- Timers -------------------------------------------------------------------------------------

  // A quarter of the time is left to chance: connections a flood opened together do not all time
  // out (and come back) in the same turn of the event loop.
  // A person admitted at the upgrade has no handshake to time out.
  const handshakeTimer =
    human === undefined
      ? setTimeout(
          () => {
            if (state.phase !== 'open') fatal(new ProtocolError('AUTH_REQUIRED', 'The handshake did not complete in time.'), CLOSE_CODES.authenticationFailed)
          },
          ctx.handshakeTimeoutMs * (0.75 + ctx.random(1)[0]! / 1020),
        )
      : undefined
  handshakeTimer?.unref?.()
  /** Closes a person's session at its expiry, idle or not (the server's sweep also checks it, for clocks that jump). */
  let expiryTimer: ReturnType<typeof setTimeout> | undefined
  const watchExpiry = (): void => {
    if (state.phase !== 'open') return
    const left = state.session.expiresAtMs - ctx.clock.now()
    if (left <= 0) return expire()
    expiryTimer = setTimeout(watchExpiry, Math.min(left, 2 ** 31 - 1))
    expiryTimer.unref?.()
  }
  // §17.3: liveness comes from the peer's frames (its PINGs); a silent peer is gone.
  const idleTimer = setTimeout(
    () => {
      if (state.phase === 'closed') return
      log('info', 'closing an idle connection')
      end()
      socket.close(CLOSE_CODES.goingAway, 'idle')
    },
    ctx.idleTimeoutMs > 0 ? ctx.idleTimeoutMs : 2 ** 31 - 1,
  )
  idleTimer.unref?.()

  /** The session's time is over: a fatal `AUTH_REQUIRED`, close 4408 (a new session may be opened). */
  const expire = (relatedFrameId?: string): void =>
    fatal(new ProtocolError('AUTH_REQUIRED', 'The session expired; open a new one.'), CLOSE_CODES.sessionExpired, relatedFrameId === undefined ? {} : { relatedFrameId })

  // ---- Frames -------------------------------------------------------------------------------------

  const link: ConnectionLink = { ctx, lifecycle: () => state, advance, nextFrameId, now, log, send, sendError, fatal, expire }
  const channels = createChannels(link, outbox)
  const handshakeFrame = createHandshake(link)
  const sessionFrame = createSessionFrames(link, channels)

  const receive = async (data: Buffer, isBinary: boolean): Promise<void> => {
    if (state.phase === 'closed') return
    idleTimer.refresh()
    // §17.1: binary messages carry no protocol objects; a peer sending one breaks the framing.
    if (isBinary)
      return fatal(new ProtocolError('PROTOCOL_VIOLATION', 'Binary messages carry no MissionWeaveProtocol objects.', { details: { reason: 'binary-message' } }), CLOSE_CODES.unsupportedData)
    if (data.byteLength > ctx.maxFrameBytes) {
      return fatal(
        new ProtocolError('PROTOCOL_VIOLATION', `The message exceeds ${ctx.maxFrameBytes} bytes.`, { details: { reason: 'too-large', maxFrameBytes: ctx.maxFrameBytes } }),
        CLOSE_CODES.tooLarge,
      )
    }
    const reading = readFrame(data, ctx.maxFrameBytes)
    if (!reading.ok) {
      // The issues' JSON Pointers hold the sender's member names: bounded, never echoed whole (§19).
      const error = boundedError(reading.error)
      // Before authentication nothing malformed is tolerated; in a session the message is refused alone.
      if (state.phase !== 'open') return fatal(error, error.code === 'UNSUPPORTED_VERSION' ? CLOSE_CODES.authenticationFailed : CLOSE_CODES.protocolError)
      return sendError(error)
    }
    // Frames are handled one at a time, so none arrives here while a session is being opened.
    return state.phase === 'open' ? sessionFrame(reading.frame) : handshakeFrame(reading.frame)
  }

  const inbound = readInbound(socket, {
    maxFrameBytes: ctx.maxFrameBytes,
    maxFramesPerSecond: ctx.maxFramesPerSecond,
    closed: () => state.phase === 'closed',
    receive,
    failed: (thrown) => {
      log('error', `internal failure: ${thrown instanceof Error ? thrown.message : String(thrown)}`, 'INTERNAL_ERROR')
      if (state.phase === 'open') sendError(ProtocolError.from(thrown))
    },
  })
  socket.on('close', (code) => {
    if (state.phase !== 'closed') log('info', `closed by the peer (${code})`)
    end()
  })
  socket.on('error', (error) => log('warn', `socket error: ${error.message}`))

  const connection: ServerConnection = {
    id,
    get agentId() {
      const session = sessionOf(state)
      return session === undefined ? initOf(state)?.agentId : session.kind === 'agent' ? session.actor.id : undefined
    },
    get principal(): ActorRef | undefined {
      const init = initOf(state)
      return sessionOf(state)?.actor ?? (init === undefined ? undefined : { type: 'agent', id: init.agentId })
    },
    get humanSessionId() {
      const session = sessionOf(state)
      return session?.kind === 'human' ? session.sessionId : undefined
    },
    get sessionEpoch() {
      const session = sessionOf(state)
      return session?.kind === 'agent' ? session.sessionEpoch : undefined
    },
    get open() {
      return state.phase === 'open'
    },
    get groupIds() {
      return channels.groupIds
    },
    get outboundBytes() {
      return outbox.bytes
    },
    get peakOutboundBytes() {
      return outbox.peak
    },
    get peakInboundBytes() {
      return inbound.peak
    },
    fence(currentEpoch) {
      if (state.phase !== 'open' || state.session.kind !== 'agent' || state.session.sessionEpoch >= currentEpoch) return
      // §4.4, §6.3: two runtimes never operate one Agent; the older session ends here.
      fatal(
        new ProtocolError('AUTH_STALE_SESSION', 'A newer session of this Agent fenced this one.', { details: { sessionEpoch: state.session.sessionEpoch, currentSessionEpoch: currentEpoch } }),
        CLOSE_CODES.sessionFenced,
      )
    },
    get keyId() {
      const session = sessionOf(state)
      return session?.kind === 'human' ? session.keyId : initOf(state)?.keyId
    },
    revoke(error) {
      if (state.phase !== 'open') return
      // §6.3: an Agent's runtime must stop, as a fenced one does; its client does not reconnect after
      // 4409. A person signs in again: 4401 says the same credentials will not do.
      fatal(error, state.session.kind === 'human' ? CLOSE_CODES.authenticationFailed : CLOSE_CODES.sessionFenced)
    },
    closeIfExpired() {
      if (state.phase === 'open' && state.session.kind === 'human' && ctx.clock.now() >= state.session.expiresAtMs) expire()
    },
    shutdown() {
      if (state.phase === 'closed') return
      end()
      socket.close(CLOSE_CODES.goingAway, 'server shutting down')
    },
    terminate() {
      end()
      socket.terminate()
    },
  }
  if (human !== undefined) openHumanSession(human)
  return connection

  /**
   * §5 human interface: the person proved who they are when they signed in, before the upgrade, so
   * the session is open at once; its first frame, a server `PING`, tells the console so. No
   * `session_open` is submitted and no Session Epoch exists (§6.3).
   */
  function openHumanSession(admitted: AdmittedHuman): void {
    advance({ on: 'human-admitted', human: admitted })
    log('info', `human session open for ${admitted.principal.id}`)
    send(JSON.stringify({ protocolVersion: PROTOCOL_VERSION, frameId: nextFrameId(), frameType: 'PING', nonce: newNonce(ctx.random), sentAt: now() }))
    watchExpiry()
  }
}
