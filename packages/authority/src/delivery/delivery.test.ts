import { ProtocolError, UsageError } from '@weft/codec'
import type { Event, Membership } from '@weft/spec'
import { validators } from '@weft/validators'
import { describe, expect, it } from 'vitest'
import { cast, T0, type Cast } from '@weft/testkit/fixtures'
import { memberDoc, seedGroup } from '../../test/fixtures-state.js'
import { cursorTooOld } from '../log/compaction.js'
import { createDelivery, type DeliveryOptions, type Subscription, type SubscriptionHandlers } from './delivery.js'
import { createMemoryCursorStore } from './cursors.js'
import { actorKey, emptyState, type GroupState } from '../model.js'
import type { Authority } from '../commit/pipeline.js'
import type { SnapshotRecord } from '../log/store.js'

const A = 'urn:weft:test:group:a'
const B = 'urn:weft:test:group:b'
/** Both Groups from the start of their history. */
const BOTH = [
  { groupId: A, afterSequence: 0 },
  { groupId: B, afterSequence: 0 },
]

/**
 * The members of {@link Authority} delivery reads (`group`, `eventPage`, `snapshot`, `onCommit`),
 * over a hand-held state and log, so each rule is exercised without running Commands. A compaction
 * here only moves the online log's start; `compaction.test.ts` covers the real one.
 */
function fakeAuthority() {
  const state = emptyState()
  const logs = new Map<string, Event[]>()
  const records = new Map<string, SnapshotRecord>()
  const listeners = new Set<(events: readonly Event[]) => void>()
  let ids = 0
  const authority = {
    state,
    group: (groupId: string) => state.groups.get(groupId),
    eventPage(groupId: string, after: number, limit: number) {
      const record = records.get(groupId)
      if (record !== undefined && after < record.throughSequence) throw cursorTooOld(record, after)
      const events = (logs.get(groupId) ?? []).slice(after, after + limit)
      const head = state.groups.get(groupId)?.head ?? 0
      const nextAfterSequence = events.at(-1)?.sequence ?? after
      return { events, nextAfterSequence, hasMore: nextAfterSequence < head, head }
    },
    snapshot: (groupId: string) => records.get(groupId),
    onCommit(listener: (events: readonly Event[]) => void) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  } as unknown as Authority
  return {
    authority,
    group(groupId: string): GroupState {
      const group = seedGroup(state, groupId, `${groupId}:mission`)
      group.head = 0
      logs.set(groupId, [])
      return group
    },
    /** Appends one transaction; `apply` changes the state first, as the reducers do before listeners run. */
    commit(groupId: string, specs: readonly Partial<Event>[], apply?: () => void): Event[] {
      const group = state.groups.get(groupId)!
      const events = specs.map(
        (spec) =>
          ({
            kind: 'work.proposed',
            payload: {},
            ...spec,
            eventId: `urn:weft:test:event:${++ids}`,
            groupId,
            sequence: ++group.head,
          }) as Event,
      )
      logs.get(groupId)!.push(...events)
      apply?.()
      for (const listener of listeners) listener(events)
      return events
    },
    /** `n` plain Events, each its own transaction. */
    fill(groupId: string, n: number): void {
      for (let i = 0; i < n; i++) this.commit(groupId, [{}])
    },
    /** Moves the start of the Group's online log after `through`, behind a stand-in snapshot record. */
    compact(groupId: string, through: number): SnapshotRecord {
      const snapshot = { snapshotId: `urn:weft:test:snapshot:${groupId}:${through}`, groupId, throughSequence: through, stateHash: `sha256:${'a'.repeat(64)}` }
      const record = { groupId, throughSequence: through, snapshot, snapshotHash: `sha256:${'b'.repeat(64)}`, image: '{}', compactedAt: T0 } as unknown as SnapshotRecord
      records.set(groupId, record)
      return record
    },
  }
}

