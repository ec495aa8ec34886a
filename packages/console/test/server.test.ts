/**
 * `createConsoleServer` on a plain `node:http` server, against an Authority of a test
 * Organization: signing in with a Registry key (§6.4) and every way it fails reading the same, the
 * Origin checks that stand in for CSRF tokens, bearer tokens, the Groups a person may see (§8,
 * a hidden one exactly as an absent one), sign-out, the bounds, the WebSocket admission and the
 * app files with their headers.
 */
import { createHash } from 'node:crypto'
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Authority } from '@weft/authority'
import { createTestOrganization, type TestPrincipal } from '@weft/authority/testing'
import { encodeBase64url, type ProtocolError } from '@weft/codec'
import type { CommandPayload } from '@weft/spec'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONSOLE_PATHS, CONSOLE_PROTOCOL, sessionProtocols, signInTranscriptBytes, type ConsoleGroup, type ConsoleSession, type SignInChallenge } from '../src/shared/sign-in.js'
import { CONSOLE_CSP, createConsoleServer, type ConsoleLogEntry, type ConsoleServer, type ConsoleServerOptions } from '../src/server/index.js'

const org = createTestOrganization({ organizationId: 'urn:weft:console-test:org', humans: ['ada', 'grace', 'lin'], agents: ['coordinator'] })
const { ada, grace, lin } = org.humans
const GROUP_A = 'urn:weft:console-test:group:a'
const GROUP_B = 'urn:weft:console-test:group:b'

/** The test's clock: the Authority's and the console's. */
let t = Date.parse('2026-03-01T00:00:00Z')
const clock = { now: () => t }

function mission(name: string, coordinatorAgentId: string): CommandPayload<'mission.create'> {
  return {
    missionId: `urn:weft:console-test:mission:${name}`,
    title: `Mission ${name}`,
    objective: 'Ship the release.',
    definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
    deadline: new Date(t + 30 * 86_400_000).toISOString(),
    budget: { currency: 'USD', financialLimit: 100 },
    approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    coordinatorAgentId,
    coordinatorLeaseSeconds: 86_400,
  }
}

interface Reply {
  readonly status: number
  readonly headers: IncomingMessage['headers']
  readonly text: string
  // biome-ignore lint/suspicious/noExplicitAny: the tests read whatever JSON the server answered, field by field
  readonly json: any
}

interface Call {
  readonly method?: string
  readonly origin?: string | null
  readonly token?: string
  readonly body?: string
  readonly headers?: Record<string, string>
  /** Sends the body chunked, without a Content-Length. */
  readonly chunked?: boolean
}

/** One HTTP request to `base`; `origin` defaults to the allowed one, `null` sends none. */
function call(base: string, path: string, options: Call = {}): Promise<Reply> {
  const url = new URL(base)
  const headers: Record<string, string> = { ...options.headers }
  const origin = options.origin === undefined ? base : options.origin
  if (origin !== null) headers['origin'] = origin
  if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json'
    if (options.chunked !== true) headers['content-length'] = String(Buffer.byteLength(options.body))
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: options.method ?? 'GET', headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
      })
    })
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A refusal that leaves the rest of a body unread may end the connection under the writer.
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') return
      reject(error)
    })
    if (options.body !== undefined) req.write(options.body)
    req.end()
  })
}

