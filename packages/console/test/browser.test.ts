/**
 * The console end to end, in Debian's Chromium (`/usr/bin/chromium`, driven by playwright-core),
 * against a real server: a test Organization's Authority on `createWireServer` with
 * `createConsoleServer` mounted on the same port, and the browser app built once into a temporary
 * directory. What it proves:
 *
 * - Sign-in (§6.4 keys, §5 human interface): a person's key file signs in and the page names
 *   them; a wrong key, an unknown person and an Agent's key are refused, the first two with the
 *   same generic §19 `AUTH_INVALID_SIGNATURE`, the last by the page before any request.
 * - A Mission created from the console reaches Agents (§7.1, §17): the Coordinator, connected
 *   over the WebSocket binding with its own HELLO (§6.3), receives the Group's `mission.created`,
 *   signed by the Authority (§6.4) for a Command whose actor is the person.
 * - Visibility (§8, §17.2): a person who is not a member sees neither another's Group nor its
 *   existence: opening it by ID renders exactly what a never-existing Group ID renders.
 * - Protocol text is text: HTML in a Mission title, an objective, a WorkItem goal and a Message
 *   body renders literally, creates no element and runs nothing (§9: Messages are conversation).
 * - CSRF: pages of another origin can neither get a challenge, sign in nor open the console's
 *   WebSocket (403), the API wants a bearer token (401 `AUTH_REQUIRED`, §19), a challenge that
 *   was never issued signs nothing in (401), and no response sets a cookie.
 * - Accessibility of the human interface (§5): axe-core finds no violation of its label and name
 *   rules, nor of any other rule it runs by default (colour contrast included), on the
 *   sign-in screen, the signed-in screen, each tab of an open Mission and the New Mission form.
 *
 * Chromium is part of the test set-up (`.ci/run` installs it when missing): without it this test
 * fails rather than passing unseen.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Authority } from '@weft/authority'
import { createTestOrganization, TEST_CAPABILITY, type ClientOf, type TestPrincipal } from '@weft/authority/testing'
import { createWireServer, type WireLogEntry, type WireServer } from '@weft/authority/wire'
import { connectWebSocket, type WebSocketConnection } from '@weft/client/wire'
import { encodeBase64url, keyPairFromSeed, type ProtocolError } from '@weft/codec'
import type { Event } from '@weft/spec'
import { signedVerifier } from '@weft/validators/signed'
import type { AxeResults, Result as AxeResult } from 'axe-core'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../scripts/build-app.mjs'
import { CONSOLE_PATHS, CONSOLE_PROTOCOL, sessionProtocols, signInTranscriptBytes, type ConsoleSession, type SignInChallenge } from '../src/shared/sign-in.js'
import { createConsoleServer, type ConsoleServer } from '../src/server/index.js'

/** The few page globals the evaluated functions touch (the test's TypeScript has no DOM library). */
interface PageElement {
  readonly textContent: string | null
}
declare const document: { querySelectorAll(selector: string): ArrayLike<PageElement>; addEventListener(type: string, listener: (event: { violatedDirective: string; blockedURI: string }) => void): void }
declare const window: Record<string, unknown>
declare const WebSocket: new (url: string, protocols?: string[]) => { onopen: (() => void) | null; onclose: ((event: { code: number }) => void) | null; onerror: (() => void) | null; close(): void; readonly protocol: string }
declare const axe: { run(context: unknown, options: unknown): Promise<AxeResults> }

const CHROMIUM = '/usr/bin/chromium'
const ORGANIZATION_ID = 'urn:weft:console-browser:org'
const VALID_FROM = '2026-01-01T00:00:00Z'
const org = createTestOrganization({ organizationId: ORGANIZATION_ID, humans: ['ada', 'eve'], agents: ['coordinator', 'worker'], validFrom: VALID_FROM })
const { ada, eve } = org.humans
const { coordinator, worker } = org.agents

/** One clock for the Authority, the wire server and the console (Commands are fresh within ±300 s of it, §6.4). */
const clock = { now: () => Date.now() }

/** Ada's Group made from Node: every protocol string in it is HTML that must stay text. */
const GROUP_X = 'urn:weft:console-browser:group:x'
const XSS_TITLE = '<img src=x onerror="window.__xss=1">'
const XSS_OBJECTIVE = '<img src=x onerror="window.__xss=4"> Ship it.'
const XSS_BODY = '<script>window.__xss=2</script><b>bold</b>'
const XSS_GOAL = '<img src=x onerror="window.__xss=3">Build'

