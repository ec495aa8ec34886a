/**
 * The seam between the connection logic of the WebSocket binding (§17) and the platform's
 * WebSocket: the `ws` package in Node (`socket-node.ts`), the global `WebSocket` in a browser
 * (`socket-browser.ts`). `handshake.ts`, which opens every socket of a connection, imports the
 * one its platform needs through the package.json `imports` entry `#socket`, so a browser bundle
 * never contains `ws`, `Buffer` or `node:` modules. Types only: nothing here exists at run time.
 * @internal
 * @module
 */

/** What opening a socket needs. */
export interface SocketOptions {
  /** `wss://…`, or `ws://` to a loopback host (checked by the caller). */
  readonly url: string
  /** WebSocket subprotocols offered in `Sec-WebSocket-Protocol` (RFC 6455 §4.1); may be empty. */
  readonly protocols: readonly string[]
  /** Trusted CA certificates (PEM or DER bytes). Node only: a browser trusts its own store. */
  readonly ca?: string | Uint8Array | readonly (string | Uint8Array)[] | undefined
  /** Largest inbound message in bytes, where the platform can refuse it before reading it. */
  readonly maxPayload: number
  /** How long the WebSocket upgrade may take, where the platform can bound it. */
  readonly handshakeTimeoutMs: number
  /**
   * Report a refused upgrade (an HTTP answer other than 101, as a server refuses a
   * pre-authenticated session before any WebSocket exists) to `handlers.error` as the
   * `ProtocolError` its body or status says, before the close. Node only: a browser shows script
   * nothing of a refused upgrade.
   */
  readonly readRefusals?: boolean
}

/** What a socket reports; `close` is reported exactly once, last. */
export interface SocketHandlers {
  open(): void
  /** One message: a string or the bytes of a text message, bytes of a binary one (`isBinary`). */
  message(data: Uint8Array | string, isBinary: boolean): void
  error(error: unknown): void
  close(code: number, reason: string): void
}

/** One platform socket, as the connection uses it. */
export interface WireSocket {
  /** Whether a frame can be sent now (the WebSocket is `OPEN`). */
  readonly isOpen: boolean
  /** Sends one text message. */
  send(text: string): void
  /**
   * Starts the closing handshake. A code a browser may not send (anything but 1000 and
   * 3000-4999, such as 1002) is sent as 1000 there; Node sends it as given.
   */
  close(code: number, reason?: string): void
  /**
   * Drops the socket now, without waiting for the peer (a dead peer never answers a close):
   * `ws`'s `terminate()` in Node; in a browser, which cannot drop a socket, `close()` and the
   * close is reported at once (code 1006) without waiting for the handshake.
   */
  terminate(): void
}

/** Opens a socket; the platform module exports one. */
export type OpenSocket = (options: SocketOptions, handlers: SocketHandlers) => WireSocket
