/**
 * One connection attempt of `connectWebSocket`: open a socket, then authenticate on it, either by
 * the HELLO challenge handshake of an Agent (§6.3: the Agent signs the canonical transcript of the
 * server's challenge) or, for a session the server authenticated before the socket opened, by
 * waiting for the server's first frame (its `PING` opens the session, an `ERROR` refuses it).
 *
 * An attempt goes through {@link AttemptStage}s; once its session is open the socket's frames and
 * its close are the connection's ({@link SessionHooks}).
 * @module
 */
import { encodeBase64url, ProtocolError, UsageError, type AsyncSigningKey, type SigningKey } from '@weft/codec'
import type { HelloServerAcceptFrame, HelloServerChallengeFrame, WebSocketFrame } from '@weft/spec'
import { openSocket } from '#socket'
import type { RandomSource } from '@weft/codec/time'
import { CLOSE_CODES, errorOfFrame, helloTranscriptBytes, newNonce, PROTOCOL_VERSION, readFrame } from './frames.js'
import { createLink, sendFrame, type Link } from './link.js'
import type { PreAuthenticatedSession } from './options.js'
import type { WireSocket } from './socket.js'
import { TransportUnavailableError } from './transport-error.js'

/** What an attempt needs of the connection's settings. */
export interface AttemptSettings {
  readonly url: string
  readonly ca: string | Uint8Array | readonly (string | Uint8Array)[] | undefined
  /** The Agent that signs the HELLO transcript (unused by a pre-authenticated session). */
  readonly agentId: string
  /** Present unless `session` is. */
  readonly signingKey: SigningKey | AsyncSigningKey | undefined
  readonly session: PreAuthenticatedSession | undefined
  readonly maxFrameBytes: number
  readonly handshakeTimeoutMs: number
  readonly random: RandomSource
  /** The connection's frame IDs, shared with every socket it opens. */
  readonly nextFrameId: () => string
}

/** What the connection does with a socket whose session is open. */
export interface SessionHooks {
  /**
   * The attempt's session opened: called at once, before any later frame of the socket is read.
   * `sessionEpoch` is the one the server issued (§6.3), absent for a pre-authenticated session.
   */
  opened(link: Link, sessionEpoch: number | undefined): void
  /** A frame of the open session. */
  frame(link: Link, frame: WebSocketFrame): void
  /** The socket of the open session closed; `cause` is what the socket reported before, if anything. */
  closed(link: Link, code: number, cause: unknown): void
  /** Whether the connection still wants this attempt (it does until `close()` is called). */
  wanted(): boolean
}

/**
 * Where an attempt stands: the WebSocket upgrade under way, then the handshake on the upgraded
 * socket, then settled: `open` (the socket's frames are the session's) or `failed`.
 */
export type AttemptStage = 'upgrading' | 'handshaking' | 'open' | 'failed'

/**
 * Makes one attempt: resolves with the link once its session is open ({@link SessionHooks.opened}
 * has run by then); rejects with the server's `ProtocolError` when it refused the handshake, or
 * with a {@link TransportUnavailableError} when the server could not be reached or the attempt
 * timed out.
 */
