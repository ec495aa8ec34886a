/**
 * Slot isolation (§11.1), fenced leases (§11.3) and side effects that never repeat per idempotency
 * key across retries, restarts and reassignment (§11.4, §16), against a real Authority.
 */
import { ProtocolError } from '@weft/codec'
import { createMemoryWorkerStore, ExecutorFailure, type SlotContext } from '@weft/worker'
import { describe, expect, it } from 'vitest'
import { expectIntegrity, offer } from '@weft/testkit/world'
import { cast, deliver, gate, GROUP, kindsOf, offered, rig, settle, spawn } from './harness.js'

/** Every object reachable from `root` (functions excluded: each context has its own closures). */
function reachable(root: unknown, seen = new Set<object>()): Set<object> {
  if (typeof root !== 'object' || root === null || seen.has(root)) return seen
  seen.add(root)
  for (const value of Object.values(root)) reachable(value, seen)
  return seen
}

/** Counts calls of a side effect per idempotency key. */
function ledger() {
  const calls = new Map<string, number>()
  return {
    calls,
    effect: (key: string) => {
      calls.set(key, (calls.get(key) ?? 0) + 1)
      return { receipt: `done:${calls.size}` }
    },
  }
}

describe('slot isolation (§11.1)', () => {
  it('gives each slot its own context: nothing mutable shared, its own token, keys and signal', async () => {
    const r = await rig()
    const contexts: SlotContext[] = []
    const tokens: unknown[] = []
    const hold = gate()
    const { worker } = spawn(r, 'worker1', {
      slots: 2,
      tokenFor: (scope) => ({ token: `token-for:${scope.executionLeaseId}`, scope }),
      executor: async (_item, ctx) => {
        contexts.push(ctx)
        tokens.push(await ctx.token())
        await hold.promise
        return deliver(ctx)
      },
    })
    worker.join([GROUP])
    const a = await offered(r, 'a')
    const b = await offered(r, 'b')
    await worker.tick()
    await settle()
    expect(contexts).toHaveLength(2)
    const [ca, cb] = contexts as [SlotContext, SlotContext]
    // No object reachable from one context is reachable from the other.
    const shared = [...reachable(ca)].filter((o) => reachable(cb).has(o))
    expect(shared).toEqual([])
    expect(ca.signal).not.toBe(cb.signal)
    expect(Object.isFrozen(ca) && Object.isFrozen(ca.item) && Object.isFrozen(ca.item.contract)).toBe(true)
    expect(() => {
      ;(ca.item as { workItemId: string }).workItemId = b
    }).toThrow(TypeError)
    expect([ca.item.workItemId, cb.item.workItemId].sort()).toEqual([a, b].sort())
    // Side-effect keys and capability tokens belong to one WorkItem and one lease (§12, §16).
    expect(ca.sideEffectKey('deploy')).not.toBe(cb.sideEffectKey('deploy'))
    const leaseOf = (id: string) => r.w.item(id).executionLease?.leaseId
    const [ta, tb] = tokens as [{ token: string }, { token: string }]
    expect(ta.token).toBe(`token-for:${leaseOf(ca.item.workItemId)}`)
    expect(tb.token).toBe(`token-for:${leaseOf(cb.item.workItemId)}`)
    expect(ta).not.toBe(tb)
    hold.open()
    await worker.idle()
    expect(r.w.item(a).doc.state).toBe('submitted')
    expect(r.w.item(b).doc.state).toBe('submitted')
    await worker.stop()
  })
})

