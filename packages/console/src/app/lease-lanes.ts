/**
 * The lease timeline's layout: each holder's leases in lanes, so that leases held at once (a
 * Worker's concurrent slots) never overlap on one lane.
 * @module
 */
import type { GroupView, LeaseSpan } from './model.js'

/** Lanes per holder: overlapping leases of one holder go to separate lanes (its concurrent slots). */
export interface LeaseLane {
  readonly holderId: string
  readonly lane: number
  readonly spans: readonly LeaseSpan[]
}

/**
 * Groups WorkItem leases (execution and blocked: what occupies a slot) per holder into lanes by
 * greedy interval partitioning: a Worker with two concurrent Execution Leases gets two lanes, its
 * slots as the log shows them (§11.1: slots are the Worker's; Events show only their leases).
 * Ownership and Coordinator leases get one lane each per holder.
 */
export function leaseLanes(view: GroupView, nowMs: number): LeaseLane[] {
  const byHolder = new Map<string, LeaseSpan[]>()
  for (const l of view.leases) {
    const list = byHolder.get(l.holderId) ?? []
    list.push(l)
    byHolder.set(l.holderId, list)
  }
  const lanes: LeaseLane[] = []
  for (const [holderId, spans] of [...byHolder.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    for (const kinds of [['coordinator'], ['ownership'], ['execution', 'blocked']] as const) {
      const list = spans.filter((s) => (kinds as readonly string[]).includes(s.kind)).sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt))
      if (list.length === 0) continue
      const ends: number[] = []
      const assigned: LeaseSpan[][] = []
      for (const s of list) {
        const start = Date.parse(s.startedAt)
        let lane = ends.findIndex((end) => end <= start)
        if (lane === -1) {
          lane = ends.length
          ends.push(0)
          assigned.push([])
        }
        ends[lane] = spanEndMs(s, nowMs)
        assigned[lane]!.push(s)
      }
      assigned.forEach((spansOfLane, i) => lanes.push({ holderId, lane: i, spans: spansOfLane }))
    }
  }
  return lanes
}

/** Where a lease's bar ends: when it closed, or for an open one its expiry (or now, if later). */
export function spanEndMs(s: LeaseSpan, nowMs: number): number {
  if (s.endedAt !== undefined) return Date.parse(s.endedAt)
  return Math.max(Date.parse(s.expiresAt), Math.min(nowMs, Date.parse(s.expiresAt)))
}
