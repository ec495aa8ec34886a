// The closing line of `npm test`, from the vitest JSON reports and the exit codes of the runs that wrote them.
//
// A vitest JSON report counts tests, not every failure: a suite whose `beforeAll` threw leaves its tests
// "skipped", a file that failed to import has no tests at all, and an unhandled error appears nowhere in it
// (vitest still exits 1). So a file that failed outside its tests, a run that exited non-zero with a clean
// report, and a task that failed without a report (a type-check) each count as one failure here, and the
// exit code is derived from that count alone: the line and the exit code cannot disagree.
import { readdirSync, readFileSync } from 'node:fs'
import { basename, join, relative } from 'node:path'

/**
 * @typedef {object} VitestReport  The parts of vitest's JSON report (reporter `json`) this module reads.
 * @property {number} [numPassedTests]
 * @property {number} [numFailedTests]
 * @property {number} [numPendingTests]
 * @property {number} [numTodoTests]
 * @property {boolean} [success]  false after any failure vitest knows of, including a global setup that threw
 * @property {Array<{ name: string, status: string, message?: string, assertionResults?: Array<{ status: string }> }>} [testResults]
 */

/**
 * @typedef {object} NamedReport  One report file of `.reports/`, named after its package folder.
 * @property {string} name  the file name without `.json`
 * @property {VitestReport} [report]  the parsed report, absent when the file could not be parsed
 * @property {string} [error]  why the file could not be parsed
 */

/**
 * @typedef {object} TaskResult  A task of the run with its exit code.
 * @property {string} id  e.g. `@weft/cli#check`
 * @property {number | null} exitCode  null when the task never finished (it is then left to the overall status)
 * @property {string} [report]  for a test task, the name of the report its vitest run writes
 */

/**
 * @typedef {object} Summary
 * @property {number} passed
 * @property {number} failed  every failure of any kind: tests, files, runs, tasks, skips under CI=true
 * @property {number} skipped
 * @property {string[]} details  one line per failure outside a test, to print above the closing line
 * @property {string} line  the closing line: `tests: N passed, N failed, N skipped` and, after a failure, its kinds
 * @property {0 | 1} exitCode  1 exactly when `failed` is not 0
 */

/**
 * Reads every vitest JSON report in a folder; a report that does not parse is kept with its error, since a
 * truncated report is itself a failure.
 * @param {string} dir  the reports folder (`.reports/`); a missing folder has no reports
 * @returns {NamedReport[]}
 */
export function readReports(dir) {
  let names
  try {
    names = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
  } catch (error) {
    if (error?.code === 'ENOENT') return []
    throw error
  }
  return names.map((file) => {
    const name = basename(file, '.json')
    try {
      return { name, report: JSON.parse(readFileSync(join(dir, file), 'utf8')) }
    } catch (error) {
      return { name, error: String(error) }
    }
  })
}

/**
 * The tasks of a turbo run summary (the file `turbo run --summarize` writes under `.turbo/runs/`) with their exit
 * codes. A test task names the report its vitest run writes: `vitest.shared.mjs` names it after the package folder.
 * @param {{ tasks?: Array<{ taskId: string, task: string, directory?: string, execution?: { exitCode?: number } }> }} summary
 * @returns {TaskResult[]}
 */
export function turboTasks(summary) {
  return (summary.tasks ?? []).map((task) => ({
    id: task.taskId,
    exitCode: task.execution?.exitCode ?? null,
    ...(task.task === 'test' && task.directory !== undefined ? { report: basename(task.directory) } : {}),
  }))
}

/** `n thing` or `n things`. */
function count(n, singular, plural = `${singular}s`) {
  return `${n} ${n === 1 ? singular : plural}`
}

/**
 * Sums the reports and the task results of one run into the closing line and the exit code.
 * @param {object} input
 * @param {NamedReport[]} input.reports
 * @param {TaskResult[]} [input.tasks]  every task whose exit code is known (turbo's and any run outside turbo)
 * @param {{ status: number | null, signal?: string | null, summarized?: boolean }} [input.run]  how turbo itself
 *   ended, and whether it wrote its run summary (default true); each counts only when nothing else explains a
 *   failure. A turbo stopped by a signal can exit 0 without a summary, having run only some tasks.
 * @param {boolean} [input.ci]  under CI=true a skipped test is a failure
 * @param {string} [input.root]  file paths in the details are shown relative to it
 * @returns {Summary}
 */
