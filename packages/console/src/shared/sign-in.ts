/**
 * The console's sign-in contract, shared by the browser app and `weft serve`: what a person signs
 * to prove they hold a human Principal's key (§6.4 keys, §5 human interface), and the HTTP paths.
 *
 * MissionWeaveProtocol defines no human sign-in: the WebSocket handshake of §6.3 authenticates an
 * Agent and opens an Agent Session Epoch, which a human must not have. The console therefore
 * signs a server challenge of its own, bound to the page's origin (a page of another site cannot
 * use it) and to a short interval (a captured one soon expires), and the server answers with a
 * session token that the page keeps in memory only: no cookie, so no request the browser makes
 * on its own (CSRF) carries any authority.
 * @module
 */
import { canonicalizeOrThrow } from '@weft/codec'

/** The `context` member of every sign-in transcript: separates it from every other signed text. */
export const SIGN_IN_CONTEXT = 'weft-console-sign-in/1'

/** The WebSocket subprotocol of a console session; the token travels as a second one (see {@link sessionProtocols}). */
export const CONSOLE_PROTOCOL = 'weft-console.v1'

/** HTTP paths of the console, all on the listener of `weft serve`. */
export const CONSOLE_PATHS = {
  /** The app: `GET /console/` and its assets under it. */
  app: '/console/',
  /** `POST`: a fresh {@link SignInChallenge}. */
  challenge: '/console/api/challenge',
  /** `POST` a {@link SignInRequest}: a {@link ConsoleSession}, or 401 with a generic error. */
  signIn: '/console/api/sign-in',
  /** `POST` with the token: ends the session. */
  signOut: '/console/api/sign-out',
  /** `GET` with the token: the Groups the person may see ({@link ConsoleGroup}). */
  groups: '/console/api/groups',
  /**
   * `GET` with the token: the Organization's registered Agents ({@link ConsoleAgent}), from their
   * Agent Cards (§6.1), so that a person names a Coordinator by choosing one rather than typing its URI.
   */
  agents: '/console/api/agents',
  /**
   * `GET`: the Authority's clock ({@link ConsoleTime}). The page dates the Commands it signs with
   * it (§6.4 freshness), since the Authority may run on a clock other than the browser's (the
   * demo runs on a virtual one).
   */
  time: '/console/api/time',
  /** The WebSocket binding (§17 frames) of a signed-in person. */
  socket: '/console/ws',
} as const

/** What the server hands out to sign: single-use, valid until `expiresAt`, for pages of `origin` only. */
export interface SignInChallenge {
  /** 32 random bytes, base64url. */
  readonly challenge: string
  /** The origin the page must have (its `Origin` header), e.g. `https://authority.example:7443`. */
  readonly origin: string
  readonly issuedAt: string
  readonly expiresAt: string
}

/** What the page sends back. */
export interface SignInRequest {
  /** The human Principal's ID in the Organization's Registry. */
  readonly principalId: string
  /** The Registry key ID bound to that Principal. */
  readonly keyId: string
  /** The challenge as received. */
  readonly challenge: string
  /** Ed25519 over {@link signInTranscriptBytes}, base64url. */
  readonly signature: string
}

/** A signed-in person: the bearer token of the console API and its WebSocket. */
export interface ConsoleSession {
  readonly token: string
  readonly principal: { readonly type: 'human'; readonly id: string }
  readonly expiresAt: string
}

/** A Group the person may see (§8), as the console lists it. */
export interface ConsoleGroup {
  readonly groupId: string
  readonly missionId?: string
  readonly title?: string
  /** The Mission's state (§7.1), when the Group has a Mission. */
  readonly missionState?: string
  /** The person's role in the Group (their Membership). */
  readonly role?: string
  /** The Group's last committed sequence. */
  readonly headSequence: number
}

/**
 * A registered Agent as {@link CONSOLE_PATHS}.agents lists it: what its latest Agent Card states
 * (§6.1), the Organization's directory that every signed-in person of the Organization may read.
 */
export interface ConsoleAgent {
  readonly agentId: string
  readonly displayName: string
  /** `active`, `deprecated` or `revoked` (§6.1); only an active Agent takes new work. */
  readonly status: string
  readonly capabilities: readonly { readonly id: string; readonly version: string }[]
  readonly maxConcurrency: number
}

/** The Authority's time, as `GET` {@link CONSOLE_PATHS}.time answers it. */
export interface ConsoleTime {
  /** RFC 3339 UTC with milliseconds (§2), read from the Authority's clock when the request was answered. */
  readonly now: string
}

/** The prefix of the subprotocol that carries a session token (see {@link sessionProtocols}). */
export const SESSION_PROTOCOL_PREFIX = 'weft-session.'

/**
 * The exact bytes a person signs to sign in: the UTF-8 JCS (RFC 8785) form of the challenge, the
 * person and key, and {@link SIGN_IN_CONTEXT}. Server and page compute it the same way.
 */
export function signInTranscriptBytes(challenge: SignInChallenge, person: { readonly principalId: string; readonly keyId: string }): Uint8Array {
  return canonicalizeOrThrow({
    context: SIGN_IN_CONTEXT,
    origin: challenge.origin,
    principalId: person.principalId,
    keyId: person.keyId,
    challenge: challenge.challenge,
    issuedAt: challenge.issuedAt,
    expiresAt: challenge.expiresAt,
  })
}

/** The subprotocols a console page opens its WebSocket with: {@link CONSOLE_PROTOCOL} and the session token. */
export function sessionProtocols(token: string): string[] {
  return [CONSOLE_PROTOCOL, `${SESSION_PROTOCOL_PREFIX}${token}`]
}
