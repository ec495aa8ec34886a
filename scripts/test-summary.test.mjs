// The closing line of `npm test` counts every failure, and the exit code agrees with it. The reports under
// fixtures/vitest-reports/ are vitest 4.1.12 JSON reports of small test files (trimmed, paths rewritten): a suite
// whose beforeAll threw, a file whose import failed, a clean file, a test leaking an unhandled error (vitest
// exits 1, the report looks clean), a global setup that threw, and a failed test beside a failed afterAll.
// fixtures/turbo-summary.json is a trimmed `turbo run --summarize` file of turbo 2.11.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { notRunLine, readReports, summarize, turboTasks } from './test-summary.mjs'

const fixtures = join(import.meta.dirname, 'fixtures')

/** One fixture report under the name of the package that would have written it. */
function report(file, name = file) {
  return { name, report: JSON.parse(readFileSync(join(fixtures, 'vitest-reports', `${file}.json`), 'utf8')) }
}

/** What the line says: the three counts, or nothing for a line of another shape. */
function counts(line) {
  const m = /^tests: (\d+) passed, (\d+) failed, (\d+) skipped/.exec(line)
  return m === null ? undefined : { passed: Number(m[1]), failed: Number(m[2]), skipped: Number(m[3]) }
}

describe('summarize', () => {
  it('passes a clean report with its skipped and todo tests', () => {
    const summary = summarize({ reports: [report('clean')] })
    expect(summary.line).toBe('tests: 1 passed, 0 failed, 2 skipped')
    expect(summary.exitCode).toBe(0)
    expect(summary.details).toEqual([])
  })

  it('counts a suite whose beforeAll threw as a failure, though its tests only show as skipped', () => {
    const summary = summarize({ reports: [report('clean'), report('before-all-failed', 'cli')], root: '/repo' })
    expect(counts(summary.line)).toEqual({ passed: 1, failed: 1, skipped: 5 })
    expect(summary.line).toContain('1 test file failed outside its tests')
    expect(summary.details).toEqual(['failed outside its tests: packages/cli/test/report-browser.test.ts (a hook of one of its suites)'])
    expect(summary.exitCode).toBe(1)
  })

  it('counts a file that failed to import as a failure, with its error', () => {
    const summary = summarize({ reports: [report('collect-failed')], root: '/repo' })
    expect(counts(summary.line)).toEqual({ passed: 0, failed: 1, skipped: 0 })
    expect(summary.details).toEqual([
      "failed outside its tests: packages/cli/test/broken-import.test.ts: Cannot find module './does-not-exist.mjs' imported from /repo/packages/cli/test/broken-import.test.ts",
    ])
    expect(summary.exitCode).toBe(1)
  })

  it('adds up a clean report, a failed beforeAll and a failed import', () => {
    const summary = summarize({ reports: [report('clean'), report('before-all-failed'), report('collect-failed')] })
    expect(counts(summary.line)).toEqual({ passed: 1, failed: 2, skipped: 5 })
    expect(summary.line).toContain('2 test files failed outside their tests')
    expect(summary.exitCode).toBe(1)
  })

  it('counts a failed afterAll beside a failed test in the same file', () => {
    const summary = summarize({ reports: [report('failed-test-and-teardown')] })
    expect(counts(summary.line)).toEqual({ passed: 1, failed: 2, skipped: 0 })
    expect(summary.line).toContain('1 failed test; 1 test file failed outside its tests')
    expect(summary.details).toEqual(['failed outside its tests: /repo/packages/authority/test/teardown.test.ts: teardown failed'])
  })

  it('counts a global setup that threw, which leaves an empty report marked unsuccessful', () => {
    const summary = summarize({ reports: [report('clean'), report('global-setup-failed', 'store-postgres')] })
    expect(counts(summary.line)).toEqual({ passed: 1, failed: 1, skipped: 2 })
    expect(summary.details).toEqual(['store-postgres: vitest reported a failure outside every test file (a global setup?)'])
    expect(summary.exitCode).toBe(1)
  })

  it('counts a test run that exited non-zero with a clean report (an unhandled error), once', () => {
    const tasks = [
      { id: '@weft/worker#test', exitCode: 1, report: 'worker' },
      // explained by its own report: not counted again
      { id: '@weft/cli#test', exitCode: 1, report: 'cli' },
      { id: '@weft/codec#test', exitCode: 0, report: 'codec' },
    ]
    const summary = summarize({ reports: [report('unhandled-error', 'worker'), report('before-all-failed', 'cli'), report('clean', 'codec')], tasks, run: { status: 1 } })
    expect(counts(summary.line)).toEqual({ passed: 3, failed: 2, skipped: 5 })
    expect(summary.line).toContain('1 test run exited non-zero with no failure in its report')
    expect(summary.details).toContain('@weft/worker#test exited 1 with no failure in its report (an unhandled error or a crash: see its log)')
    expect(summary.exitCode).toBe(1)
  })

  it('counts a test run that wrote no report at all', () => {
    const summary = summarize({ reports: [report('clean')], tasks: [{ id: '@weft/cli#test', exitCode: 1, report: 'cli' }], run: { status: 1 } })
    expect(counts(summary.line)?.failed).toBe(1)
    expect(summary.exitCode).toBe(1)
  })

  it('names a failed task that writes no report, such as a type-check', () => {
    const summary = summarize({ reports: [report('clean')], tasks: turboTasks(JSON.parse(readFileSync(join(fixtures, 'turbo-summary.json'), 'utf8'))), run: { status: 1 } })
    // @weft/codec#check failed; @weft/cli#test failed with no report
    expect(counts(summary.line)?.failed).toBe(2)
    expect(summary.line).toContain('1 task failed: @weft/codec#check')
    expect(summary.exitCode).toBe(1)
  })

  it('falls back on turbo exit status when nothing else explains it', () => {
    const exited = summarize({ reports: [report('clean')], run: { status: 1 } })
    expect(exited.line).toBe('tests: 1 passed, 1 failed, 2 skipped (turbo exited 1)')
    expect(exited.exitCode).toBe(1)
    const killed = summarize({ reports: [report('clean')], run: { status: null, signal: 'SIGINT' } })
    expect(killed.line).toBe('tests: 1 passed, 1 failed, 2 skipped (turbo ended by SIGINT)')
  })

  it('fails a run whose turbo wrote no summary, though it exited 0 (stopped by a signal after some tasks)', () => {
    const cut = summarize({ reports: [report('clean')], run: { status: 0, signal: null, summarized: false } })
    expect(cut.line).toBe('tests: 1 passed, 1 failed, 2 skipped (turbo wrote no run summary: it was cut short, and which tasks ran is unknown)')
    expect(cut.exitCode).toBe(1)
    expect(summarize({ reports: [report('clean')], run: { status: 0, signal: null, summarized: true } }).exitCode).toBe(0)
  })

  it('fails on skipped tests under CI=true only', () => {
    const ci = summarize({ reports: [report('clean')], ci: true })
    expect(ci.line).toBe('tests: 1 passed, 2 failed, 2 skipped (2 tests skipped under CI=true, where every test must run)')
    expect(ci.exitCode).toBe(1)
    expect(summarize({ reports: [report('clean')], ci: false }).exitCode).toBe(0)
  })

  it('fails a run in which no test passed', () => {
    const summary = summarize({ reports: [] })
    expect(summary.line).toBe('tests: 0 passed, 1 failed, 0 skipped (no test passed)')
    expect(summary.exitCode).toBe(1)
  })

  it('keeps the line and the exit code in agreement for any mix of reports, tasks and statuses', () => {
    const names = ['clean', 'before-all-failed', 'collect-failed', 'unhandled-error', 'global-setup-failed', 'failed-test-and-teardown']
    const arbitraryRun = fc.record({
      reports: fc.uniqueArray(fc.constantFrom(...names), { maxLength: names.length }),
      exitCodes: fc.array(fc.constantFrom(null, 0, 1, 2), { minLength: names.length + 1, maxLength: names.length + 1 }),
      status: fc.constantFrom(0, 1, null),
      ci: fc.boolean(),
    })
    fc.assert(
      fc.property(arbitraryRun, ({ reports, exitCodes, status, ci }) => {
        // one test task per possible report (whether or not it wrote one), and a check task
        const tasks = names.map((name, i) => ({ id: `${name}#test`, exitCode: exitCodes[i] ?? null, report: name }))
        tasks.push({ id: 'x#check', exitCode: exitCodes[names.length] ?? null })
        const summary = summarize({ reports: reports.map((name) => report(name)), tasks, run: { status }, ci })
        const said = counts(summary.line)
        expect(said).toBeDefined()
        expect(said?.failed).toBe(summary.failed)
        expect(summary.exitCode).toBe(said?.failed === 0 ? 0 : 1)
        // any non-zero exit, anywhere, fails the run
        if (status !== 0 || tasks.some((t) => t.exitCode !== null && t.exitCode !== 0)) expect(summary.exitCode).toBe(1)
      }),
    )
  })
})

