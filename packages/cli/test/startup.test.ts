/**
 * What `weft` loads before it does anything: each command imports its own modules when it runs
 * (src/bin.ts), so `weft help` starts without the protocol's code and `weft demo --no-report`
 * without the report's renderer. A hook registered with `--import` lists every module the
 * process loads.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runWeft } from './cli-run.js'

let dir: string
let register: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-startup-'))
  const hooks = join(dir, 'hooks.mjs')
  await writeFile(hooks, "export async function load(url, context, next) { const r = await next(url, context); console.error('LOADED ' + url); return r }\n")
  register = join(dir, 'register.mjs')
  await writeFile(register, `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`)
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** The URLs of the modules `weft ...args` loaded, and its exit code. */
async function loaded(args: readonly string[]): Promise<{ readonly code: number | null; readonly urls: readonly string[] }> {
  const run = await runWeft(args, { node: ['--import', register] })
  const urls = run.stderr
    .split('\n')
    .filter((line) => line.startsWith('LOADED '))
    .map((line) => line.slice('LOADED '.length))
  return { code: run.code, urls }
}

describe('weft start-up', () => {
  it('loads no protocol, authority or worker code for help', async () => {
    const { code, urls } = await loaded(['help'])
    expect(code).toBe(0)
    expect(urls.some((url) => url.includes('/cli/src/bin.ts'))).toBe(true)
    expect(urls.filter((url) => /\/(spec|packages\/(authority|worker|client|validators))\/|\/typebox\//.test(url))).toEqual([])
  })

  it('does not load the report renderer for demo --no-report, and does for a demo that writes one', async () => {
    const quiet = await loaded(['demo', '--yes', '--quiet', '--no-report'])
    expect(quiet.code).toBe(0)
    expect(quiet.urls.some((url) => url.includes('/cli/src/demo/run.ts'))).toBe(true)
    // The run gathers the report's facts (report/facts.ts) either way; rendering them is the part it skips.
    expect(quiet.urls.filter((url) => /\/cli\/src\/report\/(report|graphs|gantt|svg)\.ts$/.test(url))).toEqual([])
    const reported = await loaded(['demo', '--yes', '--quiet', '--report', join(dir, 'report')])
    expect(reported.code).toBe(0)
    expect(reported.urls.some((url) => url.includes('/cli/src/report/report.ts'))).toBe(true)
  }, 120_000)
})
