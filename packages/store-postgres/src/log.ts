/**
 * Reading and appending to the shared log: its transactions in acceptance order, as the Authority
 * folds them and as a reader such as `weft inspect` loads them, and the one statement that appends
 * a transaction.
 * @module
 */
import { actorKey, createLogProver, createMemoryStore, type AcceptedTransaction, type AuthorityStore, type LogProofOptions, type LogProofSummary, type StoredReceipt } from '@weft/authority'
import { UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import { createHash } from 'node:crypto'
import pg from 'pg'
import { hasLog, schemaIdentifier, type Queryable } from './schema.js'

/** One transaction as the reading query returns it. */
export interface TransactionRow {
  readonly txn: string
  readonly body: string
  readonly events: readonly string[]
}

/** One transaction of the log and its number. */
export interface NumberedTransaction extends AcceptedTransaction {
  readonly txn: number
}

/**
 * The decimal text of `n`, checked to be a non-negative safe integer: the only kind of value this
 * package splices into SQL text (a simple-protocol query has no parameters).
 * @throws UsageError for anything else.
 */
export function integerLiteral(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new UsageError(`expected a non-negative safe integer for SQL text, got ${String(n)}`)
  return String(n)
}

/**
 * The query of at most `limit` transactions of schema `s` whose receipt row `r` meets `where`, in
 * log order, each with its Events' texts in order (`where` and `limit` hold placeholders or checked
 * literals only).
 */
export function selectTransactions(s: string, where: string, limit: string): string {
  return `SELECT r.txn, r.body, coalesce(array_agg(e.body ORDER BY e.idx) FILTER (WHERE e.txn IS NOT NULL), '{}') AS events
      FROM ${s}.receipts r LEFT JOIN ${s}.events e ON e.txn = r.txn
      WHERE ${where} GROUP BY r.txn, r.body ORDER BY r.txn LIMIT ${limit}`
}

/**
 * The statement taking the log lock of schema `s` (§15.2: one writer at a time on the shared log,
 * so every Group's next sequence is decided once). It must answer one row: without it nothing is
 * locked and writers would no longer take turns.
 */
export function lockLog(s: string): string {
  return `SELECT id FROM ${s}.log_lock FOR UPDATE`
}

/**
 * The text of {@link readTransactions}'s query with its numbers spliced in (checked by
 * {@link integerLiteral}), to send with other statements in one simple-protocol query; parse its
 * rows with {@link parseTransactions}.
 */
export function transactionsAfter(s: string, after: number, limit: number): string {
  return selectTransactions(s, `r.txn > ${integerLiteral(after)}`, integerLiteral(limit))
}

/**
 * At most `limit` transactions of the log in schema `s` (a quoted identifier) after number
 * `after`, in order, each with its Events parsed deep-frozen and its receipt rebuilt.
 */
export async function readTransactions(client: Queryable, s: string, after: number, limit: number): Promise<NumberedTransaction[]> {
  const { rows } = await client.query<TransactionRow>(selectTransactions(s, 'r.txn > $1', '$2'), [after, limit])
  return parseTransactions(rows)
}

/** The transactions of rows read by {@link readTransactions}'s query: Events parsed deep-frozen, receipts rebuilt. */
export function parseTransactions(rows: readonly TransactionRow[]): NumberedTransaction[] {
  return rows.map((row) => {
    const events = Object.freeze(row.events.map(parseEvent))
    const { acceptedAt, commandHash, ...envelope } = JSON.parse(row.body) as Omit<StoredReceipt, 'events'>
    // The member order of a receipt as the pipeline makes it: envelope, events, acceptedAt, commandHash.
    return { txn: Number(row.txn), events, receipt: { ...envelope, events, acceptedAt, commandHash } as StoredReceipt }
  })
}

/**
 * The statement appending one transaction: its receipt, its Events and the commit notification, in
 * one round trip. The database checks it as it checks separate inserts: the receipt's number
 * continues the log (`receipts_contiguous`), each Event row continues its Group's head and sees
 * the rows inserted before it in the same statement (`events_contiguous`, a per-row BEFORE
 * trigger), each Event references the receipt (checked at the end of the statement, when the
 * receipt row is there) and the receipt holds exactly its Events (`receipts_complete`, at
 * `COMMIT`). One refusal refuses the whole statement: nothing of the transaction stays.
 */
function appendStatement(s: string): { readonly name: string; readonly text: string } {
  // Every Command appends through here: the text and its name are made once per schema.
  const known = appendStatements.get(s)
  if (known !== undefined) return known
  // The Events take the receipt's number from its insert, so they are written only with it. The
  // notification rides in the transaction: PostgreSQL delivers it at COMMIT, and never without it.
  const text = `WITH r AS (
      INSERT INTO ${s}.receipts (actor_key, action_id, txn, event_count, body) VALUES ($1, $2, $3, $4, $5) RETURNING txn
    ), e AS (
      INSERT INTO ${s}.events (txn, idx, group_id, sequence, event_id, kind, body)
      SELECT r.txn, t.i - 1, t.g, t.q, t.e, t.k, t.b
      FROM r, unnest($6::text[], $7::bigint[], $8::text[], $9::text[], $10::text[]) WITH ORDINALITY AS t(g, q, e, k, b, i)
      ORDER BY t.i
    )
    SELECT pg_notify($11, r.txn::text) FROM r`
  // Named after its text, so each connection parses and plans it once (the statement is the hot
  // path of every Command), and two schemas' statements never share a name.
  const statement = Object.freeze({ name: `weft_append_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`, text })
  appendStatements.set(s, statement)
  return statement
}

/** {@link appendStatement}'s statements by schema identifier. */
const appendStatements = new Map<string, { readonly name: string; readonly text: string }>()

/**
 * Appends `transaction` as number `txn` to the log in schema `s` (a quoted identifier) and
 * notifies `channel`, in one statement, which the database checks as it checks separate inserts.
 * Run it inside the transaction that holds the log lock; it is durable at that `COMMIT`.
 * @throws the database's error when a constraint refuses it; nothing of it is then written.
 */
export async function appendTransaction(client: Queryable, s: string, channel: string, txn: number, { events, receipt }: AcceptedTransaction): Promise<void> {
  const { events: _events, ...body } = receipt
  const values = [
    actorKey(receipt.actor),
    receipt.actionId,
    txn,
    events.length,
    JSON.stringify(body),
    events.map((e) => e.groupId ?? null),
    events.map((e) => e.sequence ?? null),
    events.map((e) => e.eventId),
    events.map((e) => e.kind),
    events.map((e) => JSON.stringify(e)),
    channel,
  ]
  const { name, text } = appendStatement(s)
  await client.query({ name, text, values })
}

/**
 * An Event row's text as the Event, deep-frozen (§4.6): the local log, the reducers, the listeners
 * and a store's readers share one immutable copy.
 */
export function parseEvent(body: string): Event {
  return JSON.parse(body, freezeMember) as Event
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
  return readOnly(source, async (client, s) => {
    const store = createMemoryStore()
    for (let after = 0; ; ) {
      const batch = await readTransactions(client, s, after, 1000)
      for (const { txn, events, receipt } of batch) {
        store.appendTransaction(events, receipt)
        after = txn
      }
      if (batch.length < 1000) return store
    }
  })
}

/**
 * Runs `read` on one connection to `source` (`s` the quoted schema), in one read-only transaction
 * at REPEATABLE READ: one snapshot of the database for the whole read, no transaction half seen,
 * none after the first read, and nothing created.
 * @throws UsageError when the schema holds no log or the options are bad; the database's error when it cannot be reached.
 */
async function readOnly<T>(source: PostgresLogSource, read: (client: pg.PoolClient | pg.Client, s: string) => Promise<T>): Promise<T> {
  const { url, pool, schema = 'weft' } = source
  const s = schemaIdentifier(schema)
  if ((url === undefined) === (pool === undefined)) throw new UsageError('reading the PostgreSQL log needs exactly one of url and pool')
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
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    const result = await read(client, s)
    await client.query('COMMIT')
    return result
  } finally {
    if ('release' in client) client.release()
    else await client.end().catch(() => {})
  }
}

