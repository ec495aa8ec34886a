/**
 * What `connectWebSocket` is told, checked once up front (a mistake is a `UsageError` before any
 * socket opens), and the settings it runs with: the options with every default filled in.
 * @module
 */
import { UsageError, type AsyncSigningKey, type SigningKey } from '@weft/codec'
import type { Actor } from '@weft/spec'
import { systemClock, systemRandom, type Clock, type RandomSource } from '@weft/codec/time'
import type { connectWebSocket, WebSocketConnection } from './connection.js'
import type { TransportUnavailableError } from './transport-error.js'

/** Delays between reconnect attempts: exponential from `initialDelayMs` up to `maxDelayMs`, with jitter. */
export interface ReconnectOptions {
  readonly initialDelayMs: number
  readonly maxDelayMs: number
}

/**
 * A session the server authenticated before the socket opened, such as a person's sign-in to a
 * web console: the socket carries proof of it as WebSocket subprotocols (a browser can send no
 * other header), and no HELLO handshake runs (§6.3 defines the handshake for Agents only).
 */
export interface PreAuthenticatedSession {
  /**
   * The subprotocols to offer (`Sec-WebSocket-Protocol`, RFC 6455 §4.1), e.g. a protocol name
   * and a one-time ticket the server issued at sign-in. Called for every socket, reconnects
   * included, so a single-use ticket can be fetched fresh each time; a rejection fails that
   * attempt with what it rejected with (a non-retryable `ProtocolError` ends the connection).
   */
  protocols(): readonly string[] | Promise<readonly string[]>
}

/** Options of {@link connectWebSocket}. */
export interface WebSocketOptions {
  /** `wss://…` (TLS 1.3, §17.1); `ws://` only to a loopback host. */
  readonly url: string
  /**
   * The Principal of the connection. With the HELLO handshake an Agent (§6.3: the handshake is
   * an Agent's); with {@link WebSocketOptions.session} an Agent or a human.
   */
  readonly actor: Actor
  /**
   * The Agent's Ed25519 key, which signs the handshake transcript (§6.3); the Registry must bind
   * `signingKey.keyId` to the Agent. Synchronous, or asynchronous such as a browser's WebCrypto
   * key (`webCryptoKeyPair` of `@weft/codec`). Required unless `session` is given; a
   * pre-authenticated session signs nothing on the connection.
   */
  readonly signingKey?: SigningKey | AsyncSigningKey
  /**
   * A session the server authenticated before the socket opened, instead of the HELLO
   * handshake: the socket offers `session.protocols()` as subprotocols and sends no HELLO. The
   * server opens the session by sending a `PING` first (answered as usual); an `ERROR` instead
   * refuses it (connectWebSocket rejects with its `ProtocolError`), and a close before any frame
   * rejects with `AUTH_REQUIRED`. No Session Epoch is issued: {@link WebSocketConnection.sessionEpoch}
   * stays 0, and a human's Commands carry none anyway (§6.3, §15.1).
   */
  readonly session?: PreAuthenticatedSession
  /**
   * Trusted CA certificates (PEM) for the server's certificate, e.g. a private CA or a self-signed
   * test certificate. Node only: in a browser the browser's own trust store decides, and giving
   * `ca` there is a `UsageError`.
   */
  readonly ca?: string | Uint8Array | readonly (string | Uint8Array)[]
  /** The time, `{ now() }` in epoch milliseconds; the wall clock ({@link systemClock}) by default. */
  readonly clock?: Clock
  /** Random bytes for nonces and IDs; WebCrypto's `getRandomValues` by default. */
  readonly random?: RandomSource
  /** Reconnect policy; `false` closes the connection for good on the first drop. Default `{ initialDelayMs: 250, maxDelayMs: 30000 }`. */
  readonly reconnect?: ReconnectOptions | false
  /** Commands accepted for sending while the connection is down (sent, in order, once it is back). Default 0: they are rejected with {@link TransportUnavailableError}. */
  readonly bufferWhileDisconnected?: number
  /** Largest inbound frame in bytes. Default 16 MiB. */
  readonly maxFrameBytes?: number
  /** Interval of liveness `PING`s (§17.3); an unanswered one drops the socket. 0 disables them. Default 15000. */
  readonly heartbeatMs?: number
  /** How long the WebSocket upgrade and the HELLO exchange (or the wait for a pre-authenticated session's first frame) may take. Default 10000. */
  readonly handshakeTimeoutMs?: number
}

