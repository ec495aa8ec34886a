/**
 * Recovery against a real Authority: queues rebuilt after a restart, from the local store or by
 * replay from the Authority (§11.1, §16), and bounded offline execution with reconciliation
 * (§11.5).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqliteWorkerStore } from '@weft/store-sqlite'
import { createMemoryWorkerStore, type SlotContext, type WorkerStore } from '@weft/worker'
import { describe, expect, it } from 'vitest'
import { expectIntegrity } from '@weft/testkit/world'
import { deliver, gate, GROUP, GROUP_TWO, kindsOf, offered, rig, settle, spawn, type Rig } from './harness.js'

/** Local stores a restart can keep: one that lives on in the process, and SQLite reopened from its file. */
const KEPT: readonly [string, () => { open: () => WorkerStore; reopen: (s: WorkerStore) => WorkerStore; dispose: () => void }][] = [
  ['in memory', () => ({ open: createMemoryWorkerStore, reopen: (s) => s, dispose: () => {} })],
  [
    'in SQLite, closed and reopened',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'weft-worker-'))
      const path = join(dir, 'worker.db')
      return {
        open: () => openSqliteWorkerStore(path),
        reopen: (s) => (s.close(), openSqliteWorkerStore(path)),
        dispose: () => rmSync(dir, { recursive: true, force: true }),
      }
    },
  ],
]

describe('restart (§11.1: queues are local projections rebuildable by replay)', () => {
  for (const [name, kind] of KEPT) {
    it(`rebuilds the same queues from the kept store (${name}) as from a replay with local state deleted`, async () => {
      const r = await rig([GROUP, GROUP_TWO], ['worker1'])
      const stores = kind()
      const store = stores.open()
      const hold = gate()
      const first = spawn(r, 'worker1', { slots: 1, store, executor: async (_item, ctx) => (await hold.promise, deliver(ctx)) })
      first.worker.join([GROUP, GROUP_TWO])
      for (let i = 0; i < 3; i++) {
        await offered(r, `one-${i}`, ['worker1'], { requestedUrgency: i === 2 ? 'high' : 'normal' }, GROUP)
        await offered(r, `two-${i}`, ['worker1'], {}, GROUP_TWO)
      }
      await first.worker.tick()
      const before = first.worker.snapshot()
      expect(before.active).toHaveLength(1)
      expect(before.queued).toHaveLength(5)
      await first.worker.stop()

      const reopened = stores.reopen(store)
      const kept = spawn(r, 'worker1', { slots: 1, store: reopened, executor: async (_item, ctx) => deliver(ctx) })
      kept.worker.join([GROUP, GROUP_TWO])
      const deleted = spawn(r, 'worker1', { slots: 1, executor: async (_item, ctx) => deliver(ctx) })
      deleted.worker.join([GROUP, GROUP_TWO])
      // The running item is still `active` at the Authority, so neither restart queues it.
      expect(kept.worker.snapshot().queued).toEqual(before.queued)
      expect(deleted.worker.snapshot().queued).toEqual(before.queued)
      for (const groupId of [GROUP, GROUP_TWO]) {
        expect(kept.worker.projection.group(groupId)?.head).toBe(r.w.authority.group(groupId)?.head)
        expect(deleted.worker.projection.group(groupId)?.work).toEqual(kept.worker.projection.group(groupId)?.work)
      }
      hold.open()
      await kept.worker.stop()
      await deleted.worker.stop()
      reopened.close()
      stores.dispose()
    })
  }
})

