/**
 * The server side of the HELLO challenge handshake (§6.3): `client_init` is answered with a
 * challenge, the signed `client_response` is verified against the Registry and the Agent's cards
 * (§6.4), and the Authority opens the Agent's next Session Epoch, which `server_accept` tells. Any
 * other frame before the session is open, or a response that does not verify, ends the connection
 * (4401); which check failed stays in the log.
 * @module
 */
import { decodeBase64url, parseTimestamp, ProtocolError, verifyEd25519, withinInterval } from '@weft/codec'
import { CLOSE_CODES, helloTranscriptBytes, newNonce, PROTOCOL_VERSION } from '@weft/client/wire'
import type { HelloClientInitFrame, HelloClientResponseFrame, WebSocketFrame } from '@weft/spec'
import { timestampOf } from '@weft/codec/time'
import { keyEndedBy } from '../ingress/standing.js'
import type { ConnectionLifecycle } from './lifecycle.js'
import type { ConnectionLink } from './link.js'

/** The generic answer to a failed handshake: which check failed stays in the log (§6.4 stage diagnostics are never sent). */
const HANDSHAKE_REFUSED = 'The handshake response does not verify.'

/** The lifecycle while the challenge waits for its response. */
type Challenged = Extract<ConnectionLifecycle, { readonly phase: 'awaiting-response' }>

/** Handles one frame of `link` before its session is open. */
export function createHandshake(link: ConnectionLink): (frame: WebSocketFrame) => Promise<void> {
  const { ctx } = link

  const challengeAgent = (hello: HelloClientInitFrame): void => {
    // `readFrame` already refused a client_init without version 0.1 (UNSUPPORTED_VERSION). The
    // Agent and key are checked only against the signed response, so an unauthenticated peer
    // learns nothing about which Agents or keys exist.
    const serverNonce = newNonce(ctx.random)
    const challenge = newNonce(ctx.random)
    link.advance({ on: 'client-init', init: hello, serverNonce, challenge })
    link.send(
      JSON.stringify({
        protocolVersion: PROTOCOL_VERSION,
        frameId: link.nextFrameId(),
        frameType: 'HELLO',
        phase: 'server_challenge',
        selectedVersion: PROTOCOL_VERSION,
        clientNonce: hello.clientNonce,
        serverNonce,
        challenge,
      }),
    )
  }

  const verifyResponse = async (state: Challenged, response: HelloClientResponseFrame): Promise<void> => {
    const refusal = responseRefusal(state, response)
    if (refusal !== undefined) {
      link.log('warn', `handshake refused: ${refusal}`, 'AUTH_INVALID_SIGNATURE')
      return link.fatal(new ProtocolError('AUTH_INVALID_SIGNATURE', HANDSHAKE_REFUSED, { relatedFrameId: response.frameId }), CLOSE_CODES.authenticationFailed)
    }
    link.advance({ on: 'response-verified' })
    let epoch: number
    try {
      epoch = await ctx.openSession(response.agentId)
    } catch (thrown) {
      const error = ProtocolError.from(thrown)
      link.log('warn', `session_open refused: ${error.message}`, error.code)
      // An unregistered or inactive Agent may not hold a session; the Authority's reason stays in its audit.
      // A HELLO rate limit (§20) concerns this authenticated Agent alone, so it learns it and when to retry.
      const answer = error.code === 'INTERNAL_ERROR' || error.code === 'RATE_LIMITED' ? error : new ProtocolError('AUTH_FORBIDDEN', 'The Agent may not open a session.')
      return link.fatal(answer, CLOSE_CODES.authenticationFailed, { relatedFrameId: response.frameId })
    }
    // The connection may have ended meanwhile (timed out, closed by the peer): the session is not taken.
    if (link.lifecycle().phase !== 'opening') return
    const expiresAtMs = ctx.clock.now() + ctx.sessionTtlMs
    link.advance({ on: 'session-opened', sessionEpoch: epoch, expiresAtMs })
    link.log('info', `session ${epoch} open`)
    link.send(
      JSON.stringify({
        protocolVersion: PROTOCOL_VERSION,
        frameId: link.nextFrameId(),
        frameType: 'HELLO',
        phase: 'server_accept',
        selectedVersion: PROTOCOL_VERSION,
        sessionToken: newNonce(ctx.random),
        sessionEpoch: epoch,
        expiresAt: timestampOf(expiresAtMs),
      }),
    )
  }

  /** Why `response` does not authenticate the Agent of the challenge `state`, or `undefined` when it does. */
  const responseRefusal = ({ init: first, serverNonce, challenge }: Challenged, response: HelloClientResponseFrame): string | undefined => {
    // A response answers exactly this connection's challenge: one replayed from another connection carries another server nonce.
    if (response.serverNonce !== serverNonce) return 'server nonce of another challenge'
    if (response.agentId !== first.agentId || response.keyId !== first.keyId || response.clientNonce !== first.clientNonce) return 'response does not match client_init'
    const resolved = ctx.registry.resolve(response.keyId)
    if (!resolved.ok) return `key: ${resolved.reason}`
    const { principal } = resolved.key
    if (principal.type !== 'agent' || principal.id !== response.agentId) return 'key is not bound to this Agent'
    const at = parseTimestamp(link.now())
    if (at === undefined || !withinInterval(at, resolved.key)) return 'key is not valid now'
    // §6.4: the boundaries the Agent's registered cards state hold too, registered since this server loaded its Registry or not.
    const ended = keyEndedBy(ctx.authority.state.org.agents.get(response.agentId), response.keyId, at)
    if (ended !== undefined) return `key is not valid now (${ended.reason})`
    const signature = decodeBase64url(response.challengeSignature)
    const transcript = helloTranscriptBytes({ agentId: response.agentId, keyId: response.keyId, selectedVersion: PROTOCOL_VERSION, clientNonce: response.clientNonce, serverNonce, challenge })
    if (signature === undefined || !verifyEd25519(resolved.key.publicKey, transcript, signature)) return 'signature does not verify'
    return undefined
  }

  return async (frame) => {
    const state = link.lifecycle()
    const hello = frame.frameType === 'HELLO' ? frame : undefined
    if (state.phase === 'awaiting-init' && hello?.phase === 'client_init') return challengeAgent(hello)
    if (state.phase === 'awaiting-response' && hello?.phase === 'client_response') return verifyResponse(state, hello)
    const error =
      hello === undefined
        ? new ProtocolError('AUTH_REQUIRED', `A ${frame.frameType} frame needs an authenticated session; start with HELLO/client_init.`, { relatedFrameId: frame.frameId })
        : new ProtocolError('PROTOCOL_VIOLATION', `HELLO/${hello.phase} is out of order.`, { relatedFrameId: frame.frameId })
    link.fatal(error, CLOSE_CODES.authenticationFailed)
  }
}
