/**
 * Human sessions on the WebSocket listener (§5 human interface, §17): a person's console signs in
 * over HTTP before it opens its WebSocket, so the upgrade itself carries the proof (a bearer token
 * in a subprotocol) and a {@link HumanSessionGate} decides it before any WebSocket exists. An
 * admitted session skips the Agent HELLO handshake: the person is known already, and a human has no
 * Session Epoch to open (§6.3: human Commands carry none and none is invented for them).
 * @module
 */
import type { IncomingMessage } from 'node:http'
import { ProtocolError } from '@weft/codec'

/** The upgrade of a human session: who it is, or why not. Decided before any WebSocket exists. */
export type HumanAdmission =
  | { readonly ok: true; readonly principal: { readonly type: 'human'; readonly id: string }; readonly keyId: string; readonly sessionId: string; readonly expiresAtMs: number }
  | { readonly ok: false; readonly status: number; readonly error: ProtocolError }

/** An admitted human session: the person, the key they signed in with, and until when it holds. */
export type AdmittedHuman = Extract<HumanAdmission, { readonly ok: true }>

/** Where and how human sessions (the Weft console's) open on the listener. */
export interface HumanSessionGate {
  /** The request path of human sessions, e.g. '/console/ws' (query strings ignored). Upgrades to other paths stay Agent sessions with the HELLO handshake. */
  readonly path: string
  /** The WebSocket subprotocol the server selects for an admitted session, e.g. 'weft-console.v1'. An upgrade that does not offer it is refused (400). */
  readonly protocol: string
  /** Decides an upgrade to `path` (it reads the Origin header and the offered subprotocols itself). */
  admit(request: IncomingMessage): HumanAdmission
}

/** The refusal of an upgrade: its HTTP status and the §19 error object its body carries. */
export interface UpgradeRefusal {
  readonly status: number
  readonly error: ProtocolError
}

/** Whether `request` asks for `gate`'s path; the query string does not count. */
export function isHumanPath(gate: HumanSessionGate, request: IncomingMessage): boolean {
  const url = request.url ?? ''
  const query = url.indexOf('?')
  return (query === -1 ? url : url.slice(0, query)) === gate.path
}

/** The subprotocols an upgrade offers (RFC 6455 §4.1: a comma-separated `Sec-WebSocket-Protocol`, possibly repeated). */
function offeredProtocols(request: IncomingMessage): string[] {
  const header = request.headers['sec-websocket-protocol']
  const values = header === undefined ? [] : Array.isArray(header) ? header : [header]
  return values.flatMap((value) => value.split(',')).map((p) => p.trim())
}

/**
 * Decides an upgrade to the human path: it must offer `gate.protocol`, and the gate must admit it.
 * A gate that throws or answers something that is not a human's admission refuses the upgrade
 * (fail closed): the server never serves an unauthenticated or non-human peer without HELLO.
 */
export function admitHuman(gate: HumanSessionGate, request: IncomingMessage, nowMs: number, log: (message: string) => void): AdmittedHuman | UpgradeRefusal {
  if (!offeredProtocols(request).includes(gate.protocol)) {
    return { status: 400, error: new ProtocolError('PROTOCOL_VIOLATION', `A console session offers the WebSocket subprotocol ${gate.protocol}.`) }
  }
  let admission: HumanAdmission
  try {
    admission = gate.admit(request)
  } catch (thrown) {
    log(`the human session gate failed: ${thrown instanceof Error ? thrown.message : String(thrown)}`)
    return { status: 500, error: new ProtocolError('INTERNAL_ERROR', 'The session could not be checked.') }
  }
  if (admission?.ok === false) {
    // The gate chose what the peer learns; nothing more is added about which check failed.
    const status = Number.isInteger(admission.status) && admission.status >= 400 && admission.status <= 599 ? admission.status : 403
    const error = admission.error instanceof ProtocolError ? admission.error : new ProtocolError('AUTH_FORBIDDEN', 'The session is refused.')
    return { status, error }
  }
  const { principal, keyId, sessionId, expiresAtMs } = (admission ?? {}) as Partial<AdmittedHuman>
  if (
    admission?.ok !== true ||
    principal?.type !== 'human' ||
    typeof principal.id !== 'string' ||
    typeof keyId !== 'string' ||
    typeof sessionId !== 'string' ||
    typeof expiresAtMs !== 'number' ||
    Number.isNaN(expiresAtMs)
  ) {
    log('the human session gate admitted something that is not a human session')
    return { status: 500, error: new ProtocolError('INTERNAL_ERROR', 'The session could not be checked.') }
  }
  // A session that ended meanwhile is not opened only to be closed at once.
  if (expiresAtMs <= nowMs) return { status: 401, error: new ProtocolError('AUTH_REQUIRED', 'The session expired; sign in again.') }
  return { ok: true, principal: { type: 'human', id: principal.id }, keyId, sessionId, expiresAtMs }
}