describe('bounded offline execution (§11.5)', () => {
  /** worker1 running `name` under a 600 s lease, its executor driven by `script`, the link up. */
  async function running(r: Rig, name: string, script: (ctx: SlotContext) => Promise<void>, store = createMemoryWorkerStore()) {
    const runs: SlotContext[] = []
    const spawned = spawn(r, 'worker1', {
      slots: 1,
      store,
      offlineGraceSeconds: 300,
      executor: async (_item, ctx) => {
        runs.push(ctx)
        if (runs.length === 1) await script(ctx)
        return deliver(ctx)
      },
    })
    spawned.worker.join([GROUP])
    const id = await offered(r, name)
    await spawned.worker.tick()
    return { ...spawned, id, runs, store }
  }

  it('keeps working within the grace, buffers signed checkpoints with the binding, refuses irreversible effects, and reconciles on reconnect', async () => {
    const r = await rig()
    const offlineGate = gate()
    const effects: string[] = []
    let refused: unknown
    const { worker, link, id, store } = await running(r, 'offline', async (ctx) => {
      await offlineGate.promise
      await ctx.reportUsage({ toolCalls: 2, modelTokens: 50 })
      await ctx.checkpoint({ step: 1 }, { phase: 'offline work' })
      await ctx.sideEffect('scratch', (key) => effects.push(`reversible ${key.slice(0, 12)}`), { reversible: true })
      await ctx.sideEffect('email', () => effects.push('irreversible')).catch((e: unknown) => (refused = e))
    })
    const lease = r.w.item(id).executionLease!
    link.up = false
    r.w.clock.advance(300)
    // The renewal at half the lease cannot reach the Authority: the Worker goes offline.
    await worker.tick()
    expect(worker.offline).toBe(true)
    const head = r.w.group().head
    offlineGate.open()
    await settle()
    expect(effects).toHaveLength(1)
    expect(refused).toMatchObject({ code: 'WORK_LEASE_EXPIRED', details: { offline: true } })
    const buffered = store.buffered()
    expect(buffered.map((b) => b.kind)).toEqual(['work.checkpoint'])
    const binding = (JSON.parse(buffered[0]!.command) as { extensions: Record<string, { critical: boolean; data: Record<string, unknown> }> }).extensions[
      'urn:missionweaveprotocol:extension:bounded-offline-execution'
    ]
    expect(binding).toMatchObject({
      critical: true,
      data: {
        agentId: lease.holderAgentId,
        workItemId: id,
        executionLeaseId: lease.leaseId,
        originalSessionEpoch: 1,
        historicalLeaseExpiresAt: lease.expiresAt,
        usageDelta: { toolCalls: 2, modelTokens: 50 },
      },
    })
    // Nothing reached the Authority while offline; the executor waits to submit (§11.5: reconcile first).
    expect(r.w.group().head).toBe(head)
    link.up = true
    await worker.idle()
    expect(worker.offline).toBe(false)
    expect(store.buffered()).toEqual([])
    const kinds = kindsOf(r, id)
    expect(kinds.slice(kinds.indexOf('work.started'))).toEqual([
      'work.started',
      'ext.missionweaveprotocol.core.resource_usage_recorded',
      'work.checkpointed',
      'work.started',
      'artifact.published',
      'work.submitted',
    ])
    const usage = r.w.authority.events(GROUP).find((e) => e.kind === 'ext.missionweaveprotocol.core.resource_usage_recorded')
    expect(usage?.payload).toMatchObject({ usageDelta: { toolCalls: 2, modelTokens: 50 }, offlineReconciliation: { historicalSessionEpoch: 1, reconciliationSessionEpoch: 1 } })
    expect(r.w.item(id).doc.state).toBe('submitted')
    expectIntegrity(r.w)
    await worker.stop()
  })

  it('refuses to go on beyond the grace; what was buffered within it is accepted, and the work resumes from it', async () => {
    const r = await rig()
    const offlineGate = gate()
    const late = gate()
    let beyond: unknown
    const { worker, link, id, runs, store } = await running(r, 'graceless', async (ctx) => {
      await offlineGate.promise
      await ctx.checkpoint({ step: 1 })
      await late.promise
      await ctx.checkpoint({ step: 2 }).catch((e: unknown) => {
        beyond = e
        throw e
      })
    })
    link.up = false
    r.w.clock.advance(300)
    await worker.tick()
    expect(worker.offline).toBe(true)
    offlineGate.open()
    await settle()
    expect(store.buffered()).toHaveLength(1)
    // The lease (600 s) and its grace (300 s) are over: the Worker refuses to go on.
    r.w.clock.advance(601)
    late.open()
    await settle()
    expect(beyond).toMatchObject({ code: 'WORK_LEASE_EXPIRED' })
    expect(store.buffered()).toHaveLength(1)
    expect(store.checkpoint(id)?.state).toEqual({ attempt: 1, state: { step: 1 } })
    link.up = true
    await worker.idle()
    // The checkpoint buffered within the window is accepted (§11.5) and the work resumes from it.
    expect(kindsOf(r, id).slice(-4)).toEqual(['work.checkpointed', 'work.started', 'artifact.published', 'work.submitted'])
    expect(runs.map((c) => c.resumeState)).toEqual([undefined, { step: 1 }])
    expect(worker.runs().map((x) => x.outcome)).toEqual(['lost', 'submitted'])
    expectIntegrity(r.w)
    await worker.stop()
  })
})
