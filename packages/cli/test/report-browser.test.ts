/**
 * The HTML report as a reader sees it: a demo run's page rendered in headless Chromium (Debian's
 * `/usr/bin/chromium`, driven by playwright-core), with its headings, one visible Gantt bar per
 * Execution Lease in each timeline, every WorkItem node, both Missions' final states, and no
 * request leaving the page. A full-page screenshot goes to `test-artifacts/report.png`.
 *
 * Chromium is part of the test set-up (`.ci/run` installs it when missing): without it this test
 * fails rather than passing unseen.
 */
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runDemo, type DemoResult } from '../src/demo/run.js'
import { renderReport } from '../src/report/report.js'

const CHROMIUM = '/usr/bin/chromium'
const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'test-artifacts')

describe('the report in a browser', () => {
  let browser: Browser | undefined
  let page: Page
  let result: DemoResult
  const requests: string[] = []
  const errors: string[] = []

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium), as .ci/run does`)
    result = (await runDemo({ seed: 1 })).result
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    page.on('request', (r) => requests.push(r.url()))
    page.on('pageerror', (e) => errors.push(e.message))
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text())
    })
    await page.setContent(renderReport(result), { waitUntil: 'load' })
  })

  afterAll(async () => {
    await browser?.close()
  })

  it('shows the title and the six sections', async () => {
    expect(await page.title()).toBe('Weft demo report (seed 1)')
    expect(await page.locator('h2').allTextContents()).toEqual(['Missions', 'Timeline', 'WorkItem graphs', 'Statecharts', 'Failure injections and checks', 'Artifact provenance'])
    expect(errors).toEqual([])
    // Self-contained: nothing was fetched while loading.
    expect(requests).toEqual([])
  })

  it('draws one visible Gantt bar per Execution Lease in each timeline', async () => {
    for (const chart of ['#gantt-slots', '#gantt-groups']) {
      const bars = page.locator(`${chart} rect.bar`)
      expect(await bars.count()).toBe(result.timeline.length)
      const widths = await bars.evaluateAll((els) => els.map((el) => el.getBoundingClientRect().width))
      expect(widths.filter((w) => w <= 0)).toEqual([])
      const box = await page.locator(chart).boundingBox()
      expect(box?.width).toBeGreaterThan(600)
    }
  })

  it("shows both Missions' final states and every WorkItem", async () => {
    for (const label of ['checkout', 'search']) {
      const row = page.locator('#missions tr', { has: page.locator('td', { hasText: new RegExp(`^${label}$`) }) })
      await expect.poll(() => row.locator('td.mission-state').textContent()).toBe('approved')
    }
    const headings = await page.locator('#graphs h3').allTextContents()
    expect(headings).toHaveLength(3)
    for (const h of headings) expect(h).toMatch(/: approved/)
    const items = result.facts.graphs.reduce((n, g) => n + g.workItems.length, 0)
    expect(await page.locator('#graphs g.node').count()).toBe(items)
    expect(await page.locator('#graphs g.node').first().isVisible()).toBe(true)
    await mkdir(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true })
  })
})
