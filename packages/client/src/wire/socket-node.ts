/**
 * The Node socket of the WebSocket binding (§17): the `ws` package, with what only Node can do:
 * TLS 1.3 as the floor (§17.1), private CA certificates, no compression, the frame size bound
 * applied before a message is buffered, and `terminate()` dropping a socket at once.
 * Selected by the `#socket` import everywhere but in a browser build (see `socket.ts`).
 * @internal
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { isErrorCode, ProtocolError } from '@weft/codec'
import { WebSocket } from 'ws'
import type { OpenSocket, SocketHandlers, SocketOptions, WireSocket } from './socket.js'

/** The most of a refusal's body read: an error object is small, and a peer must not make the client buffer more. */
const MAX_REFUSAL_BYTES = 64 * 1024

/**
 * The `ProtocolError` a refused upgrade stands for: the §19 error object of its JSON body
 * (`{ "error": { code, message, ... } }`, as `@weft/authority/wire` refuses), else what its
 * status says (401 `AUTH_REQUIRED`, 403 `AUTH_FORBIDDEN`, 429 and 503 `RATE_LIMITED` with the
 * `Retry-After` wait); `undefined` when it says neither, and the failure stays a transport one.
 */
export function refusalOf(status: number, body: string, retryAfter: string | undefined): ProtocolError | undefined {
  try {
    const error = (JSON.parse(body) as { error?: Record<string, unknown> } | null)?.error
    if (typeof error === 'object' && error !== null && isErrorCode(error['code']) && typeof error['message'] === 'string') {
      const { code, message, occurredAt: _occurredAt, ...members } = error
      return new ProtocolError(code, message, members)
    }
  } catch {
    // Not JSON: the status decides.
  }
  const seconds = Number(retryAfter)
  const retryAfterMs = Number.isSafeInteger(seconds) && seconds >= 0 ? { retryAfterMs: seconds * 1000 } : {}
  if (status === 401) return new ProtocolError('AUTH_REQUIRED', `The server refused the session (HTTP ${status}).`)
  if (status === 403) return new ProtocolError('AUTH_FORBIDDEN', `The server refused the session (HTTP ${status}).`)
  if (status === 429 || status === 503) return new ProtocolError('RATE_LIMITED', `The server refused the connection for now (HTTP ${status}).`, retryAfterMs)
  return undefined
}

/** Reads the refused upgrade `response` (bounded) and reports the error it stands for, then drops the socket. */
function readRefusal(socket: WebSocket, response: IncomingMessage, handlers: SocketHandlers): void {
  const chunks: Buffer[] = []
  let size = 0
  let reported = false
  const done = (): void => {
    if (reported) return
    reported = true
    const retryAfter = response.headers['retry-after']
    const refusal = refusalOf(response.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), Array.isArray(retryAfter) ? retryAfter[0] : retryAfter)
    handlers.error(refusal ?? new Error(`the server refused the WebSocket upgrade (HTTP ${response.statusCode ?? 0})`))
    socket.terminate()
  }
  response.on('data', (chunk: Buffer) => {
    size += chunk.length
    if (size <= MAX_REFUSAL_BYTES) chunks.push(chunk)
  })
  response.on('end', done)
  response.on('error', done)
}

/** Opens a `ws` socket and reports its events to `handlers`. */
export const openSocket: OpenSocket = (options: SocketOptions, handlers: SocketHandlers): WireSocket => {
  const { ca } = options
  const socket = new WebSocket(options.url, [...options.protocols], {
    ...(ca === undefined ? {} : { ca: (Array.isArray(ca) ? ca : [ca]).map((c: string | Uint8Array) => (typeof c === 'string' ? c : Buffer.from(c))) }),
    minVersion: 'TLSv1.3',
    perMessageDeflate: false,
    maxPayload: options.maxPayload,
    handshakeTimeout: options.handshakeTimeoutMs,
  })
  // With a listener, `ws` leaves the refused upgrade to us (and emits no error of its own for it).
  if (options.readRefusals === true) socket.on('unexpected-response', (_request, response) => readRefusal(socket, response, handlers))
  socket.on('open', () => handlers.open())
  socket.on('message', (data, isBinary) => handlers.message(data as Buffer, isBinary))
  socket.on('error', (error) => handlers.error(error))
  socket.on('close', (code, reason) => handlers.close(code, reason.toString()))
  return {
    get isOpen() {
      return socket.readyState === WebSocket.OPEN
    },
    send: (text) => socket.send(text),
    close: (code, reason) => socket.close(code, reason),
    terminate: () => socket.terminate(),
  }
}