describe('fenced leases (§11.3)', () => {
  it('stops side effects once the lease is lost: the signal is raised and fn never runs', async () => {
    const r = await rig()
    const effects = ledger()
    const hold = gate()
    let refusal: unknown
    let context: SlotContext | undefined
    const { worker } = spawn(r, 'worker1', {
      slots: 1,
      executor: async (_item, ctx) => {
        context = ctx
        await ctx.sideEffect('prepare', effects.effect)
        await hold.promise
        try {
          await ctx.sideEffect('deploy', effects.effect)
        } catch (error) {
          refusal = error
          throw error
        }
        return deliver(ctx)
      },
    })
    worker.join([GROUP])
    const id = await offered(r, 'fenced')
    await worker.tick()
    await settle()
    // A replacement Session revokes the Worker's Execution Leases (§11.3).
    await r.w.as.controlPlane.identitySessionOpen({ agentId: cast.worker1.actor.id })
    await worker.tick()
    expect(context?.signal.aborted).toBe(true)
    expect(context?.signal.reason).toBeInstanceOf(ProtocolError)
    hold.open()
    await settle()
    expect(refusal).toBeInstanceOf(ProtocolError)
    expect((refusal as ProtocolError).code).toBe('WORK_LEASE_EXPIRED')
    expect([...effects.calls.values()]).toEqual([1])
    expect(worker.runs()[0]).toMatchObject({ workItemId: id, outcome: 'lost', code: 'WORK_LEASE_EXPIRED' })
    expect(kindsOf(r, id)).toContain('ext.missionweaveprotocol.core.work_execution_lease_revoked')
    await worker.stop()
  })

  it('loses a lease that expired on the clock (no renewal reached the Authority)', async () => {
    const r = await rig()
    const hold = gate()
    let context: SlotContext | undefined
    const { worker } = spawn(r, 'worker1', {
      slots: 1,
      leases: { executionLeaseSeconds: 60 },
      executor: async (_item, ctx) => {
        context = ctx
        await hold.promise
        return deliver(ctx)
      },
    })
    worker.join([GROUP])
    const id = await offered(r, 'expiring')
    await worker.tick()
    r.w.clock.advance(61)
    await worker.tick()
    expect(context?.signal.aborted).toBe(true)
    hold.open()
    await settle()
    expect(worker.runs()[0]).toMatchObject({ workItemId: id, outcome: 'lost' })
    expect(r.w.item(id).doc.state).toBe('active')
    await worker.stop()
  })

  it('renews the lease in the background at half its length', async () => {
    const r = await rig()
    const hold = gate()
    const { worker } = spawn(r, 'worker1', { slots: 1, leases: { executionLeaseSeconds: 60 }, executor: async (_item, ctx) => (await hold.promise, deliver(ctx)) })
    worker.join([GROUP])
    const id = await offered(r, 'renewed')
    await worker.tick()
    for (let i = 0; i < 6; i++) {
      r.w.clock.advance(20)
      await worker.tick()
    }
    expect(kindsOf(r, id).filter((k) => k === 'work.progressed').length).toBeGreaterThanOrEqual(3)
    hold.open()
    await worker.idle()
    expect(r.w.item(id).doc.state).toBe('submitted')
    await worker.stop()
  })
})