function enrol(group: GroupState, who: Cast, overrides: Partial<Membership> = {}): Membership {
  const membership = memberDoc(group, who, 'worker', overrides)
  group.memberships.set(membership.membershipId, membership)
  group.membershipByMember.set(actorKey(who.actor), membership.membershipId)
  return membership
}

/** A recording subscriber: the sequences it received per Group and the errors it was told. */
function recorder(onEvent?: (event: Event, subscription: Subscription) => void) {
  const got = new Map<string, number[]>()
  const errors: {
    code: string
    groupId: string
    details: Record<string, unknown> | undefined
  }[] = []
  const handlers: SubscriptionHandlers = {
    onEvent(event, subscription) {
      onEvent?.(event, subscription)
      const list = got.get(event.groupId!) ?? []
      got.set(event.groupId!, [...list, event.sequence!])
    },
    onError: (error, groupId) => errors.push({ code: error.code, groupId, details: error.details }),
  }
  return { handlers, errors, seq: (groupId: string) => got.get(groupId) ?? [] }
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i)
}

function codeOf(run: () => unknown): {
  code: string
  message: string
  details: unknown
} {
  try {
    run()
  } catch (error) {
    if (error instanceof ProtocolError)
      return {
        code: error.code,
        message: error.message,
        details: error.details,
      }
    throw error
  }
  throw new Error('expected a ProtocolError')
}

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

function setup(options: DeliveryOptions = {}) {
  const fake = fakeAuthority()
  const a = fake.group(A)
  const b = fake.group(B)
  enrol(a, cast.worker1)
  enrol(b, cast.worker1)
  const delivery = createDelivery(fake.authority, {
    controlPlane: [cast.controlPlane.actor.id],
    ...options,
  })
  return { fake, a, b, delivery, worker: cast.worker1.actor }
}

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

