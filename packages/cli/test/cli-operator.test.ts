/**
 * The `weft` bin on everyday mistakes, each ending in one line and its documented exit code, never
 * a stack trace: a `--report` directory under a regular file (refused before the demo runs), a
 * damaged `authority.db` found after it opened, simulator numbers that are not numbers; an
 * unexpected error, which says to rerun with `WEFT_DEBUG=1` and then shows its stack; and
 * `--version`.
 */
import { openSync, readFileSync, writeSync, closeSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { STORE_FILE } from '../src/serve/organization.js'
import { CLI, oneLine, runWeft } from './cli-run.js'
import { removeTemporaryDirs, startServe, stop, temporaryDir } from './serve-world.js'

afterAll(removeTemporaryDirs)

describe('weft demo --report', () => {
  it('refuses a directory under a regular file before the demo runs', async () => {
    const file = join(await temporaryDir(), 'taken')
    await writeFile(file, 'a file, not a directory\n')
    const report = join(file, 'report')
    const run = await runWeft(['demo', '--yes', '--report', report])
    expect(run.code).toBe(2)
    expect(oneLine(run)).toBe(`weft demo: --report ${report}: cannot write there: a part of the path is a file, not a directory (ENOTDIR)`)
    // Nothing ran: no progress line, no summary.
    expect(run.stdout).toBe('')
  })
})

describe('a damaged authority.db', () => {
  it('fails its proof on one line with exit 3 in inspect, inspect --verify and serve, also when found after opening', async () => {
    const dir = join(await temporaryDir(), 'org')
    expect((await runWeft(['serve', '--init', '--data', dir])).code).toBe(0)
    // An empty log, stopped cleanly: its file is checkpointed, no WAL beside it.
    const server = await startServe(dir)
    expect(await stop(server, 'SIGTERM')).toEqual({ code: 0, signal: null })
    const path = join(dir, STORE_FILE)
    // Overwrite the events table's root page. Opening reads only the schema and the (empty) chain
    // heads, so SQLite finds the damage once the store reads the table, after it opened.
    const db = new Database(path, { readonly: true })
    const root = db.prepare("SELECT rootpage FROM sqlite_schema WHERE type = 'table' AND name = 'events'").pluck().get() as number
    const pageSize = db.pragma('page_size', { simple: true }) as number
    db.close()
    const fd = openSync(path, 'r+')
    writeSync(fd, Buffer.alloc(pageSize, 0x41), 0, pageSize, (root - 1) * pageSize)
    closeSync(fd)
    for (const args of [
      ['inspect', '--data', dir],
      ['inspect', '--data', dir, '--verify'],
      ['serve', '--data', dir, '--port', '0', '--insecure-loopback'],
    ]) {
      const run = await runWeft(args)
      expect(run.code, `${args.join(' ')}\n${run.stderr}`).toBe(3)
      expect(oneLine(run)).toBe(`weft ${args[0]}: the database ${path} fails its proof: database disk image is malformed`)
    }
  })
})

describe('weft simulate numbers', () => {
  it('says what --seeds, --seed and --steps count instead of got NaN', async () => {
    const cases: [string[], string][] = [
      [['--seeds', 'abc'], 'weft simulate: --seeds is how many seeds to run, a whole number from 1 up; got "abc"'],
      [['--seeds', '1e3'], 'weft simulate: --seeds is how many seeds to run, a whole number from 1 up; got "1e3"'],
      [['--seed', '1.5'], 'weft simulate: --seed is the seed to run first (a failing run prints the one to replay), a whole number from 0 up; got "1.5"'],
      [['--steps', 'ten'], 'weft simulate: --steps is how many steps each seed runs, a whole number from 1 up; got "ten"'],
    ]
    for (const [args, line] of cases) {
      const run = await runWeft(['simulate', ...args])
      expect(run.code, args.join(' ')).toBe(2)
      expect(oneLine(run)).toBe(line)
      expect(run.stdout).toBe('')
    }
  })
})

describe('an unexpected error', () => {
  // Standard output breaks under the simulator: an error no command expects.
  const brokenStdout = ['--import', `data:text/javascript,${encodeURIComponent("process.stdout.write = () => { throw new Error('injected fault') }")}`]
  const args = ['simulate', '--seed', '1', '--steps', '1']
  const line = 'weft simulate: unexpected error: injected fault (a bug in weft; rerun with WEFT_DEBUG=1 for the stack trace)'

  it('prints one line with the hint to rerun with WEFT_DEBUG=1, and exit code 1', async () => {
    const run = await runWeft(args, { node: brokenStdout })
    expect(run.code).toBe(1)
    expect(oneLine(run)).toBe(line)
  })

  it('prints the same line and then the stack with WEFT_DEBUG=1', async () => {
    const run = await runWeft(args, { node: brokenStdout, env: { WEFT_DEBUG: '1' } })
    expect(run.code).toBe(1)
    const [first, ...stack] = run.stderr.trimEnd().split('\n')
    expect(first).toBe(line)
    expect(stack[0]).toBe('Error: injected fault')
    expect(stack.some((l) => l.startsWith('    at '))).toBe(true)
  })
})

describe('weft --version', () => {
  it('prints the @weft/cli version and the protocol version, as --version and as version', async () => {
    const { version } = JSON.parse(readFileSync(join(CLI, 'package.json'), 'utf8')) as { version: string }
    for (const command of ['--version', 'version']) {
      const run = await runWeft([command])
      expect(run.code, run.stderr).toBe(0)
      expect(run.stdout).toBe(`weft ${version} (@weft/cli), MissionWeaveProtocol 0.1\n`)
      expect(run.stderr).toBe('')
    }
  })
})
