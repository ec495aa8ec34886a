/**
 * A Group Authority whose log lives in PostgreSQL and is shared by several Authority processes.
 *
 * Each process keeps the in-memory Authority of `@weft/authority` (the ordinary pipeline: ingress,
 * handlers, reducers) as a cache of the shared log. A Command runs in one database transaction:
 * lock the log, fold in what peers committed since this process last looked, run the pipeline on
 * that current state, write its Events and receipt, commit. The database lock makes the handler's
 * decision and the append one step across processes, as the single-process pipeline makes them
 * one step in memory (§15.3 compare-and-set, §15.2 one order per Group).
 *
 * The common path of a Command costs three round trips: `BEGIN`, the lock and the reads of what
 * peers committed go as one simple-protocol query (its only values are numbers this process keeps),
 * the receipt and its Events as one statement, then `COMMIT`.
 *
 * Every commit notifies the schema's channel (delivered with the commit, never without it). A
 * listening Authority folds what peers committed as soon as it hears of it, so its `onCommit`
 * listeners (delivery, WebSocket subscribers) see every process's Events live, in log order.
 * @module
 */
import type { Receipt, Transport } from '@weft/client'
import {
  createAuthority,
  createMemoryStore,
  type AuditEntry,
  type Authority,
  type AuthorityOptions,
  type AuthorityState,
  type AuthorityStore,
  type BlobStore,
  type AcceptedTransaction as Transaction,
  type SnapshotRecord,
} from '@weft/authority'
import { ProtocolError, UsageError } from '@weft/codec'
import type { Event, GroupSnapshot } from '@weft/spec'
import pg from 'pg'
import { createPostgresBlobStore } from './blobs.js'
import { createCursorCache, type PostgresCursorStore } from './cursors.js'
import { listenForCommits, type Listener } from './listener.js'
import { integerLiteral, lockLog, parseTransactions, provePostgresLog, readTransactions, transactionsAfter, type TransactionRow } from './log.js'
import { ensureSchemaIn, schemaIdentifier } from './schema.js'
import { CONNECT_TIMEOUT_MS, ownPool, postgresStore } from './store.js'

/** Options of {@link createPostgresAuthority}: the Authority's options (without `store`) and where the log is. */
export interface PostgresAuthorityOptions extends Omit<AuthorityOptions, 'store' | 'deferEventSignatures'> {
  /** A `postgres://` connection URL; the package opens (and {@link PostgresAuthority.close} ends) its own pool. */
  readonly url?: string
  /** A pool of the caller's instead of {@link url}; it is left open by `close`. */
  readonly pool?: pg.Pool
  /** The PostgreSQL schema holding the log tables (created when absent). Default `weft`. */
  readonly schema?: string
  /** Transactions read per query while catching up. Default 500. */
  readonly readBatch?: number
  /**
   * Keep a dedicated connection LISTENing on the schema's channel and fold peers' transactions as
   * soon as they commit (see {@link PostgresAuthority.onCommit}). Default `true`; `false` leaves
   * this process's copy as current as its last {@link PostgresAuthority.submit} or
   * {@link PostgresAuthority.catchUp}, and saves the connection.
   */
  readonly listen?: boolean
  /** Hears what happens in the background: a lost notification connection, a failed catch-up or Cursor write (each retried). Default: nothing. */
  readonly log?: (entry: PostgresLogEntry) => void
  /**
   * Prove the log as committed before folding it (`provePostgresLog`): every Event's §6.4
   * signature by this Authority, its place and its Group's contiguity (§15.2). Default `true`; a
   * log that fails is a `LogProofError` and no Authority starts. `false` trusts the database.
   */
  readonly verifyLog?: boolean
}

/** One background happening of a {@link PostgresAuthority}, for the host's log. */
export interface PostgresLogEntry {
  readonly level: 'info' | 'warn'
  /** A short fixed phrase: `listener lost`, `listener reconnected`, `catch-up failed`, `cursor write failed`. */
  readonly msg: string
  /** The error's message, when there is one. */
  readonly detail?: string
}

