/**
 * `createConsoleServer`: the server side of the web console (§5 "a human interface for Mission
 * directives, monitoring, intervention, and Approval"), mounted on the listener of the WebSocket
 * binding (§17).
 *
 * It serves three things under `/console`:
 *
 * - the app: `GET /console/` (its `index.html`) and the files its manifest lists, with a strict
 *   Content-Security-Policy on every answer;
 * - the sign-in API (`shared/sign-in.ts`): a person proves they hold a human Principal's Registry
 *   key (§6.4) by signing a single-use challenge bound to the page's origin, and receives a bearer
 *   token kept in page memory only;
 * - the admission of that person's WebSocket ({@link ConsoleServer.gate}), after which the wire
 *   server serves them §17 frames with the §8 visibility of their Memberships.
 *
 * No cookie is ever set: every authority a request carries is in its `Authorization` header or
 * WebSocket subprotocol, which a page of another site cannot make the browser add (no CSRF). The
 * `Origin` of every state-changing request is checked all the same.
 * @module
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { fileURLToPath } from 'node:url'
import { actorKey, type AuthorityState, type Clock, type GroupState, type RandomSource } from '@weft/authority'
import {
  decodeBase64url,
  encodeBase64url,
  importPublicKey,
  keyPairFromSeed,
  parseStrictJson,
  parseTimestamp,
  ProtocolError,
  UsageError,
  verifyEd25519,
  withinInterval,
  type KeyResolver,
  type VerifiedPublicKey,
} from '@weft/codec'
import { CONSOLE_PATHS, CONSOLE_PROTOCOL, SESSION_PROTOCOL_PREFIX, signInTranscriptBytes, type ConsoleAgent, type ConsoleGroup, type ConsoleSession, type ConsoleTime, type SignInChallenge } from '../shared/sign-in.js'
import { APP_INDEX, AppUnavailableError, loadApp, type LoadedApp } from './app-files.js'

// ---------------------------------------------------------------------------------------------
// Options and the server's shape
// ---------------------------------------------------------------------------------------------

/** Bounds of a console server; each has a default ({@link CONSOLE_LIMITS}). */
export interface ConsoleLimits {
  /** How long a challenge may be answered, in milliseconds. */
  readonly challengeTtlMs: number
  /** Challenges issued and not yet answered or expired; one more is refused (503, `RATE_LIMITED`). */
  readonly maxPendingChallenges: number
  /** How long a session token is good for, in milliseconds. */
  readonly sessionTtlMs: number
  /** Sessions signed in and not expired; one more sign-in is refused (503, `RATE_LIMITED`). */
  readonly maxSessions: number
  /** Largest API request body in bytes; a longer one is refused (413) before or as soon as it passes this. */
  readonly maxBodyBytes: number
  /** API requests whose bodies are being read at once; one more is refused (503, `RATE_LIMITED`). */
  readonly maxConcurrentRequests: number
  /** Most bytes the app's files may hold in memory. */
  readonly maxAppBytes: number
}

/** The defaults of {@link ConsoleLimits}. */
export const CONSOLE_LIMITS: ConsoleLimits = Object.freeze({
  challengeTtlMs: 60_000,
  maxPendingChallenges: 256,
  sessionTtlMs: 12 * 3600_000,
  maxSessions: 1024,
  maxBodyBytes: 4096,
  maxConcurrentRequests: 64,
  maxAppBytes: 32 * 1024 * 1024,
})

/** One line of the console's log (the shape of `weft serve`'s structured log). */
export interface ConsoleLogEntry {
  readonly level: 'info' | 'warn' | 'error'
  readonly msg: string
  readonly [field: string]: unknown
}

