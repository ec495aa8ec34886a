import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ProtocolError, UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import { SELF, groupLog, lifecycle } from '../test/events.js'
import type { WorkerStore } from './seams.js'
import { createInbox, type Inbox } from './inbox.js'
import { createMemoryWorkerStore } from './memory-store.js'
import { createProjection, type Projection } from './projection.js'

const RUNS = Number(process.env['WEFT_FUZZ_RUNS'] ?? 100)
const run = lifecycle()
const logs = [run.alpha, run.beta, run.gamma]
/** The three Group logs interleaved round-robin: one valid in-order delivery. */
const inOrder: readonly Event[] = Array.from({ length: Math.max(...logs.map((l) => l.events.length)) }, (_, i) => logs.flatMap((l) => l.events[i] ?? [])).flat()
const alphaEvents = run.alpha.events
const G = run.alpha.groupId

/** A memory store whose appends are recorded and can be made to fail. */
function spyStore(): WorkerStore & { appends: Event[][]; failNext: boolean } {
  const store = createMemoryWorkerStore()
  const spy = Object.assign(Object.create(null) as object, store, {
    appends: [] as Event[][],
    failNext: false,
    appendEvents(groupId: string, events: readonly Event[]) {
      if (spy.failNext) {
        spy.failNext = false
        throw new Error('disk full')
      }
      store.appendEvents(groupId, events)
      spy.appends.push([...events])
    },
  })
  return spy
}

interface Rig {
  readonly store: WorkerStore & { appends: Event[][]; failNext: boolean }
  readonly projection: Projection
  readonly inbox: Inbox
  readonly applied: Event[][]
}

function rig(options: { maxHeldPerGroup?: number; store?: Rig['store'] } = {}): Rig {
  const store = options.store ?? spyStore()
  const projection = createProjection(SELF)
  const applied: Event[][] = []
  const inbox = createInbox({ store, projection, onApplied: (run) => applied.push([...run]), ...(options.maxHeldPerGroup === undefined ? {} : { maxHeldPerGroup: options.maxHeldPerGroup }) })
  return { store, projection, inbox, applied }
}

/** What a rig holds, for comparing two deliveries: logs, cursors and the view without its change set. */
function snapshot(r: Rig): unknown {
  return {
    logs: logs.map((l) => r.store.events(l.groupId)),
    cursors: logs.map((l) => [r.inbox.cursor(l.groupId), r.store.cursor(l.groupId)]),
    groups: r.projection.view.groups,
  }
}

const reference = rig()
reference.inbox.receiveMany(inOrder)

/** Any order of the log with any number of repeats of its Events. */
const deliveries = (events: readonly Event[]) =>
  fc.array(fc.nat({ max: events.length - 1 }), { maxLength: 60 }).chain((repeats) => {
    const all = [...events, ...repeats.map((i) => events[i]!)]
    return fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length })
  })

/** Hands `events` to the inbox one at a time, or in batches of `batch`. */
function deliver(inbox: Inbox, events: readonly Event[], batch: number): void {
  if (batch <= 1) for (const event of events) inbox.receive(event)
  else for (let i = 0; i < events.length; i += batch) inbox.receiveMany(events.slice(i, i + batch))
}

