/** A fresh temporary directory per test for the SQLite files it writes, removed after the test. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach } from 'vitest'

/** Registers the per-test directory; `path(name)` names a file in the current test's directory. */
export function tempFiles(prefix: string): { path(name: string): string } {
  let dir = ''
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), `weft-${prefix}-`))
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))
  return { path: (name) => join(dir, name) }
}

/**
 * Runs `script` (next to these tests, under tsx) with `args` until it has printed more than `lines`
 * lines, kills it with SIGKILL, and returns every line it printed: the crash tests' writer.
 */
export function runUntilKilled(script: string, args: readonly string[], lines: number): Promise<{ lines: string[]; signal: NodeJS.Signals | null; stderr: string }> {
  const here = dirname(fileURLToPath(import.meta.url))
  const child = spawn(process.execPath, ['--conditions=@weft/source', '--import', 'tsx', join(here, script), ...args], {
    cwd: join(here, '..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
    if (out.split('\n').length > lines && child.exitCode === null && !child.killed) child.kill('SIGKILL')
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  return new Promise((resolve) => child.on('close', (_code, signal) => resolve({ lines: out.split('\n').filter((l) => l !== ''), signal, stderr })))
}
