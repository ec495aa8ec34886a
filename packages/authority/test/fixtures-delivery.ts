/**
 * The hand-held world of the Delivery unit tests (`src/delivery/delivery-*.test.ts`): a stand-in
 * Authority over a state and log the tests write directly, two Groups with worker1 a member of
 * both, and a subscriber that records what it is given. It lives in `test/` rather than beside
 * those tests because every non-test module under `src/` is built and published with the package.
 */
import { ProtocolError } from '@weft/codec'
import type { Event, Membership } from '@weft/spec'
import { cast, T0, type Cast } from '@weft/testkit/fixtures'
import type { Authority } from '../src/commit/pipeline.js'
import { createDelivery, type DeliveryOptions, type Subscription, type SubscriptionHandlers } from '../src/delivery/delivery.js'
import { cursorTooOld } from '../src/log/compaction.js'
import type { SnapshotRecord } from '../src/log/store.js'
import { actorKey, emptyState, type GroupState } from '../src/model.js'
import { memberDoc, seedGroup } from './fixtures-state.js'

/** The first Group of {@link setup}. */
export const A = 'urn:weft:test:group:a'
/** The second Group of {@link setup}. */
export const B = 'urn:weft:test:group:b'
/** Both Groups from the start of their history. */
export const BOTH = [
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

/** Makes `who` a member of `group` (a Worker unless `overrides` say otherwise), straight in the state. */
export function enrol(group: GroupState, who: Cast, overrides: Partial<Membership> = {}): Membership {
  const membership = memberDoc(group, who, 'worker', overrides)
  group.memberships.set(membership.membershipId, membership)
  group.membershipByMember.set(actorKey(who.actor), membership.membershipId)
  return membership
}

/** A recording subscriber: the sequences it received per Group and the errors it was told. */
export function recorder(onEvent?: (event: Event, subscription: Subscription) => void) {
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

/** The integers from `from` to `to`, both included. */
export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i)
}

/** The code, message and details of the ProtocolError `run` throws; anything else thrown is rethrown. */
export function codeOf(run: () => unknown): {
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

/** A Delivery over a fresh {@link fakeAuthority} holding Groups {@link A} and {@link B}, worker1 a member of both. */
export function setup(options: DeliveryOptions = {}) {
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