describe('authorization per Group (§8, §17.2)', () => {
  it('answers an absent Group and a hidden one with the same GROUP_NOT_FOUND', () => {
    const { fake, delivery } = setup()
    fake.group('urn:weft:test:group:hidden')
    const outsider = cast.worker2.actor
    const r = recorder()
    const hidden = codeOf(() => delivery.subscribe(outsider, [{ groupId: 'urn:weft:test:group:hidden', afterSequence: 0 }], r.handlers))
    const absent = codeOf(() => delivery.subscribe(outsider, [{ groupId: 'urn:weft:test:group:absent', afterSequence: 0 }], r.handlers))
    expect(hidden).toEqual({
      code: 'GROUP_NOT_FOUND',
      message: absent.message,
      details: absent.details,
    })
    expect(absent.code).toBe('GROUP_NOT_FOUND')
    for (const call of [() => delivery.replay(outsider, A), () => delivery.cursor(outsider, A), () => delivery.ack(outsider, [{ groupId: A, sequence: 0 }])]) {
      expect(codeOf(call)).toEqual(absent)
    }
  })

  it('refuses the whole subscription when one Group is hidden, subscribing none', () => {
    const { fake, delivery, worker } = setup()
    fake.group('urn:weft:test:group:hidden')
    const r = recorder()
    expect(
      codeOf(() =>
        delivery.subscribe(
          worker,
          [
            { groupId: A, afterSequence: 0 },
            { groupId: 'urn:weft:test:group:hidden', afterSequence: 0 },
          ],
          r.handlers,
        ),
      ).code,
    ).toBe('GROUP_NOT_FOUND')
    fake.fill(A, 1)
    expect(r.seq(A)).toEqual([])
  })

  it('admits provisional members and listed control-plane services; refuses ended members and other services', () => {
    const { fake, a, delivery } = setup()
    fake.fill(A, 1)
    enrol(a, cast.worker2, {
      state: 'provisional',
      provisionalExpiresAt: T0,
      contextPackageId: 'urn:weft:test:package:1',
    })
    enrol(a, cast.worker3, { state: 'ended', endedAt: T0 })
    expect(delivery.replay(cast.worker2.actor, A).events).toHaveLength(1)
    expect(delivery.replay(cast.controlPlane.actor, A).events).toHaveLength(1)
    expect(delivery.replay(cast.owner.actor, A).events).toHaveLength(1)
    expect(codeOf(() => delivery.replay(cast.worker3.actor, A)).code).toBe('GROUP_NOT_FOUND')
    expect(codeOf(() => delivery.replay(cast.registry.actor, A)).code).toBe('GROUP_NOT_FOUND')
  })

  it('never delivers Events at or below the visibility start of a late joiner', () => {
    const { fake, a, delivery } = setup()
    fake.fill(A, 4)
    enrol(a, cast.worker2, { visibilityStartSequence: 3 })
    const r = recorder()
    delivery.subscribe(cast.worker2.actor, [{ groupId: A, afterSequence: 0 }], r.handlers)
    fake.fill(A, 1)
    expect(r.seq(A)).toEqual([4, 5])
    const page = delivery.replay(cast.worker2.actor, A, 1)
    expect(page.events.map((e) => e.sequence)).toEqual([4, 5])
  })

  it('stops live delivery when the Membership ends, after the Event that ends it', () => {
    const { fake, a, delivery, worker } = setup()
    const r = recorder()
    const subscription = delivery.subscribe(worker, BOTH, r.handlers)
    fake.fill(A, 1)
    const id = a.membershipByMember.get(actorKey(worker))!
    const ended = {
      ...a.memberships.get(id)!,
      state: 'ended' as const,
      endedAt: T0,
    }
    fake.commit(
      A,
      [
        {
          kind: 'membership.ended',
          payload: {
            membershipId: id,
            member: worker,
            membershipEpoch: 1,
            reason: 'done',
          },
        },
      ],
      () => a.memberships.set(id, ended),
    )
    fake.fill(A, 2)
    fake.fill(B, 1)
    expect(r.seq(A)).toEqual([1, 2])
    expect(r.seq(B)).toEqual([1])
    expect(r.errors).toEqual([{ code: 'GROUP_NOT_FOUND', groupId: A, details: undefined }])
    expect(subscription.status(A)).toBe('ended')
  })

  it('delivers the Events of a transaction that come before the one ending the Membership, then ends', () => {
    const { fake, a, delivery, worker } = setup()
    const r = recorder()
    delivery.subscribe(worker, [{ groupId: A, afterSequence: 0 }], r.handlers)
    const id = a.membershipByMember.get(actorKey(worker))!
    const ended = { ...a.memberships.get(id)!, state: 'ended' as const, endedAt: T0 }
    // E.g. a Coordinator replaced: `mission.coordinator.assigned`, then the old seat's `membership.ended`.
    fake.commit(A, [{}, { kind: 'membership.ended', payload: { membershipId: id, member: worker, membershipEpoch: 1, reason: 'replaced' } }, {}], () => a.memberships.set(id, ended))
    expect(r.seq(A)).toEqual([1, 2])
    expect(r.errors).toEqual([{ code: 'GROUP_NOT_FOUND', groupId: A, details: undefined }])
  })

  it('drops buffered Events of a Group whose Membership ended while paused', () => {
    const { fake, a, delivery, worker } = setup()
    const r = recorder()
    const subscription = delivery.subscribe(worker, [{ groupId: A, afterSequence: 0 }], r.handlers)
    subscription.pause(A)
    fake.fill(A, 2)
    const id = a.membershipByMember.get(actorKey(worker))!
    a.memberships.set(id, {
      ...a.memberships.get(id)!,
      state: 'ended',
      endedAt: T0,
    })
    subscription.resume(A)
    expect(r.seq(A)).toEqual([])
    expect(subscription.status(A)).toBe('ended')
  })
})

