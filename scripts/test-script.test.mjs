// `npm test` itself (scripts/test.mjs), run on small fixture workspaces: a copy of the script with one
// package whose tests pass or fail in the ways the JSON report hides, the repository's node_modules, and a
// stand-in bundle. Its exit code and its closing line must agree, and what stops a run must stop it early.
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const scripts = import.meta.dirname
const repo = join(scripts, '..')
const workspaces = []

afterAll(() => {
  for (const dir of workspaces) rmSync(dir, { recursive: true, force: true })
})

const PASSING = `import { expect, it } from 'vitest'
it('adds', () => expect(1 + 1).toBe(2))
`
const BEFORE_ALL_FAILS = `import { beforeAll, describe, expect, it } from 'vitest'
describe('the report in a browser', () => {
  beforeAll(() => { throw new Error('/usr/bin/chromium is missing') })
  it('shows the title', () => expect(1).toBe(1))
  it('draws the bars', () => expect(1).toBe(1))
  it('lists the nodes', () => expect(1).toBe(1))
})
`
const UNHANDLED_ERROR = `import { expect, it } from 'vitest'
it('leaks a timer that throws', async () => {
  setTimeout(() => { throw new Error('late failure') }, 1)
  await new Promise((resolve) => setTimeout(resolve, 50))
  expect(1).toBe(1)
})
`

/**
 * A workspace with a copy of scripts/test.mjs and its modules, a package per entry of `packages` (folder name to
 * test files), and a code generator stand-in that exits with `codegenExit` (and leaves a mark that it ran).
 */
function workspace({ packages, codegenExit = 0 }) {
  const dir = mkdtempSync(join(tmpdir(), 'weft-test-script-'))
  workspaces.push(dir)
  const write = (path, text) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  for (const file of ['test.mjs', 'test-summary.mjs', 'prerequisites.mjs', 'vitest.config.mjs']) {
    mkdirSync(join(dir, 'scripts'), { recursive: true })
    copyFileSync(join(scripts, file), join(dir, 'scripts', file))
  }
  write('scripts/smoke.test.mjs', PASSING)
  copyFileSync(join(repo, 'vitest.shared.mjs'), join(dir, 'vitest.shared.mjs'))
  write('spec/src/bundle.ts', readFileSync(join(repo, 'spec', 'src', 'bundle.ts'), 'utf8'))
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'))
  const { packageManager } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'))
  write('package.json', JSON.stringify({ name: 'weft-fixture', private: true, type: 'module', packageManager, workspaces: Object.keys(packages) }))
  write('turbo.json', JSON.stringify({ tasks: { check: {}, test: { cache: false, env: ['CI', 'MWP_PROTOCOL_DIR'] } } }))
  // Biome's defaults would also check the fixture's layout (tabs) and import order; the house's
  // layout is the repository's business (biome.jsonc), not these small stand-in files'.
  write('biome.json', JSON.stringify({ formatter: { enabled: false }, assist: { enabled: false } }))
  write('tools/codegen/src/run.ts', `import { writeFileSync } from 'node:fs'\nwriteFileSync('codegen-ran', '')\nprocess.exit(${codegenExit})\n`)
  for (const [pkg, tests] of Object.entries(packages)) {
    write(`${pkg}/package.json`, JSON.stringify({ name: `fixture-${pkg}`, private: true, type: 'module', scripts: { test: 'vitest run' } }))
    write(`${pkg}/vitest.config.mjs`, `import { weftVitest } from '../vitest.shared.mjs'\nexport default weftVitest({ include: ['test/*.test.mjs'] })\n`)
    for (const [name, text] of Object.entries(tests)) write(`${pkg}/test/${name}`, text)
  }
  // the tests' stand-in bundle: the two paths they check for
  write('bundle/conformance/manifest.json', '{}')
  mkdirSync(join(dir, 'bundle', 'schemas'))
  return dir
}

