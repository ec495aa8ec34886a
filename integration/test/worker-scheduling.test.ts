/**
 * The Worker's Scheduler against a real Authority: weighted fairness across Missions (§11.1) and
 * cooperative preemption at safe points with resumption from the checkpoint (§11.3).
 */
import { PreemptionRequested, type SlotContext } from '@weft/worker'
import { describe, expect, it } from 'vitest'
import { expectIntegrity, grantExecution } from '@weft/testkit/world'
import { deliver, gate, GROUP, GROUP_TWO, kindsOf, offered, rig, settle, spawn } from './harness.js'

describe('weighted fairness across Groups (§11.1)', () => {
  it('starts work of two Missions 3:1 on one shared Worker with weights 3 and 1', async () => {
    const r = await rig([GROUP, GROUP_TWO], ['worker1'])
    const { worker } = spawn(r, 'worker1', { slots: 1, weights: (g) => (g === GROUP ? 3 : 1), executor: async (_item, ctx) => deliver(ctx) })
    worker.join([GROUP, GROUP_TWO])
    for (let i = 0; i < 12; i++) {
      await offered(r, `one-${i}`, ['worker1'], {}, GROUP)
      await offered(r, `two-${i}`, ['worker1'], {}, GROUP_TWO)
    }
    await worker.idle()
    const starts = [GROUP, GROUP_TWO].flatMap((g) => r.w.authority.events(g).filter((e) => e.kind === 'work.started'))
    // One slot and every run submitted: the order of runs is the order of starts.
    const order = worker.runs().map((x) => (x.groupId === GROUP ? 'A' : 'B'))
    expect(order).toHaveLength(24)
    expect(starts).toHaveLength(24)
    // While both Groups have work, every window of four starts holds three of Group one.
    const whileBoth = order.slice(0, 16)
    for (let i = 0; i + 4 <= whileBoth.length; i += 4) expect(whileBoth.slice(i, i + 4).filter((g) => g === 'A')).toHaveLength(3)
    expect(worker.runs().every((x) => x.outcome === 'submitted')).toBe(true)
    expectIntegrity(r.w)
    await worker.stop()
  })
})

describe('risk gates (§11.1, §12)', () => {
  it('holds work that needs an Execution Approval until one is granted for its epoch, while other work runs', async () => {
    const r = await rig()
    const { worker } = spawn(r, 'worker1', { slots: 1, executor: async (_item, ctx) => deliver(ctx) })
    worker.join([GROUP])
    const gated = await offered(r, 'gated', ['worker1'], { executionApproval: 'policy_required', requestedUrgency: 'critical' })
    const free = await offered(r, 'free', ['worker1'], { requestedUrgency: 'routine' })
    await worker.idle()
    expect(r.w.item(free).doc.state).toBe('submitted')
    expect(r.w.item(gated).doc.state).toBe('queued')
    expect(worker.snapshot().queued.map((q) => q.workItemId)).toEqual([gated])
    await grantExecution(r.w, gated)
    await worker.idle()
    expect(r.w.item(gated).doc.state).toBe('submitted')
    expect(worker.runs().map((x) => [x.workItemId, x.outcome])).toEqual([
      [free, 'submitted'],
      [gated, 'submitted'],
    ])
    await worker.stop()
  })
})

describe('cooperative preemption (§11.3)', () => {
  /** An executor that walks three steps, each released by a gate, with a safe point after each. */
  function stepper(gates: readonly { promise: Promise<void> }[], trace: string[], contexts: SlotContext[]) {
    return async (item: { workItemId: string }, ctx: SlotContext) => {
      contexts.push(ctx)
      if (item.workItemId.endsWith('urgent')) {
        trace.push('urgent')
        return deliver(ctx)
      }
      let step = (ctx.resumeState as { step?: number } | undefined)?.step ?? 0
      trace.push(`low from ${step}`)
      while (step < 3) {
        await gates[step]!.promise
        step++
        trace.push(`low step ${step}`)
        await ctx.safePoint({ step })
      }
      return deliver(ctx)
    }
  }

  it('asks running low-urgency work to stop, which it does only at its next safe point, then resumes it from that checkpoint', async () => {
    const r = await rig()
    const gates = [gate(), gate(), gate()]
    const trace: string[] = []
    const contexts: SlotContext[] = []
    const { worker } = spawn(r, 'worker1', { slots: 1, executor: stepper(gates, trace, contexts) })
    worker.join([GROUP])
    const low = await offered(r, 'low', ['worker1'], { requestedUrgency: 'routine' })
    await worker.tick()
    expect(r.w.item(low).doc.state).toBe('active')
    const urgent = await offered(r, 'urgent', ['worker1'], { requestedUrgency: 'critical' })
    await worker.tick()
    await settle()
    // Requested, not forced: the WorkItem is still running and nothing was checkpointed (no unsafe interruption).
    expect(contexts[0]?.signal.aborted).toBe(true)
    expect(contexts[0]?.signal.reason).toBeInstanceOf(PreemptionRequested)
    expect(r.w.item(low).doc.state).toBe('active')
    expect(kindsOf(r, low)).not.toContain('work.checkpointed')
    expect(worker.snapshot().queued.map((q) => q.workItemId)).toEqual([urgent])
    // The executor reaches its safe point: checkpoint emitted, slot released, urgent work runs, then low resumes.
    for (const g of gates) g.open()
    await worker.idle()
    expect(trace).toEqual(['low from 0', 'low step 1', 'urgent', 'low from 1', 'low step 2', 'low step 3'])
    expect(r.w.item(low).doc.state).toBe('submitted')
    expect(r.w.item(urgent).doc.state).toBe('submitted')
    expect(kindsOf(r, low).filter((k) => k !== 'work.offer.created' && k !== 'work.authorized')).toEqual([
      'work.offer.accepted',
      'work.started',
      'work.checkpointed',
      'work.started',
      'artifact.published',
      'work.submitted',
    ])
    expect(r.w.item(low).lastCheckpoint?.phase).toBe('preempted')
    expect(worker.runs().map((x) => [x.workItemId, x.outcome])).toEqual([
      [low, 'preempted'],
      [urgent, 'submitted'],
      [low, 'submitted'],
    ])
    expectIntegrity(r.w)
    await worker.stop()
  })

  it('preempts on request through worker.preempt, and not at all without a request', async () => {
    const r = await rig()
    const gates = [gate(), gate(), gate()]
    const trace: string[] = []
    const contexts: SlotContext[] = []
    const { worker } = spawn(r, 'worker1', { slots: 1, preemptAtUrgency: false, executor: stepper(gates, trace, contexts) })
    worker.join([GROUP])
    const low = await offered(r, 'low', ['worker1'], { requestedUrgency: 'routine' })
    await worker.tick()
    await offered(r, 'urgent', ['worker1'], { requestedUrgency: 'critical' })
    await worker.tick()
    gates[0]!.open()
    await settle()
    // The automatic rule is off: the safe point passed without a checkpoint.
    expect(trace).toEqual(['low from 0', 'low step 1'])
    expect(contexts[0]?.signal.aborted).toBe(false)
    expect(worker.preempt(low)).toBe(true)
    expect(worker.preempt('urn:weft:test:work:absent')).toBe(false)
    gates[1]!.open()
    gates[2]!.open()
    await worker.idle()
    expect(trace).toEqual(['low from 0', 'low step 1', 'low step 2', 'urgent', 'low from 2', 'low step 3'])
    await worker.stop()
  })
})
