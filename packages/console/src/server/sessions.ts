/**
 * The console's sign-in, server side (the contract is `shared/sign-in.ts`): single-use
 * challenges bound to the page's origin, the check of a signed answer against the Registry
 * (§6.4: the key resolves to the human Principal and is valid now), and the sessions it opens,
 * each held by the SHA-256 of its bearer token only.
 *
 * Every failed sign-in gets one answer, which tells nothing of what failed (§6.4 withholds it);
 * the reason goes to the log, and the time taken is that of one signature check whatever failed.
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { RandomSource } from '@weft/authority'
import {
  decodeBase64url,
  encodeBase64url,
  importPublicKey,
  keyPairFromSeed,
  parseStrictJson,
  parseTimestamp,
  ProtocolError,
  verifyEd25519,
  withinInterval,
  type KeyResolver,
  type VerifiedPublicKey,
} from '@weft/codec'
import { signInTranscriptBytes, type ConsoleSession, type SignInChallenge } from '../shared/sign-in.js'
import type { ConsoleLimits, ConsoleLogEntry, HumanSessionHost } from './console-server.js'
import { header, stamp, type Answer } from './http.js'

/** A signed-in person. */
export interface Session {
  readonly sessionId: string
  readonly principal: { readonly type: 'human'; readonly id: string }
  readonly keyId: string
  readonly expiresAtMs: number
}

/** What the sign-in needs of the server. */
export interface SignInOptions {
  /** Resolves the keys people sign in with (the Authority's Registry). */
  readonly registry: KeyResolver
  readonly now: () => number
  readonly random: RandomSource
  readonly limits: ConsoleLimits
  readonly log: (entry: ConsoleLogEntry) => void
  /** A refusal answer, stamped now. */
  readonly refusal: (status: number, error: ProtocolError, headers?: Record<string, string>) => Answer
  /** The wire server, once attached: a session that ends closes its WebSockets there. */
  readonly host: () => HumanSessionHost | undefined
}

/** The challenges and sessions of one console server. */
export interface SignIns {
  /** `POST /console/api/challenge`: a {@link SignInChallenge} for the request's `Origin`, or 503 when too many are pending. */
  issueChallenge(request: IncomingMessage): Answer
  /** `POST /console/api/sign-in` with its body: a {@link ConsoleSession}, or the one refusal. */
  signIn(request: IncomingMessage, body: Uint8Array): Answer
  /** The live session of bearer token `text`, if any (an expired one, or one whose key lost standing, ends here). */
  sessionOf(text: string | undefined): Session | undefined
  /** Ends the session of bearer token `text` (a sign-out); returns `false` when it holds none. */
  signOut(text: string | undefined): boolean
  /** The sessions signed in and not expired. */
  count(): number
  /** Ends every session, telling their WebSockets `why`, and forgets every challenge. */
  endAll(why: string): void
}

/** A challenge handed out and not yet answered. */
interface PendingChallenge {
  readonly challenge: SignInChallenge
  readonly expiresAtMs: number
}

/** The one answer to every failed sign-in: which check failed is the server log's, never the caller's. */
const SIGN_IN_REFUSED = 'The sign-in does not verify.'

/** Verifications of a key nobody holds, so that an unknown person takes as long to refuse as a wrong signature. */
const DECOY_KEY = importPublicKey(keyPairFromSeed(new Uint8Array(32).fill(1)).publicKey) as VerifiedPublicKey

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** Whether two strings are equal, in time that depends on their lengths only. */
function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.byteLength === y.byteLength && timingSafeEqual(x, y)
}

/** The bearer token of `Authorization: Bearer TOKEN`. */
export function bearer(request: IncomingMessage): string | undefined {
  const value = header(request, 'authorization')
  const match = value === undefined ? null : /^Bearer ([A-Za-z0-9_-]+)$/.exec(value)
  return match?.[1]
}

/** Creates the sign-in state of one console server. */
export function createSignIns(options: SignInOptions): SignIns {
  const { limits, log, now, refusal } = options
  const pending = new Map<string, PendingChallenge>()
  /** Sessions by the SHA-256 of their token: the token itself is kept nowhere. */
  const sessions = new Map<string, Session>()

  const token = (bytes: number): string => {
    const drawn = options.random(bytes)
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
    const ended = options.host()?.endHumanSessions(session.sessionId, new ProtocolError('AUTH_REQUIRED', why)) ?? 0
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
    if (!keyCheck(session.keyId, session.principal.id, t).ok) {
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

  function issueChallenge(request: IncomingMessage): Answer {
    prune()
    if (pending.size >= limits.maxPendingChallenges) {
      const oldest = Math.min(...[...pending.values()].map((p) => p.expiresAtMs))
      const retryAfterMs = Math.max(1000, oldest - now())
      log({ level: 'warn', msg: 'console challenge refused', reason: 'too many pending challenges', maxPendingChallenges: limits.maxPendingChallenges })
      return refusal(503, new ProtocolError('RATE_LIMITED', 'Too many sign-ins are under way; retry shortly.', { retryAfterMs, details: { maxPendingChallenges: limits.maxPendingChallenges } }), {
        'retry-after': String(Math.ceil(retryAfterMs / 1000)),
      })
    }
    const t = now()
    const challenge: SignInChallenge = { challenge: token(32), origin: header(request, 'origin')!, issuedAt: stamp(t), expiresAt: stamp(t + limits.challengeTtlMs) }
    pending.set(challenge.challenge, { challenge, expiresAtMs: t + limits.challengeTtlMs })
    return { status: 200, body: challenge }
  }

  function signIn(request: IncomingMessage, body: Uint8Array): Answer {
    const parsed = parseStrictJson(body, { maxBytes: limits.maxBodyBytes })
    if (!parsed.ok)
      return refusal(400, new ProtocolError('PROTOCOL_VIOLATION', `The sign-in request is not strict JSON: ${parsed.message}.`, { details: { reason: parsed.reason, offset: parsed.offset } }))
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
      return refusal(503, new ProtocolError('RATE_LIMITED', 'Too many people are signed in; retry later.', { retryAfterMs: 60_000, details: { maxSessions: limits.maxSessions } }), {
        'retry-after': '60',
      })
    }
    const secret = token(32)
    const session: Session = { sessionId: `urn:weft:console-session:${token(16)}`, principal: { type: 'human', id: request_.principalId }, keyId: request_.keyId, expiresAtMs: t + limits.sessionTtlMs }
    sessions.set(sha256Hex(secret), session)
    log({ level: 'info', msg: 'console signed in', principalId: session.principal.id, keyId: session.keyId, sessionId: session.sessionId })
    const answer: ConsoleSession = { token: secret, principal: session.principal, expiresAt: stamp(session.expiresAtMs) }
    return { status: 200, body: answer }
  }

  return {
    issueChallenge,
    signIn,
    sessionOf,
    signOut(text) {
      const session = sessionOf(text)
      if (session === undefined) return false
      endSession(sha256Hex(text!), session, 'The person signed out of the console.')
      return true
    },
    count() {
      prune()
      return sessions.size
    },
    endAll(why) {
      for (const [key, session] of [...sessions]) endSession(key, session, why)
      pending.clear()
    },
  }
}
