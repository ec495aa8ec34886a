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
 * `outbox.ts`; inbound, the socket is not read while a frame's worth of messages waits, and the
 * connections take turns reading.
 * @module
 */
import { decodeBase64url, parseTimestamp, ProtocolError, verifyEd25519, withinInterval, type KeyResolver } from '@weft/codec'
import {
  CLOSE_CODES,
  errorFrame,
  frameIdSource,
  helloTranscriptBytes,
  newNonce,
  PROTOCOL_VERSION,
  readFrame,
  receiptFrameId,
  type ErrorFrameOptions,
} from '@weft/client/wire'
import type { AckFrame, CommandFrame, Event, HelloClientInitFrame, HelloClientResponseFrame, PingFrame, PresenceRecord, SubscribeFrame, WebSocketFrame } from '@weft/spec'
import type { WebSocket } from 'ws'
import { timestampOf, type Clock, type RandomSource } from '../clock.js'
import type { Delivery, Subscription } from '../delivery/delivery.js'
import { boundedError } from '../ingress/bounded.js'
import type { ActorRef } from '../model.js'
import { keyEndedBy } from '../ingress/standing.js'
import { createOutbox, type OverflowReason } from './outbox.js'
import type { AdmittedHuman } from './human-sessions.js'
import type { WireAuthority, WireLogEntry } from './types.js'

/** What every connection of a server shares. */
export interface ConnectionContext {
  readonly authority: WireAuthority
  readonly delivery: Delivery
  readonly registry: KeyResolver
  readonly clock: Clock
  readonly random: RandomSource
  readonly maxFrameBytes: number
  readonly maxUnackedPerGroup: number
  readonly retryAfterMs: number
  readonly handshakeTimeoutMs: number
  readonly idleTimeoutMs: number
  readonly sessionTtlMs: number
  /** Bytes one connection may hold for its peer (§17.3 bounded buffering; see `outbox.ts`). */
  readonly maxOutboundBytes: number
  /** Frames a connection may send per second, with bursts of as many; 0: no limit. */
  readonly maxFramesPerSecond: number
  /** Milliseconds a connection's socket may take nothing while frames wait for it; 0: no limit. */
  readonly sendTimeoutMs: number
  /** Outbound counters of the server: the most bytes a closed connection held, and the connections closed for `BACKPRESSURE`. */
  readonly outbound: { peak: number; peakInbound: number; backpressureCloses: number }
  /** Opens the next Session Epoch of `agentId` through the Authority (§6.3) and returns it. */
  openSession(agentId: string): Promise<number>
  readonly presence: Map<string, PresenceRecord>
  log(entry: WireLogEntry): void
  /** The connection ended; the server forgets it. */
  forget(connection: ServerConnection): void
}

/** A connection as the server sees it. */
export interface ServerConnection {
  readonly id: string
  /** The Agent (once it sent `client_init`); `undefined` for a person. */
  readonly agentId: string | undefined
  /** Who the connection speaks for: the Agent once it sent `client_init`, or the admitted person. */
  readonly principal: ActorRef | undefined
  /** The console session a person's connection was admitted with; `undefined` for an Agent. */
  readonly humanSessionId: string | undefined
  readonly sessionEpoch: number | undefined
  readonly open: boolean
  readonly groupIds: readonly string[]
  /** Bytes held for the peer: written to the socket and not yet sent, plus queued answers. */
  readonly outboundBytes: number
  /** The most bytes ever held for the peer at once. */
  readonly peakOutboundBytes: number
  /** The most bytes of received messages ever waiting at once to be handled. */
  readonly peakInboundBytes: number
  /** A newer Session Epoch of the same Agent exists (§6.3): refuse everything and close. */
  fence(currentEpoch: number): void
  /** The key the Agent authenticated with, once it sent `client_init`, or the one the person signed in with. */
  readonly keyId: string | undefined
  /**
   * The Agent or person may no longer hold this session (§6.1 a card not active, §6.4 a key past
   * its boundary, a sign-out): `error` goes out as a fatal `ERROR` and the connection closes, an
   * Agent's as a fenced one (4409), a person's as an ended one (4401: signing in again is needed).
   */
  revoke(error: ProtocolError): void
  /** Ends a person's session whose expiry passed by the server's clock; Agents' sessions end at their next frame. */
  closeIfExpired(): void
  /** Closes for a server shutdown. */
  shutdown(): void
  /** Drops the socket without a close handshake. */
  terminate(): void
}

