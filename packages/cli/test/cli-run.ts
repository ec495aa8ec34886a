/**
 * The `weft` bin as a child process, as an operator runs it: its exit code, its output, and for
 * `weft serve` whether it got as far as listening. The command line is the one `bin/weft.mjs` runs
 * when `dist/` is absent ({@link WEFT}).
 */
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import { WEFT } from './serve-world.js'

/** The package directory, where {@link WEFT}'s relative paths hold. */
export const CLI = fileURLToPath(new URL('..', import.meta.url))

/** How a run of the bin ended. */
export interface WeftRun {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  /** Whether `weft serve` logged `listening` (it is then stopped with SIGTERM). */
  readonly listening: boolean
}

/** Options of {@link runWeft}. */
export interface RunOptions {
  /** Options for `node` before the bin's, e.g. `--import` of a module that injects a fault. */
  readonly node?: readonly string[]
  /** Variables added to the environment. */
  readonly env?: Readonly<Record<string, string>>
}

/** Runs `command` (argv[0] the program) in {@link CLI}; a `weft serve` that logs `listening` is stopped with SIGTERM. */
export function runProcess(command: readonly string[], options: RunOptions = {}): Promise<WeftRun> {
  const child = spawn(command[0]!, command.slice(1), { cwd: CLI, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...options.env } })
  let stdout = ''
  let stderr = ''
  let listening = false
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderr += `${line}\n`
    if (!listening && line.includes('"msg":"listening"')) {
      listening = true
      child.kill('SIGTERM')
    }
  })
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr, listening })))
}

/** Runs `weft ...args`. */
export function runWeft(args: readonly string[], options: RunOptions = {}): Promise<WeftRun> {
  return runProcess([process.execPath, ...(options.node ?? []), ...WEFT, ...args], options)
}

/** The stderr of a refused run, which must be exactly one line and no stack trace; returns it. */
export function oneLine(run: WeftRun): string {
  expect(run.stderr).not.toContain('    at ')
  const lines = run.stderr.split('\n').filter((l) => l !== '')
  expect(lines, run.stderr).toHaveLength(1)
  return lines[0]!
}

/** `text` as a regular expression that matches it literally. */
export function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