/** The options of a connection, checked, with every default filled in. */
export interface ConnectionSettings {
  readonly url: string
  readonly actor: Actor
  /** Present for the HELLO handshake; a pre-authenticated session may go without. */
  readonly signingKey: SigningKey | AsyncSigningKey | undefined
  readonly session: PreAuthenticatedSession | undefined
  readonly ca: WebSocketOptions['ca']
  readonly clock: Clock
  readonly random: RandomSource
  readonly reconnect: ReconnectOptions | false
  /** {@link WebSocketOptions.bufferWhileDisconnected}. */
  readonly bufferLimit: number
  readonly maxFrameBytes: number
  readonly heartbeatMs: number
  readonly handshakeTimeoutMs: number
}

const DEFAULTS = { maxFrameBytes: 16 * 1024 * 1024, heartbeatMs: 15_000, handshakeTimeoutMs: 10_000, reconnect: { initialDelayMs: 250, maxDelayMs: 30_000 } }

/** Checks `options` and fills in the defaults. @throws UsageError on bad options. */
export function settingsOf(options: WebSocketOptions): ConnectionSettings {
  const o = checkOptions(options)
  return {
    url: o.url,
    actor: o.actor,
    signingKey: o.signingKey,
    session: o.session,
    ca: o.ca,
    clock: o.clock ?? systemClock,
    random: o.random ?? systemRandom,
    reconnect: o.reconnect === undefined ? DEFAULTS.reconnect : o.reconnect,
    bufferLimit: o.bufferWhileDisconnected ?? 0,
    maxFrameBytes: o.maxFrameBytes ?? DEFAULTS.maxFrameBytes,
    heartbeatMs: o.heartbeatMs ?? DEFAULTS.heartbeatMs,
    handshakeTimeoutMs: o.handshakeTimeoutMs ?? DEFAULTS.handshakeTimeoutMs,
  }
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i

function checkOptions(options: WebSocketOptions): WebSocketOptions {
  const { url, actor, signingKey, session, clock, random, reconnect } = options ?? ({} as WebSocketOptions)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError(`connectWebSocket: url must be a ws:// or wss:// URL, got ${String(url)}`)
  }
  // §17.1: the binding is WebSocket over TLS 1.3; plain sockets are for a loopback development server only.
  if (parsed.protocol !== 'wss:' && !(parsed.protocol === 'ws:' && LOOPBACK.test(parsed.hostname))) {
    throw new UsageError(`connectWebSocket: url must be wss:// (ws:// only to a loopback host), got ${url}`)
  }
  if (session !== undefined) {
    if (typeof session?.protocols !== 'function') throw new UsageError('connectWebSocket: session must be { protocols(): string[] | Promise<string[]> }')
    // A session the server authenticated beforehand may be a person's (the console's) or an Agent's.
    if ((actor?.type !== 'agent' && actor?.type !== 'human') || typeof actor.id !== 'string') throw new UsageError('connectWebSocket: with a session, actor must be { type: "human" | "agent", id }')
  } else if (actor?.type !== 'agent' || typeof actor.id !== 'string') {
    throw new UsageError('connectWebSocket: actor must be an Agent { type: "agent", id } (§6.3: the HELLO handshake is an Agent\'s; a human connects with a pre-authenticated session)')
  }
  if (signingKey !== undefined || session === undefined) {
    if (typeof signingKey?.keyId !== 'string' || typeof signingKey.pair?.sign !== 'function')
      throw new UsageError('connectWebSocket: signingKey must be { keyId, pair } with an Ed25519 key pair (synchronous, or asynchronous such as webCryptoKeyPair)')
  }
  if (clock !== undefined && typeof clock?.now !== 'function') throw new UsageError('connectWebSocket: clock must be { now(): number } returning epoch milliseconds')
  if (random !== undefined && typeof random !== 'function') throw new UsageError('connectWebSocket: random must be a function (size) => Uint8Array')
  if (reconnect !== undefined && reconnect !== false) {
    const { initialDelayMs, maxDelayMs } = reconnect
    if (!Number.isSafeInteger(initialDelayMs) || initialDelayMs < 1 || !Number.isSafeInteger(maxDelayMs) || maxDelayMs < initialDelayMs) {
      throw new UsageError('connectWebSocket: reconnect needs integers 1 <= initialDelayMs <= maxDelayMs')
    }
  }
  for (const name of ['bufferWhileDisconnected', 'heartbeatMs'] as const) {
    const value = options[name]
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) throw new UsageError(`connectWebSocket: ${name} must be a non-negative integer`)
  }
  for (const name of ['maxFrameBytes', 'handshakeTimeoutMs'] as const) {
    const value = options[name]
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1)) throw new UsageError(`connectWebSocket: ${name} must be a positive integer`)
  }
  return options
}