type Phase = 'awaiting_init' | 'awaiting_response' | 'opening' | 'open' | 'closed'

/**
 * Whom an open connection serves. An Agent holds the Session Epoch its handshake opened (§6.3); a
 * person was admitted before the upgrade and holds none (human Commands carry no Session Epoch, and
 * the server must not invent one), only the console session that admitted them.
 */
type Session =
  | { readonly kind: 'agent'; readonly actor: ActorRef; readonly sessionEpoch: number; readonly expiresAtMs: number }
  | { readonly kind: 'human'; readonly actor: ActorRef; readonly keyId: string; readonly sessionId: string; readonly expiresAtMs: number }

/** One subscribed Group of the connection, with its unacknowledged window (§17.3). */
interface Channel {
  readonly groupId: string
  subscription: Subscription | undefined
  /** Sequences sent in `EVENT` frames and not yet covered by an `ACK`, oldest first. */
  readonly unacked: number[]
  /** Paused by this connection because the window is full. */
  paused: boolean
}

/**
 * Thrown from a delivery handler for an Event that finds the socket full: the delivery keeps the
 * Event and pauses its Group (see `SubscriptionHandlers.onEvent`) until the socket drains.
 */
const SOCKET_FULL = new Error('the socket is full')

/** Bytes of messages a connection may read per turn of the event loop when others are waiting too (fairness between connections). */
const TURN_SHARE_BYTES = 16 * 1024

/** How long a closing connection whose socket is paused (its peer sends faster than it is read) waits before it drops the socket. */
const PAUSED_CLOSE_GRACE_MS = 1000

/** How long a connection closed for `BACKPRESSURE` waits for its peer's close frame before it drops the socket. */
const OVERFLOW_CLOSE_GRACE_MS = 5000

/** Every Event's frame text is built once, however many subscribers it goes to. */
const eventText = new WeakMap<Event, string>()

function eventJson(event: Event): string {
  let text = eventText.get(event)
  if (text === undefined) eventText.set(event, (text = JSON.stringify(event)))
  return text
}

/** The generic answer to a failed handshake: which check failed stays in the log (§6.4 stage diagnostics are never sent). */
const HANDSHAKE_REFUSED = 'The handshake response does not verify.'

/**
 * Takes over an accepted socket: runs the handshake, then serves the session. Frames are handled
 * one at a time in arrival order, so answers leave in the order their frames came. With `human`
 * (a person the server admitted at the upgrade), the session is open at once and its first frame
 * is a server `PING`, which tells the console it was accepted.
 */
