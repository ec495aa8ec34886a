/**
 * The `weft` command. `bin/weft.mjs` calls {@link main}; everything it does is available here as
 * a function of its arguments and an {@link CliIo}, so tests run it in memory.
 *
 * - `weft demo [--yes] [--seed N] [--report DIR] [--quiet] [--faults] [--console]`: the proof of concept (§22),
 *   with `--console` followed and decided in the web console (`demo/console.ts`). Exit 0
 *   only when both Missions ended approved (with `--faults`: every injected fault held and every
 *   post-run check passed).
 * - `weft conformance [ARGS...]`: runs `weft-conformance` (the `@weft/conformance` tool) with the
 *   same arguments, when it is installed.
 * - `weft simulate [--seeds N] [--seed S] [--steps K]`: the seeded fault simulator; exit 0 only
 *   when no seed broke a §4 invariant.
 * - `weft serve --data DIR [...]`: a Group Authority on the WebSocket binding over a durable
 *   store (`serve/serve.ts`): SQLite in the data directory, or with `--postgres URL` a PostgreSQL
 *   database that several servers share, with the web console (§5) on the same listener;
 *   `weft inspect` prints what such a store holds.
 * - `weft principal add human|agent --data DIR --name NAME [...]` and `weft principal list --data DIR`:
 *   the humans and Agents of a data directory's `organization.json` (`principal.ts`).
 * - `weft version` (or `--version`): the `@weft/cli` and protocol versions.
 * - `weft help`.
 * @module
 */
import { spawn } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { UsageError } from '@weft/codec'
// Each command imports what it runs when it runs (below): `weft help` or `weft version` loads no
// protocol code, and `weft demo --no-report` does not load the report's renderer.
import type { Decider } from './demo/owner.js'
import type { DemoLine, DemoResult } from './demo/run.js'
import type { FaultNotice, FaultSuiteRun } from './demo/faults.js'
import { checkWritableDir, exitOnStrayErrors, reportFailure } from './failures.js'

/** Where `weft demo` writes its report unless told otherwise (§22: the run's timeline, graphs and checks). */
const DEFAULT_REPORT_DIR = 'weft-report'

/** Where the command reads and writes. */
export interface CliIo {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  /** Whether a human can answer prompts (the MissionOwner's decisions). */
  readonly interactive: boolean
  /** Asks the human a question; used only when {@link interactive}. */
  readonly question?: (prompt: string) => Promise<string>
  /** Runs another command with inherited standard streams; resolves to its exit code, rejects when it cannot start. */
  readonly run?: (command: string, args: readonly string[]) => Promise<number>
  /**
   * Calls `listener` once on Ctrl-C (SIGINT) or SIGTERM until the returned function is called;
   * `weft demo --console` stops on it. Absent: nothing interrupts, and `--console` does not stay
   * open after the run.
   */
  readonly onInterrupt?: (listener: () => void) => () => void
}

/** Exit codes of {@link main}. */
export const EXIT = {
  /** The command succeeded; for `demo`, both Missions were approved. */
  ok: 0,
  /** The command ran and failed; for `demo`, a Mission ended otherwise. */
  failed: 1,
  /** Nothing ran: bad arguments or a missing tool. */
  usage: 2,
  /** `serve` and `inspect`: the stored log fails its proof (tampered with or damaged). */
  logProof: 3,
  /** `serve`: another running `weft serve` holds the data directory (its lock, `serve/lock.ts`). */
  inUse: 4,
} as const

