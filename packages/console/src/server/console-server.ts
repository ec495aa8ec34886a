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
 *
 * This module routes requests and admits WebSockets; the sign-in and its sessions are
 * `sessions.ts`, what a person may list is `listings.ts`, the app's files are `app-files.ts`, and
 * answers are written by `http.ts`.
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { type AuthorityState, type Clock, type RandomSource } from '@weft/authority'
import { ProtocolError, UsageError, type KeyResolver } from '@weft/codec'
import { systemClock, systemRandom } from '@weft/codec/time'
import { CONSOLE_PATHS, CONSOLE_PROTOCOL, SESSION_PROTOCOL_PREFIX, type ConsoleSession, type ConsoleTime, type SignInChallenge } from '../shared/sign-in.js'
import { APP_INDEX, appAnswers, defaultAppDir } from './app-files.js'
import { declaresMore, header, readBody, refusal as refusalAt, stamp, writeAnswer, type Answer } from './http.js'
import { agentsOf, groupsOf } from './listings.js'
import { bearer, createSignIns } from './sessions.js'

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
  /** Random bytes for challenges, tokens and session IDs. Default: the platform CSPRNG (`systemRandom` of `@weft/codec`). */
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
  const clock = options.clock ?? systemClock
  const random = options.random ?? systemRandom
  const log = options.log ?? (() => undefined)
  const appDir = options.appDir ?? defaultAppDir()
  if (!Array.isArray(options.allowedOrigins) || options.allowedOrigins.length === 0) throw new UsageError('createConsoleServer: allowedOrigins must name at least one origin')
  const allowed = new Set(options.allowedOrigins.map(originOf))
  const limits: ConsoleLimits = Object.fromEntries((Object.keys(CONSOLE_LIMITS) as (keyof ConsoleLimits)[]).map((name) => [name, positiveLimit(options.limits, name)])) as unknown as ConsoleLimits

  let host: HumanSessionHost | undefined
  let closed = false
  /** API requests whose bodies are being read now ({@link ConsoleLimits.maxConcurrentRequests}). */
  let reading = 0

  const now = (): number => clock.now()
  const refusal = (status: number, error: ProtocolError, headers?: Record<string, string>): Answer => refusalAt(status, error, stamp(now()), headers)
  const signIns = createSignIns({ registry: options.registry, now, random, limits, log, refusal, host: () => host })
  const answerApp = appAnswers(appDir, limits.maxAppBytes, log)

  /**
   * §5, CSRF: a request that states an `Origin` must state an allowed one, and one that changes
   * state (POST) must state one; a browser sends it on every POST and WebSocket, so its absence
   * there means a client that is not the console's page. A same-origin `GET` from the page may lack
   * it (browsers omit it there), which is harmless: a `GET` changes nothing and needs the token.
   */
  function originRefusal(request: IncomingMessage, required: boolean): ProtocolError | undefined {
    const origin = header(request, 'origin')
    if (origin === undefined ? required : !allowed.has(origin))
      return new ProtocolError('AUTH_FORBIDDEN', 'Requests to the console must come from its own pages (Origin).', { details: { reason: 'origin' } })
    // Fetch Metadata: a browser that says the request is cross-site is believed.
    if (header(request, 'sec-fetch-site') === 'cross-site')
      return new ProtocolError('AUTH_FORBIDDEN', 'Requests to the console must come from its own pages (Sec-Fetch-Site).', { details: { reason: 'origin' } })
    return undefined
  }

  // -- The API -------------------------------------------------------------------------------

  const notSignedIn = (): Answer => refusal(401, new ProtocolError('AUTH_REQUIRED', 'Sign in to the console first (Authorization: Bearer TOKEN).'), { 'www-authenticate': 'Bearer' })

  /** The API endpoints: their method, whether they take a body, and what they answer. */
  const api: Readonly<Record<string, { readonly method: 'GET' | 'POST'; readonly run: (request: IncomingMessage, body: Uint8Array | undefined) => Answer }>> = {
    [CONSOLE_PATHS.challenge]: { method: 'POST', run: (request) => signIns.issueChallenge(request) },
    [CONSOLE_PATHS.signIn]: { method: 'POST', run: (request, body) => signIns.signIn(request, body ?? new Uint8Array()) },
    [CONSOLE_PATHS.signOut]: { method: 'POST', run: (request) => (signIns.signOut(bearer(request)) ? { status: 204 } : notSignedIn()) },
    [CONSOLE_PATHS.groups]: {
      method: 'GET',
      run: (request) => {
        const session = signIns.sessionOf(bearer(request))
        return session === undefined ? notSignedIn() : { status: 200, body: { groups: groupsOf(options.authority.state, session.principal) } }
      },
    },
    [CONSOLE_PATHS.agents]: {
      method: 'GET',
      run: (request) => (signIns.sessionOf(bearer(request)) === undefined ? notSignedIn() : { status: 200, body: { agents: agentsOf(options.authority.state) } }),
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
    const tooLarge = (): Answer => ({
      ...refusal(413, new ProtocolError('PROTOCOL_VIOLATION', `The request body exceeds ${limits.maxBodyBytes} bytes.`, { details: { reason: 'body-too-large', maxBytes: limits.maxBodyBytes } })),
      close: true,
    })
    if (declaresMore(request, limits.maxBodyBytes)) return tooLarge()
    if (path === CONSOLE_PATHS.signIn) {
      const type = header(request, 'content-type')?.split(';')[0]?.trim().toLowerCase()
      if (type !== 'application/json')
        return { ...refusal(415, new ProtocolError('PROTOCOL_VIOLATION', 'A sign-in request is application/json.', { details: { reason: 'content-type' } })), close: true }
    }
    if (reading >= limits.maxConcurrentRequests) {
      return {
        ...refusal(503, new ProtocolError('RATE_LIMITED', 'The console is busy; retry shortly.', { retryAfterMs: 1000, details: { maxConcurrentRequests: limits.maxConcurrentRequests } }), {
          'retry-after': '1',
        }),
        close: true,
      }
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

  // -- Dispatch --------------------------------------------------------------------------------

  function handle(request: IncomingMessage, response: ServerResponse): boolean {
    const url = request.url ?? ''
    const path = url.split('?', 1)[0]!
    if (path !== '/console' && !path.startsWith('/console/')) return false
    const isApi = path.startsWith('/console/api/')
    const answering = async (): Promise<Answer> => {
      if (closed) return refusal(503, new ProtocolError('RATE_LIMITED', 'The server is shutting down.', { retryAfterMs: 1000 }), { 'retry-after': '1' })
      if (path === '/console') return { status: 308, headers: { location: CONSOLE_PATHS.app, 'content-type': 'text/plain; charset=utf-8' }, body: `See ${CONSOLE_PATHS.app}\n` }
      if (isApi) return answerApi(request, path)
      if (path === CONSOLE_PATHS.socket)
        return { status: 426, headers: { upgrade: 'websocket', 'content-type': 'text/plain; charset=utf-8' }, body: `${CONSOLE_PATHS.socket} is the console's WebSocket (${CONSOLE_PROTOCOL}).\n` }
      // The name is only ever a key of the manifest's map, never a path.
      return answerApp(request, path === CONSOLE_PATHS.app ? APP_INDEX : path.slice(CONSOLE_PATHS.app.length))
    }
    answering().then(
      (answer) => writeAnswer(request, response, answer, isApi),
      (error: unknown) => {
        log({ level: 'error', msg: 'console request failed', path: path.slice(0, 300), detail: (error as Error)?.message ?? String(error) })
        writeAnswer(request, response, refusal(500, new ProtocolError('INTERNAL_ERROR', 'The console could not answer.')), true)
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
      const session = offered.includes(CONSOLE_PROTOCOL) ? signIns.sessionOf(text) : undefined
      if (session === undefined)
        return {
          ok: false,
          status: 401,
          error: new ProtocolError('AUTH_REQUIRED', `Sign in to the console first: open the WebSocket with the subprotocols ${CONSOLE_PROTOCOL} and ${SESSION_PROTOCOL_PREFIX}TOKEN.`),
        }
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
      return signIns.count()
    },
    close() {
      if (closed) return
      closed = true
      signIns.endAll('The server is shutting down.')
    },
  }
}
