import { ProtocolError, sha256Tagged, UsageError, utf8Encode } from '@weft/codec'
import type { Event } from '@weft/spec'
import { validators } from '@weft/validators'
import { describe, expect, it } from 'vitest'
import { compactHead, headSnapshot, post, restart, retained, startedKept, type KeptWorld } from '@weft/testkit/recovery'
import { cast } from '@weft/testkit/fixtures'
import { createWorld } from '@weft/testkit/world'
import { reducers } from '../domain/compose.js'
import { createDelivery } from '../delivery/delivery.js'
import { fold } from '../commit/pipeline.js'
import { buildGroupSnapshot, signGroupSnapshot, snapshotArtifactHash, snapshotContent, verifySnapshotImage } from './snapshots.js'
import type { SnapshotRecord } from './store.js'

/** What `run` throws (fails when it returns or throws anything but a ProtocolError). */
function protocolError(run: () => unknown): ProtocolError {
  try {
    run()
  } catch (error) {
    if (error instanceof ProtocolError) return error
    throw error
  }
  throw new Error('expected a ProtocolError')
}

/** The §19 code and details of what `run` throws (fails when it returns). */
function thrown(run: () => unknown): { code: string; details: Record<string, unknown> | undefined } {
  const { code, details } = protocolError(run)
  return { code, details }
}

/**
 * Expects `run` to answer `CURSOR_TOO_OLD` (§16) with `record` as the snapshot reference, in the
 * schema's own member as well as in `details`, and the error document to be valid (§19).
 */
function expectTooOld(run: () => unknown, record: SnapshotRecord): void {
  const error = protocolError(run)
  expect([error.code, error.snapshotArtifactHash, error.details?.['snapshotHash']]).toEqual(['CURSOR_TOO_OLD', record.snapshotHash, record.snapshotHash])
  const wire = error.toWire('2026-07-15T00:00:00Z')
  expect(validators.error.errors(wire)).toEqual([])
  expect(wire.snapshotArtifactHash).toBe(record.snapshotHash)
}

/** The control plane's signed snapshot of `kept`'s Group at `through`, from `authority.buildSnapshot`. */
function snapshotAt(kept: KeptWorld, through: number, snapshotId = `urn:weft:test:snapshot:at-${through}`) {
  const { w } = kept
  const unsigned = w.authority.buildSnapshot(w.groupId, through, { snapshotId, createdBy: { type: 'service', id: cast.controlPlane.actor.id }, createdAt: new Date(w.clock.nowMs).toISOString() })
  return signGroupSnapshot(unsigned, cast.controlPlane.key)
}

/** The Group's state at `through`, folded independently from the store's retained history. */
function groupAt(kept: KeptWorld, through: number) {
  const all = [...kept.store.allEvents()]
  const last = all.findIndex((e) => e.groupId === kept.w.groupId && e.sequence === through)
  return fold(all.slice(0, last + 1), reducers).groups.get(kept.w.groupId)!
}

/** Sequences of `events`. */
function sequences(events: readonly Event[]): number[] {
  return events.map((e) => e.sequence!)
}

/** 1, 2, …, n. */
function oneTo(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1)
}

/** A kept world with `n` more Messages in its Group. */
async function withMessages(n: number): Promise<KeptWorld> {
  const kept = await startedKept()
  for (let i = 0; i < n; i++) await post(kept.w)
  return kept
}

describe('paged reads of the online log (§16)', () => {
  it('page with hasMore and nextAfterSequence up to the head, never cutting silently', async () => {
    const { w } = await withMessages(4)
    const head = w.group().head
    const seen: number[] = []
    let after = 0
    for (;;) {
      const page = w.authority.eventPage(w.groupId, after, 3)
      expect(page.events.length).toBeLessThanOrEqual(3)
      expect(page.head).toBe(head)
      seen.push(...page.events.map((e) => e.sequence!))
      after = page.nextAfterSequence
      if (!page.hasMore) break
    }
    expect(seen).toEqual(Array.from({ length: head }, (_, i) => i + 1))
    expect(w.authority.eventPage(w.groupId, head, 3)).toEqual({ events: [], nextAfterSequence: head, hasMore: false, head })
    for (const bad of [0, -1, 1.5]) expect(() => w.authority.eventPage(w.groupId, 0, bad)).toThrow(UsageError)
  })
})

