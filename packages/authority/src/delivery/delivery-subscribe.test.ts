/**
 * Delivery's subscriptions (§8, §16, §17.3): the replay of a Group's log followed by its live
 * Events, per-Group backpressure with its retry guidance, and the options Delivery refuses.
 */
import { ProtocolError, UsageError } from '@weft/codec'
import { T0 } from '@weft/testkit/fixtures'
import { describe, expect, it } from 'vitest'
import { A, B, BOTH, codeOf, range, recorder, setup } from '../../test/fixtures-delivery.js'
import { createDelivery } from './delivery.js'

describe('subscribe: replay, then live', () => {
  it('replays after afterSequence up to the head, then delivers every later Event of every transaction', () => {
    const { fake, delivery, worker } = setup()
    fake.fill(A, 5)
    const r = recorder()
    delivery.subscribe(worker, [{ groupId: A, afterSequence: 2 }], r.handlers)
    expect(r.seq(A)).toEqual([3, 4, 5])
    fake.commit(A, [{}, {}, {}])
    expect(r.seq(A)).toEqual([3, 4, 5, 6, 7, 8])
  })

  it('queues Events committed during the replay behind it: no gap, no repeat', () => {
    const { fake, delivery, worker } = setup({ pageSize: 2 })
    fake.fill(A, 5)
    // The subscriber's own handler commits while the replay is still running.
    const r = recorder((event) => {
      if (event.sequence === 2) fake.commit(A, [{}, {}])
    })
    delivery.subscribe(worker, [{ groupId: A, afterSequence: 0 }], r.handlers)
    expect(r.seq(A)).toEqual(range(1, 7))
  })

  it('reads a long backlog page by page and delivers all of it', () => {
    const { fake, delivery, worker } = setup({ pageSize: 3 })
    fake.fill(A, 10)
    const r = recorder()
    const subscription = delivery.subscribe(worker, [{ groupId: A, afterSequence: 0 }], r.handlers)
    expect(r.seq(A)).toEqual(range(1, 10))
    expect(subscription.position(A)).toBe(10)
    expect(subscription.status(A)).toBe('live')
  })

  it('refuses a position beyond the head, a negative one and a repeated Group, registering nothing', () => {
    const { fake, delivery, worker } = setup()
    fake.fill(A, 2)
    const r = recorder()
    expect(codeOf(() => delivery.subscribe(worker, [{ groupId: A, afterSequence: 3 }], r.handlers)).code).toBe('INVALID_COMMAND')
    expect(codeOf(() => delivery.subscribe(worker, [{ groupId: A, afterSequence: -1 }], r.handlers)).code).toBe('INVALID_COMMAND')
    expect(
      codeOf(() =>
        delivery.subscribe(
          worker,
          [
            { groupId: A, afterSequence: 0 },
            { groupId: A, afterSequence: 1 },
          ],
          r.handlers,
        ),
      ).code,
    ).toBe('INVALID_COMMAND')
    expect(codeOf(() => delivery.subscribe(worker, [], r.handlers)).code).toBe('INVALID_COMMAND')
    fake.fill(A, 1)
    expect(r.seq(A)).toEqual([])
  })

  it('a handler that throws leaves its Event undelivered and pauses the Group until resume', () => {
    const { fake, delivery, worker } = setup()
    let failOnce = true
    const r = recorder((event) => {
      if (event.sequence === 2 && failOnce) {
        failOnce = false
        throw new Error('disk full')
      }
    })
    const subscription = delivery.subscribe(worker, [{ groupId: A, afterSequence: 0 }], r.handlers)
    fake.fill(A, 3)
    expect(r.seq(A)).toEqual([1])
    expect(subscription.status(A)).toBe('paused')
    subscription.resume(A)
    expect(r.seq(A)).toEqual([1, 2, 3])
  })

  it('close ends every Group of the subscription; Delivery.close detaches from the Authority', () => {
    const { fake, delivery, worker } = setup()
    const r1 = recorder()
    const r2 = recorder()
    const first = delivery.subscribe(worker, BOTH, r1.handlers)
    delivery.subscribe(worker, [{ groupId: A, afterSequence: 0 }], r2.handlers)
    first.close()
    fake.fill(A, 1)
    fake.fill(B, 1)
    expect([r1.seq(A), r1.seq(B), r2.seq(A)]).toEqual([[], [], [1]])
    expect(first.status(A)).toBe('ended')
    delivery.close()
    fake.fill(A, 1)
    expect(r2.seq(A)).toEqual([1])
    expect(r1.errors).toEqual([])
  })
})

