/**
 * The in-process {@link EventFeed} of one subscriber: `@weft/client`'s receiving seam over a
 * {@link Delivery}, so a Worker runs unchanged in one process with the Authority or over the wire.
 * @module
 */
import type { EventFeed } from '@weft/client'
import type { Delivery } from './delivery.js'
import type { ActorRef } from '../model.js'

/**
 * The {@link EventFeed} of `subscriber` over `delivery`: subscriptions replay after each Group's
 * `afterSequence` and continue live (§16); ACKs become the subscriber's durable ACK Cursors.
 *
 * @example
 * ```ts
 * const feed = deliveryFeed(createDelivery(authority), { type: 'agent', id: workerId })
 * const subscription = feed.subscribe([{ groupId, afterSequence: 0 }], { onEvent: (event) => inbox.receive(event) })
 * feed.ack(groupId, inbox.cursor(groupId))
 * ```
 */
export function deliveryFeed(delivery: Delivery, subscriber: ActorRef): EventFeed {
  return {
    subscribe(groups, handlers) {
      // §8: replay begins at the visibility start when that lies beyond the requested position; a
      // one-Event page of the visible history tells where (its first Event, or the head when none).
      for (const group of groups) {
        const page = delivery.replay(subscriber, group.groupId, group.afterSequence, 1)
        const first = page.events[0]
        const start = first === undefined ? page.nextAfterSequence : (first.sequence as number) - 1
        if (start > group.afterSequence) handlers.onStart?.(group.groupId, start)
      }
      const subscription = delivery.subscribe(
        subscriber,
        groups.map((group) => ({ groupId: group.groupId, afterSequence: group.afterSequence, ...(group.attention === undefined ? {} : { attention: group.attention }) })),
        {
          onEvent: (event) => handlers.onEvent(event),
          onError: (error, groupId) => handlers.onError?.(error, groupId),
        },
      )
      return { close: () => subscription.close() }
    },
    ack(groupId, sequence) {
      delivery.ack(subscriber, [{ groupId, sequence }])
    },
  }
}
