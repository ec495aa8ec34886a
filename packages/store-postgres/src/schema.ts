/**
 * The tables of a shared Authority log in one PostgreSQL schema, and the constraints that keep its
 * laws whoever writes: a Group Event's sequence continues its Group's head (§15.2: no gap, no
 * fork), every Event belongs to a receipt and every receipt holds exactly its Events (§15.1: one
 * Command, one atomic transaction), transactions are numbered 1, 2, 3, … in acceptance order, and
 * nothing accepted is ever updated or deleted (§4.6 immutable facts, §7.4 retained history).
 * Beside the log: ACK Cursors that only move forward (§16), Artifact bytes by content hash
 * (§13.1) and the compactions of Group logs behind Signed Group Snapshots (§7.4).
 * @module
 */
import { UsageError } from '@weft/codec'
import type pg from 'pg'

/** A connection or pool to query with. */
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.Client, 'query'>

/** A PostgreSQL schema name this package accepts: lower-case letters, digits and `_`, not starting with a digit. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** The quoted schema name, after checking it (it is spliced into SQL text). */
export function schemaIdentifier(name: string): string {
  if (typeof name !== 'string' || !SCHEMA_NAME.test(name)) throw new UsageError(`schema must match ${String(SCHEMA_NAME)}, got ${String(name)}`)
  return `"${name}"`
}

/** The DDL of the log tables in schema `s` (a quoted identifier). */
export function logSchema(s: string): string {
  return `
CREATE TABLE ${s}.log_lock (
  id boolean PRIMARY KEY DEFAULT true CHECK (id)   -- one row: every writer locks it FOR UPDATE
);
INSERT INTO ${s}.log_lock DEFAULT VALUES;

CREATE TABLE ${s}.receipts (
  actor_key   text    NOT NULL,
  action_id   text    NOT NULL,
  txn         bigint  NOT NULL UNIQUE CHECK (txn >= 1),   -- acceptance order across the whole log
  event_count integer NOT NULL CHECK (event_count >= 0),
  body        text    NOT NULL,                         -- the receipt without its Events, JSON
  PRIMARY KEY (actor_key, action_id)
);

CREATE TABLE ${s}.events (
  txn      bigint  NOT NULL REFERENCES ${s}.receipts (txn),
  idx      integer NOT NULL CHECK (idx >= 0),           -- position inside its transaction
  group_id text,                                        -- NULL for an Organization-scoped Event (§15.2)
  sequence bigint,
  event_id text    NOT NULL UNIQUE,
  kind     text    NOT NULL,
  body     text    NOT NULL,                            -- the Event's exact JSON text, as signed
  PRIMARY KEY (txn, idx),
  UNIQUE (group_id, sequence),
  CHECK ((group_id IS NULL AND sequence IS NULL) OR (group_id IS NOT NULL AND sequence >= 1))
);

CREATE FUNCTION ${s}.receipt_continues() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE head bigint := (SELECT coalesce(max(txn), 0) FROM ${s}.receipts);
BEGIN
  IF NEW.txn <> head + 1 THEN
    RAISE EXCEPTION 'transaction % does not continue the log head %', NEW.txn, head USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER receipts_contiguous BEFORE INSERT ON ${s}.receipts FOR EACH ROW EXECUTE FUNCTION ${s}.receipt_continues();

CREATE FUNCTION ${s}.event_continues() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE head bigint;
BEGIN
  IF NEW.group_id IS NOT NULL THEN
    head := (SELECT coalesce(max(sequence), 0) FROM ${s}.events WHERE group_id = NEW.group_id);
    IF NEW.sequence <> head + 1 THEN
      RAISE EXCEPTION 'Group % sequence % does not continue its head %', NEW.group_id, NEW.sequence, head USING ERRCODE = 'check_violation';
    END IF;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER events_contiguous BEFORE INSERT ON ${s}.events FOR EACH ROW EXECUTE FUNCTION ${s}.event_continues();

-- Checked at COMMIT: a receipt holds exactly its Events, numbered 0 .. event_count - 1.
CREATE FUNCTION ${s}.receipt_complete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE n bigint; top integer;
BEGIN
  SELECT count(*), coalesce(max(idx), -1) INTO n, top FROM ${s}.events WHERE txn = NEW.txn;
  IF n <> NEW.event_count OR top <> NEW.event_count - 1 THEN
    RAISE EXCEPTION 'transaction % holds % Events, its receipt says %', NEW.txn, n, NEW.event_count USING ERRCODE = 'check_violation';
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER receipts_complete AFTER INSERT ON ${s}.receipts DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION ${s}.receipt_complete();

CREATE FUNCTION ${s}.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% of accepted % is refused', TG_OP, TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER events_immutable BEFORE UPDATE OR DELETE ON ${s}.events FOR EACH ROW EXECUTE FUNCTION ${s}.refuse_change();
CREATE TRIGGER events_kept BEFORE TRUNCATE ON ${s}.events FOR EACH STATEMENT EXECUTE FUNCTION ${s}.refuse_change();
CREATE TRIGGER receipts_immutable BEFORE UPDATE OR DELETE ON ${s}.receipts FOR EACH ROW EXECUTE FUNCTION ${s}.refuse_change();
CREATE TRIGGER receipts_kept BEFORE TRUNCATE ON ${s}.receipts FOR EACH STATEMENT EXECUTE FUNCTION ${s}.refuse_change();
`
}

