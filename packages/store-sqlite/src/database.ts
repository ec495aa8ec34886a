/**
 * Opening a Weft SQLite file: the pragmas every store runs under (WAL, the chosen `synchronous`
 * level), the schema stamp that tells an Authority file from a Worker file, and the small helpers
 * both stores share (error wrapping, frozen JSON reads, read-position arguments).
 * @module
 */
import { deepFreeze, UsageError } from '@weft/codec'
import Database from 'better-sqlite3'

/** An open better-sqlite3 connection. */
export type Db = Database.Database

/**
 * How hard a commit waits for the disk (SQLite `PRAGMA synchronous` in WAL mode).
 *
 * - `'full'`: each commit is flushed (fsync of the WAL) before it returns, so a committed
 *   transaction survives a kill of the process and a crash or power loss of the machine.
 * - `'normal'`: each commit is written to the WAL (the operating system holds it) before it
 *   returns, and flushed at checkpoints. A committed transaction survives a kill of the process
 *   (`kill -9`, an uncaught exception); a crash of the operating system or a power loss may drop
 *   the most recent commits, never corrupting the file or splitting a transaction.
 */
export type Synchronous = 'normal' | 'full'

/** Options shared by the SQLite stores. */
export interface SqliteOptions {
  /** See {@link Synchronous}. The Authority store defaults to `'full'`, the Worker store to `'normal'`. */
  readonly synchronous?: Synchronous
}

/** Which store a file belongs to, kept in `PRAGMA application_id` so one is never opened as the other. */
export const FILE_KIND = {
  authority: 0x57465441, // "WFTA"
  worker: 0x57465457, // "WFTW"
} as const

/** The schema version both stores write to `PRAGMA user_version`. */
const SCHEMA_VERSION = 1

/**
 * Opens (creating when absent) the SQLite file at `path` for the store `kind`, applies the pragmas,
 * and creates `schema` in a fresh file.
 * @throws UsageError on a bad path or option, or a file that belongs to another store or schema.
 */
export function openDatabase(path: string, kind: keyof typeof FILE_KIND, options: SqliteOptions, schema: string): Db {
  if (typeof path !== 'string' || path === '') throw new UsageError(`${kind} store: path must be a file path or ':memory:', got ${JSON.stringify(path)}`)
  const synchronous = options.synchronous ?? (kind === 'authority' ? 'full' : 'normal')
  if (synchronous !== 'full' && synchronous !== 'normal') throw new UsageError(`${kind} store: synchronous must be 'full' or 'normal', got ${JSON.stringify(synchronous)}`)
  const db = new Database(path)
  try {
    // WAL lets readers run beside the single writer, and a commit is one append to the WAL.
    db.pragma('journal_mode = WAL')
    db.pragma(`synchronous = ${synchronous.toUpperCase()}`)
    db.pragma('foreign_keys = ON')
    const id = db.pragma('application_id', { simple: true }) as number
    const version = db.pragma('user_version', { simple: true }) as number
    if (id === 0 && version === 0) {
      const empty = db.prepare("SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'").pluck().get() === 0
      if (!empty) throw new UsageError(`${kind} store: ${path} holds tables that are not a Weft ${kind} store`)
      db.transaction(() => {
        db.exec(schema)
        db.pragma(`application_id = ${FILE_KIND[kind]}`)
        db.pragma(`user_version = ${SCHEMA_VERSION}`)
      }).immediate()
    } else if (id !== FILE_KIND[kind]) {
      throw new UsageError(`${kind} store: ${path} is not a Weft ${kind} store (application_id ${id})`)
    } else if (version !== SCHEMA_VERSION) {
      throw new UsageError(`${kind} store: ${path} has schema version ${version}; this build reads version ${SCHEMA_VERSION}`)
    }
    return db
  } catch (error) {
    db.close()
    throw error
  }
}

/**
 * The SQL of triggers that refuse every `UPDATE` and `DELETE` on `table`: for accepted facts, which
 * are never rewritten (§4.6; §7.4: a redaction appends a tombstone instead).
 */
export function immutable(table: string, what: string): string {
  return ['UPDATE', 'DELETE'].map((verb) => `CREATE TRIGGER ${table}_immutable_${verb.toLowerCase()} BEFORE ${verb} ON ${table}\nBEGIN SELECT RAISE(ABORT, '${what} are immutable'); END;`).join('\n')
}

/** Parses stored JSON text into a deep-frozen value (§4.6: what a store hands out is immutable). */
export function frozenParse(text: string): unknown {
  return deepFreeze(JSON.parse(text))
}

/**
 * The SQL arguments of a read "above `afterSequence`, at most `limit`", with the in-memory stores'
 * reading of odd values: positions are floored, negatives count as 0, and `Infinity` (or no limit)
 * is no limit (`-1` to SQLite).
 */
export function window(afterSequence: number, limit: number): [after: number, limit: number] {
  const after = Math.max(0, Math.floor(afterSequence)) || 0
  if (limit === Number.POSITIVE_INFINITY) return [after, -1]
  return [after, Math.max(0, Math.floor(limit)) || 0]
}

/** Whether `error` is SQLite refusing a write by a constraint (a key, a CHECK or a trigger's `RAISE`). */
export function isConstraint(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code.startsWith('SQLITE_CONSTRAINT')
}

/**
 * Runs `write` in one immediate transaction (taking the write lock at once, so a second
 * connection waits instead of failing half-way), turning a constraint refusal into an `Error`
 * that says what was refused: all of it or nothing is stored.
 */
export function atomically<A extends unknown[], R>(db: Db, write: (...args: A) => R, refusal: (...args: A) => string): (...args: A) => R {
  const transaction = db.transaction(write)
  return (...args) => {
    try {
      return transaction.immediate(...args)
    } catch (error) {
      if (isConstraint(error)) throw new Error(`store: ${refusal(...args)}: ${(error as Error).message}`, { cause: error })
      throw error
    }
  }
}
