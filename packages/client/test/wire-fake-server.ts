/**
 * A scripted WebSocket server for the client's tests: it speaks the HELLO handshake (verifying
 * the Agent's transcript signature with the test key), answers `COMMAND` frames through the fake
 * Authority of `fixtures.ts` with receipt `EVENT` frames or `ERROR`s, echoes `PING`s, and records
 * every frame it receives per connection. Tests push Events and misbehaviour by hand.
 */
import { decodeBase64url, importPublicKey, isVerifiedPublicKey, ProtocolError, sign, verifyEd25519 } from '@weft/codec'
import type { Event, WebSocketFrame } from '@weft/spec'
import { WebSocketServer, type WebSocket } from 'ws'
import { errorFrame, helloTranscriptBytes, receiptFrameId } from '../src/wire/index.js'
import { cast, fakeAuthority, type Respond } from './fixtures.js'

/** How the fake server misbehaves, when it does. */
export interface FakeServerOptions {
  /** Answer `client_init` with a challenge for another client nonce. */
  readonly wrongNonce?: boolean
  /** Refuse every handshake with this code. */
  readonly refuse?: ProtocolError['code']
  /** Leave `PING`s unanswered. */
  readonly silent?: boolean
  /** Leave `COMMAND`s unanswered. */
  readonly holdCommands?: boolean
  /** Decides the Events (or the refusal) of each Command. */
  readonly respond?: Respond
}

/** One connection as the fake server saw it. */
export interface FakeConnection {
  readonly socket: WebSocket
  readonly frames: WebSocketFrame[]
  /** Whether the client's transcript signature verified. */
  verified: boolean
  closeCode: number | undefined
}

const key = importPublicKey(cast.worker.key.pair.publicKey)

/** Starts the fake server on a loopback port. */
export async function fakeServer(options: FakeServerOptions = {}) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false })
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()))
  const authority = fakeAuthority(options.respond ?? (() => [{ kind: 'message.posted', payload: {} }]))
  const connections: FakeConnection[] = []
  let epoch = 0
  let frameCount = 0
  const frameId = (): string => `urn:weft:fake:frame:${++frameCount}`
  const send = (c: FakeConnection, frame: object | string): void => c.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame))

  /** Refusals for the next handshakes, first first (set by a test while the server runs). */
  const refusals: ProtocolError[] = []
  const onFrame = async (c: FakeConnection, frame: WebSocketFrame, challenge: { nonce: string; value: string }): Promise<void> => {
    if (frame.frameType === 'HELLO' && frame.phase === 'client_init') {
      const refusal = refusals.shift() ?? (options.refuse === undefined ? undefined : new ProtocolError(options.refuse, 'Refused by the fake server.'))
      if (refusal !== undefined) {
        send(c, errorFrame(refusal, frameId(), '2026-07-15T00:00:00Z', { fatal: true }))
        return c.socket.close(4401)
      }
      const clientNonce = options.wrongNonce === true ? 'b3RoZXI' : frame.clientNonce
      return send(c, {
        protocolVersion: '0.1',
        frameId: frameId(),
        frameType: 'HELLO',
        phase: 'server_challenge',
        selectedVersion: '0.1',
        clientNonce,
        serverNonce: challenge.nonce,
        challenge: challenge.value,
      })
    }
    if (frame.frameType === 'HELLO' && frame.phase === 'client_response') {
      const transcript = helloTranscriptBytes({
        agentId: frame.agentId,
        keyId: frame.keyId,
        selectedVersion: '0.1',
        clientNonce: frame.clientNonce,
        serverNonce: challenge.nonce,
        challenge: challenge.value,
      })
      const signature = decodeBase64url(frame.challengeSignature)
      c.verified = isVerifiedPublicKey(key) && signature !== undefined && verifyEd25519(key, transcript, signature)
      return send(c, {
        protocolVersion: '0.1',
        frameId: frameId(),
        frameType: 'HELLO',
        phase: 'server_accept',
        selectedVersion: '0.1',
        sessionToken: 'fake-session-token-0123456789',
        sessionEpoch: ++epoch,
        expiresAt: '2026-07-16T00:00:00Z',
      })
    }
    if (frame.frameType === 'PING' && frame.replyToNonce === undefined && options.silent !== true) {
      return send(c, { protocolVersion: '0.1', frameId: frameId(), frameType: 'PING', nonce: 'cmVwbHk', replyToNonce: frame.nonce, sentAt: '2026-07-15T00:00:00Z' })
    }
    if (frame.frameType === 'COMMAND' && options.holdCommands !== true) {
      try {
        const receipt = await authority.transport.submit(frame.command, JSON.stringify(frame.command))
        const serial = String(frameCount)
        receipt.events.forEach((event, index) =>
          send(c, { protocolVersion: '0.1', frameId: receiptFrameId({ serial, index, count: receipt.events.length, duplicate: receipt.duplicate }), frameType: 'EVENT', event }),
        )
      } catch (thrown) {
        send(c, errorFrame(ProtocolError.from(thrown), frameId(), '2026-07-15T00:00:00Z', { relatedFrameId: frame.frameId, relatedActionId: frame.command.actionId }))
      }
    }
  }

  wss.on('connection', (socket) => {
    const c: FakeConnection = { socket, frames: [], verified: false, closeCode: undefined }
    connections.push(c)
    const challenge = { nonce: `c2VydmVy${connections.length}`, value: `Y2hhbGxlbmdl${connections.length}` }
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as WebSocketFrame
      c.frames.push(frame)
      void onFrame(c, frame, challenge)
    })
    socket.on('close', (code) => {
      c.closeCode = code
    })
  })

  return {
    url: `ws://127.0.0.1:${(wss.address() as { port: number }).port}`,
    connections,
    /** The newest connection. */
    get last(): FakeConnection {
      return connections.at(-1)!
    },
    send: (frame: object | string, c?: FakeConnection) => send(c ?? connections.at(-1)!, frame),
    /** Refuses the next handshakes with these errors, one each. */
    refuseNext: (...errors: ProtocolError[]) => void refusals.push(...errors),
    /** Sends Events of `groupId` with `sequences` as subscription `EVENT` frames. */
    events(groupId: string, sequences: readonly number[], c?: FakeConnection): void {
      for (const sequence of sequences) send(c ?? connections.at(-1)!, { protocolVersion: '0.1', frameId: frameId(), frameType: 'EVENT', event: groupEvent(groupId, sequence) })
    },
    /** Frames of `type` the newest connection received. */
    received<T extends WebSocketFrame['frameType']>(type: T, c?: FakeConnection): Extract<WebSocketFrame, { frameType: T }>[] {
      return (c ?? connections.at(-1)!).frames.filter((f): f is Extract<WebSocketFrame, { frameType: T }> => f.frameType === type)
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of connections) c.socket.terminate()
        wss.close(() => resolve())
      }),
  }
}

/** A signed Event of `groupId` at `sequence`. */
export function groupEvent(groupId: string, sequence: number): Event {
  const unsigned = {
    protocolVersion: '0.1',
    eventId: `urn:weft:client-test:event:${groupId.split(':').pop()}:${sequence}`,
    groupId,
    sequence,
    aggregateRevision: sequence,
    kind: 'message.posted',
    actor: cast.owner.actor,
    cause: { type: 'command', id: `urn:weft:client-test:action:${sequence}` },
    correlationId: 'urn:weft:client-test:correlation',
    occurredAt: '2026-07-15T00:00:00Z',
    payload: {},
    acceptedBy: cast.authority.actor,
  }
  return sign('event', unsigned, cast.authority.key) as unknown as Event
}
