/**
 * One `weft serve` per SQLite data directory. Two Authorities appending to one `authority.db`
 * would each fold only their own commits and hand the same Group sequence to different Events: a
 * forked log (§15.2). SQLite serializes their writes but cannot know that the second writer's state
 * is stale, so the directory is locked before the store is opened.
 *
 * The lock is the file `authority.db.lock`, created whole (written under a temporary name, then
 * hard-linked into place, which fails when the name exists) and holding the holder's process ID,
 * host, boot and process start time. A lock left by a server that died without cleaning up (`kill
 * -9`, a power loss) must not block the restart, so a lock whose holder is gone is taken over: its
 * process no longer exists, the machine rebooted since, or the process ID now belongs to a process
 * started at another time. A lock held on another host (a shared filesystem) cannot be checked
 * from here and is respected.
 *
 * Readers do not take the lock: `weft inspect` reads the WAL-mode database beside a running server.
 * With `--postgres` there is no lock; several servers share one PostgreSQL log by design.
 * @module
 */
import { randomBytes } from 'node:crypto'
import { linkSync, readFileSync, renameSync, unlinkSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { createPrivateFile } from './files.js'
import { STORE_FILE } from './organization.js'

/** The lock file of a data directory, beside the store it guards. */
export const LOCK_FILE = `${STORE_FILE}.lock`

/**
 * The exit code of `weft serve` when another running server holds the data directory: distinct
 * from 1 (could not start) so that a supervisor can tell "already running" from a failure.
 */
export const DATA_DIR_IN_USE_EXIT = 4

/** What a lock file says about the server holding it. */
export interface LockHolder {
  readonly pid: number
  readonly host: string
  /** When it took the lock (RFC 3339). */
  readonly startedAt: string
  /** The kernel's boot ID (Linux), to tell a lock from before a reboot. */
  readonly boot?: string
  /** The process start time in clock ticks since boot (Linux), to tell a reused process ID. */
  readonly processStart?: string
}

/** A held lock. */
export interface DataDirLock {
  /** The lock file. */
  readonly path: string
  /** Removes the lock file if it is still this holder's; idempotent. */
  release(): void
}

/** Another running `weft serve` holds the data directory. */
export class DataDirInUseError extends Error {
  /** The data directory. */
  readonly dataDir: string
  /** Who holds it, as its lock file says. */
  readonly holder: LockHolder
  /** The lock file. */
  readonly lockPath: string

  constructor(dataDir: string, lockPath: string, holder: LockHolder) {
    const here = holder.host === hostname()
    const who = `process ${holder.pid}${here ? '' : ` on host ${holder.host}`}, since ${holder.startedAt}`
    // Another host's process cannot be checked from here: say how to clear a lock it left behind.
    const remedy = here
      ? 'stop that server first (two servers on one authority.db would fork its log; several servers share a log only through --postgres)'
      : `stop that server first; if it is gone for good, remove ${lockPath}`
    super(`the data directory ${dataDir} is in use by another weft serve (${who}): ${remedy}`)
    this.name = 'DataDirInUseError'
    this.dataDir = dataDir
    this.holder = holder
    this.lockPath = lockPath
  }
}

/** The first line of a file under /proc, or undefined off Linux or when unreadable. */
function procText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim()
  } catch {
    return undefined
  }
}

/** The start time of process `pid` in clock ticks since boot: field 22 of /proc/PID/stat (Linux). */
function processStart(pid: number): string | undefined {
  const stat = procText(`/proc/${pid}/stat`)
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ')
  return fields?.[19]
}

function bootId(): string | undefined {
  return procText('/proc/sys/kernel/random/boot_id')
}

function currentHolder(): LockHolder {
  const boot = bootId()
  const start = processStart(process.pid)
  return {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    ...(boot === undefined ? {} : { boot }),
    ...(start === undefined ? {} : { processStart: start }),
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>
    if (!Number.isSafeInteger(value.pid) || typeof value.host !== 'string' || typeof value.startedAt !== 'string') return undefined
    return value as LockHolder
  } catch {
    return undefined
  }
}

/** Whether the holder a lock file names is still running; always true for another host's. */
function alive(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return true
  const boot = bootId()
  if (holder.boot !== undefined && boot !== undefined && holder.boot !== boot) return false
  try {
    process.kill(holder.pid, 0)
  } catch (error) {
    // EPERM: the process exists and belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  // The ID may have been handed to a new process since the holder died.
  const start = processStart(holder.pid)
  return holder.processStart === undefined || start === undefined || start === holder.processStart
}

/** The lock file's text, or undefined when it does not exist (any more). */
function readLock(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/**
 * Moves the stale lock whose text is `stale` out of the way. Renaming is atomic, so of several
 * processes that judged the same lock stale, one moves it; if what it moved is not that lock (a new
 * holder took the name in between), it puts it back.
 */
function breakStale(path: string, stale: string): void {
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`
  try {
    renameSync(path, aside)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw error
  }
  if (readLock(aside) !== stale) {
    // Should a third process have taken the name meanwhile, the lock moved aside is lost: that
    // needs three servers starting within the same instant over a stale lock.
    try {
      linkSync(aside, path)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
  unlinkSync(aside)
}

/**
 * Takes the lock of the data directory `dataDir` for this process.
 * @throws DataDirInUseError when a running server holds it; the `node:fs` error when the
 * directory cannot be written.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE)
  const text = `${JSON.stringify(currentHolder())}\n`
  // Written whole under a private name first, so a reader never sees a half-written lock.
  const draft = `${path}.${process.pid}-${randomBytes(4).toString('hex')}`
  createPrivateFile(draft, text)
  try {
    // A few rounds: each one either takes the lock, finds it held, or clears a stale one.
    for (let round = 0; round < 5; round++) {
      try {
        linkSync(draft, path)
        return held(path, text)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
      const existing = readLock(path)
      if (existing === undefined) continue
      const holder = parseHolder(existing)
      // A lock file that says nothing readable was not written by this code (it writes whole files): stale.
      if (holder !== undefined && alive(holder)) throw new DataDirInUseError(dataDir, path, holder)
      breakStale(path, existing)
    }
    throw new Error(`${path}: the lock kept changing hands; try again`)
  } finally {
    unlinkSync(draft)
  }
}

function held(path: string, text: string): DataDirLock {
  let released = false
  const release = (): void => {
    if (released) return
    released = true
    process.off('exit', release)
    try {
      // Only this holder's own lock: after a takeover the file may be another server's.
      if (readLock(path) === text) unlinkSync(path)
    } catch {
      // The directory went away or turned read-only: a lock left behind is found stale next time.
    }
  }
  // A process that exits without closing the server (an uncaught error) leaves no lock behind.
  process.on('exit', release)
  return { path, release }
}
