/**
 * The shared PostgreSQL log as an {@link AsyncAuthorityStore} of `@weft/authority`: the same
 * tables, the same append statement and the same readers the PostgreSQL Authority uses, behind
 * the asynchronous face of the store seam. `createPostgresAuthority` appends through
 * {@link PostgresAuthorityStore.within} inside its locked transaction; a tool that copies, checks
 * or serves a log reads and appends through the store itself.
 * @module
 */
import type { AsyncAuthorityStore, StoredReceipt } from '@weft/authority'
import { UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import pg from 'pg'
import { appendTransaction, eventRows, lockLog, parseEvent, parseTransactions, selectTransactions, type TransactionRow } from './log.js'
import { ensureSchemaIn, schemaIdentifier, type Queryable } from './schema.js'

/** Where {@link createPostgresAuthorityStore} keeps the log. */
export interface PostgresAuthorityStoreOptions {
  /** A `postgres://` connection URL; the store opens (and {@link PostgresAuthorityStore.close} ends) its own pool. */
  readonly url?: string
  /** A pool of the caller's instead of {@link url}; it is left open by `close`. */
  readonly pool?: pg.Pool
  /** The PostgreSQL schema holding the log tables (created when absent). Default `weft`. */
  readonly schema?: string
}

/**
 * An {@link AsyncAuthorityStore} over the log tables of one PostgreSQL schema. Its
 * `appendTransaction` is one database transaction of three round trips: `BEGIN`, the log lock and
 * the log head as one query; the receipt, its Events and the commit notification as one statement
 * (the one the PostgreSQL Authority appends with, so its processes hear the commit); `COMMIT`. The
 * database's constraints refuse a sequence gap, a fork or a reused receipt key (§15.1, §15.2): the
 * append then rejects with the database's error and nothing of it is written. Readers hand out
 * deep-frozen Events (§4.6); `groupEvents` starts after a Group's latest compaction recorded in the
 * schema (§7.4, §16), and `allEvents` streams the retained history in pages.
 */
export interface PostgresAuthorityStore extends AsyncAuthorityStore {
  /** The schema name the store reads and writes. */
  readonly schema: string
  /**
   * The store on `client`, inside a transaction of the caller's that holds the log lock and has
   * read the log head `head` (the number of the last committed transaction): its readers query
   * `client`, and its `appendTransaction` sends only the append statement, as transaction
   * `head + 1` (then `head + 2`, …), leaving `COMMIT` or `ROLLBACK` to the caller.
   * @throws UsageError when `head` is not a non-negative safe integer.
   */
  within(client: Queryable, head: number): AsyncAuthorityStore
  /** Ends the pool when the store opened it from a URL; a given pool is left open. Closing twice is harmless. */
  close(): Promise<void>
}

/** How long opening a connection may take before it counts as failed. */
export const CONNECT_TIMEOUT_MS = 10_000

/** A pool of this package's own on `url`, with at most `max` connections, whose idle-connection errors end nothing. */
export function ownPool(url: string | undefined, max?: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, ...(max === undefined ? {} : { max }) })
  // An idle connection the server drops is replaced on the next checkout; it must not end the process.
  pool.on('error', () => {})
  return pool
}

/**
 * Opens the Authority log in schema `options.schema` of the database at `options.url` (or in
 * `options.pool`) as an {@link AsyncAuthorityStore}, creating its tables when absent.
 * @example
 * ```ts
 * import { createPostgresAuthorityStore } from '@weft/store-postgres'
 *
 * const store = await createPostgresAuthorityStore({ url: 'postgres://localhost/weft', schema: 'weft' })
 * for await (const event of store.allEvents()) console.log(event.kind, event.groupId, event.sequence)
 * await store.close()
 * ```
 * @throws UsageError on bad options; the database's error when it cannot be reached.
 */
export async function createPostgresAuthorityStore(options: PostgresAuthorityStoreOptions): Promise<PostgresAuthorityStore> {
  const { url, pool: given, schema = 'weft' } = options
  schemaIdentifier(schema)
  if ((url === undefined) === (given === undefined)) throw new UsageError('createPostgresAuthorityStore needs exactly one of url and pool')
  const pool = given ?? ownPool(url)
  try {
    await ensureSchemaIn(pool, schema)
  } catch (error) {
    if (given === undefined) await pool.end().catch(() => {})
    throw error
  }
  let closing: Promise<void> | undefined
  return Object.freeze({
    ...postgresStore(pool, schema),
    close: () => (closing ??= given === undefined ? pool.end() : Promise.resolve()),
  })
}

