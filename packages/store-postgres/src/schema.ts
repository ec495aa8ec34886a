/**
 * The tables of a shared Authority log in one PostgreSQL schema, and the constraints that keep its
 * laws whoever writes: a Group Event's sequence continues its Group's head (§15.2: no gap, no
 * fork), every Event belongs to a receipt and every receipt holds exactly its Events (§15.1: one
 * Command, one atomic transaction), transactions are numbered 1, 2, 3, … in acceptance order, and
 * nothing accepted is ever updated or deleted (§4.6 immutable facts, §7.4 retained history).
 * @module
 */
import { UsageError } from '@weft/codec'
import type { PoolClient } from 'pg'

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
 * Creates the log tables in `schema` unless they exist. Several processes may start at once: the
 * check and the creation run in one transaction under an advisory lock named after the schema.
 */
export async function ensureSchema(client: PoolClient, schema: string): Promise<void> {
  const s = schemaIdentifier(schema)
  await client.query('BEGIN')
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('weft.store-postgres:' || $1))", [schema])
    const found = await client.query<{ exists: boolean }>("SELECT to_regclass($1) IS NOT NULL AS exists", [`${s}.receipts`])
    if (found.rows[0]?.exists !== true) {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`)
      await client.query(logSchema(s))
    }
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK')
    throw error
  }
}