export function serveConnection(socket: WebSocket, ctx: ConnectionContext, id: string, human?: AdmittedHuman): ServerConnection {
  const nextFrameId = frameIdSource(ctx.random)
  let phase: Phase = 'awaiting_init'
  let init: HelloClientInitFrame | undefined
  let serverNonce = ''
  let challenge = ''
  /** Set when the session opens, never cleared: whom the connection serves. */
  let session: Session | undefined
  let receiptSerial = 0
  const channels = new Map<string, Channel>()
  let chain: Promise<void> = Promise.resolve()
  const now = (): string => timestampOf(ctx.clock.now())

  const log = (level: WireLogEntry['level'], message: string, code?: string): void =>
    ctx.log({ level, message, connectionId: id, ...(session?.kind === 'agent' ? { agentId: session.actor.id } : {}), ...(code === undefined ? {} : { code }) })

  /** Groups paused because their next Event found the socket full, in the order they should flow again. */
  const blocked = new Set<Channel>()
  const outbox = createOutbox(socket, { maxBytes: ctx.maxOutboundBytes, sendTimeoutMs: ctx.sendTimeoutMs, onDrain: () => unblock(), onOverflow: (reason) => overflow(reason) })
  /** Every frame but an Event goes out through the outbox, so it counts against the connection's bound. */
  const send = (text: string): void => outbox.answer(text)
  const sendError = (error: ProtocolError, options: ErrorFrameOptions = {}): void => {
    send(JSON.stringify(errorFrame(error, nextFrameId(), now(), options)))
  }

  /** Ends the connection: the `ERROR` frame (marked fatal), then the close. */
  const fatal = (error: ProtocolError, closeCode: number, options: ErrorFrameOptions = {}): void => {
    if (phase === 'closed') return
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
      reason === 'outbound-queue-full' ? { reason, retryAfterMs: ctx.retryAfterMs, maxOutboundBytes: ctx.maxOutboundBytes } : { reason, retryAfterMs: ctx.retryAfterMs, sendTimeoutMs: ctx.sendTimeoutMs }
    ctx.outbound.backpressureCloses++
    const message = reason === 'outbound-queue-full' ? `More than ${ctx.maxOutboundBytes} bytes wait for this connection, which is not reading them.` : `The connection took nothing for ${ctx.sendTimeoutMs} ms.`
    fatal(new ProtocolError('BACKPRESSURE', message, { retryAfterMs: ctx.retryAfterMs, details }), CLOSE_CODES.tryAgainLater)
    // A peer that does not read will not answer the close either: its socket is dropped after a
    // grace in which one that reads again still gets the close, rather than ws's 30 s.
    setTimeout(() => socket.terminate(), OVERFLOW_CLOSE_GRACE_MS).unref()
  }

  /** The socket drained: paused Groups flow again, the longest waiting first, until it fills again. */
  const unblock = (): void => {
    for (const channel of [...blocked]) {
      if (!outbox.writable) return
      blocked.delete(channel)
      if (!channel.paused && channels.get(channel.groupId) === channel) channel.subscription?.resume(channel.groupId)
    }
  }

  const end = (): void => {
    if (phase === 'closed') return
    phase = 'closed'
    clearTimeout(handshakeTimer)
    clearTimeout(idleTimer)
    clearTimeout(tokenTimer)
    clearTimeout(expiryTimer)
    // The close handshake needs the peer's close frame, which a socket paused for flow control
    // does not read: reading it again would parse all the flood still queued behind it, so such a
    // socket is cut after a grace instead (the peer has the close frame by then).
    if (socket.isPaused) setTimeout(() => socket.terminate(), PAUSED_CLOSE_GRACE_MS).unref()
    for (const channel of channels.values()) channel.subscription?.close()
    channels.clear()
    blocked.clear()
    outbox.close()
    ctx.forget(connection)
  }

  // A quarter of the time is left to chance: connections a flood opened together do not all time
  // out (and come back) in the same turn of the event loop.
  // A person admitted at the upgrade has no handshake to time out.
  const handshakeTimer =
    human === undefined
      ? setTimeout(() => {
          if (phase !== 'open') fatal(new ProtocolError('AUTH_REQUIRED', 'The handshake did not complete in time.'), CLOSE_CODES.authenticationFailed)
        }, ctx.handshakeTimeoutMs * (0.75 + ctx.random(1)[0]! / 1020))
      : undefined
  handshakeTimer?.unref?.()
  /** Closes a person's session at its expiry, idle or not (the server's sweep also checks it, for clocks that jump). */
  let expiryTimer: ReturnType<typeof setTimeout> | undefined
  const watchExpiry = (): void => {
    if (phase !== 'open' || session === undefined) return
    const left = session.expiresAtMs - ctx.clock.now()
    if (left <= 0) return expire()
    expiryTimer = setTimeout(watchExpiry, Math.min(left, 2 ** 31 - 1))
    expiryTimer.unref?.()
  }
  // §17.3: liveness comes from the peer's frames (its PINGs); a silent peer is gone.
  const idleTimer = setTimeout(() => {
    if (phase === 'closed') return
    log('info', 'closing an idle connection')
    end()
    socket.close(CLOSE_CODES.goingAway, 'idle')
  }, ctx.idleTimeoutMs > 0 ? ctx.idleTimeoutMs : 2 ** 31 - 1)
  idleTimer.unref?.()

  // ---- Handshake (§6.3) -------------------------------------------------------------------------

  const handshakeFrame = async (frame: WebSocketFrame): Promise<void> => {
    const hello = frame.frameType === 'HELLO' ? frame : undefined
    if (phase === 'awaiting_init' && hello?.phase === 'client_init') return challengeAgent(hello)
    if (phase === 'awaiting_response' && hello?.phase === 'client_response') return verifyResponse(hello)
    const error =
      hello === undefined
        ? new ProtocolError('AUTH_REQUIRED', `A ${frame.frameType} frame needs an authenticated session; start with HELLO/client_init.`, { relatedFrameId: frame.frameId })
        : new ProtocolError('PROTOCOL_VIOLATION', `HELLO/${hello.phase} is out of order.`, { relatedFrameId: frame.frameId })
    fatal(error, CLOSE_CODES.authenticationFailed)
  }

  const challengeAgent = (hello: HelloClientInitFrame): void => {
    // `readFrame` already refused a client_init without version 0.1 (UNSUPPORTED_VERSION). The
    // Agent and key are checked only against the signed response, so an unauthenticated peer
    // learns nothing about which Agents or keys exist.
    init = hello
    serverNonce = newNonce(ctx.random)
    challenge = newNonce(ctx.random)
    phase = 'awaiting_response'
    send(JSON.stringify({ protocolVersion: PROTOCOL_VERSION, frameId: nextFrameId(), frameType: 'HELLO', phase: 'server_challenge', selectedVersion: PROTOCOL_VERSION, clientNonce: hello.clientNonce, serverNonce, challenge }))
  }

  const verifyResponse = async (response: HelloClientResponseFrame): Promise<void> => {
    const refusal = responseRefusal(response)
    if (refusal !== undefined) {
      log('warn', `handshake refused: ${refusal}`, 'AUTH_INVALID_SIGNATURE')
      return fatal(new ProtocolError('AUTH_INVALID_SIGNATURE', HANDSHAKE_REFUSED, { relatedFrameId: response.frameId }), CLOSE_CODES.authenticationFailed)
    }
    phase = 'opening'
    let epoch: number
    try {
      epoch = await ctx.openSession(response.agentId)
    } catch (thrown) {
      const error = ProtocolError.from(thrown)
      log('warn', `session_open refused: ${error.message}`, error.code)
      // An unregistered or inactive Agent may not hold a session; the Authority's reason stays in its audit.
      // A HELLO rate limit (§20) concerns this authenticated Agent alone, so it learns it and when to retry.
      const answer = error.code === 'INTERNAL_ERROR' || error.code === 'RATE_LIMITED' ? error : new ProtocolError('AUTH_FORBIDDEN', 'The Agent may not open a session.')
      return fatal(answer, CLOSE_CODES.authenticationFailed, { relatedFrameId: response.frameId })
    }
    if (phase !== 'opening') return
    const expiresAtMs = ctx.clock.now() + ctx.sessionTtlMs
    session = { kind: 'agent', actor: { type: 'agent', id: response.agentId }, sessionEpoch: epoch, expiresAtMs }
    phase = 'open'
    clearTimeout(handshakeTimer)
    log('info', `session ${epoch} open`)
    send(
      JSON.stringify({
        protocolVersion: PROTOCOL_VERSION,
        frameId: nextFrameId(),
        frameType: 'HELLO',
        phase: 'server_accept',
        selectedVersion: PROTOCOL_VERSION,
        sessionToken: newNonce(ctx.random),
        sessionEpoch: epoch,
        expiresAt: timestampOf(expiresAtMs),
      }),
    )
  }

  /** Why `response` does not authenticate its Agent, or `undefined` when it does. */
  const responseRefusal = (response: HelloClientResponseFrame): string | undefined => {
    const first = init!
    // A response answers exactly this connection's challenge: one replayed from another connection carries another server nonce.
    if (response.serverNonce !== serverNonce) return 'server nonce of another challenge'
    if (response.agentId !== first.agentId || response.keyId !== first.keyId || response.clientNonce !== first.clientNonce) return 'response does not match client_init'
    const resolved = ctx.registry.resolve(response.keyId)
    if (!resolved.ok) return `key: ${resolved.reason}`
    const { principal } = resolved.key
    if (principal.type !== 'agent' || principal.id !== response.agentId) return 'key is not bound to this Agent'
    const at = parseTimestamp(now())
    if (at === undefined || !withinInterval(at, resolved.key)) return 'key is not valid now'
    // §6.4: the boundaries the Agent's registered cards state hold too, registered since this server loaded its Registry or not.
    const ended = keyEndedBy(ctx.authority.state.org.agents.get(response.agentId), response.keyId, at)
    if (ended !== undefined) return `key is not valid now (${ended.reason})`
    const signature = decodeBase64url(response.challengeSignature)
    const transcript = helloTranscriptBytes({ agentId: response.agentId, keyId: response.keyId, selectedVersion: PROTOCOL_VERSION, clientNonce: response.clientNonce, serverNonce, challenge })
    if (signature === undefined || !verifyEd25519(resolved.key.publicKey, transcript, signature)) return 'signature does not verify'
    return undefined
  }

  // ---- Session frames -----------------------------------------------------------------------------

  /** The session's time is over: a fatal `AUTH_REQUIRED`, close 4408 (a new session may be opened). */
  const expire = (relatedFrameId?: string): void =>
    fatal(new ProtocolError('AUTH_REQUIRED', 'The session expired; open a new one.'), CLOSE_CODES.sessionExpired, relatedFrameId === undefined ? {} : { relatedFrameId })

  const sessionFrame = async (frame: WebSocketFrame): Promise<void> => {
    if (ctx.clock.now() >= session!.expiresAtMs) return expire(frame.frameId)
    switch (frame.frameType) {
      case 'SUBSCRIBE':
        return subscribe(frame)
      case 'COMMAND':
        return command(frame)
      case 'ACK':
        return ack(frame)
      case 'PING':
        return ping(frame)
      case 'HELLO':
        return sendError(new ProtocolError('PROTOCOL_VIOLATION', 'The handshake is complete; HELLO frames are not accepted in a session.'), { relatedFrameId: frame.frameId })
      case 'EVENT':
        return sendError(new ProtocolError('PROTOCOL_VIOLATION', 'EVENT frames flow from the server; publish facts with a COMMAND.'), { relatedFrameId: frame.frameId })
      case 'ERROR':
        // An error is never answered with an error; it is only logged.
        return log('info', `client reported ${frame.error.code}: ${frame.error.message}`, frame.error.code)
    }
  }

  const subscribe = (frame: SubscribeFrame): void => {
    // Each Group gets its own delivery subscription: one refused Group does not hold back the
    // others, and each pauses and resumes alone (§17.3).
    for (const group of frame.groups) {
      // A SUBSCRIBE of a Group replaces its subscription: the replay still to come restarts from
      // the new position, and nothing of the old one is written (its Events were never queued here).
      const replaced = channels.get(group.groupId)
      replaced?.subscription?.close()
      if (replaced !== undefined) blocked.delete(replaced)
      const channel: Channel = { groupId: group.groupId, subscription: undefined, unacked: [], paused: false }
      channels.set(group.groupId, channel)
      try {
        // §17.3: behind a full socket the replay is not even read from the log until it drains.
        const full = !outbox.writable
        channel.subscription = ctx.delivery.subscribe(
          session!.actor,
          [group],
          { onEvent: (event, subscription) => deliver(channel, event, subscription), onError: (error) => channelError(channel, error) },
          { paused: full },
        )
        if (full) {
          blocked.add(channel)
          outbox.wait()
        }
      } catch (thrown) {
        if (channels.get(group.groupId) === channel) channels.delete(group.groupId)
        // §17.2: GROUP_NOT_FOUND reads the same for an absent and a hidden Group.
        sendError(ProtocolError.from(thrown), { relatedFrameId: frame.frameId, groupId: group.groupId })
      }
    }
  }

  const deliver = (channel: Channel, event: Event, subscription: Subscription): void => {
    if (phase !== 'open' || channels.get(channel.groupId) !== channel) return subscription.close()
    // §17.3: an Event is written only while the socket drains; otherwise it stays in the delivery,
    // which pauses the Group with the Event undelivered until `unblock` resumes it.
    if (!outbox.writable) {
      outbox.wait()
      blocked.add(channel)
      throw SOCKET_FULL
    }
    outbox.event(`{"protocolVersion":"${PROTOCOL_VERSION}","frameId":"${nextFrameId()}","frameType":"EVENT","event":${eventJson(event)}}`)
    channel.unacked.push(event.sequence ?? 0)
    if (channel.paused || channel.unacked.length < ctx.maxUnackedPerGroup) return
    // §17.3: bounded buffering per Group. This Group pauses until the Agent's ACKs catch up;
    // other Groups of the connection keep flowing.
    channel.paused = true
    subscription.pause(channel.groupId)
    const details = { retryAfterMs: ctx.retryAfterMs, afterSequence: event.sequence ?? 0, unacknowledged: channel.unacked.length, resumesAfterAck: true }
    sendError(new ProtocolError('BACKPRESSURE', 'Too many unacknowledged Events in this Group; it resumes once they are acknowledged.', { details }), { groupId: channel.groupId })
  }

  const channelError = (channel: Channel, error: ProtocolError): void => {
    if (channels.get(channel.groupId) !== channel) return
    // The delivery's own buffer filled while the Group was paused here: the Agent knows of a full
    // window, and a full socket is not its to know; the delivery reads the dropped Events back from the log.
    if (error.code === 'BACKPRESSURE' && (channel.paused || blocked.has(channel))) return
    if (error.code === 'GROUP_NOT_FOUND') {
      channels.delete(channel.groupId)
      blocked.delete(channel)
    }
    sendError(error, { groupId: channel.groupId })
  }

  const command = async ({ frameId, command }: CommandFrame): Promise<void> => {
    const related = { relatedFrameId: frameId, relatedActionId: command.actionId }
    // §17.1: one connection is one Agent's, or one person's; it carries no other Principal's Commands.
    const { actor } = session!
    if (command.actor.type !== actor.type || command.actor.id !== actor.id) {
      const whose = actor.type === 'agent' ? "its own Agent's" : "its own person's"
      return sendError(new ProtocolError('AUTH_FORBIDDEN', `This connection carries only ${whose} Commands.`), related)
    }
    let receipt
    try {
      receipt = await ctx.authority.submit(JSON.stringify(command))
    } catch (thrown) {
      return sendError(withCurrentEpoch(ProtocolError.from(thrown), command.sessionEpoch), related)
    }
    // §17.1 has no receipt frame: the receipt is the transaction's Events, each in an EVENT frame
    // whose frame ID places it in the receipt (see `receiptFrameId`).
    const serial = String(++receiptSerial)
    const count = receipt.events.length
    receipt.events.forEach((event, index) => {
      send(`{"protocolVersion":"${PROTOCOL_VERSION}","frameId":"${receiptFrameId({ serial, index, count, duplicate: receipt.duplicate })}","frameType":"EVENT","event":${eventJson(event)}}`)
    })
  }

  /** §19: a stale fencing error is answered with the current epoch, so the sender rebuilds rather than retries. */
  const withCurrentEpoch = (error: ProtocolError, commandEpoch: number | undefined): ProtocolError => {
    // A person has no Session Epoch to tell (§6.3), so their refusals go out as the Authority wrote them.
    if (error.code !== 'AUTH_STALE_SESSION' || session?.kind !== 'agent') return error
    const current = ctx.authority.state.org.agents.get(session.actor.id)?.sessionEpoch
    const details = { ...error.details, ...(current === undefined ? {} : { currentSessionEpoch: current }), ...(commandEpoch === undefined ? {} : { commandSessionEpoch: commandEpoch }) }
    return error.with({ retryable: false, details })
  }

  const ack = (frame: AckFrame): void => {
    try {
      ctx.delivery.ack(session!.actor, frame.acknowledgements)
    } catch (thrown) {
      const only = frame.acknowledgements.length === 1 ? frame.acknowledgements[0]!.groupId : undefined
      return sendError(ProtocolError.from(thrown), { relatedFrameId: frame.frameId, groupId: only })
    }
    for (const { groupId, sequence } of frame.acknowledgements) {
      const channel = channels.get(groupId)
      if (channel === undefined) continue
      let covered = 0
      while (covered < channel.unacked.length && channel.unacked[covered]! <= sequence) covered++
      channel.unacked.splice(0, covered)
      // Resume at half the window, so a Group does not flap between paused and live on every ACK.
      // The window counts only Events written to this socket: an ACK of sequences never written
      // (beyond them, up to the head) releases nothing more, and a full socket still holds the Group.
      if (channel.paused && channel.unacked.length <= ctx.maxUnackedPerGroup / 2) {
        channel.paused = false
        if (!blocked.has(channel)) channel.subscription?.resume(groupId)
      }
    }
  }

  const ping = (frame: PingFrame): void => {
    const { presence } = frame
    if (presence !== undefined) {
      const current = session!
      // §6.2: Presence is an Agent's (its execution slots, its capabilities); a person's session reports none.
      if (current.kind !== 'agent') return sendError(new ProtocolError('AUTH_FORBIDDEN', "A Presence Record describes an Agent; a person's session carries none."), { relatedFrameId: frame.frameId })
      // §6.2: a Presence Record rides on the authenticated session; it speaks for this Agent and session only.
      if (presence.agentId !== current.actor.id) return sendError(new ProtocolError('AUTH_FORBIDDEN', 'A Presence Record may only describe the connected Agent.'), { relatedFrameId: frame.frameId })
      if (presence.sessionEpoch !== current.sessionEpoch) {
        return sendError(new ProtocolError('AUTH_STALE_SESSION', 'The Presence Record names another Session Epoch.', { details: { currentSessionEpoch: current.sessionEpoch } }), { relatedFrameId: frame.frameId })
      }
      ctx.presence.set(current.actor.id, presence)
    }
    // A reply to a server PING needs no answer.
    if (frame.replyToNonce !== undefined) return
    send(JSON.stringify({ protocolVersion: PROTOCOL_VERSION, frameId: nextFrameId(), frameType: 'PING', nonce: newNonce(ctx.random), replyToNonce: frame.nonce, sentAt: now() }))
  }

  // ---- Messages -------------------------------------------------------------------------------------

  const receive = async (data: Buffer, isBinary: boolean): Promise<void> => {
    if (phase === 'closed') return
    idleTimer.refresh()
    // §17.1: binary messages carry no protocol objects; a peer sending one breaks the framing.
    if (isBinary) return fatal(new ProtocolError('PROTOCOL_VIOLATION', 'Binary messages carry no MissionWeaveProtocol objects.', { details: { reason: 'binary-message' } }), CLOSE_CODES.unsupportedData)
    if (data.byteLength > ctx.maxFrameBytes) {
      return fatal(new ProtocolError('PROTOCOL_VIOLATION', `The message exceeds ${ctx.maxFrameBytes} bytes.`, { details: { reason: 'too-large', maxFrameBytes: ctx.maxFrameBytes } }), CLOSE_CODES.tooLarge)
    }
    const reading = readFrame(data, ctx.maxFrameBytes)
    if (!reading.ok) {
      // The issues' JSON Pointers hold the sender's member names: bounded, never echoed whole (§19).
      const error = boundedError(reading.error)
      // Before authentication nothing malformed is tolerated; in a session the message is refused alone.
      if (phase !== 'open') return fatal(error, error.code === 'UNSUPPORTED_VERSION' ? CLOSE_CODES.authenticationFailed : CLOSE_CODES.protocolError)
      return sendError(error)
    }
    // Frames are handled one at a time, so none arrives here while a session is being opened.
    return phase === 'open' ? sessionFrame(reading.frame) : handshakeFrame(reading.frame)
  }

  // §17.3 bounded buffering, inbound. The socket is not read while more than a frame's worth of
  // messages waits to be handled (Commands wait on the store), so TCP holds the peer back. And the
  // connections take turns (deficit round robin): each turn of the event loop gives a connection
  // one share of bytes to read, and one that read more waits for as many turns as it overdrew, so
  // a flood (PINGs, megabyte frames) on one connection delays the frames of the others by about
  // one share, while an idle server turns quickly and lets it go on.
  /** Bytes of received messages not yet handled, and the most ever. */
  let inbound = 0
  let peakInbound = 0
  /** Bytes this connection may still read in this turn; below zero, the turns it owes. */
  let credit = TURN_SHARE_BYTES
  let refilling = false
  // The frame allowance (a token bucket of `maxFramesPerSecond`, as full as that at first): a
  // peer over it is read no further until it refills, which bounds what a flood of small frames
  // (PINGs, ACKs) costs however fast the peer writes. Refilled by the monotonic clock, as timers run.
  const frameRate = ctx.maxFramesPerSecond
  let frameTokens = frameRate
  let tokensAt = performance.now()
  let tokenTimer: ReturnType<typeof setTimeout> | undefined
  const refreshTokens = (): void => {
    const at = performance.now()
    frameTokens = Math.min(frameRate, frameTokens + ((at - tokensAt) * frameRate) / 1000)
    tokensAt = at
  }
  const readAgain = (): void => {
    if (!socket.isPaused || credit <= 0 || inbound > ctx.maxFrameBytes / 2) return
    if (frameRate > 0) {
      refreshTokens()
      if (frameTokens < 1) return waitForTokens()
    }
    socket.resume()
  }
  /** Resolves at `due` (by `performance.now()`), or at once when the connection closed meanwhile. */
  const untilDue = (due: number): Promise<void> =>
    new Promise((resolve) => {
      const wait = due - performance.now()
      if (wait <= 0 || phase === 'closed') return resolve()
      setTimeout(resolve, Math.ceil(wait)).unref?.()
    })
  const waitForTokens = (): void => {
    if (tokenTimer !== undefined || phase === 'closed') return
    tokenTimer = setTimeout(
      () => {
        tokenTimer = undefined
        readAgain()
      },
      Math.ceil(((1 - frameTokens) * 1000) / frameRate),
    )
    tokenTimer.unref?.()
  }
  const refill = (): void => {
    credit = Math.min(TURN_SHARE_BYTES, credit + TURN_SHARE_BYTES)
    readAgain()
    if (credit < TURN_SHARE_BYTES) setImmediate(refill)
    else refilling = false
  }
  socket.on('message', (data, isBinary) => {
    // What a closed connection's peer still sends is not read (it may flood until the close completes).
    if (phase === 'closed') return
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)
    inbound += bytes.byteLength
    peakInbound = Math.max(peakInbound, inbound)
    credit -= bytes.byteLength
    if (!refilling) {
      refilling = true
      setImmediate(refill)
    }
    if (frameRate > 0) {
      refreshTokens()
      frameTokens -= 1
    }
    const overRate = frameRate > 0 && frameTokens < 1
    if (credit <= 0 || inbound > ctx.maxFrameBytes || overRate) socket.pause()
    if (overRate) waitForTokens()
    // A frame beyond the allowance (one TCP read can hold hundreds of PINGs, all parsed before the
    // pause takes effect) waits its turn before it is handled; one within it adds no step.
    const due = frameTokens < 0 ? tokensAt + (-frameTokens * 1000) / frameRate : 0
    const ready = due === 0 ? chain : chain.then(() => untilDue(due))
    chain = ready
      .then(() => receive(bytes, isBinary))
      .catch((thrown: unknown) => {
        log('error', `internal failure: ${thrown instanceof Error ? thrown.message : String(thrown)}`, 'INTERNAL_ERROR')
        if (phase === 'open') sendError(ProtocolError.from(thrown))
      })
      .then(() => {
        inbound -= bytes.byteLength
        readAgain()
      })
  })
  socket.on('close', (code) => {
    if (phase !== 'closed') log('info', `closed by the peer (${code})`)
    end()
  })
  socket.on('error', (error) => log('warn', `socket error: ${error.message}`))

  const connection: ServerConnection = {
    id,
    get agentId() {
      return session === undefined ? init?.agentId : session.kind === 'agent' ? session.actor.id : undefined
    },
    get principal(): ActorRef | undefined {
      return session?.actor ?? (init === undefined ? undefined : { type: 'agent', id: init.agentId })
    },
    get humanSessionId() {
      return session?.kind === 'human' ? session.sessionId : undefined
    },
    get sessionEpoch() {
      return session?.kind === 'agent' ? session.sessionEpoch : undefined
    },
    get open() {
      return phase === 'open'
    },
    get groupIds() {
      return [...channels.keys()]
    },
    get outboundBytes() {
      return outbox.bytes
    },
    get peakOutboundBytes() {
      return outbox.peak
    },
    get peakInboundBytes() {
      return peakInbound
    },
    fence(currentEpoch) {
      if (phase !== 'open' || session?.kind !== 'agent' || session.sessionEpoch >= currentEpoch) return
      // §4.4, §6.3: two runtimes never operate one Agent; the older session ends here.
      fatal(new ProtocolError('AUTH_STALE_SESSION', 'A newer session of this Agent fenced this one.', { details: { sessionEpoch: session.sessionEpoch, currentSessionEpoch: currentEpoch } }), CLOSE_CODES.sessionFenced)
    },
    get keyId() {
      return session?.kind === 'human' ? session.keyId : init?.keyId
    },
    revoke(error) {
      if (phase !== 'open') return
      // §6.3: an Agent's runtime must stop, as a fenced one does; its client does not reconnect after
      // 4409. A person signs in again: 4401 says the same credentials will not do.
      fatal(error, session?.kind === 'human' ? CLOSE_CODES.authenticationFailed : CLOSE_CODES.sessionFenced)
    },
    closeIfExpired() {
      if (phase === 'open' && session?.kind === 'human' && ctx.clock.now() >= session.expiresAtMs) expire()
    },
    shutdown() {
      if (phase === 'closed') return
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
    session = { kind: 'human', actor: { type: 'human', id: admitted.principal.id }, keyId: admitted.keyId, sessionId: admitted.sessionId, expiresAtMs: admitted.expiresAtMs }
    phase = 'open'
    log('info', `human session open for ${admitted.principal.id}`)
    send(JSON.stringify({ protocolVersion: PROTOCOL_VERSION, frameId: nextFrameId(), frameType: 'PING', nonce: newNonce(ctx.random), sentAt: now() }))
    watchExpiry()
  }
}
