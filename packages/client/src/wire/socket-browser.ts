/**
 * The browser socket of the WebSocket binding (§17): the global `WebSocket` of the page. What a
 * browser does not let script do is left to it: TLS and its trust store (no `ca`), compression,
 * custom headers and WebSocket ping frames (liveness is the binding's own `PING` frame, §17.3,
 * so nothing is lost). Selected by the `#socket` import under the `browser` condition (see
 * `socket.ts`); it uses no Node built-in, so the client bundles for a web page.
 * @internal
 * @module
 */
import { UsageError } from '@weft/codec/errors'
import type { OpenSocket, SocketHandlers, SocketOptions, WireSocket } from './socket.js'

/** The part of the WHATWG `WebSocket` this module uses (the client's TypeScript has no DOM library). */
interface BrowserWebSocket {
  readonly readyState: number
  binaryType: string
  onopen: ((event: unknown) => void) | null
  onmessage: ((event: { readonly data: unknown }) => void) | null
  onerror: ((event: unknown) => void) | null
  onclose: ((event: { readonly code: number; readonly reason: string }) => void) | null
  send(data: string): void
  close(code?: number, reason?: string): void
}
type BrowserWebSocketClass = new (url: string, protocols?: string[]) => BrowserWebSocket

/** `WebSocket.OPEN` of the WHATWG standard. */
const OPEN = 1
/** RFC 6455 §7.4.1: "abnormal closure", what `ws` reports after `terminate()`. */
const ABNORMAL = 1006
/** WHATWG `close()`: a close reason is at most 123 UTF-8 bytes, or the call throws. */
const MAX_REASON_BYTES = 123

/** The codes script may send: 1000 and the 3000-4999 range (WHATWG `close()`), others throw there. */
const sendable = (code: number): number => (code === 1000 || (code >= 3000 && code <= 4999) ? code : 1000)

function shortReason(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined
  const encoder = new TextEncoder()
  let out = reason
  while (encoder.encode(out).length > MAX_REASON_BYTES) out = out.slice(0, -1)
  return out
}

/** Opens the page's `WebSocket` and reports its events to `handlers`. */
export const openSocket: OpenSocket = (options: SocketOptions, handlers: SocketHandlers): WireSocket => {
  const WebSocketClass = (globalThis as { WebSocket?: BrowserWebSocketClass }).WebSocket
  if (typeof WebSocketClass !== 'function') throw new UsageError('connectWebSocket: this platform has no global WebSocket')
  // A browser validates the server's certificate against its own trust store; script cannot add a CA.
  if (options.ca !== undefined) throw new UsageError('connectWebSocket: `ca` is not supported in a browser; the browser trusts its own certificate store')
  const socket = new WebSocketClass(options.url, [...options.protocols])
  socket.binaryType = 'arraybuffer'
  let reported = false
  const report = (code: number, reason: string): void => {
    if (reported) return
    reported = true
    socket.onopen = socket.onmessage = socket.onerror = socket.onclose = null
    handlers.close(code, reason)
  }
  socket.onopen = () => handlers.open()
  socket.onmessage = ({ data }) => {
    if (typeof data === 'string') handlers.message(data, false)
    else handlers.message(data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(0), true)
  }
  // A browser tells script nothing about the cause of a failed connection (WHATWG: by design).
  socket.onerror = () => handlers.error(new Error('the WebSocket failed (the browser does not say why)'))
  socket.onclose = ({ code, reason }) => report(code, reason)
  return {
    get isOpen() {
      return !reported && socket.readyState === OPEN
    },
    send: (text) => socket.send(text),
    close: (code, reason) => socket.close(sendable(code), shortReason(reason)),
    terminate: () => {
      if (reported) return
      socket.close(1000)
      // A dead peer never completes the closing handshake: report the drop now, as `ws` does.
      report(ABNORMAL, 'terminated')
    },
  }
}