describe('attention filters change live delivery only (§8, §17.2)', () => {
  const mine = 'urn:weft:test:work:mine'
  const other = 'urn:weft:test:work:other'

  function filtered(attention: NonNullable<Parameters<ReturnType<typeof createDelivery>['subscribe']>[1][number]['attention']>) {
    const s = setup()
    s.a.conversations.set('urn:weft:test:conversation:mine', {
      ...s.a.conversations.get(`${A}:conversation:main`)!,
      conversationId: 'urn:weft:test:conversation:mine',
      type: 'work_item',
      primaryWorkItemId: mine,
    })
    s.fake.commit(A, [{ kind: 'work.authorized', workItemId: other }])
    const r = recorder()
    s.delivery.subscribe(s.worker, [{ groupId: A, afterSequence: 0, attention }], r.handlers)
    return { ...s, r }
  }
  const message = (conversationId: string, extra: Record<string, unknown> = {}): Partial<Event> => ({
    kind: 'message.posted',
    conversationId,
    payload: { conversationId, author: cast.worker2.actor, ...extra },
  })
  const main = `${A}:conversation:main`

  it('replays everything, then delivers only the WorkItems asked for (their Conversations included) and what names the subscriber', () => {
    const { fake, r } = filtered({ workItemIds: [mine] })
    fake.commit(A, [{ kind: 'work.started', workItemId: mine }]) // 2
    fake.commit(A, [{ kind: 'work.started', workItemId: other }]) // 3
    fake.commit(A, [message('urn:weft:test:conversation:mine')]) // 4
    fake.commit(A, [message(main)]) // 5
    fake.commit(A, [
      {
        kind: 'work.offer.created',
        workItemId: other,
        payload: {
          workItemId: other,
          candidateAgentIds: [cast.worker1.actor.id],
        },
      },
    ]) // 6
    fake.commit(A, [message(main, { mentions: [cast.worker1.actor] })]) // 7
    expect(r.seq(A)).toEqual([1, 2, 4, 6, 7])
  })

  it('mentionsOnly keeps only the Messages that mention the subscriber', () => {
    const { fake, r } = filtered({
      mentionsOnly: true,
      conversationIds: [main],
    })
    fake.commit(A, [message(main)]) // 2
    fake.commit(A, [message(main, { mentions: [cast.worker1.actor] })]) // 3
    fake.commit(A, [{ kind: 'work.started', conversationId: main }]) // 4
    fake.commit(A, [message(main, { mentions: [cast.worker2.actor] })]) // 5
    expect(r.seq(A)).toEqual([1, 3, 4])
  })

  it('announcements are Mission and Group facts and the Coordinator or MissionOwner speaking in the Group Conversation', () => {
    const { fake, r } = filtered({ announcements: true })
    fake.commit(A, [{ kind: 'mission.coordinator.renewed' }]) // 2
    fake.commit(A, [message(main, { author: cast.coordinator.actor })]) // 3
    fake.commit(A, [message(main)]) // 4
    fake.commit(A, [message(main, { author: cast.owner.actor })]) // 5
    fake.commit(A, [{ kind: 'work.started', workItemId: other }]) // 6
    expect(r.seq(A)).toEqual([1, 2, 3, 5])
  })

  it('eventKinds selects kinds; an empty filter selects everything; replay ignores the filter', () => {
    const { fake, r, delivery, worker } = filtered({
      eventKinds: ['work.blocked'],
    })
    fake.commit(A, [{ kind: 'work.started' }, { kind: 'work.blocked' }]) // 2, 3
    const all = recorder()
    delivery.subscribe(worker, [{ groupId: A, afterSequence: 3, attention: {} }], all.handlers)
    fake.commit(A, [{ kind: 'work.started' }]) // 4
    expect(r.seq(A)).toEqual([1, 3])
    expect(all.seq(A)).toEqual([4])
    expect(delivery.replay(worker, A, 0).events.map((e) => e.sequence)).toEqual([1, 2, 3, 4])
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