export function summarize({ reports, tasks = [], run = { status: 0 }, ci = false, root }) {
  let passed = 0
  let failedTests = 0
  let skipped = 0
  /** @type {string[]} */
  const details = []
  let fileFailures = 0
  /** @type {string[]} */
  const runFailures = []
  /** reports whose failures already account for a non-zero exit of their run */
  const explained = new Set()

  for (const { name, report, error } of reports) {
    if (report === undefined) {
      runFailures.push(name)
      details.push(`unreadable report .reports/${name}.json: ${error}`)
      explained.add(name)
      continue
    }
    passed += report.numPassedTests ?? 0
    failedTests += report.numFailedTests ?? 0
    skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0)
    let failuresHere = report.numFailedTests ?? 0
    for (const file of report.testResults ?? []) {
      if (file.status !== 'failed') continue
      const testsFailed = (file.assertionResults ?? []).filter((a) => a.status === 'failed').length
      // A failed file with no failed test failed outside its tests (a hook, its import, its collection); a
      // message on the file is an error of the file itself (a top-level hook), even beside failed tests.
      const message = file.message ?? ''
      if (testsFailed === 0 || message !== '') {
        fileFailures++
        failuresHere++
        const where = root === undefined ? file.name : relative(root, file.name)
        details.push(`failed outside its tests: ${where}${message === '' ? ' (a hook of one of its suites)' : `: ${message.split('\n')[0]}`}`)
      }
    }
    if (failuresHere > 0) explained.add(name)
    else if (report.success === false) {
      // vitest knows of a failure the counts do not show: a global setup that threw leaves an empty report.
      runFailures.push(name)
      details.push(`${name}: vitest reported a failure outside every test file (a global setup?)`)
      explained.add(name)
    }
  }

  /** @type {string[]} */
  const failedTasks = []
  for (const task of tasks) {
    if (task.exitCode === null || task.exitCode === 0) continue
    if (task.report === undefined) {
      failedTasks.push(task.id)
    } else if (!explained.has(task.report)) {
      // A test run that failed with a clean report (or none): an unhandled error, a crash, a config that
      // did not load. Its log above says which.
      runFailures.push(task.report)
      details.push(`${task.id} exited ${task.exitCode} with no failure in its report (an unhandled error or a crash: see its log)`)
      explained.add(task.report)
    }
  }

  const ciSkipped = ci ? skipped : 0
  const parts = []
  if (failedTests > 0) parts.push(count(failedTests, 'failed test'))
  if (fileFailures > 0) parts.push(`${count(fileFailures, 'test file')} failed outside ${fileFailures === 1 ? 'its' : 'their'} tests`)
  if (runFailures.length > 0) parts.push(`${count(runFailures.length, 'test run')} exited non-zero with no failure in ${runFailures.length === 1 ? 'its' : 'their'} report`)
  if (failedTasks.length > 0) parts.push(`${count(failedTasks.length, 'task')} failed: ${failedTasks.join(', ')}`)
  if (ciSkipped > 0) parts.push(`${count(ciSkipped, 'test')} skipped under CI=true, where every test must run`)
  let failed = failedTests + fileFailures + runFailures.length + failedTasks.length + ciSkipped
  // Last resorts, only when nothing above explains the failure: they keep a non-zero exit from reading "0 failed".
  if (failed === 0 && run.status !== 0) {
    parts.push(run.status === null ? `turbo ended by ${run.signal ?? 'a signal'}` : `turbo exited ${run.status}`)
    failed++
  } else if (failed === 0 && run.summarized === false) {
    parts.push('turbo wrote no run summary: it was cut short, and which tasks ran is unknown')
    failed++
  }
  if (failed === 0 && passed === 0) {
    parts.push('no test passed')
    failed++
  }
  const line = `tests: ${passed} passed, ${failed} failed, ${skipped} skipped${parts.length > 0 ? ` (${parts.join('; ')})` : ''}`
  return { passed, failed, skipped, details, line, exitCode: failed > 0 ? 1 : 0 }
}

/**
 * The closing line of a run that stopped before its tests (a missing prerequisite, stale generated code). It
 * gives no counts, since none were taken: "0 failed" beside a non-zero exit would be a lie.
 * @param {string} reason
 * @returns {string}
 */
export function notRunLine(reason) {
  return `tests: not run (${reason})`
}
