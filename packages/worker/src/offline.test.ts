import { ProtocolError, UsageError } from '@weft/codec'
import type { Receipt } from '@weft/client'
import type { Command } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { createMemoryWorkerStore } from './memory-store.js'
import { BOUNDED_OFFLINE_EXECUTION, bindingOf, createOfflineBuffer, isTransportUnavailable, MAX_GRACE_SECONDS, offlineBinding, offlineExtensions, type HistoricalLease } from './offline.js'

const T = Date.parse('2026-07-15T00:00:00.000Z')
const LEASE: HistoricalLease = {
  agentId: 'urn:weft:test:agent:worker-1',
  groupId: 'urn:weft:test:group:one',
  workItemId: 'urn:weft:test:work:a',
  sessionEpoch: 1,
  ownershipEpoch: 2,
  leaseId: 'urn:uuid:00000000-0000-4000-8000-000000000001',
  expiresAtMs: T + 600_000,
}

let actions = 0
function buffered(kind: 'work.checkpoint' | 'ext.missionweaveprotocol.core.work_execution_lease_renew', atMs: number, usage = {}, workItemId = LEASE.workItemId): Command & { kind: typeof kind } {
  const binding = offlineBinding({ ...LEASE, workItemId }, { disconnectedAtMs: T + 60_000, bufferedAtMs: atMs, graceMs: 300_000 }, usage, `urn:weft:test:action:${++actions}`)
  return { kind, actionId: binding.originalActionId, payload: { workItemId }, extensions: offlineExtensions(binding) } as unknown as Command & { kind: typeof kind }
}

const receipt = (command: Command): Receipt => ({ actionId: command.actionId, kind: command.kind }) as unknown as Receipt

describe('the §11.5 binding', () => {
  it('records the historical execution, the window and all six usage dimensions, critically', () => {
    const binding = offlineBinding(LEASE, { disconnectedAtMs: T + 60_000, bufferedAtMs: T + 120_000, graceMs: 300_000 }, { modelTokens: 5 }, 'urn:weft:test:action:x')
    expect(binding).toEqual({
      agentId: LEASE.agentId,
      groupId: LEASE.groupId,
      workItemId: LEASE.workItemId,
      originalSessionEpoch: 1,
      ownershipEpoch: 2,
      executionLeaseId: LEASE.leaseId,
      disconnectedAt: '2026-07-15T00:01:00.000Z',
      bufferedAt: '2026-07-15T00:02:00.000Z',
      graceDeadline: '2026-07-15T00:15:00.000Z',
      historicalLeaseExpiresAt: '2026-07-15T00:10:00.000Z',
      usageDelta: { financialMicrounits: 0, modelTokens: 5, toolCalls: 0, computeSeconds: 0, wallClockSeconds: 0, externalActions: 0 },
      originalActionId: 'urn:weft:test:action:x',
    })
    expect(offlineExtensions(binding)[BOUNDED_OFFLINE_EXECUTION]).toEqual({ version: '1.0.0', critical: true, data: binding })
  })

  it('tells an unreachable service from a refusal or misuse', () => {
    expect(isTransportUnavailable(new Error('ECONNRESET'))).toBe(true)
    expect(isTransportUnavailable(new ProtocolError('WORK_LEASE_EXPIRED', 'x'))).toBe(false)
    expect(isTransportUnavailable(new UsageError('x'))).toBe(false)
  })
})

