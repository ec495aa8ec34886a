/**
 * The head file of an Authority store: the chain heads (`LogHead` of `@weft/authority`) each commit
 * reached, appended beside the database after the commit returns, so a lost tail of the log is
 * noticed on open (§16: an acknowledged Event is never silently dropped).
 *
 * Why a file of its own: a commit lives in the WAL until SQLite checkpoints it into the database
 * file. A WAL that is deleted, left behind in a copy, truncated or damaged takes those commits with
 * it, and SQLite opens what remains without a word (it stops replaying at the first bad frame). A
 * table of the same database would be lost with them. The head file is outside the WAL: it survives
 * a lost WAL, and the proof of the log (`proveLog` of the store) requires every head it remembers
 * to be reached with the same chain hash.
 *
 * The file is append-only: one JSON line per chain a commit advanced, written (`write`) after the
 * commit and before the store returns, so it survives a kill of the process and a WAL lost while
 * the machine runs. At `synchronous: 'full'` it is also flushed (`fdatasync`) every
 * {@link SYNC_EVERY} lines, when it is rewritten and when the store closes: a flush per commit would
 * double the cost of a commit, and it would only matter when a machine crash and a lost WAL come
 * together (a crash alone leaves the flushed WAL whole). A head file that lags the log asks less of
 * it, never more. The file is rewritten whole with the current heads (temporary file, flush,
 * rename) once it has grown by {@link REWRITE_AFTER} lines. A line torn by a crash is the last one
 * and is ignored; the line before it for that chain is an older head, which also only asks less.
 * @module
 */
import { chmodSync, closeSync, existsSync, fchmodSync, fdatasyncSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeFileSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { LogProofError, type LogHead } from '@weft/authority'

/** How many lines the file grows by before it is rewritten with the current heads only. */
export const REWRITE_AFTER = 10_000

/** How many lines are appended between two flushes at `synchronous: 'full'`. */
export const SYNC_EVERY = 64

/** The head file of one database. */
export interface HeadFile {
  /** Where it is: the database path and `.heads`. */
  readonly path: string
  /**
   * The heads the file remembers: the highest sequence of each chain (an absent file remembers none).
   * @throws LogProofError when a line other than a torn last one is damaged.
   */
  read(): LogHead[]
  /** Appends the heads one commit advanced; `all` gives every current head when the file is due to be rewritten. */
  record(heads: readonly LogHead[], all: () => readonly LogHead[]): void
  /** Closes the file (it reopens on the next record). */
  close(): void
}

const CHAIN_HASH = /^sha256:[0-9a-f]{64}$/

/** Whether `value` is a {@link LogHead} as a line of the file holds it. */
function isHead(value: unknown): value is LogHead {
  if (typeof value !== 'object' || value === null) return false
  const { groupId, sequence, chain } = value as Record<string, unknown>
  return (
    (groupId === undefined || (typeof groupId === 'string' && groupId !== '')) && Number.isSafeInteger(sequence) && (sequence as number) >= 1 && typeof chain === 'string' && CHAIN_HASH.test(chain)
  )
}

const lines = (heads: readonly LogHead[]): string => heads.map((h) => `${JSON.stringify(h)}\n`).join('')

/**
 * The head file of the database at `databasePath` (`<path>.heads`), created on the first record.
 * `sync` flushes it to disk in batches (the store's `synchronous: 'full'`); `rewriteAfter` defaults
 * to {@link REWRITE_AFTER}.
 */
export function openHeadFile(databasePath: string, sync: boolean, rewriteAfter = REWRITE_AFTER): HeadFile {
  const path = `${databasePath}.heads`
  // The head file gets the database's readers, not the umask's: owner-only unless the database is
  // readable by more (a library caller does not set the umask `weft serve` sets).
  const mode = (): number => {
    try {
      return statSync(databasePath).mode & 0o666
    } catch {
      return 0o600
    }
  }
  let fd: number | undefined
  let grown = 0
  let unsynced = 0
  const close = (): void => {
    if (fd === undefined) return
    if (sync && unsynced > 0) fdatasyncSync(fd)
    closeSync(fd)
    fd = undefined
    unsynced = 0
  }
  /** Replaces the file with `heads`, so a crash leaves either the old file or the new one. */
  const rewrite = (heads: readonly LogHead[]): void => {
    close()
    const temporary = `${path}.tmp`
    writeFileSync(temporary, lines(heads), { flush: sync, mode: mode() })
    chmodSync(temporary, mode())
    renameSync(temporary, path)
    if (sync) {
      const dir = openSync(dirname(path), 'r')
      try {
        fsyncSync(dir)
      } finally {
        closeSync(dir)
      }
    }
    grown = 0
  }
  return {
    path,
    read() {
      if (!existsSync(path)) return []
      const text = readFileSync(path, 'utf8')
      const highest = new Map<string, LogHead>()
      // The text after the last newline is a line torn by a crash: ignored.
      const complete = text.split('\n').slice(0, -1)
      complete.forEach((line, i) => {
        let head: unknown
        try {
          head = JSON.parse(line)
        } catch {
          head = undefined
        }
        if (!isHead(head)) throw new LogProofError({ subject: `the head file ${path}` }, `line ${i + 1} is damaged`)
        const scope = head.groupId ?? ''
        if ((highest.get(scope)?.sequence ?? 0) < head.sequence) highest.set(scope, head)
      })
      return [...highest.values()]
    },
    record(heads, all) {
      if (heads.length === 0) return
      if (grown >= rewriteAfter) rewrite(all())
      else {
        if (fd === undefined) {
          fd = openSync(path, 'a', mode())
          // An existing file keeps its mode on open; one made by an older version is brought in line.
          fchmodSync(fd, mode())
        }
        writeSync(fd, lines(heads))
        grown += heads.length
        unsynced += heads.length
        if (sync && unsynced >= SYNC_EVERY) {
          fdatasyncSync(fd)
          unsynced = 0
        }
      }
    },
    close,
  }
}