/** Options of {@link createConsoleServer}. */
export interface ConsoleServerOptions {
  /**
   * Resolves the keys people sign in with (§6.4 stage 4): the Registry the Authority verifies
   * with, so that whoever may sign a Command may sign in, and a key revoked there ends here too.
   */
  readonly registry: KeyResolver
  /**
   * The Authority whose Groups people see (§8) and whose registered Agents they may name as
   * Coordinators (its `org`; without it the Agent list is empty). Its `state` is read at each
   * request (it may be replaced, not only changed).
   */
  readonly authority: { readonly state: Pick<AuthorityState, 'groups'> & Partial<Pick<AuthorityState, 'org'>> }
  /**
   * The origins the console's pages are served from, e.g. `https://authority.example:7443`, as
   * the browser sends them in `Origin`. Anything a URL parser reads is taken and reduced to its
   * origin. Requests of any other origin are refused (403, `AUTH_FORBIDDEN`).
   */
  readonly allowedOrigins: readonly string[]
  /** The Authority's clock: challenges, sessions and {@link CONSOLE_PATHS}.time read it. Default: the wall clock. */
  readonly clock?: Clock
  /** Random bytes for challenges, tokens and session IDs. Default: `node:crypto`. */
  readonly random?: RandomSource
  /** The built app (`index.html`, `manifest.json`, ...). Default: `dist/app/` of this package. */
  readonly appDir?: string
  /** Bounds; each one missing has its {@link CONSOLE_LIMITS} default. */
  readonly limits?: Partial<ConsoleLimits>
  /** Receives what a person is never told: why a sign-in was refused, sessions begun and ended. Default: none. */
  readonly log?: (entry: ConsoleLogEntry) => void
}

/** The admission of a console WebSocket: the person and their session, or why not (the shape of `@weft/authority/wire`'s `HumanAdmission`). */
export type ConsoleAdmission =
  | { readonly ok: true; readonly principal: { readonly type: 'human'; readonly id: string }; readonly keyId: string; readonly sessionId: string; readonly expiresAtMs: number }
  | { readonly ok: false; readonly status: number; readonly error: ProtocolError }

/** What the wire server asks of the console before it serves a person (the shape of `@weft/authority/wire`'s `HumanSessionGate`). */
export interface ConsoleGate {
  /** The upgrade path: {@link CONSOLE_PATHS}.socket. */
  readonly path: string
  /** The subprotocol the server selects: {@link CONSOLE_PROTOCOL}. */
  readonly protocol: string
  /** Checks the upgrade's `Origin` (403, `AUTH_FORBIDDEN`) and session token (401, `AUTH_REQUIRED`). */
  admit(request: IncomingMessage): ConsoleAdmission
}

/** What the console needs of the wire server: ending the WebSockets of a session that ended. */
export interface HumanSessionHost {
  /** Ends every connection admitted with `sessionId`, each told `error`; returns how many. */
  endHumanSessions(sessionId: string, error?: ProtocolError): number
}

