/**
 * What one Command costs the database, counted in queries (each one round trip), and the one
 * statement that appends a transaction: the database still refuses a gap or a fork inside it, and
 * refuses it whole.
 */
import type { AcceptedTransaction, StoredReceipt } from '@weft/authority'
import type { Event } from '@weft/spec'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { signed, agentCard, cast, GROUP } from '@weft/testkit/fixtures'
import { appendTransaction } from '../src/log.js'
import { closeAll, contiguous, freshSchema, logShape, openAuthority, pgUrl, post, rawClient, startedLog, testClock, twoAuthorities } from './pg-world.js'

afterEach(closeAll)

/** Connections opened with this application name have their queries recorded in {@link sent}. */
const app = `weft-rt-${randomBytes(4).toString('hex')}`
const countedUrl = (): string => `${pgUrl()}${pgUrl().includes('?') ? '&' : '?'}application_name=${app}`
const sent: string[] = []
/** The queries sent since the last call, oldest first. */
const take = (): string[] => sent.splice(0)

// Every pool connection is a pg.Client: counting its `query` calls counts the round trips.
const query = pg.Client.prototype.query
beforeAll(() => {
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const params = (this as unknown as { connectionParameters?: { application_name?: string } }).connectionParameters
    if (params?.application_name === app) sent.push(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: unknown }).text))
    return (query as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof query
})
afterAll(() => {
  pg.Client.prototype.query = query
})

