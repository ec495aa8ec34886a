/**
 * The world of the console's browser tests (`browser-*.test.ts`): Debian's Chromium
 * (`/usr/bin/chromium`, driven by playwright-core) against a real server, a test Organization's
 * Authority on `createWireServer` with `createConsoleServer` mounted on the same port, and the
 * browser app built once into a temporary directory. A test file calls {@link useBrowserWorld}
 * once; each file then has a world of its own (vitest runs each file in its own process).
 *
 * Chromium is part of the test set-up (`.ci/run` installs it when missing): without it these
 * tests fail rather than passing unseen.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Authority } from '@weft/authority'
import { createTestOrganization, TEST_CAPABILITY, type ClientOf, type TestPrincipal } from '@weft/authority/testing'
import { createWireServer, type WireLogEntry, type WireServer } from '@weft/authority/wire'
import type { WebSocketConnection } from '@weft/client/wire'
import { encodeBase64url, keyPairFromSeed } from '@weft/codec'
import type { WorkContract } from '@weft/spec'
import { contract } from '@weft/testkit/work-contract'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, expect } from 'vitest'
import { buildApp } from '../scripts/build-app.mjs'
import { CONSOLE_PATHS, CONSOLE_PROTOCOL, signInTranscriptBytes, type ConsoleSession, type SignInChallenge } from '../src/shared/sign-in.js'
import { createConsoleServer, type ConsoleServer } from '../src/server/index.js'

const CHROMIUM = '/usr/bin/chromium'
const ORGANIZATION_ID = 'urn:weft:console-browser:org'
/** When the test Organization's keys become valid. */
export const VALID_FROM = '2026-01-01T00:00:00Z'
/** The test Organization: two people (Ada, Eve) and two Agents (a Coordinator, a worker). */
export const org = createTestOrganization({ organizationId: ORGANIZATION_ID, humans: ['ada', 'eve'], agents: ['coordinator', 'worker'], validFrom: VALID_FROM })
/** The test Organization's people. */
export const { ada, eve } = org.humans
/** The test Organization's Agents. */
export const { coordinator, worker } = org.agents

/** One clock for the Authority, the wire server and the console (Commands are fresh within ±300 s of it, §6.4). */
export const clock = { now: () => Date.now() }

/** A `weft.key/1` key file as `weft principal add human NAME` writes it (src/app/keyfile.ts). */
function keyFileText(principal: { readonly type: string; readonly id: string }, keyId: string, seed: Uint8Array): string {
  const publicKey = keyPairFromSeed(seed).publicKey
  return `${JSON.stringify({ format: 'weft.key/1', organizationId: ORGANIZATION_ID, principal, keyId, publicKey: encodeBase64url(publicKey), seed: encodeBase64url(seed), validFrom: VALID_FROM }, null, 2)}\n`
}

/** The kit's Work Contract (§10.1) for `goal`, due in a week, requiring the capability the test Organization's Agents hold. */
export function workContract(goal: string): WorkContract {
  return contract({ goal, requiredCapabilities: [TEST_CAPABILITY], deadline: new Date(clock.now() + 7 * 86_400_000).toISOString() })
}

/** An HTTP request the listener answered, as {@link served} records it. */
export interface Served {
  readonly method: string
  readonly path: string
  readonly origin: string | undefined
  readonly status: number
}

// The world, set by the beforeAll of {@link useBrowserWorld}; each is read by the tests only after it.
/** The Chromium every context of the file is opened in. */
export let browser: Browser
/** The test Organization's Authority. */
export let authority: Authority
/** A client of the Authority for a member of the test Organization, from Node. */
export let clientOf: ClientOf
/** The wire server the console is mounted on. */
export let wire: WireServer
/** The console mounted on {@link wire}. */
export let consoleServer: ConsoleServer
/** The server's origin, `http://127.0.0.1:PORT`. */
export let base: string
/** The console app's URL. */
export let appUrl: string
/** The key files a person could pick: Ada's, Eve's, Ada's name with another key, an unknown person's and an Agent's. */
export const keyPaths: Record<'ada' | 'eve' | 'wrong' | 'unknown' | 'agent', string> = { ada: '', eve: '', wrong: '', unknown: '', agent: '' }
/** Every HTTP request the listener answered, with its status. */
export const served: Served[] = []
/** Every response a browser context saw, with all its headers (Set-Cookie included). */
export const responseHeaders: Promise<{ readonly url: string; readonly headers: Record<string, string> }>[] = []
/** Every context {@link freshContext} opened, closed after the file. */
export const contexts: BrowserContext[] = []
/** WebSocket connections a test opened from Node, closed after the file. */
export const sockets: WebSocketConnection[] = []
/** HTTP servers a test started, closed after the file. */
export const servers: Server[] = []
/** What the wire server logged. */
export const wireLog: WireLogEntry[] = []

/** A fresh browser context (its own memory, so its own session), every response recorded. */
export async function freshContext(): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  context.setDefaultTimeout(10_000)
  context.on('response', (response) => void responseHeaders.push(response.allHeaders().then((headers) => ({ url: response.url(), headers }))))
  contexts.push(context)
  return context
}

/** A page of `context` on the console with its errors collected. */
export async function consolePage(context: BrowserContext): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  await page.goto(appUrl)
  await page.getByTestId('key-file').waitFor()
  return { page, errors }
}

/** Signs `who` in through the key file input; resolves once the top bar names them. */
export async function signIn(page: Page, keyPath: string, who: TestPrincipal<'human'>): Promise<void> {
  const groups = page.waitForResponse((r) => r.url().endsWith(CONSOLE_PATHS.groups))
  await page.getByTestId('key-file').setInputFiles(keyPath)
  await page.getByTestId('person').waitFor()
  expect(await page.getByTestId('person').textContent()).toBe(who.actor.id)
  expect((await groups).status()).toBe(200)
}

/** Waits for `done`, polling every 20 ms. */
export async function until(what: string, done: () => boolean, timeoutMs = 5000): Promise<void> {
  for (const began = Date.now(); !done(); await new Promise((resolve) => setTimeout(resolve, 20))) {
    if (Date.now() - began > timeoutMs) throw new Error(`timed out waiting for ${what}`)
  }
}

/** The console's sign-in from Node, as the README shows it: a bearer token for `who`. */
export async function nodeSignIn(who: TestPrincipal<'human'>): Promise<ConsoleSession> {
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

/**
 * Sets up the world of this test file before its tests and takes it down after them: the key
 * files, the Authority, the wire server with the console on it, the built app and Chromium. Call
 * it once, at the top of a test file; the exports above are the world's once its tests run.
 */
export function useBrowserWorld(): void {
  let dir: string | undefined

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium), as .ci/run does`)
    dir = await mkdtemp(join(tmpdir(), 'weft-console-browser-'))
    const appDir = join(dir, 'app')
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
    // The CSRF test's cookie check, over every file: no console response in any context of this
    // file set a cookie and no context holds one (the console authenticates by token, §19).
    const seen = await Promise.all(responseHeaders)
    const setCookie = seen.filter((r) => r.url.startsWith(`${base}/console`) && Object.keys(r.headers).some((h) => h.toLowerCase() === 'set-cookie'))
    const held = (await Promise.all(contexts.map((c) => c.cookies().catch(() => [])))).flat()
    for (const c of contexts) await c.close().catch(() => undefined)
    await browser?.close()
    for (const s of sockets) await s.close().catch(() => undefined)
    consoleServer?.close()
    await wire?.close()
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
    if (dir !== undefined) await rm(dir, { recursive: true, force: true })
    expect(setCookie).toEqual([])
    expect(held).toEqual([])
  })
}
