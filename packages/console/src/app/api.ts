/**
 * The console's HTTP API as the page calls it (paths and shapes from `src/shared/sign-in.ts`): the
 * sign-in challenge and answer, the Groups list, the Authority's clock and sign-out. The bearer
 * token lives in memory only (no cookie, no storage), so no request the browser makes on its own
 * carries any authority.
 * @module
 */
import { CONSOLE_PATHS, type ConsoleAgent, type ConsoleGroup, type ConsoleSession, type ConsoleTime, type SignInChallenge, type SignInRequest } from '../shared/sign-in.js'

/** A refusal from the API: the §19 code of its error body and the HTTP status. */
export class ApiError extends Error {
  readonly code: string
  readonly status: number
  constructor(status: number, code: string, message: string) {
    super(message)
    this.name = 'ApiError'
    this.status = status
    this.code = code
  }
}

async function call<T>(method: 'GET' | 'POST', path: string, token: string | undefined, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (token !== undefined) headers['authorization'] = `Bearer ${token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(path, { method, headers, cache: 'no-store', credentials: 'omit', ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = text === '' ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (!response.ok) {
    const error = (parsed as { error?: { code?: unknown; message?: unknown } } | undefined)?.error
    const code = typeof error?.code === 'string' ? error.code : response.status === 401 ? 'AUTH_REQUIRED' : 'INTERNAL_ERROR'
    throw new ApiError(response.status, code, typeof error?.message === 'string' ? error.message : `HTTP ${response.status}`)
  }
  return parsed as T
}

/** `POST` {@link CONSOLE_PATHS}.challenge. */
export function fetchChallenge(): Promise<SignInChallenge> {
  return call('POST', CONSOLE_PATHS.challenge, undefined, {})
}

/** `POST` {@link CONSOLE_PATHS}.signIn. */
export function postSignIn(request: SignInRequest): Promise<ConsoleSession> {
  return call('POST', CONSOLE_PATHS.signIn, undefined, request)
}

/** `GET` {@link CONSOLE_PATHS}.groups. */
export async function fetchGroups(token: string): Promise<ConsoleGroup[]> {
  const answer = await call<{ groups?: ConsoleGroup[] }>('GET', CONSOLE_PATHS.groups, token)
  return Array.isArray(answer?.groups) ? answer.groups : []
}

/** `GET` {@link CONSOLE_PATHS}.agents with the token: the Organization's registered Agents. */
export async function fetchAgents(token: string): Promise<ConsoleAgent[]> {
  const answer = await call<{ agents?: ConsoleAgent[] }>('GET', CONSOLE_PATHS.agents, token)
  return Array.isArray(answer?.agents) ? answer.agents : []
}

/** `POST` {@link CONSOLE_PATHS}.signOut; failures are ignored (the token is dropped either way). */
export async function postSignOut(token: string): Promise<void> {
  try {
    await call('POST', CONSOLE_PATHS.signOut, token, {})
  } catch {
    // The page forgets the token whatever the server answers.
  }
}

/**
 * The Authority's time (`GET` {@link CONSOLE_PATHS}.time). Every Command and Approval the page
 * signs is dated with it, fetched just before signing (§6.4 freshness): the Authority's clock may
 * not be the browser's (the demo runs on a virtual clock).
 */
export async function authorityNow(token: string): Promise<string> {
  const answer = await call<ConsoleTime>('GET', CONSOLE_PATHS.time, token)
  if (typeof answer?.now !== 'string') throw new ApiError(500, 'INTERNAL_ERROR', 'the server sent no time')
  return answer.now
}