/**
 * axe-core's rules about labels and names (WCAG 1.1.1, 1.3.1, 2.4.2, 3.1.1, 4.1.2): each must run
 * on every screen checked (so a renamed rule cannot pass unseen). Every other rule axe runs by
 * default must report nothing as well.
 */
const NAME_RULES = [
  'label',
  'button-name',
  'link-name',
  'select-name',
  'input-button-name',
  'image-alt',
  'svg-img-alt',
  'role-img-alt',
  'aria-command-name',
  'aria-dialog-name',
  'aria-input-field-name',
  'aria-meter-name',
  'aria-progressbar-name',
  'aria-toggle-field-name',
  'aria-tooltip-name',
  'aria-treeitem-name',
  'document-title',
  'html-has-lang',
  'label-content-name-mismatch',
]


/** The test key seeds: `createTestOrganization` derives each from the Organization ID, the type and the name. */
function seedOf(p: TestPrincipal): Uint8Array {
  return createHash('sha256').update(`weft-test-key\u0000${ORGANIZATION_ID}\u0000${p.actor.type}\u0000${p.name}`).digest()
}

/** A `weft.key/1` key file as `weft principal add human NAME` writes it (src/app/keyfile.ts). */
function keyFileText(principal: { readonly type: string; readonly id: string }, keyId: string, seed: Uint8Array): string {
  const publicKey = keyPairFromSeed(seed).publicKey
  return `${JSON.stringify({ format: 'weft.key/1', organizationId: ORGANIZATION_ID, principal, keyId, publicKey: encodeBase64url(publicKey), seed: encodeBase64url(seed), validFrom: VALID_FROM }, null, 2)}\n`
}

interface Served {
  readonly method: string
  readonly path: string
  readonly origin: string | undefined
  readonly status: number
}

let browser: Browser
let dir: string
let appDir: string
let authority: Authority
let clientOf: ClientOf
let wire: WireServer
let consoleServer: ConsoleServer
let base: string
let appUrl: string
const keyPaths: Record<'ada' | 'eve' | 'wrong' | 'unknown' | 'agent', string> = { ada: '', eve: '', wrong: '', unknown: '', agent: '' }
/** Every HTTP request the listener answered, with its status. */
const served: Served[] = []
/** Every response a browser context saw, with all its headers (Set-Cookie included). */
const responseHeaders: Promise<{ readonly url: string; readonly headers: Record<string, string> }>[] = []
const contexts: BrowserContext[] = []
const sockets: WebSocketConnection[] = []
const servers: Server[] = []
/** What the wire server logged. */
const wireLog: WireLogEntry[] = []

/** A fresh browser context (its own memory, so its own session), every response recorded. */
async function freshContext(): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  context.setDefaultTimeout(10_000)
  context.on('response', (response) => void responseHeaders.push(response.allHeaders().then((headers) => ({ url: response.url(), headers }))))
  contexts.push(context)
  return context
}

/** A page of `context` on the console with its errors collected. */
async function consolePage(context: BrowserContext): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  await page.goto(appUrl)
  await page.getByTestId('key-file').waitFor()
  return { page, errors }
}

/** Signs `who` in through the key file input; resolves once the top bar names them. */
async function signIn(page: Page, keyPath: string, who: TestPrincipal<'human'>): Promise<void> {
  const groups = page.waitForResponse((r) => r.url().endsWith(CONSOLE_PATHS.groups))
  await page.getByTestId('key-file').setInputFiles(keyPath)
  await page.getByTestId('person').waitFor()
  expect(await page.getByTestId('person').textContent()).toBe(who.actor.id)
  expect((await groups).status()).toBe(200)
}

/** Waits for `done`, polling every 20 ms. */
async function until(what: string, done: () => boolean, timeoutMs = 5000): Promise<void> {
  for (const began = Date.now(); !done(); await new Promise((resolve) => setTimeout(resolve, 20))) {
    if (Date.now() - began > timeoutMs) throw new Error(`timed out waiting for ${what}`)
  }
}

