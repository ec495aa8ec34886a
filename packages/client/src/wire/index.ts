/**
 * @weft/client/wire: the client side of the MissionWeaveProtocol 0.1 WebSocket binding (§6.3,
 * §17). {@link connectWebSocket} authenticates one Agent with the HELLO challenge handshake (or
 * takes a session the server authenticated beforehand, such as a person's console sign-in) and
 * gives a `Transport` for signed Commands and an `EventFeed` for every Group it reads, over one
 * TLS 1.3 connection that reconnects on its own. It runs in Node (`ws`) and in browsers (the
 * global `WebSocket`, picked by the `browser` condition of the `#socket` import).
 *
 * @example
 * ```ts
 * import { createClient } from '@weft/client'
 * import { connectWebSocket, TransportUnavailableError } from '@weft/client/wire'
 *
 * const conn = await connectWebSocket({ url: 'wss://authority.example:7443', actor, signingKey })
 * const worker = createClient({ actor, signingKey, transport: conn.transport, groupId })
 * worker.epochs.setSession(conn.sessionEpoch())
 * conn.feed.subscribe([{ groupId, afterSequence: 0 }], { onEvent: (event) => worker.observe([event]) })
 * ```
 * @packageDocumentation
 */
export { connectWebSocket } from './connection.js'
export { TransportUnavailableError } from './transport-error.js'
export type { WebSocketConnection, ConnectionState, ConnectionStatus } from './connection.js'
export type { WebSocketOptions, ReconnectOptions, PreAuthenticatedSession } from './options.js'

// Library-author surface: the frame layer both ends share (the server of @weft/authority/wire uses it).
export {
  PROTOCOL_VERSION,
  DEFAULT_MAX_FRAME_BYTES,
  CLOSE_CODES,
  readFrame,
  isWireId,
  helloTranscriptBytes,
  HELLO_TRANSCRIPT_CONTEXT,
  newNonce,
  frameIdSource,
  receiptFrameId,
  parseReceiptFrameId,
  RECEIPT_FRAME_PREFIX,
  errorFrame,
  errorOfFrame,
} from './frames.js'
export type { FrameReading, HelloTranscript, ReceiptPart, ErrorFrameOptions } from './frames.js'
export { createWireFeed } from './subscriptions.js'
export type { FeedLink, WireFeed } from './subscriptions.js'
