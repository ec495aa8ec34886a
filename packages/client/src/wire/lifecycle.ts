/**
 * The lifecycle of one `connectWebSocket` connection as a small machine: where it stands
 * ({@link Lifecycle}), what moves it ({@link LifecycleInput}) and every transition, in one pure
 * function ({@link advance}). The connection holds one `Lifecycle` value and performs the effects
 * (sockets, timers, listeners); nothing here touches them.
 *
 * | from                      | input             | to                                                              |
 * | ------------------------- | ----------------- | --------------------------------------------------------------- |
 * | connecting, reconnecting  | `session-opened`  | open                                                            |
 * | open                      | `socket-closed`   | reconnecting; closed when fenced or refused, or reconnect is off |
 * | open                      | `close-requested` | closing                                                         |
 * | closing                   | `socket-closed`   | closed                                                          |
 * | reconnecting              | `retry-scheduled` | backing-off                                                     |
 * | backing-off               | `retry-due`       | reconnecting                                                    |
 * | reconnecting              | `attempt-refused` | closed                                                          |
 * | reconnecting, backing-off | `close-requested` | closed (an attempt under way finishes, and is closed at once)   |
 *
 * Also here: which socket closes end a connection for good (§6.3), and the backoff between attempts.
 * @module
 */
import { ProtocolError } from '@weft/codec'
import type { RandomSource } from '@weft/codec/time'
import { CLOSE_CODES } from './frames.js'
import type { Link } from './link.js'
import type { ReconnectOptions } from './options.js'

/** A pending `setTimeout`, in Node or a browser. */
export type Timer = ReturnType<typeof setTimeout>

/** Where a connection stands, and what it holds there. */
export type Lifecycle =
  /** The first attempt: socket and handshake under way; `connectWebSocket` has not resolved yet. */
  | { readonly phase: 'connecting' }
  /** A session is open on `link`: Commands, `PING`s and the feed's frames go there. */
  | { readonly phase: 'open'; readonly link: Link }
  /** `close()` was called on an open session: its socket is closing, and still carries what is sent meanwhile. */
  | { readonly phase: 'closing'; readonly link: Link }
  /**
   * The session dropped: an attempt is under way, or about to be scheduled. `attempts` counts the
   * delays waited since the last open session (the backoff grows with it).
   */
  | { readonly phase: 'reconnecting'; readonly attempts: number }
  /** Waiting out the delay before the next attempt. */
  | { readonly phase: 'backing-off'; readonly attempts: number; readonly timer: Timer }
  /**
   * For good: on request, or dropped with reconnecting off, or ended by the server. `terminal` is
   * the error every Command then rejects with when the server ended it (fenced or refused).
   */
  | { readonly phase: 'closed'; readonly terminal: Error | undefined }

/** What moves a connection from one phase to the next. */
export type LifecycleInput =
  /** An attempt's handshake finished (HELLO accepted, §6.3, or a pre-authenticated session's first `PING`). */
  | { readonly on: 'session-opened'; readonly link: Link }
  /**
   * The socket of `link` closed. `terminal` is set when the server ended the connection for good
   * ({@link endingOf}); `reconnect` is whether reconnecting is on at all.
   */
  | { readonly on: 'socket-closed'; readonly link: Link; readonly terminal: Error | undefined; readonly reconnect: boolean }
  /** The delay before the next attempt started. */
  | { readonly on: 'retry-scheduled'; readonly timer: Timer }
  /** The delay passed: the next attempt starts. */
  | { readonly on: 'retry-due' }
  /** An attempt was refused with a `ProtocolError` that says not to retry (§19). */
  | { readonly on: 'attempt-refused'; readonly error: ProtocolError }
  /** `close()` was called. */
  | { readonly on: 'close-requested' }

/**
 * The phase after `input`: every transition of the lifecycle. An input that does not apply to the
 * phase leaves it as it is (the same object), e.g. the close of a socket that is not the current
 * one, or an attempt that finishes after `close()`.
 */
export function advance(state: Lifecycle, input: LifecycleInput): Lifecycle {
  switch (input.on) {
    case 'session-opened':
      // Attempts run only while connecting or reconnecting: one that finishes after close() is not taken.
      return state.phase === 'connecting' || state.phase === 'reconnecting' ? { phase: 'open', link: input.link } : state
    case 'socket-closed':
      if (currentLink(state) !== input.link) return state
      if (state.phase === 'closing' || input.terminal !== undefined || !input.reconnect) return { phase: 'closed', terminal: input.terminal }
      return { phase: 'reconnecting', attempts: 0 }
    case 'retry-scheduled':
      return state.phase === 'reconnecting' ? { phase: 'backing-off', attempts: state.attempts + 1, timer: input.timer } : state
    case 'retry-due':
      return state.phase === 'backing-off' ? { phase: 'reconnecting', attempts: state.attempts } : state
    case 'attempt-refused':
      return state.phase === 'reconnecting' ? { phase: 'closed', terminal: input.error } : state
    case 'close-requested':
      if (state.phase === 'open') return { phase: 'closing', link: state.link }
      // A closed connection keeps why it closed; an attempt under way is left to finish and is then closed.
      return state.phase === 'closed' || state.phase === 'closing' ? state : { phase: 'closed', terminal: undefined }
  }
}

/** The link that Commands, `PING`s and the feed's frames go to: the open session's, also while `close()` waits for it. */
export function currentLink(state: Lifecycle): Link | undefined {
  return state.phase === 'open' || state.phase === 'closing' ? state.link : undefined
}

/** The error the server ended the connection with for good, which every Command now rejects with. */
export function terminalError(state: Lifecycle): Error | undefined {
  return state.phase === 'closed' ? state.terminal : undefined
}

/**
 * Whether the close of a session's socket ends the connection for good, and with which error:
 * fenced by a newer session of the same Agent (§6.3: this runtime must stop), or refused by the
 * server; `undefined` when reconnecting may help. `fatal` is the last fatal `ERROR` the server sent.
 */
export function endingOf(code: number, fatal: ProtocolError | undefined, sessionEpoch: number): Error | undefined {
  if (code === CLOSE_CODES.sessionFenced || fatal?.code === 'AUTH_STALE_SESSION')
    return fatal ?? new ProtocolError('AUTH_STALE_SESSION', 'a newer session of this Agent fenced this connection (§6.3)', { details: { sessionEpoch } })
  if (code === CLOSE_CODES.authenticationFailed) return fatal ?? new ProtocolError('AUTH_REQUIRED', 'the server ended the session')
  return undefined
}

/**
 * The delay before the next attempt, after `attempts` delays since the last open session:
 * exponential, capped, with jitter, and not before `notBeforeMs` (a refusal's `retryAfterMs`, §19).
 */
export function reconnectDelayMs(policy: ReconnectOptions, attempts: number, random: RandomSource, notBeforeMs: number): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(attempts, 30))
  // Jitter spreads the reconnects of many Agents after a server restart.
  const draw = random(4)
  return Math.max(notBeforeMs, Math.round(base * (0.5 + ((draw[0]! ^ draw[3]!) / 255) * 0.5)))
}

/**
 * Lets Node exit while a retry or heartbeat timer is pending. Browsers return a number from
 * `setTimeout` and have no `unref`, so the call is optional there.
 */
export function unrefTimer(timer: unknown): void {
  ;(timer as { unref?: () => void } | undefined)?.unref?.()
}