/** A console on its own plain HTTP server; other paths get the wire server's 426. */
async function serve(
  options: Partial<ConsoleServerOptions> & { readonly origins?: (port: number) => string[] } = {},
): Promise<{ base: string; consoleServer: ConsoleServer; server: Server; logs: ConsoleLogEntry[] }> {
  const logs: ConsoleLogEntry[] = []
  let consoleServer: ConsoleServer | undefined
  const server = createServer((request, response) => {
    if (consoleServer?.handle(request, response) !== true) response.writeHead(426, { 'content-type': 'text/plain' }).end('WebSocket only.\n')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const base = `http://127.0.0.1:${port}`
  consoleServer = createConsoleServer({
    registry: org.registry,
    authority,
    allowedOrigins: options.origins?.(port) ?? [base, `http://localhost:${port}`],
    clock,
    appDir: appDir,
    log: (entry) => logs.push(entry),
    ...options,
  })
  servers.push(server)
  return { base, consoleServer, server, logs }
}

/** Signs `challenge` as `who` (or with `signer`'s private key under `who`'s key ID). */
function signed(challenge: SignInChallenge, who: TestPrincipal<'human'>, overrides: { principalId?: string; keyId?: string; signer?: TestPrincipal } = {}): string {
  const person = { principalId: overrides.principalId ?? who.actor.id, keyId: overrides.keyId ?? who.signingKey.keyId }
  const signature = encodeBase64url((overrides.signer ?? who).signingKey.pair.sign(signInTranscriptBytes(challenge, person)))
  return JSON.stringify({ ...person, challenge: challenge.challenge, signature })
}

async function challengeFrom(base: string, origin: string = base): Promise<SignInChallenge> {
  const reply = await call(base, CONSOLE_PATHS.challenge, { method: 'POST', origin })
  expect(reply.status, reply.text).toBe(200)
  return reply.json as SignInChallenge
}

async function signIn(base: string, who: TestPrincipal<'human'>): Promise<ConsoleSession> {
  const challenge = await challengeFrom(base)
  const reply = await call(base, CONSOLE_PATHS.signIn, { method: 'POST', body: signed(challenge, who) })
  expect(reply.status, reply.text).toBe(200)
  return reply.json as ConsoleSession
}

const servers: Server[] = []
let authority: Authority
let appDir: string
let base: string
let consoleServer: ConsoleServer
let logs: ConsoleLogEntry[]

beforeAll(async () => {
  appDir = await mkdtemp(join(tmpdir(), 'weft-console-app-'))
  await mkdir(join(appDir, 'assets'))
  await writeFile(join(appDir, 'index.html'), '<!doctype html><title>Weft</title><script src="app.js"></script>\n')
  await writeFile(join(appDir, 'app.js'), 'console.log("weft")\n')
  await writeFile(join(appDir, 'app.css'), 'body { margin: 0 }\n')
  await writeFile(join(appDir, 'assets', 'logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>\n')
  await writeFile(join(appDir, 'secret.txt'), 'not listed\n')
  await writeFile(join(appDir, 'manifest.json'), JSON.stringify({ files: ['index.html', 'app.js', 'app.css', { path: 'assets/logo.svg' }] }))
  const started = await org.start({ groupId: GROUP_A, clock })
  authority = started.authority
  const { clientOf } = started
  // Group A: Ada's Mission; Lin joins it as an observer. Group B: Grace's Mission.
  await clientOf(ada).missionCreate(mission('a', org.agents.coordinator.actor.id), { groupId: GROUP_A })
  await clientOf(org.agents.coordinator).membershipChange(
    { membershipId: `${GROUP_A}:membership:lin`, member: lin.actor, role: 'observer', state: 'active', scopes: ['group:read'] },
    { groupId: GROUP_A },
  )
  await clientOf(grace).missionCreate(mission('b', org.agents.coordinator.actor.id), { groupId: GROUP_B })
  ;({ base, consoleServer, logs } = await serve())
})

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
  await rm(appDir, { recursive: true, force: true })
})

const REFUSED = { code: 'AUTH_INVALID_SIGNATURE', message: 'The sign-in does not verify.', retryable: false }

/** The refusal body without its time, which is the only part allowed to differ. */
function refusal(reply: Reply): unknown {
  const { occurredAt, ...rest } = (reply.json as { error: { occurredAt: string } }).error
  expect(typeof occurredAt).toBe('string')
  return { status: reply.status, keys: Object.keys(reply.json as object), error: rest }
}

describe('signing in (§6.4 keys, §5)', () => {
  it("hands out a single-use challenge of 32 random bytes for the page's origin, valid 60 s", async () => {
    const challenge = await challengeFrom(base)
    expect(Buffer.from(challenge.challenge, 'base64url')).toHaveLength(32)
    expect(challenge.origin).toBe(base)
    expect(Date.parse(challenge.expiresAt) - Date.parse(challenge.issuedAt)).toBe(60_000)
    expect(challenge.issuedAt).toBe(new Date(t).toISOString())
  })

  it('signs in with the right key: a bearer token of 32 bytes, the person, and when it ends (12 h)', async () => {
    const session = await signIn(base, ada)
    expect(Buffer.from(session.token, 'base64url')).toHaveLength(32)
    expect(session.principal).toEqual(ada.actor)
    expect(Date.parse(session.expiresAt) - t).toBe(12 * 3600_000)
    expect(logs.some((l) => l.msg === 'console signed in' && l['principalId'] === ada.actor.id)).toBe(true)
    // The token is kept nowhere in the log.
    expect(JSON.stringify(logs)).not.toContain(session.token)
  })

  it('refuses every other way with the same 401 body, the reason in the log only', async () => {
    const outsider = createTestOrganization({ organizationId: 'urn:weft:console-test:other', humans: ['eve'] }).humans.eve
    const attempts: [string, () => Promise<Reply>][] = [
      // Grace's key under Ada's name: the key belongs to another principal.
      ["another human's key", async () => call(base, CONSOLE_PATHS.signIn, { method: 'POST', body: signed(await challengeFrom(base), ada, { keyId: grace.signingKey.keyId, signer: grace }) })],
      // Ada's key ID, Grace's private key: the signature does not verify.
      ['wrong private key', async () => call(base, CONSOLE_PATHS.signIn, { method: 'POST', body: signed(await challengeFrom(base), ada, { signer: grace }) })],
      ['unknown person', async () => call(base, CONSOLE_PATHS.signIn, { method: 'POST', body: signed(await challengeFrom(base), outsider) })],
      [
        "an Agent's key",
        async () =>
          call(base, CONSOLE_PATHS.signIn, {
            method: 'POST',
            body: signed(await challengeFrom(base), ada, { principalId: org.agents.coordinator.actor.id, keyId: org.agents.coordinator.signingKey.keyId, signer: org.agents.coordinator }),
          }),
      ],
      [
        'bad signature',
        async () => {
          const body = JSON.parse(signed(await challengeFrom(base), ada)) as Record<string, string>
          return call(base, CONSOLE_PATHS.signIn, { method: 'POST', body: JSON.stringify({ ...body, signature: encodeBase64url(new Uint8Array(64).fill(9)) }) })
        },
      ],
      [
        'replayed challenge',
        async () => {
          const body = signed(await challengeFrom(base), ada)
          expect((await call(base, CONSOLE_PATHS.signIn, { method: 'POST', body })).status).toBe(200)
          return call(base, CONSOLE_PATHS.signIn, { method: 'POST', body })
        },
      ],
      [
        'expired challenge',
        async () => {
          const body = signed(await challengeFrom(base), ada)
          t += 60_000
          return call(base, CONSOLE_PATHS.signIn, { method: 'POST', body })
        },
      ],
      [
        'challenge of another origin',
        async () => {
          // Issued to a page of http://localhost:PORT (allowed too), answered from the 127.0.0.1 page.
          const other = base.replace('127.0.0.1', 'localhost')
          return call(base, CONSOLE_PATHS.signIn, { method: 'POST', body: signed(await challengeFrom(base, other), ada) })
        },
      ],
      [
        'a challenge never issued',
        async () =>
          call(base, CONSOLE_PATHS.signIn, {
            method: 'POST',
            body: signed({ challenge: encodeBase64url(new Uint8Array(32)), origin: base, issuedAt: new Date(t).toISOString(), expiresAt: new Date(t + 60_000).toISOString() }, ada),
          }),
      ],
    ]
    const bodies: unknown[] = []
    for (const [name, attempt] of attempts) {
      const reply = await attempt()
      expect([name, reply.status]).toEqual([name, 401])
      expect(reply.json.error).toMatchObject(REFUSED)
      bodies.push(refusal(reply))
    }
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1)
    const reasons = logs.filter((l) => l.msg === 'console sign-in refused').map((l) => l['reason'])
    expect(reasons).toEqual([
      'the key belongs to another principal',
      'the signature does not verify',
      'key unknown-key',
      'the key belongs to a agent, not a human',
      'the signature does not verify',
      'the challenge is unknown, used already or expired',
      'the challenge expired',
      'the challenge was issued for another origin',
      'the challenge is unknown, used already or expired',
    ])
  })

  it('refuses a key outside its validity interval (§6.4) the same way', async () => {
    const saved = t
    t = Date.parse('2025-12-31T00:00:00Z') // before the test keys' validFrom
    try {
      const reply = await call(base, CONSOLE_PATHS.signIn, { method: 'POST', body: signed(await challengeFrom(base), ada) })
      expect(reply.status).toBe(401)
      expect(reply.json.error).toMatchObject(REFUSED)
      expect(logs.at(-1)).toMatchObject({ msg: 'console sign-in refused', reason: expect.stringContaining('not valid now') })
    } finally {
      t = saved
    }
  })

  it('consumes a challenge named by a malformed request too, and says what is malformed', async () => {
    const challenge = await challengeFrom(base)
    const bad = await call(base, CONSOLE_PATHS.signIn, { method: 'POST', body: JSON.stringify({ challenge: challenge.challenge, principalId: ada.actor.id }) })
    expect(bad.status).toBe(400)
    expect(bad.json.error).toMatchObject({ code: 'SCHEMA_VALIDATION_FAILED', details: { missing: ['keyId', 'signature'] } })
    const late = await call(base, CONSOLE_PATHS.signIn, { method: 'POST', body: signed(challenge, ada) })
    expect(late.status).toBe(401)
    const duplicate = await call(base, CONSOLE_PATHS.signIn, { method: 'POST', body: '{"principalId":"a","principalId":"b"}' })
    expect(duplicate.status).toBe(400)
    expect(duplicate.json.error).toMatchObject({ code: 'PROTOCOL_VIOLATION', details: { reason: 'duplicate-member' } })
    const form = await call(base, CONSOLE_PATHS.signIn, { method: 'POST', body: signed(await challengeFrom(base), ada), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(form.status).toBe(415)
  })
})

describe("Origin: the console's answer to CSRF", () => {
  it('refuses a POST of another origin or of none with 403 AUTH_FORBIDDEN, before reading anything', async () => {
    const challenge = await challengeFrom(base)
    for (const origin of ['https://evil.example', null, 'null', `${base}/`.replace(/\/$/, '0')]) {
      for (const path of [CONSOLE_PATHS.challenge, CONSOLE_PATHS.signIn, CONSOLE_PATHS.signOut]) {
        const reply = await call(base, path, { method: 'POST', origin, body: signed(challenge, ada) })
        expect([String(origin), path, reply.status]).toEqual([String(origin), path, 403])
        expect(reply.json.error.code).toBe('AUTH_FORBIDDEN')
      }
    }
    const crossSite = await call(base, CONSOLE_PATHS.challenge, { method: 'POST', headers: { 'sec-fetch-site': 'cross-site' } })
    expect(crossSite.status).toBe(403)
  })

  it('refuses a GET that names a foreign origin, and takes a same-origin GET without one (browsers omit it)', async () => {
    const session = await signIn(base, ada)
    expect((await call(base, CONSOLE_PATHS.groups, { token: session.token, origin: 'https://evil.example' })).status).toBe(403)
    expect((await call(base, CONSOLE_PATHS.groups, { token: session.token, origin: null })).status).toBe(200)
  })
})

describe('the API', () => {
  it('needs a live token: missing, unknown and expired ones get 401 AUTH_REQUIRED', async () => {
    const session = await signIn(base, lin)
    for (const token of [undefined, 'not-a-token', encodeBase64url(new Uint8Array(32))]) {
      const reply = await call(base, CONSOLE_PATHS.groups, token === undefined ? {} : { token })
      expect(reply.status).toBe(401)
      expect(reply.json.error.code).toBe('AUTH_REQUIRED')
      expect(reply.headers['www-authenticate']).toBe('Bearer')
    }
    expect((await call(base, CONSOLE_PATHS.groups, { token: session.token })).status).toBe(200)
    t += 12 * 3600_000
    expect((await call(base, CONSOLE_PATHS.groups, { token: session.token })).json.error.code).toBe('AUTH_REQUIRED')
  })

  it('lists the Groups a person may see (§8): owned or joined; a hidden Group is absent, as a missing one', async () => {
    const groupsOf = async (who: TestPrincipal<'human'>): Promise<ConsoleGroup[]> => {
      const reply = await call(base, CONSOLE_PATHS.groups, { token: (await signIn(base, who)).token })
      expect(reply.status).toBe(200)
      expect(Object.keys(reply.json as object)).toEqual(['groups'])
      return (reply.json as { groups: ConsoleGroup[] }).groups
    }
    const head = authority.state.groups.get(GROUP_A)!.head
    expect(await groupsOf(ada)).toEqual([
      { groupId: GROUP_A, missionId: 'urn:weft:console-test:mission:a', title: 'Mission a', missionState: expect.any(String), role: 'mission_owner', headSequence: head },
    ])
    expect((await groupsOf(lin)).map((g) => [g.groupId, g.role])).toEqual([[GROUP_A, 'observer']])
    expect((await groupsOf(grace)).map((g) => g.groupId)).toEqual([GROUP_B])
  })

  it("lists the Organization's registered Agents from their cards (§6.1) to a signed-in person only", async () => {
    expect((await call(base, CONSOLE_PATHS.agents, {})).json.error.code).toBe('AUTH_REQUIRED')
    const reply = await call(base, CONSOLE_PATHS.agents, { token: (await signIn(base, lin)).token })
    expect(reply.status).toBe(200)
    const card = org.agents.coordinator.card
    expect(reply.json).toEqual({
      agents: [
        { agentId: card.agentId, displayName: card.displayName, status: 'active', capabilities: card.capabilities.map((c) => ({ id: c.id, version: c.version })), maxConcurrency: card.maxConcurrency },
      ],
    })
    // Only what a card states: no keys, endpoints or Session Epochs.
    expect(JSON.stringify(reply.json)).not.toMatch(/publicKey|endpoints|sessionEpoch|wss:/)
  })

  it("answers the Authority's time, no-store, with every security header", async () => {
    const reply = await call(base, CONSOLE_PATHS.time)
    expect(reply.status).toBe(200)
    expect(reply.json).toEqual({ now: new Date(t).toISOString() })
    expect(reply.headers).toMatchObject({
      'cache-control': 'no-store',
      'content-type': 'application/json',
      'content-security-policy': CONSOLE_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
    })
    expect(reply.headers['strict-transport-security']).toBeUndefined()
    expect(reply.headers['set-cookie']).toBeUndefined()
  })

  it('checks methods (405 with Allow) and paths (404)', async () => {
    const get = await call(base, CONSOLE_PATHS.signIn)
    expect([get.status, get.headers['allow'], get.json.error.code]).toEqual([405, 'POST', 'PROTOCOL_VIOLATION'])
    expect((await call(base, CONSOLE_PATHS.groups, { method: 'POST' })).status).toBe(405)
    expect((await call(base, '/console/api/nothing')).status).toBe(404)
  })

  it("signs out: 204, the token ends, and so do the session's WebSockets", async () => {
    const ended: [string, ProtocolError | undefined][] = []
    consoleServer.attach({ endHumanSessions: (sessionId, error) => (ended.push([sessionId, error]), 1) })
    const session = await signIn(base, ada)
    const admitted = consoleServer.gate.admit(upgrade(base, sessionProtocols(session.token)))
    expect(admitted.ok).toBe(true)
    const out = await call(base, CONSOLE_PATHS.signOut, { method: 'POST', token: session.token })
    expect(out.status).toBe(204)
    expect(out.text).toBe('')
    expect(ended).toEqual([[admitted.ok ? admitted.sessionId : '', expect.objectContaining({ code: 'AUTH_REQUIRED' })]])
    expect((await call(base, CONSOLE_PATHS.groups, { token: session.token })).status).toBe(401)
    expect((await call(base, CONSOLE_PATHS.signOut, { method: 'POST', token: session.token })).status).toBe(401)
    expect(consoleServer.gate.admit(upgrade(base, sessionProtocols(session.token))).ok).toBe(false)
  })
})

/** The request of a WebSocket upgrade to the console socket, as the wire server hands it to the gate. */
function upgrade(origin: string | undefined, protocols: readonly string[] | undefined): IncomingMessage {
  const headers: Record<string, string> = {}
  if (origin !== undefined) headers['origin'] = origin
  if (protocols !== undefined) headers['sec-websocket-protocol'] = protocols.join(', ')
  return { headers, url: CONSOLE_PATHS.socket, method: 'GET' } as unknown as IncomingMessage
}

describe('the WebSocket gate', () => {
  it('admits a signed-in person by token and Origin, and names their session', async () => {
    const session = await signIn(base, lin)
    expect(consoleServer.gate).toMatchObject({ path: CONSOLE_PATHS.socket, protocol: CONSOLE_PROTOCOL })
    const admitted = consoleServer.gate.admit(upgrade(base, sessionProtocols(session.token)))
    expect(admitted).toEqual({
      ok: true,
      principal: lin.actor,
      keyId: lin.signingKey.keyId,
      sessionId: expect.stringMatching(/^urn:weft:console-session:/),
      expiresAtMs: Date.parse(session.expiresAt),
    })
  })

  it('refuses a foreign or missing Origin with 403, and a missing, unknown or expired token with 401', async () => {
    const session = await signIn(base, lin)
    const cases: [IncomingMessage, number, string][] = [
      [upgrade('https://evil.example', sessionProtocols(session.token)), 403, 'AUTH_FORBIDDEN'],
      [upgrade(undefined, sessionProtocols(session.token)), 403, 'AUTH_FORBIDDEN'],
      [upgrade(base, [CONSOLE_PROTOCOL]), 401, 'AUTH_REQUIRED'],
      [upgrade(base, undefined), 401, 'AUTH_REQUIRED'],
      [upgrade(base, sessionProtocols('unknown')), 401, 'AUTH_REQUIRED'],
      [upgrade(base, [`weft-session.${session.token}`]), 401, 'AUTH_REQUIRED'],
    ]
    for (const [request, status, code] of cases) {
      const admission = consoleServer.gate.admit(request)
      expect(admission.ok).toBe(false)
      if (!admission.ok) expect([admission.status, admission.error.code]).toEqual([status, code])
    }
    t += 12 * 3600_000
    expect(consoleServer.gate.admit(upgrade(base, sessionProtocols(session.token)))).toMatchObject({ ok: false, status: 401 })
  })
})

describe('bounds', () => {
  it('refuses challenges beyond the pending bound with 503, a retryable RATE_LIMITED and Retry-After', async () => {
    const { base: small } = await serve({ limits: { maxPendingChallenges: 3 } })
    for (let i = 0; i < 3; i++) await challengeFrom(small)
    const refused = await call(small, CONSOLE_PATHS.challenge, { method: 'POST', origin: small })
    expect(refused.status).toBe(503)
    expect(refused.json.error).toMatchObject({ code: 'RATE_LIMITED', retryable: true })
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    // Expired ones free their places.
    t += 60_000
    await challengeFrom(small)
  })

  it('refuses sign-ins beyond the session bound with 503 RATE_LIMITED', async () => {
    const { base: small } = await serve({ limits: { maxSessions: 1 } })
    await signIn(small, ada)
    const refused = await call(small, CONSOLE_PATHS.signIn, { method: 'POST', origin: small, body: signed(await challengeFrom(small), grace) })
    expect(refused.status).toBe(503)
    expect(refused.json.error).toMatchObject({ code: 'RATE_LIMITED', retryable: true })
  })

  it('refuses a body over 4 KiB with 413, declared or chunked', async () => {
    const large = JSON.stringify({ principalId: 'x'.repeat(5000), keyId: 'k', challenge: 'c', signature: 's' })
    const declared = await call(base, CONSOLE_PATHS.signIn, { method: 'POST', body: large })
    expect([declared.status, declared.json.error.details.reason]).toEqual([413, 'body-too-large'])
    expect(declared.headers['connection']).toBe('close')
    const chunked = await call(base, CONSOLE_PATHS.signIn, { method: 'POST', body: large, chunked: true })
    expect(chunked.status).toBe(413)
  })
})

describe('the app', () => {
  it('redirects /console to /console/ and serves index.html there with the CSP and the other headers', async () => {
    const redirect = await call(base, '/console', { origin: null })
    expect([redirect.status, redirect.headers['location']]).toEqual([308, '/console/'])
    const index = await call(base, '/console/', { origin: null })
    expect(index.status).toBe(200)
    expect(index.text).toContain('<title>Weft</title>')
    expect(index.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': CONSOLE_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
    })
    expect(CONSOLE_CSP).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    )
    const again = await call(base, '/console/', { origin: null, headers: { 'if-none-match': String(index.headers['etag']) } })
    expect(again.status).toBe(304)
  })

  it('serves only the files the manifest lists; nothing from the URL reaches the file system', async () => {
    expect((await call(base, '/console/app.js')).headers['content-type']).toBe('text/javascript; charset=utf-8')
    expect((await call(base, '/console/app.css')).headers['content-type']).toBe('text/css; charset=utf-8')
    expect((await call(base, '/console/assets/logo.svg')).headers['content-type']).toBe('image/svg+xml')
    for (const path of [
      '/console/secret.txt',
      '/console/manifest.json',
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/assets/../app.js',
      '/console//etc/passwd',
      '/console/index.html/',
    ]) {
      const reply = await call(base, path)
      expect([path, reply.status]).toEqual([path, 404])
      expect(reply.headers['content-security-policy']).toBe(CONSOLE_CSP)
    }
    expect((await call(base, '/console/app.js', { method: 'POST' })).status).toBe(405)
  })

  it('leaves every other path to the caller', async () => {
    for (const path of ['/', '/consoles', '/commands', '/console-x']) expect((await call(base, path)).status).toBe(426)
  })

  it('says how to build the app when it was not built (503)', async () => {
    const { base: bare } = await serve({ appDir: join(appDir, 'absent') })
    const reply = await call(bare, '/console/')
    expect(reply.status).toBe(503)
    expect(reply.text).toBe('The console app has not been built: run npm run build -w @weft/console\n')
    expect(reply.headers['content-security-policy']).toBe(CONSOLE_CSP)
  })

  it('reads the manifest scripts/build-app.mjs writes: types from it, and a file that does not match its SHA-256 is refused', async () => {
    const built = await mkdtemp(join(tmpdir(), 'weft-console-built-'))
    try {
      const html = '<!doctype html><title>Built</title>\n'
      const js = 'export {}\n'
      await writeFile(join(built, 'index.html'), html)
      await writeFile(join(built, 'app.js'), js)
      const sha = (text: string): string => createHash('sha256').update(text).digest('hex')
      const manifest = (jsHash: string): string =>
        JSON.stringify({ files: { 'index.html': { type: 'text/html', sha256: sha(html), bytes: html.length }, 'app.js': { type: 'text/javascript', sha256: jsHash, bytes: js.length } } })
      await writeFile(join(built, 'manifest.json'), manifest(sha(js)))
      const { base: good } = await serve({ appDir: built })
      expect((await call(good, '/console/')).headers['content-type']).toBe('text/html; charset=utf-8')
      expect((await call(good, '/console/app.js')).headers['content-type']).toBe('text/javascript; charset=utf-8')
      await writeFile(join(built, 'manifest.json'), manifest(sha('something else')))
      const { base: tampered, logs: tamperedLogs } = await serve({ appDir: built })
      expect((await call(tampered, '/console/')).status).toBe(500)
      expect(tamperedLogs.at(-1)).toMatchObject({ msg: 'console app unavailable', detail: expect.stringContaining('app.js does not have the SHA-256') })
    } finally {
      await rm(built, { recursive: true, force: true })
    }
  })

  it('refuses a manifest that names a path outside the app', async () => {
    const evil = await mkdtemp(join(tmpdir(), 'weft-console-evil-'))
    try {
      await writeFile(join(evil, 'index.html'), 'x')
      await writeFile(join(evil, 'manifest.json'), JSON.stringify(['index.html', '../secret']))
      const { base: bad, logs: badLogs } = await serve({ appDir: evil })
      expect((await call(bad, '/console/')).status).toBe(500)
      expect(badLogs.at(-1)).toMatchObject({ msg: 'console app unavailable' })
    } finally {
      await rm(evil, { recursive: true, force: true })
    }
  })
})

describe('options', () => {
  it('refuses no allowed origin, a non-URL one and a bad limit', () => {
    expect(() => createConsoleServer({ registry: org.registry, authority, allowedOrigins: [] })).toThrow(/allowedOrigins/)
    expect(() => createConsoleServer({ registry: org.registry, authority, allowedOrigins: ['not a url'] })).toThrow(/not a URL/)
    expect(() => createConsoleServer({ registry: org.registry, authority, allowedOrigins: ['ftp://x'] })).toThrow(/http/)
    expect(() => createConsoleServer({ registry: org.registry, authority, allowedOrigins: ['http://x'], limits: { maxSessions: 0 } })).toThrow(/maxSessions/)
  })
})
