/**
 * Delivery over a real Authority driven by signed Commands (§8, §16, §17.2, §17.3): Membership
 * enforcement with real Memberships, late joiners, the end of a Membership, and the property that
 * a deduplicating subscriber ends with every Event exactly once, in order, per Group, whatever
 * the interleaving of commits, disconnects, replays from arbitrary Cursors, duplicate deliveries
 * and backpressure.
 */
import type { ErrorCode } from '@weft/codec'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { createDelivery, type Delivery, type Subscription } from '../src/delivery/delivery.js'
import { referenceRecipient } from '@weft/testkit/recovery'
import { cast } from '@weft/testkit/fixtures'
import { enrol, MEMBERS, openMission, started, type World } from '@weft/testkit/world'

const TWO = 'urn:weft:test:group:two'
const worker = cast.worker1.actor

/** Posts one Message as worker1 in the main Conversation of `w`'s Group: one committed Event. */
async function post(w: World, text = 'status'): Promise<void> {
  await w.as.worker1.messagePost({
    messageId: `urn:weft:test:message:${w.fresh('m')}`,
    conversationId: w.group().group.mainConversationId,
    content: [{ type: 'text', text }],
  })
}

/** The sequence a member's Membership hides up to (§8). */
function visibilityStart(w: World, who = worker): number {
  const group = w.group()
  return group.memberships.get(group.membershipByMember.get(`${who.type}:${who.id}`)!)!.visibilityStartSequence
}

function refusedCode(run: () => unknown): ErrorCode | undefined {
  try {
    run()
    return undefined
  } catch (error) {
    return (error as { code?: ErrorCode }).code
  }
}