describe('compaction behind a signed Group Snapshot (§7.4, §16)', () => {
  it('takes Events up to the snapshot off the online log; a read from below is CURSOR_TOO_OLD with the reference', async () => {
    const kept = await withMessages(3)
    const { w, store } = kept
    const before = w.authority.replayState()
    const through = w.group().head
    const record = compactHead(kept, 'urn:weft:test:snapshot:first')
    expect(record).toMatchObject({ groupId: w.groupId, throughSequence: through, snapshotHash: snapshotArtifactHash(record.snapshot) })
    expect(sha256Tagged(utf8Encode(record.image))).toBe(record.snapshot.stateHash)
    expect(w.authority.snapshot(w.groupId)).toBe(record)
    const tooOld = thrown(() => w.authority.events(w.groupId))
    expect(tooOld).toEqual({
      code: 'CURSOR_TOO_OLD',
      details: {
        groupId: w.groupId,
        afterSequence: 0,
        snapshotId: 'urn:weft:test:snapshot:first',
        throughSequence: through,
        snapshotHash: record.snapshotHash,
        stateHash: record.snapshot.stateHash,
        oldestSequence: through + 1,
      },
    })
    expect(thrown(() => w.authority.eventPage(w.groupId, through - 1, 10)).code).toBe('CURSOR_TOO_OLD')
    expectTooOld(() => w.authority.events(w.groupId), record)
    expect(w.authority.events(w.groupId, through)).toEqual([])
    // The state is unchanged and still the fold of the retained history; the store serves only the online part.
    expect(w.authority.state).toEqual(before)
    expect(w.authority.replayState()).toEqual(before)
    expect(store.groupEvents(w.groupId, 0)).toEqual([])
    expect(retained(store, w.groupId).map((e) => e.sequence)).toEqual(Array.from({ length: through }, (_, i) => i + 1))
    // The log continues from the head.
    await post(w)
    expect(w.authority.events(w.groupId, through).map((e) => e.sequence)).toEqual([through + 1])
  })

  it('accepts a snapshot that lags the head, checking it against the state at its own sequence', async () => {
    const kept = await withMessages(2)
    const { w } = kept
    const snapshot = headSnapshot(kept, 'urn:weft:test:snapshot:lagging')
    await post(w)
    await post(w)
    const record = w.authority.compact(w.groupId, snapshot)
    expect(record.throughSequence).toBe(snapshot.throughSequence)
    expect(sha256Tagged(utf8Encode(record.image))).toBe(snapshot.stateHash)
    expect(w.authority.events(w.groupId, snapshot.throughSequence).map((e) => e.sequence)).toEqual([snapshot.throughSequence + 1, snapshot.throughSequence + 2])
  })

  it('moves forward only: a second compaction must pass the first one', async () => {
    const kept = await withMessages(1)
    const first = headSnapshot(kept, 'urn:weft:test:snapshot:a')
    // The signed text is accepted as well as the object.
    kept.w.authority.compact(kept.w.groupId, JSON.stringify(first))
    expect(thrown(() => kept.w.authority.compact(kept.w.groupId, first)).code).toBe('INVALID_COMMAND')
    await post(kept.w)
    expect(compactHead(kept, 'urn:weft:test:snapshot:b').throughSequence).toBe(first.throughSequence + 1)
  })

  it('refuses a snapshot that does not verify, of another Group, or beyond the head, changing nothing', async () => {
    const kept = await withMessages(1)
    const { w } = kept
    const good = headSnapshot(kept, 'urn:weft:test:snapshot:good')
    const forge = (change: (s: ReturnType<typeof buildGroupSnapshot>) => ReturnType<typeof buildGroupSnapshot>) =>
      signGroupSnapshot(
        change(
          buildGroupSnapshot(w.group(), retained(kept.store, w.groupId), {
            snapshotId: 'urn:weft:test:snapshot:forged',
            createdBy: { type: 'service', id: cast.controlPlane.actor.id },
            createdAt: good.createdAt,
          }),
        ),
        cast.controlPlane.key,
      )
    const cases: [string, unknown, string][] = [
      ['tampered bytes', { ...good, stateHash: `sha256:${'e'.repeat(64)}` }, 'AUTH_INVALID_SIGNATURE'],
      ['a state hash the Group never had', forge((s) => ({ ...s, stateHash: `sha256:${'e'.repeat(64)}` })), 'INVALID_COMMAND'],
      ['Event IDs out of order', forge((s) => ({ ...s, eventIds: [...s.eventIds].reverse() })), 'INVALID_COMMAND'],
      ['another Group', { ...good, groupId: 'urn:weft:test:group:other' }, 'INVALID_COMMAND'],
      ['beyond the head', forge((s) => ({ ...s, throughSequence: s.throughSequence + 1 })), 'INVALID_COMMAND'],
    ]
    for (const [, snapshot, code] of cases) expect(thrown(() => w.authority.compact(w.groupId, snapshot as typeof good)).code).toBe(code)
    expect(thrown(() => w.authority.compact('urn:weft:test:group:nowhere', good)).code).toBe('GROUP_NOT_FOUND')
    expect(thrown(() => w.authority.compact(w.groupId, '{"groupId":"a","groupId":"b"}')).code).toBe('PROTOCOL_VIOLATION')
    expect(w.authority.snapshot(w.groupId)).toBeUndefined()
    expect(w.authority.events(w.groupId).length).toBe(w.group().head)
  })

  it('needs a store that keeps snapshots', async () => {
    const base = await startedKept()
    const { compact: _compact, snapshot: _snapshot, ...plain } = base.store
    const w = createWorld({ store: plain })
    expect(() => w.authority.compact(base.w.groupId, headSnapshot(base, 'urn:weft:test:snapshot:x'))).toThrow(UsageError)
  })
})