/** A console server: plug {@link handle} and {@link gate} into `createWireServer`'s `http` and `humanSessions`. */
export interface ConsoleServer {
  /**
   * Answers a plain HTTP request under `/console` and returns `true`; returns `false`, having
   * touched nothing, for any other path (the caller answers it). Never throws.
   */
  handle(request: IncomingMessage, response: ServerResponse): boolean
  /** The admission of console WebSockets. */
  readonly gate: ConsoleGate
  /** Gives the console the wire server, so that a sign-out closes that session's WebSockets. */
  attach(host: HumanSessionHost): void
  /** The sessions signed in and not expired. */
  readonly sessionCount: number
  /** Ends every session (their WebSockets too, when attached) and answers every later request 503. */
  close(): void
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** §5: the console's page may load its own scripts, styles and images, and talk to its own origin; nothing else. */
export const CONSOLE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** The headers of every console answer, app files, API and errors alike. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

/** The one answer to every failed sign-in: which check failed is the server log's, never the caller's. */
const SIGN_IN_REFUSED = 'The sign-in does not verify.'

/** The default app directory: `dist/app/` of this package, from its sources and from its build alike. */
function defaultAppDir(): string {
  return fileURLToPath(new URL('../../dist/app/', import.meta.url))
}

/** `value` reduced to an origin (`scheme://host[:port]`), as browsers serialize `Origin`. */
function originOf(value: string): string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new UsageError(`createConsoleServer: allowedOrigins holds ${JSON.stringify(value)}, which is not a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`createConsoleServer: allowed origin ${value} must be http: or https:`)
  return url.origin
}

function positiveLimit(limits: Partial<ConsoleLimits> | undefined, name: keyof ConsoleLimits): number {
  const value = limits?.[name] ?? CONSOLE_LIMITS[name]
  if (!Number.isSafeInteger(value) || value < 1) throw new UsageError(`createConsoleServer: limits.${name} must be a positive integer`)
  return value
}

/** The single value of header `name`, or `undefined` when absent or given more than once. */
function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name]
  return typeof value === 'string' ? value : undefined
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** Whether two strings are equal, in time that depends on their lengths only. */
function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.byteLength === y.byteLength && timingSafeEqual(x, y)
}

/** Whether the request declares a body longer than `max` (`Content-Length`), so none of it need be read. */
function declaresMore(request: IncomingMessage, max: number): boolean {
  const declared = request.headers['content-length']
  return declared !== undefined && /^\d+$/.test(declared) && Number(declared) > max
}

/**
 * Reads the request body if it has at most `max` bytes; `undefined` as soon as it has more, after
 * which nothing more of it is read (the stream is paused and its data no longer taken).
 */
function readBody(request: IncomingMessage, max: number): Promise<Uint8Array | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const take = (chunk: Buffer): void => {
      size += chunk.byteLength
      if (size <= max) {
        chunks.push(chunk)
        return
      }
      request.off('data', take)
      request.pause()
      chunks.length = 0
      resolve(undefined)
    }
    request.on('data', take)
    request.once('end', () => resolve(Buffer.concat(chunks)))
    request.once('error', reject)
  })
}

/** Verifications of a key nobody holds, so that an unknown person takes as long to refuse as a wrong signature. */
const DECOY_KEY = importPublicKey(keyPairFromSeed(new Uint8Array(32).fill(1)).publicKey) as VerifiedPublicKey

/** A signed-in person. */
interface Session {
  readonly sessionId: string
  readonly principal: { readonly type: 'human'; readonly id: string }
  readonly keyId: string
  readonly expiresAtMs: number
}

/** A challenge handed out and not yet answered. */
interface Pending {
  readonly challenge: SignInChallenge
  readonly expiresAtMs: number
}

/** A request's answer, written by {@link ConsoleServer.handle}. */
interface Answer {
  readonly status: number
  readonly headers?: Readonly<Record<string, string>>
  /** JSON-serialized with `application/json`, unless a Buffer or string with its own content type. */
  readonly body?: unknown
  /** Ends the connection after the answer (a body left unread). */
  readonly close?: boolean
}

/** Whether a Group is the person's to see (§8): a Membership not ended, or the Mission is theirs. */
function visibleTo(group: GroupState, person: { readonly id: string }): { readonly role?: string } | undefined {
  const id = group.membershipByMember.get(actorKey({ type: 'human', id: person.id }))
  const membership = id === undefined ? undefined : group.memberships.get(id)
  if (membership !== undefined && membership.state !== 'ended') return { role: membership.role }
  const owner = group.mission.missionOwner
  if (owner.type === 'human' && owner.id === person.id) return { role: 'mission_owner' }
  return undefined
}

// ---------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------

/**
 * Creates the console's server side: the app, the sign-in API and the WebSocket admission of
 * signed-in people, for the listener of `weft serve` (or any `node:http` server).
 *
 * - `POST /console/api/challenge` → a {@link SignInChallenge} for the request's `Origin` (32
 *   random bytes, single use, {@link ConsoleLimits.challengeTtlMs}).
 * - `POST /console/api/sign-in` with a `SignInRequest` → a {@link ConsoleSession}; every failure
 *   (unknown person, wrong or invalid key, bad signature, reused, expired or foreign challenge) is
 *   the same 401 `AUTH_INVALID_SIGNATURE`, the reason going to the log only (§6.4 withholds it).
 * - `GET /console/api/groups` with `Authorization: Bearer TOKEN` → `{ groups: ConsoleGroup[] }`,
 *   the Groups the person may see (§8); a hidden Group is absent, exactly as a missing one.
 * - `GET /console/api/time` → {@link ConsoleTime}.
 * - `POST /console/api/sign-out` with the token → 204; the session's WebSockets end.
 *
 * Every API answer has `Cache-Control: no-store`; an `Origin` outside `allowedOrigins` (or none on
 * a POST: a cross-site form or script) is refused with 403 `AUTH_FORBIDDEN` before anything else.
 * @throws UsageError for bad options.
 * @example
 * ```ts
 * const consoleServer = createConsoleServer({ registry, authority, allowedOrigins: ['http://127.0.0.1:7443'], clock })
 * const wire = await createWireServer({ ...wireOptions, http: (request, response) => { if (!consoleServer.handle(request, response)) response.writeHead(426).end() }, humanSessions: consoleServer.gate })
 * consoleServer.attach(wire)
 * ```
 */
export function createConsoleServer(options: ConsoleServerOptions): ConsoleServer {
  const clock = options.clock ?? { now: () => Date.now() }
  const random = options.random ?? ((n: number) => new Uint8Array(randomBytes(n)))
  const log = options.log ?? (() => undefined)
  const appDir = options.appDir ?? defaultAppDir()
  if (!Array.isArray(options.allowedOrigins) || options.allowedOrigins.length === 0) throw new UsageError('createConsoleServer: allowedOrigins must name at least one origin')
  const allowed = new Set(options.allowedOrigins.map(originOf))
  const limits: ConsoleLimits = Object.fromEntries((Object.keys(CONSOLE_LIMITS) as (keyof ConsoleLimits)[]).map((name) => [name, positiveLimit(options.limits, name)])) as unknown as ConsoleLimits

  const pending = new Map<string, Pending>()
  /** Sessions by the SHA-256 of their token: the token itself is kept nowhere. */
  const sessions = new Map<string, Session>()
  let host: HumanSessionHost | undefined
  let closed = false
  let reading = 0
  let app: Promise<LoadedApp> | undefined

  const now = (): number => clock.now()
  const stamp = (ms: number): string => new Date(ms).toISOString()
  const wire = (error: ProtocolError): { error: ReturnType<ProtocolError['toWire']> } => ({ error: error.toWire(stamp(now())) })
  const refusal = (status: number, error: ProtocolError, headers?: Record<string, string>): Answer => ({ status, body: wire(error), ...(headers === undefined ? {} : { headers }) })
  const token = (bytes: number): string => {
    const drawn = random(bytes)
    if (drawn.length < bytes) throw new Error('the random source returned too few bytes')
    return encodeBase64url(drawn.slice(0, bytes))
  }

  function prune(): void {
    const t = now()
    for (const [key, p] of pending) if (p.expiresAtMs <= t) pending.delete(key)
    for (const [key, s] of sessions) if (s.expiresAtMs <= t) sessions.delete(key)
  }

  /** Ends a session and its WebSockets. */
  function endSession(key: string, session: Session, why: string): void {
    sessions.delete(key)
    const ended = host?.endHumanSessions(session.sessionId, new ProtocolError('AUTH_REQUIRED', why)) ?? 0
    log({ level: 'info', msg: 'console session ended', principalId: session.principal.id, sessionId: session.sessionId, reason: why, connections: ended })
  }

  /**
   * The live session of `text` (a token): unexpired, and its key still valid in the Registry
   * (§6.4: a key revoked or past its validity signs nothing, so it holds no session either).
   */
  function sessionOf(text: string | undefined): Session | undefined {
    if (text === undefined || text.length === 0 || text.length > 200) return undefined
    const key = sha256Hex(text)
    const session = sessions.get(key)
    if (session === undefined) return undefined
    const t = now()
    if (session.expiresAtMs <= t) {
      endSession(key, session, 'The console session expired.')
      return undefined
    }
    if (!keyStanding(session.keyId, session.principal.id, t)) {
      endSession(key, session, 'The key of the console session is no longer valid.')
      return undefined
    }
    return session
  }

  /** Whether `keyId` resolves to human `principalId` and is valid at `t` (§6.4 stages 4 and 5); else the reason. */
  function keyCheck(keyId: string, principalId: string, t: number): { ok: true; key: VerifiedPublicKey } | { ok: false; reason: string } {
    const resolved = options.registry.resolve(keyId)
    if (!resolved.ok) return { ok: false, reason: `key ${resolved.reason}` }
    const { key } = resolved
    if (key.principal.type !== 'human') return { ok: false, reason: `the key belongs to a ${key.principal.type}, not a human` }
    if (key.principal.id !== principalId) return { ok: false, reason: 'the key belongs to another principal' }
    const at = parseTimestamp(stamp(t))
    if (at === undefined || !withinInterval(at, key)) return { ok: false, reason: 'the key is not valid now (validFrom, validUntil or revokedAt)' }
    return { ok: true, key: key.publicKey }
  }
  const keyStanding = (keyId: string, principalId: string, t: number): boolean => keyCheck(keyId, principalId, t).ok

  /** The bearer token of `Authorization: Bearer TOKEN`. */
  function bearer(request: IncomingMessage): string | undefined {
    const value = header(request, 'authorization')
    const match = value === undefined ? null : /^Bearer ([A-Za-z0-9_-]+)$/.exec(value)
    return match?.[1]
  }

  /**
   * §5, CSRF: a request that states an `Origin` must state an allowed one, and one that changes
   * state (POST) must state one; a browser sends it on every POST and WebSocket, so its absence
   * there means a client that is not the console's page. A same-origin `GET` from the page may lack
   * it (browsers omit it there), which is harmless: a `GET` changes nothing and needs the token.
   */
  function originRefusal(request: IncomingMessage, required: boolean): ProtocolError | undefined {
    const origin = header(request, 'origin')
    if (origin === undefined ? required : !allowed.has(origin)) return new ProtocolError('AUTH_FORBIDDEN', 'Requests to the console must come from its own pages (Origin).', { details: { reason: 'origin' } })
    // Fetch Metadata: a browser that says the request is cross-site is believed.
    if (header(request, 'sec-fetch-site') === 'cross-site') return new ProtocolError('AUTH_FORBIDDEN', 'Requests to the console must come from its own pages (Sec-Fetch-Site).', { details: { reason: 'origin' } })
    return undefined
  }

  // -- The API -------------------------------------------------------------------------------

  function issueChallenge(request: IncomingMessage): Answer {
    prune()
    if (pending.size >= limits.maxPendingChallenges) {
      const oldest = Math.min(...[...pending.values()].map((p) => p.expiresAtMs))
      const retryAfterMs = Math.max(1000, oldest - now())
      log({ level: 'warn', msg: 'console challenge refused', reason: 'too many pending challenges', maxPendingChallenges: limits.maxPendingChallenges })
      return refusal(503, new ProtocolError('RATE_LIMITED', 'Too many sign-ins are under way; retry shortly.', { retryAfterMs, details: { maxPendingChallenges: limits.maxPendingChallenges } }), { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) })
    }
    const t = now()
    const challenge: SignInChallenge = { challenge: token(32), origin: header(request, 'origin')!, issuedAt: stamp(t), expiresAt: stamp(t + limits.challengeTtlMs) }
    pending.set(challenge.challenge, { challenge, expiresAtMs: t + limits.challengeTtlMs })
    return { status: 200, body: challenge }
  }

  function signIn(request: IncomingMessage, body: Uint8Array): Answer {
    const parsed = parseStrictJson(body, { maxBytes: limits.maxBodyBytes })
    if (!parsed.ok) return refusal(400, new ProtocolError('PROTOCOL_VIOLATION', `The sign-in request is not strict JSON: ${parsed.message}.`, { details: { reason: parsed.reason, offset: parsed.offset } }))
    const value = parsed.value
    const fields = ['principalId', 'keyId', 'challenge', 'signature'] as const
    const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
    // Consumed whatever happens next (single use): a request that names it spends it.
    const named = typeof record?.['challenge'] === 'string' ? pending.get(record['challenge']) : undefined
    if (named !== undefined) pending.delete(named.challenge.challenge)
    const unknown = record === undefined ? [] : Object.keys(record).filter((k) => !(fields as readonly string[]).includes(k))
    const missing = fields.filter((k) => typeof record?.[k] !== 'string')
    if (record === undefined || missing.length > 0 || unknown.length > 0) {
      return refusal(400, new ProtocolError('SCHEMA_VALIDATION_FAILED', 'A sign-in request is { "principalId", "keyId", "challenge", "signature" }, all strings.', { details: { missing, unknown } }))
    }
    const request_ = record as Record<(typeof fields)[number], string>
    const t = now()
    const fail = (reason: string): Answer => {
      log({ level: 'info', msg: 'console sign-in refused', reason, principalId: request_.principalId.slice(0, 300), keyId: request_.keyId.slice(0, 300), origin: header(request, 'origin') })
      return refusal(401, new ProtocolError('AUTH_INVALID_SIGNATURE', SIGN_IN_REFUSED))
    }
    const signature = decodeBase64url(request_.signature)
    const key = keyCheck(request_.keyId, request_.principalId, t)
    // One verification whatever failed before it, so the time taken tells nothing either.
    const challenge = named?.challenge ?? { challenge: request_.challenge, origin: '', issuedAt: '', expiresAt: '' }
    const verified = signature !== undefined && signature.length === 64 && verifyEd25519(key.ok ? key.key : DECOY_KEY, signInTranscriptBytes(challenge, request_), signature)
    if (named === undefined) return fail('the challenge is unknown, used already or expired')
    if (named.expiresAtMs <= t) return fail('the challenge expired')
    if (!sameText(named.challenge.origin, header(request, 'origin') ?? '')) return fail('the challenge was issued for another origin')
    if (!key.ok) return fail(key.reason)
    if (!verified) return fail('the signature does not verify')
    prune()
    if (sessions.size >= limits.maxSessions) {
      log({ level: 'warn', msg: 'console sign-in refused', reason: 'too many sessions', maxSessions: limits.maxSessions, principalId: request_.principalId })
      return refusal(503, new ProtocolError('RATE_LIMITED', 'Too many people are signed in; retry later.', { retryAfterMs: 60_000, details: { maxSessions: limits.maxSessions } }), { 'retry-after': '60' })
    }
    const secret = token(32)
    const session: Session = { sessionId: `urn:weft:console-session:${token(16)}`, principal: { type: 'human', id: request_.principalId }, keyId: request_.keyId, expiresAtMs: t + limits.sessionTtlMs }
    sessions.set(sha256Hex(secret), session)
    log({ level: 'info', msg: 'console signed in', principalId: session.principal.id, keyId: session.keyId, sessionId: session.sessionId })
    const answer: ConsoleSession = { token: secret, principal: session.principal, expiresAt: stamp(session.expiresAtMs) }
    return { status: 200, body: answer }
  }

  function groupsOf(session: Session): Answer {
    const groups: ConsoleGroup[] = []
    for (const group of options.authority.state.groups.values()) {
      const seen = visibleTo(group, session.principal)
      if (seen === undefined) continue
      // The Mission's title is its main Conversation's (§7.1 mission.create).
      const title = group.conversations.get(group.group.mainConversationId)?.title
      groups.push({
        groupId: group.groupId,
        missionId: group.missionId,
        ...(title === undefined ? {} : { title }),
        missionState: group.mission.state,
        ...(seen.role === undefined ? {} : { role: seen.role }),
        headSequence: group.head,
      })
    }
    groups.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0))
    return { status: 200, body: { groups } }
  }

  /** The Organization's Agents as their latest Agent Cards state them (§6.1), in ID order. */
  function agentsOf(): Answer {
    const agents: ConsoleAgent[] = []
    for (const record of options.authority.state.org?.agents.values() ?? []) {
      const card = record.card
      agents.push({
        agentId: record.agentId,
        displayName: card.displayName,
        status: card.status,
        capabilities: card.capabilities.map((c) => ({ id: c.id, version: c.version })),
        maxConcurrency: card.maxConcurrency,
      })
    }
    agents.sort((a, b) => (a.agentId < b.agentId ? -1 : a.agentId > b.agentId ? 1 : 0))
    return { status: 200, body: { agents } }
  }

  const notSignedIn = (): Answer => refusal(401, new ProtocolError('AUTH_REQUIRED', 'Sign in to the console first (Authorization: Bearer TOKEN).'), { 'www-authenticate': 'Bearer' })

  /** The API endpoints: their method, whether they take a body, and what they answer. */
  const api: Readonly<Record<string, { readonly method: 'GET' | 'POST'; readonly run: (request: IncomingMessage, body: Uint8Array | undefined) => Answer }>> = {
    [CONSOLE_PATHS.challenge]: { method: 'POST', run: (request) => issueChallenge(request) },
    [CONSOLE_PATHS.signIn]: { method: 'POST', run: (request, body) => signIn(request, body ?? new Uint8Array()) },
    [CONSOLE_PATHS.signOut]: {
      method: 'POST',
      run: (request) => {
        const text = bearer(request)
        const session = sessionOf(text)
        if (session === undefined) return notSignedIn()
        endSession(sha256Hex(text!), session, 'The person signed out of the console.')
        return { status: 204 }
      },
    },
    [CONSOLE_PATHS.groups]: {
      method: 'GET',
      run: (request) => {
        const session = sessionOf(bearer(request))
        return session === undefined ? notSignedIn() : groupsOf(session)
      },
    },
    [CONSOLE_PATHS.agents]: {
      method: 'GET',
      run: (request) => (sessionOf(bearer(request)) === undefined ? notSignedIn() : agentsOf()),
    },
    [CONSOLE_PATHS.time]: { method: 'GET', run: () => ({ status: 200, body: { now: stamp(now()) } satisfies ConsoleTime }) },
  }

  async function answerApi(request: IncomingMessage, path: string): Promise<Answer> {
    const endpoint = api[path]
    if (endpoint === undefined) return refusal(404, new ProtocolError('PROTOCOL_VIOLATION', `The console has no API ${path}.`, { details: { reason: 'unknown-path' } }))
    // A foreign Origin is refused before anything else, a preflight's OPTIONS included: only a
    // GET may come without one (browsers omit it on same-origin GETs).
    const forbidden = originRefusal(request, request.method !== 'GET')
    if (forbidden !== undefined) return { ...refusal(403, forbidden), close: request.method !== 'GET' }
    if (request.method !== endpoint.method) {
      return refusal(405, new ProtocolError('PROTOCOL_VIOLATION', `${path} takes ${endpoint.method} only.`, { details: { reason: 'method', allow: endpoint.method } }), { allow: endpoint.method })
    }
    if (endpoint.method === 'GET') return endpoint.run(request, undefined)
    const tooLarge = (): Answer => ({ ...refusal(413, new ProtocolError('PROTOCOL_VIOLATION', `The request body exceeds ${limits.maxBodyBytes} bytes.`, { details: { reason: 'body-too-large', maxBytes: limits.maxBodyBytes } })), close: true })
    if (declaresMore(request, limits.maxBodyBytes)) return tooLarge()
    if (path === CONSOLE_PATHS.signIn) {
      const type = header(request, 'content-type')?.split(';')[0]?.trim().toLowerCase()
      if (type !== 'application/json') return { ...refusal(415, new ProtocolError('PROTOCOL_VIOLATION', 'A sign-in request is application/json.', { details: { reason: 'content-type' } })), close: true }
    }
    if (reading >= limits.maxConcurrentRequests) {
      return { ...refusal(503, new ProtocolError('RATE_LIMITED', 'The console is busy; retry shortly.', { retryAfterMs: 1000, details: { maxConcurrentRequests: limits.maxConcurrentRequests } }), { 'retry-after': '1' }), close: true }
    }
    reading++
    let body: Uint8Array | undefined
    try {
      body = await readBody(request, limits.maxBodyBytes)
    } finally {
      reading--
    }
    if (body === undefined) return tooLarge()
    return endpoint.run(request, body)
  }

  // -- The app -------------------------------------------------------------------------------

  /** The app, loaded once it has been built; a failed load is tried again at the next request (the app may be built meanwhile). */
  function loadedApp(): Promise<LoadedApp> {
    app ??= loadApp(appDir, limits.maxAppBytes).catch((error: unknown) => {
      app = undefined
      throw error
    })
    return app
  }

  async function answerApp(request: IncomingMessage, name: string): Promise<Answer> {
    if (request.method !== 'GET' && request.method !== 'HEAD') return { status: 405, headers: { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }, body: 'GET only.\n' }
    let files: LoadedApp
    try {
      files = await loadedApp()
    } catch (error) {
      if (error instanceof AppUnavailableError && error.reason === 'missing') {
        return { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, body: 'The console app has not been built: run npm run build -w @weft/console\n' }
      }
      log({ level: 'error', msg: 'console app unavailable', detail: (error as Error).message, appDir })
      return { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, body: 'The console app cannot be served; the server log says why.\n' }
    }
    const file = files.get(name)
    if (file === undefined) return { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Not found.\n' }
    const headers = { 'content-type': file.contentType, etag: file.etag, 'cache-control': 'no-cache' }
    if (header(request, 'if-none-match') === file.etag) return { status: 304, headers }
    return { status: 200, headers, body: request.method === 'HEAD' ? undefined : file.body }
  }

  // -- Dispatch --------------------------------------------------------------------------------

  function write(request: IncomingMessage, response: ServerResponse, answer: Answer, isApi: boolean): void {
    if (response.headersSent) return
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value)
    // HSTS only where the answer itself came over TLS: a plain listener cannot promise https.
    if ((request.socket as { encrypted?: boolean }).encrypted === true) response.setHeader('strict-transport-security', 'max-age=31536000')
    if (isApi) response.setHeader('cache-control', 'no-store')
    for (const [name, value] of Object.entries(answer.headers ?? {})) response.setHeader(name, value)
    if (answer.close === true) {
      // The body was left unread: the connection cannot carry another request.
      response.shouldKeepAlive = false
      response.setHeader('connection', 'close')
      response.once('finish', () => request.socket.destroySoon())
    }
    let bytes: Buffer | undefined
    if (Buffer.isBuffer(answer.body)) bytes = answer.body
    else if (typeof answer.body === 'string') bytes = Buffer.from(answer.body)
    else if (answer.body !== undefined) {
      response.setHeader('content-type', 'application/json')
      bytes = Buffer.from(JSON.stringify(answer.body))
    }
    if (bytes !== undefined && answer.status !== 304) response.setHeader('content-length', bytes.byteLength)
    response.writeHead(answer.status)
    response.end(request.method === 'HEAD' || answer.status === 304 ? undefined : bytes)
  }

  function handle(request: IncomingMessage, response: ServerResponse): boolean {
    const url = request.url ?? ''
    const path = url.split('?', 1)[0]!
    if (path !== '/console' && !path.startsWith('/console/')) return false
    const isApi = path.startsWith('/console/api/')
    const answering = async (): Promise<Answer> => {
      if (closed) return refusal(503, new ProtocolError('RATE_LIMITED', 'The server is shutting down.', { retryAfterMs: 1000 }), { 'retry-after': '1' })
      if (path === '/console') return { status: 308, headers: { location: CONSOLE_PATHS.app, 'content-type': 'text/plain; charset=utf-8' }, body: `See ${CONSOLE_PATHS.app}\n` }
      if (isApi) return answerApi(request, path)
      if (path === CONSOLE_PATHS.socket) return { status: 426, headers: { upgrade: 'websocket', 'content-type': 'text/plain; charset=utf-8' }, body: `${CONSOLE_PATHS.socket} is the console's WebSocket (${CONSOLE_PROTOCOL}).\n` }
      // The name is only ever a key of the manifest's map, never a path.
      return answerApp(request, path === CONSOLE_PATHS.app ? APP_INDEX : path.slice(CONSOLE_PATHS.app.length))
    }
    answering().then(
      (answer) => write(request, response, answer, isApi),
      (error: unknown) => {
        log({ level: 'error', msg: 'console request failed', path: path.slice(0, 300), detail: (error as Error)?.message ?? String(error) })
        write(request, response, refusal(500, new ProtocolError('INTERNAL_ERROR', 'The console could not answer.')), true)
      },
    )
    return true
  }

  const gate: ConsoleGate = {
    path: CONSOLE_PATHS.socket,
    protocol: CONSOLE_PROTOCOL,
    admit(request) {
      if (closed) return { ok: false, status: 503, error: new ProtocolError('RATE_LIMITED', 'The server is shutting down.', { retryAfterMs: 1000 }) }
      // A browser always sends Origin with a WebSocket: its absence means no page of ours.
      const forbidden = originRefusal(request, true)
      if (forbidden !== undefined) return { ok: false, status: 403, error: forbidden }
      const offered = (header(request, 'sec-websocket-protocol') ?? '').split(',').map((p) => p.trim())
      const text = offered.find((p) => p.startsWith(SESSION_PROTOCOL_PREFIX))?.slice(SESSION_PROTOCOL_PREFIX.length)
      const session = offered.includes(CONSOLE_PROTOCOL) ? sessionOf(text) : undefined
      if (session === undefined) return { ok: false, status: 401, error: new ProtocolError('AUTH_REQUIRED', `Sign in to the console first: open the WebSocket with the subprotocols ${CONSOLE_PROTOCOL} and ${SESSION_PROTOCOL_PREFIX}TOKEN.`) }
      return { ok: true, principal: session.principal, keyId: session.keyId, sessionId: session.sessionId, expiresAtMs: session.expiresAtMs }
    },
  }

  return {
    handle,
    gate,
    attach(wireServer) {
      host = wireServer
    },
    get sessionCount() {
      prune()
      return sessions.size
    },
    close() {
      if (closed) return
      closed = true
      for (const [key, session] of [...sessions]) endSession(key, session, 'The server is shutting down.')
      pending.clear()
    },
  }
}