const USAGE = `Usage: weft <command> [options]

Commands:
  demo           Run the MissionWeaveProtocol proof of concept: two concurrent software
                 Missions, their Coordinators, shared Workers and your Approval.
    --yes        Approve every submission without asking (the search Mission still gets
                 one scripted change request).
    --seed N     Seed identifiers and run times (default 1).
    --report DIR Write the visual report to DIR/index.html and the structured result to
                 DIR/demo-result.json (default weft-report).
    --no-report  Write neither.
    --quiet      Print only the summary.
    --faults     Inject the failure suite (§22) and verify the whole log afterwards; exit 0
                 only when every fault held and every check passed.
    --console    Open the web console (§5) on a loopback port and print its URL and the
                 MissionOwner's key file to sign in with; the Missions wait for your decision
                 there (with --yes they are approved automatically). The run goes at a pace a
                 person can follow; the console stays open afterwards until Ctrl-C.
    --console-port N  Its port (default: a free one).
    --console-app DIR Serve the console's app from DIR (default: the build of @weft/console).
    --pace N     Virtual seconds per second with --console (default 120: about 2.5 minutes).
  conformance    Run weft-conformance (from @weft/conformance) with the given arguments.
  simulate       Run the seeded fault simulator, checking the §4 invariants after every step.
    --seeds N    How many seeds (default 100; counted from --seed when both are given).
    --seed S     Replay seed S (one seed unless --seeds says more).
    --steps K    Steps per seed (default 120).
  serve          Run a Group Authority over WebSocket on a durable store in a data directory.
    --data DIR   The data directory: organization.json and authority.db (required).
    --init       Write a new organization.json with fresh service keys and a first human
                 (its private key in DIR/owner.key.json, mode 600), then exit.
    --human NAME | --no-human  With --init: the first human's name (default owner), or none.
    --port N     WebSocket port (default 7443; 0 picks a free one). --host H (default 127.0.0.1).
    --tls-cert F --tls-key F   PEM files: wss with TLS 1.3.
    --insecure-loopback        Plain ws on a loopback host (development only).
    --control-port N           Also take signed human and service Commands on 127.0.0.1:N.
    --config FILE              JSON defaults for the options above and policy limits.
    --postgres URL             Keep the log in PostgreSQL instead of authority.db; several
                               servers may share one database (organization.json still comes
                               from --data).
    --pg-schema NAME           The PostgreSQL schema of the log (default weft).
    --max-messages-per-minute N   Messages per actor and Group per minute (default 1000).
    --max-proposals-per-minute N  work.propose per actor and Group per minute (default 120).
    --max-hellos-per-minute N     Sessions one Agent may open per minute (default 60).
    --max-connections N           WebSocket connections at once (default 1000).
    --max-connections-per-peer N  ... from one peer address (default 100).
    --no-console               Do not serve the web console (/console/ on the WebSocket port).
    --console-origin URL       The address people open the console at, e.g. behind a reverse
                               proxy (repeatable; default: the listener's own).
    --console-app DIR          Serve the console app from DIR (default: @weft/console's build).
  inspect        Print a data directory's Groups: Events, WorkItems, leases, budget ledger.
    --data DIR   The data directory (read only; a running server may hold it).
    --group ID   Only this Group.   --last N   Only the last N Events per Group.
    --json       One JSON document instead of tables.
    --postgres URL [--pg-schema NAME]   Read the log from PostgreSQL instead of authority.db.
    --verify     Prove the log as weft serve does on start (signatures, chains, the head
                 file); print one line; exit 3 when it fails.
  principal      Add a human or an Agent to a data directory's organization.json, or list them.
    add human|agent --data DIR --name NAME   Fresh Ed25519 key: the private key goes to
                 NAME.key.json (mode 600, never overwritten), the public key to organization.json.
    --id URI     The principal's ID (default ORG:TYPE:NAME).   --key-out FILE   The key file.
    --valid-from T --valid-until T   The key's validity (RFC 3339; default from now, no end).
    --capability ID@VERSION ...   Agents: the card's capabilities (at least one).
    --owner ID   Agents: the accountable principal (default the only human).
    --display-name TEXT --description TEXT --max-concurrency N (default 1) --endpoint wss://URI ...
    list --data DIR [--json]   The services and principals with their keys and validity.
  version        Print the versions of weft and of MissionWeaveProtocol (also --version).
  help           Show this text.
`

function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    interactive: process.stdin.isTTY === true && process.stdout.isTTY === true,
    // Drops what was typed before each prompt, so it never answers the question (owner.ts).
    question: async (prompt) => (await import('./demo/owner.js')).terminalQuestion(process.stdin, process.stdout)(prompt),
    run: (command, args) =>
      new Promise((resolve, reject) => {
        const child = spawn(command, [...args], { stdio: 'inherit' })
        child.once('error', reject)
        child.once('exit', (code) => resolve(code ?? EXIT.failed))
      }),
    onInterrupt: (listener) => {
      const once = (): void => {
        off()
        listener()
      }
      const off = (): void => {
        process.off('SIGINT', once)
        process.off('SIGTERM', once)
      }
      process.once('SIGINT', once)
      process.once('SIGTERM', once)
      return off
    },
  }
}

