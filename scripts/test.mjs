#!/usr/bin/env node
// Type-checks every package and runs its tests through turbo, then sums the vitest JSON reports into one closing
// line, `tests: N passed, N failed, N skipped`. Under CI=true a skipped test is a failure: the
// bundle and every service a test needs must be there.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const reports = join(root, '.reports')
rmSync(reports, { recursive: true, force: true })

// Generated code must be committed current: check it from the spec sources before turbo's build
// (which regenerates) can hide a stale file.
const drift = spawnSync('npx', ['tsx', '--conditions=@weft/source', 'tools/codegen/src/run.ts', '--check'], { cwd: root, stdio: 'inherit' })
if (drift.status !== 0) {
  console.log('tests: 0 passed, 1 failed, 0 skipped')
  process.exit(1)
}

const run = spawnSync('npx', ['turbo', 'run', 'check', 'test', '--concurrency=1', '--continue', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
})

let passed = 0
let failed = 0
let skipped = 0
const files = existsSync(reports) ? readdirSync(reports).filter((f) => f.endsWith('.json')) : []
for (const file of files) {
  const report = JSON.parse(readFileSync(join(reports, file), 'utf8'))
  passed += report.numPassedTests ?? 0
  failed += report.numFailedTests ?? 0
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0)
  // a test file that failed to load counts as a failure even with no test inside
  for (const suite of report.testResults ?? []) if (suite.status === 'failed' && (suite.assertionResults ?? []).length === 0) failed++
}
console.log(`\npackages reporting: ${files.length}`)
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`)
const ciSkip = process.env.CI === 'true' && skipped > 0
if (ciSkip) console.error('a test was skipped under CI=true: every test must run in CI')
process.exit(run.status !== 0 || failed > 0 || ciSkip || passed === 0 ? 1 : 0)
