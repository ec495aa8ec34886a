// The web console benchmark's page side (see console.mjs): fresh pages in Chromium with the timing
// helpers, and the measured interactions (first paint, sign-in, opening a Group, tab switches,
// scroll jumps) and the clock offset between the page and Node.
import { wallMs } from './console-world.mjs'

const VIEWPORT = { width: 1280, height: 900 }

/** Helpers put in every page before its scripts run (through the DevTools protocol, not the app's origin). */
function pageHelpers() {
  const now = () => performance.now()
  const bench = {
    /** Resolves with the time `pred()` first holds, checked on every DOM mutation. */
    until(pred, timeoutMs = 120_000) {
      return new Promise((resolve, reject) => {
        if (pred()) return resolve(now())
        const observer = new MutationObserver(() => {
          if (!pred()) return
          observer.disconnect()
          clearTimeout(timer)
          resolve(now())
        })
        observer.observe(document, { subtree: true, childList: true, characterData: true, attributes: true })
        const timer = setTimeout(() => {
          observer.disconnect()
          reject(new Error(`timed out after ${timeoutMs} ms`))
        }, timeoutMs)
      })
    },
    /** The next frame after now, painted: a task queued from its animation frame callback. */
    painted() {
      return new Promise((resolve) => requestAnimationFrame(() => setTimeout(() => resolve(now()), 0)))
    },
    /** `action()`, then the time until `pred()` holds in the DOM, and until the frame after it is painted. */
    async measure(action, pred, timeoutMs) {
      const t0 = now()
      action()
      const dom = await bench.until(pred, timeoutMs)
      const paint = await bench.painted()
      return { domMs: dom - t0, paintMs: paint - t0 }
    },
    q: (testId) => document.querySelector(`[data-testid="${testId}"]`),
  }
  Object.defineProperty(window, '__bench', { value: bench })
}

/** A page in a fresh context (no cache, no storage) with the helpers; its errors go to `errors`. */
export async function newPage(browser, errors) {
  const context = await browser.newContext({ viewport: VIEWPORT })
  const page = await context.newPage()
  await page.addInitScript(pageHelpers)
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  return { context, page }
}

/** First contentful paint of the page at `url`, and its `load`, ms from navigation start. */
export async function firstPaint(page, url) {
  await page.goto(url, { waitUntil: 'load' })
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        const nav = performance.getEntriesByType('navigation')[0]
        new PerformanceObserver((list, observer) => {
          const fcp = list.getEntries().find((e) => e.name === 'first-contentful-paint')
          if (fcp === undefined) return
          observer.disconnect()
          resolve({ fcpMs: fcp.startTime, loadMs: nav?.loadEventStart ?? NaN })
        }).observe({ type: 'paint', buffered: true })
      }),
  )
}

/** Pastes the key file, clicks "Sign in": the time until the list of Missions shows Ada's Groups. */
export async function signIn(page, world) {
  await page.locator('[data-testid="key-text"]').fill(world.keyFile)
  return page.evaluate(() =>
    window.__bench.measure(
      () => window.__bench.q('signin-submit').click(),
      () => document.querySelectorAll('[data-testid="group-item"]').length >= 2,
    ),
  )
}

/**
 * Clicks the Group's entry: the time until its first Events show, until the header counts `head`,
 * and the main thread's long tasks (over 50 ms) meanwhile: how long the page stops answering input.
 */
export async function openGroup(page, groupId, head) {
  return page.evaluate(
    async ({ groupId, head }) => {
      const b = window.__bench
      const long = []
      const observer = new PerformanceObserver((list) => long.push(...list.getEntries().map((e) => e.duration)))
      observer.observe({ type: 'longtask' })
      const t0 = performance.now()
      document.querySelector(`[data-testid="group-item"][data-group-id="${groupId}"]`).click()
      // The header of this Group's view (the previous Group's view shows until the click renders).
      const count = () => (document.querySelectorAll('[data-testid="mission-view"] .ids code')[1]?.textContent === groupId ? Number(b.q('event-count')?.textContent ?? '0') : 0)
      const first = await b.until(() => count() > 0)
      const all = await b.until(() => count() >= head)
      const paint = await b.painted()
      long.push(...observer.takeRecords().map((e) => e.duration))
      observer.disconnect()
      return {
        firstMs: first - t0,
        allMs: all - t0,
        paintMs: paint - t0,
        shown: count(),
        longTasks: long.length,
        longestTaskMs: Math.max(0, ...long),
        blockingMs: long.reduce((sum, d) => sum + Math.max(0, d - 50), 0),
      }
    },
    { groupId, head },
  )
}

/**
 * Tab switches between the Overview and the Event log: to the Overview until its content renders;
 * to the Event log until its first rows render (`shown`) and until it settles on the last row,
 * following live (`paintMs`).
 */
export async function tabSwitches(page, rounds, last) {
  return page.evaluate(
    async ({ rounds, last }) => {
      const b = window.__bench
      const toLog = []
      const toOverview = []
      for (let i = 0; i < rounds; i++) {
        toOverview.push(
          await b.measure(
            () => b.q('tab-overview').click(),
            () => document.getElementById('ov-objective') !== null && b.q('event-log') === null,
          ),
        )
        const t0 = performance.now()
        b.q('tab-events').click()
        const shown = await b.until(() => document.querySelector('[data-testid="event-row"]') !== null)
        const dom = await b.until(() => document.querySelector(`[data-testid="event-row"][data-sequence="${last}"]`) !== null)
        const paint = await b.painted()
        toLog.push({ shownMs: shown - t0, domMs: dom - t0, paintMs: paint - t0 })
      }
      return { toLog, toOverview }
    },
    { rounds, last },
  )
}

/** Scroll jumps in the Event log: to the top, the end and random rows, each until the row at the top of the view renders. */
export async function scrollJumps(page, jumps, count) {
  return page.evaluate(
    async ({ jumps, count }) => {
      const b = window.__bench
      const log = b.q('event-log')
      const rowHeight = 28
      // A fixed sequence of positions (a small LCG), so runs compare.
      let x = 12345
      const rand = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648
      const targets = [0, count * rowHeight]
      while (targets.length < jumps) targets.push(Math.floor(rand() * count) * rowHeight)
      const samples = []
      let rows = 0
      let elements = 0
      for (const target of targets) {
        let expected = 0
        const sample = await b.measure(
          () => {
            log.scrollTop = target
            expected = Math.floor(log.scrollTop / rowHeight) + 1
          },
          () => document.querySelector(`[data-testid="event-row"][data-sequence="${expected}"]`) !== null,
        )
        samples.push(sample)
        rows = Math.max(rows, document.querySelectorAll('[data-testid="event-row"]').length)
        elements = Math.max(elements, document.getElementsByTagName('*').length)
      }
      // Back to the end: following live again.
      log.scrollTop = log.scrollHeight
      await b.painted()
      return { samples, rows, elements }
    },
    { jumps, count },
  )
}

/** The page's clock minus Node's (ms), from the calibration round trip with the least delay. */
export async function clockOffset(page) {
  let best = { rtt: Infinity, offset: 0 }
  for (let i = 0; i < 20; i++) {
    const before = wallMs()
    const pageMs = await page.evaluate(() => performance.timeOrigin + performance.now())
    const after = wallMs()
    if (after - before < best.rtt) best = { rtt: after - before, offset: pageMs - (before + after) / 2 }
  }
  return best
}
