/**
 * Delivery's reads of the log (§16): paged replay, the answer from below a compaction point with
 * the snapshot to start from, and the ACK Cursors that replay and subscribe resume from.
 */
import { ProtocolError } from '@weft/codec'
import { validators } from '@weft/validators'
import { cast, T0 } from '@weft/testkit/fixtures'
import { describe, expect, it } from 'vitest'
import { A, B, BOTH, codeOf, enrol, range, recorder, setup } from '../../test/fixtures-delivery.js'
import { createMemoryCursorStore } from './cursors.js'
import { createDelivery } from './delivery.js'

/** The ProtocolError `run` throws, after checking its wire form against error.schema.json (§19). */
function schemaValidError(run: () => unknown): ProtocolError {
  try {
    run()
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error
    expect(validators.error.errors(error.toWire(T0))).toEqual([])
    return error
  }
  throw new Error('expected a ProtocolError')
}

describe('paged replay (§16)', () => {
  it('pages with hasMore and nextAfterSequence and never truncates silently', () => {
    const { fake, delivery, worker } = setup({ pageSize: 4 })
    fake.fill(A, 10)
    const pages: number[][] = []
    let after = 0
    for (;;) {
      const page = delivery.replay(worker, A, after, 100)
      pages.push(page.events.map((e) => e.sequence!))
      expect(page.head).toBe(10)
      after = page.nextAfterSequence
      if (!page.hasMore) break
    }
    expect(pages).toEqual([range(1, 4), range(5, 8), range(9, 10)])
    expect(delivery.replay(worker, A, 10)).toEqual({
      events: [],
      nextAfterSequence: 10,
      hasMore: false,
      head: 10,
    })
    expect(delivery.replay(worker, A, 2, 3).events.map((e) => e.sequence)).toEqual([3, 4, 5])
  })

  it('refuses a bad limit and a position beyond the head', () => {
    const { fake, delivery, worker } = setup()
    fake.fill(A, 2)
    expect(codeOf(() => delivery.replay(worker, A, 0, 0)).code).toBe('INVALID_COMMAND')
    expect(codeOf(() => delivery.replay(worker, A, 0, 1.5)).code).toBe('INVALID_COMMAND')
    expect(codeOf(() => delivery.replay(worker, A, 3)).code).toBe('INVALID_COMMAND')
    expect(codeOf(() => delivery.replay(worker, A, -2)).code).toBe('INVALID_COMMAND')
  })
})

