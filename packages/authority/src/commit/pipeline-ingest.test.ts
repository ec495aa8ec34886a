import { describe, expect, it } from 'vitest'
import { agentCard, cast, testRegistry, seededRandom, signed } from '@weft/testkit/fixtures'
import { promote, reach, started, type World } from '@weft/testkit/world'
import { createAuthority } from '../authority.js'
import { actorKey } from '../model.js'
import type { AcceptedTransaction, Authority } from './pipeline.js'
import { createMemoryStore, type AuthorityStore } from '../log/store.js'

/** `store`, with every transaction it accepted pushed onto `into`. */
function recording(store: AuthorityStore, into: AcceptedTransaction[]): AuthorityStore {
  return {
    ...store,
    appendTransaction(events, receipt) {
      store.appendTransaction(events, receipt)
      into.push({ events, receipt })
    },
  }
}

/** A second Authority of the world's Organization (same keys, clock and policy) over `store`. */
function peer(w: World, store: AuthorityStore): Authority {
  return createAuthority({
    registry: testRegistry(),
    keys: { authority: { type: 'service', id: cast.authority.actor.id }, signingKey: cast.authority.key },
    clock: { now: () => w.clock.nowMs },
    random: seededRandom(7),
    policy: { controlPlane: [cast.controlPlane.actor.id] },
    store,
  })
}

/** A world run across the Organization log and two Groups, with every accepted transaction recorded. */
async function recordedWorld(): Promise<{ w: World; log: AcceptedTransaction[] }> {
  const log: AcceptedTransaction[] = []
  const w = await started({ store: recording(createMemoryStore(), log) })
  await reach(w, 'verified')
  await promote(w, await reach(w, 'active'))
  return { w, log }
}

/** The transactions as a database hands them back: parsed JSON, neither frozen nor shared. */
const parsed = (log: readonly AcceptedTransaction[]): AcceptedTransaction[] => JSON.parse(JSON.stringify(log)) as AcceptedTransaction[]

describe('Authority.ingest', () => {
  it('folds transactions accepted elsewhere into the same state, log and receipts, without running a handler', async () => {
    const { w, log } = await recordedWorld()
    const store = createMemoryStore()
    const b = peer(w, store)
    const seen: string[] = []
    b.onCommit((events) => seen.push(...events.map((e) => e.eventId)))
    b.ingest(parsed(log))

    expect(b.state).toEqual(w.authority.state)
    expect(b.replayState()).toEqual(b.state)
    expect(b.organizationEvents()).toEqual(w.authority.organizationEvents())
    for (const groupId of w.authority.state.groups.keys()) expect(b.events(groupId)).toEqual(w.authority.events(groupId))
    // Every ingested Event reached the commit listeners once, in acceptance order.
    expect(seen).toEqual(log.flatMap((t) => t.events.map((e) => e.eventId)))
    const last = log.at(-1)!
    expect(store.receipt(actorKey(last.receipt.actor), last.receipt.actionId)).toEqual(JSON.parse(JSON.stringify(last.receipt)))
    // The ingested Events are frozen like accepted ones (§4.6).
    expect(Object.isFrozen(store.groupEvents(w.groupId)[0]!.payload)).toBe(true)
  })

  it('answers a retry of a Command accepted elsewhere with the original receipt (§15.1)', async () => {
    const { w } = await recordedWorld()
    const log: AcceptedTransaction[] = []
    const a = peer(w, recording(createMemoryStore(), log))
    const b = peer(w, createMemoryStore())
    const bytes = signed('ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(cast.worker1, 2) }, cast.controlPlane, {}, w.clock)
    const original = await a.submit(bytes)
    b.ingest(parsed(log))
    const retried = await b.submit(bytes)
    expect(retried).toMatchObject({ duplicate: true, actionId: original.actionId })
    expect(retried.events).toEqual(original.events)
    expect(b.organizationEvents()).toHaveLength(1)
  })

  it('refuses a transaction that would leave a Group sequence gap, changing nothing', async () => {
    const { w, log } = await recordedWorld()
    const b = peer(w, createMemoryStore())
    const transactions = parsed(log)
    const inGroup = (t: AcceptedTransaction): boolean => t.events.some((e) => e.groupId === w.groupId && e.sequence! > 1)
    const cut = transactions.findIndex(inGroup)
    const next = transactions.findIndex((t, i) => i > cut && inGroup(t))
    b.ingest(transactions.slice(0, cut))
    const before = structuredClone(b.state)
    const heard: unknown[] = []
    b.onCommit((events) => heard.push(events))
    // Skipping the transaction at `cut` makes the Group's next Event jump its sequence.
    expect(() => b.ingest([transactions[next]!])).toThrow(/sequence/)
    expect(b.state).toEqual(before)
    expect(b.replayState()).toEqual(b.state)
    expect(heard).toEqual([])
  })
})
