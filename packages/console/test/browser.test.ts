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
 * - Directives and intervention (§7.1, §9, §10.2): Ada posts a Message, cancels a WorkItem, cancels
 *   a Mission after a confirm step and creates a follow-up of an approved Mission, each from the
 *   page; each is her signed Command whose Event the Authority holds and the page then shows. A
 *   directive the Authority refuses (a cancel on a view held stale) shows its §19 code and a plain
 *   sentence; a person is offered no terminate, which §7.1 gives to the Coordinator or policy.
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
import { encodeBase64url, keyPairFromSeed, sha256Tagged, sign, utf8Encode, type ProtocolError } from '@weft/codec'
import type { Approval, Artifact, Event, Evidence, WorkContract } from '@weft/spec'
import { contract, PATCH_SCHEMA } from '@weft/testkit/work-contract'
import { signedVerifier } from '@weft/validators/signed'
import type { AxeResults, Result as AxeResult } from 'axe-core'
import { chromium, type Browser, type BrowserContext, type Page, type WebSocketRoute } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../scripts/build-app.mjs'
import { CONSOLE_PATHS, CONSOLE_PROTOCOL, sessionProtocols, signInTranscriptBytes, type ConsoleGroup, type ConsoleSession, type SignInChallenge } from '../src/shared/sign-in.js'
import { createConsoleServer, type ConsoleServer } from '../src/server/index.js'

/** The few page globals the evaluated functions touch (the test's TypeScript has no DOM library). */
interface PageElement {
  readonly textContent: string | null
}
declare const document: {
  querySelectorAll(selector: string): ArrayLike<PageElement>
  addEventListener(type: string, listener: (event: { violatedDirective: string; blockedURI: string }) => void): void
}
declare const window: Record<string, unknown>
declare const WebSocket: new (
  url: string,
  protocols?: string[],
) => { onopen: (() => void) | null; onclose: ((event: { code: number }) => void) | null; onerror: (() => void) | null; close(): void; readonly protocol: string }
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

/** A `weft.key/1` key file as `weft principal add human NAME` writes it (src/app/keyfile.ts). */
function keyFileText(principal: { readonly type: string; readonly id: string }, keyId: string, seed: Uint8Array): string {
  const publicKey = keyPairFromSeed(seed).publicKey
  return `${JSON.stringify({ format: 'weft.key/1', organizationId: ORGANIZATION_ID, principal, keyId, publicKey: encodeBase64url(publicKey), seed: encodeBase64url(seed), validFrom: VALID_FROM }, null, 2)}\n`
}