/** The console's sign-in from Node, as the README shows it: a bearer token for `who`. */
async function nodeSignIn(who: TestPrincipal<'human'>): Promise<ConsoleSession> {
  const post = async (path: string, body?: unknown): Promise<unknown> => {
    const reply = await fetch(`${base}${path}`, { method: 'POST', headers: { origin: base, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
    expect(reply.status).toBe(200)
    expect(reply.headers.get('set-cookie')).toBeNull()
    return reply.json()
  }
  const challenge = (await post(CONSOLE_PATHS.challenge)) as SignInChallenge
  const person = { principalId: who.actor.id, keyId: who.signingKey.keyId }
  const signature = encodeBase64url(who.signingKey.pair.sign(signInTranscriptBytes(challenge, person)))
  return (await post(CONSOLE_PATHS.signIn, { ...person, challenge: challenge.challenge, signature })) as ConsoleSession
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium), as .ci/run does`)
  dir = await mkdtemp(join(tmpdir(), 'weft-console-browser-'))
  appDir = join(dir, 'app')
  const launched = chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
  const built = buildApp({ outDir: appDir, minify: false })

  // The key files a person would pick. Ada's seed must be the one behind her Registry key.
  expect(encodeBase64url(keyPairFromSeed(seedOf(ada)).publicKey)).toBe(encodeBase64url(ada.signingKey.pair.publicKey))
  const files: Record<keyof typeof keyPaths, string> = {
    ada: keyFileText(ada.actor, ada.signingKey.keyId, seedOf(ada)),
    eve: keyFileText(eve.actor, eve.signingKey.keyId, seedOf(eve)),
    // Ada's name and key ID, another seed with its own matching public key.
    wrong: keyFileText(ada.actor, ada.signingKey.keyId, createHash('sha256').update('not ada').digest()),
    // A person the Registry does not know.
    unknown: keyFileText({ type: 'human', id: `${ORGANIZATION_ID}:human:mallory` }, `${ORGANIZATION_ID}:key:human:mallory`, createHash('sha256').update('mallory').digest()),
    agent: keyFileText(coordinator.actor, coordinator.signingKey.keyId, seedOf(coordinator)),
  }
  for (const [name, text] of Object.entries(files)) {
    const path = join(dir, `${name}.key.json`)
    await writeFile(path, text, { mode: 0o600 })
    keyPaths[name as keyof typeof keyPaths] = path
  }

  ;({ authority, clientOf } = await org.start({ clock }))
  // Ada's Group X, made from Node: HTML in every string a person reads, a WorkItem and a Message.
  const deadline = new Date(clock.now() + 30 * 86_400_000).toISOString()
  await clientOf(ada).missionCreate(
    {
      missionId: 'urn:weft:console-browser:mission:x',
      title: XSS_TITLE,
      objective: XSS_OBJECTIVE,
      definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
      deadline,
      budget: { currency: 'USD', financialLimit: 100, modelTokenLimit: 100_000, toolCallLimit: 1000 },
      approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
      coordinatorAgentId: coordinator.actor.id,
      coordinatorLeaseSeconds: 86_400,
    },
    { groupId: GROUP_X },
  )
  await clientOf(coordinator).workAuthorize(
    {
      workItemId: 'urn:weft:console-browser:work:build',
      contract: {
        contractVersion: 1,
        goal: XSS_GOAL,
        requiredDeliverables: [{ deliverableId: 'patch', description: 'The change.', mediaType: 'text/x-diff', schema: 'urn:weft:console-browser:schema:patch' }],
        acceptanceCriteria: [{ criterionId: 'tests-pass', description: 'The tests pass.', evidenceRequired: ['deterministic_test'] }],
        inputArtifacts: [],
        dependencyWorkItemIds: [],
        allowedResources: [{ resource: 'urn:weft:console-browser:resource:repo', operations: ['read', 'write'] }],
        requiredCapabilities: [TEST_CAPABILITY],
        deadline: new Date(clock.now() + 7 * 86_400_000).toISOString(),
        requestedUrgency: 'normal',
        businessImpact: 'Needed for the release.',
        retryPolicy: { maxAttempts: 3, backoff: 'exponential', maxDelay: 'PT5M', retryableFailures: ['TRANSIENT'] },
        budget: { currency: 'USD', financialLimit: 10, modelTokenLimit: 10_000, toolCallLimit: 50 },
        sideEffectRisk: 'reversible',
        executionApproval: 'not_required',
      },
    },
    { groupId: GROUP_X },
  )
  const conversationId = authority.group(GROUP_X)!.group.mainConversationId
  await clientOf(ada).messagePost({ messageId: 'urn:weft:console-browser:message:1', conversationId, content: [{ type: 'text', text: XSS_BODY }] }, { groupId: GROUP_X })

  let mounted: ConsoleServer | undefined
  wire = await createWireServer({
    authority,
    registry: org.registry,
    sessionIssuer: org.controlPlane,
    insecureLoopback: true,
    host: '127.0.0.1',
    port: 0,
    clock,
    log: (entry) => void wireLog.push(entry),
    http: (request: IncomingMessage, response: ServerResponse) => {
      response.on('finish', () => served.push({ method: request.method ?? '', path: request.url ?? '', origin: request.headers.origin, status: response.statusCode }))
      if (mounted?.handle(request, response) !== true) response.writeHead(426, { 'content-type': 'text/plain' }).end('WebSocket only.\n')
    },
    // The console is created once the port is known (its allowed origins name it).
    humanSessions: { path: CONSOLE_PATHS.socket, protocol: CONSOLE_PROTOCOL, admit: (request) => mounted!.gate.admit(request) },
  })
  base = `http://127.0.0.1:${wire.port}`
  appUrl = `${base}${CONSOLE_PATHS.app}`
  await built
  mounted = consoleServer = createConsoleServer({ registry: org.registry, authority, allowedOrigins: [base, `http://localhost:${wire.port}`], clock, appDir })
  consoleServer.attach(wire)
  browser = await launched
}, 120_000)

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined)
  await browser?.close()
  for (const s of sockets) await s.close().catch(() => undefined)
  consoleServer?.close()
  await wire?.close()
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

