/**
 * The Authority store contract suite (`@weft/testkit/authority-store-contract`), run against the
 * PostgreSQL store, the asynchronous face of the store seam: whatever the memory store of
 * @weft/authority answers, this store answers the same. Each store opens on a schema of its own,
 * dropped after the file. The PostgreSQL store keeps no checkpoint and its compactions are the
 * Authority's, so the checkpointing cases are not run here; what it reads of a log a PostgreSQL
 * Authority wrote, compaction included, and how concurrent appends take turns, are checked after.
 */
import { signGroupSnapshot, type StoredReceipt } from '@weft/authority'
import type { Event } from '@weft/spec'
import { describeAuthorityStoreContract } from '@weft/testkit/authority-store-contract'
import { cast, GROUP } from '@weft/testkit/fixtures'
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresAuthorityStore, readPostgresLog, type PostgresAuthorityStore } from '../src/index.js'
import { closeAll, freshSchema, pgUrl, post, startedLog } from './pg-world.js'

let pool: pg.Pool
const opened: PostgresAuthorityStore[] = []

beforeAll(() => {
  pool = new pg.Pool({ connectionString: pgUrl(), max: 4 })
})
afterAll(async () => {
  const schemas = new Set(opened.splice(0).map((store) => store.schema))
  await Promise.all([...schemas].map((schema) => pool.query(`DROP SCHEMA "${schema}" CASCADE`)))
  await pool.end()
})

async function open(schema = freshSchema()): Promise<PostgresAuthorityStore> {
  const store = await createPostgresAuthorityStore({ pool, schema })
  opened.push(store)
  return store
}

describeAuthorityStoreContract('postgres', () => open())

/** Every item of `items`, in order. */
async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of items) out.push(item)
  return out
}

describe('the PostgreSQL store over the log of a PostgreSQL Authority', () => {
  afterEach(closeAll)

  it("reads what the Authority committed, and starts a Group's online log after its compaction (§7.4, §16)", async () => {
    const { schema, clock, authority, w } = await startedLog()
    const posted = []
    for (let n = 0; n < 3; n++) posted.push(await post(w, 'worker1', n))
    const head = authority.group(GROUP)!.head
    const through = head - 2
    const options = { snapshotId: 'urn:weft:test:snapshot:store', createdBy: { type: 'service', id: cast.controlPlane.actor.id }, createdAt: new Date(clock.nowMs).toISOString() } as const
    await authority.compact(GROUP, signGroupSnapshot(authority.buildSnapshot(GROUP, through, options), cast.controlPlane.key))
    const store = await open(schema)
    const committed = await readPostgresLog({ pool, schema })
    expect(await collect(store.allEvents())).toEqual([...committed.allEvents()])
    expect(await store.organizationEvents()).toEqual(committed.organizationEvents())
    expect(await store.groupEvents(GROUP)).toEqual(authority.events(GROUP, through))
    expect((await store.groupEvents(GROUP, 0, 1)).map((e) => e.sequence)).toEqual([through + 1])
    const { duplicate: _, ...receipt } = posted.at(-1)!
    expect(await store.receipt(`${receipt.actor.type}:${receipt.actor.id}`, receipt.actionId)).toEqual(receipt)
  })

  it('numbers concurrent appends of several stores one after the other under the log lock', async () => {
    const schema = freshSchema()
    const stores = [await open(schema), await open(schema)]
    // Any Organization Event will do: the database reads an Event's columns, not its signature.
    const { authority } = await startedLog()
    const [template] = authority.organizationEvents()
    const appends = Array.from({ length: 8 }, (_, n) => {
      const event: Event = { ...template!, eventId: `${template!.eventId}:${n}` }
      const receipt = {
        actor: cast.worker1.actor,
        actionId: `urn:weft:test:action:concurrent-${n}`,
        events: [event],
        acceptedAt: '2026-01-01T00:00:00Z',
        commandHash: 'sha256:test',
      } as unknown as StoredReceipt
      return stores[n % 2]!.appendTransaction([event], receipt)
    })
    await Promise.all(appends)
    expect((await collect(stores[0]!.allEvents())).map((e) => e.eventId.split(':').at(-1)).sort()).toEqual(['0', '1', '2', '3', '4', '5', '6', '7'])
    const { rows } = await pool.query<{ txn: number }>(`SELECT txn::int FROM "${schema}".receipts ORDER BY txn`)
    expect(rows.map((r) => r.txn)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
  })
})