/** The kit's Work Contract (§10.1) for `goal`, due in a week, requiring the capability the test Organization's Agents hold. */
function workContract(goal: string): WorkContract {
  return contract({ goal, requiredCapabilities: [TEST_CAPABILITY], deadline: new Date(clock.now() + 7 * 86_400_000).toISOString() })
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

  // The key files a person would pick.
  const files: Record<keyof typeof keyPaths, string> = {
    ada: keyFileText(ada.actor, ada.signingKey.keyId, ada.seed),
    eve: keyFileText(eve.actor, eve.signingKey.keyId, eve.seed),
    // Ada's name and key ID, another seed with its own matching public key.
    wrong: keyFileText(ada.actor, ada.signingKey.keyId, createHash('sha256').update('not ada').digest()),
    // A person the Registry does not know.
    unknown: keyFileText({ type: 'human', id: `${ORGANIZATION_ID}:human:mallory` }, `${ORGANIZATION_ID}:key:human:mallory`, createHash('sha256').update('mallory').digest()),
    agent: keyFileText(coordinator.actor, coordinator.signingKey.keyId, coordinator.seed),
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
      contract: workContract(XSS_GOAL),
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
    await page
      .getByTestId('connection-state')
      .filter({ hasText: /^Connected$/ })
      .waitFor()
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
    // The Coordinator field offers the Organization's registered Agents (their cards, §6.1).
    await expect
      .poll(() => page.locator('[data-testid="m-coordinator-agents"] option').evaluateAll((options) => options.map((o) => o.getAttribute('value'))))
      .toEqual([coordinator.actor.id, org.agents.worker.actor.id].sort())
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
    await until("mission.created on the Coordinator's feed", () => received.some((e) => e.kind === 'mission.created'))
    const created = received.find((e) => e.kind === 'mission.created')!
    expect(refusals).toEqual([])
    expect(created).toMatchObject({ groupId, sequence: 1, actor: ada.actor, acceptedBy: org.authorityService.actor, cause: { type: 'command' } })
    // What the form said, as the person typed it: the Mission, its owner and Coordinator, the planning Conversation, both seats (§7.1).
    expect(created.payload).toMatchObject({
      mission: {
        groupId,
        objective: 'Write the release notes.',
        definitionOfDone: [{ criterionId: 'written', description: 'The notes are written.', evidenceRequired: ['human_review'] }],
        missionOwner: ada.actor,
        coordinator: { agentId: coordinator.actor.id, coordinatorEpoch: 1 },
        state: 'active',
        approvalPolicy: { finalHumanApproval: true },
      },
      conversation: { title, createdBy: ada.actor },
      memberships: [
        { member: ada.actor, role: 'mission_owner' },
        { member: coordinator.actor, role: 'coordinator' },
      ],
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
    await until("the outsider's refusal", () => outsiderErrors.length > 0)
    expect(outsiderErrors).toEqual(['GROUP_NOT_FOUND'])
    expect(leaked).toEqual([])
    expect(errors).toEqual([])
  })

  it("shows a non-member neither another person's Group nor its existence (§8, §17.2)", async () => {
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
      // biome-ignore lint/performance/useDomNodeTextContent: the text as rendered (innerText) is what a person sees
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
      const made: SignInChallenge = {
        challenge: encodeBase64url(randomBytes(32)),
        origin: base,
        issuedAt: new Date(clock.now()).toISOString(),
        expiresAt: new Date(clock.now() + 60_000).toISOString(),
      }
      const person = { principalId: ada.actor.id, keyId: ada.signingKey.keyId }
      return JSON.stringify({ ...person, challenge: made.challenge, signature: encodeBase64url(ada.signingKey.pair.sign(signInTranscriptBytes(made, person))) })
    }
    // A page of another origin (same host, another port: same-site, so only the Origin check stops it).
    const evilServer = createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><html lang="en"><title>Elsewhere</title><p>Elsewhere</p></html>\n'),
    )
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
    expect(
      wireLog
        .slice(wireLogBefore)
        .filter((e) => e.message.startsWith('human session'))
        .map((e) => [e.code, e.message]),
    ).toEqual([['AUTH_FORBIDDEN', expect.stringContaining('(Origin)')]])

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
        const read = async (r: { status: number; headers: { get(name: string): string | null }; json(): Promise<unknown> }) => ({
          status: r.status,
          cookie: r.headers.get('set-cookie'),
          error: ((await r.json()) as { error?: { code?: string } }).error?.code,
        })
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

  it("passes axe-core's label and name rules on sign-in, every Mission tab and the New Mission form", async () => {
    const source = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
    const context = await freshContext()
    const { page } = await consolePage(context)
    const findings: string[] = []
    const check = async (screen: string): Promise<void> => {
      // The CSP forbids inline scripts; evaluation over the DevTools protocol is not subject to it.
      if ((await page.evaluate(() => typeof window['axe'])) !== 'object') await page.evaluate(source)
      const results = await page.evaluate(async () => axe.run(document, { resultTypes: ['violations'] }))
      const ran = new Set([...results.passes, ...results.violations, ...results.incomplete, ...results.inapplicable].map((r) => r.id))
      expect(
        NAME_RULES.filter((rule) => !ran.has(rule)),
        `${screen}: rules that did not run`,
      ).toEqual([])
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

describe('directives and intervention from the browser, each a signed Command whose Event the Authority holds (§7.1, §9, §10.2, §19)', () => {
  const tag = (): string => randomBytes(4).toString('hex')
  const now = (): string => new Date(clock.now()).toISOString()
  const selection = {
    requiredCapabilities: [TEST_CAPABILITY],
    verifiedMatches: [TEST_CAPABILITY],
    authorizationEligible: true,
    availabilityEstimate: VALID_FROM,
    expectedCost: 1,
    reliabilityEvidence: [],
    policyRulesApplied: ['weft.test.first-fit'],
  }

  /** Ada's fresh Mission made from Node, coordinated by `coordinator`, with `work` authorized as open WorkItems (goal → ID). */
  async function missionOfAda(title: string, work: readonly string[] = []): Promise<{ groupId: string; missionId: string; workItemIds: Record<string, string> }> {
    const id = tag()
    const groupId = `urn:weft:console-browser:group:${id}`
    const missionId = `urn:weft:console-browser:mission:${id}`
    await clientOf(ada).missionCreate(
      {
        missionId,
        title,
        objective: `${title}, then stop.`,
        definitionOfDone: [{ criterionId: 'done', description: 'It is done.', evidenceRequired: ['deterministic_test'] }],
        deadline: new Date(clock.now() + 30 * 86_400_000).toISOString(),
        budget: { currency: 'USD', financialLimit: 100, modelTokenLimit: 100_000, toolCallLimit: 1000 },
        approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
        coordinatorAgentId: coordinator.actor.id,
        coordinatorLeaseSeconds: 86_400,
      },
      { groupId },
    )
    // The Agents' Session Epochs are current (§6.3): earlier tests' HELLOs over the WebSocket opened new sessions.
    for (const agent of [coordinator, worker]) clientOf(agent).observe(authority.organizationEvents())
    const workItemIds: Record<string, string> = {}
    for (const goal of work) {
      workItemIds[goal] = `urn:weft:console-browser:work:${tag()}`
      await clientOf(coordinator).workAuthorize({ workItemId: workItemIds[goal]!, contract: workContract(goal) }, { groupId })
    }
    return { groupId, missionId, workItemIds }
  }

  /**
   * Brings a fresh Mission of Ada's to `approved` through real Commands (§7.3): the worker does the
   * one WorkItem, the Coordinator accepts it and submits the Mission, Ada approves exactly that
   * revision and Artifact set.
   */
  async function approvedMissionOfAda(title: string): Promise<{ groupId: string; missionId: string }> {
    const goal = 'Do the work'
    const { groupId, missionId, workItemIds } = await missionOfAda(title, [goal])
    const workItemId = workItemIds[goal]!
    const [owner, coord, work] = [clientOf(ada).withGroup(groupId), clientOf(coordinator).withGroup(groupId), clientOf(worker).withGroup(groupId)]
    await coord.membershipChange({ membershipId: `${groupId}:membership:worker`, member: worker.actor, role: 'worker', state: 'active', scopes: ['group:read'] })
    await coord.workOffer({ workItemId, candidateAgentIds: [worker.actor.id], selectionBasis: selection, offerExpiresInSeconds: 600 })
    const accepted = await work.workAcceptOffer({ workItemId, ownershipLeaseSeconds: 3600 })
    const ownershipEpoch = (accepted.events[0]!.payload as { ownershipEpoch: number }).ownershipEpoch
    const started = await work.workStart({ workItemId, ownershipEpoch, executionLeaseSeconds: 600 })
    const executionLeaseId = (started.events.find((e) => e.kind === 'work.started')!.payload as { executionLease: { leaseId: string } }).executionLease.leaseId
    const content = `diff --git a/${tag()} b/done`
    const contentHash = sha256Tagged(utf8Encode(content))
    const artifact = sign(
      'artifact',
      {
        artifactId: `urn:weft:console-browser:artifact:${tag()}`,
        contentHash,
        uri: 'urn:weft:console-browser:blob:patch',
        sizeBytes: utf8Encode(content).byteLength,
        mediaType: 'text/x-diff',
        schemaUri: PATCH_SCHEMA,
        producer: { agentId: worker.actor.id, agentCardVersion: 1, capabilities: [TEST_CAPABILITY] },
        missionId,
        groupId,
        workItemId,
        sourceArtifactHashes: [],
        toolVersions: [],
        modelVersions: [],
        classification: 'internal',
        createdAt: now(),
      },
      worker.signingKey,
    ) as unknown as Artifact
    await work.artifactPublish({ artifact, ownershipEpoch, executionLeaseId })
    const evidenceBy = (who: typeof worker): Evidence =>
      sign(
        'evidence',
        {
          evidenceId: `urn:weft:console-browser:evidence:${tag()}`,
          missionId,
          groupId,
          workItemId,
          type: 'deterministic_test',
          subject: { type: 'work_item', id: workItemId },
          criterionIds: ['tests-pass'],
          method: 'Ran the test suite.',
          result: 'passed',
          artifactHashes: [contentHash],
          generatedBy: who.actor,
          createdAt: now(),
        },
        who.signingKey,
      ) as unknown as Evidence
    await work.workSubmit({ workItemId, ownershipEpoch, executionLeaseId, artifactIds: [artifact.artifactId], evidence: [evidenceBy(worker)] })
    await coord.workAcceptResult({ workItemId, evidence: [evidenceBy(coordinator)] })
    await coord.missionSubmitForApproval({ artifactHashes: [contentHash] })
    const submission = authority.group(groupId)!.submission!
    const approval = sign(
      'approval',
      {
        approvalId: `urn:weft:console-browser:approval:${tag()}`,
        kind: 'mission_final',
        decision: 'approved',
        missionId,
        groupId,
        missionRevision: submission.missionRevision,
        artifactHashes: [...submission.artifactHashes],
        acceptancePolicyVersion: '1.0.0',
        approver: ada.actor,
        comments: 'Good.',
        conditions: [],
        occurredAt: now(),
      },
      ada.signingKey,
    ) as unknown as Approval
    await owner.missionApprove({ approval })
    expect(authority.group(groupId)?.mission?.state).toBe('approved')
    return { groupId, missionId }
  }

  /** Ada's page, signed in, with Group `groupId` (made before sign-in) open at `title`. */
  async function adaOn(groupId: string, title: string, page?: Page): Promise<{ page: Page; errors: string[] }> {
    const opened = page === undefined ? await consolePage(await freshContext()) : { page, errors: [] as string[] }
    if (page !== undefined) page.on('pageerror', (e) => opened.errors.push(e.message))
    await signIn(opened.page, keyPaths.ada, ada)
    await opened.page.locator(`[data-testid="group-item"][data-group-id="${groupId}"]`).click()
    await opened.page.getByTestId('mission-title').filter({ hasText: title }).waitFor()
    // Live: the feed has replayed the Group up to the Authority's head.
    await opened.page
      .getByTestId('event-count')
      .filter({ hasText: new RegExp(`^${authority.events(groupId).length}$`) })
      .waitFor()
    return opened
  }

  /** The Events of `groupId` after its first `from`. */
  const eventsAfter = (groupId: string, from: number): Event[] => authority.events(groupId).slice(from)

  it('posts a Message, cancels a WorkItem and, after a confirm step, cancels the Mission: each Ada’s Command, its Event on the Authority and on the page', async () => {
    const title = `Intervene ${tag()}`
    const [cancelled, spare] = ['Cancel me from the browser', 'Left to the Mission’s cancellation']
    const { groupId, workItemIds } = await missionOfAda(title, [cancelled, spare])
    const { page, errors } = await adaOn(groupId, title)

    // 1. A Message (§9): message.posted, its author Ada, its text what she typed; the page lists it.
    const body = `Status please, ${tag()}.`
    let from = authority.events(groupId).length
    await page.getByTestId('tab-messages').click()
    expect(await page.getByTestId('message').count()).toBe(0)
    await page.getByTestId('post-text').fill(body)
    await page.getByTestId('post-submit').click()
    await until('message.posted on the Authority', () => eventsAfter(groupId, from).some((e) => e.kind === 'message.posted'))
    const posted = eventsAfter(groupId, from).filter((e) => e.kind === 'message.posted')
    expect(posted).toHaveLength(1)
    expect(posted[0]).toMatchObject({
      actor: ada.actor,
      cause: { type: 'command' },
      payload: { kind: 'message', author: ada.actor, groupId, conversationId: authority.group(groupId)!.group.mainConversationId, content: [{ type: 'text', text: body }], authority: false },
    })
    await page.getByTestId('message').filter({ hasText: body }).waitFor()
    expect(await page.getByTestId('message').count()).toBe(1)
    expect(await page.getByTestId('message').locator('.message-body').textContent()).toBe(body)
    expect(await page.getByTestId('message').locator('.author').textContent()).toBe(ada.actor.id)
    expect(await page.getByTestId('post-text').inputValue()).toBe('')
    expect(await page.locator('.tabpanel .refusal').count()).toBe(0)
    expect(await page.getByRole('status').filter({ hasText: 'Message posted.' }).count()).toBe(1)

    // 2. A WorkItem cancelled from its detail (§10.2): work.cancelled by Ada with her reason; the other stays open.
    from = authority.events(groupId).length
    await page.getByTestId('tab-work').click()
    const node = page.locator('[data-testid="work-node"]', { hasText: cancelled })
    expect(await node.getAttribute('data-state')).toBe('open')
    await node.click()
    await page.getByTestId('work-detail').locator('.prose', { hasText: cancelled }).waitFor()
    expect(await page.getByTestId('cancel-work').isDisabled()).toBe(true)
    await page.getByTestId('cancel-work-reason').fill('Not needed any more.')
    await page.getByTestId('cancel-work').click()
    await until('work.cancelled on the Authority', () => eventsAfter(groupId, from).some((e) => e.kind === 'work.cancelled'))
    expect(eventsAfter(groupId, from).map((e) => [e.kind, e.actor.id, e.workItemId])).toEqual([['work.cancelled', ada.actor.id, workItemIds[cancelled]]])
    expect(eventsAfter(groupId, from)[0]!.payload).toEqual({ workItemId: workItemIds[cancelled], reason: 'Not needed any more.' })
    expect(authority.group(groupId)!.workItems.get(workItemIds[cancelled]!)!.doc.state).toBe('cancelled')
    expect(authority.group(groupId)!.workItems.get(workItemIds[spare]!)!.doc.state).toBe('open')
    await page.locator('[data-testid="work-node"][data-state="cancelled"]', { hasText: cancelled }).waitFor()
    expect(await page.getByTestId('work-detail').locator('.badge').textContent()).toBe('cancelled')
    expect(await page.getByTestId('work-detail').textContent()).toContain('Not needed any more.')
    // A cancelled WorkItem offers no cancel any more.
    expect(await page.getByTestId('cancel-work').count()).toBe(0)
    expect(await page.locator('[data-testid="work-node"]', { hasText: spare }).getAttribute('data-state')).toBe('open')

    // 3. The Mission cancelled (§7.1): nothing is signed before the confirm step; then mission.cancelled
    // by Ada with her reason, and the open WorkItem cancelled with it by the Authority.
    from = authority.events(groupId).length
    await page.getByTestId('tab-intervene').click()
    expect(await page.getByTestId('cancel-mission').isDisabled()).toBe(true)
    await page.getByTestId('stop-reason').fill('The release was called off.')
    await page.getByTestId('cancel-mission').click()
    await page.getByTestId('confirm-stop').waitFor()
    expect(await page.getByTestId('confirm-stop').textContent()).toBe('Yes, cancel')
    await page.waitForTimeout(200)
    expect(eventsAfter(groupId, from)).toEqual([])
    await page.getByTestId('confirm-stop').click()
    await until('mission.cancelled on the Authority', () => eventsAfter(groupId, from).some((e) => e.kind === 'mission.cancelled'))
    expect(eventsAfter(groupId, from).map((e) => [e.kind, e.actor.id, e.workItemId ?? null])).toEqual([
      ['mission.cancelled', ada.actor.id, null],
      ['work.cancelled', org.authorityService.actor.id, workItemIds[spare]],
    ])
    expect(eventsAfter(groupId, from)[0]).toMatchObject({ cause: { type: 'command' }, payload: { reason: 'The release was called off.' } })
    expect(authority.group(groupId)!.mission!.state).toBe('cancelled')
    await page
      .getByTestId('mission-state')
      .filter({ hasText: /^cancelled$/ })
      .waitFor()
    expect(await page.getByRole('status').filter({ hasText: 'The Mission was cancelled.' }).count()).toBe(1)
    expect(await page.locator('.tabpanel').textContent()).toContain('The Mission is cancelled: it cannot be stopped any more.')
    expect(await page.getByTestId('cancel-mission').count()).toBe(0)
    expect(await page.getByTestId('stop-refusal').count()).toBe(0)
    expect(await page.locator(`[data-testid="group-item"][data-group-id="${groupId}"] .badge`).textContent()).toBe('cancelled')
    expect(await page.getByTestId('event-count').textContent()).toBe(String(authority.events(groupId).length))
    expect(errors).toEqual([])
  })

  it('creates a follow-up of an approved Mission from the browser: a new Group whose Mission names the original (§7.1 followUpToMissionId)', async () => {
    const title = `Approved ${tag()}`
    const original = await approvedMissionOfAda(title)
    const originalHead = authority.events(original.groupId).length
    const { page, errors } = await adaOn(original.groupId, title)
    await page
      .getByTestId('mission-state')
      .filter({ hasText: /^approved$/ })
      .waitFor()
    await page.getByTestId('tab-intervene').click()
    // An approved Mission cannot be stopped, only followed up.
    expect(await page.getByTestId('cancel-mission').count()).toBe(0)
    await page.getByTestId('follow-up').click()
    await page.getByTestId('mission-form').waitFor()
    expect(await page.locator('#mission-form-title').textContent()).toBe('Follow-up Mission')
    expect(await page.getByTestId('m-title').inputValue()).toBe(`Follow-up: ${title}`)
    const followTitle = `Follow-up: ${title}`
    const reason = `A defect was found, ${tag()}.`
    await page.getByTestId('m-reason').fill(reason)
    await page.getByTestId('m-objective').fill('Fix the defect.')
    await page.getByTestId('m-done').fill('fixed: The defect is fixed.')
    await page.getByTestId('m-coordinator').fill(coordinator.actor.id)
    const listedBefore = await page.getByTestId('group-item').evaluateAll((items) => items.map((i) => (i as unknown as { getAttribute(name: string): string | null }).getAttribute('data-group-id')))
    expect(listedBefore).toContain(original.groupId)
    await page.getByTestId('mission-submit').click()
    const current = page.locator('[data-testid="group-item"][aria-current="page"]')
    await current.filter({ hasText: followTitle }).waitFor()
    await page.getByTestId('mission-title').filter({ hasText: followTitle }).waitFor()
    const groupId = (await current.getAttribute('data-group-id'))!
    expect(groupId).not.toBe(original.groupId)
    expect(listedBefore).not.toContain(groupId)
    expect(authority.group(groupId)).toBeDefined()
    expect(await page.getByTestId('mission-refusal').count()).toBe(0)

    // On the Authority: the new Group's first Event is mission.follow_up.created, Ada's, linked to the original.
    const created = authority.events(groupId)[0]!
    expect(created).toMatchObject({ kind: 'mission.follow_up.created', groupId, sequence: 1, actor: ada.actor, cause: { type: 'command' } })
    expect(created.payload).toMatchObject({ reason, mission: { followUpToMissionId: original.missionId, missionOwner: ada.actor, objective: 'Fix the defect.', state: 'active' } })
    expect(authority.group(groupId)?.mission).toMatchObject({ followUpToMissionId: original.missionId, state: 'active', missionOwner: ada.actor })
    expect(authority.group(groupId)?.mission?.missionId).not.toBe(original.missionId)
    // The original stays approved and untouched.
    expect(authority.group(original.groupId)?.mission?.state).toBe('approved')
    expect(authority.events(original.groupId)).toHaveLength(originalHead)
    // In Ada's list (the page's, and what the server lists for her).
    expect(await page.locator(`[data-testid="group-item"][data-group-id="${groupId}"]`).count()).toBe(1)
    await page
      .getByTestId('mission-state')
      .filter({ hasText: /^active$/ })
      .waitFor()
    const { token } = await nodeSignIn(ada)
    const listed = (await (await fetch(`${base}${CONSOLE_PATHS.groups}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { groups: ConsoleGroup[] }
    const listedIds = listed.groups.map((g) => g.groupId)
    expect(listed.groups.find((g) => g.groupId === groupId)).toMatchObject({ missionState: 'active', title: followTitle })
    expect(listedIds).toContain(groupId)
    expect(listedIds).toContain(original.groupId)
    expect(errors).toEqual([])
  })

  it('shows a refused directive as its §19 code and a plain sentence: cancels on a stale view (INVALID_STATE_TRANSITION); offers a person no terminate (§7.1)', async () => {
    const title = `Refusals ${tag()}`
    const goal = 'Some work'
    const { groupId, workItemIds } = await missionOfAda(title, [goal])
    // The page's WebSocket through a route that can hold this Group's EVENT frames back: a view gone stale.
    const context = await freshContext()
    const held: string[] = []
    let holding = false
    let route: WebSocketRoute | undefined
    const page = await context.newPage()
    await page.routeWebSocket(
      (url) => url.pathname === CONSOLE_PATHS.socket,
      (ws) => {
        route = ws
        const server = ws.connectToServer()
        server.onMessage((frame) => {
          if (holding && typeof frame === 'string' && frame.includes('"frameType":"EVENT"') && frame.includes(groupId)) held.push(frame)
          else ws.send(frame)
        })
      },
    )
    await page.goto(appUrl)
    await page.getByTestId('key-file').waitFor()
    const { errors } = await adaOn(groupId, title, page)

    // §7.1 and the Command schema give mission.terminate to the Coordinator or Organization policy only:
    // the console offers a person no Terminate that could never be accepted.
    await page.getByTestId('tab-intervene').click()
    await page.getByTestId('cancel-mission').waitFor()
    expect(await page.getByTestId('terminate-mission').count()).toBe(0)
    expect(await page.getByRole('button', { name: /terminate/i }).count()).toBe(0)

    // Ada cancels the Mission elsewhere (from Node) while this page's view is held back...
    holding = true
    const from = authority.events(groupId).length
    await clientOf(ada).withGroup(groupId).missionCancel({ reason: 'Cancelled elsewhere.' })
    expect(authority.group(groupId)!.mission!.state).toBe('cancelled')
    expect(authority.group(groupId)!.workItems.get(workItemIds[goal]!)!.doc.state).toBe('cancelled')
    const head = authority.events(groupId).length
    await until('the held frames of the cancellation', () => held.length === head - from)
    // ...so the page still offers a cancel, which the Authority refuses for the Mission's state.
    expect(await page.getByTestId('mission-state').textContent()).toBe('active')
    await page.getByTestId('stop-reason').fill('Stop it.')
    await page.getByTestId('cancel-mission').click()
    await page.getByTestId('confirm-stop').click()
    const note = page.getByTestId('stop-refusal')
    await note.waitFor()
    expect(await note.getAttribute('role')).toBe('alert')
    expect(await note.locator('code').textContent()).toBe('INVALID_STATE_TRANSITION')
    expect(await note.textContent()).toBe('INVALID_STATE_TRANSITION The Mission or WorkItem is no longer in a state that allows this.')
    // The confirm step stays, so the person sees what was refused; nothing reached the log.
    expect(await page.getByTestId('confirm-stop').isVisible()).toBe(true)
    expect(await page.getByRole('status').filter({ hasText: 'The Mission was cancelled.' }).count()).toBe(0)

    // The same for the WorkItem, cancelled with its Mission: its stale detail still offers a cancel.
    await page.getByTestId('tab-work').click()
    await page.locator('[data-testid="work-node"][data-state="open"]', { hasText: goal }).click()
    await page.getByTestId('cancel-work-reason').fill('Not needed.')
    await page.getByTestId('cancel-work').click()
    const workNote = page.getByTestId('cancel-work-refusal')
    await workNote.waitFor()
    expect(await workNote.textContent()).toBe('INVALID_STATE_TRANSITION The Mission or WorkItem is no longer in a state that allows this.')
    expect(authority.events(groupId)).toHaveLength(head)
    expect(eventsAfter(groupId, from).map((e) => [e.kind, e.actor.id])).toEqual([
      ['mission.cancelled', ada.actor.id],
      ['work.cancelled', org.authorityService.actor.id],
    ])
    expect(eventsAfter(groupId, from)[0]!.payload).toEqual({ reason: 'Cancelled elsewhere.' })

    // Once the held Events arrive the page shows the Mission and its WorkItem as they are.
    holding = false
    for (const frame of held.splice(0)) route!.send(frame)
    await page.locator('[data-testid="work-node"][data-state="cancelled"]', { hasText: goal }).waitFor()
    expect(await page.getByTestId('cancel-work').count()).toBe(0)
    await page
      .getByTestId('mission-state')
      .filter({ hasText: /^cancelled$/ })
      .waitFor()
    await page.getByTestId('tab-intervene').click()
    expect(await page.locator('.tabpanel').textContent()).toContain('The Mission is cancelled: it cannot be stopped any more.')
    expect(await page.getByTestId('event-count').textContent()).toBe(String(head))
    expect(errors).toEqual([])
  })
})