/** `+HH:MM` of virtual time since the start. */
function elapsed(ms: number): string {
  const minutes = Math.floor(ms / 60_000)
  return `+${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`
}

function lineText(line: DemoLine): string {
  return `${elapsed(line.elapsedMs)}  ${`[${line.mission}]`.padEnd(11)} ${line.kind.padEnd(10)} ${line.text}\n`
}

async function demo(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: false,
    options: {
      yes: { type: 'boolean', short: 'y' },
      seed: { type: 'string' },
      report: { type: 'string' },
      'no-report': { type: 'boolean' },
      quiet: { type: 'boolean', short: 'q' },
      faults: { type: 'boolean' },
      console: { type: 'boolean' },
      'console-port': { type: 'string' },
      'console-app': { type: 'string' },
      pace: { type: 'string' },
    },
  })
  const seed = values.seed === undefined ? 1 : Number(values.seed)
  if (!Number.isSafeInteger(seed) || seed < 0) {
    io.stderr(`weft demo: --seed must be a non-negative integer, got ${values.seed}\n`)
    return EXIT.usage
  }
  const withConsole = values.console === true
  const consoleOnly = (['pace', 'console-port', 'console-app'] as const).find((flag) => values[flag] !== undefined)
  if (!withConsole && consoleOnly !== undefined) {
    io.stderr(`weft demo: --${consoleOnly} needs --console\n`)
    return EXIT.usage
  }
  if (withConsole && values.faults === true) {
    io.stderr('weft demo: --console and --faults do not combine (the failure suite runs as fast as it can)\n')
    return EXIT.usage
  }
  const pace = values.pace === undefined ? DEFAULT_CONSOLE_PACE : Number(values.pace)
  if (!(Number.isFinite(pace) && pace > 0 && pace <= 1_000_000)) {
    io.stderr(`weft demo: --pace must be a positive number of virtual seconds per second (at most 1000000), got ${values.pace}\n`)
    return EXIT.usage
  }
  const consolePort = values['console-port'] === undefined ? 0 : Number(values['console-port'])
  if (!Number.isSafeInteger(consolePort) || consolePort < 0 || consolePort > 65_535) {
    io.stderr(`weft demo: --console-port must be a TCP port (0 to 65535), got ${values['console-port']}\n`)
    return EXIT.usage
  }
  if (withConsole)
    return demoWithConsole(
      {
        seed,
        pace,
        port: consolePort,
        appDir: values['console-app'],
        yes: values.yes === true,
        quiet: values.quiet === true,
        report: values['no-report'] === true ? undefined : (values.report ?? DEFAULT_REPORT_DIR),
      },
      io,
    )
  // The report is written at the end of the run: a directory that cannot take it is refused first.
  if (values['no-report'] !== true) await checkWritableDir(values.report ?? DEFAULT_REPORT_DIR, '--report')
  const { approveAll, promptDecider } = await import('./demo/owner.js')
  let decide: Decider = approveAll()
  if (values.yes !== true) {
    if (io.interactive && io.question !== undefined) decide = promptDecider(io.question, io.stdout)
    else io.stdout('No terminal to ask on: approving automatically (as with --yes).\n')
  }
  const faults = values.faults === true ? await import('./demo/faults.js') : undefined
  const { runDemo } = await import('./demo/run.js')
  const started = performance.now()
  const progress = values.quiet === true ? {} : { onLine: (line: DemoLine) => io.stdout(lineText(line)), onNotice: (notice: FaultNotice) => io.stdout(faults?.noticeText(notice) ?? '') }
  const suite = faults === undefined ? undefined : await faults.runFaultSuite({ seed, decide, ...progress })
  const { result } = suite ?? (await runDemo({ seed, decide, ...progress }))
  const wallMs = Math.round(performance.now() - started)
  const report = values['no-report'] === true ? undefined : (values.report ?? DEFAULT_REPORT_DIR)
  await summarize(result, suite, wallMs, report, io)
  return (suite === undefined ? result.approved : suite.result.passed) ? EXIT.ok : EXIT.failed
}