describe('reads after a compaction (§7.4, §16)', () => {
  it('answers events and eventPage from every position below the point with CURSOR_TOO_OLD and snapshotArtifactHash [error CURSOR_TOO_OLD]', async () => {
    const kept = await withMessages(3)
    const { w } = kept
    const record = w.authority.compact(w.groupId, snapshotAt(kept, 5))
    const head = w.group().head
    for (let after = 0; after < 5; after++) {
      expectTooOld(() => w.authority.events(w.groupId, after), record)
      expectTooOld(() => w.authority.eventPage(w.groupId, after, 2), record)
    }
    for (let after = 5; after <= head; after++) {
      expect(sequences(w.authority.events(w.groupId, after))).toEqual(oneTo(head).slice(after))
      expect(sequences(w.authority.eventPage(w.groupId, after, 100).events)).toEqual(oneTo(head).slice(after))
    }
  })

  it('reads the retained history below the point with history(), paged, as events serves it', async () => {
    const kept = await withMessages(3)
    const { w, store } = kept
    const before = w.authority.events(w.groupId)
    w.authority.compact(w.groupId, snapshotAt(kept, 6))
    const head = w.group().head
    const read: Event[] = []
    for (let after = 0, hasMore = true; hasMore; ) {
      const page = w.authority.history(w.groupId, after, 4)
      expect(page.events.length).toBeLessThanOrEqual(4)
      expect(page.head).toBe(head)
      read.push(...page.events)
      ;({ nextAfterSequence: after, hasMore } = page)
    }
    expect(read).toEqual(before)
    expect(read).toEqual(retained(store, w.groupId))
    expect(w.authority.history(w.groupId, 2, 3)).toEqual({ events: before.slice(2, 5), nextAfterSequence: 5, hasMore: true, head })
    expect(w.authority.history(w.groupId, head, 3)).toEqual({ events: [], nextAfterSequence: head, hasMore: false, head })
    // A store without the indexed read is read from its retained history.
    const { groupHistory: _groupHistory, ...plain } = store
    expect(restart(kept, plain).history(w.groupId, 0, 100).events).toEqual(before)
    for (const bad of [0, -1, 1.5]) expect(() => w.authority.history(w.groupId, 0, bad)).toThrow(UsageError)
    for (const bad of [-1, 0.5, Number.NaN]) expect(() => w.authority.history(w.groupId, bad, 10)).toThrow(UsageError)
    expect(w.authority.history('urn:weft:test:group:nowhere', 0, 10)).toEqual({ events: [], nextAfterSequence: 0, hasMore: false, head: 0 })
  })

  it('compacts at any sequence from 1 to the head, each snapshot describing the state at its own sequence', async () => {
    const kept = await withMessages(3)
    const { w } = kept
    const head = w.group().head
    const live = w.authority.state
    for (let through = 1; through <= head; through++) {
      const snapshot = snapshotAt(kept, through)
      expect(snapshot).toMatchObject({
        throughSequence: through,
        eventIds: retained(kept.store, w.groupId)
          .slice(0, through)
          .map((e) => e.eventId),
      })
      const record = w.authority.compact(w.groupId, snapshot)
      expect(JSON.parse(record.image)).toEqual(JSON.parse(JSON.stringify(snapshotContent(groupAt(kept, through)))))
      expectTooOld(() => w.authority.events(w.groupId, through - 1), record)
      expect(sequences(w.authority.events(w.groupId, through))).toEqual(oneTo(head).slice(through))
    }
    expect(w.authority.state).toBe(live)
    expect(w.authority.replayState()).toEqual(live)
  })

  it('serves a compaction in the middle of the log to subscribe, replay, events and restore [error CURSOR_TOO_OLD]', async () => {
    const kept = await withMessages(4)
    const { w } = kept
    const head = w.group().head
    const through = head - 3
    const record = w.authority.compact(w.groupId, snapshotAt(kept, through, 'urn:weft:test:snapshot:middle'))
    expect(record.throughSequence).toBe(through)
    const delivery = createDelivery(w.authority)
    const worker = cast.worker1.actor
    // From below: CURSOR_TOO_OLD with the reference, on every read.
    expectTooOld(() => w.authority.events(w.groupId, through - 1), record)
    expectTooOld(() => w.authority.eventPage(w.groupId, through - 1, 10), record)
    expectTooOld(() => delivery.replay(worker, w.groupId, through - 1), record)
    expectTooOld(() => delivery.subscribe(worker, [{ groupId: w.groupId, afterSequence: 0 }], { onEvent: () => undefined }), record)
    // From the point and above: the online log as before.
    expect(sequences(delivery.replay(worker, w.groupId, through).events)).toEqual([through + 1, through + 2, through + 3])
    const got: Event[] = []
    delivery.subscribe(worker, [{ groupId: w.groupId, afterSequence: through + 1 }], { onEvent: (e) => got.push(e) })
    expect(sequences(got)).toEqual([through + 2, through + 3])
    // Restoring the snapshot gives the state at its sequence, not at the head.
    const restored = verifySnapshotImage(delivery.snapshot(worker, w.groupId)!, w.registry)
    expect(restored.ok && restored.resumeAfterSequence).toBe(through)
    expect(restored.ok && restored.content).toEqual(JSON.parse(JSON.stringify(snapshotContent(groupAt(kept, through)))))
    expect(restored.ok && restored.content).not.toEqual(JSON.parse(JSON.stringify(snapshotContent(w.group()))))
    // A restart verifies the stored snapshot at its sequence and ends in the live state.
    const again = restart(kept)
    expect(again.state).toEqual(w.authority.state)
    expect(again.snapshot(w.groupId)).toEqual(record)
    expectTooOld(() => again.events(w.groupId, 0), record)
  })

  it('builds a snapshot only at a sequence of the Group log', async () => {
    const kept = await withMessages(1)
    const head = kept.w.group().head
    for (const bad of [0, head + 1, 1.5]) expect(() => snapshotAt(kept, bad)).toThrow(UsageError)
    expect(
      thrown(() =>
        kept.w.authority.buildSnapshot('urn:weft:test:group:nowhere', 1, {
          snapshotId: 'urn:weft:test:snapshot:x',
          createdBy: { type: 'service', id: cast.controlPlane.actor.id },
          createdAt: '2026-07-15T00:00:00Z',
        }),
      ).code,
    ).toBe('GROUP_NOT_FOUND')
  })
})
