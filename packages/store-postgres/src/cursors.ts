/**
 * ACK Cursors (§16) in the shared database, behind the synchronous {@link CursorStore} seam of
 * `createDelivery`: a cache in this process answers `get` and takes `set` at once, a write-through
 * stores each advance in the `cursors` table asynchronously, and a refresh folds in what other
 * processes stored, so a subscriber reconnecting to another process resumes from its latest
 * durable Cursor.
 *
 * **When an ACK is durable.** `set` returns before the database has the Cursor. The advance is
 * written by the next write-through, which starts on the next turn of the event loop and takes one
 * statement (several advances made meanwhile share it); {@link PostgresCursorStore.flush} resolves
 * once everything set before the call is committed, and the Authority's `close` flushes. A process
 * that dies before the write commits loses at most those advances: the stored Cursor is then an
 * older one, from which §16's at-least-once replay delivers again (duplicates, never a gap).
 * Another process sees a committed Cursor after its refresh, which the write-through's
 * notification triggers.
 * @module
 */
import { actorKey, type CursorStore } from '@weft/authority'
import type pg from 'pg'

/** The ACK Cursors of a PostgreSQL Authority (`PostgresAuthority.cursorStore`). */
export interface PostgresCursorStore extends CursorStore {
  /**
   * Resolves once every Cursor set before the call is committed in the database.
   * @throws the database's error when the write failed; the advances stay pending and are retried.
   */
  flush(): Promise<void>
}

/** What the Authority drives of its Cursor store. */
export interface CursorCache extends PostgresCursorStore {
  /**
   * Reads the Cursors other processes committed since the last read; {@link apply} merges them.
   * Split in two so the Authority can fold the log between read and merge: a Cursor names an
   * Event committed before it, so a log folded after the read covers every Cursor read.
   */
  read(): Promise<() => void>
  /** Stops retrying failed writes (after the last {@link flush}). */
  stop(): void
}

interface CursorRow {
  readonly subscriber: string
  readonly group_id: string
  readonly sequence: string
}

/** How long a failed write-through waits before it tries again. */
const RETRY_MS = 1000

/**
 * The Cursor cache over the `cursors` table of schema `s` (a quoted identifier). `channel` is the
 * notification channel of the schema; `onError` hears write-through failures, which are retried.
 */
export function createCursorCache(pool: pg.Pool, s: string, channel: string, onError: (error: unknown) => void): CursorCache {
  const sql = {
    // §16: GREATEST, so a Cursor never moves back whatever order the writes of several processes commit in.
    write: `WITH moved AS (
        INSERT INTO ${s}.cursors AS c (subscriber, group_id, sequence)
        SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
        ON CONFLICT (subscriber, group_id) DO UPDATE SET sequence = GREATEST(c.sequence, EXCLUDED.sequence), xact = pg_current_xact_id()
        WHERE c.sequence < EXCLUDED.sequence
        RETURNING 1)
      SELECT pg_notify($4, 'cursors') FROM (SELECT count(*) AS n FROM moved) m WHERE m.n > 0`,
    // Rows moved by a transaction still running when the last read's snapshot was taken have an xact
    // at or above that snapshot's xmin: reading from there (again) misses none of them.
    since: `SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon,
      coalesce((SELECT json_agg(json_build_object('subscriber', subscriber, 'group_id', group_id, 'sequence', sequence))
        FROM ${s}.cursors WHERE xact >= $1::xid8), '[]') AS rows`,
  }
  /** subscriber key → Group ID → Cursor. */
  const cache = new Map<string, Map<string, number>>()
  /** Advances not yet written: `subscriber\ngroup` → [subscriber, group, sequence]. */
  let pending = new Map<string, [string, string, number]>()
  let writing: Promise<void> | undefined
  let horizon = '0'
  let retry: NodeJS.Timeout | undefined
  let stopped = false

  function merge(subscriber: string, groupId: string, sequence: number): boolean {
    let byGroup = cache.get(subscriber)
    if (byGroup === undefined) cache.set(subscriber, (byGroup = new Map()))
    if ((byGroup.get(groupId) ?? -1) >= sequence) return false
    byGroup.set(groupId, sequence)
    return true
  }

  /** Writes what is pending, one statement; on failure the advances go back to pending. */
  async function write(): Promise<void> {
    const batch = [...pending.values()]
    pending = new Map()
    if (batch.length === 0) return
    try {
      await pool.query(sql.write, [batch.map((b) => b[0]), batch.map((b) => b[1]), batch.map((b) => b[2]), channel])
    } catch (error) {
      for (const [subscriber, groupId, sequence] of batch) {
        const key = `${subscriber}\n${groupId}`
        if ((pending.get(key)?.[2] ?? -1) < sequence) pending.set(key, [subscriber, groupId, sequence])
      }
      throw error
    }
  }

  /** Starts a write-through unless one runs; each one picks up what was set before it started. */
  function schedule(): Promise<void> {
    if (writing !== undefined) return writing
    const run = new Promise<void>((resolve) => setImmediate(resolve)).then(write)
    writing = run
    run.then(
      () => {
        writing = undefined
        // Set while the write ran: the next one starts now.
        if (pending.size > 0) void schedule().catch(onError)
      },
      () => {
        writing = undefined
        // Put back by the failure: tried again after a pause, or by the next flush.
        if (stopped || retry !== undefined) return
        retry = setTimeout(() => ((retry = undefined), void schedule().catch(onError)), RETRY_MS)
        retry.unref()
      },
    )
    return run
  }

  return {
    get: (subscriber, groupId) => cache.get(actorKey(subscriber))?.get(groupId),
    set(subscriber, groupId, sequence) {
      const key = actorKey(subscriber)
      if (!merge(key, groupId, sequence)) return
      pending.set(`${key}\n${groupId}`, [key, groupId, sequence])
      // A write under way takes the rest when it ends; a failed one when its retry comes.
      if (writing === undefined && retry === undefined) void schedule().catch(onError)
    },
    async flush() {
      // One in flight may have started before the latest sets: wait for it, then write the rest.
      if (writing !== undefined) await writing.catch(() => {})
      if (retry !== undefined) {
        clearTimeout(retry)
        retry = undefined
      }
      if (pending.size > 0) await schedule()
    },
    async read() {
      const { rows } = await pool.query<{ horizon: string; rows: CursorRow[] }>(sql.since, [horizon])
      const row = rows[0]!
      return () => {
        for (const r of row.rows) merge(r.subscriber, r.group_id, Number(r.sequence))
        horizon = row.horizon
      }
    },
    stop() {
      stopped = true
      if (retry !== undefined) clearTimeout(retry)
      retry = undefined
    },
  }
}