export async function openLink(settings: AttemptSettings, hooks: SessionHooks): Promise<Link> {
  const { session, signingKey, agentId, random, nextFrameId } = settings
  const protocols = await protocolsOfAttempt(session)
  if (!hooks.wanted()) throw new TransportUnavailableError('the connection to the Authority is closed')
  return new Promise<Link>((resolve, reject) => {
    const clientNonce = newNonce(random)
    let stage: AttemptStage = 'upgrading'
    const settled = (): boolean => stage === 'open' || stage === 'failed'
    let cause: unknown
    let markClosed!: () => void
    const closed = new Promise<void>((done) => (markClosed = done))
    let socket: WireSocket
    const handlers = {
      open: () => {
        // The WebSocket upgrade succeeded: a close after it is the server's answer, not an unreachable server.
        if (stage === 'upgrading') stage = 'handshaking'
        // A pre-authenticated session waits for the server's first frame; an Agent starts the handshake.
        if (session === undefined)
          sendFrame(l, {
            protocolVersion: PROTOCOL_VERSION,
            frameId: nextFrameId(),
            frameType: 'HELLO',
            phase: 'client_init',
            agentId,
            keyId: signingKey!.keyId,
            clientNonce,
            supportedVersions: [PROTOCOL_VERSION],
          })
      },
      message: (data: Uint8Array | string, isBinary: boolean) => {
        const reading = isBinary ? undefined : readFrame(data, settings.maxFrameBytes)
        if (reading === undefined || !reading.ok) {
          // §17.1: a peer that sends something other than one valid frame per message breaks the
          // framing; the socket is dropped (and, when the session was open, reconnected).
          socket.close(isBinary ? CLOSE_CODES.unsupportedData : CLOSE_CODES.protocolError, 'invalid frame from the server')
          return
        }
        if (stage === 'open') hooks.frame(l, reading.frame)
        else if (session === undefined) hello(reading.frame)
        else first(reading.frame)
      },
      error: (error: unknown) => {
        cause ??= error
      },
      close: (code: number, reason: string) => {
        clearTimeout(timer)
        markClosed()
        if (stage === 'open') return hooks.closed(l, code, cause)
        if (stage === 'failed') return
        const upgraded = stage === 'handshaking'
        stage = 'failed'
        if (cause instanceof ProtocolError) return reject(cause)
        if (cause instanceof TransportUnavailableError) return reject(cause)
        const closedAs = `(${code}${reason.length > 0 ? ` ${reason}` : ''})`
        // The server accepted the socket and closed it without a frame: it did not take the session's credentials.
        if (session !== undefined && upgraded)
          return reject(new ProtocolError('AUTH_REQUIRED', `the server closed the pre-authenticated session before opening it ${closedAs}`, { details: { closeCode: code } }))
        return reject(new TransportUnavailableError(`the connection closed during the handshake ${closedAs}`, { cause }))
      },
    }
    try {
      // A pre-authenticated session may be refused at the upgrade; where the platform shows how (Node), say so.
      socket = openSocket(
        { url: settings.url, protocols, ca: settings.ca, maxPayload: settings.maxFrameBytes, handshakeTimeoutMs: settings.handshakeTimeoutMs, readRefusals: session !== undefined },
        handlers,
      )
    } catch (thrown) {
      // A subprotocol the platform refuses (RFC 6455 token rules), `ca` in a browser: the caller's mistake.
      reject(thrown instanceof Error && !(thrown instanceof UsageError) ? new UsageError(`connectWebSocket: the socket cannot be opened (${thrown.message})`) : thrown)
      return
    }
    const l = createLink(socket, closed)
    const timer = setTimeout(() => {
      cause = new TransportUnavailableError('the handshake timed out')
      socket.terminate()
    }, settings.handshakeTimeoutMs)
    const fail = (error: Error): void => {
      if (settled()) return
      stage = 'failed'
      clearTimeout(timer)
      reject(error)
      socket.terminate()
    }
    const open = (sessionEpoch: number | undefined): void => {
      stage = 'open'
      clearTimeout(timer)
      hooks.opened(l, sessionEpoch)
      resolve(l)
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
        if (settled()) return
        const challengeSignature = encodeBase64url(signature)
        sendFrame(l, {
          protocolVersion: PROTOCOL_VERSION,
          frameId: nextFrameId(),
          frameType: 'HELLO',
          phase: 'client_response',
          agentId,
          keyId: key.keyId,
          clientNonce,
          serverNonce: challenge.serverNonce,
          challengeSignature,
        })
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
      if (settled()) return
      open(frame.sessionEpoch)
    }
    /** A pre-authenticated session's first frame: the server's `PING` opens it, an `ERROR` refuses it. */
    const first = (frame: WebSocketFrame): void => {
      if (settled()) return
      if (frame.frameType === 'ERROR') return fail(errorOfFrame(frame))
      if (frame.frameType !== 'PING' || frame.replyToNonce !== undefined)
        return fail(new ProtocolError('PROTOCOL_VIOLATION', `the server sent ${frame.frameType} before opening the session with a PING`))
      open(undefined)
      // The opening `PING` is the session's first frame: it is answered like any other.
      hooks.frame(l, frame)
    }
  })
}

/**
 * The subprotocols of the next socket: none for the HELLO handshake, `session.protocols()` (asked
 * again for every socket) for a pre-authenticated session.
 */
async function protocolsOfAttempt(session: PreAuthenticatedSession | undefined): Promise<readonly string[]> {
  if (session === undefined) return []
  const protocols = await session.protocols()
  if (!Array.isArray(protocols) || protocols.some((p) => typeof p !== 'string')) throw new UsageError('connectWebSocket: session.protocols() must give a list of strings')
  return protocols
}
