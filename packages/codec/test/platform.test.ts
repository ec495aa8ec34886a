/**
 * The two platform modules give the same answers (issue 24): the protocol's cryptography vectors
 * and the strict-encoding cases (`vectors.ts`) run through the whole public API twice in one
 * process, once over `src/platform/node.ts` (OpenSSL, simdutf) and once over
 * `src/platform/browser.ts` (`@noble/*`, `TextDecoder`, `crypto.subtle`; loaded here under Node,
 * which has those web APIs), and every outcome is compared vector by vector. The Node outcomes
 * are also held against the official expectations of the bundle, so "equal" cannot mean "equally
 * wrong".
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { bundleForTests } from '@weft/spec/bundle'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import * as nodeCodec from '../src/index.js'
import * as browserPlatform from '../src/platform/browser.js'
import * as nodePlatform from '../src/platform/node.js'
import type { Platform } from '../src/platform/types.js'
import { runCorpus, type Corpus, type Outcomes } from './corpus-run.js'
import { buildCorpus, expectedStages } from './vectors.js'

// Compile-time: both modules have the one shape the shared modules import from `#platform`.
const shapes: [Platform<nodePlatform.PlatformPublicKey>, Platform<browserPlatform.PlatformPublicKey>] = [nodePlatform, browserPlatform]
void shapes

/** The public API again, with `#platform` bound to the browser module. */
async function browserCodec(): Promise<typeof nodeCodec> {
  vi.resetModules()
  vi.doMock('#platform', () => browserPlatform)
  const codec = (await import('../src/index.js')) as typeof nodeCodec
  vi.doUnmock('#platform')
  return codec
}

describe('the platform modules', () => {
  it('export the same names', () => {
    expect(Object.keys(browserPlatform).sort()).toEqual(Object.keys(nodePlatform).sort())
    expect([nodePlatform.PLATFORM, browserPlatform.PLATFORM]).toEqual(['node', 'browser'])
  })

  it('are chosen by the package.json imports map: browser condition to the browser file, the rest to Node', () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { imports: Record<string, Record<string, unknown>> }
    expect(pkg.imports['#platform']).toEqual({
      browser: { '@weft/source': './src/platform/browser.ts', types: './dist/platform/browser.d.ts', default: './dist/platform/browser.js' },
      '@weft/source': './src/platform/node.ts',
      types: './dist/platform/node.d.ts',
      default: './dist/platform/node.js',
    })
  })

  it('agree on SHA-256, base64url and UTF-8 lengths over awkward inputs', () => {
    const inputs = [new Uint8Array(0), new Uint8Array([0]), new Uint8Array([0xff, 0xfe]), new Uint8Array(1000).map((_, i) => (i * 7) & 0xff)]
    for (const bytes of inputs) {
      for (let n = 0; n <= Math.min(bytes.length, 7); n++) expect(browserPlatform.base64urlEncode(bytes.subarray(0, n))).toBe(nodePlatform.base64urlEncode(bytes.subarray(0, n)))
      expect(browserPlatform.base64urlEncode(bytes)).toBe(nodePlatform.base64urlEncode(bytes))
      expect(browserPlatform.sha256(bytes)).toEqual(nodePlatform.sha256(bytes))
      expect(browserPlatform.sha256Hex(bytes)).toBe(nodePlatform.sha256Hex(bytes))
      const text = nodePlatform.base64urlEncode(bytes)
      expect(browserPlatform.base64urlDecodeCanonical(text)).toEqual(nodePlatform.base64urlDecodeCanonical(text))
    }
    for (const text of ['', 'a', 'é', '\u{1f600}', '\ud800', '\udc00x', 'a\ud800\udc00b', '\u07ff\u0800\uffff', '\ud83d']) {
      expect(browserPlatform.utf8ByteLength(text), JSON.stringify(text)).toBe(nodePlatform.utf8ByteLength(text))
    }
    // The strict decoder refuses what the canonical check would have refused first.
    expect(() => browserPlatform.base64urlDecodeCanonical('A')).toThrow()
    expect(() => browserPlatform.base64urlDecodeCanonical('A+==')).toThrow()
  })
})

