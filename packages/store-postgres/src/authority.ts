/**
 * A Group Authority whose log lives in PostgreSQL and is shared by several Authority processes.
 *
 * Each process keeps the in-memory Authority of `@weft/authority` (the ordinary pipeline: ingress,
 * handlers, reducers) as a cache of the shared log. A Command runs in one database transaction:
 * lock the log, fold in what peers committed since this process last looked, run the pipeline on
 * that current state, write its Events and receipt, commit. The database lock makes the handler's
 * decision and the append one step across processes, as the single-process pipeline makes them
 * one step in memory (§15.3 compare-and-set, §15.2 one order per Group).
 * @module
 */
import type { Receipt, Transport } from '@weft/client'
import {
  actorKey,
  createAuthority,
  createMemoryStore,
  type AuditEntry,
  type Authority,
  type AuthorityOptions,
  type AuthorityState,
  type AuthorityStore,
  type StoredReceipt,
} from '@weft/authority'
import { ProtocolError, UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import pg from 'pg'
import { ensureSchema, schemaIdentifier } from './schema.js'

/** One accepted transaction: what `Authority.ingest` folds in. */
type Transaction = Parameters<Authority['ingest']>[0] extends Iterable<infer T> ? T : never

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
}

/**
 * An Authority over a shared PostgreSQL log. The reading members answer from this process's copy
 * of the log, which is as current as its last {@link submit} or {@link catchUp}; the writing
 * members always decide on the whole log as committed in the database.
 */
export interface PostgresAuthority extends Pick<Authority, 'group' | 'events' | 'eventPage' | 'snapshot' | 'organizationEvents' | 'replayState' | 'onCommit'> {
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
  /** Folds every transaction peers committed since {@link position}; resolves to how many there were. */
  catchUp(): Promise<number>
  /** Waits for the running Command, then ends the pool when this Authority opened it. Closing twice is harmless. */
  close(): Promise<void>
}

interface ReceiptRow {
  readonly txn: string
  readonly body: string
  readonly events: readonly string[]
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
  const { url, pool: given, schema = 'weft', readBatch = 500, ...authorityOptions } = options
  const s = schemaIdentifier(schema)
  if ((url === undefined) === (given === undefined)) throw new UsageError('createPostgresAuthority needs exactly one of url and pool')
  if (!Number.isSafeInteger(readBatch) || readBatch < 1) throw new UsageError(`readBatch must be a positive integer, got ${String(readBatch)}`)
  const pool = given ?? new pg.Pool({ connectionString: url, max: 2 })
  // An idle connection the server drops is replaced on the next checkout; it must not end the process.
  if (given === undefined) pool.on('error', () => {})
  const sql = {
    lock: `SELECT id FROM ${s}.log_lock FOR UPDATE`,
    since: `SELECT r.txn, r.body, coalesce(array_agg(e.body ORDER BY e.idx) FILTER (WHERE e.txn IS NOT NULL), '{}') AS events
      FROM ${s}.receipts r LEFT JOIN ${s}.events e ON e.txn = r.txn
      WHERE r.txn > $1 GROUP BY r.txn, r.body ORDER BY r.txn LIMIT $2`,
    receipt: `INSERT INTO ${s}.receipts (actor_key, action_id, txn, event_count, body) VALUES ($1, $2, $3, $4, $5)`,
    events: `INSERT INTO ${s}.events (txn, idx, group_id, sequence, event_id, kind, body)
      SELECT $1, i - 1, g, q, e, k, b FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS t(g, q, e, k, b, i)`,
  }

  /** The local pipeline and what it appended during the running Command. */
  let local: { authority: Authority; position: number; captured: Transaction | undefined; capturing: boolean }
  const listeners = new Set<(events: readonly Event[]) => void>()
  let closed = false

  function freshLocal(): typeof local {
    const memory = createMemoryStore()
    const box = { authority: undefined as unknown as Authority, position: 0, captured: undefined as Transaction | undefined, capturing: false }
    const store: AuthorityStore = {
      ...memory,
      appendTransaction(events, receipt) {
        memory.appendTransaction(events, receipt)
        if (box.capturing) box.captured = { events, receipt }
      },
    }
    box.authority = createAuthority({ ...authorityOptions, store })
    return box
  }

  /** The last transaction the listeners heard: a rebuild folds the log again without repeating it to them. */
  let announcedThrough = 0

