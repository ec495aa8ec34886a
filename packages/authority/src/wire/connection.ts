/**
 * One server-side connection of the WebSocket binding (§6.3, §16, §17): the HELLO challenge
 * handshake, then `SUBSCRIBE`, `COMMAND`, `ACK` and `PING` frames of one authenticated Agent.
 *
 * Only a broken WebSocket framing (§17.1) or a failed, fenced or expired session (§6.3) ends the
 * connection: a binary or oversized message, anything but a valid handshake before the session is
 * open, a newer Session Epoch of the Agent, the session's expiry. Everything else, including malformed JSON, duplicate member names,
 * an unknown frame type and every refused Command, is answered with an `ERROR` frame and the
 * connection goes on.
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
import type { Delivery, Subscription } from '../delivery.js'
import type { ActorRef } from '../model.js'
import type { WireAuthority, WireLogEntry } from './server.js'

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
  readonly agentId: string | undefined
  readonly sessionEpoch: number | undefined
  readonly open: boolean
  readonly groupIds: readonly string[]
  /** A newer Session Epoch of the same Agent exists (§6.3): refuse everything and close. */
  fence(currentEpoch: number): void
  /** Closes for a server shutdown. */
  shutdown(): void
  /** Drops the socket without a close handshake. */
  terminate(): void
}

type Phase = 'awaiting_init' | 'awaiting_response' | 'opening' | 'open' | 'closed'

/** One subscribed Group of the connection, with its unacknowledged window (§17.3). */
interface Channel {
  readonly groupId: string
  subscription: Subscription | undefined
  /** Sequences sent in `EVENT` frames and not yet covered by an `ACK`, oldest first. */
  readonly unacked: number[]
  /** Paused by this connection because the window is full. */
  paused: boolean
}

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
 * one at a time in arrival order, so answers leave in the order their frames came.
 */