describe('round trips of a Command', () => {
  it('are three when accepted (begin, lock and reads; receipt and Events; COMMIT), two for a duplicate or a refusal', async () => {
    const clock = testClock()
    const schema = freshSchema()
    const a = await openAuthority(schema, clock, { url: countedUrl(), listen: false })
    const bytes = signed('ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(cast.worker1) }, cast.controlPlane, {}, clock)
    take()

    const receipt = await a.submit(bytes)
    const accepted = take()
    expect(accepted).toHaveLength(3)
    expect(accepted[0]).toMatch(/^BEGIN;\s*SELECT id FROM "[^"]+"\.log_lock FOR UPDATE;[\s\S]*snapshots[\s\S]*receipts/)
    expect(accepted[1]).toMatch(/^WITH r AS \(\s*INSERT INTO "[^"]+"\.receipts/)
    expect(accepted[2]).toBe('COMMIT')
    expect(a.position).toBe(1)

    expect(await a.submit(bytes)).toMatchObject({ duplicate: true, actionId: receipt.actionId })
    expect(take()).toEqual([expect.stringMatching(/^BEGIN;/), 'ROLLBACK'])

    const tampered = JSON.stringify({ ...(JSON.parse(bytes) as object), actionId: 'urn:weft:test:action:tampered' })
    await expect(a.submit(tampered)).rejects.toMatchObject({ code: 'AUTH_INVALID_SIGNATURE' })
    expect(take()).toEqual([expect.stringMatching(/^BEGIN;/), 'ROLLBACK'])
    expect((await logShape(schema)).transactions).toBe(1)
  })

  it('read further pages under the lock when peers committed more than readBatch transactions', async () => {
    const readBatch = 2
    const { schema, a, b, wa, wb } = await twoAuthorities({ url: countedUrl(), listen: false, readBatch })
    await b.catchUp()
    const pending = 5
    for (let n = 0; n < pending; n++) await post(wa, 'worker1', n)
    const head = a.group(GROUP)!.head
    const position = a.position
    take()

    const receipt = await post(wb, 'worker2', pending)
    // The first page rides with the lock; each full page asks for one more.
    expect(take()).toHaveLength(3 + Math.floor(pending / readBatch))
    expect(receipt.events[0]!.sequence).toBe(head + 1)
    expect(b.position).toBe(position + 1)
    await a.catchUp()
    expect(b.state).toEqual(a.state)
    expect(contiguous(await logShape(schema))).toBe(true)
  })

  it('are refused when the log lock row is gone, since writers would no longer take turns', async () => {
    const { schema, authority: a, w } = await startedLog()
    const db = await rawClient()
    try {
      await db.query(`DELETE FROM "${schema}".log_lock`)
      const before = a.position
      await expect(post(w, 'worker1', 1)).rejects.toMatchObject({ code: 'INTERNAL_ERROR', retryable: true })
      expect((await logShape(schema)).transactions).toBe(before)
      await db.query(`INSERT INTO "${schema}".log_lock DEFAULT VALUES`)
    } finally {
      await db.end()
    }
    expect((await post(w, 'worker2', 2)).events).toHaveLength(1)
  })
})

describe('the statement appending a transaction', () => {
  it('is refused whole when it would leave a gap or a fork inside it, or skip a transaction number', async () => {
    const { schema, authority: a } = await startedLog()
    const s = `"${schema}"`
    const head = a.group(GROUP)!.head
    const txn = a.position
    const before = await logShape(schema)
    const db = await rawClient()
    /** Appends transaction `number` with Events at `sequences` of the test Group, checks every constraint at once, then rolls back. */
    const append = async (number: number, sequences: number[]): Promise<string> => {
      await db.query('BEGIN')
      try {
        await appendTransaction(db, s, schema, number, transaction(number, sequences))
        // The deferred `receipts_complete` too, before the rollback that keeps the log as it was.
        await db.query('SET CONSTRAINTS ALL IMMEDIATE')
        const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${s}.events WHERE txn = $1`, [number])
        return `accepted with ${rows[0]!.n} Events`
      } catch (error) {
        return (error as Error).message
      } finally {
        await db.query('ROLLBACK')
      }
    }
    try {
      // The statement itself is sound: both Events are written by it, and every check passes.
      expect(await append(txn + 1, [head + 1, head + 2])).toBe('accepted with 2 Events')
      expect(await append(txn + 1, [])).toBe('accepted with 0 Events')
      // The per-row trigger sees the rows the same statement inserted before.
      expect(await append(txn + 1, [head + 1, head + 3])).toMatch(/sequence \d+ does not continue its head/)
      expect(await append(txn + 1, [head + 1, head + 1])).toMatch(/does not continue its head|duplicate key/)
      expect(await append(txn + 2, [head + 1])).toMatch(/does not continue the log head/)
      // In a transaction that goes on and commits, the refused statement left nothing behind.
      await db.query('BEGIN')
      await db.query('SAVEPOINT append')
      const refused = await appendTransaction(db, s, schema, txn + 1, transaction(txn + 1, [head + 1, head + 3])).then(
        () => 'accepted',
        (e: Error) => e.message,
      )
      await db.query('ROLLBACK TO SAVEPOINT append')
      await db.query('COMMIT')
      expect(refused).toMatch(/does not continue its head/)
    } finally {
      await db.end()
    }
    expect(await logShape(schema)).toEqual(before)
  })

  it("refuses the Authority's own write whole when an Event would leave a gap, and the Authority goes on", async () => {
    const { schema, authority: a, w } = await startedLog()
    const db = await rawClient()
    const s = `"${schema}"`
    // A test trigger, firing before `events_contiguous` (triggers fire in name order), moves one
    // Message a sequence ahead after the local pipeline accepted it.
    await db.query(`CREATE FUNCTION ${s}.skip() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      IF position('skip me' in NEW.body) > 0 THEN NEW.sequence := NEW.sequence + 1; END IF; RETURN NEW; END $$;
      CREATE TRIGGER a_skip BEFORE INSERT ON ${s}.events FOR EACH ROW EXECUTE FUNCTION ${s}.skip();`)
    const before = await logShape(schema)
    const head = a.group(GROUP)!.head
    try {
      await expect(post(w, 'worker1', 1, 'skip me')).rejects.toMatchObject({ code: 'INTERNAL_ERROR', retryable: true })
      // Neither the receipt nor the Event of the refused statement is there.
      expect(await logShape(schema)).toEqual(before)
      expect(a.position).toBe(before.transactions)
      expect(a.group(GROUP)!.head).toBe(head)
    } finally {
      await db.query(`DROP TRIGGER a_skip ON ${s}.events`)
      await db.end()
    }
    expect((await post(w, 'worker2', 2)).events[0]!.sequence).toBe(head + 1)
    expect(contiguous(await logShape(schema))).toBe(true)
  })
})

/** A hand-made transaction number `txn` of Messages at `sequences` of the test Group (the database reads only its columns). */
function transaction(txn: number, sequences: number[]): AcceptedTransaction {
  const events = sequences.map(
    (sequence, i) => ({ groupId: GROUP, sequence, eventId: `urn:weft:test:event:t${txn}-${i}-${randomBytes(3).toString('hex')}`, kind: 'message.posted' }) as unknown as Event,
  )
  const receipt = { actor: cast.worker1.actor, actionId: `urn:weft:test:action:t${txn}`, events, acceptedAt: '2026-01-01T00:00:00Z', commandHash: 'sha256:test' } as unknown as StoredReceipt
  return { events, receipt }
}