describe('the offline buffer', () => {
  it('bounds work by lease plus grace and refuses an unbounded grace', () => {
    const b = createOfflineBuffer({ store: createMemoryWorkerStore(), graceSeconds: 300 })
    expect(b.withinGrace(LEASE.expiresAtMs, LEASE.expiresAtMs + 300_000)).toBe(true)
    expect(b.withinGrace(LEASE.expiresAtMs, LEASE.expiresAtMs + 300_001)).toBe(false)
    expect(() => createOfflineBuffer({ store: createMemoryWorkerStore(), graceSeconds: MAX_GRACE_SECONDS + 1 })).toThrow(UsageError)
  })

  it('fixes the disconnect time at the first detection', () => {
    const b = createOfflineBuffer({ store: createMemoryWorkerStore() })
    expect(b.offline).toBe(false)
    b.markDisconnected(T + 5)
    b.markDisconnected(T + 9)
    expect([b.offline, b.disconnectedAtMs]).toEqual([true, T + 5])
  })

  it('coalesces per WorkItem: a checkpoint replaces earlier progress and checkpoints and carries their usage', () => {
    const b = createOfflineBuffer({ store: createMemoryWorkerStore() })
    b.buffer(buffered('ext.missionweaveprotocol.core.work_execution_lease_renew', T + 100_000), T + 100_000)
    b.buffer(buffered('work.checkpoint', T + 110_000, { toolCalls: 2 }), T + 110_000)
    b.buffer(buffered('work.checkpoint', T + 115_000, {}, 'urn:weft:test:work:other'), T + 115_000)
    expect(b.carriedUsage(LEASE.workItemId, 'work.checkpoint').toolCalls).toBe(2)
    // Progress does not replace a checkpoint, so it carries nothing.
    expect(b.carriedUsage(LEASE.workItemId, 'ext.missionweaveprotocol.core.work_execution_lease_renew').toolCalls).toBe(0)
    b.buffer(buffered('work.checkpoint', T + 120_000, { toolCalls: 3 }), T + 120_000)
    const mine = b.pending(LEASE.workItemId)
    expect(mine.map((e) => e.kind)).toEqual(['work.checkpoint'])
    expect(bindingOf(JSON.parse(mine[0]!.command) as Command)?.usageDelta.toolCalls).toBe(3)
    expect(b.pending()).toHaveLength(2)
    expect(() => b.buffer({ kind: 'work.checkpoint', payload: {} } as unknown as Command & { kind: 'work.checkpoint' }, T)).toThrow(UsageError)
  })

  it('reconciles in order, drops refusals, stops while unreachable and goes online when through', async () => {
    const store = createMemoryWorkerStore()
    const b = createOfflineBuffer({ store })
    b.markDisconnected(T)
    for (const id of ['a', 'b', 'c']) b.buffer(buffered('work.checkpoint', T + 1000, {}, `urn:weft:test:work:${id}`), T + 1000)
    let reachable = false
    const seen: string[] = []
    const resubmit = async (command: Command) => {
      const id = (command.payload as { workItemId: string }).workItemId
      if (!reachable) throw new Error('ECONNREFUSED')
      seen.push(id)
      if (id.endsWith(':b')) throw new ProtocolError('WORK_LEASE_EXPIRED', 'outside the window')
      return receipt(command)
    }
    const first = await b.reconcile(resubmit)
    expect([first.complete, b.offline, b.pending()]).toMatchObject([false, true, { length: 3 }])
    reachable = true
    const second = await b.reconcile(resubmit)
    expect(seen).toEqual(['urn:weft:test:work:a', 'urn:weft:test:work:b', 'urn:weft:test:work:c'])
    expect(second.accepted.map((a) => a.entry.workItemId)).toEqual(['urn:weft:test:work:a', 'urn:weft:test:work:c'])
    expect(second.refused.map((r) => r.error.code)).toEqual(['WORK_LEASE_EXPIRED'])
    expect([second.complete, b.offline, b.disconnectedAtMs, b.pending()]).toEqual([true, false, undefined, []])
  })

  it('starts offline after a restart that left Commands buffered, so they are reconciled first', () => {
    const store = createMemoryWorkerStore()
    createOfflineBuffer({ store }).buffer(buffered('work.checkpoint', T + 1000), T + 1000)
    const restarted = createOfflineBuffer({ store })
    expect([restarted.offline, restarted.disconnectedAtMs]).toEqual([true, T + 1000])
  })
})
