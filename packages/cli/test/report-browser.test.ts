/**
 * The HTML report as a reader sees it: a demo run's page rendered in headless Chromium (Debian's
 * `/usr/bin/chromium`, driven by playwright-core), with its headings, one visible Gantt bar per
 * Execution Lease in each timeline, every WorkItem node, both Missions' final states, statechart
 * labels whose rendered text stays inside its box and clear of other text, chart text that stays
 * legible when printed on A4 landscape, and no request leaving the page. A full-page screenshot
 * goes to `test-artifacts/report.png`.
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

/** The parts of SVG DOM elements the page checks read (the test's TypeScript has no DOM library). */
interface SvgRoot {
  readonly viewBox: { readonly baseVal: { readonly width: number; readonly height: number } }
}
interface SvgText {
  getBBox(): { readonly x: number; readonly y: number; readonly width: number; readonly height: number }
}
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

  it('shows the title and the eight sections', async () => {
    expect(await page.title()).toBe('Weft demo report (seed 1)')
    expect(await page.locator('h2').allTextContents()).toEqual([
      'Missions',
      'Timeline',
      'WorkItem graphs',
      'Statecharts',
      'Failure injections and checks',
      'Budget ledger',
      'Artifact provenance',
      'Event log',
    ])
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

  it('renders every statechart text inside its box and the drawing, and no two texts on top of each other', async () => {
    for (const label of ['the WorkItem machine', 'the Mission machine']) {
      const found = await page.locator(`svg[aria-label="${label}"]`).evaluate((svg) => {
        const view = (svg as unknown as SvgRoot).viewBox.baseVal
        const boxes = [...svg.querySelectorAll('g.node, g.elabel')].map((g) => {
          const [x, y, w, h] = g.getAttribute('data-box')!.split(' ').map(Number) as [number, number, number, number]
          const texts = [...g.querySelectorAll('text')].map((t) => (t as unknown as SvgText).getBBox())
          return { box: { x, y, w, h }, texts: texts.map((b) => ({ x: b.x, y: b.y, w: b.width, h: b.height })) }
        })
        return { view: { w: view.width, h: view.height }, boxes }
      })
      const texts = found.boxes.flatMap((b) => b.texts)
      expect(texts.length).toBeGreaterThan(10)
      for (const { box, texts: inner } of found.boxes) {
        for (const t of inner) {
          // The rendered text, not an estimate, fits its node or label box (1 px for antialiasing).
          expect(t.x, JSON.stringify({ box, t })).toBeGreaterThanOrEqual(box.x - 1)
          expect(t.x + t.w, JSON.stringify({ box, t })).toBeLessThanOrEqual(box.x + box.w + 1)
          expect(t.y).toBeGreaterThanOrEqual(box.y - 1)
          expect(t.y + t.h).toBeLessThanOrEqual(box.y + box.h + 1)
          expect(t.x + t.w).toBeLessThanOrEqual(found.view.w)
          expect(t.y + t.h).toBeLessThanOrEqual(found.view.h)
        }
      }
      const apart = (a: (typeof texts)[number], b: (typeof texts)[number]): boolean => a.x + a.w <= b.x + 0.5 || b.x + b.w <= a.x + 0.5 || a.y + a.h <= b.y + 0.5 || b.y + b.h <= a.y + 0.5
      for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) expect(apart(texts[i]!, texts[j]!), `${label}: texts ${i} and ${j} overlap`).toBe(true)
    }
  })

  it('prints the timelines in colour with bar labels and ticks no smaller than 10 px on A4 landscape', async () => {
    const print = await browser!.newPage({ viewport: { width: 1047, height: 740 } })
    try {
      await print.emulateMedia({ media: 'print' })
      await print.setContent(renderReport(result), { waitUntil: 'load' })
      for (const chart of ['#gantt-slots', '#gantt-groups']) {
        const sizes = await print.locator(chart).evaluate((svg) => {
          const style = (globalThis as unknown as { getComputedStyle(e: unknown): { fontSize: string; getPropertyValue(name: string): string } }).getComputedStyle
          const scale = svg.getBoundingClientRect().width / (svg as unknown as SvgRoot).viewBox.baseVal.width
          return {
            scale,
            adjust: style(svg.querySelector('rect.bar')!).getPropertyValue('print-color-adjust'),
            fonts: [...svg.querySelectorAll('text')].map((t) => ({ cls: t.getAttribute('class'), px: parseFloat(style(t).fontSize) * scale })),
          }
        })
        expect(sizes.scale).toBeLessThanOrEqual(1)
        expect(sizes.adjust).toBe('exact')
        expect(sizes.fonts.filter((f) => f.cls === 'barlabel').length).toBeGreaterThan(10)
        expect(sizes.fonts.filter((f) => f.px < 10)).toEqual([])
      }
    } finally {
      await print.close()
    }
  })
})