/**
 * An Authority over a shared PostgreSQL log. The reading members answer from this process's copy
 * of the log: as current as the last notification it folded when listening (normally a few
 * milliseconds behind the database), otherwise as its last {@link submit} or {@link catchUp}. The
 * writing members always decide on the whole log as committed in the database. `onCommit`
 * listeners hear every transaction of the log once, in log order, whichever process accepted it,
 * as this process folds it.
 */
export interface PostgresAuthority extends Pick<Authority, 'group' | 'events' | 'eventPage' | 'history' | 'buildSnapshot' | 'snapshot' | 'organizationEvents' | 'replayState' | 'onCommit'> {
  /**
   * Runs a Command's exact bytes through the full ingress and handler of `@weft/authority`, on the
   * log as committed in the database, and commits its Events and receipt there. A retry of a
   * Command any process accepted answers the original receipt with `duplicate: true` (§15.1).
   * @returns Rejects only with a `ProtocolError`: the Command's refusal, or `INTERNAL_ERROR`
   * (retryable) when the database failed, after which nothing was committed by this call, unless
   * the failure hid a successful commit, which a retry then answers as a duplicate.
   */
  submit(bytes: string | Uint8Array): Promise<Receipt>
  /** Serializes a signed Command to JSON and {@link submit}s it. */
  submitCommand(command: object): Promise<Receipt>
  /** The transport of `@weft/client` over {@link submit}. */
  connect(): Transport
  /**
   * This process's copy of the state: the fold of the log through {@link position}. After a failed
   * commit the copy is rebuilt from the database as a new object, so read the member each time.
   */
  readonly state: AuthorityState
  /** The refusals this process answered, oldest first (each process keeps its own audit record). */
  audit(): readonly AuditEntry[]
  /** The number of the last transaction of the shared log folded into {@link state}. */
  readonly position: number
  /**
   * Folds every transaction (and compaction) peers committed since {@link position}, after reading
   * the ACK Cursors they stored; resolves to how many transactions there were.
   */
  catchUp(): Promise<number>
  /**
   * Compacts a Group's online log behind a Signed Group Snapshot (§7.4, §16), for every process:
   * under the log lock, the snapshot is verified as `Authority.compact` verifies it, on the log as
   * committed, and recorded in the `snapshots` table. Peers apply it through their own `compact`
   * (which verifies it again) when they fold past the position it was made at; a restart does too.
   * The Events stay in the database (§7.4 retained history); replay from below the snapshot
   * answers `CURSOR_TOO_OLD` with its reference.
   * @throws ProtocolError as `Authority.compact` does, or `INTERNAL_ERROR` (retryable) when the database failed.
   */
  compact(groupId: string, snapshot: GroupSnapshot | string): Promise<SnapshotRecord>
  /**
   * ACK Cursors in the shared database, for `createDelivery(authority, { cursorStore })`: see
   * {@link PostgresCursorStore} for when an ACK is durable. Cursors other processes store are
   * merged in on each catch-up.
   */
  readonly cursorStore: PostgresCursorStore
  /** Artifact bytes by content hash in the shared database (§13.1), checked on every read. */
  readonly blobStore: BlobStore
  /**
   * Stops listening, waits for the Commands under way (each one commits or fails as usual), writes
   * the pending ACK Cursors, then ends the pool when this Authority opened it. Closing twice is harmless.
   * @throws the database's error when the last Cursor advances could not be written; the pool is ended all the same.
   */
  close(): Promise<void>
}

