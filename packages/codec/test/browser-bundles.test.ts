/**
 * The browser entry points carry no Node built-in (issue 24): each public entry of @weft/codec
 * and @weft/validators is bundled by esbuild for `platform: 'browser'` with nothing external.
 * esbuild refuses to bundle a `node:` module for the browser, so a successful build is the main
 * assertion; the output is also searched for a `node:` specifier and for `Buffer.` calls (a
 * global that browsers do not have, which esbuild would not notice).
 *
 * Built from the TypeScript sources (the `@weft/source` condition, like every test here); the
 * built package takes the same `browser` branch of the `#platform` import (see
 * `platform.test.ts`), and `npm run bench -- bundles` bundles `dist/`.
 */
import { build } from 'esbuild'
import { describe, expect, it } from 'vitest'

const ENTRIES = ['@weft/codec', '@weft/codec/json', '@weft/codec/formats', '@weft/codec/errors', '@weft/codec/time', '@weft/validators', '@weft/validators/payloads', '@weft/validators/signed']

async function bundle(entry: string, platform: 'browser' | 'node'): Promise<string> {
  const result = await build({
    stdin: { contents: `export * from '${entry}'`, resolveDir: import.meta.dirname, sourcefile: 'entry.js', loader: 'js' },
    bundle: true,
    platform,
    format: 'esm',
    conditions: ['@weft/source'],
    minify: true,
    write: false,
    logLevel: 'silent',
  })
  return result.outputFiles[0]!.text
}

describe('browser bundles of the public entry points', () => {
  for (const entry of ENTRIES) {
    it(`${entry} bundles for the browser with no node: import and no Buffer`, async () => {
      const code = await bundle(entry, 'browser')
      expect(code.length).toBeGreaterThan(200)
      expect(code).not.toMatch(/node:/)
      expect(code).not.toMatch(/\bBuffer\./)
      expect(code).not.toMatch(/\brequire\(/)
    })
  }

  it('takes the Node platform when bundling for Node, so the checks above can fail', async () => {
    const code = await bundle('@weft/codec', 'node')
    expect(code).toMatch(/node:crypto/)
    await expect(
      build({ stdin: { contents: `import 'node:crypto'`, resolveDir: import.meta.dirname, loader: 'js' }, bundle: true, platform: 'browser', write: false, logLevel: 'silent' }),
    ).rejects.toThrow(/node:crypto/)
  })

  it('leaves the curve code out of the strict-JSON entry', async () => {
    // Tree shaking: @weft/codec/json needs the platform's UTF-8 decoding, not @noble/curves.
    const json = await bundle('@weft/codec/json', 'browser')
    const full = await bundle('@weft/codec', 'browser')
    expect(json).not.toMatch(/isTorsionFree/)
    expect(full).toMatch(/isTorsionFree/)
  })
})
