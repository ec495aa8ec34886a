import type { Event } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { mergeLogs, preemptionKey, slotTimeline } from './timeline.js'

const T = Date.parse('2026-07-15T08:00:00.000Z')
let sequence = 0
function event(kind: string, minute: number, payload: Record<string, unknown>, groupId = 'urn:g:1'): Event {
  return { eventId: `urn:e:${++sequence}`, kind, groupId, sequence, occurredAt: new Date(T + minute * 60_000).toISOString(), payload } as unknown as Event
}
const started = (item: string, lease: string, agent: string, minute: number, groupId?: string) =>
  event('work.started', minute, { workItemId: item, ownershipEpoch: 1, executionLease: { leaseId: lease, holderAgentId: agent } }, groupId)

describe('slotTimeline', () => {
  it('lays leases on the lowest free slot and names how each ended', () => {
    const log = [
      started('a', 'l1', 'x', 0),
      started('b', 'l2', 'x', 5),
      event('work.checkpointed', 10, { workItemId: 'a', executionLeaseId: 'l1' }),
      started('c', 'l3', 'x', 10),
      event('work.submitted', 20, { workItemId: 'b', executionLeaseId: 'l2' }),
      started('a', 'l4', 'x', 30),
    ]
    const records = slotTimeline(log, new Set([preemptionKey('a', T + 10 * 60_000)]))
    expect(records.map((r) => [r.workItemId, r.slot, r.ended])).toEqual([
      ['a', 0, 'preempted'],
      ['b', 1, 'submitted'],
      ['c', 0, 'running'],
      ['a', 1, 'running'],
    ])
    expect(records[0]).toMatchObject({ startMs: T, endMs: T + 10 * 60_000 })
  })

  it('merges the logs of several Groups by occurrence time', () => {
    const one = [started('a', 'l1', 'x', 5, 'urn:g:a')]
    const two = [started('b', 'l2', 'y', 1, 'urn:g:b')]
    expect(mergeLogs([one, two]).map((e) => e.groupId)).toEqual(['urn:g:b', 'urn:g:a'])
  })
})
