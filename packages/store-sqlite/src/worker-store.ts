/**
 * A Worker's local state on SQLite (§11.1 durable local projections, §11.5 offline buffer, §16
 * Cursors and side-effect idempotency): what a Worker needs to come back after a crash without
 * repeating a side effect or losing a Command it signed offline.
 *
 * As in the Authority store, the database keeps the log's law itself: a trigger refuses an Event
 * whose sequence is not its Group's cursor + 1, so the stored log is contiguous whatever writes it
 * (§16: a Cursor never advances over a gap).
 * @module
 */
import { UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import type { BufferedCommand, WorkerStore } from '@weft/worker'
import { atomically, openDatabase, window, type Db, type SqliteOptions } from './database.js'

const SCHEMA = `
CREATE TABLE groups (
  ord      INTEGER PRIMARY KEY AUTOINCREMENT,  -- first-seen order
  group_id TEXT NOT NULL UNIQUE,
  base     INTEGER NOT NULL DEFAULT 0 CHECK (base >= 0),  -- the log starts after this sequence (§8 visibility start)
  acked    INTEGER NOT NULL DEFAULT 0 CHECK (acked >= 0)
);
CREATE TABLE events (
  group_id TEXT NOT NULL,
  sequence INTEGER NOT NULL CHECK (sequence >= 1),
  body     TEXT NOT NULL,
  PRIMARY KEY (group_id, sequence)
) WITHOUT ROWID;
CREATE TRIGGER events_contiguous BEFORE INSERT ON events
WHEN NEW.sequence IS NOT coalesce((SELECT max(sequence) FROM events WHERE group_id = NEW.group_id), (SELECT base FROM groups WHERE group_id = NEW.group_id), 0) + 1
BEGIN
  SELECT RAISE(ABORT, 'Group ' || NEW.group_id || ' sequence ' || NEW.sequence || ' does not continue its cursor '
    || coalesce((SELECT max(sequence) FROM events WHERE group_id = NEW.group_id), (SELECT base FROM groups WHERE group_id = NEW.group_id), 0));
END;
CREATE TABLE side_effects (
  key    TEXT PRIMARY KEY,
  result TEXT                                  -- JSON; NULL for an undefined result
) WITHOUT ROWID;
CREATE TABLE checkpoints (
  work_item_id    TEXT PRIMARY KEY,
  ownership_epoch INTEGER NOT NULL,
  state           TEXT
) WITHOUT ROWID;
CREATE TABLE buffered (
  seq            INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, so a seq names one Command for good
  group_id       TEXT NOT NULL,
  work_item_id   TEXT NOT NULL,
  kind           TEXT NOT NULL,
  command        TEXT NOT NULL,
  buffered_at_ms INTEGER NOT NULL
);
`

/**
 * Opens (creating when absent) a durable {@link WorkerStore} at `path`, or a private in-memory one
 * for `':memory:'`. Every method is one SQLite transaction: when it returns, a kill of the process
 * loses nothing it wrote; when it throws, it wrote nothing.
 *
 * Durability: WAL mode with `synchronous` defaulting to `'normal'` (see {@link Synchronous}): a
 * process kill loses nothing; an operating-system crash may lose the latest writes, which the
 * Worker recovers from the Authority (the projection replays, §11.1) and from idempotency keys
 * (a side effect run again under its §16 key is deduplicated by the tool). Pass `'full'` when the
 * side effects are not keyed.
 *
 * @example
 * ```ts
 * const store = openSqliteWorkerStore('worker.db')
 * if (store.sideEffect(key) === undefined) store.recordSideEffect(key, await runTool(key))
 * store.close()
 * ```
 * @throws UsageError on a bad path or option, or a file that is not a Weft Worker store.
 */
export function openSqliteWorkerStore(path: string, options: SqliteOptions = {}): WorkerStore {
  const db = openDatabase(path, 'worker', options, SCHEMA)
  const sql = statements(db)

  const appendEvents = atomically(
    db,
    (groupId: string, events: readonly Event[]) => {
      sql.addGroup.run(groupId)
      for (const event of events) sql.insertEvent.run(groupId, event.sequence, JSON.stringify(event))
    },
    (groupId, events) => `Events ${String(events[0]?.sequence)}..${String(events.at(-1)?.sequence)} of Group ${groupId} do not continue its log`,
  )
  const startAfter = atomically(
    db,
    (groupId: string, sequence: number) => {
      if ((sql.started.get(groupId, groupId) as number | undefined) !== undefined) throw new Error(`store: the log of Group ${groupId} has already started`)
      sql.addGroup.run(groupId)
      sql.setBase.run(sequence, groupId)
    },
    (groupId) => `the start of Group ${groupId} was refused`,
  )
  const recordSideEffect = atomically(
    db,
    (key: string, result: unknown) => void sql.insertSideEffect.run(key, JSON.stringify(result) ?? null),
    (key) => `the side effect ${JSON.stringify(key)} is already recorded`,
  )
  const setAcked = atomically(
    db,
    (groupId: string, sequence: number) => {
      sql.addGroup.run(groupId)
      sql.raiseAck.run(sequence, groupId)
    },
    (groupId) => `the ACK of Group ${groupId} was refused`,
  )
  const dropBuffered = atomically(
    db,
    (seqs: readonly number[]) => {
      for (const seq of seqs) sql.dropBuffered.run(seq)
    },
    () => 'dropping buffered Commands was refused',
  )
  const clearProjectionLog = atomically(
    db,
    () => {
      sql.clearEvents.run()
      // A Group stays known while an ACK of it is stored; the ACK outlives the log it acknowledged.
      sql.forgetUnacked.run()
      sql.resetBases.run()
    },
    () => 'clearing the projection log was refused',
  )

  return {
    appendEvents(groupId, events) {
      if (events.length === 0) return
      const stranger = events.find((e) => e.groupId !== groupId)
      if (stranger !== undefined) throw new Error(`store: Event ${stranger.eventId} of Group ${String(stranger.groupId)} appended to Group ${groupId}`)
      appendEvents(groupId, events)
    },
    cursor: (groupId) => sql.cursor.get(groupId, groupId) as number,
    startAfter(groupId, sequence) {
      if (!Number.isSafeInteger(sequence) || sequence < 0) throw new UsageError(`worker store: a log start is a non-negative integer sequence, got ${String(sequence)}`)
      startAfter(groupId, sequence)
    },
    groups: () => sql.groups.all() as string[],
    events(groupId, afterSequence = 0, limit = Number.POSITIVE_INFINITY) {
      // Each call parses fresh objects no other reader holds, so they are not frozen: a rebuild reads
      // the whole log through here, and freezing would add a quarter to its cost.
      return (sql.events.all(groupId, ...window(afterSequence, limit)) as string[]).map((body) => JSON.parse(body) as Event)
    },
    acked: (groupId) => (sql.acked.get(groupId) as number | undefined) ?? 0,
    setAcked(groupId, sequence) {
      if (!Number.isSafeInteger(sequence) || sequence < 0) throw new UsageError(`worker store: an ACK is a non-negative integer sequence, got ${String(sequence)}`)
      // §16: a Cursor only moves forward; 0 acknowledges nothing.
      if (sequence > 0) setAcked(groupId, sequence)
    },

    sideEffect(key) {
      const row = sql.sideEffect.get(key) as { result: string | null } | undefined
      if (row === undefined) return undefined
      return { result: row.result === null ? undefined : JSON.parse(row.result) }
    },
    recordSideEffect: (key, result) => recordSideEffect(key, result),

    putCheckpoint(workItemId, ownershipEpoch, state) {
      sql.putCheckpoint.run(workItemId, ownershipEpoch, JSON.stringify(state) ?? null)
    },
    checkpoint(workItemId) {
      const row = sql.checkpoint.get(workItemId) as { ownership_epoch: number; state: string | null } | undefined
      if (row === undefined) return undefined
      return { ownershipEpoch: row.ownership_epoch, state: row.state === null ? undefined : JSON.parse(row.state) }
    },

    bufferCommand(entry) {
      const { lastInsertRowid } = sql.buffer.run(entry.groupId, entry.workItemId, entry.kind, entry.command, entry.bufferedAtMs)
      return Object.freeze({ seq: Number(lastInsertRowid), groupId: entry.groupId, workItemId: entry.workItemId, kind: entry.kind, command: entry.command, bufferedAtMs: entry.bufferedAtMs })
    },
    buffered: () => (sql.buffered.all() as BufferedRow[]).map(bufferedOf),
    dropBuffered: (seqs) => dropBuffered(seqs),

    clearProjectionLog: () => clearProjectionLog(),
    close: () => db.close(),
  }
}

interface BufferedRow {
  readonly seq: number
  readonly group_id: string
  readonly work_item_id: string
  readonly kind: string
  readonly command: string
  readonly buffered_at_ms: number
}

function bufferedOf(row: BufferedRow): BufferedCommand {
  return Object.freeze({ seq: row.seq, groupId: row.group_id, workItemId: row.work_item_id, kind: row.kind, command: row.command, bufferedAtMs: row.buffered_at_ms })
}

function statements(db: Db) {
  return {
    addGroup: db.prepare('INSERT INTO groups (group_id) VALUES (?) ON CONFLICT DO NOTHING'),
    insertEvent: db.prepare('INSERT INTO events (group_id, sequence, body) VALUES (?, ?, ?)'),
    cursor: db.prepare('SELECT coalesce((SELECT max(sequence) FROM events WHERE group_id = ?), (SELECT base FROM groups WHERE group_id = ?), 0)').pluck(),
    // A log has started once it has Events or a non-zero base.
    started: db.prepare('SELECT 1 FROM groups WHERE group_id = ? AND (base > 0 OR EXISTS (SELECT 1 FROM events WHERE group_id = ?))').pluck(),
    setBase: db.prepare('UPDATE groups SET base = ? WHERE group_id = ?'),
    resetBases: db.prepare('UPDATE groups SET base = 0'),
    groups: db.prepare('SELECT group_id FROM groups ORDER BY ord').pluck(),
    events: db.prepare('SELECT body FROM events WHERE group_id = ? AND sequence > ? ORDER BY sequence LIMIT ?').pluck(),
    acked: db.prepare('SELECT acked FROM groups WHERE group_id = ?').pluck(),
    raiseAck: db.prepare('UPDATE groups SET acked = max(acked, ?) WHERE group_id = ?'),
    sideEffect: db.prepare('SELECT result FROM side_effects WHERE key = ?'),
    insertSideEffect: db.prepare('INSERT INTO side_effects (key, result) VALUES (?, ?)'),
    putCheckpoint: db.prepare(
      'INSERT INTO checkpoints (work_item_id, ownership_epoch, state) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET ownership_epoch = excluded.ownership_epoch, state = excluded.state',
    ),
    checkpoint: db.prepare('SELECT ownership_epoch, state FROM checkpoints WHERE work_item_id = ?'),
    buffer: db.prepare('INSERT INTO buffered (group_id, work_item_id, kind, command, buffered_at_ms) VALUES (?, ?, ?, ?, ?)'),
    buffered: db.prepare('SELECT seq, group_id, work_item_id, kind, command, buffered_at_ms FROM buffered ORDER BY seq'),
    dropBuffered: db.prepare('DELETE FROM buffered WHERE seq = ?'),
    clearEvents: db.prepare('DELETE FROM events'),
    forgetUnacked: db.prepare('DELETE FROM groups WHERE acked = 0'),
  }
}
