// The Authority backends the wire benchmark compares, each able to open any number of fresh, empty
// logs in one run:
//
//   memory          createAuthority with its in-memory store
//   sqliteFull      @weft/store-sqlite in a temporary directory, synchronous 'full' (`weft serve`)
//   sqliteNormal    the same with synchronous 'normal' (survives a process kill, not a machine crash)
//   postgres        @weft/store-postgres on WEFT_PG_URL, else on a throwaway server started with
//                   scripts/pg-test-server.sh as the store's tests do; each log in a fresh schema,
//                   every schema dropped (and a started server stopped) when the backend is disposed
//
// `prepare()` resolves to a reason when the backend cannot be had (no PostgreSQL): the suite then
// prints a `skipped:` row instead of failing. Everything opened is closed by `dispose()`.
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAuthority } from '@weft/authority'

const PG_SCRIPT = join(import.meta.dirname, '..', 'scripts', 'pg-test-server.sh')

/**
 * @typedef {{ authority: object, cursorStore?: object, close: () => Promise<void> }} OpenedLog
 * @typedef {{ key: string, label: string, prepare: () => Promise<string | undefined>, open: (options: object) => Promise<OpenedLog>, dispose: () => Promise<void> }} Backend
 */

/** @returns {Backend} the in-memory Authority: the common baseline. */
function memory() {
  return {
    key: 'memory',
    label: 'in memory',
    prepare: async () => undefined,
    open: async (options) => ({ authority: createAuthority(options), close: async () => {} }),
    dispose: async () => {},
  }
}

/** @returns {Backend} a SQLite file per log in one temporary directory, at `synchronous`. */
function sqlite(synchronous, key) {
  let dir
  let store
  let logs = 0
  return {
    key,
    label: `SQLite ${synchronous}`,
    async prepare() {
      store = await import('@weft/store-sqlite')
      dir = mkdtempSync(join(tmpdir(), 'weft-bench-wire-'))
      return undefined
    },
    async open(options) {
      const file = store.openSqliteAuthorityStore(join(dir, `authority-${++logs}.db`), { synchronous })
      try {
        return { authority: createAuthority({ ...options, store: file }), cursorStore: file.cursorStore, close: async () => file.close() }
      } catch (error) {
        file.close()
        throw error
      }
    },
    async dispose() {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
      dir = undefined
    },
  }
}

/** The URL without its password, for messages. */
function shown(url) {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return '(unparsable URL)'
  }
}

/** The first line of a child process's stderr, or the error's message. */
function firstLine(error) {
  const text = String(error?.stderr ?? '') || String(error?.message ?? error)
  return text.trim().split('\n')[0]
}

/** @returns {Backend} PostgreSQL, one fresh schema per log. */
function postgres() {
  let serverDir
  let connectionString
  let pool
  let store
  let prefix
  const schemas = []
  const stopServer = () => {
    if (serverDir === undefined) return
    const dir = serverDir
    serverDir = undefined
    try {
      execFileSync('bash', [PG_SCRIPT, 'stop', dir], { stdio: 'ignore' })
    } catch {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  // An interrupted run must not leave a started server behind.
  const onSignal = (signal) => {
    stopServer()
    process.exit(signal === 'SIGINT' ? 130 : 143)
  }
  const backend = {
    key: 'postgres',
    label: 'PostgreSQL',
    async prepare() {
      let pg
      try {
        store = await import('@weft/store-postgres')
        pg = (await import('pg')).default
      } catch (error) {
        return `@weft/store-postgres cannot be loaded (${firstLine(error)})`
      }
      let url = process.env.WEFT_PG_URL
      if (url === undefined || url === '') {
        serverDir = mkdtempSync(join(tmpdir(), 'weft-bench-pg-'))
        process.once('exit', stopServer).once('SIGINT', onSignal).once('SIGTERM', onSignal)
        try {
          url = execFileSync('bash', [PG_SCRIPT, 'start', serverDir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
        } catch (error) {
          stopServer()
          return `WEFT_PG_URL is unset and scripts/pg-test-server.sh could not start a server (${firstLine(error)})`
        }
      }
      // The suite's own connection, for the probe and the drops; each log opens its pool from the URL, as `weft serve --postgres` does.
      pool = new pg.Pool({ connectionString: url, max: 1 })
      // An idle connection the server drops is replaced on the next checkout; it must not end the run.
      pool.on('error', () => {})
      prefix = `bench_wire_${randomBytes(5).toString('hex')}`
      const probe = `"${prefix}_probe"`
      try {
        await pool.query(`CREATE SCHEMA ${probe}`)
        await pool.query(`DROP SCHEMA ${probe}`)
      } catch (error) {
        await backend.dispose()
        return `PostgreSQL at ${shown(url)} cannot be used (${firstLine(error)})`
      }
      connectionString = url
      return undefined
    },
    async open(options) {
      const schema = `${prefix}_${schemas.length + 1}`
      schemas.push(schema)
      const authority = await store.createPostgresAuthority({ ...options, url: connectionString, schema })
      // The store's ACK Cursor table, where this version of @weft/store-postgres has one; else delivery keeps them in memory.
      return { authority, ...(authority.cursorStore === undefined ? {} : { cursorStore: authority.cursorStore }), close: () => authority.close() }
    },
    async dispose() {
      if (pool !== undefined) {
        const p = pool
        pool = undefined
        try {
          for (const schema of schemas.splice(0)) await p.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
        } finally {
          await p.end()
        }
      }
      stopServer()
      process.off('exit', stopServer).off('SIGINT', onSignal).off('SIGTERM', onSignal)
    },
  }
  return backend
}

/** The backends in table order, the baseline first. @returns {Backend[]} */
export function backends() {
  return [memory(), sqlite('full', 'sqliteFull'), sqlite('normal', 'sqliteNormal'), postgres()]
}
