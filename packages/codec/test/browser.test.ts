/**
 * @weft/codec in a real browser (issue 24): a small entry that imports `@weft/codec` is bundled by
 * esbuild the way a web application would bundle it (`platform: 'browser'`, the `browser`
 * condition, ESM), served from `http://127.0.0.1` (a secure context, which WebCrypto needs) and
 * run in Debian's Chromium through playwright-core. The page runs the protocol's cryptography
 * vectors and the strict-encoding cases (`vectors.ts`) through verify/verifyAsync, the §6.4 key
 * and signature checks, verifyEd25519/verifyEd25519Async, keyPairFromSeed/sign, webCryptoKeyPair
 * and signAsync, strict JSON, SHA-256 and base64url, and every outcome must equal the one Node
 * computes in this process.
 *
 * The bundle is built from the TypeScript sources (the `@weft/source` condition, as every test of
 * the repository runs), whose `#platform` import takes the same `browser` branch as the built
 * package's. Chromium is part of the test set-up (`.ci/run` installs it): without it this test
 * fails rather than passing unseen.
 */
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { bundleForTests } from '@weft/spec/bundle'
import { build } from 'esbuild'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as nodeCodec from '../src/index.js'
import { runCorpus, type Corpus, type Outcomes } from './corpus-run.js'
import { buildCorpus } from './vectors.js'

const CHROMIUM = '/usr/bin/chromium'

/** The page's entry: the public API, the portable corpus runner, and a hook for the test. */
const ENTRY = `
import * as codec from '@weft/codec'
import { runCorpus } from './corpus-run.ts'
globalThis.weftRun = async (text) => JSON.stringify(await runCorpus(codec, JSON.parse(text)))
globalThis.weftReady = true
`

/** Counts WebCrypto Ed25519 calls, installed before the bundle runs: proves the async paths used WebCrypto, not a fallback. */
const PROBE = `
const subtle = globalThis.crypto.subtle
globalThis.weftCalls = { verify: 0, sign: 0, importKey: 0 }
for (const name of ['verify', 'sign', 'importKey']) {
  const original = subtle[name].bind(subtle)
  subtle[name] = (...args) => { globalThis.weftCalls[name]++; return original(...args) }
}
`

const bundle = bundleForTests()

describe.skipIf(!bundle)('@weft/codec in Chromium', () => {
  let browser: Browser | undefined
  let server: Server | undefined
  let page: Page
  let code: string
  let corpus: Corpus
  let onNode: Outcomes
  const errors: string[] = []

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium), as .ci/run does`)
    const built = await build({
      stdin: { contents: ENTRY, resolveDir: import.meta.dirname, sourcefile: 'entry.js', loader: 'js' },
      bundle: true,
      platform: 'browser',
      format: 'esm',
      target: 'es2022',
      conditions: ['@weft/source', 'browser'],
      write: false,
      logLevel: 'silent',
    })
    code = built.outputFiles[0]!.text
    const html = `<!doctype html><meta charset="utf-8"><title>weft codec</title><script>${PROBE}</script><script type="module" src="/bundle.js"></script>`
    server = createServer((request, response) => {
      if (request.url === '/bundle.js') response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(code)
      else if (request.url === '/') response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html)
      else if (request.url === '/favicon.ico')
        response.writeHead(204).end() // asked for by every page; not an error
      else response.writeHead(404).end()
    })
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo

    corpus = buildCorpus(bundle!)
    onNode = await runCorpus(nodeCodec, corpus)

    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    page = await browser.newPage()
    page.on('pageerror', (e) => errors.push(e.message))
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text())
    })
    await page.goto(`http://127.0.0.1:${port}/`)
    await page.waitForFunction(() => (globalThis as { weftReady?: boolean }).weftReady === true)
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)))
  })

  it('bundles for the browser without Node built-ins', () => {
    expect(code).not.toMatch(/["']node:/)
    expect(code).not.toMatch(/\bBuffer\./)
    expect(code).toContain('TextDecoder')
  })

  it('runs in a secure context with WebCrypto Ed25519', async () => {
    const env = await page.evaluate(async () => {
      const g = globalThis as unknown as { isSecureContext: boolean; crypto: { subtle: { importKey: (...a: unknown[]) => Promise<unknown> } } }
      let ed25519 = true
      try {
        await g.crypto.subtle.importKey('raw', new Uint8Array(32).fill(0x42), { name: 'Ed25519' }, false, ['verify'])
      } catch {
        ed25519 = false
      }
      return { secure: g.isSecureContext, ed25519, agent: (globalThis as unknown as { navigator: { userAgent: string } }).navigator.userAgent }
    })
    expect(env.secure).toBe(true)
    expect(env.ed25519).toBe(true)
    expect(env.agent).toMatch(/Chrome\//)
  })

  it('gives the Node outcome for every vector', async () => {
    const text = await page.evaluate(async (json) => await (globalThis as unknown as { weftRun: (t: string) => Promise<string> }).weftRun(json), JSON.stringify(corpus))
    const inChromium = JSON.parse(text) as Outcomes
    expect(Object.keys(inChromium).sort()).toEqual(Object.keys(onNode).sort())
    expect(Object.keys(inChromium).length).toBeGreaterThan(600)
    const differing = Object.keys(onNode).filter((id) => JSON.stringify(inChromium[id]) !== JSON.stringify(onNode[id]))
    expect(differing).toEqual([])
    for (const id of Object.keys(onNode)) expect(inChromium[id], id).toEqual(onNode[id])
    // The asynchronous paths really ran on WebCrypto: verifyEd25519Async/verifyAsync through
    // crypto.subtle.verify, webCryptoKeyPair/signAsync through crypto.subtle.sign.
    const calls = await page.evaluate(() => (globalThis as unknown as { weftCalls: Record<string, number> }).weftCalls)
    expect(calls.verify).toBeGreaterThan(50)
    expect(calls.sign).toBeGreaterThan(10)
    expect(errors).toEqual([])
  }, 120_000)
})
