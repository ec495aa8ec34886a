/**
 * Reading the shared log: its transactions in acceptance order, as the Authority folds them and as
 * a reader such as `weft inspect` loads them, without writing or creating anything.
 * @module
 */
import { createMemoryStore, type AcceptedTransaction, type AuthorityStore, type StoredReceipt } from '@weft/authority'
import { UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import pg from 'pg'
import { hasLog, schemaIdentifier, type Queryable } from './schema.js'


interface ReceiptRow {
  readonly txn: string
  readonly body: string
  readonly events: readonly string[]
}

/** One transaction of the log and its number. */
export interface NumberedTransaction extends AcceptedTransaction {
  readonly txn: number
}

/**
 * At most `limit` transactions of the log in schema `s` (a quoted identifier) after number
 * `after`, in order, each with its Events parsed deep-frozen and its receipt rebuilt.
 */
export async function readTransactions(client: Queryable, s: string, after: number, limit: number): Promise<NumberedTransaction[]> {
  const { rows } = await client.query<ReceiptRow>(
    `SELECT r.txn, r.body, coalesce(array_agg(e.body ORDER BY e.idx) FILTER (WHERE e.txn IS NOT NULL), '{}') AS events
      FROM ${s}.receipts r LEFT JOIN ${s}.events e ON e.txn = r.txn
      WHERE r.txn > $1 GROUP BY r.txn, r.body ORDER BY r.txn LIMIT $2`,
    [after, limit],
  )
  return rows.map((row) => {
    // §4.6: parsed deep-frozen, so the local log, the reducers and the listeners share one immutable copy.
    const events = Object.freeze(row.events.map((body) => JSON.parse(body, freezeMember) as Event))
    const { acceptedAt, commandHash, ...envelope } = JSON.parse(row.body) as Omit<StoredReceipt, 'events'>
    // The member order of a receipt as the pipeline makes it: envelope, events, acceptedAt, commandHash.
    return { txn: Number(row.txn), events, receipt: { ...envelope, events, acceptedAt, commandHash } as StoredReceipt }
  })
}

/** A `JSON.parse` reviver that freezes every object and array once its members are parsed. */
function freezeMember(_key: string, value: unknown): unknown {
  return typeof value === 'object' && value !== null ? Object.freeze(value) : value
}

/** Where {@link readPostgresLog} reads. */
export interface PostgresLogSource {
  /** A `postgres://` connection URL; a connection is opened for the read and closed after it. */
  readonly url?: string
  /** A pool of the caller's instead of {@link url}; it is left open. */
  readonly pool?: pg.Pool
  /** The schema holding the log. Default `weft`. */
  readonly schema?: string
}

/**
 * Loads the whole shared log as committed into an in-memory {@link AuthorityStore}, reading only:
 * nothing is created in the database. Fold it with `restoreState` of `@weft/authority` to see the
 * state every Authority process of the log has. Compactions are not applied: the store's online
 * log is the whole retained history (§7.4).
 * @example
 * ```ts
 * const store = await readPostgresLog({ url: 'postgres://db.internal/weft', schema: 'weft' })
 * const state = restoreState(store, reducers, registry)
 * ```
 * @throws UsageError when the schema holds no log or the options are bad; the database's error when it cannot be reached.
 */
export async function readPostgresLog(source: PostgresLogSource): Promise<AuthorityStore> {
  const { url, pool, schema = 'weft' } = source
  const s = schemaIdentifier(schema)
  if ((url === undefined) === (pool === undefined)) throw new UsageError('readPostgresLog needs exactly one of url and pool')
  // One connection for the whole read, which runs in one transaction.
  let client: pg.PoolClient | pg.Client
  if (pool === undefined) {
    client = new pg.Client({ connectionString: url })
    // A refused connection still emits 'error' on the client; the rejection below reports it.
    client.on('error', () => {})
    await client.connect()
  } else client = await pool.connect()
  try {
    if (!(await hasLog(client, schema))) throw new UsageError(`schema ${schema} holds no Authority log`)
    const store = createMemoryStore()
    // One snapshot of the database for the whole read: no transaction half seen, none after the first read.
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    for (let after = 0; ; ) {
      const batch = await readTransactions(client, s, after, 1000)
      for (const { txn, events, receipt } of batch) {
        store.appendTransaction(events, receipt)
        after = txn
      }
      if (batch.length < 1000) break
    }
    await client.query('COMMIT')
    return store
  } finally {
    if ('release' in client) client.release()
    else await client.end().catch(() => {})
  }
}
