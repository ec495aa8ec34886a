/**
 * `weft demo --console` as a person uses it, in Debian's Chromium (driven by playwright-core):
 * the demo's Authority on the WebSocket binding with the web console (§5), run at a pace, its
 * submissions left to the person (`approvals: 'external'`). The person signs in with the key file
 * the demo wrote, watches the WorkItem graph change while the demo's Workers run (§10, §16), asks
 * for changes on one Mission and approves both from the browser, once with the keyboard alone
 * (§7.3). The Approvals in the log are then checked against the Registry: signed by the person's
 * key, over exactly the revision and Artifact set that was submitted (§6.4, §7.3).
 *
 * With `WEFT_SCREENSHOTS=DIR` the screens are saved to DIR (the README's pictures come from here:
 * `npm run screenshots -w @weft/cli`).
 *
 * Chromium is part of the test set-up (`.ci/run` installs it when missing): without it this test
 * fails rather than passing unseen.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { verify } from '@weft/codec'
import type { Event } from '@weft/spec'
import { schemaCheckForKind } from '@weft/validators/signed'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../console/scripts/build-app.mjs'
import { openDemoConsole, type DemoConsole } from '../src/demo/console.js'
import { runDemo, type DemoRun, type DemoWorld } from '../src/demo/run.js'

const CHROMIUM = '/usr/bin/chromium'
/** Virtual seconds per second: the demo's five virtual hours in about half a minute. */
const PACE = 600
const SHOTS = process.env['WEFT_SCREENSHOTS']

async function shot(page: Page, name: string): Promise<void> {
  if (SHOTS === undefined || SHOTS === '') return
  await mkdir(SHOTS, { recursive: true })
  await page.screenshot({ path: join(SHOTS, `${name}.png`) })
}

