/**
 * The Group Authority's durable store on SQLite: the Event log (Group and Organization Events in
 * one table, in acceptance order), the receipts of accepted Commands, ACK Cursors and Artifact
 * blobs, all in one file.
 *
 * The database itself keeps the log's laws, so neither a bug in a caller nor a hand-written
 * `INSERT` can break them: a trigger refuses a Group Event whose sequence is not the Group's
 * head + 1 (§15.2: no gap, no fork), and triggers refuse any `UPDATE` or `DELETE` of an accepted
 * Event or receipt (§4.6 immutable facts; §7.4 history is never silently rewritten).
 * @module
 */
import { actorKey, type AuthorityStore, type BlobStore, type CursorStore, type StoredReceipt } from '@weft/authority'
import { UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import { BLOB_SCHEMA, createSqliteBlobStore } from './blobs.js'
import { atomically, frozenParse, immutable, openDatabase, window, type Db, type SqliteOptions } from './database.js'

/** Options of {@link openSqliteAuthorityStore}. */
export interface SqliteAuthorityStoreOptions extends SqliteOptions {
  /** Events read per query while {@link AuthorityStore.allEvents} streams the log. Default 1024. */
  readonly readBatch?: number
}

/**
 * An {@link AuthorityStore} in a SQLite file, with the Cursor and blob stores of the same file.
 * One process writes a file at a time; close it before another opens it for writing.
 */
export interface SqliteAuthorityStore extends AuthorityStore {
  /** ACK Cursors (§16) for `createDelivery(authority, { cursorStore })`. */
  readonly cursorStore: CursorStore
  /** Artifact bytes by content hash (§13.1), re-hashed on every read. Group Snapshots are stored here too, under `snapshotArtifactHash`. */
  readonly blobStore: BlobStore
  /** Closes the database; every member is unusable afterwards. */
  close(): void
}

const SCHEMA = `
CREATE TABLE events (
  pos       INTEGER PRIMARY KEY AUTOINCREMENT,  -- acceptance order across the whole Authority
  group_id  TEXT,                               -- NULL for an Organization-scoped Event (§15.2)
  sequence  INTEGER,
  event_id  TEXT NOT NULL UNIQUE,
  kind      TEXT NOT NULL,
  body      TEXT NOT NULL,                      -- the Event's exact JSON text
  CHECK ((group_id IS NULL AND sequence IS NULL) OR (group_id IS NOT NULL AND sequence >= 1)),
  UNIQUE (group_id, sequence)
);
CREATE INDEX events_organization ON events (pos) WHERE group_id IS NULL;
CREATE TRIGGER events_contiguous BEFORE INSERT ON events
WHEN NEW.group_id IS NOT NULL AND NEW.sequence IS NOT coalesce((SELECT max(sequence) FROM events WHERE group_id = NEW.group_id), 0) + 1
BEGIN
  SELECT RAISE(ABORT, 'Group ' || NEW.group_id || ' sequence ' || NEW.sequence || ' does not continue its head '
    || coalesce((SELECT max(sequence) FROM events WHERE group_id = NEW.group_id), 0));
END;
${immutable('events', 'accepted Events')}

CREATE TABLE receipts (
  actor_key   TEXT NOT NULL,
  action_id   TEXT NOT NULL,
  first_pos   INTEGER,                          -- the transaction's Events are pos first_pos .. first_pos + event_count - 1
  event_count INTEGER NOT NULL CHECK (event_count >= 0),
  body        TEXT NOT NULL,                    -- the receipt without its Events, JSON
  PRIMARY KEY (actor_key, action_id)
) WITHOUT ROWID;
${immutable('receipts', 'receipts')}

CREATE TABLE cursors (
  subscriber TEXT NOT NULL,
  group_id   TEXT NOT NULL,
  sequence   INTEGER NOT NULL CHECK (sequence >= 0),
  PRIMARY KEY (subscriber, group_id)
) WITHOUT ROWID;
${BLOB_SCHEMA}`

/**
 * Opens (creating when absent) a durable Authority store at `path`, or a private in-memory one for
 * `':memory:'`. Hand it to `createAuthority({ store })`: an Authority over a store that already
 * holds a log starts from the fold of that log, so after a restart `authority.state` is what it was.
 *
 * Durability: the file runs in WAL mode with `synchronous` (default `'full'`, see
 * {@link Synchronous}). With `'full'` an acknowledged receipt survives a process kill and an
 * operating-system crash; subscribers may already hold its Events, and losing them would let the
 * Authority hand their sequences to different Events. `'normal'` survives a process kill only.
 *
 * @example
 * ```ts
 * const store = openSqliteAuthorityStore('authority.db')
 * const authority = createAuthority({ registry, keys, store })
 * const delivery = createDelivery(authority, { cursorStore: store.cursorStore })
 * // ... on shutdown
 * delivery.close()
 * store.close()
 * ```
 * @throws UsageError on a bad path or option, or a file that is not a Weft Authority store.
 */
export function openSqliteAuthorityStore(path: string, options: SqliteAuthorityStoreOptions = {}): SqliteAuthorityStore {
  const readBatch = options.readBatch ?? 1024
  if (!Number.isSafeInteger(readBatch) || readBatch < 1) throw new UsageError(`authority store: readBatch must be a positive integer, got ${String(readBatch)}`)
  const db = openDatabase(path, 'authority', options, SCHEMA)
  const sql = statements(db)

  const append = atomically(
    db,
    (events: readonly Event[], receipt: StoredReceipt, key: string) => {
      // Inside one write transaction the positions of its Events are consecutive (AUTOINCREMENT,
      // one writer), so the receipt finds them again by the first position and the count.
      let firstPos: number | undefined
      for (const event of events) {
        const { lastInsertRowid } = sql.insertEvent.run(event.groupId ?? null, event.sequence ?? null, event.eventId, event.kind, JSON.stringify(event))
        firstPos ??= Number(lastInsertRowid)
      }
      sql.insertReceipt.run(key, receipt.actionId, firstPos ?? null, events.length, JSON.stringify(receiptBody(receipt)))
    },
    (events, receipt, key) => `the transaction of ${key} ${receipt.actionId} (${events.length} Events) was refused`,
  )

  return {
    appendTransaction(events, receipt) {
      append(events, receipt, actorKey(receipt.actor))
    },
    groupEvents(groupId, afterSequence = 0, limit = Number.POSITIVE_INFINITY) {
      return parseAll(sql.groupEvents.all(groupId, ...window(afterSequence, limit)) as string[])
    },
    organizationEvents: () => parseAll(sql.organizationEvents.all() as string[]),
    receipt(key, actionId) {
      const row = sql.receipt.get(key, actionId) as ReceiptRow | undefined
      if (row === undefined) return undefined
      const events = row.event_count === 0 ? [] : parseAll(sql.range.all(row.first_pos, row.event_count) as string[])
      const { acceptedAt, commandHash, ...envelope } = frozenParse(row.body) as Omit<StoredReceipt, 'events'>
      // The member order of a receipt as the Authority makes it: envelope, events, acceptedAt, commandHash.
      return Object.freeze({ ...envelope, events: Object.freeze(events), acceptedAt, commandHash })
    },
    allEvents: () => stream(sql.page, readBatch),
    cursorStore: {
      get: (subscriber, groupId) => sql.cursor.get(actorKey(subscriber), groupId) as number | undefined,
      set(subscriber, groupId, sequence) {
        sql.setCursor.run(actorKey(subscriber), groupId, sequence)
      },
    },
    blobStore: createSqliteBlobStore(db),
    close: () => db.close(),
  }
}

interface ReceiptRow {
  readonly first_pos: number | null
  readonly event_count: number
  readonly body: string
}

function statements(db: Db) {
  return {
    insertEvent: db.prepare('INSERT INTO events (group_id, sequence, event_id, kind, body) VALUES (?, ?, ?, ?, ?)'),
    insertReceipt: db.prepare('INSERT INTO receipts (actor_key, action_id, first_pos, event_count, body) VALUES (?, ?, ?, ?, ?)'),
    groupEvents: db.prepare('SELECT body FROM events WHERE group_id = ? AND sequence > ? ORDER BY sequence LIMIT ?').pluck(),
    organizationEvents: db.prepare('SELECT body FROM events WHERE group_id IS NULL ORDER BY pos').pluck(),
    receipt: db.prepare('SELECT first_pos, event_count, body FROM receipts WHERE actor_key = ? AND action_id = ?'),
    range: db.prepare('SELECT body FROM events WHERE pos >= ? ORDER BY pos LIMIT ?').pluck(),
    page: db.prepare('SELECT pos, body FROM events WHERE pos > ? ORDER BY pos LIMIT ?').raw(),
    cursor: db.prepare('SELECT sequence FROM cursors WHERE subscriber = ? AND group_id = ?').pluck(),
    setCursor: db.prepare('INSERT INTO cursors (subscriber, group_id, sequence) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET sequence = excluded.sequence'),
  }
}

/** A receipt's members except its Events, which the log already holds. */
function receiptBody(receipt: StoredReceipt): Omit<StoredReceipt, 'events'> {
  const { events: _events, ...rest } = receipt
  return rest
}

function parseAll(bodies: readonly string[]): Event[] {
  return bodies.map((body) => frozenParse(body) as Event)
}

/**
 * The whole log in acceptance order, read a batch at a time by position: the connection is free
 * between batches, so a caller may write while it iterates (it then sees what it appended).
 */
function* stream(page: { all(...params: unknown[]): unknown[] }, batch: number): Generator<Event> {
  let after = 0
  for (;;) {
    const rows = page.all(after, batch) as [number, string][]
    for (const [, body] of rows) yield frozenParse(body) as Event
    if (rows.length < batch) return
    after = (rows.at(-1) as [number, string])[0]
  }
}