describe('side effects never repeat per key (§11.4, §16)', () => {
  it('across retries: a recorded effect is not run again, and back-off waits on the clock', async () => {
    const r = await rig()
    const effects = ledger()
    const attempts: number[] = []
    const { worker } = spawn(r, 'worker1', {
      slots: 1,
      executor: async (_item, ctx) => {
        attempts.push(ctx.attempt)
        await ctx.sideEffect('deploy', effects.effect)
        if (ctx.attempt === 1) throw new ExecutorFailure('TRANSIENT', 'the registry timed out')
        return deliver(ctx)
      },
    })
    worker.join([GROUP])
    const id = await offered(r, 'retried')
    await worker.idle()
    // §11.4: exponential back-off from 1 s; the item waits for the clock, not for a timer.
    expect(worker.snapshot().backoff).toEqual([{ workItemId: id, untilMs: r.w.clock.nowMs + 1000 }])
    expect(r.w.item(id).doc.state).toBe('queued')
    r.w.clock.advance(1)
    await worker.idle()
    expect(attempts).toEqual([1, 2])
    expect([...effects.calls.values()]).toEqual([1])
    expect(worker.runs().map((x) => x.outcome)).toEqual(['retry', 'submitted'])
    expect(r.w.item(id).doc.state).toBe('submitted')
    expectIntegrity(r.w)
    await worker.stop()
  })

  it('fails with Evidence once attempts are exhausted or the failure is not retryable', async () => {
    const r = await rig()
    const { worker } = spawn(r, 'worker1', {
      slots: 1,
      executor: async (item) => {
        throw item.workItemId.endsWith('flaky') ? new ExecutorFailure('TRANSIENT', 'still down') : new Error('bad input')
      },
    })
    worker.join([GROUP])
    const flaky = await offered(r, 'flaky', ['worker1'], { retryPolicy: { maxAttempts: 2, backoff: 'fixed', maxDelay: 'PT1S', retryableFailures: ['TRANSIENT'] } })
    const broken = await offered(r, 'broken')
    await worker.idle()
    r.w.clock.advance(1)
    await worker.idle()
    for (const id of [flaky, broken]) {
      expect(r.w.item(id).doc.state).toBe('failed')
      const failed = r.w.authority.events(GROUP).find((e) => e.kind === 'work.failed' && (e.payload as { workItemId: string }).workItemId === id)
      const evidence = (failed!.payload as { evidence: { type: string; result: string; generatedBy: { id: string } }[] }).evidence
      expect(evidence).toMatchObject([{ type: 'failure_report', result: 'failed', generatedBy: { id: cast.worker1.actor.id } }])
    }
    expect(worker.runs().map((x) => [x.workItemId, x.outcome, x.code ?? x.attempt])).toEqual([
      [broken, 'failed', 'EXECUTOR_ERROR'],
      [flaky, 'retry', 2],
      [flaky, 'failed', 'TRANSIENT'],
    ])
    await worker.stop()
  })

  it('across a restart with local state kept and across reassignment: one call per key', async () => {
    const r = await rig()
    const effects = ledger()
    const store = createMemoryWorkerStore()
    const hold = gate()
    const first = spawn(r, 'worker1', {
      slots: 1,
      store,
      executor: async (_item, ctx) => {
        await ctx.sideEffect('deploy', effects.effect)
        await ctx.checkpoint({ deployed: true })
        await hold.promise
        return deliver(ctx)
      },
    })
    first.worker.join([GROUP])
    const id = await offered(r, 'durable')
    await first.worker.tick()
    await settle()
    expect([...effects.calls.values()]).toEqual([1])
    // The process dies; its replacement opens Session 2, which revokes the old lease (§11.3).
    await first.worker.stop()
    hold.open()
    await r.w.as.controlPlane.identitySessionOpen({ agentId: cast.worker1.actor.id })
    let resumed: unknown
    let recorded: unknown
    const second = spawn(r, 'worker1', {
      slots: 1,
      store,
      sessionEpoch: 2,
      executor: async (_item, ctx) => {
        resumed = ctx.resumeState
        recorded = await ctx.sideEffect('deploy', effects.effect)
        return deliver(ctx)
      },
    })
    second.worker.join([GROUP])
    await second.worker.idle()
    expect(r.w.item(id).doc.state).toBe('submitted')
    expect(resumed).toEqual({ deployed: true })
    expect(recorded).toEqual({ receipt: 'done:1' })
    expect([...effects.calls.values()]).toEqual([1])
    await second.worker.stop()

    // Reassignment: a new owner works under a new Ownership Epoch, hence other keys, each used once.
    const other = await offered(r, 'reassigned', ['worker1'])
    const stuck = spawn(r, 'worker1', { slots: 1, sessionEpoch: 2, executor: async (_item, ctx) => (await ctx.sideEffect('deploy', effects.effect), await new Promise<never>(() => {})) })
    stuck.worker.join([GROUP])
    await stuck.worker.tick()
    await settle()
    await stuck.worker.stop()
    r.w.clock.advance(601)
    await offer(r.w, other, ['worker2'])
    const takeover = spawn(r, 'worker2', { slots: 1, executor: async (_item, ctx) => (await ctx.sideEffect('deploy', effects.effect), deliver(ctx)) })
    takeover.worker.join([GROUP])
    await takeover.worker.idle()
    expect(r.w.item(other).doc.state).toBe('submitted')
    expect(r.w.item(other).doc.owner?.ownershipEpoch).toBe(2)
    expect([...effects.calls.values()]).toEqual([1, 1, 1])
    expectIntegrity(r.w)
    await takeover.worker.stop()
  })
})