/** Prints a demo's outcome, writes its report unless `report` is undefined (§22). */
async function summarize(result: DemoResult, suite: FaultSuiteRun | undefined, wallMs: number, report: string | undefined, io: CliIo): Promise<void> {
  io.stdout('\n')
  for (const m of result.missions) io.stdout(`${m.label.padEnd(9)} ${m.state.padEnd(18)} revision ${m.revision}, ${m.events} Events, ${m.changeRequests} change request(s)  ${m.title}\n`)
  const c = result.counts
  io.stdout(
    `\n${c['events']} Events, ${c['offers']} offers, ${c['starts']} starts, ${c['checkpoints']} checkpoints (${c['preemptions']} preemption(s)), ${c['blocks']} block(s), ${c['verified']} results accepted, ` +
      `${result.sideEffects.length} external operation(s); ${elapsed(result.endMs - result.startMs).slice(1)} of virtual time in ${wallMs} ms\n`,
  )
  if (report !== undefined) {
    await mkdir(report, { recursive: true })
    await writeFile(join(report, 'demo-result.json'), `${JSON.stringify(result, null, 2)}\n`)
    const page = join(report, 'index.html')
    // With --faults the page also shows every injection and every post-run check (§22).
    const { renderReport } = await import('./report/report.js')
    await writeFile(page, renderReport(result, suite === undefined ? {} : { faults: suite.result.faults, checks: suite.result.verification.checks }))
    io.stdout(`Report written to ${page}\n`)
  }
  const iso = result.isolation
  // §11.1: the slot audit's verdict, so the run shows isolation between slots, not only claims it.
  if (iso !== undefined) {
    io.stdout(
      iso.violations.length === 0
        ? `Isolation: ${iso.pairs} overlapping slot pairs on shared Workers checked (${iso.crossMission} across Missions): no shared context, token or side-effect key\n`
        : `Isolation: ${iso.violations.length} breach(es) in ${iso.pairs} overlapping slot pairs, first: ${iso.violations[0]}\n`,
    )
  }
  io.stdout(result.approved ? 'Both Missions were approved.\n' : 'Not every Mission was approved.\n')
  if (suite !== undefined) io.stdout((await import('./demo/faults.js')).checklistText(suite.result))
}

/** The virtual seconds per second `weft demo --console` runs at unless `--pace` says otherwise: the demo's five virtual hours in about two and a half minutes. */
const DEFAULT_CONSOLE_PACE = 120

/**
 * `weft demo --console`: the demo at a pace a person can follow, its Authority on the WebSocket
 * binding with the web console on the same loopback listener (`demo/console.ts`). Without
 * `--yes` the submissions wait for the person's decision in the browser; Ctrl-C ends the run
 * early. After the run the console stays open until Ctrl-C, so the result can be looked at.
 */
async function demoWithConsole(
  o: { readonly seed: number; readonly pace: number; readonly port: number; readonly appDir: string | undefined; readonly yes: boolean; readonly quiet: boolean; readonly report: string | undefined },
  io: CliIo,
): Promise<number> {
  if (o.report !== undefined) await checkWritableDir(o.report, '--report')
  const { openDemoConsole } = await import('./demo/console.js')
  const { runDemo } = await import('./demo/run.js')
  const { approveAll } = await import('./demo/owner.js')
  const stop = new AbortController()
  const offInterrupt = io.onInterrupt?.(() => stop.abort())
  let opened: Awaited<ReturnType<typeof openDemoConsole>> | undefined
  try {
    const started = performance.now()
    const { result } = await runDemo({
      seed: o.seed,
      pace: o.pace,
      signal: stop.signal,
      ...(o.yes ? { decide: approveAll() } : { approvals: 'external' as const }),
      ...(o.quiet ? {} : { onLine: (line: DemoLine) => io.stdout(lineText(line)) }),
      hooks: {
        setup: async (world) => {
          opened = await openDemoConsole(world, { pace: o.pace, port: o.port, ...(o.appDir === undefined ? {} : { appDir: o.appDir }) })
          io.stdout(
            `Console: ${opened.url}\n` +
              `Sign in there with the MissionOwner's key file: ${opened.keyPath}\n` +
              (o.yes
                ? 'Every submission is approved automatically (--yes); the console shows the work live.\n'
                : 'The Missions wait for your decision in the console (Approval or change request).\n') +
              'Ctrl-C stops.\n\n',
          )
        },
      },
    })
    const wallMs = Math.round(performance.now() - started)
    if (stop.signal.aborted) {
      io.stdout('\nStopped before both Missions were decided.\n')
      return EXIT.failed
    }
    await summarize(result, undefined, wallMs, o.report, io)
    if (offInterrupt !== undefined && opened !== undefined) {
      io.stdout(`The console stays open at ${opened.url} to look around; Ctrl-C ends it.\n`)
      await new Promise<void>((resolve) => (stop.signal.aborted ? resolve() : stop.signal.addEventListener('abort', () => resolve(), { once: true })))
    }
    return result.approved ? EXIT.ok : EXIT.failed
  } finally {
    offInterrupt?.()
    await opened?.close()
  }
}

