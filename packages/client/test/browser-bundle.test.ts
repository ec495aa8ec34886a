/**
 * `@weft/client` and `@weft/client/wire` bundle for a web page (issue 24): esbuild with
 * `platform: 'browser'`, the `browser` condition and no externals must resolve every import
 * (a `node:` built-in cannot be resolved for the browser, so the build itself fails on one) and
 * leave no `ws`, `Buffer` or `node:` in the output; the socket must be the page's `WebSocket`
 * (`socket-browser.ts`, picked by the `browser` branch of the `#socket` import).
 *
 * Twice: from the TypeScript sources (the `@weft/source` condition every test of the repository
 * runs with), and from the built package as a web application consumes it (`browser` only: the
 * `exports` and `imports` maps' `dist` branches), after building the client's `dist` here; the
 * built `@weft/codec` it imports is what turbo's `^build` left.
 */
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type Metafile } from 'esbuild'
import { beforeAll, describe, expect, it } from 'vitest'

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), '..')

/** A page that uses both entry points, as the web console does. */
const ENTRY = `
import { createClient, buildCommandAsync, systemRandom } from '@weft/client'
import { connectWebSocket, TransportUnavailableError } from '@weft/client/wire'
globalThis.weft = { createClient, buildCommandAsync, systemRandom, connectWebSocket, TransportUnavailableError }
`

interface Bundle {
  readonly code: string
  readonly inputs: readonly string[]
}

async function bundle(conditions: string[]): Promise<Bundle> {
  const result = await build({
    stdin: { contents: ENTRY, resolveDir: PACKAGE, sourcefile: 'page.js', loader: 'js' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    conditions,
    write: false,
    metafile: true,
    logLevel: 'silent',
  })
  return { code: result.outputFiles[0]!.text, inputs: Object.keys((result.metafile as Metafile).inputs) }
}

/** What a browser bundle must not hold. */
function expectBrowserClean({ code, inputs }: Bundle, socketModule: RegExp): void {
  expect(inputs.filter((i) => i.startsWith('node:') || /node_modules\/ws\//.test(i))).toEqual([])
  expect(inputs.some((i) => socketModule.test(i))).toBe(true)
  expect(inputs.some((i) => /socket-node\./.test(i))).toBe(false)
  expect(code).not.toMatch(/["']node:/)
  expect(code).not.toMatch(/\bBuffer\b/)
  expect(code).not.toMatch(/\brequire\(/)
  // `ws` speaks the upgrade itself; the page's WebSocket does it for the browser.
  expect(code).not.toContain('Sec-WebSocket-Key')
  expect(code).toContain('binaryType')
}

describe('@weft/client for the browser', () => {
  it('bundles from the sources with the browser condition, without Node built-ins, ws or Buffer', async () => {
    expectBrowserClean(await bundle(['@weft/source', 'browser']), /src\/wire\/socket-browser\.ts$/)
  })

  describe('the built package', () => {
    beforeAll(() => {
      // The dist a web application bundles; turbo builds only a package's dependencies before its tests.
      execFileSync(process.execPath, [join(PACKAGE, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(PACKAGE, 'tsconfig.build.json')], { stdio: 'pipe' })
    }, 120_000)

    it('bundles with only the browser condition (exports and imports of dist), without Node built-ins, ws or Buffer', async () => {
      expectBrowserClean(await bundle(['browser']), /dist\/wire\/socket-browser\.js$/)
    })
  })
})