/**
 * The store over the log of `schema` in `pool`, whose tables exist, without `close` (the pool is
 * the caller's): what {@link createPostgresAuthorityStore} opens and the PostgreSQL Authority
 * appends through. Commits notify the channel named after the schema, as the Authority's do.
 */
export function postgresStore(pool: pg.Pool, schema: string): Omit<PostgresAuthorityStore, 'close'> {
  const s = schemaIdentifier(schema)
  const head = `SELECT coalesce(max(txn), 0) AS head FROM ${s}.receipts`
  // Made once: a view `within` a locked transaction is made for every Command the Authority accepts.
  const sql = readerStatements(s)
  return {
    schema,
    ...readers(pool, s, sql),
    async appendTransaction(events, receipt) {
      const client = await pool.connect()
      let open = false
      let broken: unknown
      try {
        // Set first: a failure anywhere in the first query may leave the transaction open, and a
        // ROLLBACK outside one is harmless.
        open = true
        // One round trip, by the simple protocol (no values): begin, lock the log, read its head
        // after the lock was granted, so no other writer's transaction comes between.
        const results = (await client.query([`BEGIN`, lockLog(s), head].join(';\n'))) as unknown as pg.QueryResult<{ head: string }>[]
        if (results[1]?.rowCount !== 1) throw new Error(`the log lock row of ${s} is missing`)
        await appendTransaction(client, s, schema, Number(results[2]!.rows[0]!.head) + 1, { events, receipt })
        // A COMMIT that fails (the deferred check that a receipt holds its Events) has ended the transaction.
        open = false
        await client.query('COMMIT')
      } catch (error) {
        if (open) await client.query('ROLLBACK').catch((failure: unknown) => (broken = failure))
        throw error
      } finally {
        client.release(broken instanceof Error ? broken : undefined)
      }
    },
    within(client, at) {
      if (!Number.isSafeInteger(at) || at < 0) throw new UsageError(`the log head must be a non-negative safe integer, got ${String(at)}`)
      let txn = at
      return {
        ...readers(client, s, sql),
        async appendTransaction(events, receipt) {
          await appendTransaction(client, s, schema, txn + 1, { events, receipt })
          txn++
        },
      }
    },
  }
}

/** The statements of {@link readers} in schema `s` (quoted). */
function readerStatements(s: string) {
  return {
    // The online log starts after the Group's latest compaction (§7.4, §16); LIMIT NULL is no limit.
    group: `SELECT body FROM ${s}.events WHERE group_id = $1
      AND sequence > greatest($2::bigint, coalesce((SELECT max(through_sequence) FROM ${s}.snapshots WHERE group_id = $1), 0))
      ORDER BY sequence LIMIT $3`,
    organization: `SELECT body FROM ${s}.events WHERE group_id IS NULL ORDER BY txn, idx`,
    receipt: selectTransactions(s, 'r.actor_key = $1 AND r.action_id = $2', '1'),
  } as const
}

/** The reading members of the store on `q` (a pool, or a connection inside a transaction) over schema `s` (quoted), with its `sql`. */
function readers(q: Queryable, s: string, sql: ReturnType<typeof readerStatements>): Omit<AsyncAuthorityStore, 'appendTransaction'> {
  const bodies = async (text: string, values: unknown[] = []): Promise<Event[]> => (await q.query<{ body: string }>(text, values)).rows.map((row) => parseEvent(row.body))
  return {
    async groupEvents(groupId, afterSequence = 0, limit = Number.POSITIVE_INFINITY) {
      // Read as the memory store reads them: fractions floored, below 0 as 0, no limit at infinity.
      const after = Math.max(0, Math.floor(afterSequence) || 0)
      const most = Math.max(0, Math.floor(limit) || 0)
      if (after >= Number.MAX_SAFE_INTEGER || most === 0) return []
      return bodies(sql.group, [groupId, after, most === Number.POSITIVE_INFINITY ? null : Math.min(most, Number.MAX_SAFE_INTEGER)])
    },
    organizationEvents: () => bodies(sql.organization),
    async receipt(actorKey, actionId): Promise<StoredReceipt | undefined> {
      const { rows } = await q.query<TransactionRow>(sql.receipt, [actorKey, actionId])
      return parseTransactions(rows)[0]?.receipt
    },
    async *allEvents() {
      for await (const row of eventRows(q, s)) yield parseEvent(row.body)
    },
  }
}
