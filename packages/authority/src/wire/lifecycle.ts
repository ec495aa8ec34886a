/**
 * The lifecycle of one server connection as a small machine: where it stands
 * ({@link ConnectionLifecycle}), what moves it ({@link LifecycleInput}) and every transition, in one
 * pure function ({@link transition}). The connection (`connection.ts`) holds one value and performs
 * the effects (frames, timers, the socket); nothing here touches them.
 *
 * | from                          | input               | to                                            |
 * | ----------------------------- | ------------------- | --------------------------------------------- |
 * | awaiting-init                 | `client-init`       | awaiting-response (the challenge is out)      |
 * | awaiting-response             | `response-verified` | opening (`session_open` goes to the Authority) |
 * | opening                       | `session-opened`    | open, an Agent's session with its Epoch       |
 * | awaiting-init                 | `human-admitted`    | open, a person's session (no handshake)       |
 * | any but closed                | `ended`             | closed                                        |
 *
 * There is no closing phase: a connection that ends reads nothing more at once, and what is left of
 * the WebSocket close handshake belongs to the socket. Who the connection spoke for (its
 * `client_init`, its session) outlives the close, so the server can still name it.
 * @module
 */
import type { HelloClientInitFrame } from '@weft/spec'
import type { ActorRef } from '../model.js'
import type { AdmittedHuman } from './human-sessions.js'

/**
 * Whom an open connection serves. An Agent holds the Session Epoch its handshake opened (§6.3); a
 * person was admitted before the upgrade and holds none (human Commands carry no Session Epoch, and
 * the server must not invent one), only the console session that admitted them.
 */
export type Session =
  | { readonly kind: 'agent'; readonly actor: ActorRef; readonly sessionEpoch: number; readonly expiresAtMs: number }
  | { readonly kind: 'human'; readonly actor: ActorRef; readonly keyId: string; readonly sessionId: string; readonly expiresAtMs: number }

/** Where a connection stands, and what it holds there. */
export type ConnectionLifecycle =
  /** Accepted; nothing but a `HELLO`/`client_init` is taken (§6.3). */
  | { readonly phase: 'awaiting-init' }
  /** The challenge went out; nothing but its `client_response` is taken. */
  | { readonly phase: 'awaiting-response'; readonly init: HelloClientInitFrame; readonly serverNonce: string; readonly challenge: string }
  /** The response verified; the Authority is opening the Agent's next Session Epoch. */
  | { readonly phase: 'opening'; readonly init: HelloClientInitFrame }
  /** The session is open: session frames flow. `init` is the Agent's `client_init`, none for a person. */
  | { readonly phase: 'open'; readonly session: Session; readonly init: HelloClientInitFrame | undefined }
  /** For good. `session` and `init` are what the connection had reached, if anything. */
  | { readonly phase: 'closed'; readonly session: Session | undefined; readonly init: HelloClientInitFrame | undefined }

/** What moves a connection from one phase to the next. */
export type LifecycleInput =
  /** A `client_init` arrived; the server drew `serverNonce` and `challenge` for its challenge. */
  | { readonly on: 'client-init'; readonly init: HelloClientInitFrame; readonly serverNonce: string; readonly challenge: string }
  /** The `client_response` authenticates the Agent of `client_init`. */
  | { readonly on: 'response-verified' }
  /** The Authority opened `sessionEpoch` for the Agent; the session holds until `expiresAtMs`. */
  | { readonly on: 'session-opened'; readonly sessionEpoch: number; readonly expiresAtMs: number }
  /** A person the server admitted at the upgrade (§5 human interface): open at once. */
  | { readonly on: 'human-admitted'; readonly human: AdmittedHuman }
  /** The connection ends, whatever the reason (a fatal `ERROR`, idle, shutdown, the peer's close). */
  | { readonly on: 'ended' }

/** The lifecycle of a connection just accepted. */
export const INITIAL_LIFECYCLE: ConnectionLifecycle = { phase: 'awaiting-init' }

/**
 * The phase after `input`: every transition of the lifecycle. An input that does not apply to the
 * phase leaves it as it is (the same object): e.g. a session the Authority opened for a connection
 * that ended meanwhile, or a second end.
 */
export function transition(state: ConnectionLifecycle, input: LifecycleInput): ConnectionLifecycle {
  switch (input.on) {
    case 'client-init':
      return state.phase === 'awaiting-init' ? { phase: 'awaiting-response', init: input.init, serverNonce: input.serverNonce, challenge: input.challenge } : state
    case 'response-verified':
      return state.phase === 'awaiting-response' ? { phase: 'opening', init: state.init } : state
    case 'session-opened':
      // The verified response names the Agent of `client_init` (see `handshake.ts`).
      if (state.phase !== 'opening') return state
      return { phase: 'open', init: state.init, session: { kind: 'agent', actor: { type: 'agent', id: state.init.agentId }, sessionEpoch: input.sessionEpoch, expiresAtMs: input.expiresAtMs } }
    case 'human-admitted': {
      if (state.phase !== 'awaiting-init') return state
      const { principal, keyId, sessionId, expiresAtMs } = input.human
      return { phase: 'open', init: undefined, session: { kind: 'human', actor: { type: 'human', id: principal.id }, keyId, sessionId, expiresAtMs } }
    }
    case 'ended':
      return state.phase === 'closed' ? state : { phase: 'closed', session: sessionOf(state), init: initOf(state) }
  }
}

/** The session the connection opened, also after it closed; `undefined` before. */
export function sessionOf(state: ConnectionLifecycle): Session | undefined {
  return state.phase === 'open' || state.phase === 'closed' ? state.session : undefined
}

/** The Agent's `client_init`, from its arrival on, also after the close; `undefined` for a person. */
export function initOf(state: ConnectionLifecycle): HelloClientInitFrame | undefined {
  return state.phase === 'awaiting-init' ? undefined : state.init
}
