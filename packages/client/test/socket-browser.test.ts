/**
 * The browser socket adapter (`src/wire/socket-browser.ts`, the `browser` branch of `#socket`) in
 * Node, with `ws`'s WHATWG-style `WebSocket` standing in for the page's global one: text and
 * binary messages, the close codes a browser may send, `terminate()` reported at once, and `ca`
 * refused. Chromium runs the same module for real in `integration/test/client-browser.test.ts`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { WebSocket, WebSocketServer } from 'ws'
import { openSocket } from '../src/wire/socket-browser.js'
import type { SocketHandlers } from '../src/wire/socket.js'

let wss: WebSocketServer
let url: string
let closes: number[] = []
let previous: unknown

beforeEach(async () => {
  previous = (globalThis as { WebSocket?: unknown }).WebSocket
  ;(globalThis as { WebSocket?: unknown }).WebSocket = WebSocket
  wss = new WebSocketServer({ host: '127.0.0.1', port: 0 })
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()))
  url = `ws://127.0.0.1:${(wss.address() as { port: number }).port}`
  const mine: number[] = (closes = [])
  wss.on('connection', (socket, request) => {
    socket.on('close', (code) => mine.push(code))
    socket.on('message', (data) => socket.send(String(data)))
    socket.send(`protocol:${request.headers['sec-websocket-protocol'] ?? ''}`)
    socket.send(new Uint8Array([1, 2, 3]))
  })
})

afterEach(async () => {
  ;(globalThis as { WebSocket?: unknown }).WebSocket = previous
  for (const client of wss.clients) client.terminate()
  await new Promise((resolve) => wss.close(resolve))
})

/** Handlers that record what they are told; `opened` resolves on `open`, `closed` on `close`. */
function recorder() {
  const messages: [string | number[], boolean][] = []
  const closed: [number, string][] = []
  let onOpen!: () => void
  let onClose!: () => void
  const opened = new Promise<void>((resolve) => (onOpen = resolve))
  const done = new Promise<void>((resolve) => (onClose = resolve))
  const handlers: SocketHandlers = {
    open: () => onOpen(),
    message: (data, isBinary) => messages.push([typeof data === 'string' ? data : [...data], isBinary]),
    error: () => undefined,
    close: (code, reason) => {
      closed.push([code, reason])
      onClose()
    },
  }
  return { handlers, messages, closed, opened, done }
}

const waitFor = async (check: () => boolean): Promise<void> => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 2))
}

describe('the browser socket', () => {
  it('offers the subprotocols, hands text over as strings and binary as bytes, and sends text', async () => {
    const r = recorder()
    const socket = openSocket({ url, protocols: ['weft.console', 'ticket-1'], maxPayload: 1024, handshakeTimeoutMs: 1000 }, r.handlers)
    await r.opened
    expect(socket.isOpen).toBe(true)
    socket.send('echo me')
    await waitFor(() => r.messages.length >= 3)
    expect(r.messages).toEqual([
      ['protocol:weft.console,ticket-1', false],
      [[1, 2, 3], true],
      ['echo me', false],
    ])
  })

  it('sends a code a browser may not send (1002) as 1000, and one it may (4401) as is', async () => {
    for (const [code, seen] of [
      [1002, 1000],
      [4401, 4401],
    ] as const) {
      const r = recorder()
      const socket = openSocket({ url, protocols: [], maxPayload: 1024, handshakeTimeoutMs: 1000 }, r.handlers)
      await r.opened
      socket.close(code, 'x'.repeat(200))
      await r.done
      await waitFor(() => closes.length > 0)
      expect(closes.shift()).toBe(seen)
    }
  })

  it('terminate() reports the close at once (1006), exactly once, and the socket is no longer open', async () => {
    const r = recorder()
    const socket = openSocket({ url, protocols: [], maxPayload: 1024, handshakeTimeoutMs: 1000 }, r.handlers)
    await r.opened
    socket.terminate()
    expect(r.closed).toEqual([[1006, 'terminated']])
    expect(socket.isOpen).toBe(false)
    await waitFor(() => closes.length > 0)
    socket.terminate()
    expect(r.closed).toHaveLength(1)
  })

  it('refuses `ca` (a browser trusts its own store) and a platform without WebSocket', () => {
    const r = recorder()
    expect(() => openSocket({ url, protocols: [], ca: 'PEM', maxPayload: 1024, handshakeTimeoutMs: 1000 }, r.handlers)).toThrow(/not supported in a browser/)
    ;(globalThis as { WebSocket?: unknown }).WebSocket = undefined
    expect(() => openSocket({ url, protocols: [], maxPayload: 1024, handshakeTimeoutMs: 1000 }, r.handlers)).toThrow(/no global WebSocket/)
  })
})
