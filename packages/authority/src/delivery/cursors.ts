/**
 * ACK Cursors (§16): the last sequence a subscriber acknowledged in a Group, from which a
 * subscription resumes when it names no position. Delivery (`delivery.ts`) decides when a Cursor
 * moves (only forward, never past the head); a {@link CursorStore} only keeps it.
 * @module
 */
import { actorKey, type ActorRef } from '../model.js'

/**
 * Where ACK Cursors live, per subscriber and Group. Monotonicity and bounds are enforced by the
 * delivery (`createDelivery`); a store only keeps what it is given. Durable stores implement the
 * same seam.
 */
export interface CursorStore {
  /** The stored Cursor, or `undefined` when the subscriber never acknowledged in the Group. */
  get(subscriber: ActorRef, groupId: string): number | undefined
  /** Stores a Cursor; called only with a value above the stored one. */
  set(subscriber: ActorRef, groupId: string, sequence: number): void
}

/** A {@link CursorStore} in memory, for tests and single-process hosts. */
export function createMemoryCursorStore(): CursorStore {
  const cursors = new Map<string, Map<string, number>>()
  return {
    get: (subscriber, groupId) => cursors.get(actorKey(subscriber))?.get(groupId),
    set(subscriber, groupId, sequence) {
      const key = actorKey(subscriber)
      let byGroup = cursors.get(key)
      if (byGroup === undefined) cursors.set(key, (byGroup = new Map()))
      byGroup.set(groupId, sequence)
    },
  }
}