describe('delivery over a real Authority', () => {
  let w: World
  let two: World
  beforeAll(async () => {
    w = await started()
    two = w.in(TWO)
    await openMission(two)
    await enrol(two, MEMBERS)
  })

  it('a late joiner gets neither replay nor live Events from before its Membership (§8)', async () => {
    const delivery = createDelivery(w.authority)
    const start = visibilityStart(w)
    expect(start).toBeGreaterThan(0)
    const got: number[] = []
    delivery.subscribe(worker, [{ groupId: w.groupId, afterSequence: 0 }], {
      onEvent: (e) => got.push(e.sequence!),
    })
    await post(w)
    const head = w.group().head
    expect(got).toEqual(Array.from({ length: head - start }, (_, i) => start + 1 + i))
    expect(delivery.replay(worker, w.groupId, 0).events[0]?.sequence).toBe(start + 1)
  })

  it('hides a Group the subscriber is not a member of exactly like an absent one (§17.2)', async () => {
    const hidden = w.in('urn:weft:test:group:hidden')
    await openMission(hidden)
    const delivery = createDelivery(w.authority)
    const errorOf = (groupId: string) => {
      try {
        delivery.subscribe(worker, [{ groupId, afterSequence: 0 }], {
          onEvent: () => undefined,
        })
      } catch (error) {
        return JSON.stringify(error)
      }
      return 'subscribed'
    }
    expect(errorOf(hidden.groupId)).toBe(errorOf('urn:weft:test:group:nowhere'))
    expect(refusedCode(() => delivery.replay(worker, hidden.groupId))).toBe('GROUP_NOT_FOUND')
    // The MissionOwner and a control-plane service may read it.
    expect(delivery.replay(cast.owner.actor, hidden.groupId).events.length).toBeGreaterThan(0)
    expect(
      createDelivery(w.authority, {
        controlPlane: [cast.controlPlane.actor.id],
      }).replay(cast.controlPlane.actor, hidden.groupId).events.length,
    ).toBeGreaterThan(0)
  })

  it('stops a Group when a real membership.end takes the subscriber out; other Groups keep flowing', async () => {
    const world = await started()
    const other = world.in(TWO)
    await openMission(other)
    await enrol(other, MEMBERS)
    const delivery = createDelivery(world.authority)
    const kinds: Record<string, string[]> = { [world.groupId]: [], [TWO]: [] }
    const errors: string[] = []
    const who = cast.worker2.actor
    const subscription = delivery.subscribe(who, [{ groupId: world.groupId }, { groupId: TWO }], {
      onEvent: (e) => kinds[e.groupId!]!.push(e.kind),
      onError: (error, groupId) => errors.push(`${groupId} ${error.code}`),
    })
    await world.as.coordinator.membershipEnd({
      membershipId: `${world.groupId}:membership:worker2`,
      reason: 'No more work here.',
    })
    await post(world)
    await post(other)
    expect(kinds[world.groupId]!.at(-1)).toBe('membership.ended')
    expect(kinds[TWO]!.at(-1)).toBe('message.posted')
    expect(errors).toEqual([`${world.groupId} GROUP_NOT_FOUND`])
    expect(subscription.status(world.groupId)).toBe('ended')
  })

  describe('property', () => {
    type Step =
      | { readonly op: 'commit'; readonly group: 0 | 1; readonly count: number }
      | { readonly op: 'disconnect' }
      | {
          readonly op: 'reconnect'
          readonly back: readonly [number, number]
          readonly fromCursor: boolean
        }
      | {
          readonly op: 'duplicate'
          readonly group: 0 | 1
          readonly back: number
        }
      | { readonly op: 'pause' | 'resume'; readonly group: 0 | 1 }
      | { readonly op: 'stall'; readonly group: 0 | 1; readonly count: number }
      | { readonly op: 'ack' }

    const group = fc.constantFrom<0 | 1>(0, 1)
    const weighted = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary })
    const step: fc.Arbitrary<Step> = fc.oneof(
      weighted(4, fc.record({ op: fc.constant('commit' as const), group, count: fc.integer({ min: 1, max: 3 }) })),
      fc.constant({ op: 'disconnect' as const }),
      weighted(2, fc.record({ op: fc.constant('reconnect' as const), back: fc.tuple(fc.nat(12), fc.nat(12)), fromCursor: fc.boolean() })),
      weighted(2, fc.record({ op: fc.constant('duplicate' as const), group, back: fc.nat(8) })),
      fc.record({ op: fc.constantFrom('pause' as const, 'resume' as const), group }),
      // A slow subscriber: one Group paused while its Events keep coming, past the buffer bound.
      weighted(2, fc.record({ op: fc.constant('stall' as const), group, count: fc.integer({ min: 1, max: 4 }) })),
      fc.constant({ op: 'ack' as const }),
    )

    it('any interleaving of commits, disconnects, replays from arbitrary Cursors and duplicate deliveries yields every Event exactly once in order per Group', async () => {
      const views = [w, two] as const
      const ids = views.map((v) => v.groupId)
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
          const delivery: Delivery = createDelivery(w.authority, {
            pageSize: 4,
            maxBufferedPerGroup: 1,
          })
          const reference = referenceRecipient(
            views.map((v) => visibilityStart(v)),
            w.registry,
          )
          let connection: Subscription | undefined
          const violations: string[] = []
          const connect = (positions?: readonly number[]) => {
            // Within one connection the server must hand out each Group's Events with no gap and no repeat.
            const last = new Map<string, number>()
            connection = delivery.subscribe(
              worker,
              ids.map((groupId, i) => (positions === undefined ? { groupId } : { groupId, afterSequence: positions[i]! })),
              {
                onEvent(event) {
                  const previous = last.get(event.groupId!)
                  // Recorded, not thrown: a throwing handler would only pause the Group.
                  if (previous !== undefined && event.sequence !== previous + 1) violations.push(`${event.groupId} ${previous} -> ${event.sequence}`)
                  last.set(event.groupId!, event.sequence!)
                  reference.receive(ids.indexOf(event.groupId!), event)
                },
              },
            )
          }
          connect([0, 0])
          for (const s of steps) {
            if (s.op === 'commit' || s.op === 'stall') {
              if (s.op === 'stall' && connection?.status(ids[s.group]!) !== 'ended') connection?.pause(ids[s.group]!)
              for (let i = 0; i < s.count; i++) await post(views[s.group])
            } else if (s.op === 'disconnect') connection?.close()
            else if (s.op === 'reconnect') {
              connection?.close()
              // An arbitrary Cursor, possibly older than what the subscriber already processed.
              connect(s.fromCursor ? undefined : reference.groups.map((g, i) => Math.max(0, g.cursor - s.back[i]!)))
            } else if (s.op === 'duplicate') {
              // At-least-once: an Event the subscriber already had arrives again.
              const processed = reference.events(s.group)
              const again = processed[processed.length - 1 - s.back]
              if (again !== undefined) reference.receive(s.group, again)
            } else if (s.op === 'ack')
              delivery.ack(
                worker,
                reference.groups.map((g, i) => ({
                  groupId: ids[i]!,
                  sequence: g.cursor,
                })),
              )
            else if (connection?.status(ids[s.group]!) !== 'ended') connection?.[s.op](ids[s.group]!)
          }
          // Settle: a live connection with every Group resumed.
          if (connection === undefined || ids.some((id) => connection!.status(id) === 'ended')) connect()
          for (const id of ids) connection!.resume(id)
          connection!.close()
          expect(violations).toEqual([])
          views.forEach((v, i) => {
            const expected = w.authority.events(v.groupId, visibilityStart(v)).map((e) => e.eventId)
            expect(reference.events(i).map((e) => e.eventId)).toEqual(expected)
          })
          delivery.close()
        }),
        { numRuns: 40 },
      )
    }, 20_000)
  })
})