export function serveConnection(socket: WebSocket, ctx: ConnectionContext, id: string): ServerConnection {
  const nextFrameId = frameIdSource(ctx.random)
  let phase: Phase = 'awaiting_init'
  let init: HelloClientInitFrame | undefined
  let serverNonce = ''
  let challenge = ''
  let agent: ActorRef | undefined
  let sessionEpoch: number | undefined
  let expiresAtMs = Number.POSITIVE_INFINITY
  let receiptSerial = 0
  const channels = new Map<string, Channel>()
  let chain: Promise<void> = Promise.resolve()
  const now = (): string => timestampOf(ctx.clock.now())

  const log = (level: WireLogEntry['level'], message: string, code?: string): void =>
    ctx.log({ level, message, connectionId: id, ...(agent === undefined ? {} : { agentId: agent.id }), ...(code === undefined ? {} : { code }) })

  const send = (text: string): void => {
    if (socket.readyState === socket.OPEN) socket.send(text)
  }
  const sendError = (error: ProtocolError, options: ErrorFrameOptions = {}): void => {
    send(JSON.stringify(errorFrame(error, nextFrameId(), now(), options)))
  }

  /** Ends the connection: the `ERROR` frame (marked fatal), then the close. */
  const fatal = (error: ProtocolError, closeCode: number, options: ErrorFrameOptions = {}): void => {
    if (phase === 'closed') return
    log('warn', `closing: ${error.message}`, error.code)
    sendError(error, { ...options, fatal: true })
    end()
    socket.close(closeCode, error.code)
  }

  const end = (): void => {
    if (phase === 'closed') return
    phase = 'closed'
    clearTimeout(handshakeTimer)
    clearTimeout(idleTimer)
    for (const channel of channels.values()) channel.subscription?.close()
    channels.clear()
    ctx.forget(connection)
  }

  const handshakeTimer = setTimeout(() => {
    if (phase !== 'open') fatal(new ProtocolError('AUTH_REQUIRED', 'The handshake did not complete in time.'), CLOSE_CODES.authenticationFailed)
  }, ctx.handshakeTimeoutMs)
  handshakeTimer.unref?.()
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
    agent = { type: 'agent', id: response.agentId }
    sessionEpoch = epoch
    expiresAtMs = ctx.clock.now() + ctx.sessionTtlMs
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
    const signature = decodeBase64url(response.challengeSignature)
    const transcript = helloTranscriptBytes({ agentId: response.agentId, keyId: response.keyId, selectedVersion: PROTOCOL_VERSION, clientNonce: response.clientNonce, serverNonce, challenge })
    if (signature === undefined || !verifyEd25519(resolved.key.publicKey, transcript, signature)) return 'signature does not verify'
    return undefined
  }

  // ---- Session frames -----------------------------------------------------------------------------

  const sessionFrame = async (frame: WebSocketFrame): Promise<void> => {
    if (ctx.clock.now() >= expiresAtMs) {
      return fatal(new ProtocolError('AUTH_REQUIRED', 'The session expired; open a new one.'), CLOSE_CODES.sessionExpired, { relatedFrameId: frame.frameId })
    }
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
      channels.get(group.groupId)?.subscription?.close()
      const channel: Channel = { groupId: group.groupId, subscription: undefined, unacked: [], paused: false }
      channels.set(group.groupId, channel)
      try {
        channel.subscription = ctx.delivery.subscribe(agent!, [group], {
          onEvent: (event, subscription) => deliver(channel, event, subscription),
          onError: (error) => channelError(channel, error),
        })
      } catch (thrown) {
        if (channels.get(group.groupId) === channel) channels.delete(group.groupId)
        // §17.2: GROUP_NOT_FOUND reads the same for an absent and a hidden Group.
        sendError(ProtocolError.from(thrown), { relatedFrameId: frame.frameId, groupId: group.groupId })
      }
    }
  }

  const deliver = (channel: Channel, event: Event, subscription: Subscription): void => {
    if (phase !== 'open' || channels.get(channel.groupId) !== channel) return subscription.close()
    send(`{"protocolVersion":"${PROTOCOL_VERSION}","frameId":"${nextFrameId()}","frameType":"EVENT","event":${eventJson(event)}}`)
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
    // The delivery's own buffer filled while the Group was already paused here: the Agent knows.
    if (error.code === 'BACKPRESSURE' && channel.paused) return
    if (error.code === 'GROUP_NOT_FOUND') channels.delete(channel.groupId)
    sendError(error, { groupId: channel.groupId })
  }

  const command = async ({ frameId, command }: CommandFrame): Promise<void> => {
    const related = { relatedFrameId: frameId, relatedActionId: command.actionId }
    // §17.1: one connection is one Agent's; it carries no other Principal's Commands.
    if (command.actor.type !== 'agent' || command.actor.id !== agent!.id) {
      return sendError(new ProtocolError('AUTH_FORBIDDEN', "This connection carries only its own Agent's Commands."), related)
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
    if (error.code !== 'AUTH_STALE_SESSION') return error
    const current = ctx.authority.state.org.agents.get(agent!.id)?.sessionEpoch
    const details = { ...error.details, ...(current === undefined ? {} : { currentSessionEpoch: current }), ...(commandEpoch === undefined ? {} : { commandSessionEpoch: commandEpoch }) }
    return error.with({ retryable: false, details })
  }

  const ack = (frame: AckFrame): void => {
    try {
      ctx.delivery.ack(agent!, frame.acknowledgements)
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
      if (channel.paused && channel.unacked.length <= ctx.maxUnackedPerGroup / 2) {
        channel.paused = false
        channel.subscription?.resume(groupId)
      }
    }
  }

  const ping = (frame: PingFrame): void => {
    const { presence } = frame
    if (presence !== undefined) {
      // §6.2: a Presence Record rides on the authenticated session; it speaks for this Agent and session only.
      if (presence.agentId !== agent!.id) return sendError(new ProtocolError('AUTH_FORBIDDEN', 'A Presence Record may only describe the connected Agent.'), { relatedFrameId: frame.frameId })
      if (presence.sessionEpoch !== sessionEpoch) return sendError(new ProtocolError('AUTH_STALE_SESSION', 'The Presence Record names another Session Epoch.', { details: { currentSessionEpoch: sessionEpoch } }), { relatedFrameId: frame.frameId })
      ctx.presence.set(agent!.id, presence)
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
      // Before authentication nothing malformed is tolerated; in a session the message is refused alone.
      if (phase !== 'open') return fatal(reading.error, reading.error.code === 'UNSUPPORTED_VERSION' ? CLOSE_CODES.authenticationFailed : CLOSE_CODES.protocolError)
      return sendError(reading.error)
    }
    // Frames are handled one at a time, so none arrives here while a session is being opened.
    return phase === 'open' ? sessionFrame(reading.frame) : handshakeFrame(reading.frame)
  }

  socket.on('message', (data, isBinary) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)
    chain = chain
      .then(() => receive(bytes, isBinary))
      .catch((thrown: unknown) => {
        log('error', `internal failure: ${thrown instanceof Error ? thrown.message : String(thrown)}`, 'INTERNAL_ERROR')
        if (phase === 'open') sendError(ProtocolError.from(thrown))
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
      return agent?.id ?? init?.agentId
    },
    get sessionEpoch() {
      return sessionEpoch
    },
    get open() {
      return phase === 'open'
    },
    get groupIds() {
      return [...channels.keys()]
    },
    fence(currentEpoch) {
      if (phase !== 'open' || sessionEpoch === undefined || sessionEpoch >= currentEpoch) return
      // §4.4, §6.3: two runtimes never operate one Agent; the older session ends here.
      fatal(new ProtocolError('AUTH_STALE_SESSION', 'A newer session of this Agent fenced this one.', { details: { sessionEpoch, currentSessionEpoch: currentEpoch } }), CLOSE_CODES.sessionFenced)
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
  return connection
}
