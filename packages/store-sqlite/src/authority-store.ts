/**
 * The Group Authority's durable store on SQLite: the Event log (Group and Organization Events in
 * one table, in acceptance order), the receipts of accepted Commands, ACK Cursors, Artifact blobs,
 * the snapshot records of compacted Groups and the Authority's state checkpoint, all in one file.
 *
 * The database itself keeps the log's laws, so neither a bug in a caller nor a hand-written
 * `INSERT` can break them: a trigger refuses a Group Event whose sequence is not the Group's
 * head + 1 (§15.2: no gap, no fork), and triggers refuse any `UPDATE` or `DELETE` of an accepted
 * Event or receipt (§4.6 immutable facts; §7.4 history is never silently rewritten). A Group's
 * compaction point only moves forward, never past its head, and its record is never deleted.
 *
 * A position of the retained history (`eventsAfter`, checkpoints) is the Event's `pos`: rows are
 * never deleted and an AUTOINCREMENT key rolled back with its transaction is handed out again, so
 * `pos` counts the Events from 1. A file where it does not (rows written by hand) is read by
 * counting instead.
 *
 * Each Event row also holds its link of its Group's chain (`chainLink` of `@weft/authority`), and
 * each commit's heads go to the head file beside the database (`head-file.ts`): what
 * {@link SqliteAuthorityStore.proveLog} checks the log against before an Authority trusts it.
 * @module
 */
import { actorKey, type ActorRef, type AuthorityStore, type BlobStore, type CursorStore, type LogProofSummary, type SnapshotRecord, type StateCheckpoint, type StoredReceipt } from '@weft/authority'
import { UsageError, type KeyResolver } from '@weft/codec'
import type { Event } from '@weft/spec'
import { BLOB_SCHEMA, createSqliteBlobStore } from './blobs.js'
import { atomically, frozenParse, immutable, openDatabase, window, type Db, type SqliteOptions } from './database.js'
import { openHeadFile } from './head-file.js'
import { createChains, damaged, isDamage, migrateChains, proveSqliteLog, type Chains } from './log-chain.js'

/** Options of {@link openSqliteAuthorityStore}. */
export interface SqliteAuthorityStoreOptions extends SqliteOptions {
  /** Events read per query while {@link AuthorityStore.allEvents} streams the log. Default 1024. */
  readonly readBatch?: number
}

/** The optional members of {@link AuthorityStore} the SQLite store always has: compaction, the retained history by Group, state checkpoints, chain heads. */
type CompactionMember = 'compact' | 'snapshot' | 'groupHistory' | 'eventsAfter' | 'checkpoint' | 'saveCheckpoint' | 'logHeads'

/**
 * An {@link AuthorityStore} in a SQLite file, compaction and state checkpoints included, with the
 * Cursor and blob stores of the same file.
 * One process writes a file at a time; close it before another opens it for writing.
 */
