/**
 * The behaviour every Authority store must have, as one suite over both faces of the store seam
 * ({@link AuthorityStore} and {@link AsyncAuthorityStore}): the memory store of `@weft/authority`,
 * the SQLite store of `@weft/store-sqlite` and the PostgreSQL store of `@weft/store-postgres` run
 * the same cases, so whatever the memory store answers, a durable store must answer the same. Every
 * call is awaited (awaiting a synchronous answer changes nothing), and a refusal is a throw or a
 * rejection alike. The transactions are real: the scenario of `store-log.ts` recorded from an
 * Authority (two Groups, multi-Event transactions).
 * @module
 */
import type { AnyAuthorityStore, AsyncAuthorityStore, AuthorityStore, CheckpointManifest, SnapshotRecord, StateCheckpoint, StoredReceipt } from '@weft/authority'
import type { Event } from '@weft/spec'
import { beforeAll, describe, expect, it } from 'vitest'
import { scenarioLog, type Transaction } from './store-log.js'

/** How a contract run opens a store of either face: a new, empty one per call, at once or later. */
export type OpenAuthorityStore = () => AnyAuthorityStore | Promise<AnyAuthorityStore>

/** How a contract run opens a store that compacts and keeps checkpoints: those members are of the synchronous face. */
export type OpenCheckpointingStore = () => AuthorityStore | Promise<AuthorityStore>

/** What {@link describeAuthorityStoreContract} checks besides the log, receipts and their laws. */
export interface AuthorityStoreContractOptions {
  /**
   * Opens a store that compacts Groups and keeps state checkpoints (§7.4, §16): `eventsAfter`,
   * `compact`, `snapshot`, `groupHistory`, `saveCheckpoint` and `checkpoint`. Omitted: those cases are not registered.
   */
  readonly checkpointing?: OpenCheckpointingStore
}

let log: readonly Transaction[]
let all: Event[]
let groupIds: string[]

async function loadScenario(): Promise<void> {
  log = await scenarioLog()
  all = log.flatMap((t) => t.events)
  groupIds = [...new Set(all.flatMap((e) => (e.groupId === undefined ? [] : [e.groupId])))]
}

/** Every item of a synchronous or asynchronous iterable, in order. */
async function collect<T>(items: Iterable<T> | AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of items) out.push(item)
  return out
}

/** That `run` refuses: throws, or returns a promise that rejects (either face of a store). */
async function refuses(run: () => unknown): Promise<void> {
  await expect((async () => run())()).rejects.toThrow()
}

/** What a store holds, read through every reader. */
async function contents(store: AnyAuthorityStore, transactions: readonly Transaction[] = log) {
  return {
    organization: await store.organizationEvents(),
    groups: Object.fromEntries(await Promise.all(groupIds.map(async (g) => [g, await store.groupEvents(g)]))),
    all: await collect(store.allEvents()),
    receipts: await Promise.all(transactions.map((t) => store.receipt(`${t.receipt.actor.type}:${t.receipt.actor.id}`, t.receipt.actionId))),
  }
}

/** A copy of `event` moved to `sequence` under a new Event ID. */
const moved = (event: Event, sequence: number, tag: string): Event => ({ ...event, eventId: `${event.eventId}:${tag}`, sequence })
/** A receipt of a new Action ID. */
const fresh = (receipt: StoredReceipt, tag: string): StoredReceipt => ({ ...receipt, actionId: `${receipt.actionId}:${tag}` })

/** A store from `open` holding every transaction of the scenario log, appended one after the other. */
async function filledBy<S extends AuthorityStore | AsyncAuthorityStore>(open: () => S | Promise<S>): Promise<S> {
  const store = await open()
  for (const t of log) await store.appendTransaction(t.events, t.receipt)
  return store
}