describe('replay below a compaction point (§16)', () => {
  it('answers subscribe and replay from below it with CURSOR_TOO_OLD and the snapshot reference, registering nothing [error CURSOR_TOO_OLD]', () => {
    const { fake, delivery, worker } = setup({ pageSize: 4 })
    fake.fill(A, 8)
    fake.fill(B, 2)
    const record = fake.compact(A, 5)
    const refused = codeOf(() => delivery.subscribe(worker, BOTH, recorder().handlers))
    expect(refused.code).toBe('CURSOR_TOO_OLD')
    expect(refused.details).toEqual({
      groupId: A,
      afterSequence: 0,
      snapshotId: record.snapshot.snapshotId,
      throughSequence: 5,
      snapshotHash: record.snapshotHash,
      stateHash: record.snapshot.stateHash,
      oldestSequence: 6,
    })
    // The refused subscription registered no Group: a later commit reaches nobody.
    const r = recorder()
    delivery.subscribe(worker, [{ groupId: B, afterSequence: 2 }], r.handlers)
    fake.fill(A, 1)
    expect(r.seq(A)).toEqual([])
    expect(codeOf(() => delivery.replay(worker, A, 4)).code).toBe('CURSOR_TOO_OLD')
    // §16, error.schema.json: the snapshot reference is the error's `snapshotArtifactHash` member too.
    for (const run of [() => delivery.subscribe(worker, BOTH, recorder().handlers), () => delivery.replay(worker, A, 4)]) {
      const error = schemaValidError(run)
      expect([error.code, error.snapshotArtifactHash, error.toWire(T0).snapshotArtifactHash]).toEqual(['CURSOR_TOO_OLD', record.snapshotHash, record.snapshotHash])
    }
    expect(new ProtocolError('CURSOR_TOO_OLD', 'x').retryable).toBe(false)
    // From the snapshot sequence on, the online log serves as before.
    expect(delivery.replay(worker, A, 5).events.map((e) => e.sequence)).toEqual(range(6, 9))
    const after = recorder()
    delivery.subscribe(worker, [{ groupId: A, afterSequence: 5 }], after.handlers)
    expect(after.seq(A)).toEqual(range(6, 9))
  })

  it('answers from the ACK Cursor too, and never for a late joiner whose visibility starts past the point', () => {
    const { fake, a, delivery, worker } = setup()
    fake.fill(A, 6)
    delivery.ack(worker, [{ groupId: A, sequence: 2 }])
    fake.compact(A, 4)
    expect(codeOf(() => delivery.replay(worker, A)).code).toBe('CURSOR_TOO_OLD')
    enrol(a, cast.worker2, { visibilityStartSequence: 5 })
    expect(delivery.replay(cast.worker2.actor, A, 0).events.map((e) => e.sequence)).toEqual([6])
  })

  it('ends a Group still catching up when the log is compacted under it, with the reference; other Groups flow on', () => {
    const { fake, delivery, worker } = setup({ pageSize: 2 })
    fake.fill(A, 6)
    const r = recorder((event, subscription) => {
      if (event.groupId === A && event.sequence === 2) subscription.pause(A)
    })
    const subscription = delivery.subscribe(worker, BOTH, r.handlers)
    expect(r.seq(A)).toEqual([1, 2])
    fake.compact(A, 4)
    subscription.resume(A)
    expect(subscription.status(A)).toBe('ended')
    expect(r.errors.map((e) => [e.groupId, e.code, e.details?.['throughSequence']])).toEqual([[A, 'CURSOR_TOO_OLD', 4]])
    fake.fill(B, 2)
    fake.fill(A, 1)
    expect(r.seq(B)).toEqual([1, 2])
    expect(r.seq(A)).toEqual([1, 2])
  })

  it('hands out the snapshot and its state image to readers of the Group only', () => {
    const { fake, delivery, worker } = setup()
    fake.fill(A, 3)
    expect(delivery.snapshot(worker, A)).toBeUndefined()
    const record = fake.compact(A, 3)
    expect(delivery.snapshot(worker, A)).toEqual({ snapshot: record.snapshot, image: record.image })
    expect(codeOf(() => delivery.snapshot(cast.worker3.actor, A)).code).toBe('GROUP_NOT_FOUND')
  })
})

describe('ACK Cursors (§16)', () => {
  it('move forward only, never beyond the head, and are checked all before any is stored', () => {
    const { fake, delivery, worker } = setup()
    fake.fill(A, 5)
    fake.fill(B, 2)
    expect(delivery.cursor(worker, A)).toBe(0)
    expect(
      delivery.ack(worker, [
        { groupId: A, sequence: 4 },
        { groupId: B, sequence: 1 },
      ]),
    ).toEqual([
      { groupId: A, sequence: 4 },
      { groupId: B, sequence: 1 },
    ])
    expect(delivery.ack(worker, [{ groupId: A, sequence: 2 }])).toEqual([{ groupId: A, sequence: 4 }])
    expect(delivery.cursor(worker, A)).toBe(4)
    expect(
      codeOf(() =>
        delivery.ack(worker, [
          { groupId: B, sequence: 2 },
          { groupId: A, sequence: 6 },
        ]),
      ).code,
    ).toBe('INVALID_COMMAND')
    expect([delivery.cursor(worker, A), delivery.cursor(worker, B)]).toEqual([4, 1])
  })

  it('are kept per subscriber and Group, in the given CursorStore', () => {
    const store = createMemoryCursorStore()
    const { fake, a, delivery, worker } = setup({ cursorStore: store })
    enrol(a, cast.worker2)
    fake.fill(A, 3)
    delivery.ack(worker, [{ groupId: A, sequence: 3 }])
    expect(store.get(worker, A)).toBe(3)
    expect(store.get(cast.worker2.actor, A)).toBeUndefined()
    expect(delivery.cursor(cast.worker2.actor, A)).toBe(0)
    expect(createDelivery(fake.authority, { cursorStore: store }).cursor(worker, A)).toBe(3)
  })

  it('are where replay and subscribe resume when no position is given', () => {
    const { fake, delivery, worker } = setup({ pageSize: 10 })
    fake.fill(A, 5)
    delivery.ack(worker, [{ groupId: A, sequence: 3 }])
    expect(delivery.replay(worker, A).events.map((e) => e.sequence)).toEqual([4, 5])
    const r = recorder()
    delivery.subscribe(worker, [{ groupId: A }], r.handlers)
    expect(r.seq(A)).toEqual([4, 5])
  })
})
