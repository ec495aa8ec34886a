#!/usr/bin/env node
// `npm test`: checks the machine's prerequisites, then that generated code is current and the linter and
// formatter find nothing, then runs the tests of these scripts and every package's type-check and tests through turbo, and sums the vitest JSON reports and
// the tasks' exit codes into one closing line, `tests: N passed, N failed, N skipped` (after a failure, its
// kinds in parentheses). The exit code is 1 exactly when that line counts a failure. Under CI=true a skipped
// test is a failure: the bundle and every service a test needs must be there.
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { checkPrerequisites, systemProbes } from './prerequisites.mjs'
import { notRunLine, readReports, summarize, turboTasks } from './test-summary.mjs'

const root = join(import.meta.dirname, '..')
const reports = join(root, '.reports')
const ci = process.env.CI === 'true'
rmSync(reports, { recursive: true, force: true })

let prerequisites
try {
  prerequisites = await checkPrerequisites(systemProbes(root), { ci })
} catch (error) {
  // A probe that breaks (a damaged checkout, say) must still end the run with its closing line.
  console.error(error)
  console.log(notRunLine('the prerequisite check itself failed, see above'))
  process.exit(1)
}
const { missing, notes } = prerequisites
for (const line of [...notes, ...missing]) console.log(line)
if (missing.length > 0) {
  console.log(notRunLine(`${missing.length === 1 ? 'a prerequisite is' : `${missing.length} prerequisites are`} missing; install as listed above`))
  process.exit(1)
}

// Generated code must be committed current: check it from the spec sources before turbo's build
// (which regenerates) can hide a stale file.
const drift = spawnSync('npx', ['tsx', '--conditions=@weft/source', 'tools/codegen/src/run.ts', '--check'], { cwd: root, stdio: 'inherit' })
if (drift.status !== 0) {
  console.log(notRunLine('generated code is stale or its check failed; npm run generate'))
  process.exit(1)
}

// The house linter and formatter (biome.jsonc): a finding stops the run before the long part, with the command that shows it.
const lint = spawnSync('npx', ['biome', 'check', '--reporter=summary', '.'], { cwd: root, stdio: 'inherit' })
if (lint.status !== 0) {
  console.log(notRunLine('the linter or formatter found problems; npm run lint shows each, npm run format writes the layout'))
  process.exit(1)
}

// The tests of scripts/ itself (no workspace of its own, so turbo does not see it); its vitest config writes
// .reports/scripts.json like every package's.
const own = spawnSync('npx', ['vitest', 'run'], { cwd: join(root, 'scripts'), stdio: 'inherit' })

// Turbo's run summary gives each task's exit code: a type-check that failed, or a test run that exited 1 with a
// clean report (an unhandled error), shows nowhere else.
const runs = join(root, '.turbo', 'runs')
const summariesBefore = new Set(listJson(runs))
const run = spawnSync('npx', ['turbo', 'run', 'check', 'test', '--concurrency=1', '--continue', '--summarize', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
})
const newSummaries = listJson(runs).filter((f) => !summariesBefore.has(f))
const tasks = [{ id: 'scripts#test', exitCode: own.status ?? 1, report: 'scripts' }, ...readTurboTasks(newSummaries)]

const found = readReports(reports)
const summary = summarize({ reports: found, tasks, run: { status: run.status, signal: run.signal, summarized: newSummaries.length > 0 }, ci, root })
console.log(`\npackages reporting: ${found.length}`)
for (const line of summary.details) console.log(line)
if (ci && summary.skipped > 0) console.error('a test was skipped under CI=true: every test must run in CI')
console.log(summary.line)
process.exit(summary.exitCode)

/** The JSON files of a folder (none when it is missing). */
function listJson(dir) {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.json'))
  } catch {
    return []
  }
}

/** The tasks of the run summaries this run wrote, which are then removed (turbo never prunes them). */
function readTurboTasks(files) {
  return files.flatMap((file) => {
    const path = join(runs, file)
    try {
      return turboTasks(JSON.parse(readFileSync(path, 'utf8')))
    } catch {
      // Without the summary, turbo's own exit status still keeps the closing line honest.
      return []
    } finally {
      rmSync(path, { force: true })
    }
  })
}
