/**
 * The receiving half of a connection to a Group Authority (§16, §17): per-Group Event streams
 * with replay from a position, live continuation and durable ACK Cursors. A Worker or any other
 * subscriber consumes Events only through this seam, so the same code runs over the in-process
 * delivery of `@weft/authority` and over the WebSocket binding.
 * @module
 */
import type { ProtocolError } from '@weft/codec'
import type { AttentionFilter, Event } from '@weft/spec'

/** One Group to subscribe to and where to resume (§17.2 `SUBSCRIBE`). */
export interface FeedGroup {
  readonly groupId: string
  /** Replay starts after this sequence; 0 replays the whole visible history. */
  readonly afterSequence: number
  /** Narrows live delivery only; replay and authorization are unaffected (§17.2). */
  readonly attention?: AttentionFilter
}

/** What a feed calls. */
export interface FeedHandlers {
  /**
   * One Event, per Group in sequence order on a healthy feed. Subscribers must still tolerate
   * duplicates and gaps (§16: delivery is at-least-once and may reorder around reconnects).
   */
  onEvent(event: Event): void
  /**
   * Where replay of `groupId` really begins when that is after the requested `afterSequence`: a
   * late joiner's visibility start (§8). Called before the Group's first Event; a subscriber with
   * an empty local log starts it there (a Worker inbox's `startAfter`).
   */
  onStart?(groupId: string, afterSequence: number): void
  /** A Group stopped flowing: `BACKPRESSURE` (it will resume), `GROUP_NOT_FOUND` (access lost). */
  onError?(error: ProtocolError, groupId: string): void
}

/** A live subscription of an {@link EventFeed}. */
export interface FeedSubscription {
  /** Stops delivery of every Group of this subscription. */
  close(): void
}

/** A per-Group Event source with replay, live delivery and ACK Cursors (§16). */
export interface EventFeed {
  /**
   * Subscribes to `groups`: each replays after its `afterSequence` and continues live.
   * @throws ProtocolError `GROUP_NOT_FOUND` for a Group the subscriber may not read.
   */
  subscribe(groups: readonly FeedGroup[], handlers: FeedHandlers): FeedSubscription
  /** Records durable progress: the subscriber has processed every Event of `groupId` up to `sequence`. */
  ack(groupId: string, sequence: number): void | Promise<void>
}
