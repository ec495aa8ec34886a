/**
 * Plain-text and JSON reports. The table printer is generic (columns and rows of cells) so every
 * suite prints the same way; the structural helpers below only turn a run into rows.
 * @module
 */
import { basename } from 'node:path'
import type { StructuralResult, StructuralRun } from './structural.js'

/** A column of a {@link renderTable} table. */
export interface TableColumn {
  readonly header: string
  /** Defaults to `left`; numbers read better right-aligned. */
  readonly align?: 'left' | 'right'
}

/**
 * Renders rows of cells as an aligned plain-text table: a header line, a rule, then one line per
 * row. The last column is not padded, so long names do not leave trailing blanks.
 * @example
 * ```ts
 * renderTable([{ header: '#', align: 'right' }, { header: 'name' }], [['1', 'valid command']])
 * // "# | name\n--+--------------\n1 | valid command"
 * ```
 */
export function renderTable(columns: readonly TableColumn[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((column, i) => Math.max(column.header.length, ...rows.map((row) => (row[i] ?? '').length)))
  const line = (cells: readonly string[]): string =>
    columns
      .map((column, i) => {
        const cell = cells[i] ?? ''
        const width = widths[i] ?? 0
        if (i === columns.length - 1 && column.align !== 'right') return cell
        return column.align === 'right' ? cell.padStart(width) : cell.padEnd(width)
      })
      .join(' | ')
  const rule = widths.map((w) => '-'.repeat(w)).join('-+-')
  return [line(columns.map((c) => c.header)), rule, ...rows.map(line)].join('\n')
}

/** The result label of a structural vector: `PASS`, `FAIL`, or `XFAIL` for a listed known failure. */
export function resultLabel(result: StructuralResult): 'PASS' | 'FAIL' | 'XFAIL' {
  if (result.pass) return 'PASS'
  return result.expectedFailure === undefined ? 'FAIL' : 'XFAIL'
}

/** Columns of the structural table: `#`, result, expected, schema, vector name. */
export const STRUCTURAL_COLUMNS: readonly TableColumn[] = [{ header: '#', align: 'right' }, { header: 'result' }, { header: 'expected' }, { header: 'schema' }, { header: 'vector' }]

/** One table row per vector of a structural run, for {@link renderTable} with {@link STRUCTURAL_COLUMNS}. */
export function structuralRows(run: StructuralRun): string[][] {
  return run.results.map((r) => [String(r.index), resultLabel(r), r.expected, basename(r.schema), r.name])
}

/**
 * The one-line summary of a structural run, e.g. `structural: 58/58 passed (27 valid, 31 invalid)`;
 * unexpected failures, expected failures and run-level problems are appended when present.
 */
export function structuralSummaryLine(run: StructuralRun): string {
  const { total, passed, failed, expectedFailures, valid, invalid } = run.summary
  const extras = [
    failed > 0 ? `${failed} failed` : undefined,
    expectedFailures > 0 ? `${expectedFailures} expected ${expectedFailures === 1 ? 'failure' : 'failures'}` : undefined,
    run.problems.length > 0 ? `${run.problems.length} ${run.problems.length === 1 ? 'problem' : 'problems'}` : undefined,
  ].filter((x) => x !== undefined)
  return `structural: ${passed}/${total} passed (${valid} valid, ${invalid} invalid)` + (extras.length > 0 ? `; ${extras.join(', ')}` : '')
}

/** Options of {@link formatStructuralReport}. */
export interface StructuralReportOptions {
  /** Also list the first reason each invalid vector was rejected for, not only for failures. */
  readonly verbose?: boolean
}

/**
 * The full plain-text report of a structural run: the table, the first error of every failing
 * (or, verbose, every rejected) vector, run-level problems, and the summary line last.
 */
export function formatStructuralReport(run: StructuralRun, options: StructuralReportOptions = {}): string {
  const parts = [renderTable(STRUCTURAL_COLUMNS, structuralRows(run))]
  const details = run.results
    .filter((r) => r.firstError !== undefined && (options.verbose === true || !r.pass))
    .map((r) => {
      const why = r.expectedFailure === undefined ? '' : ` (expected failure: ${r.expectedFailure})`
      return `  #${r.index} ${resultLabel(r)} ${r.name}: got ${r.actual}, expected ${r.expected}${why}; ${r.firstError ?? ''}`
    })
  if (details.length > 0) parts.push(details.join('\n'))
  if (run.problems.length > 0) parts.push(run.problems.map((p) => `  problem: ${p}`).join('\n'))
  parts.push(structuralSummaryLine(run))
  return parts.join('\n\n')
}

/** The JSON form of a structural run: plain data, stable member names, safe to `JSON.stringify`. */
export interface StructuralJson {
  readonly suite: 'structural'
  readonly ok: boolean
  readonly summary: StructuralRun['summary']
  readonly problems: readonly string[]
  readonly results: readonly StructuralResult[]
}

/** Converts a structural run to its {@link StructuralJson} summary. */
export function structuralJson(run: StructuralRun): StructuralJson {
  return { suite: run.suite, ok: run.ok, summary: run.summary, problems: run.problems, results: run.results }
}