describe('the browser platform on WebCrypto', () => {
  const seed = new Uint8Array(32).map((_, i) => 200 - i)
  const message = new TextEncoder().encode('weft')

  it('imports the WebCrypto key once per verified key and verifies through crypto.subtle', async () => {
    const pair = browserPlatform.seedKeyPair(seed)
    const key = browserPlatform.platformPublicKey(pair.publicKey)
    const importKey = vi.spyOn(globalThis.crypto.subtle, 'importKey')
    const verify = vi.spyOn(globalThis.crypto.subtle, 'verify')
    try {
      const signature = pair.sign(message)
      const tampered = signature.map((b, i) => (i === 40 ? b ^ 1 : b))
      expect(await browserPlatform.verifyWithAsync(key, message, signature)).toBe(true)
      expect(await browserPlatform.verifyWithAsync(key, message, tampered)).toBe(false)
      expect(await browserPlatform.verifyWithAsync(key, new Uint8Array(0), signature)).toBe(false)
      expect(importKey).toHaveBeenCalledTimes(1)
      expect(verify).toHaveBeenCalledTimes(3)
    } finally {
      importKey.mockRestore()
      verify.mockRestore()
    }
  })

  it('falls back to the equation, with the same answers, where WebCrypto has no Ed25519 or throws', async () => {
    const pair = browserPlatform.seedKeyPair(seed)
    const signature = pair.sign(message)
    const tampered = signature.map((b, i) => (i === 3 ? b ^ 4 : b))
    const importKey = vi.spyOn(globalThis.crypto.subtle, 'importKey').mockRejectedValue(new Error('NotSupportedError'))
    try {
      const key = browserPlatform.platformPublicKey(pair.publicKey)
      expect(await browserPlatform.verifyWithAsync(key, message, signature)).toBe(true)
      expect(await browserPlatform.verifyWithAsync(key, message, tampered)).toBe(false)
      expect(importKey).toHaveBeenCalledTimes(1)
    } finally {
      importKey.mockRestore()
    }
    const verify = vi.spyOn(globalThis.crypto.subtle, 'verify').mockRejectedValue(new Error('OperationError'))
    try {
      const key = browserPlatform.platformPublicKey(pair.publicKey)
      expect(await browserPlatform.verifyWithAsync(key, message, signature)).toBe(true)
      expect(await browserPlatform.verifyWithAsync(key, message, tampered)).toBe(false)
      expect(verify).toHaveBeenCalledTimes(2)
    } finally {
      verify.mockRestore()
    }
  })
})

const bundle = bundleForTests()

describe.skipIf(!bundle)('the cryptography vectors on both platforms', () => {
  let corpus: Corpus
  let onNode: Outcomes
  let onBrowser: Outcomes

  beforeAll(async () => {
    corpus = buildCorpus(bundle!)
    onNode = await runCorpus(nodeCodec, corpus)
    const browser = await browserCodec()
    expect(browser.verify).not.toBe(nodeCodec.verify) // a second copy of the API, not the same one
    onBrowser = await runCorpus(browser, corpus)
  }, 120_000)

  it('covers every signed-document evaluation and the strict-encoding cases', () => {
    expect(corpus.evaluations).toHaveLength(61)
    expect(corpus.publicKeys.length).toBeGreaterThan(100)
    expect(corpus.signatures.length).toBeGreaterThan(100)
    expect(corpus.verifications.length).toBeGreaterThan(60)
    expect(Object.keys(onNode).length).toBeGreaterThan(600)
  })

  it('the Node platform meets the official expectations (schema-stage vectors aside: no schemas here)', () => {
    const expected = expectedStages(bundle!)
    let checked = 0
    for (const [id, stage] of expected) {
      if (stage === 'schema') continue
      for (const prefix of ['verify', 'verify strict order', 'verifyAsync']) {
        expect((onNode[`${prefix} ${id}`] as { stage: string }).stage, `${prefix} ${id}`).toBe(stage)
        checked++
      }
    }
    expect(checked).toBe(3 * 56)
  })

  it('gives the same outcome for every vector on the browser platform', () => {
    expect(Object.keys(onBrowser).sort()).toEqual(Object.keys(onNode).sort())
    const differing = Object.keys(onNode).filter((id) => JSON.stringify(onNode[id]) !== JSON.stringify(onBrowser[id]))
    expect(differing).toEqual([])
    for (const id of Object.keys(onNode)) expect(onBrowser[id], id).toEqual(onNode[id])
  })

  it('rejects every torsion-carrying R and accepts every vector signature, on both', () => {
    for (const outcomes of [onNode, onBrowser]) {
      const torsion = Object.entries(outcomes).filter(([id]) => id.startsWith('equation torsion R '))
      expect(torsion).toHaveLength(16)
      // Torsion point 0 is the identity: R = [r]B (or R = I for a zero nonce) is an honest signature.
      for (const [id, outcome] of torsion) expect(outcome, id).toEqual(id.startsWith('equation torsion R 0 ') ? { sync: true, async: true } : { sync: false, async: false })
      const genuine = Object.entries(outcomes).filter(([id]) => id.endsWith(": the vector's signature"))
      expect(genuine).toHaveLength(11)
      for (const [id, outcome] of genuine) expect(outcome, id).toEqual({ sync: true, async: true })
    }
  })
})