/** Runs the workspace's copy of `npm test` outside CI (unless `env` says otherwise) and reads its closing line. */
function npmTest(dir, env = {}) {
  const inherited = Object.fromEntries(
    // The variables of this vitest run, of the npm script and of any turbo around it would leak into the nested
    // ones: the copy runs as a fresh `node scripts/test.mjs` would.
    Object.entries(process.env).filter(([name]) => !/^(VITEST|TEST$|NODE_ENV$|TURBO_|CI$|npm_|INIT_CWD$)/i.test(name)),
  )
  const result = spawnSync(process.execPath, [join(dir, 'scripts', 'test.mjs')], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...inherited, MWP_PROTOCOL_DIR: join(dir, 'bundle'), NO_COLOR: '1', ...env },
    timeout: 240_000,
  })
  const output = `${result.stdout}${result.stderr}`
  const lines = result.stdout.trimEnd().split('\n')
  const last = lines.at(-1) ?? ''
  // However the run ended, its exit code and its closing line say the same thing.
  const failedCount = /^tests: \d+ passed, (\d+) failed, \d+ skipped/.exec(last)?.[1]
  expect(last, output).toMatch(/^tests: /)
  expect(result.status === 0, output).toBe(failedCount === '0')
  return { status: result.status, last, output }
}

describe('npm test on a fixture workspace', () => {
  it('fails, and says so, when a suite beforeAll throws or a test run exits 1 on an unhandled error', { timeout: 300_000 }, () => {
    const run = npmTest(
      workspace({
        packages: {
          report: { 'ok.test.mjs': PASSING, 'browser.test.mjs': BEFORE_ALL_FAILS },
          timers: { 'timer.test.mjs': UNHANDLED_ERROR },
        },
      }),
    )
    expect(run.status, run.output).toBe(1)
    expect(run.last).toBe('tests: 3 passed, 2 failed, 3 skipped (1 test file failed outside its tests; 1 test run exited non-zero with no failure in its report)')
    expect(run.output).toMatch(/^failed outside its tests: report\/test\/browser\.test\.mjs \(a hook of one of its suites\)$/m)
    expect(run.output).toMatch(/^fixture-timers#test exited 1 with no failure in its report/m)
  })

  it('passes a clean workspace with exit code 0', { timeout: 300_000 }, () => {
    const dir = workspace({ packages: { codec: { 'ok.test.mjs': PASSING } } })
    const run = npmTest(dir)
    expect(run.status, run.output).toBe(0)
    expect(run.last).toBe('tests: 2 passed, 0 failed, 0 skipped')
    expect(run.output).toContain('packages reporting: 2')
    // the run summary it read is gone: turbo never prunes them
    expect(readdirSync(join(dir, '.turbo', 'runs'))).toEqual([])
  })

  it('stops before the tests on stale generated code', { timeout: 300_000 }, () => {
    const dir = workspace({ packages: { codec: { 'ok.test.mjs': PASSING } }, codegenExit: 1 })
    const run = npmTest(dir)
    expect(run.status).toBe(1)
    expect(run.last).toBe('tests: not run (generated code is stale or its check failed; npm run generate)')
    expect(existsSync(join(dir, 'codegen-ran'))).toBe(true)
    expect(existsSync(join(dir, '.reports'))).toBe(false)
  })

  it('stops before anything else on a missing prerequisite, naming it and how to install it', { timeout: 300_000 }, () => {
    const dir = workspace({ packages: { codec: { 'ok.test.mjs': PASSING } } })
    const run = npmTest(dir, { CI: 'true', MWP_PROTOCOL_DIR: join(dir, 'no-bundle-here') })
    expect(run.status).toBe(1)
    expect(run.output).toMatch(/^missing: the protocol bundle at .*no-bundle-here .*: git clone https:\/\/github\.com\/missionweaveprotocol\/missionweaveprotocol /m)
    expect(run.last).toBe('tests: not run (a prerequisite is missing; install as listed above)')
    expect(existsSync(join(dir, 'codegen-ran'))).toBe(false)
  })
})
