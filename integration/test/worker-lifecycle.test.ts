/**
 * A reference Worker against a real Group Authority, meeting it only through a Transport and an
 * EventFeed: the full WorkItem lifecycle (§10.2, §10.3, §11.2–§11.4, §13) and blocking.
 */
import { describe, expect, it } from 'vitest'
import { acceptResult, enrol, expectIntegrity, wid } from '@weft/testkit/world'
import { deliver, GROUP, kindsOf, offered, rig, settle, spawn } from './harness.js'

describe('a Worker runs the lifecycle through the Authority', () => {
  it('offer → accept → start → progress → checkpoint → publish → submit → accept_result', async () => {
    const r = await rig()
    const { worker } = spawn(r, 'worker1', {
      slots: 1,
      executor: async (_item, ctx) => {
        await ctx.progress({ phase: 'build', completedMilestones: ['tests written'] })
        await ctx.checkpoint({ step: 1 }, { phase: 'build', completedMilestones: ['tests written'], nextStep: 'implement' })
        return deliver(ctx)
      },
    })
    worker.join([GROUP])
    const id = await offered(r, 'life')
    await worker.idle()
    expect(r.w.item(id).doc.state).toBe('submitted')
    await acceptResult(r.w, id)
    expect(r.w.item(id).doc.state).toBe('verified')
    expect(kindsOf(r, id)).toEqual([
      'work.authorized',
      'work.offer.created',
      'work.offer.accepted',
      'work.started',
      'work.progressed',
      'work.checkpointed',
      // §10.2: the checkpoint released the lease; the slot starts again under a new one.
      'work.started',
      'artifact.published',
      'work.submitted',
      'work.result.accepted',
    ])
    // §11.2: the acceptance carried the Worker's disclosure, and it reached the WorkItem.
    const [decision] = worker.decisions()
    expect(decision).toMatchObject({ workItemId: id, decision: 'accepted' })
    expect(r.w.item(id).doc.scheduleEstimate).toEqual(decision?.scheduleEstimate)
    expect(r.w.item(id).doc.progress?.currentPhase).toBe('build')
    expect(worker.runs().map((x) => x.outcome)).toEqual(['submitted'])
    expect(worker.snapshot()).toMatchObject({ queued: [], active: [], offline: false })
    expectIntegrity(r.w)
    await worker.stop()
  })

  it('works for a late joiner whose history starts at its visibility start (§8)', async () => {
    const r = await rig()
    await offered(r, 'before', ['worker1'])
    // The Coordinator enrols worker3 now, with the default visibility: nothing before this point.
    await enrol(r.w, ['worker3'])
    const start = r.w.group().memberships.get(`${GROUP}:membership:worker3`)?.visibilityStartSequence
    expect(start).toBeGreaterThan(0)
    const { worker } = spawn(r, 'worker3', { slots: 1, executor: async (_item, ctx) => deliver(ctx) })
    worker.join([GROUP])
    const id = await offered(r, 'late', ['worker3'])
    await worker.idle()
    expect(r.w.item(id).doc.state).toBe('submitted')
    expect(worker.projection.group(GROUP)?.work.has(wid('before'))).toBe(false)
    await worker.stop()
  })

  it('ticks by itself once started: arriving Events and ending runs drive it', async () => {
    const r = await rig()
    const { worker } = spawn(r, 'worker1', { slots: 1, executor: async (_item, ctx) => deliver(ctx) })
    worker.join([GROUP])
    worker.start()
    const a = await offered(r, 'auto-a')
    const b = await offered(r, 'auto-b')
    for (let i = 0; i < 500 && r.w.item(b).doc.state !== 'submitted'; i++) await settle(1)
    expect([r.w.item(a).doc.state, r.w.item(b).doc.state]).toEqual(['submitted', 'submitted'])
    await worker.stop()
    // Stopped: a new offer is left alone.
    const c = await offered(r, 'auto-c')
    await settle()
    expect(r.w.item(c).doc.state).toBe('offered')
  })

  it('releases the slot when the executor blocks, and resumes from the blocked checkpoint once unblocked', async () => {
    const r = await rig()
    const order: string[] = []
    let resumed: unknown
    const { worker } = spawn(r, 'worker1', {
      slots: 1,
      executor: async (item, ctx) => {
        order.push(item.workItemId)
        if (item.workItemId.endsWith('first') && ctx.resumeState === undefined) {
          await ctx.block('Waiting for credentials.', { requiredResolution: 'Grant repository access.', state: { step: 2 } })
        }
        if (item.workItemId.endsWith('first')) resumed = ctx.resumeState
        return deliver(ctx)
      },
    })
    worker.join([GROUP])
    const first = await offered(r, 'first')
    await worker.tick()
    const second = await offered(r, 'second')
    await worker.idle()
    expect(r.w.item(first).doc.state).toBe('blocked')
    expect(r.w.item(second).doc.state).toBe('submitted')
    expect(worker.runs().map((x) => [x.workItemId, x.outcome])).toEqual([
      [first, 'blocked'],
      [second, 'submitted'],
    ])
    // §11.4: the blocker is resolved; the WorkItem re-enters its queue and resumes from its checkpoint.
    await r.w.as.coordinator.workUnblock({ workItemId: first, resolution: 'Access granted.' })
    await worker.idle()
    expect(r.w.item(first).doc.state).toBe('submitted')
    expect(resumed).toEqual({ step: 2 })
    expect(order).toEqual([first, second, first])
    expect(kindsOf(r, first).filter((k) => k.startsWith('work.'))).toEqual([
      'work.authorized',
      'work.offer.created',
      'work.offer.accepted',
      'work.started',
      'work.blocked',
      'work.unblocked',
      'work.started',
      'work.submitted',
    ])
    expectIntegrity(r.w)
    await worker.stop()
  })
})