/** What {@link provePostgresLog} reads and whose log it proves. */
export interface PostgresLogProofOptions extends PostgresLogSource, Pick<LogProofOptions, 'registry' | 'authority'> {}

/** One row of the `events` table as {@link eventRows} reads it. */
export interface EventRow {
  readonly txn: string
  readonly idx: number
  readonly group_id: string | null
  readonly sequence: string | null
  readonly body: string
}

/** Event rows read per query by {@link eventRows}. */
const EVENT_PAGE = 1000

/**
 * Every Event row of the log in schema `s`, in acceptance order (transaction, then place in it),
 * read in pages of {@link EVENT_PAGE} after the last row of the page before: a page boundary moves
 * nothing, because the log only grows at its end.
 */
export async function* eventRows(client: Queryable, s: string): AsyncGenerator<EventRow> {
  const page = `SELECT txn, idx, group_id, sequence, body FROM ${s}.events WHERE (txn, idx) > ($1, $2) ORDER BY txn, idx LIMIT ${EVENT_PAGE}`
  for (let after: [string, number] = ['0', -1]; ; ) {
    const { rows } = await client.query<EventRow>(page, after)
    yield* rows
    if (rows.length < EVENT_PAGE) return
    const last = rows.at(-1)!
    after = [last.txn, last.idx]
  }
}

/**
 * Proves the shared log as committed (`src/log/log-proof.ts` of `@weft/authority`, §6.4, §15.2), reading
 * only: every Event, in acceptance order (transaction, then place in it), passes the six §6.4
 * stages under the Authority's key in `registry`, names `authority` as `acceptedBy`, sits at the
 * Group and sequence of its row and continues its Group without a gap, and is not a redaction
 * tombstone. The database keeps no state checkpoint, so every signature is checked. What
 * PostgreSQL committed is durable by its own log; a lost tail is the database's to prevent.
 * @throws LogProofError naming the Group, the sequence and the failed check; UsageError or the
 * database's error as {@link readPostgresLog}.
 */
export async function provePostgresLog(options: PostgresLogProofOptions): Promise<LogProofSummary> {
  return readOnly(options, async (client, s) => {
    const prover = createLogProver({ registry: options.registry, authority: options.authority })
    for await (const row of eventRows(client, s)) prover.add({ text: row.body, groupId: row.group_id, sequence: row.sequence === null ? null : Number(row.sequence) })
    return prover.finish()
  })
}