/**
 * The DDL of the tables beside the log in schema `s` (a quoted identifier), which needs the log
 * tables first: ACK Cursors (§16), Artifact bytes by content hash (§13.1) and the compactions of
 * Group logs behind Signed Group Snapshots (§7.4, §16).
 */
export function sharedSchema(s: string): string {
  return `
CREATE TABLE ${s}.cursors (
  subscriber text   NOT NULL,                           -- actorKey of the subscriber: type:id
  group_id   text   NOT NULL,
  sequence   bigint NOT NULL CHECK (sequence >= 0),
  xact       xid8   NOT NULL DEFAULT pg_current_xact_id(), -- the transaction that last moved it: what peers read since
  PRIMARY KEY (subscriber, group_id)
);
CREATE INDEX cursors_xact ON ${s}.cursors (xact);

-- §16: a Cursor only moves forward, whoever writes.
CREATE FUNCTION ${s}.cursor_forward() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.sequence < OLD.sequence THEN
    RAISE EXCEPTION 'the Cursor of % in % would move back from % to %', OLD.subscriber, OLD.group_id, OLD.sequence, NEW.sequence USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER cursors_forward BEFORE UPDATE ON ${s}.cursors FOR EACH ROW EXECUTE FUNCTION ${s}.cursor_forward();

CREATE TABLE ${s}.blobs (
  hash       text  PRIMARY KEY CHECK (hash ~ '^sha256:[0-9a-f]{64}$'),
  media_type text,
  bytes      bytea NOT NULL
);

CREATE TABLE ${s}.snapshots (
  id               bigint PRIMARY KEY CHECK (id >= 1),   -- compactions numbered 1, 2, 3, ... in the order they were made
  at_txn           bigint NOT NULL REFERENCES ${s}.receipts (txn), -- the log position it was made at
  group_id         text   NOT NULL,
  through_sequence bigint NOT NULL CHECK (through_sequence >= 1),
  snapshot_hash    text   NOT NULL,
  compacted_at     text   NOT NULL,
  body             text   NOT NULL,                     -- the Signed Group Snapshot, JSON
  UNIQUE (group_id, through_sequence)
);

-- A compaction continues the numbering, is made at the log head, and moves its Group's compaction
-- point forward within the Group's log.
CREATE FUNCTION ${s}.snapshot_continues() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  last bigint := (SELECT coalesce(max(id), 0) FROM ${s}.snapshots);
  txn_head bigint := (SELECT coalesce(max(txn), 0) FROM ${s}.receipts);
  point bigint := (SELECT coalesce(max(through_sequence), 0) FROM ${s}.snapshots WHERE group_id = NEW.group_id);
  head bigint := (SELECT coalesce(max(sequence), 0) FROM ${s}.events WHERE group_id = NEW.group_id);
BEGIN
  IF NEW.id <> last + 1 OR NEW.at_txn <> txn_head THEN
    RAISE EXCEPTION 'compaction % at transaction % does not continue compaction % at the log head %', NEW.id, NEW.at_txn, last, txn_head USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.through_sequence <= point OR NEW.through_sequence > head THEN
    RAISE EXCEPTION 'Group % cannot be compacted through % (compacted through %, head %)', NEW.group_id, NEW.through_sequence, point, head USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER snapshots_contiguous BEFORE INSERT ON ${s}.snapshots FOR EACH ROW EXECUTE FUNCTION ${s}.snapshot_continues();
CREATE TRIGGER snapshots_immutable BEFORE UPDATE OR DELETE ON ${s}.snapshots FOR EACH ROW EXECUTE FUNCTION ${s}.refuse_change();
CREATE TRIGGER snapshots_kept BEFORE TRUNCATE ON ${s}.snapshots FOR EACH STATEMENT EXECUTE FUNCTION ${s}.refuse_change();
`
}

/** Whether `table` exists in schema `s` (a quoted identifier). */
async function exists(client: Queryable, s: string, table: string): Promise<boolean> {
  const found = await client.query<{ exists: boolean }>('SELECT to_regclass($1) IS NOT NULL AS exists', [`${s}.${table}`])
  return found.rows[0]?.exists === true
}

/**
 * Creates the log tables and the tables beside them in `schema` unless they exist (a schema holding
 * only the log tables gains the others). Several processes may start at once: the checks and the
 * creation run in one transaction under an advisory lock named after the schema.
 */
export async function ensureSchema(client: pg.PoolClient, schema: string): Promise<void> {
  const s = schemaIdentifier(schema)
  await client.query('BEGIN')
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('weft.store-postgres:' || $1))", [schema])
    if (!(await exists(client, s, 'receipts'))) {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`)
      await client.query(logSchema(s))
    }
    if (!(await exists(client, s, 'snapshots'))) await client.query(sharedSchema(s))
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK')
    throw error
  }
}

/** {@link ensureSchema} on a connection of `pool`, released after. */
export async function ensureSchemaIn(pool: pg.Pool, schema: string): Promise<void> {
  const setup = await pool.connect()
  try {
    await ensureSchema(setup, schema)
  } finally {
    setup.release()
  }
}

/**
 * Whether `schema` holds a shared log, checked without creating anything (a reader such as
 * `weft inspect` must never create tables).
 */
export async function hasLog(client: Queryable, schema: string): Promise<boolean> {
  return exists(client, schemaIdentifier(schema), 'receipts')
}
