/**
 * What several Authorities on one database share besides the log: commit notifications (live
 * delivery of peers' Events, across a dropped notification connection), ACK Cursors (§16), Artifact
 * bytes (§13.1) and Group log compactions behind Signed Group Snapshots (§7.4, §16).
 */
import { buildGroupSnapshot, createDelivery, signGroupSnapshot, type Delivery } from '@weft/authority'
import { ProtocolError, sha256Tagged, UsageError, utf8Encode } from '@weft/codec'
import type { Event, GroupSnapshot } from '@weft/spec'
import { randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { cast, GROUP } from '@weft/testkit/fixtures'
import { readPostgresLog, type PostgresAuthority, type PostgresLogEntry } from '../src/index.js'
import { closeAll, openAuthority, pgUrl, post, rawClient, twoAuthorities, until } from './pg-world.js'

afterEach(closeAll)
const deliveries: Delivery[] = []
afterEach(() => deliveries.splice(0).forEach((d) => d.close()))

/** The subscriber: the control plane, which reads the whole Group by Organization policy (§8). */
const reader = cast.controlPlane.actor

/** A delivery of `authority` over its PostgreSQL Cursors, closed after the test. */
function deliveryOf(authority: PostgresAuthority): Delivery {
  const delivery = createDelivery(authority, { cursorStore: authority.cursorStore, controlPlane: [cast.controlPlane.actor.id] })
  deliveries.push(delivery)
  return delivery
}

/** Subscribes {@link reader} to the test Group through `delivery` and collects the sequences it is handed. */
function collect(delivery: Delivery, afterSequence?: number): number[] {
  const got: number[] = []
  delivery.subscribe(reader, [{ groupId: GROUP, ...(afterSequence === undefined ? {} : { afterSequence }) }], { onEvent: (e: Event) => void got.push(e.sequence!) })
  return got
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i)

describe('commit notifications', () => {
  it("hand a listening Authority's subscribers every Event a peer accepted, live, in order, without a gap", async () => {
    const { a, b, wb } = await twoAuthorities()
    const got = collect(deliveryOf(a), 0)
    const head = a.group(GROUP)!.head
    expect(got).toEqual(range(1, head))
    for (let n = 0; n < 30; n++) await post(wb, (['worker1', 'worker2', 'worker3'] as const)[n % 3]!, n)
    const last = b.group(GROUP)!.head
    // Nothing here calls a.catchUp(): the notifications alone bring the peer's Events.
    await until(() => got.length === last)
    expect(got).toEqual(range(1, last))
    expect(a.position).toBe(b.position)
  })

  it('are not listened to with listen: false, whose copy moves only with catchUp', async () => {
    const { schema, clock, a, b, wa } = await twoAuthorities({ listen: false })
    await b.catchUp()
    const c = await openAuthority(schema, clock)
    const heard: number[] = []
    b.onCommit((events) => heard.push(...events.map((e) => e.sequence!)))
    const receipt = await post(wa, 'worker1', 1)
    // A third Authority, listening, hears of the commit; b, not listening, does not.
    await until(() => c.position === a.position)
    expect(b.position).toBe(a.position - 1)
    expect(heard).toEqual([])
    expect(await b.catchUp()).toBe(1)
    expect(heard).toEqual([receipt.events[0]!.sequence])
  })

  it('come back after the notification connection drops, and nothing committed meanwhile is missed', async () => {
    const app = `weft-test-${randomBytes(4).toString('hex')}`
    const log: PostgresLogEntry[] = []
    const { a, b, wa } = await twoAuthorities({ url: `${pgUrl()}${pgUrl().includes('?') ? '&' : '?'}application_name=${app}`, log: (entry) => log.push(entry) })
    const got = collect(deliveryOf(b), 0)
    const db = await rawClient()
    try {
      const killed = await db.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN %'", [app])
      expect(killed.rowCount).toBe(1)
      await until(() => log.some((l) => l.msg === 'listener lost'))
    } finally {
      await db.end()
    }
    // Committed by the peer while b's notification connection is down (it is opened again after a
    // pause): its notification is lost, and the catch-up after the reconnect alone brings it.
    await post(wa, 'worker1', 1)
    await until(() => got.length === a.group(GROUP)!.head)
    expect(log.some((l) => l.msg === 'listener reconnected')).toBe(true)
    // A commit after the reconnect is heard through the new connection.
    await post(wa, 'worker2', 2)
    const head = a.group(GROUP)!.head
    await until(() => got.length === head)
    expect(got).toEqual(range(1, head))
    expect(log.find((l) => l.msg === 'listener lost')).toMatchObject({ level: 'warn', detail: expect.any(String) })
  })
})

describe('ACK Cursors in the database (§16)', () => {
  it('are written through, reach a peer, never move back, and a subscriber resumes after them on the peer', async () => {
    const { schema, clock, a, b, wa } = await twoAuthorities()
    const [onA, onB] = [deliveryOf(a), deliveryOf(b)]
    for (let n = 0; n < 4; n++) await post(wa, 'worker1', n)
    const head = a.group(GROUP)!.head
    const acked = head - 3
    expect(onA.ack(reader, [{ groupId: GROUP, sequence: acked }])).toEqual([{ groupId: GROUP, sequence: acked }])
    await a.cursorStore.flush()
    const db = await rawClient()
    const stored = async (): Promise<unknown[]> => (await db.query(`SELECT subscriber, group_id, sequence::int FROM "${schema}".cursors`)).rows
    try {
      expect(await stored()).toEqual([{ subscriber: `service:${reader.id}`, group_id: GROUP, sequence: acked }])
      // The write's notification brings the Cursor to the peer, whose subscriber resumes after it.
      await until(() => onB.cursor(reader, GROUP) === acked)
      expect(collect(onB)).toEqual(range(acked + 1, head))

      // A process opened now loads the stored Cursor; one that does not listen knows nothing of
      // a later one, and writing an older Cursor from there leaves the newer one in the database.
      const blind = await openAuthority(schema, clock, { listen: false })
      expect(blind.cursorStore.get(reader, GROUP)).toBe(acked)
      onA.ack(reader, [{ groupId: GROUP, sequence: head - 1 }])
      await a.cursorStore.flush()
      blind.cursorStore.set(reader, GROUP, head - 2)
      await blind.cursorStore.flush()
      expect(await stored()).toMatchObject([{ sequence: head - 1 }])
      await blind.catchUp()
      expect(blind.cursorStore.get(reader, GROUP)).toBe(head - 1)
      // And hand-written SQL cannot move it back either.
      await expect(db.query(`UPDATE "${schema}".cursors SET sequence = 1`)).rejects.toThrow(/would move back/)

      // close() flushes what was set just before it.
      onB.ack(reader, [{ groupId: GROUP, sequence: head }])
      deliveries.splice(deliveries.indexOf(onB), 1)[0]!.close()
      await b.close()
      expect(await stored()).toMatchObject([{ sequence: head }])
    } finally {
      await db.end()
    }
  })
})

describe('Artifact bytes in the database (§13.1)', () => {
  it('are stored by content hash, read by any process, checked on every read, and repaired by a re-put', async () => {
    const { schema, a, b } = await twoAuthorities()
    const bytes = utf8Encode('the patch')
    const hash = await a.blobStore.put(bytes, 'text/x-diff')
    expect(hash).toBe(sha256Tagged(bytes))
    expect(await a.blobStore.put(bytes)).toBe(hash)
    expect(await b.blobStore.has(hash)).toBe(true)
    expect(await b.blobStore.get(hash)).toEqual(bytes)
    const missing = sha256Tagged(utf8Encode('never stored'))
    expect(await b.blobStore.has(missing)).toBe(false)
    await expect(b.blobStore.get(missing)).rejects.toMatchObject({ code: 'INVALID_COMMAND' })
    await expect(b.blobStore.get('md5:abc')).rejects.toBeInstanceOf(UsageError)
    const db = await rawClient()
    try {
      await db.query(`UPDATE "${schema}".blobs SET bytes = $1 WHERE hash = $2`, [Buffer.from('tampered'), hash])
      const refused = await b.blobStore.get(hash).catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(ProtocolError)
      expect(refused).toMatchObject({ code: 'PROTOCOL_VIOLATION' })
      await a.blobStore.put(bytes)
      expect(await b.blobStore.get(hash)).toEqual(bytes)
      expect((await db.query(`SELECT media_type FROM "${schema}".blobs`)).rows).toEqual([{ media_type: 'text/x-diff' }])
    } finally {
      await db.end()
    }
  })
})

describe('compaction of a shared Group log (§7.4, §16)', () => {
  /** A Signed Group Snapshot of the test Group at `authority`'s head, by the control plane, over the retained history in the database. */
  async function headSnapshot(authority: PostgresAuthority, schema: string, snapshotId: string, nowMs: number): Promise<GroupSnapshot> {
    const history = (await readPostgresLog({ url: pgUrl(), schema })).groupEvents(GROUP).slice(0, authority.group(GROUP)!.head)
    const unsigned = buildGroupSnapshot(authority.group(GROUP)!, history, {
      snapshotId,
      createdBy: { type: 'service', id: cast.controlPlane.actor.id },
      createdAt: new Date(nowMs).toISOString(),
    })
    return signGroupSnapshot(unsigned, cast.controlPlane.key)
  }

  it('is made under the log lock, applied by peers and by a restart, each verifying it', async () => {
    const { schema, clock, a, b, wa, wb } = await twoAuthorities()
    await post(wa, 'worker1', 1)
    const through = a.group(GROUP)!.head
    const record = await a.compact(GROUP, await headSnapshot(a, schema, 'urn:weft:test:snapshot:one', clock.nowMs))
    expect(record).toMatchObject({ groupId: GROUP, throughSequence: through })
    await until(() => b.snapshot(GROUP) !== undefined)
    expect(b.snapshot(GROUP)).toEqual(record)
    expect(() => b.events(GROUP)).toThrow(expect.objectContaining({ code: 'CURSOR_TOO_OLD' }))
    expect(() => deliveryOf(b).subscribe(reader, [{ groupId: GROUP, afterSequence: 0 }], { onEvent: () => {} })).toThrow(expect.objectContaining({ code: 'CURSOR_TOO_OLD' }))
    // The log goes on from the head; replay from the snapshot serves what follows.
    const next = await post(wb, 'worker2', 2)
    expect(next.events[0]!.sequence).toBe(through + 1)
    await until(() => a.position === b.position)
    expect(a.events(GROUP, through).map((e) => e.sequence)).toEqual([through + 1])

    // A snapshot that does not describe the log is refused with nothing written, the log's own law.
    const stale = { ...(await headSnapshot(a, schema, 'urn:weft:test:snapshot:stale', clock.nowMs)), throughSequence: through }
    await expect(b.compact(GROUP, stale)).rejects.toBeInstanceOf(ProtocolError)
    // A second compaction, made by the other process.
    const second = await b.compact(GROUP, await headSnapshot(b, schema, 'urn:weft:test:snapshot:two', clock.nowMs))
    await until(() => a.snapshot(GROUP)?.throughSequence === second.throughSequence)
    expect(a.snapshot(GROUP)).toEqual(second)

    const restarted = await openAuthority(schema, clock)
    expect(restarted.snapshot(GROUP)).toEqual(second)
    expect(restarted.state).toEqual(a.state)
    const db = await rawClient()
    try {
      expect((await db.query(`SELECT id::int, group_id, through_sequence::int FROM "${schema}".snapshots ORDER BY id`)).rows).toEqual([
        { id: 1, group_id: GROUP, through_sequence: through },
        { id: 2, group_id: GROUP, through_sequence: second.throughSequence },
      ])
      // The Events stay in the database: compaction moves what replay serves, not the history (§7.4).
      expect((await db.query(`SELECT count(*)::int AS n FROM "${schema}".events WHERE group_id = $1`, [GROUP])).rows).toEqual([{ n: a.group(GROUP)!.head }])
      // A compaction written behind the Authorities' back with a forged signature is refused by whoever folds it.
      await post(wa, 'worker3', 3)
      const forged = await headSnapshot(a, schema, 'urn:weft:test:snapshot:forged', clock.nowMs)
      const signature = forged.signature as { value: string }
      const body = JSON.stringify({ ...forged, signature: { ...signature, value: `${signature.value.startsWith('A') ? 'B' : 'A'}${signature.value.slice(1)}` } })
      await db.query(`INSERT INTO "${schema}".snapshots VALUES (3, $1, $2, $3, 'sha256:${'0'.repeat(64)}', '2026-01-01T00:00:00Z', $4)`, [a.position, GROUP, forged.throughSequence, body])
    } finally {
      await db.end()
    }
    await expect(openAuthority(schema, clock)).rejects.toThrow(/compaction 3 of Group .* does not verify here/)
  })

  it('compacts in the middle of the log from buildSnapshot; every process refuses below it with the reference and reads it with history [error CURSOR_TOO_OLD]', async () => {
    const { schema, clock, a, b, wa } = await twoAuthorities()
    for (let n = 0; n < 3; n++) await post(wa, 'worker1', n)
    await until(() => a.position === b.position)
    const head = a.group(GROUP)!.head
    const through = head - 2
    const options = { snapshotId: 'urn:weft:test:snapshot:middle', createdBy: { type: 'service', id: cast.controlPlane.actor.id }, createdAt: new Date(clock.nowMs).toISOString() } as const
    const record = await a.compact(GROUP, signGroupSnapshot(a.buildSnapshot(GROUP, through, options), cast.controlPlane.key))
    expect(record.throughSequence).toBe(through)
    await until(() => b.snapshot(GROUP) !== undefined)
    const all = a.history(GROUP, 0, head).events
    expect(all.map((e) => e.sequence)).toEqual(range(1, head))
    for (const authority of [a, b, await openAuthority(schema, clock)]) {
      expect(() => authority.events(GROUP, through - 1)).toThrow(expect.objectContaining({ code: 'CURSOR_TOO_OLD', snapshotArtifactHash: record.snapshotHash }))
      expect(authority.events(GROUP, through).map((e) => e.sequence)).toEqual(range(through + 1, head))
      expect(authority.history(GROUP, 0, head).events).toEqual(all)
    }
  })
})