/** A snapshot record as the Authority would store it; stores keep it without reading it. */
function recordOf(groupId: string, throughSequence: number, tag = 'a'): SnapshotRecord {
  return {
    groupId,
    throughSequence,
    snapshot: { snapshotId: `urn:weft:test:snapshot:${tag}`, groupId, throughSequence } as unknown as SnapshotRecord['snapshot'],
    snapshotHash: `sha256:${tag.repeat(64)}`,
    image: `{"groupId":"${groupId}","throughSequence":${throughSequence}}`,
    compactedAt: '2026-07-15T00:00:00Z',
  }
}

/** A checkpoint as the Authority would store it; stores keep its bytes and manifest without reading them. */
function checkpointAt(position: number, fill: number): StateCheckpoint {
  const manifest = { format: 'weft-authority-checkpoint/1', position, lastEventId: `urn:weft:test:event:${position}`, imageHash: `sha256:${'0'.repeat(64)}` } as unknown as CheckpointManifest
  return { manifest, image: new Uint8Array(1000).fill(fill) }
}

/**
 * Registers the store contract cases under `the <name> Authority store`, for a store of either
 * face (`open` may answer a promise, and so may every member): every reader gives back what was
 * appended (§15.1), windows of a Group log, immutable Events (§4.6), refused gaps, forks and reused
 * receipt keys with nothing appended (§15.2), and sequences counted per Group. With
 * `options.checkpointing`, also compaction, retained history and checkpoints (§7.4, §16) under
 * `the <name> Authority store, compaction and checkpoints`.
 *
 * @example
 * ```ts
 * describeAuthorityStoreContract('memory', createMemoryStore, { checkpointing: () => createMemoryStore({ checkpoints: true }) })
 * describeAuthorityStoreContract('postgres', () => createPostgresAuthorityStore({ pool, schema: freshSchema() }))
 * ```
 */