  /** Folds the transactions after the local position, reading with `client`. */
  async function fold(client: pg.PoolClient | pg.Pool): Promise<number> {
    let count = 0
    for (;;) {
      const { rows } = await client.query<ReceiptRow>(sql.since, [local.position, readBatch])
      for (const row of rows) {
        // §4.6: parsed deep-frozen, so the local log, the reducers and the listeners share one immutable copy.
        const events = Object.freeze(row.events.map((body) => JSON.parse(body, freezeMember) as Event))
        const { acceptedAt, commandHash, ...envelope } = JSON.parse(row.body) as Omit<StoredReceipt, 'events'>
        // The member order of a receipt as the pipeline makes it: envelope, events, acceptedAt, commandHash.
        local.authority.ingest([{ events, receipt: { ...envelope, events, acceptedAt, commandHash } as StoredReceipt }])
        local.position = Number(row.txn)
        if (local.position > announcedThrough) {
          announcedThrough = local.position
          announce(events)
        }
        count++
      }
      if (rows.length < readBatch) return count
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

  function submit(bytes: string | Uint8Array): Promise<Receipt> {
    return exclusive(async () => {
      const client = await pool.connect().catch((error: unknown) => Promise.reject(unavailable(error)))
      let open = false
      let broken: unknown
      try {
        await client.query('BEGIN')
        open = true
        // §15.2: one writer at a time on the shared log, so every Group's next sequence is decided once.
        await client.query(sql.lock)
        await fold(client)
        local.capturing = true
        let receipt: Receipt
        try {
          receipt = await local.authority.submit(bytes)
        } finally {
          local.capturing = false
        }
        const accepted = local.captured
        local.captured = undefined
        if (accepted === undefined) {
          // A duplicate: nothing to write.
          await client.query('ROLLBACK')
          open = false
          return receipt
        }
        try {
          await write(client, accepted, local.position + 1)
          open = false
          await client.query('COMMIT')
        } catch (error) {
          // The local copy holds a transaction the database may not: end the transaction (releasing
          // the log lock), then fold the database again. A COMMIT that failed has ended it already.
          open = false
          await client.query('ROLLBACK').catch((failure: unknown) => (broken = failure))
          await rebuild(client)
          throw unavailable(error)
        }
        local.position += 1
        announcedThrough = local.position
        announce(accepted.events)
        return receipt
      } catch (error) {
        if (open) await client.query('ROLLBACK').catch((failure: unknown) => (broken = failure))
        throw error instanceof ProtocolError ? error : unavailable(error)
      } finally {
        client.release(broken instanceof Error ? broken : undefined)
      }
    })
  }

  async function write(client: pg.PoolClient, { events, receipt }: Transaction, txn: number): Promise<void> {
    const { events: _events, ...body } = receipt
    await client.query(sql.receipt, [actorKey(receipt.actor), receipt.actionId, txn, events.length, JSON.stringify(body)])
    if (events.length === 0) return
    await client.query(sql.events, [
      txn,
      events.map((e) => e.groupId ?? null),
      events.map((e) => e.sequence ?? null),
      events.map((e) => e.eventId),
      events.map((e) => e.kind),
      events.map((e) => JSON.stringify(e)),
    ])
  }

  const setup = await pool.connect()
  try {
    await ensureSchema(setup, schema)
  } finally {
    setup.release()
  }
  local = freshLocal()
  await fold(pool)

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
    // The shared log is never compacted (yet), so no Group has a snapshot record.
    snapshot: (groupId) => local.authority.snapshot(groupId),
    organizationEvents: () => local.authority.organizationEvents(),
    replayState: () => local.authority.replayState(),
    audit: () => local.authority.audit(),
    onCommit(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    catchUp: () => exclusive(() => fold(pool)),
    close: () =>
      exclusive(async () => {
        if (closed) return
        closed = true
        if (given === undefined) await pool.end()
      }, true),
  }
  return Object.freeze(authority)
}

/** A `JSON.parse` reviver that freezes every object and array once its members are parsed. */
function freezeMember(_key: string, value: unknown): unknown {
  return typeof value === 'object' && value !== null ? Object.freeze(value) : value
}

/** The database failed: the Command may be resent as is (§19 `INTERNAL_ERROR` is retryable). */
function unavailable(cause: unknown): ProtocolError {
  return new ProtocolError('INTERNAL_ERROR', 'the Authority log could not be written; nothing was accepted', { retryable: true, cause })
}