describe('createInbox', () => {
  it('applies an in-order log event by event, storing and reporting each', () => {
    const r = rig()
    expect(alphaEvents.map((e) => r.inbox.receive(e))).toEqual(alphaEvents.map(() => 'applied'))
    expect(r.inbox.cursor(G)).toBe(alphaEvents.length)
    expect(r.store.events(G)).toEqual(alphaEvents)
    expect(r.applied).toEqual(alphaEvents.map((e) => [e]))
    expect(r.projection.group(G)?.head).toBe(alphaEvents.length)
  })

  it('starts a late joiner’s Group after its visibility start (§8), folding what was held beyond it', () => {
    const r = rig()
    // The feed replays from the visibility start: Events 3.. arrive before the start is known.
    expect(r.inbox.receive(alphaEvents[3]!)).toBe('buffered')
    expect(r.inbox.receive(alphaEvents[2]!)).toBe('buffered')
    expect(r.inbox.startAfter(G, 2)).toBe(2)
    expect(r.inbox.cursor(G)).toBe(4)
    expect(r.store.cursor(G)).toBe(4)
    expect(r.store.events(G)).toEqual(alphaEvents.slice(2, 4))
    expect(r.projection.group(G)?.head).toBe(4)
    expect(r.inbox.startAfter(G, 3)).toBe(0)
    expect(() => r.inbox.startAfter(G, 9)).toThrow(UsageError)
    expect(r.inbox.receive(alphaEvents[4]!)).toBe('applied')
  })

  it('rebuilds a late joiner’s projection from a store whose log starts after sequence 1', () => {
    const r = rig()
    r.inbox.startAfter(G, 2)
    for (const event of alphaEvents.slice(2, 5)) r.inbox.receive(event)
    const fresh = createProjection(SELF)
    const again = createInbox({ store: r.store, projection: fresh })
    expect(again.rebuild()).toBe(3)
    expect(fresh.group(G)?.head).toBe(5)
    expect(fresh.view.groups.get(G)?.work).toEqual(r.projection.view.groups.get(G)?.work)
    // A started log with nothing stored yet restarts at its start too.
    const empty = rig()
    empty.inbox.startAfter(G, 4)
    const later = createProjection(SELF)
    createInbox({ store: empty.store, projection: later }).rebuild()
    expect(later.group(G)?.head).toBe(4)
  })

  it('drops a repeated Event, stored or held', () => {
    const r = rig()
    r.inbox.receive(alphaEvents[0]!)
    expect(r.inbox.receive(alphaEvents[0]!)).toBe('duplicate')
    expect(r.inbox.receive(structuredClone(alphaEvents[0]!))).toBe('duplicate')
    expect(r.inbox.receive(alphaEvents[2]!)).toBe('buffered')
    expect(r.inbox.receive(structuredClone(alphaEvents[2]!))).toBe('duplicate')
    expect(r.inbox.pending(G)).toBe(1)
    expect(r.store.appends).toHaveLength(1)
  })

  it('holds Events behind a gap and stores the contiguous run in one append when the gap closes', () => {
    const r = rig()
    r.inbox.receive(alphaEvents[0]!)
    expect([alphaEvents[3]!, alphaEvents[2]!].map((e) => r.inbox.receive(e))).toEqual(['buffered', 'buffered'])
    expect(r.inbox.cursor(G)).toBe(1)
    expect(r.store.cursor(G)).toBe(1)
    expect(r.inbox.pending(G)).toBe(2)
    expect(r.projection.group(G)?.head).toBe(1)
    expect(r.inbox.receive(alphaEvents[1]!)).toBe('applied')
    expect(r.inbox.cursor(G)).toBe(4)
    expect(r.inbox.pending(G)).toBe(0)
    expect(r.store.appends.map((a) => a.map((e) => e.sequence))).toEqual([[1], [2, 3, 4]])
    expect(r.applied.at(-1)).toEqual(alphaEvents.slice(1, 4))
  })

  it('stores each Group’s run of a batch with one append and tallies the batch', () => {
    const r = rig()
    const tally = r.inbox.receiveMany([...inOrder, inOrder[0]!])
    expect(tally).toEqual({ applied: inOrder.length, duplicate: 1, buffered: 0 })
    expect(r.store.appends.map((a) => a[0]!.groupId)).toEqual(logs.map((l) => l.groupId))
    const gapped = rig()
    expect(gapped.inbox.receiveMany(alphaEvents.slice(1))).toEqual({ applied: 0, duplicate: 0, buffered: alphaEvents.length - 1 })
    expect(gapped.inbox.receiveMany([alphaEvents[0]!])).toEqual({ applied: alphaEvents.length, duplicate: 0, buffered: 0 })
  })

  it('refuses another Event at a stored or held sequence, and one Event ID at two sequences (§15.2)', () => {
    const r = rig()
    r.inbox.receive(alphaEvents[0]!)
    r.inbox.receive(alphaEvents[2]!)
    const forged = (e: Event, change: Partial<Event>): Event => ({ ...e, ...change })
    const refusals = [
      forged(alphaEvents[0]!, { payload: { ...alphaEvents[0]!.payload, extra: 1 } }),
      forged(alphaEvents[0]!, { eventId: 'urn:weft:test:event:other' }),
      forged(alphaEvents[2]!, { occurredAt: '2030-01-01T00:00:00.000Z' }),
      forged(alphaEvents[3]!, { eventId: alphaEvents[2]!.eventId }),
      forged(alphaEvents[1]!, { eventId: alphaEvents[2]!.eventId }),
    ]
    for (const event of refusals) {
      const error = (() => {
        try {
          r.inbox.receive(event)
        } catch (e) {
          return e
        }
        return undefined
      })()
      expect(error, event.eventId).toBeInstanceOf(ProtocolError)
      expect((error as ProtocolError).code).toBe('PROTOCOL_VIOLATION')
    }
    expect(r.inbox.cursor(G)).toBe(1)
    expect(r.inbox.pending(G)).toBe(1)
  })

  it('stores and folds what a batch accepted before a violation, then throws', () => {
    const r = rig()
    const bad = { ...alphaEvents[1]!, eventId: 'urn:weft:test:event:forged' }
    expect(() => r.inbox.receiveMany([alphaEvents[0]!, alphaEvents[1]!, bad])).toThrow(ProtocolError)
    expect(r.inbox.cursor(G)).toBe(2)
    expect(r.projection.group(G)?.head).toBe(2)
  })

  it('refuses an Organization-scoped Event', () => {
    const { groupId: _g, sequence: _s, aggregateRevision: _r, ...bare } = alphaEvents[0]!
    expect(() => rig().inbox.receive({ ...bare, kind: 'ext.missionweaveprotocol.identity.session_opened', payload: { agentId: SELF, sessionEpoch: 2 } })).toThrow(UsageError)
  })

  it('bounds the Events held per Group, dropping the farthest, which replay delivers again', () => {
    const r = rig({ maxHeldPerGroup: 3 })
    for (const event of alphaEvents.slice(1, 7)) r.inbox.receive(event)
    expect(r.inbox.pending(G)).toBe(3)
    // The nearest three (sequences 2-4) were kept: closing the gap applies through 4 only.
    expect(r.inbox.receive(alphaEvents[0]!)).toBe('applied')
    expect(r.inbox.cursor(G)).toBe(4)
    expect(r.inbox.pending(G)).toBe(0)
    // Replay from the Cursor brings the rest.
    r.inbox.receiveMany(alphaEvents.slice(r.inbox.cursor(G)))
    expect(r.store.events(G)).toEqual(alphaEvents)
    expect(() => rig({ maxHeldPerGroup: 0 })).toThrow(UsageError)
    expect(() => rig({ maxHeldPerGroup: 1.5 })).toThrow(UsageError)
  })

  it('folds nothing when the store refuses an append, and stores the held run with the next delivery of the Group', () => {
    const r = rig()
    r.inbox.receive(alphaEvents[0]!)
    r.inbox.receive(alphaEvents[2]!)
    r.store.failNext = true
    expect(() => r.inbox.receive(alphaEvents[1]!)).toThrow('disk full')
    expect([r.inbox.cursor(G), r.store.cursor(G), r.projection.group(G)?.head, r.inbox.pending(G)]).toEqual([1, 1, 1, 2])
    expect(r.inbox.receive(alphaEvents[3]!)).toBe('applied')
    expect([r.inbox.cursor(G), r.inbox.pending(G)]).toEqual([4, 0])
    r.store.failNext = true
    expect(() => r.inbox.receive(alphaEvents[4]!)).toThrow('disk full')
    // A repeat of the Event the store refused moves the run on.
    expect(r.inbox.receive(alphaEvents[4]!)).toBe('applied')
    expect(r.inbox.cursor(G)).toBe(5)
    r.inbox.receiveMany(alphaEvents.slice(1))
    expect(r.store.events(G)).toEqual(alphaEvents)
    expect(r.projection.group(G)?.head).toBe(alphaEvents.length)
  })

  it('property: any order with any repeats yields the store log, Cursors and projection of in-order delivery', () => {
    fc.assert(
      fc.property(deliveries(inOrder), fc.integer({ min: 1, max: 40 }), (events, batch) => {
        const r = rig()
        deliver(r.inbox, events, batch)
        expect(snapshot(r)).toEqual(snapshot(reference))
        for (const l of logs) expect(r.inbox.pending(l.groupId)).toBe(0)
      }),
      { numRuns: RUNS },
    )
  })

  it('property: a missing Event stops its Group’s Cursor right before it, whatever else arrives', () => {
    const arbitrary = fc
      .uniqueArray(fc.nat({ max: inOrder.length - 1 }), { minLength: 1, maxLength: 6 })
      .chain((missing) => fc.tuple(fc.constant(missing), deliveries(inOrder.filter((_, i) => !missing.includes(i))), fc.integer({ min: 1, max: 40 })))
    fc.assert(
      fc.property(arbitrary, ([missing, events, batch]) => {
        const r = rig()
        deliver(r.inbox, events, batch)
        for (const l of logs) {
          const lost = missing.map((i) => inOrder[i]!).filter((e) => e.groupId === l.groupId)
          const cursor = lost.length === 0 ? l.events.length : Math.min(...lost.map((e) => e.sequence!)) - 1
          expect(r.inbox.cursor(l.groupId)).toBe(cursor)
          expect(r.store.cursor(l.groupId)).toBe(cursor)
          expect(r.projection.group(l.groupId)?.head ?? 0).toBe(cursor)
          expect(r.store.events(l.groupId)).toEqual(l.events.slice(0, cursor))
          expect(r.inbox.pending(l.groupId)).toBe(l.events.length - cursor - lost.length)
        }
      }),
      { numRuns: RUNS },
    )
  })

  it('rebuilds from the store a projection equal to the live one (§11.1)', () => {
    const rebuilt = rig({ store: reference.store })
    expect(rebuilt.inbox.rebuild()).toBe(inOrder.length)
    expect(snapshot(rebuilt)).toEqual(snapshot(reference))
    expect(rebuilt.projection.readyForMe()).toEqual(reference.projection.readyForMe())
    // Nothing left to fold: a second rebuild is a no-op, and the inbox continues from the store's Cursors.
    expect(rebuilt.inbox.rebuild()).toBe(0)
    expect(rebuilt.inbox.receive(alphaEvents.at(-1)!)).toBe('duplicate')
  })

  it('rebuilds a log longer than one page of the store', () => {
    const big = groupLog('big').genesis().authorize('w1').offer('w1').accept('w1')
    for (let i = 0; i < 5000; i++) big.message(`note ${i}`)
    big.start('w1').checkpoint('w1')
    const live = rig()
    live.inbox.receiveMany(big.events)
    const rebuilt = rig({ store: live.store })
    expect(rebuilt.inbox.rebuild()).toBe(big.events.length)
    expect(rebuilt.projection.view.groups).toEqual(live.projection.view.groups)
    expect(rebuilt.projection.readyForMe().map((w) => w.workItemId)).toEqual([big.id('w1')])
  })

  it('re-reads the store’s Cursors on rebuild and settles held Events the store already covers', () => {
    const shared = spyStore()
    const stale = rig({ store: shared })
    stale.inbox.receive(alphaEvents[2]!)
    expect(stale.inbox.pending(G)).toBe(1)
    // Another writer filled the store meanwhile (an inbox assumes it is the only one; rebuild re-syncs).
    rig({ store: shared }).inbox.receiveMany(alphaEvents)
    expect(stale.inbox.rebuild()).toBe(alphaEvents.length)
    expect([stale.inbox.cursor(G), stale.inbox.pending(G)]).toEqual([alphaEvents.length, 0])
  })

  it('gives the same queues after local state is deleted and the same Events are replayed', () => {
    const fresh = rig()
    fresh.inbox.receiveMany([...inOrder].reverse())
    const ready = (r: Rig) =>
      r.projection
        .readyForMe()
        .map((w) => w.workItemId)
        .sort()
    expect(ready(fresh)).toEqual(ready(reference))
    expect(snapshot(fresh)).toEqual(snapshot(reference))
  })
})