/**
 * Opens the Authority log in schema `options.schema` of the database at `options.url` (or in
 * `options.pool`), creating its tables when absent, and folds the whole log into a fresh
 * in-memory Authority. Several processes (or several instances in one process) may open the same
 * database and schema and accept Commands for the same Groups at the same time.
 *
 * @example
 * ```ts
 * const authority = await createPostgresAuthority({ url: process.env.DATABASE_URL, registry, keys })
 * const receipt = await authority.submit(signedCommandText)
 * await authority.catchUp() // see what other processes accepted
 * await authority.close()
 * ```
 * @throws UsageError on bad options; the database's error when it cannot be reached.
 */
export async function createPostgresAuthority(options: PostgresAuthorityOptions): Promise<PostgresAuthority> {
  const { url, pool: given, schema = 'weft', readBatch = 500, listen = true, log = () => {}, verifyLog = true, ...authorityOptions } = options
  const s = schemaIdentifier(schema)
  if ((url === undefined) === (given === undefined)) throw new UsageError('createPostgresAuthority needs exactly one of url and pool')
  if (!Number.isSafeInteger(readBatch) || readBatch < 1) throw new UsageError(`readBatch must be a positive integer, got ${String(readBatch)}`)
  // Writer, catch-up reads, Cursor writes and blob reads; the listener has a connection of its own.
  const pool = given ?? ownPool(url, 4)
  // The channel is named after the schema: every process of one log, and only those, hear its commits.
  const channel = schema
  const sql = {
    lock: lockLog(s),
    snapshots: (after: number) => `SELECT id, at_txn, group_id, snapshot_hash, compacted_at, body FROM ${s}.snapshots WHERE id > ${integerLiteral(after)} ORDER BY id`,
    snapshot: `WITH n AS (INSERT INTO ${s}.snapshots (id, at_txn, group_id, through_sequence, snapshot_hash, compacted_at, body) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id)
      SELECT pg_notify($8, 'snapshot') FROM n`,
  }
  // The log as a store: each accepted transaction is appended through it, on the locked connection.
  const logStore = postgresStore(pool, schema)
  const warn = (msg: string, error: unknown): void => log({ level: 'warn', msg, detail: error instanceof Error ? error.message : String(error) })

  let local: Local
  const listeners = new Set<(events: readonly Event[]) => void>()
  let closed = false

  function freshLocal(): Local {
    const memory = createMemoryStore()
    const box: Local = { authority: undefined as unknown as Authority, position: 0, captured: undefined, capturing: false, snapshotsRead: 0, compactions: [], compactedAt: undefined }
    const store: AuthorityStore = {
      ...memory,
      appendTransaction(events, receipt) {
        memory.appendTransaction(events, receipt)
        if (box.capturing) box.captured = { events, receipt }
      },
      compact(groupId, throughSequence, record) {
        // A peer's compaction keeps the time it was made at, so every process serves the same record.
        memory.compact!(groupId, throughSequence, box.compactedAt === undefined ? record : Object.freeze({ ...record, compactedAt: box.compactedAt }))
      },
    }
    box.authority = createAuthority({ ...authorityOptions, store })
    return box
  }

  /** The last transaction the listeners heard: a rebuild folds the log again without repeating it to them. */
  let announcedThrough = 0

  /**
   * Reads with `client` what {@link fold} folds first: the compactions after the last one read,
   * then the first `readBatch` transactions after the local position, in one simple-protocol
   * query after the statements of `prefix` (whose results come back as `prefixed`). Compactions
   * are read first: each was committed after the transaction it was made at, so the transactions
   * read next reach it. In PostgreSQL's default READ COMMITTED each statement of the query sees
   * what was committed before it started, so reads placed after the lock see every commit made
   * before it was granted.
   */
  async function readAhead(client: pg.PoolClient | pg.Pool, prefix: readonly string[] = []): Promise<Ahead> {
    const statements = [...prefix, sql.snapshots(local.snapshotsRead), transactionsAfter(s, local.position, readBatch)]
    // Without values the query goes by the simple protocol, which answers one result per statement.
    const results = (await client.query(statements.join(';\n'))) as unknown as pg.QueryResult[]
    if (!Array.isArray(results) || results.length !== statements.length) throw new Error(`expected ${statements.length} results from the log reads`)
    return { prefixed: results.slice(0, prefix.length), made: results[prefix.length]!.rows as SnapshotRow[], page: results[prefix.length + 1]!.rows as TransactionRow[] }
  }

  /**
   * Folds the compactions and transactions after the local position: those of `ahead` when given
   * (read by {@link readAhead} at this position), else read with `client`; further pages of
   * `readBatch` transactions are read with `client` until one comes back short. A compaction is
   * applied right after the transaction it was made at, as it was made.
   */
  async function fold(client: pg.PoolClient | pg.Pool, ahead?: Ahead): Promise<number> {
    const { made, page } = ahead ?? (await readAhead(client))
    for (const row of made) {
      local.compactions.push(row)
      local.snapshotsRead = Number(row.id)
    }
    applyCompactions()
    let count = 0
    for (let rows = parseTransactions(page); ; rows = await readTransactions(client, s, local.position, readBatch)) {
      for (const { txn, events, receipt } of rows) {
        local.authority.ingest([{ events, receipt }])
        local.position = txn
        if (local.position > announcedThrough) {
          announcedThrough = local.position
          announce(events)
        }
        count++
        applyCompactions()
      }
      if (rows.length < readBatch) return count
    }
  }

  /** Applies the compactions made at or before the local position, each verified by the local `compact`. */
  function applyCompactions(): void {
    while (local.compactions.length > 0 && Number(local.compactions[0]!.at_txn) <= local.position) {
      const row = local.compactions.shift()!
      local.compactedAt = row.compacted_at
      let record: SnapshotRecord
      try {
        record = local.authority.compact(row.group_id, row.body)
      } catch (error) {
        throw new UsageError(`compaction ${row.id} of Group ${row.group_id} in the database does not verify here: ${(error as Error).message}`)
      } finally {
        local.compactedAt = undefined
      }
      if (record.snapshotHash !== row.snapshot_hash)
        throw new UsageError(`compaction ${row.id} of Group ${row.group_id}: the snapshot hashes to ${record.snapshotHash}, the database says ${row.snapshot_hash}`)
    }
  }

  function announce(events: readonly Event[]): void {
    for (const listener of listeners) {
      try {
        listener(events)
      } catch {
        // A subscriber's failure is its own; the transaction is committed and stays so.
      }
    }
  }

  /**
   * Drops the local copy and folds the database again: the copy must never hold what the database
   * does not. When the database fails meanwhile, the copy is a prefix of the log, which the next
   * Command or catch-up continues.
   */
  async function rebuild(client: pg.PoolClient): Promise<void> {
    local = freshLocal()
    await fold(client).catch(() => {})
  }

  // One Command at a time per process, as in the in-memory pipeline; the database lock orders processes.
  let tail: Promise<unknown> = Promise.resolve()
  function exclusive<T>(run: () => Promise<T>, afterClose = false): Promise<T> {
    const next = tail.then(() => {
      if (closed && !afterClose) throw new UsageError('the PostgreSQL Authority is closed')
      return run()
    })
    tail = next.catch(() => {})
    return next
  }

  /**
   * One writing step on the whole log: lock it, fold what peers committed, let `decide` change the
   * local copy, then write what it returns and commit. `decide` returns no write when nothing is to
   * be committed (a duplicate). A refusal (a `ProtocolError` of `decide`) changes nothing; a
   * database failure after `decide` changed the local copy rebuilds the copy from the database.
   */
  function locked<T>(decide: () => Promise<{ value: T; write?: (client: pg.PoolClient) => Promise<void>; committed?: () => void }>): Promise<T> {
    return exclusive(async () => {
      const client = await pool.connect().catch((error: unknown) => Promise.reject(unavailable(error)))
      let open = false
      let broken: unknown
      try {
        // Set first: a failure anywhere in the first query may leave the transaction open, and a
        // ROLLBACK outside one is harmless.
        open = true
        // One round trip: begin, lock the log, read what peers committed while it was unlocked.
        const ahead = await readAhead(client, ['BEGIN', sql.lock])
        // Without its one row nothing would be locked, and writers would no longer take turns.
        if (ahead.prefixed[1]?.rowCount !== 1) throw new Error(`the log lock row of ${s} is missing`)
        await fold(client, ahead)
        const { value, write, committed } = await decide()
        if (write === undefined) {
          await client.query('ROLLBACK')
          open = false
          return value
        }
        try {
          await write(client)
          open = false
          await client.query('COMMIT')
        } catch (error) {
          // The local copy holds a change the database may not: end the transaction (releasing
          // the log lock), then fold the database again. A COMMIT that failed has ended it already.
          open = false
          await client.query('ROLLBACK').catch((failure: unknown) => (broken = failure))
          await rebuild(client)
          throw unavailable(error)
        }
        committed?.()
        return value
      } catch (error) {
        if (open) await client.query('ROLLBACK').catch((failure: unknown) => (broken = failure))
        throw error instanceof ProtocolError ? error : unavailable(error)
      } finally {
        client.release(broken instanceof Error ? broken : undefined)
      }
    })
  }

  function submit(bytes: string | Uint8Array): Promise<Receipt> {
    return locked(async () => {
      local.capturing = true
      let receipt: Receipt
      try {
        receipt = await local.authority.submit(bytes)
      } finally {
        local.capturing = false
      }
      const accepted = local.captured
      local.captured = undefined
      // A duplicate: nothing to write.
      if (accepted === undefined) return { value: receipt }
      const txn = local.position + 1
      return {
        value: receipt,
        // The store on the locked connection, at the head this step folded to: one statement, transaction `txn`.
        write: (client) => logStore.within(client, txn - 1).appendTransaction(accepted.events, accepted.receipt),
        committed() {
          local.position = txn
          announcedThrough = txn
          announce(accepted.events)
        },
      }
    })
  }

  function compact(groupId: string, snapshot: GroupSnapshot | string): Promise<SnapshotRecord> {
    return locked(async () => {
      // Verified on the log as committed; a refusal throws before the local copy changes.
      const record = local.authority.compact(groupId, snapshot)
      const id = local.snapshotsRead + 1
      const values = [id, local.position, groupId, record.throughSequence, record.snapshotHash, record.compactedAt, JSON.stringify(record.snapshot), channel]
      return {
        value: record,
        write: async (client) => void (await client.query(sql.snapshot, values)),
        committed: () => void (local.snapshotsRead = id),
      }
    })
  }

  const cursors = createCursorCache(pool, s, channel, (error) => warn('cursor write failed', error))

  /** Reads the Cursors peers stored, folds the log, then merges the Cursors (each names an Event the fold now holds). */
  async function catchUp(): Promise<number> {
    const merge = await cursors.read()
    const count = await fold(pool)
    merge()
    return count
  }

  // Notifications coalesce: one catch-up at a time, and one more if any arrived while it ran.
  let waking = false
  let wokenAgain = false
  let retry: NodeJS.Timeout | undefined
  function wake(): void {
    if (closed) return
    if (waking) {
      wokenAgain = true
      return
    }
    waking = true
    void (async () => {
      do {
        wokenAgain = false
        await exclusive(catchUp)
      } while (wokenAgain && !closed)
    })()
      .catch((error: unknown) => {
        if (closed) return
        warn('catch-up failed', error)
        // Tried again after a pause: a notification may not come for a while.
        retry ??= setTimeout(() => ((retry = undefined), wake()), CATCH_UP_RETRY_MS)
        retry.unref()
      })
      .finally(() => (waking = false))
  }

  let listener: Listener | undefined
  try {
    await ensureSchemaIn(pool, schema)
    // §6.4, §15.2: nothing of the stored log is folded or built on before it is proved.
    if (verifyLog) await provePostgresLog({ pool, schema, registry: authorityOptions.registry, authority: authorityOptions.keys.authority })
    local = freshLocal()
    await catchUp()
    if (listen) {
      let lost = false
      listener = await listenForCommits({
        config: given === undefined ? { connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS } : given.options,
        channel: s,
        onNotification(payload) {
          // This process's own commit, or one a catch-up already folded: nothing to look at.
          if (/^\d+$/.test(payload) && Number(payload) <= local.position) return
          wake()
        },
        onListening() {
          if (lost) log({ level: 'info', msg: 'listener reconnected' })
          lost = false
          // Whatever was notified before this LISTEN (at start, or while the connection was down) is folded now.
          wake()
        },
        onLost(error) {
          lost = true
          warn('listener lost', error)
        },
      })
    }
  } catch (error) {
    if (given === undefined) await pool.end().catch(() => {})
    throw error
  }

  let closing: Promise<void> | undefined
  const authority: PostgresAuthority = {
    submit,
    submitCommand: (command) => submit(JSON.stringify(command)),
    connect: () => ({ submit: (_command, bytes) => submit(bytes) }),
    get state() {
      return local.authority.state
    },
    get position() {
      return local.position
    },
    group: (groupId) => local.authority.group(groupId),
    events: (groupId, afterSequence) => local.authority.events(groupId, afterSequence),
    eventPage: (groupId, afterSequence, limit) => local.authority.eventPage(groupId, afterSequence, limit),
    history: (groupId, afterSequence, limit) => local.authority.history(groupId, afterSequence, limit),
    buildSnapshot: (groupId, through, options) => local.authority.buildSnapshot(groupId, through, options),
    snapshot: (groupId) => local.authority.snapshot(groupId),
    organizationEvents: () => local.authority.organizationEvents(),
    replayState: () => local.authority.replayState(),
    audit: () => local.authority.audit(),
    onCommit(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    catchUp: () => exclusive(catchUp),
    compact,
    cursorStore: { get: cursors.get, set: cursors.set, flush: cursors.flush },
    blobStore: createPostgresBlobStore(pool, s),
    close() {
      closing ??= (async () => {
        await listener?.close()
        if (retry !== undefined) clearTimeout(retry)
        // Queued behind the Commands under way, which commit (or fail) first.
        await exclusive(async () => void (closed = true), true)
        try {
          await cursors.flush()
        } finally {
          cursors.stop()
          if (given === undefined) await pool.end()
        }
      })()
      return closing
    },
  }
  return Object.freeze(authority)
}

/** The local pipeline, its position in the shared log, and what it appended during the running step. */
interface Local {
  authority: Authority
  /** The number of the last transaction folded. */
  position: number
  captured: Transaction | undefined
  capturing: boolean
  /** The number of the last compaction read, and those read but not yet applied (their transaction is ahead). */
  snapshotsRead: number
  compactions: SnapshotRow[]
  /** While a peer's compaction is applied: the time it was made at. */
  compactedAt: string | undefined
}

/** What {@link readAhead} read: the results of its prefix statements, compactions, and the first page of transactions. */
interface Ahead {
  readonly prefixed: readonly pg.QueryResult[]
  readonly made: readonly SnapshotRow[]
  readonly page: readonly TransactionRow[]
}

interface SnapshotRow {
  readonly id: string
  readonly at_txn: string
  readonly group_id: string
  readonly snapshot_hash: string
  readonly compacted_at: string
  readonly body: string
}

/** How long a failed background catch-up waits before it tries again. */
const CATCH_UP_RETRY_MS = 1000

/** The database failed: the Command may be resent as is (§19 `INTERNAL_ERROR` is retryable). */
function unavailable(cause: unknown): ProtocolError {
  return new ProtocolError('INTERNAL_ERROR', 'the Authority log could not be written; nothing was accepted', { retryable: true, cause })
}