describe('the console in a browser', () => {
  it('signs a person in with their key file; refuses a wrong key and an unknown person alike, and an Agent key in the page (§6.4, §19)', async () => {
    const context = await freshContext()
    const { page, errors } = await consolePage(context)
    const requests: string[] = []
    page.on('request', (r) => requests.push(new URL(r.url()).pathname))
    const signIns: { status: number; body: { error: Record<string, unknown> } }[] = []
    page.on('response', (r) => {
      if (new URL(r.url()).pathname === CONSOLE_PATHS.signIn) void r.json().then((body: { error: Record<string, unknown> }) => signIns.push({ status: r.status(), body }))
    })
    const sessionsBefore = consoleServer.sessionCount

    // The refusal the page shows for a key the server does not accept, and that nothing signed in.
    const refused = async (keyPath: string): Promise<string> => {
      const before = signIns.length
      await page.getByTestId('key-file').setInputFiles(keyPath)
      const note = page.getByTestId('signin-refusal')
      await note.waitFor()
      await until('the sign-in answer', () => signIns.length === before + 1)
      expect(await note.getAttribute('role')).toBe('alert')
      expect(await page.getByTestId('person').count()).toBe(0)
      expect(await page.getByTestId('signin-form').isVisible()).toBe(true)
      expect(consoleServer.sessionCount).toBe(sessionsBefore)
      // The key text left the form whatever happened.
      expect(await page.getByTestId('key-text').inputValue()).toBe('')
      return (await note.textContent()) ?? ''
    }
    const wrong = await refused(keyPaths.wrong)
    expect(wrong).toBe('AUTH_INVALID_SIGNATURE The signature was not accepted: the key may be wrong, revoked or not yet valid, or the request was too old.')
    const unknown = await refused(keyPaths.unknown)
    expect(unknown).toBe(wrong)
    // The server's answers are the same generic 401, apart from their time.
    const bodies = signIns.map(({ status, body }) => {
      const { occurredAt, ...rest } = body.error
      expect(typeof occurredAt).toBe('string')
      return { status, error: rest }
    })
    expect(bodies).toEqual([
      { status: 401, error: { code: 'AUTH_INVALID_SIGNATURE', message: 'The sign-in does not verify.', retryable: false } },
      { status: 401, error: { code: 'AUTH_INVALID_SIGNATURE', message: 'The sign-in does not verify.', retryable: false } },
    ])

    // An Agent's key: the page refuses it itself and asks the server nothing.
    const asked = requests.filter((p) => p.startsWith('/console/api/')).length
    await page.getByTestId('key-file').setInputFiles(keyPaths.agent)
    const problem = page.getByTestId('key-problem')
    await problem.waitFor()
    expect(await problem.getAttribute('role')).toBe('alert')
    expect(await problem.textContent()).toBe('This key belongs to an Agent or a service, not a person. Only a human Principal’s key can sign in to the console.')
    expect(await page.getByTestId('signin-refusal').count()).toBe(0)
    expect(requests.filter((p) => p.startsWith('/console/api/')).length).toBe(asked)
    expect(await page.getByTestId('person').count()).toBe(0)
    expect(consoleServer.sessionCount).toBe(sessionsBefore)

    // Ada's own key file signs her in: the top bar names her, and her refusals are gone.
    await signIn(page, keyPaths.ada, ada)
    expect(consoleServer.sessionCount).toBe(sessionsBefore + 1)
    expect(await page.getByTestId('key-problem').count()).toBe(0)
    await until('the WebSocket', () => wire.connections.some((c) => c.principal?.id === ada.actor.id))
    await page.getByTestId('connection-state').filter({ hasText: /^Connected$/ }).waitFor()
    expect(errors).toEqual([])
  })

  it('creates a Mission from the form; its Coordinator, connected over the WebSocket binding, receives the signed mission.created (§7.1, §17, §6.4)', async () => {
    const context = await freshContext()
    const { page, errors } = await consolePage(context)
    await signIn(page, keyPaths.ada, ada)
    // The Coordinator connects with its own HELLO before the Mission exists (§6.3).
    const conn = await connectWebSocket({ url: wire.url, actor: coordinator.actor, signingKey: coordinator.signingKey })
    sockets.push(conn)
    expect(conn.status).toBe('open')
    expect(conn.sessionEpoch()).toBeGreaterThan(0)

    const title = `Release notes ${randomBytes(4).toString('hex')}`
    await page.getByTestId('new-mission').click()
    await page.getByTestId('m-title').fill(title)
    await page.getByTestId('m-objective').fill('Write the release notes.')
    await page.getByTestId('m-done').fill('written: The notes are written.')
    await page.getByTestId('m-coordinator').fill(coordinator.actor.id)
    await page.getByTestId('mission-submit').click()
    await page.getByTestId('mission-title').filter({ hasText: title }).waitFor()
    const current = page.locator('[data-testid="group-item"][aria-current="page"]')
    await current.waitFor()
    const groupId = (await current.getAttribute('data-group-id'))!
    expect(await current.textContent()).toContain(title)
    expect(groupId).toMatch(/^urn:uuid:/)
    expect(await page.getByTestId('mission-refusal').count()).toBe(0)

    const received: Event[] = []
    const refusals: string[] = []
    conn.feed.subscribe([{ groupId, afterSequence: 0 }], { onEvent: (event) => void received.push(event), onError: (error) => void refusals.push(error.code) })
    await until('mission.created on the Coordinator\'s feed', () => received.some((e) => e.kind === 'mission.created'))
    const created = received.find((e) => e.kind === 'mission.created')!
    expect(refusals).toEqual([])
    expect(created).toMatchObject({ groupId, sequence: 1, actor: ada.actor, acceptedBy: org.authorityService.actor, cause: { type: 'command' } })
    // What the form said, as the person typed it: the Mission, its owner and Coordinator, the planning Conversation, both seats (§7.1).
    expect(created.payload).toMatchObject({
      mission: { groupId, objective: 'Write the release notes.', definitionOfDone: [{ criterionId: 'written', description: 'The notes are written.', evidenceRequired: ['human_review'] }], missionOwner: ada.actor, coordinator: { agentId: coordinator.actor.id, coordinatorEpoch: 1 }, state: 'active', approvalPolicy: { finalHumanApproval: true } },
      conversation: { title, createdBy: ada.actor },
      memberships: [{ member: ada.actor, role: 'mission_owner' }, { member: coordinator.actor, role: 'coordinator' }],
    })
    // The Event is the Authority's, byte for byte, and its signature verifies under the Authority's Registry key (§6.4).
    expect(created).toEqual(authority.events(groupId)[0])
    const verified = signedVerifier.verify('event', JSON.stringify(created), org.registry)
    expect(verified.ok, JSON.stringify(verified)).toBe(true)
    if (verified.ok) expect(verified.verified.key.principal).toEqual(org.authorityService.actor)
    // The Command behind it is Ada's (the page signed it with her key: no other key of hers exists outside this process).
    expect(authority.group(groupId)?.mission?.missionOwner).toEqual(ada.actor)
    expect(created.commandHash).toMatch(/^sha256:[0-9a-f]{64}$/)

    // An Agent without a Membership learns nothing of the Group (§8, §17.2).
    const outsider = await connectWebSocket({ url: wire.url, actor: worker.actor, signingKey: worker.signingKey })
    sockets.push(outsider)
    const leaked: Event[] = []
    const outsiderErrors: string[] = []
    outsider.feed.subscribe([{ groupId, afterSequence: 0 }], { onEvent: (event) => void leaked.push(event), onError: (error: ProtocolError) => void outsiderErrors.push(error.code) })
    await until('the outsider\'s refusal', () => outsiderErrors.length > 0)
    expect(outsiderErrors).toEqual(['GROUP_NOT_FOUND'])
    expect(leaked).toEqual([])
    expect(errors).toEqual([])
  })

  it('shows a non-member neither another person\'s Group nor its existence (§8, §17.2)', async () => {
    expect(authority.group(GROUP_X)?.mission?.missionOwner).toEqual(ada.actor)
    const context = await freshContext()
    /** Eve signs in on a new page and opens `groupId` by hand; resolves to what the page then shows and the frames it got. */
    const openAsEve = async (groupId: string): Promise<{ body: string; main: string; frames: string[] }> => {
      const { page, errors } = await consolePage(context)
      const frames: string[] = []
      page.on('websocket', (ws) => ws.on('framereceived', ({ payload }) => void frames.push(String(payload))))
      await signIn(page, keyPaths.eve, eve)
      expect(await page.getByTestId('group-item').count()).toBe(0)
      expect(await page.getByTestId('group-list').textContent()).toBe('No Missions visible to you yet.')
      await page.getByTestId('open-group-id').fill(groupId)
      await page.getByTestId('open-group-id').press('Enter')
      await page.getByTestId('group-not-found').waitFor()
      // Let anything else the server would send arrive.
      await page.waitForTimeout(300)
      const shown = { body: await page.locator('body').innerText(), main: await page.locator('.main').innerHTML(), frames: frames.map((f) => f.split(groupId).join('GROUP')) }
      expect(shown.body).not.toContain(XSS_TITLE)
      expect(errors).toEqual([])
      await page.close()
      return shown
    }
    const hidden = await openAsEve(GROUP_X)
    const absent = await openAsEve(`urn:uuid:${randomUUID()}`)
    expect(hidden.main).toContain('This Group does not exist or is not visible to you.')
    expect(hidden.body).toBe(absent.body)
    expect(hidden.main).toBe(absent.main)
    // What the server told each page differs in nothing but the ID asked for (and frame times).
    const normalized = (frames: string[]): string[] => frames.map((f) => f.replace(/"(occurredAt|sentAt|nonce)":"[^"]*"/g, '"$1":"T"').replace(/urn:weft:frame:[^":]*/g, 'FRAME'))
    expect(normalized(hidden.frames)).toEqual(normalized(absent.frames))
    expect(hidden.frames.join('\n')).toContain('GROUP_NOT_FOUND')
    expect(hidden.frames.join('\n')).not.toContain('urn:weft:console-browser:mission:x')
  })

  it('renders HTML in protocol text as text: no element made, nothing run (§9, §13)', async () => {
    const context = await freshContext()
    await context.addInitScript(() => {
      const violations: string[] = []
      window['__csp'] = violations
      document.addEventListener('securitypolicyviolation', (e) => void violations.push(`${e.violatedDirective} ${e.blockedURI}`))
    })
    const { page, errors } = await consolePage(context)
    const dialogs: string[] = []
    page.on('dialog', (d) => {
      dialogs.push(d.message())
      void d.dismiss()
    })
    /** Nothing of the protocol text became markup or ran, on the screen shown now. */
    const inert = async (screen: string): Promise<void> => {
      const dom = await page.evaluate(() => ({
        xss: window['__xss'],
        images: document.querySelectorAll('img').length,
        bold: document.querySelectorAll('b').length,
        scripts: Array.from(document.querySelectorAll('script')).map((s) => s.textContent ?? ''),
        csp: window['__csp'],
      }))
      expect(dom, screen).toEqual({ xss: undefined, images: 0, bold: 0, scripts: [''], csp: [] })
    }
    await signIn(page, keyPaths.ada, ada)
    const entry = page.locator(`[data-testid="group-item"][data-group-id="${GROUP_X}"]`)
    await entry.waitFor()
    expect(await entry.locator('.group-title').textContent()).toBe(XSS_TITLE)
    await entry.click()
    await page.getByTestId('mission-title').filter({ hasText: XSS_TITLE }).waitFor()
    expect(await page.getByTestId('mission-title').textContent()).toBe(XSS_TITLE)
    await page.locator('.prose', { hasText: XSS_OBJECTIVE }).waitFor()
    expect(await page.locator('.tabpanel .prose').first().textContent()).toBe(XSS_OBJECTIVE)
    await inert('overview')

    await page.getByTestId('tab-messages').click()
    const message = page.getByTestId('message').first()
    await message.waitFor()
    expect(await page.getByTestId('message').count()).toBe(1)
    expect(await message.locator('.message-body').textContent()).toBe(XSS_BODY)
    await inert('messages')

    await page.getByTestId('tab-work').click()
    await page.getByTestId('work-node').first().waitFor()
    expect(await page.getByTestId('work-node').first().getAttribute('aria-label')).toBe(`WorkItem ${XSS_GOAL.slice(0, 29)}…, open`)
    expect(await page.getByTestId('work-node').first().locator('title').textContent()).toBe(XSS_GOAL)
    await page.getByTestId('work-node').first().click()
    expect(await page.getByTestId('work-detail').locator('.prose').textContent()).toBe(XSS_GOAL)
    await inert('work')

    await page.getByTestId('tab-events').click()
    await page.getByTestId('event-row').first().waitFor()
    await inert('events')
    expect(dialogs).toEqual([])
    expect(errors).toEqual([])
  })

  it('refuses requests of other origins, wants a token, signs no unissued challenge in, and sets no cookie (CSRF, §19)', async () => {
    /** Ada's own, valid signature over a challenge the server never issued (made up here, for the console's origin). */
    const unissuedSignIn = (): string => {
      const made: SignInChallenge = { challenge: encodeBase64url(randomBytes(32)), origin: base, issuedAt: new Date(clock.now()).toISOString(), expiresAt: new Date(clock.now() + 60_000).toISOString() }
      const person = { principalId: ada.actor.id, keyId: ada.signingKey.keyId }
      return JSON.stringify({ ...person, challenge: made.challenge, signature: encodeBase64url(ada.signingKey.pair.sign(signInTranscriptBytes(made, person))) })
    }
    // A page of another origin (same host, another port: same-site, so only the Origin check stops it).
    const evilServer = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html lang="en"><title>Elsewhere</title><p>Elsewhere</p></html>\n'))
    servers.push(evilServer)
    await new Promise<void>((resolve) => evilServer.listen(0, '127.0.0.1', resolve))
    const evilOrigin = `http://127.0.0.1:${(evilServer.address() as AddressInfo).port}`
    const { token } = await nodeSignIn(ada)
    const context = await freshContext()
    const evil = await context.newPage()
    await evil.goto(`${evilOrigin}/`)
    const servedBefore = served.length
    const adaSockets = (): number => wire.connections.filter((c) => c.principal?.id === ada.actor.id && c.status === 'open').length
    const socketsBefore = adaSockets()
    const wireLogBefore = wireLog.length
    const socketUrl = `${base.replace('http:', 'ws:')}${CONSOLE_PATHS.socket}`
    const attempts = await evil.evaluate(
      async ({ base, socketUrl, protocols }) => {
        const attempt = async (request: () => Promise<{ status: number; type: string }>): Promise<string> => {
          try {
            const r = await request()
            return `${r.type} ${r.status}`
          } catch (error) {
            return `blocked ${String(error)}`
          }
        }
        const body = JSON.stringify({ principalId: 'p', keyId: 'k', challenge: 'c', signature: 's' })
        const socket = await new Promise<string>((resolve) => {
          const ws = new WebSocket(socketUrl, protocols)
          ws.onopen = () => {
            resolve('open')
            ws.close()
          }
          ws.onclose = (e) => resolve(`closed ${e.code}`)
        })
        return {
          challenge: await attempt(() => fetch(`${base}/console/api/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })),
          // A "simple" request (what a form could send): it reaches the server, whose answer the page cannot read.
          challengeSimple: await attempt(() => fetch(`${base}/console/api/challenge`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{}' })),
          signIn: await attempt(() => fetch(`${base}/console/api/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })),
          signInSimple: await attempt(() => fetch(`${base}/console/api/sign-in`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body })),
          socket,
        }
      },
      { base, socketUrl, protocols: sessionProtocols(token) },
    )
    expect(attempts).toEqual({
      challenge: expect.stringMatching(/^blocked TypeError/),
      challengeSimple: expect.stringMatching(/^(blocked TypeError|opaque 0$)/),
      signIn: expect.stringMatching(/^blocked TypeError/),
      signInSimple: expect.stringMatching(/^(blocked TypeError|opaque 0$)/),
      socket: 'closed 1006',
    })
    // What the server answered that origin: 403 to each POST, before reading its body.
    const fromEvil = served.slice(servedBefore).filter((s) => s.origin === evilOrigin)
    expect(fromEvil.filter((s) => s.method === 'POST').map((s) => `${s.path} ${s.status}`)).toEqual([`${CONSOLE_PATHS.challenge} 403`, `${CONSOLE_PATHS.signIn} 403`])
    // The JSON requests never left the browser: their CORS preflights were refused.
    expect(fromEvil.filter((s) => s.method !== 'POST').map((s) => `${s.method} ${s.path} ${s.status}`)).toEqual([`OPTIONS ${CONSOLE_PATHS.challenge} 403`, `OPTIONS ${CONSOLE_PATHS.signIn} 403`])
    expect(adaSockets()).toBe(socketsBefore)
    // The wire server refused the upgrade for its Origin (403 AUTH_FORBIDDEN, before any WebSocket existed).
    expect(wireLog.slice(wireLogBefore).filter((e) => e.message.startsWith('human session')).map((e) => [e.code, e.message])).toEqual([['AUTH_FORBIDDEN', expect.stringContaining('(Origin)')]])

    // The console's own page: the same socket opens with that token (so the Origin is what refused it above)...
    const { page } = await consolePage(context)
    const own = await page.evaluate(
      async ({ socketUrl, protocols }) =>
        new Promise<string>((resolve) => {
          const ws = new WebSocket(socketUrl, protocols)
          ws.onopen = () => {
            resolve(`open ${ws.protocol}`)
            ws.close()
          }
          ws.onclose = (e) => resolve(`closed ${e.code}`)
        }),
      { socketUrl, protocols: sessionProtocols(token) },
    )
    expect(own).toBe(`open ${CONSOLE_PROTOCOL}`)
    // ...but the API answers nothing without the token, and an unissued challenge signs nobody in.
    const sameOrigin = await page.evaluate(
      async ({ body }) => {
        const read = async (r: { status: number; headers: { get(name: string): string | null }; json(): Promise<unknown> }) => ({ status: r.status, cookie: r.headers.get('set-cookie'), error: ((await r.json()) as { error?: { code?: string } }).error?.code })
        return {
          groups: await read(await fetch('/console/api/groups')),
          groupsBadToken: await read(await fetch('/console/api/groups', { headers: { authorization: 'Bearer AAAA' } })),
          unissued: await read(await fetch('/console/api/sign-in', { method: 'POST', headers: { 'content-type': 'application/json' }, body })),
        }
      },
      { body: unissuedSignIn() },
    )
    expect(sameOrigin).toEqual({
      groups: { status: 401, cookie: null, error: 'AUTH_REQUIRED' },
      groupsBadToken: { status: 401, cookie: null, error: 'AUTH_REQUIRED' },
      unissued: { status: 401, cookie: null, error: 'AUTH_INVALID_SIGNATURE' },
    })

    // No console response of this file, in any context, set a cookie; no browser holds one.
    const seen = await Promise.all(responseHeaders)
    const consoleResponses = seen.filter((r) => r.url.startsWith(`${base}/console`))
    const paths = new Set(consoleResponses.map((r) => new URL(r.url).pathname))
    for (const path of [CONSOLE_PATHS.app, '/console/app.js', '/console/app.css', CONSOLE_PATHS.groups, CONSOLE_PATHS.signIn]) expect([...paths]).toContain(path)
    expect(consoleResponses.filter((r) => Object.keys(r.headers).some((h) => h.toLowerCase() === 'set-cookie'))).toEqual([])
    for (const c of contexts) expect(await c.cookies()).toEqual([])
  })

  it('passes axe-core\'s label and name rules on sign-in, every Mission tab and the New Mission form', async () => {
    const source = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
    const context = await freshContext()
    const { page } = await consolePage(context)
    const findings: string[] = []
    const check = async (screen: string): Promise<void> => {
      // The CSP forbids inline scripts; evaluation over the DevTools protocol is not subject to it.
      if ((await page.evaluate(() => typeof window['axe'])) !== 'object') await page.evaluate(source)
      const results = await page.evaluate(async () => axe.run(document, { resultTypes: ['violations'] }))
      const ran = new Set([...results.passes, ...results.violations, ...results.incomplete, ...results.inapplicable].map((r) => r.id))
      expect(NAME_RULES.filter((rule) => !ran.has(rule)), `${screen}: rules that did not run`).toEqual([])
      for (const v of results.violations as AxeResult[]) {
        const nodes = v.nodes
        if (nodes.length > 0) findings.push(`${screen}: ${v.id} (${v.impact ?? ''}) ${v.help}\n${nodes.map((n) => `    ${n.target.join(' ')}: ${n.html}\n      ${n.failureSummary ?? ''}`).join('\n')}`)
      }
    }
    await check('sign-in')
    await signIn(page, keyPaths.ada, ada)
    await check('signed in')
    await page.locator(`[data-testid="group-item"][data-group-id="${GROUP_X}"]`).click()
    await page.getByTestId('mission-title').filter({ hasText: XSS_TITLE }).waitFor()
    for (const tab of ['overview', 'work', 'leases', 'budget', 'messages', 'artifacts', 'events', 'approval', 'intervene']) {
      await page.getByTestId(`tab-${tab}`).click()
      expect(await page.getByTestId(`tab-${tab}`).getAttribute('aria-selected')).toBe('true')
      if (tab === 'work') {
        await page.getByTestId('work-node').first().click()
        await page.getByTestId('work-detail').locator('.prose').waitFor()
      }
      if (tab === 'messages') await page.getByTestId('message').first().waitFor()
      if (tab === 'events') await page.getByTestId('event-row').first().waitFor()
      await check(`Mission tab ${tab}`)
    }
    await page.getByTestId('new-mission').click()
    await page.getByTestId('mission-form').waitFor()
    await check('New Mission form')
    expect(findings, `axe-core violations:\n${findings.join('\n')}`).toEqual([])
  })
})
