/**
 * @weft/client in a real browser (issue 24): an Agent in a Chromium page holds its Ed25519 key
 * as a non-extractable WebCrypto key (`webCryptoKeyPair`), opens the WebSocket binding to a real
 * Group Authority with the HELLO handshake (§6.3: the transcript signed by WebCrypto), submits a
 * signed Command built by `createClient` over `connectWebSocket`'s transport, and reads the
 * receipt and its subscription back (§16, §17). The page's code is `@weft/codec`, `@weft/client`
 * and `@weft/client/wire` bundled by esbuild for the browser (`platform: 'browser'`, the `browser`
 * condition: the page's `WebSocket`, WebCrypto randomness, no Node built-ins), served from
 * `http://127.0.0.1` (a secure context, which WebCrypto needs).
 *
 * It lives here rather than in packages/client because it starts `@weft/authority`, which depends
 * on `@weft/client`: a devDependency back would be a cycle in the workspace graph. Chromium is part
 * of the test set-up (`.ci/run` installs it): without it this test fails rather than passing unseen.
 */
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createDelivery, type Authority } from '@weft/authority'
import { createTestOrganization } from '@weft/authority/testing'
import { createWireServer, type WireServer } from '@weft/authority/wire'
import { encodeBase64url } from '@weft/codec'
import type { CommandPayload } from '@weft/spec'
import { build } from 'esbuild'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const CHROMIUM = '/usr/bin/chromium'
const ORGANIZATION = 'urn:weft:browser-test:org'
const GROUP = 'urn:weft:browser-test:group:1'

/** The page: the Agent's whole session, run when the test calls `weftRun`. */
const ENTRY = `
import { decodeBase64url, webCryptoKeyPair } from '@weft/codec'
import { createClient } from '@weft/client'
import { connectWebSocket } from '@weft/client/wire'

globalThis.weftRun = async (input) => {
  const pair = await webCryptoKeyPair(decodeBase64url(input.seed), decodeBase64url(input.publicKey))
  const signingKey = { keyId: input.keyId, pair }
  const conn = await connectWebSocket({ url: input.url, actor: input.actor, signingKey, heartbeatMs: 0, reconnect: false })
  const client = createClient({ actor: input.actor, signingKey, transport: conn.transport, groupId: input.groupId })
  client.epochs.set({ session: conn.sessionEpoch(), groupId: input.groupId, membership: input.membershipEpoch })
  const receipt = await client.messagePost({ messageId: input.messageId, conversationId: input.conversationId, content: [{ type: 'text', text: 'Hello from Chromium.' }] })
  // The subscription replays the Group from the start, the Event of this receipt included (§16).
  const delivered = await new Promise((resolve) => {
    const seen = []
    const subscription = conn.feed.subscribe([{ groupId: input.groupId, afterSequence: 0 }], {
      onEvent: (event) => {
        seen.push(event.eventId)
        if (event.eventId === receipt.events.at(-1).eventId) {
          subscription.close()
          resolve(seen)
        }
      },
    })
  })
  await conn.feed.ack(input.groupId, receipt.events.at(-1).sequence)
  await conn.ping()
  await conn.close()
  return {
    sessionEpoch: conn.sessionEpoch(),
    signsAsynchronously: pair.sign(new Uint8Array([1])) instanceof Promise,
    receipt: { actionId: receipt.actionId, kind: receipt.kind, duplicate: receipt.duplicate, events: receipt.events.map((e) => ({ eventId: e.eventId, kind: e.kind, sequence: e.sequence, causeId: e.cause.id })) },
    delivered,
    status: conn.status,
  }
}
globalThis.weftReady = true
`

/** Counts WebCrypto signatures, installed before the bundle runs: proves the key signed in WebCrypto. */
const PROBE = `
const subtle = globalThis.crypto.subtle
globalThis.weftSigns = 0
const original = subtle.sign.bind(subtle)
subtle.sign = (...args) => { globalThis.weftSigns++; return original(...args) }
`

interface PageResult {
  readonly sessionEpoch: number
  readonly signsAsynchronously: boolean
  readonly receipt: { actionId: string; kind: string; duplicate: boolean; events: { eventId: string; kind: string; sequence: number; causeId: string }[] }
  readonly delivered: string[]
  readonly status: string
}

function mission(coordinatorAgentId: string): CommandPayload<'mission.create'> {
  return {
    missionId: 'urn:weft:browser-test:mission:1',
    title: 'Release',
    objective: 'Ship the release.',
    definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
    deadline: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    budget: { currency: 'USD', financialLimit: 100 },
    approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    coordinatorAgentId,
    coordinatorLeaseSeconds: 86_400,
  }
}

