/**
 * Delivery with compaction (§16): whatever the interleaving of commits, disconnects, replays from
 * arbitrary Cursors, duplicate deliveries, pauses and compactions behind signed snapshots, a §16
 * recipient that restores the snapshot when told `CURSOR_TOO_OLD` accounts for every sequence of
 * each Group exactly once and in order.
 */
import { ProtocolError } from '@weft/codec'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createDelivery, type DeliveryGroup, type Subscription } from '../src/delivery/delivery.js'
import { compactHead, post, referenceRecipient, retained, startedKept, type KeptWorld } from '@weft/testkit/recovery'
import { cast } from '@weft/testkit/fixtures'
import { enrol, MEMBERS, openMission, type World } from '@weft/testkit/world'

const TWO = 'urn:weft:test:group:two'
const worker = cast.worker1.actor

type Group = 0 | 1
type Step =
  | { readonly op: 'commit'; readonly group: Group; readonly count: number }
  | { readonly op: 'disconnect' }
  | { readonly op: 'reconnect'; readonly back: readonly [number, number]; readonly fromCursor: boolean }
  | { readonly op: 'duplicate'; readonly group: Group; readonly back: number }
  | { readonly op: 'pause' | 'resume'; readonly group: Group }
  | { readonly op: 'compact'; readonly group: Group }
  | { readonly op: 'compactUnder' | 'compactBehind'; readonly group: Group; readonly count: number }
  | { readonly op: 'ack' }

const group = fc.constantFrom<Group>(0, 1)
const weighted = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary })
const step: fc.Arbitrary<Step> = fc.oneof(
  weighted(4, fc.record({ op: fc.constant('commit' as const), group, count: fc.integer({ min: 1, max: 3 }) })),
  weighted(2, fc.constant({ op: 'disconnect' as const })),
  weighted(2, fc.record({ op: fc.constant('reconnect' as const), back: fc.tuple(fc.nat(12), fc.nat(12)), fromCursor: fc.boolean() })),
  weighted(2, fc.record({ op: fc.constant('duplicate' as const), group, back: fc.nat(8) })),
  fc.record({ op: fc.constantFrom('pause' as const, 'resume' as const), group }),
  weighted(2, fc.record({ op: fc.constant('compact' as const), group })),
  // A slow subscriber (paused, its buffer overflowed) or a disconnected one, with the log compacted past it meanwhile.
  fc.record({ op: fc.constantFrom('compactUnder' as const, 'compactBehind' as const), group, count: fc.integer({ min: 2, max: 3 }) }),
  fc.constant({ op: 'ack' as const }),
)

/** A kept world with a second Group, both with worker1 enrolled. */
async function twoGroups(): Promise<{ kept: KeptWorld; views: readonly [World, World] }> {
  const kept = await startedKept()
  const two = kept.w.in(TWO)
  await openMission(two)
  await enrol(two, MEMBERS)
  return { kept, views: [kept.w, two] }
}

function visibilityStart(w: World): number {
  const g = w.group()
  return g.memberships.get(g.membershipByMember.get(`${worker.type}:${worker.id}`)!)!.visibilityStartSequence
}