describe('weft demo --console in a browser', () => {
  let browser: Browser
  let page: Page
  let appDir: string
  let world: DemoWorld | undefined
  let opened: DemoConsole | undefined
  let run: Promise<DemoRun>
  const stop = new AbortController()
  const errors: string[] = []
  /** Server frames held back from the page while defined (see the route in beforeAll). */
  let held: (() => void)[] | undefined
  /** The search Mission's first submitted revision, on which changes were requested. */
  let firstRevision = 0

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium), as .ci/run does`)
    appDir = await mkdtemp(join(tmpdir(), 'weft-console-browser-app-'))
    await buildApp({ outDir: appDir })
    let ready: () => void = () => {}
    const started = new Promise<void>((resolve) => (ready = resolve))
    run = runDemo({
      pace: PACE,
      approvals: 'external',
      signal: stop.signal,
      hooks: {
        setup: async (w) => {
          world = w
          opened = await openDemoConsole(w, { pace: PACE, appDir })
          ready()
        },
      },
    })
    // A failure before the set-up hook must not leave beforeAll waiting for it.
    await Promise.race([started, run.then(() => undefined)])
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    page = await browser.newPage({ viewport: { width: 1360, height: 860 } })
    // The page's WebSocket passes through the test, which can hold the server's frames back: a
    // page that has fallen behind the Authority, as a slow network makes one.
    await page.routeWebSocket(/\/console\/ws$/, (ws) => {
      const server = ws.connectToServer()
      ws.onMessage((message) => server.send(message))
      // Only Events are held: the answers to the page's own Commands pass.
      const isEvent = (message: string | Buffer): boolean => String(message).includes('"frameType":"EVENT"')
      server.onMessage((message) => (held === undefined || !isEvent(message) ? ws.send(message) : held.push(() => ws.send(message))))
      ws.onClose((code, reason) => void server.close({ ...(code === undefined ? {} : { code }), ...(reason === undefined ? {} : { reason }) }))
      server.onClose((code, reason) => void ws.close({ ...(code === undefined ? {} : { code }), ...(reason === undefined ? {} : { reason }) }))
    })
    page.on('pageerror', (e) => errors.push(e.message))
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text())
    })
  }, 120_000)

  afterAll(async () => {
    stop.abort()
    await run?.catch(() => undefined)
    await browser?.close()
    await opened?.close()
    await rm(appDir, { recursive: true, force: true })
  })

  it('signs in with the key file the demo printed', async () => {
    expect(opened).toBeDefined()
    await page.goto(opened!.url)
    await shot(page, 'sign-in')
    // Choosing the file signs in at once (the key is imported and the seed wiped).
    await page.getByLabel('Key file', { exact: true }).setInputFiles(opened!.keyPath)
    await expect.poll(() => page.getByTestId('person').textContent({ timeout: 2000 }), { timeout: 10_000 }).toBe('urn:weft:demo:human:priya')
    await expect.poll(() => page.getByTestId('group-item').count(), { timeout: 10_000 }).toBe(2)
    expect(await page.getByTestId('connection-state').textContent({ timeout: 2000 })).toContain('Connected')
  }, 30_000)

  it('updates the WorkItem graph live while the Workers run', async () => {
    await page.getByTestId('group-item').filter({ hasText: 'Checkout' }).click()
    await page.getByTestId('tab-work').click()
    await page.getByTestId('work-graph').waitFor()
    const states = (): Promise<string[]> => page.getByTestId('work-node').evaluateAll((nodes) => nodes.map((n) => n.getAttribute('aria-label') ?? ''))
    const count = async (): Promise<number> => Number(await page.getByTestId('event-count').textContent({ timeout: 2000 }))
    const first = await states()
    const firstCount = await count()
    // Without a reload: new Events arrive over the WebSocket and the graph follows them.
    await expect.poll(async () => (await states()).join(' ') !== first.join(' ') && (await count()) > firstCount, { timeout: 30_000, interval: 200 }).toBe(true)
    expect((await states()).length).toBeGreaterThan(0)
    await shot(page, 'work-graph')
  }, 45_000)

  it('asks for changes on the search Mission in a second tab; the first tab, fallen behind, is refused and says so', async () => {
    const search = async (p: Page): Promise<number> => {
      await p.getByTestId('group-item').filter({ hasText: 'search' }).click()
      await p.getByTestId('tab-approval').click()
      await p.getByTestId('approve').waitFor({ timeout: 60_000 })
      return Number(await p.getByTestId('approval-revision').textContent({ timeout: 2000 }))
    }
    const revision = await search(page)
    firstRevision = revision
    expect(await page.getByTestId('approval-artifact').count()).toBeGreaterThan(0)
    await shot(page, 'approval')
    // A second tab of the same person: a session of its own.
    const second = await (await browser.newContext({ viewport: { width: 1360, height: 860 } })).newPage()
    await second.goto(opened!.url)
    await second.getByLabel('Key file', { exact: true }).setInputFiles(opened!.keyPath)
    expect(await search(second)).toBe(revision)
    held = []
    try {
      await fallenBehind(second, revision)
    } finally {
      // Its Events arrive: the page catches up with the change request.
      const release = held
      held = undefined
      for (const send of release) send()
    }
    await expect.poll(() => page.getByTestId('mission-state').textContent({ timeout: 2000 }), { timeout: 15_000 }).not.toContain('awaiting')
  }, 120_000)

  /** The second tab asks for changes; the first, held behind, tries to approve the same submission. */
  async function fallenBehind(second: Page, revision: number): Promise<void> {
    await second.getByTestId('approval-conditions').fill('Rank exact title matches first.')
    await second.getByTestId('request-changes').click()
    await expect.poll(() => second.getByTestId('approval-done').textContent({ timeout: 2000 }), { timeout: 15_000 }).toContain(`Changes requested on revision ${revision}`)
    await second.context().close()
    // The first tab still shows the submission as pending; the Authority refuses its Approval.
    expect(Number(await page.getByTestId('approval-revision').textContent({ timeout: 2000 }))).toBe(revision)
    await page.getByTestId('approve').click()
    await expect.poll(() => page.getByTestId('approval-moved').textContent({ timeout: 2000 }), { timeout: 15_000 }).toContain('moved on')
    expect(await page.getByTestId('approval-refusal').textContent({ timeout: 2000 })).toContain('INVALID_STATE_TRANSITION')
    await shot(page, 'approval-stale')
  }

  it('approves the reworked search Mission with the keyboard alone', async () => {
    const revision = firstRevision
    expect(revision).toBeGreaterThan(0)
    // The Coordinator reworks and submits a later revision; the page shows it live.
    await expect
      .poll(
        async () =>
          Number(
            await page
              .getByTestId('approval-revision')
              .textContent({ timeout: 1000 })
              .catch(() => '0'),
          ),
        { timeout: 60_000, interval: 250 },
      )
      .toBeGreaterThan(revision)
    const next = Number(await page.getByTestId('approval-revision').textContent({ timeout: 2000 }))
    // Keyboard only: Tab until the Approve button has the focus, then Enter.
    await page.getByTestId('mission-title').click()
    let focused = ''
    for (let i = 0; i < 80 && focused !== 'approve'; i++) {
      await page.keyboard.press('Tab')
      focused = await page.evaluate<string>("document.activeElement?.getAttribute('data-testid') ?? ''")
    }
    expect(focused).toBe('approve')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.getByTestId('approval-done').textContent({ timeout: 2000 }), { timeout: 15_000 }).toContain(`Approved revision ${next}`)
    await expect.poll(() => page.getByTestId('mission-state').textContent({ timeout: 2000 }), { timeout: 10_000 }).toContain('approved')
  }, 150_000)

  it('approves the checkout Mission, after which the demo run ends approved', async () => {
    await page.getByTestId('group-item').filter({ hasText: 'Checkout' }).click()
    await page.getByTestId('tab-approval').click()
    await page.getByTestId('approve').waitFor({ timeout: 90_000 })
    await page.getByTestId('approval-comments').fill('Ship it.')
    await page.getByTestId('approve').click()
    await expect.poll(() => page.getByTestId('approval-done').textContent({ timeout: 2000 }), { timeout: 15_000 }).toContain('Approved revision')
    const { result } = await run
    expect(result.approved).toBe(true)
    await page.getByTestId('tab-overview').click()
    await shot(page, 'mission')
    expect(errors).toEqual([])
  }, 120_000)

  it('recorded Approvals the Authority verified against the person’s registered key', () => {
    const w = world!
    const decisions = [w.plans.checkout.plan.groupId, w.plans.search.plan.groupId].flatMap((groupId) => {
      const events = w.authority.events(groupId)
      return events
        .filter((e: Event) => e.kind === 'mission.approved' || e.kind === 'mission.changes_requested')
        .map((event) => ({ event, submitted: events.filter((e) => e.kind === 'mission.submitted_for_approval' && (e.sequence ?? 0) < (event.sequence ?? 0)).at(-1) }))
    })
    expect(decisions.map((d) => d.event.kind).sort()).toEqual(['mission.approved', 'mission.approved', 'mission.changes_requested'])
    for (const { event, submitted } of decisions) {
      const approval = (event.payload as { approval: Record<string, unknown> & { signature: { keyId: string } } }).approval
      expect(approval['approver']).toEqual({ type: 'human', id: 'urn:weft:demo:human:priya' })
      expect(approval.signature.keyId).toBe(w.principals.owner.key.keyId)
      // The Approval as stored verifies on its own against the Registry (§6.4), not just because the Authority said so.
      const verdict = verify('approval', JSON.stringify(approval), w.registry, { validate: schemaCheckForKind })
      expect(verdict.ok, JSON.stringify(verdict)).toBe(true)
      // …and binds the submitted revision and Artifact set (§7.3).
      const under = submitted!.payload as { missionRevision: number; artifactHashes: string[] }
      expect(approval['missionRevision']).toBe(under.missionRevision)
      expect(approval['artifactHashes']).toEqual(under.artifactHashes)
    }
    // The Commands that carried them were the person's own, signed in the browser.
    expect(decisions.every(({ event }) => JSON.stringify(event).includes('urn:weft:demo:human:priya'))).toBe(true)
  })
})