describe('@weft/client in Chromium against a Group Authority', () => {
  const org = createTestOrganization({ organizationId: ORGANIZATION, humans: ['owner'], agents: ['coordinator'] })
  const agent = org.agents.coordinator
  // The page gets the seed, as a key file would hand it over.
  const seed = agent.seed
  let authority: Authority
  let wire: WireServer | undefined
  let http: Server | undefined
  let browser: Browser | undefined
  let page: Page
  let code: string
  let result: PageResult
  const errors: string[] = []

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium), as .ci/run does`)
    const started = await org.start({ groupId: GROUP })
    authority = started.authority
    await started.clientOf(org.humans.owner).missionCreate(mission(agent.actor.id))
    wire = await createWireServer({ authority, registry: org.registry, sessionIssuer: org.controlPlane, delivery: createDelivery(authority), insecureLoopback: true })

    const built = await build({
      stdin: { contents: ENTRY, resolveDir: import.meta.dirname, sourcefile: 'page.js', loader: 'js' },
      bundle: true,
      platform: 'browser',
      format: 'esm',
      target: 'es2022',
      conditions: ['@weft/source', 'browser'],
      write: false,
      logLevel: 'silent',
    })
    code = built.outputFiles[0]!.text
    const html = `<!doctype html><meta charset="utf-8"><title>weft client</title><script>${PROBE}</script><script type="module" src="/bundle.js"></script>`
    http = createServer((request, response) => {
      if (request.url === '/bundle.js') response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(code)
      else if (request.url === '/') response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html)
      else response.writeHead(request.url === '/favicon.ico' ? 204 : 404).end()
    })
    await new Promise<void>((resolve) => http!.listen(0, '127.0.0.1', resolve))
    const { port } = http.address() as AddressInfo

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    page = await browser.newPage()
    page.on('pageerror', (e) => errors.push(e.message))
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text())
    })
    await page.goto(`http://127.0.0.1:${port}/`)
    await page.waitForFunction(() => (globalThis as { weftReady?: boolean }).weftReady === true)
    const input = {
      url: wire.url,
      seed: encodeBase64url(seed),
      publicKey: encodeBase64url(agent.signingKey.pair.publicKey),
      keyId: agent.signingKey.keyId,
      actor: agent.actor,
      groupId: GROUP,
      membershipEpoch: authority.group(GROUP)!.memberships.get(agent.actor.id)?.membershipEpoch ?? 1,
      conversationId: authority.group(GROUP)!.group.mainConversationId,
      messageId: 'urn:weft:browser-test:message:1',
    }
    result = await page.evaluate(async (i) => (globalThis as unknown as { weftRun: (input: unknown) => Promise<PageResult> }).weftRun(i), input)
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await wire?.close()
    await new Promise((resolve) => (http ? http.close(resolve) : resolve(undefined)))
  })

  it('bundles the browser build: no Node built-ins, no ws, no Buffer', () => {
    expect(code).not.toMatch(/["']node:/)
    expect(code).not.toMatch(/\bBuffer\b/)
    expect(code).not.toContain('Sec-WebSocket-Key')
  })

  it('opens a session with the HELLO handshake signed by a WebCrypto key (§6.3)', async () => {
    expect(errors).toEqual([])
    expect(result.signsAsynchronously).toBe(true)
    // The server issued a new Session Epoch on top of the one org.start opened, and the page saw it.
    expect(result.sessionEpoch).toBe(authority.state.org.agents.get(agent.actor.id)!.sessionEpoch)
    expect(result.sessionEpoch).toBeGreaterThan(1)
    // The pair check, the handshake and the Command: every signature was WebCrypto's.
    expect(await page.evaluate(() => (globalThis as unknown as { weftSigns: number }).weftSigns)).toBeGreaterThanOrEqual(3)
    expect(await page.evaluate(() => (globalThis as unknown as { isSecureContext: boolean }).isSecureContext)).toBe(true)
  })

  it('submits a signed Command whose receipt comes back, and the Authority logged it', () => {
    const { receipt } = result
    expect([receipt.kind, receipt.duplicate]).toEqual(['message.post', false])
    expect(receipt.events.map((e) => [e.kind, e.causeId])).toEqual([['message.posted', receipt.actionId]])
    const logged = authority.history(GROUP, 0, Number.MAX_SAFE_INTEGER).events.find((e) => e.eventId === receipt.events[0]!.eventId)
    expect(logged).toMatchObject({ kind: 'message.posted', cause: { type: 'command', id: receipt.actionId }, sequence: receipt.events[0]!.sequence })
  })

  it('receives the Group through a subscription, the receipt’s Event last, and closes cleanly', () => {
    expect(result.delivered.at(-1)).toBe(result.receipt.events[0]!.eventId)
    expect(result.delivered.length).toBe(result.receipt.events[0]!.sequence)
    expect(result.status).toBe('closed')
  })
})