describe('per-Group backpressure (§8, §17.3)', () => {
  it('a full buffer backpressures that Group only, with retry guidance; resume continues from the log without a gap', () => {
    const { fake, delivery, worker } = setup({
      maxBufferedPerGroup: 2,
      retryAfterMs: 250,
    })
    const r = recorder()
    const subscription = delivery.subscribe(worker, BOTH, r.handlers)
    fake.fill(A, 1)
    subscription.pause(A)
    fake.fill(A, 2)
    expect(r.errors).toEqual([])
    fake.fill(A, 1)
    expect(r.errors).toEqual([
      {
        code: 'BACKPRESSURE',
        groupId: A,
        details: { groupId: A, retryAfterMs: 250, afterSequence: 1 },
      },
    ])
    expect(subscription.status(A)).toBe('backpressured')
    fake.fill(B, 3)
    fake.fill(A, 2)
    expect(r.seq(B)).toEqual([1, 2, 3])
    expect(r.seq(A)).toEqual([1])
    subscription.resume(A)
    expect(r.seq(A)).toEqual(range(1, 6))
    expect(subscription.status(A)).toBe('live')
  })

  it('BACKPRESSURE is retryable', () => {
    const { fake, delivery, worker } = setup({ maxBufferedPerGroup: 1 })
    const seen: ProtocolError[] = []
    const subscription = delivery.subscribe(worker, [{ groupId: A, afterSequence: 0 }], { onEvent: () => undefined, onError: (e) => seen.push(e) })
    subscription.pause(A)
    fake.fill(A, 2)
    // §17.3, error.schema.json: the retry guidance is the error's own `retryAfterMs` member.
    expect(seen.map((e) => [e.code, e.retryable, e.retryAfterMs, e.toWire(T0).retryAfterMs])).toEqual([['BACKPRESSURE', true, 1000, 1000]])
  })

  it('a paused replay holds no buffer: the backlog stays in the log', () => {
    const { fake, delivery, worker } = setup({
      maxBufferedPerGroup: 1,
      pageSize: 2,
    })
    fake.fill(A, 6)
    const r = recorder((event, subscription) => {
      if (event.sequence === 2) subscription.pause(A)
    })
    const subscription = delivery.subscribe(worker, [{ groupId: A, afterSequence: 0 }], r.handlers)
    expect(r.seq(A)).toEqual([1, 2])
    fake.fill(A, 1)
    expect(r.errors).toEqual([])
    subscription.resume(A)
    expect(r.seq(A)).toEqual(range(1, 7))
  })

  it('a subscription started paused reads nothing of the log until resume, then replays and goes live without a gap', () => {
    const { fake, delivery, worker } = setup({ pageSize: 2 })
    fake.fill(A, 5)
    // The log is read only through eventPage: count the reads.
    let reads = 0
    const eventPage = fake.authority.eventPage.bind(fake.authority)
    fake.authority.eventPage = (...args) => {
      reads++
      return eventPage(...args)
    }
    const r = recorder()
    const subscription = delivery.subscribe(worker, [{ groupId: A, afterSequence: 0 }], r.handlers, { paused: true })
    fake.fill(A, 2)
    expect([reads, r.seq(A), subscription.status(A)]).toEqual([0, [], 'paused'])
    subscription.resume(A)
    expect(r.seq(A)).toEqual(range(1, 7))
    fake.fill(A, 1)
    expect(r.seq(A)).toEqual(range(1, 8))
  })

  it('keeps the attention filter for what a dropped buffer held', () => {
    const { fake, delivery, worker } = setup({ maxBufferedPerGroup: 1 })
    const r = recorder()
    const subscription = delivery.subscribe(
      worker,
      [
        {
          groupId: A,
          afterSequence: 0,
          attention: { eventKinds: ['work.blocked'] },
        },
      ],
      r.handlers,
    )
    subscription.pause(A)
    fake.commit(A, [{ kind: 'work.blocked' }, { kind: 'work.started' }, { kind: 'work.blocked' }, { kind: 'work.blocked' }])
    expect(subscription.status(A)).toBe('backpressured')
    subscription.resume(A)
    expect(r.seq(A)).toEqual([1, 3, 4])
  })
})

describe('options', () => {
  it('refuses bad options and Groups the subscription does not hold with UsageError', () => {
    const { fake, delivery, worker } = setup()
    for (const bad of [{ pageSize: 0 }, { maxBufferedPerGroup: -1 }, { retryAfterMs: 1.5 }]) {
      expect(() => createDelivery(fake.authority, bad)).toThrow(UsageError)
    }
    const subscription = delivery.subscribe(worker, [{ groupId: A, afterSequence: 0 }], recorder().handlers)
    expect(() => subscription.resume(B)).toThrow(UsageError)
  })
})