export interface SqliteAuthorityStore extends Omit<AuthorityStore, CompactionMember>, Required<Pick<AuthorityStore, CompactionMember>> {
  /** ACK Cursors (§16) for `createDelivery(authority, { cursorStore })`. */
  readonly cursorStore: CursorStore
  /** Artifact bytes by content hash (§13.1), re-hashed on every read. Group Snapshots are stored here too, under `snapshotArtifactHash`. */
  readonly blobStore: BlobStore
  /**
   * Proves the stored log before an Authority folds it (`src/log/log-proof.ts` of `@weft/authority`):
   * `PRAGMA quick_check`; every Event's chain link, from the start up to the state checkpoint's
   * signed heads; every Event after the checkpoint's §6.4 signature by `options.authority` under
   * `options.registry`, its place and its Group's contiguity (§15.2); and every head the head file
   * remembers as acknowledged. Run it after opening and before `createAuthority`.
   * @throws LogProofError naming the Group, the sequence and the failed check, or the damaged file.
   */
  proveLog(options: { readonly registry: KeyResolver; readonly authority: ActorRef }): LogProofSummary
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
  chain     TEXT,                               -- its link of its chain: chainLink(previous link, body)
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
 * The compaction and checkpoint tables, created in a fresh file and added to a file of an earlier
 * build when it is opened (nothing in them is needed to read the rest).
 */
const COMPACTION_SCHEMA = `
CREATE TABLE IF NOT EXISTS snapshots (
  group_id         TEXT PRIMARY KEY,
  through_sequence INTEGER NOT NULL CHECK (through_sequence >= 1),  -- the compaction point S
  record           TEXT NOT NULL                                    -- the SnapshotRecord, JSON
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS snapshots_within_head BEFORE INSERT ON snapshots
WHEN NEW.through_sequence > coalesce((SELECT max(sequence) FROM events WHERE group_id = NEW.group_id), 0)
BEGIN SELECT RAISE(ABORT, 'a compaction point is beyond its Group head'); END;
CREATE TRIGGER IF NOT EXISTS snapshots_forward BEFORE UPDATE ON snapshots
WHEN NEW.group_id IS NOT OLD.group_id OR NEW.through_sequence <= OLD.through_sequence
  OR NEW.through_sequence > coalesce((SELECT max(sequence) FROM events WHERE group_id = NEW.group_id), 0)
BEGIN SELECT RAISE(ABORT, 'a compaction point only moves forward, up to its Group head'); END;
CREATE TRIGGER IF NOT EXISTS snapshots_kept BEFORE DELETE ON snapshots
BEGIN SELECT RAISE(ABORT, 'snapshot records are kept'); END;

CREATE TABLE IF NOT EXISTS checkpoints (
  id       INTEGER PRIMARY KEY CHECK (id = 1),                      -- one checkpoint, replaced whole
  position INTEGER NOT NULL CHECK (position >= 1),
  manifest TEXT NOT NULL,                                           -- the signed CheckpointManifest, JSON
  image    BLOB NOT NULL
);
CREATE TRIGGER IF NOT EXISTS checkpoints_within_history BEFORE INSERT ON checkpoints
WHEN NEW.position > (SELECT count(*) FROM events)
BEGIN SELECT RAISE(ABORT, 'a checkpoint position is beyond the retained history'); END;
CREATE TRIGGER IF NOT EXISTS checkpoints_within_history_update BEFORE UPDATE ON checkpoints
WHEN NEW.position > (SELECT count(*) FROM events)
BEGIN SELECT RAISE(ABORT, 'a checkpoint position is beyond the retained history'); END;`

/**
 * Opens (creating when absent) a durable Authority store at `path`, or a private in-memory one for
 * `':memory:'`. Hand it to `createAuthority({ store })`: an Authority over a store that already
 * holds a log starts from the fold of that log, or from the file's verified state checkpoint and
 * the Events after it, so after a restart `authority.state` is what it was.
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
  let db: Db
  try {
    db = openDatabase(path, 'authority', options, SCHEMA)
  } catch (error) {
    // A damaged file is not a usage mistake: it says so in one line, as a failed proof does.
    throw isDamage(error) ? damaged(path, error.message, error) : error
  }
  let chains: Chains
  try {
    db.exec(COMPACTION_SCHEMA)
    migrateChains(db, immutable('events', 'accepted Events'))
    chains = createChains(db)
  } catch (error) {
    db.close()
    throw isDamage(error) ? damaged(path, error.message, error) : error
  }
  const heads = path === ':memory:' ? undefined : openHeadFile(path, (options.synchronous ?? 'full') === 'full')
  const sql = statements(db)
  // The compaction point and record of each Group read so far (one writer per file keeps them current).
  const points = new Map<string, number>()
  const records = new Map<string, SnapshotRecord | undefined>()
  const pointOf = (groupId: string): number => {
    let point = points.get(groupId)
    if (point === undefined) points.set(groupId, (point = (sql.point.get(groupId) as number | undefined) ?? 0))
    return point
  }
  const count = (): number => sql.count.get() as number
  // Whether `pos` counts the Events from 1 (see the module notes); appends keep it so.
  const ordinal = (sql.lastPos.get() as number) === count()

  const append = atomically(
    db,
    (events: readonly Event[], receipt: StoredReceipt, key: string, links: (readonly [string, string])[]) => {
      // Inside one write transaction the positions of its Events are consecutive (AUTOINCREMENT,
      // one writer), so the receipt finds them again by the first position and the count.
      let firstPos: number | undefined
      for (const event of events) {
        const text = JSON.stringify(event)
        const chain = chains.next(event.groupId, text, links)
        const { lastInsertRowid } = sql.insertEvent.run(event.groupId ?? null, event.sequence ?? null, event.eventId, event.kind, text, chain)
        firstPos ??= Number(lastInsertRowid)
      }
      sql.insertReceipt.run(key, receipt.actionId, firstPos ?? null, events.length, JSON.stringify(receiptBody(receipt)))
    },
    (events, receipt, key) => `the transaction of ${key} ${receipt.actionId} (${events.length} Events) was refused`,
  )

  const compact = atomically(
    db,
    (groupId: string, throughSequence: number, text: string) => void sql.compact.run(groupId, throughSequence, text),
    (groupId, throughSequence) => `the compaction of Group ${groupId} through ${throughSequence} was refused`,
  )

  function checkpoint(): StateCheckpoint | undefined {
    const row = sql.checkpoint.get() as { manifest: string; image: Buffer } | undefined
    if (row === undefined) return undefined
    // The bytes as a plain Uint8Array (a view of the Buffer better-sqlite3 read), as they were saved.
    const image = new Uint8Array(row.image.buffer, row.image.byteOffset, row.image.byteLength)
    return Object.freeze({ manifest: frozenParse(row.manifest) as StateCheckpoint['manifest'], image })
  }

  return {
    appendTransaction(events, receipt) {
      const links: (readonly [string, string])[] = []
      append(events, receipt, actorKey(receipt.actor), links)
      // Committed: the chains advance, and the heads reached are remembered outside the WAL.
      heads?.record(chains.commit(links), chains.heads)
    },
    groupEvents(groupId, afterSequence = 0, limit = Number.POSITIVE_INFINITY) {
      const [after, most] = window(afterSequence, limit)
      // §16: nothing at or below the compaction point is served, whatever position is asked for.
      return parseAll(sql.groupEvents.all(groupId, Math.max(after, pointOf(groupId)), most) as string[])
    },
    groupHistory(groupId, afterSequence, limit) {
      // §7.4: the retained history, compacted Events included; the compaction point is not applied.
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
    allEvents: () => stream(sql.page, readBatch, 0),
    compact(groupId, throughSequence, record) {
      if (record.groupId !== groupId || record.throughSequence !== throughSequence) throw new Error(`store: the snapshot record is not of Group ${groupId} at ${throughSequence}`)
      if (!Number.isSafeInteger(throughSequence) || throughSequence <= pointOf(groupId)) throw new Error(`store: cannot compact Group ${groupId} through ${throughSequence}`)
      const text = JSON.stringify(record)
      compact(groupId, throughSequence, text)
      // The caches follow once the write committed: a refused compaction leaves them as the file is.
      points.set(groupId, throughSequence)
      records.set(groupId, frozenParse(text) as SnapshotRecord)
    },
    snapshot(groupId) {
      if (!records.has(groupId)) {
        const text = sql.record.get(groupId) as string | undefined
        records.set(groupId, text === undefined ? undefined : (frozenParse(text) as SnapshotRecord))
      }
      return records.get(groupId)
    },
    eventsAfter(position) {
      const after = Math.max(0, Math.floor(position)) || 0
      if (ordinal || after === 0) return stream(sql.page, readBatch, after)
      // Counting instead: the pos of the Event at `after`, or past the end.
      const at = sql.nth.get(after - 1) as number | undefined
      return at === undefined ? [] : stream(sql.page, readBatch, at)
    },
    checkpoint,
    saveCheckpoint: atomically(
      db,
      (checkpoint: StateCheckpoint) => {
        const { position } = checkpoint.manifest
        if (!Number.isSafeInteger(position) || position < 1 || position > count()) throw new Error(`store: a checkpoint at position ${String(position)} is outside the retained history`)
        sql.saveCheckpoint.run(position, JSON.stringify(checkpoint.manifest), checkpoint.image)
      },
      (checkpoint) => `the checkpoint at position ${String(checkpoint.manifest?.position)} was refused`,
    ),
    cursorStore: {
      get: (subscriber, groupId) => sql.cursor.get(actorKey(subscriber), groupId) as number | undefined,
      set(subscriber, groupId, sequence) {
        sql.setCursor.run(actorKey(subscriber), groupId, sequence)
      },
    },
    logHeads: () => chains.heads(),
    blobStore: createSqliteBlobStore(db),
    proveLog: (options) => proveSqliteLog(db, path, checkpoint, heads, options),
    close() {
      heads?.close()
      db.close()
    },
  }
}

interface ReceiptRow {
  readonly first_pos: number | null
  readonly event_count: number
  readonly body: string
}

function statements(db: Db) {
  return {
    insertEvent: db.prepare('INSERT INTO events (group_id, sequence, event_id, kind, body, chain) VALUES (?, ?, ?, ?, ?, ?)'),
    insertReceipt: db.prepare('INSERT INTO receipts (actor_key, action_id, first_pos, event_count, body) VALUES (?, ?, ?, ?, ?)'),
    groupEvents: db.prepare('SELECT body FROM events WHERE group_id = ? AND sequence > ? ORDER BY sequence LIMIT ?').pluck(),
    organizationEvents: db.prepare('SELECT body FROM events WHERE group_id IS NULL ORDER BY pos').pluck(),
    receipt: db.prepare('SELECT first_pos, event_count, body FROM receipts WHERE actor_key = ? AND action_id = ?'),
    range: db.prepare('SELECT body FROM events WHERE pos >= ? ORDER BY pos LIMIT ?').pluck(),
    page: db.prepare('SELECT pos, body FROM events WHERE pos > ? ORDER BY pos LIMIT ?').raw(),
    cursor: db.prepare('SELECT sequence FROM cursors WHERE subscriber = ? AND group_id = ?').pluck(),
    setCursor: db.prepare('INSERT INTO cursors (subscriber, group_id, sequence) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET sequence = excluded.sequence'),
    point: db.prepare('SELECT through_sequence FROM snapshots WHERE group_id = ?').pluck(),
    record: db.prepare('SELECT record FROM snapshots WHERE group_id = ?').pluck(),
    compact: db.prepare(
      'INSERT INTO snapshots (group_id, through_sequence, record) VALUES (?, ?, ?) ON CONFLICT (group_id) DO UPDATE SET through_sequence = excluded.through_sequence, record = excluded.record',
    ),
    count: db.prepare('SELECT count(*) FROM events').pluck(),
    lastPos: db.prepare('SELECT coalesce(max(pos), 0) FROM events').pluck(),
    nth: db.prepare('SELECT pos FROM events ORDER BY pos LIMIT 1 OFFSET ?').pluck(),
    checkpoint: db.prepare('SELECT manifest, image FROM checkpoints WHERE id = 1'),
    saveCheckpoint: db.prepare(
      'INSERT INTO checkpoints (id, position, manifest, image) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET position = excluded.position, manifest = excluded.manifest, image = excluded.image',
    ),
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
 * The log in acceptance order after `pos` `after`, read a batch at a time by position: the
 * connection is free between batches, so a caller may write while it iterates (it then sees what
 * it appended).
 */
function* stream(page: { all(...params: unknown[]): unknown[] }, batch: number, from: number): Generator<Event> {
  let after = from
  for (;;) {
    const rows = page.all(after, batch) as [number, string][]
    for (const [, body] of rows) yield frozenParse(body) as Event
    if (rows.length < batch) return
    after = (rows.at(-1) as [number, string])[0]
  }
}
