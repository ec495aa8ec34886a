/**
 * One and two PostgreSQL Authorities in this process over one log: the lifecycle and a restart,
 * racing appends to one Group, the database's own refusal of a gap or a fork, and the rebuild of
 * the local copy when a commit fails after the pipeline accepted.
 */
import type { Receipt } from '@weft/client'
import { afterEach, describe, expect, it } from 'vitest'
import { signed, agentCard, cast, GROUP, testRegistry } from '@weft/testkit/fixtures'
import { accept, authorize, CHILD_CONTRACT, promote, reach, wid } from '@weft/testkit/world'
import { createPostgresAuthority, type PostgresAuthority, type PostgresAuthorityOptions } from '../src/index.js'
import { closeAll, contiguous, freshSchema, logShape, openAuthority, pgUrl, post, rawClient, startedLog, testClock, twoAuthorities } from './pg-world.js'

/** How many racing Commands test (b) sends; `WEFT_PG_RACE` raises it for a longer run. */
const RACE = Number(process.env['WEFT_PG_RACE'] ?? 200)

const open = (schema: string, clock = testClock()): Promise<PostgresAuthority> => openAuthority(schema, clock)
afterEach(closeAll)

describe('one PostgreSQL Authority', () => {
  it('runs a Mission lifecycle, and a restart on the same database folds to the same state', async () => {
    const { clock, schema, authority: a, w } = await startedLog()
    await reach(w, 'verified')
    await reach(w, 'blocked')
    await reach(w, 'cancelled')
    const { child } = await promote(w, await reach(w, 'active'))
    await reach(child, 'queued', { candidates: ['worker3'], contract: CHILD_CONTRACT })

    expect(a.replayState()).toEqual(a.state)
    const restarted = await open(schema, clock)
    expect(restarted.position).toBe(a.position)
    expect(restarted.state).toEqual(a.replayState())
    expect(restarted.organizationEvents()).toEqual(a.organizationEvents())
    for (const groupId of [GROUP, child.groupId]) expect(restarted.events(groupId)).toEqual(a.events(groupId))

    const shape = await logShape(schema)
    expect(shape).toMatchObject({ transactions: a.position, orphans: 0, duplicates: 0 })
    expect(Object.keys(shape.groups).sort()).toEqual([GROUP, child.groupId].sort())
    expect(contiguous(shape)).toBe(true)
  })

  it('answers a retry accepted by another instance with the original receipt (§15.1)', async () => {
    const clock = testClock()
    const schema = freshSchema()
    const [a, b] = [await open(schema, clock), await open(schema, clock)]
    const bytes = signed('ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(cast.worker1) }, cast.controlPlane, {}, clock)
    const original = await a.submit(bytes)
    const retried = await b.submit(bytes)
    expect(retried).toMatchObject({ duplicate: true, actionId: original.actionId, acceptedAt: original.acceptedAt, commandHash: original.commandHash })
    expect(JSON.stringify(retried.events)).toBe(JSON.stringify(original.events))
    expect((await logShape(schema)).transactions).toBe(1)
  })
})

describe('two PostgreSQL Authorities in one process racing on one Group', () => {
  it('keeps one contiguous log, every receipt once, first-accept atomic, and both converge', async () => {
    const { clock, schema, a, b, wa, wb } = await twoAuthorities()
    await b.catchUp()
    const offered = [await reach(wa, 'offered'), await reach(wb, 'offered'), await reach(wa, 'offered')]
    await b.catchUp()
    const subscribedAt = a.group(GROUP)!.head
    const heard = { a: [] as string[], b: [] as string[] }
    a.onCommit((events) => heard.a.push(...events.map((e) => e.eventId)))
    b.onCommit((events) => heard.b.push(...events.map((e) => e.eventId)))

    const workers = ['worker1', 'worker2', 'worker3'] as const
    const racing: Promise<Receipt>[] = []
    for (let n = 0; n < RACE; n++) {
      const w = n % 2 === 0 ? wa : wb
      racing.push(n % 10 === 9 ? authorize(w, wid(`race-${n}`)) : post(w, workers[n % 3]!, n))
    }
    // §15.3: the first accept of an offer wins, whichever process runs it; the other is refused.
    const firstAccepts = offered.map((id) => Promise.allSettled([accept(wa, id, 'worker1'), accept(wb, id, 'worker2')]))
    const receipts = await Promise.all(racing)
    const accepts = await Promise.all(firstAccepts)

    for (const [i, [one, two]] of accepts.entries()) {
      expect([one.status, two.status].sort()).toEqual(['fulfilled', 'rejected'])
      const loser = (one.status === 'rejected' ? one : two) as PromiseRejectedResult
      expect(loser.reason).toMatchObject({ code: expect.stringMatching(/^(WORK_ALREADY_OWNED|INVALID_STATE_TRANSITION|REVISION_CONFLICT)$/) })
      const winner = one.status === 'fulfilled' ? 'worker1' : 'worker2'
      await a.catchUp()
      expect(a.group(GROUP)!.workItems.get(offered[i]!)!.doc.owner?.agentId).toBe(cast[winner].actor.id)
    }

    await Promise.all([a.catchUp(), b.catchUp()])
    expect(a.position).toBe(b.position)
    expect(b.state).toEqual(a.state)
    expect(a.replayState()).toEqual(a.state)
    const fresh = await open(schema, clock)
    expect(fresh.state).toEqual(a.state)

    const shape = await logShape(schema)
    expect(contiguous(shape)).toBe(true)
    expect(shape).toMatchObject({ transactions: a.position, orphans: 0, duplicates: 0 })
    // Every receipt's Events are in the log once, at the sequences the receipt gave.
    const log = new Map(a.events(GROUP).map((e) => [e.eventId, e.sequence]))
    const answered = receipts.flatMap((r) => r.events)
    expect(answered.filter((e) => log.get(e.eventId) !== e.sequence)).toEqual([])
    expect(new Set(answered.map((e) => e.eventId)).size).toBe(answered.length)
    // Each instance's listeners heard every Event committed after they subscribed, whoever accepted it, once.
    const committed = a.events(GROUP, subscribedAt).map((e) => e.eventId)
    expect(heard.a).toEqual(committed)
    expect(heard.b).toEqual(committed)
  })
})

describe('the database refuses what would break the log', () => {
  it('refuses a Group sequence gap, a fork, an Event without a receipt, a receipt without its Events, and any change', async () => {
    const { schema, authority: a } = await startedLog()
    const db = await rawClient()
    const s = `"${schema}"`
    const head = a.group(GROUP)!.head
    const txn = a.position
    const refused = async (...statements: string[]): Promise<string> => {
      await db.query('BEGIN')
      try {
        for (const text of statements) await db.query(text)
        await db.query('COMMIT')
        return 'accepted'
      } catch (error) {
        await db.query('ROLLBACK')
        return (error as Error).message
      }
    }
    const receipt = (t: number, count: number) => `INSERT INTO ${s}.receipts VALUES ('k', 'x${t}', ${t}, ${count}, '{}')`
    const event = (t: number, idx: number, sequence: number, id: string) => `INSERT INTO ${s}.events VALUES (${t}, ${idx}, '${GROUP}', ${sequence}, '${id}', 'message.posted', '{}')`
    try {
      expect(await refused(receipt(txn + 1, 1), event(txn + 1, 0, head + 2, 'gap'))).toMatch(/does not continue its head/)
      expect(await refused(receipt(txn + 1, 1), event(txn + 1, 0, head, 'fork'))).toMatch(/does not continue its head|duplicate key/)
      expect(await refused(event(txn + 1, 0, head + 1, 'orphan'))).toMatch(/foreign key/)
      expect(await refused(receipt(txn + 1, 2), event(txn + 1, 0, head + 1, 'short'))).toMatch(/holds 1 Events, its receipt says 2/)
      expect(await refused(receipt(txn + 2, 0))).toMatch(/does not continue the log head/)
      expect(await refused(`UPDATE ${s}.events SET kind = 'x'`)).toMatch(/UPDATE of accepted events/)
      expect(await refused(`DELETE FROM ${s}.receipts`)).toMatch(/DELETE of accepted receipts/)
      expect(await refused(`TRUNCATE ${s}.events CASCADE`)).toMatch(/TRUNCATE/)
      // Two writers that skip the lock and race for one transaction number: only one gets through.
      const other = await rawClient()
      try {
        await db.query('BEGIN')
        await other.query('BEGIN')
        await db.query(receipt(txn + 1, 1))
        await db.query(event(txn + 1, 0, head + 1, 'first'))
        const second = other.query(`${receipt(txn + 1, 1).replace("'x", "'y")}`).then(
          () => 'accepted',
          (e: Error) => e.message,
        )
        await db.query('COMMIT')
        // Blocked on the unique key until the first commits, or arriving after it: refused either way.
        expect(await second).toMatch(/duplicate key|does not continue the log head/)
        await other.query('ROLLBACK')
      } finally {
        await other.end()
      }
    } finally {
      await db.end()
    }
    const shape = await logShape(schema)
    expect(contiguous(shape)).toBe(true)
    expect(shape.transactions).toBe(txn + 1)
  })
})

describe('a commit that fails after the pipeline accepted', () => {
  it('answers INTERNAL_ERROR and rebuilds the local copy from the database, which stays the truth', async () => {
    const { clock, schema, authority: a, w } = await startedLog()
    const db = await rawClient()
    const s = `"${schema}"`
    // A test trigger refuses one Message, after the local pipeline already accepted it.
    await db.query(`CREATE FUNCTION ${s}.poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      IF position('poison' in NEW.body) > 0 THEN RAISE EXCEPTION 'poisoned'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER poison BEFORE INSERT ON ${s}.events FOR EACH ROW EXECUTE FUNCTION ${s}.poison();`)
    const before = a.state
    const head = a.group(GROUP)!.head
    const heard: unknown[] = []
    a.onCommit((events) => heard.push(events))
    await expect(post(w, 'worker1', 1, 'poison')).rejects.toMatchObject({ code: 'INTERNAL_ERROR', retryable: true })
    expect(a.state).not.toBe(before)
    expect(a.group(GROUP)!.head).toBe(head)
    expect([...a.group(GROUP)!.messages.values()].some((m) => JSON.stringify(m).includes('poison'))).toBe(false)
    expect(a.state).toEqual((await open(schema, clock)).state)
    expect(heard).toEqual([])
    await db.query(`DROP TRIGGER poison ON ${s}.events`)
    await db.end()
    // The Authority goes on from the database's log.
    const next = await post(w, 'worker2', 2)
    expect(next.events[0]!.sequence).toBe(head + 1)
    expect(heard).toHaveLength(1)
    expect(contiguous(await logShape(schema))).toBe(true)
  })
})

describe('createPostgresAuthority options', () => {
  it('refuses a missing or doubled connection, a bad schema name and a bad batch size with a UsageError', async () => {
    const base = { registry: testRegistry(), keys: { authority: { type: 'service' as const, id: cast.authority.actor.id }, signingKey: cast.authority.key } }
    const refusal = (options: Partial<PostgresAuthorityOptions>) =>
      createPostgresAuthority({ ...base, ...options }).then(
        () => 'opened',
        (e: Error) => `${e.name}: ${e.message}`,
      )
    expect(await refusal({})).toMatch(/^UsageError: .*exactly one of url and pool/)
    expect(await refusal({ url: pgUrl(), schema: 'Robert"); DROP TABLE x; --' })).toMatch(/^UsageError: schema must match/)
    expect(await refusal({ url: pgUrl(), readBatch: 0 })).toMatch(/^UsageError: readBatch/)
  })

  it('answers nothing after close', async () => {
    const a = await open(freshSchema())
    await a.close()
    await expect(a.catchUp()).rejects.toThrow(/closed/)
  })
})