describe('readReports', () => {
  it('reads every report of a folder and keeps an unparsable one as a failure', () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-reports-'))
    try {
      writeFileSync(join(dir, 'codec.json'), readFileSync(join(fixtures, 'vitest-reports', 'clean.json')))
      writeFileSync(join(dir, 'cli.json'), '{"numPassedTests": 3, "testRes')
      writeFileSync(join(dir, 'notes.txt'), 'not a report')
      const found = readReports(dir)
      expect(found.map((r) => r.name)).toEqual(['cli', 'codec'])
      const summary = summarize({ reports: found })
      expect(counts(summary.line)).toEqual({ passed: 1, failed: 1, skipped: 2 })
      expect(summary.details[0]).toMatch(/^unreadable report \.reports\/cli\.json: SyntaxError/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('finds no report in a missing folder', () => {
    expect(readReports(join(tmpdir(), 'weft-no-such-reports-folder'))).toEqual([])
  })
})

describe('turboTasks', () => {
  it('gives each task its exit code and each test task the report named after its folder', () => {
    const tasks = turboTasks(JSON.parse(readFileSync(join(fixtures, 'turbo-summary.json'), 'utf8')))
    expect(tasks).toEqual([
      { id: '@weft/cli#check', exitCode: 0 },
      { id: '@weft/cli#test', exitCode: 1, report: 'cli' },
      { id: '@weft/codec#check', exitCode: 2 },
      { id: '@weft/codec#test', exitCode: 0, report: 'codec' },
    ])
  })
})

describe('notRunLine', () => {
  it('gives no count, so a stopped run never reads "0 failed"', () => {
    const line = notRunLine('a prerequisite is missing')
    expect(line).toBe('tests: not run (a prerequisite is missing)')
    expect(counts(line)).toBeUndefined()
  })
})