describe('delivery across compaction (§16)', () => {
  it('any interleaving of disconnects, replays from arbitrary Cursors (below a compaction point: CURSOR_TOO_OLD, then restore) and duplicate delivery yields every sequence exactly once in order per Group', async () => {
    // How often the runs took the recovery paths, so the property is known to reach them.
    const reached = { restores: 0, endedLive: 0 }
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const { kept, views } = await twoGroups()
        const ids = views.map((v) => v.groupId)
        const delivery = createDelivery(kept.w.authority, { pageSize: 3, maxBufferedPerGroup: 1 })
        const violations: string[] = []
        const reference = referenceRecipient(views.map(visibilityStart), kept.w.registry)
        let connection: Subscription | undefined
        let snapshots = 0

        const connect = (positions: (number | undefined)[]) => {
          for (;;) {
            const last = new Map<string, number>()
            const groups: DeliveryGroup[] = ids.map((groupId, i) => (positions[i] === undefined ? { groupId } : { groupId, afterSequence: positions[i] }))
            try {
              connection = delivery.subscribe(worker, groups, {
                onEvent(event) {
                  // Within one connection each Group's Events come with no gap and no repeat.
                  const previous = last.get(event.groupId!)
                  if (previous !== undefined && event.sequence !== previous + 1) violations.push(`${event.groupId} ${previous} -> ${event.sequence}`)
                  last.set(event.groupId!, event.sequence!)
                  reference.receive(ids.indexOf(event.groupId!), event)
                },
                // A Group still catching up when its log was compacted ends; the settling reconnect restores it.
                onError: (error) => void (error.code === 'CURSOR_TOO_OLD' && reached.endedLive++),
              })
              return
            } catch (error) {
              if (!(error instanceof ProtocolError) || error.code !== 'CURSOR_TOO_OLD') throw error
              const i = ids.indexOf(error.details!['groupId'] as string)
              const cursor = reference.groups[i]!.cursor
              if (!reference.restore(i, delivery.snapshot(worker, ids[i]!))) violations.push(`group ${i}: no verifiable snapshot to restore`)
              if (reference.groups[i]!.cursor > cursor) reached.restores++
              positions[i] = error.details!['throughSequence'] as number
            }
          }
        }
        const fromCursors = () => reference.groups.map((g) => g.cursor)
        const compact = (index: Group) => {
          const groupId = ids[index]!
          if (kept.w.authority.group(groupId)!.head > (kept.w.authority.snapshot(groupId)?.throughSequence ?? 0)) compactHead(kept, `urn:weft:test:snapshot:${++snapshots}`, groupId)
        }

        connect([0, 0])
        for (const s of steps) {
          if (s.op === 'commit') for (let i = 0; i < s.count; i++) await post(views[s.group])
          else if (s.op === 'disconnect') connection?.close()
          else if (s.op === 'reconnect') {
            connection?.close()
            // An arbitrary Cursor, possibly older than what the recipient processed and than the compaction point.
            connect(s.fromCursor ? [undefined, undefined] : reference.groups.map((g, i) => Math.max(0, g.cursor - s.back[i]!)))
          } else if (s.op === 'duplicate') {
            const events = reference.events(s.group)
            const again = events[events.length - 1 - s.back]
            if (again !== undefined) reference.receive(s.group, again)
          } else if (s.op === 'compact') compact(s.group)
          else if (s.op === 'compactUnder' || s.op === 'compactBehind') {
            const id = ids[s.group]!
            const live = connection !== undefined && connection.status(id) !== 'ended'
            if (s.op === 'compactUnder' && live) connection!.pause(id)
            else connection?.close()
            for (let i = 0; i < s.count; i++) await post(views[s.group])
            compact(s.group)
            if (s.op === 'compactUnder' && live) connection!.resume(id)
            else connect(fromCursors())
          } else if (s.op === 'ack')
            delivery.ack(
              worker,
              reference.groups.map((g, i) => ({ groupId: ids[i]!, sequence: g.cursor })),
            )
          else if (connection?.status(ids[s.group]!) !== 'ended') connection?.[s.op](ids[s.group]!)
        }
        // Settle: a live connection from the recipient's Cursors, every Group resumed.
        connection?.close()
        connect(fromCursors())
        for (const id of ids) connection!.resume(id)
        connection!.close()

        expect(violations).toEqual([])
        views.forEach((v, i) => {
          const history = retained(kept.store, v.groupId)
          const accounted = reference.groups[i]!.processed.flatMap((p) => ('event' in p ? [p.event.sequence!] : Array.from({ length: p.through - p.from }, (_, k) => p.from + 1 + k)))
          const start = visibilityStart(v)
          expect(accounted).toEqual(history.slice(start).map((e) => e.sequence))
          for (const event of reference.events(i)) expect(event.eventId).toBe(history[event.sequence! - 1]!.eventId)
        })
        delivery.close()
      }),
      { numRuns: Number(process.env['WEFT_PROPERTY_RUNS'] ?? 50) },
    )
    expect(reached.restores).toBeGreaterThan(0)
    expect(reached.endedLive).toBeGreaterThan(0)
  }, 60_000)
})
