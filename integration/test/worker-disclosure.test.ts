/**
 * Schedule re-disclosure against a real Authority (§11.2): a queued WorkItem whose estimate moves
 * materially gets one revised estimate in its own Conversation, rate-limited, and the Message
 * carries nothing of another Group.
 */
import type { Event, Message } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { cast } from '@weft/testkit/fixtures'
import { coordinatorOf, openMission } from '@weft/testkit/world'
import { deliver, gate, GROUP, GROUP_TWO, offered, rig, settle, spawn, type Rig } from './harness.js'

const MIN = 60
/** Every WorkItem is expected to take 20 minutes, so one queued behind a running one starts 20 minutes out. */
const DURATION_MS = 20 * 60_000

/** The Messages worker1 posted in `groupId`, oldest first; with `workItemId`, only those in its Conversation. */
function disclosures(r: Rig, workItemId?: string, groupId = GROUP): Message[] {
  const conversationId = workItemId === undefined ? undefined : r.w.in(groupId).item(workItemId).doc.conversationId
  return r.w.authority
    .events(groupId)
    .filter((e: Event) => e.kind === 'message.posted' && e.actor.id === cast.worker1.actor.id)
    .map((e) => e.payload as Message)
    .filter((m) => conversationId === undefined || m.conversationId === conversationId)
}

/**
 * worker1 with one slot, held by WorkItem `blocker` until `blocker.open()`, in `groups` (which
 * must already be open); then WorkItem `waiting` of {@link GROUP} is accepted and queued behind it.
 */
async function queuedBehindBlocker(r: Rig, groups: readonly string[] = [GROUP]) {
  const blocker = gate()
  const { worker } = spawn(r, 'worker1', {
    slots: 1,
    preemptAtUrgency: false,
    // Aging slower than the test's hour, so fresher work of higher urgency stays ahead (§11.1).
    agingMs: 3_600_000,
    admission: { expectedDurationMs: DURATION_MS },
    executor: async (item, ctx) => {
      if (item.workItemId.endsWith('blocker')) await blocker.promise
      return deliver(ctx)
    },
  })
  worker.join(groups)
  await offered(r, 'blocker')
  await worker.tick()
  const waiting = await offered(r, 'waiting', ['worker1'], { requestedUrgency: 'routine' })
  await worker.tick()
  return { worker, blocker, waiting }
}

describe('schedule re-disclosure of queued work (§11.2)', () => {
  it('posts nothing for an immaterial move, then one Message in the WorkItem Conversation that the Authority accepts', async () => {
    const r = await rig([GROUP], ['worker1'])
    const { worker, blocker, waiting } = await queuedBehindBlocker(r)
    expect(r.w.item(waiting).doc.state).toBe('queued')
    // Accepted 20 minutes out; 5 minutes later the blocker still runs, so the start is 5 minutes later: not material.
    r.w.clock.advance(5 * MIN)
    await worker.tick()
    expect(disclosures(r)).toEqual([])
    // 11 minutes in, the start has moved 11 minutes: above the 10-minute floor.
    r.w.clock.advance(6 * MIN)
    await worker.tick()
    const [posted, ...rest] = disclosures(r)
    expect(rest).toEqual([])
    expect(posted?.conversationId).toBe(r.w.item(waiting).doc.conversationId)
    const data = posted?.content.find((p) => p.type === 'data_ref')
    const startMs = r.w.clock.nowMs + DURATION_MS
    expect(data).toMatchObject({
      data: {
        type: 'schedule_estimate',
        workItemId: waiting,
        scheduleEstimate: {
          estimatedStart: new Date(startMs).toISOString(),
          estimatedCompletion: new Date(startMs + DURATION_MS).toISOString(),
          capacityStatus: 'queued',
          lastCalculatedAt: new Date(r.w.clock.nowMs).toISOString(),
        },
      },
    })
    expect(posted?.content[0]).toMatchObject({ type: 'text' })
    blocker.open()
    await worker.idle()
    expect(r.w.item(waiting).doc.state).toBe('submitted')
    await worker.stop()
  })

  it('posts at most one revision per WorkItem per interval', async () => {
    const r = await rig([GROUP], ['worker1'])
    const { worker, blocker, waiting } = await queuedBehindBlocker(r)
    r.w.clock.advance(11 * MIN)
    await worker.tick()
    expect(disclosures(r, waiting)).toHaveLength(1)
    // Work of higher urgency queues ahead: a move of 40 minutes, but inside the 5-minute interval.
    for (const name of ['urgent-1', 'urgent-2']) await offered(r, name, ['worker1'], { requestedUrgency: 'high' })
    await worker.tick()
    r.w.clock.advance(2 * MIN)
    await worker.tick()
    expect(disclosures(r, waiting)).toHaveLength(1)
    r.w.clock.advance(3 * MIN)
    await worker.tick()
    const all = disclosures(r, waiting)
    expect(all).toHaveLength(2)
    const latest = all[1]?.content.find((p) => p.type === 'data_ref')
    expect(latest).toMatchObject({ data: { workItemId: waiting, scheduleEstimate: { estimatedStart: new Date(r.w.clock.nowMs + 3 * DURATION_MS).toISOString() } } })
    blocker.open()
    await worker.idle()
    await worker.stop()
  })

  it('never names another Group, its Mission, WorkItems, content or Conversations', async () => {
    const r = await rig([GROUP], ['worker1'])
    const two = r.w.in(GROUP_TWO)
    await openMission(two, { title: 'Project Zanzibar Ledger', objective: 'Reconcile the Zanzibar ledger in secret.' })
    await coordinatorOf(two).membershipChange({
      membershipId: `${GROUP_TWO}:membership:worker1`,
      member: cast.worker1.actor,
      role: 'worker',
      state: 'active',
      scopes: ['group:read'],
      visibilityStartSequence: 0,
    })
    const { worker, blocker } = await queuedBehindBlocker(r, [GROUP, GROUP_TWO])
    const secret: string[] = [GROUP_TWO, 'Project Zanzibar Ledger', 'Reconcile the Zanzibar ledger in secret.']
    for (let i = 0; i < 3; i++) {
      const id = await offered(r, `zanzibar-${i}`, ['worker1'], { goal: `Audit Zanzibar account ${i}.`, requestedUrgency: 'high' }, GROUP_TWO)
      secret.push(id, `Audit Zanzibar account ${i}.`, r.w.in(GROUP_TWO).item(id).doc.conversationId)
    }
    const mission = r.w.authority.events(GROUP_TWO).find((e) => e.kind === 'mission.created')!.payload as { mission: { missionId: string } }
    secret.push(mission.mission.missionId)
    await worker.tick()
    r.w.clock.advance(11 * MIN)
    await worker.tick()
    await settle()
    const mine = disclosures(r)
    // Group two's queued work is interleaved into the estimate, so a revision was due.
    expect(mine.length).toBeGreaterThan(0)
    const text = JSON.stringify(mine.map((m) => m.content))
    for (const s of secret) expect(text).not.toContain(s)
    expect(text.toLowerCase()).not.toContain('zanzibar')
    blocker.open()
    await worker.idle()
    await worker.stop()
  })
})
