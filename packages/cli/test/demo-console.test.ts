/**
 * `weft demo --console` without a browser: the flags, the key file it writes for the MissionOwner,
 * the console on the loopback listener, the run at a pace, `--yes` still approving by itself, and
 * Ctrl-C ending the run and the console. The browser side is `console-browser.test.ts`.
 */
import { existsSync, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../console/scripts/build-app.mjs'
import { main, type CliIo } from '../src/bin.js'
import { readKeyFile } from '../src/principal.js'

/** An io whose interrupt the test fires, and whose output it reads as it comes. */
function testIo(): CliIo & { out: () => string; interrupt: () => void } {
  let text = ''
  const listeners = new Set<() => void>()
  return {
    stdout: (t) => void (text += t),
    stderr: (t) => void (text += t),
    interactive: false,
    onInterrupt: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    out: () => text,
    interrupt: () => {
      for (const l of [...listeners]) l()
    },
  }
}

async function until<T>(probe: () => T | undefined, what: string, ms = 20_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const value = probe()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

describe('weft demo --console', () => {
  // The app is built for this file alone: a concurrent rebuild of @weft/console's dist/ (the
  // release check does one) must not pull it away mid-test.
  let appDir: string
  beforeAll(async () => {
    appDir = await mkdtemp(join(tmpdir(), 'weft-demo-console-app-'))
    await buildApp({ outDir: appDir, minify: false })
  }, 60_000)
  afterAll(async () => {
    await rm(appDir, { recursive: true, force: true })
  })

  it.each([
    [['--pace', '100'], '--pace needs --console'],
    [['--console-port', '0'], '--console-port needs --console'],
    [['--console-app', '/tmp'], '--console-app needs --console'],
    [['--console', '--faults'], '--console and --faults do not combine'],
    [['--console', '--pace', '0'], '--pace must be a positive number'],
    [['--console', '--pace', 'fast'], '--pace must be a positive number'],
    [['--console', '--console-port', '70000'], '--console-port must be a TCP port'],
  ])('refuses %j with exit code 2', async (args, message) => {
    const io = testIo()
    expect(await main(['demo', '--no-report', ...args], io)).toBe(2)
    expect(io.out()).toContain(message)
  })

  it('serves the console with a 0600 key file for the MissionOwner, approves with --yes and stays open until Ctrl-C', async () => {
    const io = testIo()
    const run = main(['demo', '--console', '--console-app', appDir, '--yes', '--pace', '5000', '--no-report', '--quiet'], io)
    const url = await until(() => /Console: (\S+)/.exec(io.out())?.[1], 'the console URL')
    const keyPath = /key file: (\S+)/.exec(io.out())![1]!
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console\/$/)
    // The key file: private, and the demo human's own key.
    expect(statSync(keyPath).mode & 0o777).toBe(0o600)
    expect(statSync(keyPath.replace(/\/[^/]+$/, '')).mode & 0o777).toBe(0o700)
    const key = await readKeyFile(keyPath)
    expect(key.actor).toEqual({ type: 'human', id: 'urn:weft:demo:human:priya' })
    // The listener: the console's page with its CSP, the binding's 426 elsewhere.
    const page = await fetch(url)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect((await fetch(new URL('/elsewhere', url))).status).toBe(426)
    const time = (await (await fetch(new URL('/console/api/time', url))).json()) as { now: string }
    // The Authority's virtual clock, not the wall clock: the demo starts on 2026-07-15.
    expect(time.now.startsWith('2026-07-1')).toBe(true)

    await until(() => (io.out().includes('stays open') ? true : undefined), 'the end of the run', 60_000)
    expect(io.out()).toContain('Both Missions were approved.')
    expect((await fetch(url)).status).toBe(200)
    io.interrupt()
    expect(await run).toBe(0)
    // Closed: the listener is gone and so is the key file.
    await expect(fetch(url)).rejects.toThrow()
    expect(existsSync(keyPath)).toBe(false)
  }, 90_000)

  it('without --yes waits for a decision in the console; Ctrl-C stops it with exit code 1', async () => {
    const io = testIo()
    const run = main(['demo', '--console', '--console-app', appDir, '--pace', '100000', '--no-report', '--quiet'], io)
    await until(() => /Console: (\S+)/.exec(io.out())?.[1], 'the console URL')
    expect(io.out()).toContain('The Missions wait for your decision in the console')
    // Far more than the whole run takes with --yes at this pace: nothing was decided meanwhile.
    await new Promise((r) => setTimeout(r, 4000))
    expect(io.out()).not.toContain('Both Missions were approved.')
    io.interrupt()
    expect(await run).toBe(1)
    expect(io.out()).toContain('Stopped before both Missions were decided.')
  }, 60_000)
})
