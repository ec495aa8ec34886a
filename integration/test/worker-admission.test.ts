/**
 * Admission control against a real Authority (§10.3): the Worker declines offers it cannot commit
 * to, with each structured reason, and never sends an acceptance for them; what it accepts it
 * accepts with a schedule disclosure (§11.2).
 */
import type { OfferDeclineReason, WorkContract } from '@weft/spec'
import type { WorkerOptions } from '@weft/worker'
import { describe, expect, it } from 'vitest'
import { failWork } from '@weft/testkit/world'
import { cast, deliver, gate, GROUP, offered, rig, spawn, type Rig } from './harness.js'

/** Offers `name` to a fresh worker1 with `options`, ticks once, and returns its decisions and the WorkItem's state. */
async function decide(r: Rig, name: string, options: Partial<WorkerOptions>, overrides: Partial<WorkContract> = {}) {
  const executor = options.executors === undefined ? { executor: async (_item: unknown, ctx: Parameters<typeof deliver>[0]) => deliver(ctx) } : {}
  const { worker, link } = spawn(r, 'worker1', { slots: 1, ...executor, ...options })
  worker.join([GROUP])
  const id = await offered(r, name, ['worker1'], overrides)
  await worker.tick()
  const result = { decisions: worker.decisions().filter((d) => d.workItemId === id), state: r.w.item(id).doc.state, sent: [...link.sent] }
  await worker.stop()
  return result
}

describe('declines with a structured reason (§10.3)', () => {
  const cases: readonly [OfferDeclineReason, (r: Rig) => Promise<Awaited<ReturnType<typeof decide>>>][] = [
    ['capability', (r) => decide(r, 'cap', { executors: { 'weft.other.capability': async (_i, ctx) => deliver(ctx) } })],
    ['authorization', (r) => decide(r, 'auth', { admission: { maxSideEffectRisk: 'none' } })],
    [
      'dependency',
      async (r) => {
        const dead = await offered(r, 'dead', ['worker2'])
        await failWork(r.w, dead)
        return decide(r, 'dependent', {}, { dependencyWorkItemIds: [dead] })
      },
    ],
    ['budget', (r) => decide(r, 'budget', { executor: { run: async (_i, ctx) => deliver(ctx), needs: { modelTokenLimit: 50_000 } } })],
    ['deadline', (r) => decide(r, 'deadline', { admission: { expectedDurationMs: 3_600_000 } }, { deadline: '2026-07-15T00:30:00Z' })],
    [
      'capacity',
      async (r) => {
        const hold = gate()
        const { worker } = spawn(r, 'worker1', { slots: 1, admission: { maxQueued: 1 }, executor: async (_i, ctx) => (await hold.promise, deliver(ctx)) })
        worker.join([GROUP])
        await offered(r, 'held')
        await worker.tick()
        const id = await offered(r, 'overflow')
        await worker.tick()
        const result = { decisions: worker.decisions().filter((d) => d.workItemId === id), state: r.w.item(id).doc.state, sent: [] }
        hold.open()
        await worker.stop()
        return result
      },
    ],
  ]
  for (const [reason, run] of cases) {
    it(`declines with ${reason} and leaves the offer untouched`, async () => {
      const r = await rig()
      const { decisions, state, sent } = await run(r)
      expect(decisions).toHaveLength(1)
      expect(decisions[0]).toMatchObject({ decision: 'declined', reason })
      expect(decisions[0]?.detail?.length).toBeGreaterThan(0)
      // Core has no decline Command: the offer stays pending until it expires or is replaced.
      expect(state).toBe('offered')
      expect(sent).not.toContain('work.accept_offer')
    })
  }

  it('records an acceptance the Authority refused, and forgets an offer another candidate won', async () => {
    const r = await rig()
    // A runtime still on Session 1 after the Organization opened Session 2 (§6.3): its Commands are fenced.
    await r.w.as.controlPlane.identitySessionOpen({ agentId: cast.worker1.actor.id })
    const { worker } = spawn(r, 'worker1', { slots: 1, executor: async (_i, ctx) => deliver(ctx) })
    worker.join([GROUP])
    const fenced = await offered(r, 'fenced')
    await worker.tick()
    expect(worker.decisions()).toMatchObject([{ workItemId: fenced, decision: 'refused', code: 'AUTH_STALE_SESSION' }])
    expect(r.w.item(fenced).doc.state).toBe('offered')
    const won = await offered(r, 'race', ['worker2', 'worker1'])
    await r.w.as.worker2.workAcceptOffer({ workItemId: won, ownershipLeaseSeconds: 600 })
    await worker.tick()
    expect(worker.decisions().filter((d) => d.workItemId === won)).toEqual([])
    await worker.stop()
  })
})
