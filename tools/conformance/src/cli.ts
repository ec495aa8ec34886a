/**
 * `weft-conformance`: runs the conformance suites against a MissionWeaveProtocol bundle.
 * The bin is a thin wrapper around {@link main}.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { locateBundle, PINNED_PROTOCOL_COMMIT } from './bundle.js'
import { SUITES, type Suite } from './suites.js'

/** Where {@link main} writes; the process streams by default, replaceable in tests. */
export interface CliIo {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
}

const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
}

/** Exit codes of {@link main}. */
export const EXIT = {
  /** Every selected suite passed. */
  ok: 0,
  /** A suite ran and failed. */
  failed: 1,
  /** Nothing was checked: bad arguments, missing bundle, or a suite could not run. */
  usage: 2,
} as const

function usage(): string {
  const suites = SUITES.map((s) => `  ${s.name.padEnd(12)} ${s.description}`).join('\n')
  return [
    'Usage: weft-conformance [--bundle DIR] [--suite NAME]... [--json] [--verbose]',
    '',
    'Runs the MissionWeaveProtocol 0.1 conformance bundle against Weft.',
    '',
    'Options:',
    '  --bundle DIR   bundle root (default: $MWP_PROTOCOL_DIR, else ../shared/protocol beside the repository)',
    '  --suite NAME   suite to run; repeat or comma-separate for several (default: all)',
    '  --json         print one JSON object instead of tables',
    '  --verbose      also show why each invalid vector was rejected',
    '  --help         show this help',
    '',
    'Suites:',
    suites,
    '',
    'Exit status: 0 all passed, 1 a suite failed, 2 nothing could be checked.',
    '',
  ].join('\n')
}

function bundleCommit(dir: string): string | undefined {
  const pin = join(dir, 'PIN.json')
  if (!existsSync(pin)) return undefined
  try {
    const commit = (JSON.parse(readFileSync(pin, 'utf8')) as { commit?: unknown }).commit
    return typeof commit === 'string' ? commit : undefined
  } catch {
    return undefined
  }
}

/**
 * Runs the CLI and resolves to the process exit code ({@link EXIT}); never calls `process.exit`.
 * @param argv - Arguments after the program name (`process.argv.slice(2)`).
 * @param io - Output sinks; the process streams by default.
 * @example
 * ```ts
 * process.exitCode = await main(['--bundle', '../shared/protocol', '--json'])
 * ```
 */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  let values: { bundle?: string; suite?: string[]; json?: boolean; verbose?: boolean; help?: boolean }
  try {
    ;({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        bundle: { type: 'string' },
        suite: { type: 'string', multiple: true },
        json: { type: 'boolean' },
        verbose: { type: 'boolean', short: 'v' },
        help: { type: 'boolean', short: 'h' },
      },
    }))
  } catch (cause) {
    io.stderr(`weft-conformance: ${(cause as Error).message}\n\n${usage()}`)
    return EXIT.usage
  }
  if (values.help === true) {
    io.stdout(usage())
    return EXIT.ok
  }

  const requested = (values.suite ?? [])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '')
  const selected: Suite[] = []
  for (const name of requested.length > 0 ? requested : SUITES.map((s) => s.name)) {
    const suite = SUITES.find((s) => s.name === name)
    if (suite === undefined) {
      io.stderr(`weft-conformance: unknown suite "${name}" (known: ${SUITES.map((s) => s.name).join(', ')})\n`)
      return EXIT.usage
    }
    if (!selected.includes(suite)) selected.push(suite)
  }

  const json = values.json === true
  const location = locateBundle(values.bundle)
  if (!location.found) {
    io.stderr(`weft-conformance: ${location.reason}\n`)
    if (json) io.stdout(`${JSON.stringify({ ok: false, bundle: location.dir, error: location.reason })}\n`)
    return EXIT.usage
  }

  const commit = bundleCommit(location.dir)
  const outcomes = []
  for (const suite of selected) {
    try {
      outcomes.push(await suite.run(location.dir))
    } catch (cause) {
      const message = `suite ${suite.name} could not run: ${(cause as Error).message}`
      io.stderr(`weft-conformance: ${message}\n`)
      if (json) io.stdout(`${JSON.stringify({ ok: false, bundle: location.dir, error: message })}\n`)
      return EXIT.usage
    }
  }
  const ok = outcomes.every((o) => o.ok)

  if (json) {
    const report = {
      ok,
      bundle: location.dir,
      bundleCommit: commit ?? null,
      pinnedCommit: PINNED_PROTOCOL_COMMIT,
      suites: outcomes.map((o) => o.json()),
    }
    io.stdout(`${JSON.stringify(report)}\n`)
  } else {
    io.stdout(`bundle: ${location.dir}${commit === undefined ? '' : ` (commit ${commit})`}\n`)
    if (commit !== undefined && commit !== PINNED_PROTOCOL_COMMIT) {
      io.stdout(`note: Weft is pinned to protocol commit ${PINNED_PROTOCOL_COMMIT}\n`)
    }
    for (const outcome of outcomes) io.stdout(`\n${outcome.text({ verbose: values.verbose === true })}\n`)
  }
  return ok ? EXIT.ok : EXIT.failed
}