async function conformance(args: readonly string[], io: CliIo): Promise<number> {
  if (io.run === undefined) {
    io.stderr('weft conformance: cannot start other commands here\n')
    return EXIT.usage
  }
  try {
    return await io.run('weft-conformance', args)
  } catch {
    // The tool is a separate package (tools never become runtime dependencies of packages).
    io.stderr('weft conformance: weft-conformance was not found; install @weft/conformance or run it from the Weft workspace\n')
    return EXIT.usage
  }
}

async function simulate(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args: [...args], strict: true, allowPositionals: false, options: { seeds: { type: 'string' }, seed: { type: 'string' }, steps: { type: 'string' } } })
  try {
    const { simulateNumbers } = await import('./simulate/args.js')
    const { runSimulation, simulationReport } = await import('./simulate/run.js')
    // Each number is read strictly and refused with what it counts (simulate/args.ts).
    const summary = await runSimulation({ ...simulateNumbers(values), log: (line) => io.stdout(`${line}\n`) })
    io.stdout(simulationReport(summary))
    return summary.violations.length === 0 ? EXIT.ok : EXIT.failed
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.stderr(`weft ${error.message}\n`)
    return EXIT.usage
  }
}

/** The lines of {@link USAGE} about `command`: its line and its indented options; `undefined` for no such command. */
function commandUsage(command: string): string | undefined {
  const lines = USAGE.split('\n')
  const first = lines.findIndex((line) => line.startsWith(`  ${command} `))
  if (first < 0) return undefined
  let end = first + 1
  while (end < lines.length && lines[end]!.startsWith('    ')) end++
  return `Usage: weft ${command} [options]\n\n${lines.slice(first, end).join('\n')}\n`
}

/**
 * Runs the `weft` command with `argv` (without the node and script paths). Every failure ends in
 * one line on `stderr` and its exit code, never a stack trace (`failures.ts`; `WEFT_DEBUG=1` adds
 * the stack of an unexpected error).
 * @param given - Where to read and write; without it, the process's streams, and errors thrown
 * outside the command's awaits (an unhandled `'error'` event) are reported the same way.
 * @returns The exit code ({@link EXIT}).
 */
export async function main(argv: readonly string[], given?: CliIo): Promise<number> {
  const io = given ?? processIo()
  const [command, ...rest] = argv
  // As the process (no io given), errors no await below can catch end in one line too (failures.ts).
  if (given === undefined) exitOnStrayErrors(command, io.stderr, EXIT)
  if (command === '--version' || command === 'version') {
    io.stdout((await import('./version.js')).versionText())
    return EXIT.ok
  }
  // `weft <command> --help`: that command's part of the usage (conformance passes it on to its tool).
  if (command !== 'conformance' && (rest.includes('--help') || rest.includes('-h'))) {
    const section = commandUsage(command ?? '')
    if (section !== undefined) {
      io.stdout(section)
      return EXIT.ok
    }
  }
  try {
    switch (command) {
      case 'demo':
        return await demo(rest, io)
      case 'conformance':
        return await conformance(rest, io)
      case 'simulate':
        return await simulate(rest, io)
      // Loaded on demand: only these two need the native SQLite module.
      case 'serve':
        return await (await import('./serve/command.js')).serveCommand(rest, io)
      case 'inspect':
        return await (await import('./serve/inspect.js')).inspectCommand(rest, io)
      case 'principal':
        return await (await import('./principal.js')).principalCommand(rest, io)
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.stdout(USAGE)
        return EXIT.ok
      default:
        io.stderr(`weft: unknown command ${command}\n\n${USAGE}`)
        return EXIT.usage
    }
  } catch (error) {
    // parseArgs throws on unknown or malformed options.
    if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) {
      io.stderr(`weft ${command}: ${error.message}\n`)
      return EXIT.usage
    }
    // Anything else: one line saying what happened (and for a bug, how to see its stack), never a trace.
    return reportFailure(command, error, io.stderr, EXIT)
  }
}