export function describeAuthorityStoreContract(name: string, open: OpenAuthorityStore, options: AuthorityStoreContractOptions = {}): void {
  beforeAll(loadScenario)
  describe(`the ${name} Authority store`, () => {
    const filled = (): Promise<AnyAuthorityStore> => filledBy(open)

    it('reads back every transaction: Organization log, Group logs, acceptance order, receipts', async () => {
      const store = await filled()
      expect(groupIds.length).toBeGreaterThanOrEqual(2)
      expect(log.some((t) => t.events.length > 1)).toBe(true)
      expect(await contents(store)).toEqual({
        organization: all.filter((e) => e.groupId === undefined),
        groups: Object.fromEntries(groupIds.map((g) => [g, all.filter((e) => e.groupId === g)])),
        all,
        receipts: log.map((t) => t.receipt),
      })
      expect(await store.receipt('agent:urn:weft:test:agent:nobody', log[0]!.receipt.actionId)).toBeUndefined()
      expect(await store.groupEvents('urn:weft:test:group:absent')).toEqual([])
    })

    it('reads a window of a Group log: above a position, at most a limit', async () => {
      const store = await filled()
      const groupId = groupIds[0]!
      const logOf = all.filter((e) => e.groupId === groupId)
      const cases: [number, number][] = [
        [0, Number.POSITIVE_INFINITY],
        [3, Number.POSITIVE_INFINITY],
        [3, 4],
        [2.7, 2],
        [-5, 1],
        [0, 0],
        [logOf.length, 10],
        [logOf.length + 5, 10],
      ]
      for (const [after, limit] of cases) {
        const from = Math.max(0, Math.floor(after))
        expect([after, limit, (await store.groupEvents(groupId, after, limit)).map((e) => e.sequence)]).toEqual([
          after,
          limit,
          logOf
            .filter((e) => (e.sequence as number) > from)
            .slice(0, limit === Number.POSITIVE_INFINITY ? undefined : limit)
            .map((e) => e.sequence),
        ])
      }
    })

    it('hands out immutable Events (§4.6)', async () => {
      const store = await filled()
      const [event] = await store.groupEvents(groupIds[0]!, 0, 1)
      expect(Object.isFrozen(event)).toBe(true)
      expect(Object.isFrozen(event!.payload)).toBe(true)
      expect(Object.isFrozen(event!.actor)).toBe(true)
    })

    it('refuses a sequence gap, a repeated sequence (fork) and a reused receipt key, appending nothing', async () => {
      const store = await filled()
      const before = await contents(store)
      const groupId = groupIds[0]!
      const last = (await store.groupEvents(groupId)).at(-1)!
      const head = last.sequence as number
      const template = log.find((t) => t.events.every((e) => e.groupId === groupId))!
      await refuses(() => store.appendTransaction([moved(last, head + 2, 'gap')], fresh(template.receipt, 'gap')))
      await refuses(() => store.appendTransaction([moved(last, head, 'fork')], fresh(template.receipt, 'fork')))
      await refuses(() => store.appendTransaction([moved(last, head + 1, 'reuse')], template.receipt))
      expect(await contents(store)).toEqual(before)
      // The refusals left the head where it was: the next sequence is still accepted.
      await store.appendTransaction([moved(last, head + 1, 'next')], fresh(template.receipt, 'next'))
      expect((await store.groupEvents(groupId, head)).map((e) => e.eventId)).toEqual([`${last.eventId}:next`])
    })

    it('appends a transaction that fails midway not at all', async () => {
      const store = await filled()
      const before = await contents(store)
      const groupId = groupIds[0]!
      const last = (await store.groupEvents(groupId)).at(-1)!
      const head = last.sequence as number
      const organization = all.find((e) => e.groupId === undefined)!
      const template = log.at(-1)!
      // Two good Events (one Organization, one continuing the Group), then a gap.
      const events = [{ ...organization, eventId: `${organization.eventId}:midway` }, moved(last, head + 1, 'a'), moved(last, head + 3, 'b')]
      await refuses(() => store.appendTransaction(events, fresh(template.receipt, 'midway')))
      expect(await contents(store)).toEqual(before)
      expect(await store.receipt(`${template.receipt.actor.type}:${template.receipt.actor.id}`, `${template.receipt.actionId}:midway`)).toBeUndefined()
    })

    it('counts sequences per Group, and several Groups in one transaction', async () => {
      const store = await open()
      const [a, b] = groupIds as [string, string]
      const base = all.find((e) => e.groupId === a)!
      const receipt = log[0]!.receipt
      const event = (groupId: string, sequence: number, tag: string): Event => ({ ...moved(base, sequence, tag), groupId })
      await store.appendTransaction([event(a, 1, 'a1'), event(b, 1, 'b1'), event(a, 2, 'a2')], fresh(receipt, 'both'))
      await refuses(() => store.appendTransaction([event(b, 3, 'b3')], fresh(receipt, 'skip')))
      await store.appendTransaction([event(b, 2, 'b2')], fresh(receipt, 'b2'))
      // A gap in a Group the transaction comes back to, after another Group, refuses all of it.
      await refuses(() => store.appendTransaction([event(a, 3, 'a3'), event(b, 3, 'b3'), event(a, 5, 'a5')], fresh(receipt, 'back')))
      const groups = await Promise.all([a, b].map(async (g) => (await store.groupEvents(g)).map((e) => e.eventId.split(':').at(-1))))
      expect(groups).toEqual([
        ['a1', 'a2'],
        ['b1', 'b2'],
      ])
      expect((await collect(store.allEvents())).map((e) => e.eventId.split(':').at(-1))).toEqual(['a1', 'b1', 'a2', 'b2'])
    })
  })
  const { checkpointing } = options
  if (checkpointing === undefined) return
  describe(`the ${name} Authority store, compaction and checkpoints`, () => {
    const filled = (): Promise<AuthorityStore> => filledBy(checkpointing)

    it('streams the retained history after any position', async () => {
      const store = await filled()
      for (const position of [0, 1, 7, all.length - 1, all.length, all.length + 3, -2, 2.5]) {
        const from = Math.max(0, Math.floor(position))
        expect([position, (await collect(store.eventsAfter!(position))).map((e) => e.eventId)]).toEqual([position, all.slice(from).map((e) => e.eventId)])
      }
    })

    it('compacts a Group: the online log starts after S, the retained history and the sequence go on', async () => {
      const store = await filled()
      const groupId = groupIds[0]!
      const logOf = all.filter((e) => e.groupId === groupId)
      expect(await store.snapshot!(groupId)).toBeUndefined()
      await store.compact!(groupId, 3, recordOf(groupId, 3))
      expect(await store.snapshot!(groupId)).toEqual(recordOf(groupId, 3))
      for (const after of [0, 2, 3]) expect((await store.groupEvents(groupId, after)).map((e) => e.sequence)).toEqual(logOf.slice(3).map((e) => e.sequence))
      expect((await store.groupEvents(groupId, 4, 2)).map((e) => e.sequence)).toEqual([5, 6])
      expect(await collect(store.allEvents())).toEqual(all)
      const before = { online: await store.groupEvents(groupId), record: await store.snapshot!(groupId) }
      // Backwards, standing still, beyond the head, or a record of another point: refused, nothing changed.
      await refuses(() => store.compact!(groupId, 2, recordOf(groupId, 2)))
      await refuses(() => store.compact!(groupId, 3, recordOf(groupId, 3, 'b')))
      await refuses(() => store.compact!(groupId, logOf.length + 1, recordOf(groupId, logOf.length + 1)))
      await refuses(() => store.compact!(groupId, 5, recordOf(groupId, 4)))
      expect({ online: await store.groupEvents(groupId), record: await store.snapshot!(groupId) }).toEqual(before)
      await store.compact!(groupId, logOf.length, recordOf(groupId, logOf.length, 'c'))
      expect(await store.groupEvents(groupId)).toEqual([])
      const last = logOf.at(-1)!
      await store.appendTransaction([moved(last, logOf.length + 1, 'after')], fresh(log[0]!.receipt, 'after'))
      expect((await store.groupEvents(groupId)).map((e) => e.sequence)).toEqual([logOf.length + 1])
      expect(await store.snapshot!(groupIds[1]!)).toBeUndefined()
    })

    it("reads a Group's retained history by position, compacted Events included", async () => {
      const store = await filled()
      const groupId = groupIds[0]!
      const logOf = all.filter((e) => e.groupId === groupId)
      await store.compact!(groupId, 4, recordOf(groupId, 4))
      for (const [after, limit] of [
        [0, 100],
        [0, 2],
        [2, 3],
        [3, 1],
        [logOf.length - 1, 5],
        [logOf.length, 5],
        [-1, 2],
        [1.5, 2],
      ] as const) {
        const from = Math.max(0, Math.floor(after))
        expect([after, limit, await store.groupHistory!(groupId, after, limit)]).toEqual([after, limit, logOf.slice(from, from + limit)])
      }
      expect(await store.groupHistory!('urn:weft:test:group:absent', 0, 10)).toEqual([])
    })

    it('keeps one checkpoint, exactly as saved, replaced by the next', async () => {
      const store = await filled()
      expect(await store.checkpoint!()).toBeUndefined()
      await store.saveCheckpoint!(checkpointAt(5, 1))
      expect(await store.checkpoint!()).toEqual(checkpointAt(5, 1))
      await store.saveCheckpoint!(checkpointAt(all.length, 2))
      const kept = (await store.checkpoint!())!
      expect(kept.manifest).toEqual(checkpointAt(all.length, 2).manifest)
      expect([...kept.image]).toEqual([...checkpointAt(all.length, 2).image])
      // Outside the retained history: refused, the kept one stays.
      await refuses(() => store.saveCheckpoint!(checkpointAt(all.length + 1, 3)))
      await refuses(() => store.saveCheckpoint!(checkpointAt(0, 3)))
      expect([...(await store.checkpoint!())!.image]).toEqual([...checkpointAt(all.length, 2).image])
    })
  })
}
