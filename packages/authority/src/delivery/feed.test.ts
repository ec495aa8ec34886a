import type { Event } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { cast } from '@weft/testkit/fixtures'
import { started } from '@weft/testkit/world'
import { createDelivery } from './delivery.js'
import { deliveryFeed } from './feed.js'

describe('deliveryFeed', () => {
  it('replays then continues live, tells a late joiner where its history starts (§8) and records ACKs', async () => {
    const w = await started()
    const delivery = createDelivery(w.authority)
    const feed = deliveryFeed(delivery, cast.worker1.actor)
    const visibleFrom = w.group().memberships.get(`${w.groupId}:membership:worker1`)!.visibilityStartSequence
    expect(visibleFrom).toBeGreaterThan(0)

    const seen: Event[] = []
    const starts: [string, number, number][] = []
    const subscription = feed.subscribe([{ groupId: w.groupId, afterSequence: 0 }], {
      onEvent: (event) => seen.push(event),
      // The start is announced before the first Event, so an empty local log can begin there.
      onStart: (groupId, after) => starts.push([groupId, after, seen.length]),
    })
    expect(starts).toEqual([[w.groupId, visibleFrom, 0]])
    expect(seen.map((e) => e.sequence)).toEqual(Array.from({ length: w.group().head - visibleFrom }, (_, i) => visibleFrom + 1 + i))

    await w.as.coordinator.messagePost({ messageId: 'urn:weft:test:message:feed', conversationId: w.group().group.mainConversationId, content: [{ type: 'text', text: 'live' }] })
    expect(seen.at(-1)?.sequence).toBe(w.group().head)

    await feed.ack(w.groupId, w.group().head)
    expect(delivery.cursor(cast.worker1.actor, w.groupId)).toBe(w.group().head)
    subscription.close()
  })

  it('announces no start when the requested position is already visible', async () => {
    const w = await started()
    const feed = deliveryFeed(createDelivery(w.authority), cast.coordinator.actor)
    const starts: number[] = []
    feed.subscribe([{ groupId: w.groupId, afterSequence: 0 }], { onEvent: () => {}, onStart: (_, after) => starts.push(after) }).close()
    expect(starts).toEqual([])
  })
})
