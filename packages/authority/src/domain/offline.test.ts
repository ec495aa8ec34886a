import { describe, expect, it } from 'vitest'
import { FOREIGN_EXTENSION, later, offlineBinding, offlineExtensions } from '../../test/fixtures-offline.js'
import { activate, checkpointOf, exec, item, rejection, start, wid, world, type Running, type World } from '../../test/fixtures-work.js'
import { cast } from '@weft/testkit/fixtures'
import { closeLease } from './leases.js'
import { historicalState, noncriticalExtensions, offlineBindingIssues, offlineBindingOf, MAX_OFFLINE_GRACE_SECONDS, type OfflineBinding } from './offline.js'
import type { Usage } from './work-budget.js'

const renew = 'ext.missionweaveprotocol.core.work_execution_lease_renew'

/** A WorkItem active under worker1's Execution Lease, the clock moved `seconds` on. */
function running(seconds = 180): { w: World; id: string; r: Running } {
  const w = world()
  const id = wid('offline')
  const r = activate(w, id)
  w.clock.advance(seconds)
  return { w, id, r }
}

function bindingOf(w: World, id: string, overrides: Partial<OfflineBinding> = {}, usage: Partial<Usage> = {}): OfflineBinding {
  return offlineBinding(item(w, id).executionLease!, overrides, usage)
}

function checkpointPayload(w: World, id: string, r: Running) {
  const checkpoint = { ...checkpointOf(w), createdAt: later(item(w, id).executionLease!.issuedAt, 90) }
  return { workItemId: id, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, checkpoint, resumeWithinSeconds: 600 }
}

function buffered(w: World, id: string, r: Running, binding: unknown, entry: { version?: string; critical?: boolean } = {}) {
  return rejection(w, 'work.checkpoint', checkpointPayload(w, id, r), cast.worker1, { extensions: offlineExtensions(binding, entry) })
}

describe('offlineBindingOf (§11.5, §18)', () => {
  const valid = offlineBinding({
    leaseId: 'urn:weft:test:lease:1',
    leaseType: 'execution',
    missionId: 'urn:weft:test:mission:one',
    groupId: 'urn:weft:test:group:one',
    workItemId: 'urn:weft:test:work:a',
    holderAgentId: 'urn:weft:test:agent:w',
    sessionEpoch: 1,
    ownershipEpoch: 1,
    issuedAt: '2026-07-15T00:00:00.000Z',
    startsAt: '2026-07-15T00:00:00.000Z',
    expiresAt: '2026-07-15T00:10:00.000Z',
    state: 'active',
    renewalCount: 0,
  })

  it('returns undefined without the binding and the data with it', () => {
    expect(offlineBindingOf({})).toBeUndefined()
    expect(offlineBindingOf({ extensions: { ...FOREIGN_EXTENSION } })).toBeUndefined()
    expect(offlineBindingOf({ extensions: offlineExtensions(valid) })).toEqual(valid)
    expect(offlineBindingIssues({ ...valid, originalActionId: 'urn:weft:test:action:old' })).toEqual([])
  })

  it('refuses another major version as an unknown critical profile, and a noncritical binding', () => {
    expect(() => offlineBindingOf({ extensions: offlineExtensions(valid, { version: '2.0.0' }) })).toThrow(expect.objectContaining({ code: 'UNKNOWN_CRITICAL_EXTENSION' }))
    expect(() => offlineBindingOf({ extensions: offlineExtensions(valid, { critical: false }) })).toThrow(expect.objectContaining({ code: 'INVALID_COMMAND' }))
  })

  it('lists schema problems, bounded, and refuses them as SCHEMA_VALIDATION_FAILED', () => {
    const { usageDelta, ...rest } = valid
    expect(offlineBindingIssues({ ...rest, usageDelta: { ...usageDelta, toolCalls: -1, coffee: 1 } }).map((i) => i.path)).toEqual(['/usageDelta/coffee', '/usageDelta/toolCalls'])
    expect(offlineBindingIssues({ ...valid, bufferedAt: 'yesterday', ownershipEpoch: 0, agentId: 'no scheme', extra: true }).map((i) => i.path)).toEqual([
      '/extra',
      '/agentId',
      '/ownershipEpoch',
      '/bufferedAt',
    ])
    expect(offlineBindingIssues(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`x${i}`, i])))).toHaveLength(8)
    expect(offlineBindingIssues([])).toEqual([{ path: '', message: 'must be an object' }])
    expect(() => offlineBindingOf({ extensions: offlineExtensions({ ...valid, usageDelta: { modelTokens: 1 } }) })).toThrow(expect.objectContaining({ code: 'SCHEMA_VALIDATION_FAILED' }))
  })

  it('keeps only the noncritical entries to relay', () => {
    expect(noncriticalExtensions(undefined)).toBeUndefined()
    expect(noncriticalExtensions(offlineExtensions(valid))).toBeUndefined()
    expect(noncriticalExtensions(offlineExtensions(valid, {}, FOREIGN_EXTENSION))).toEqual(FOREIGN_EXTENSION)
  })
})

describe('historicalState', () => {
  it('is the record state while the lease is current, and active only for a lease a replacement Session revoked from a queued item', () => {
    const { w, id } = running()
    const record = item(w, id)
    const lease = record.executionLease!
    expect(historicalState(record, lease)).toBe('active')
    const revoked = closeLease(lease, 'revoked', later(lease.issuedAt, 5), 'replaced')
    const requeued = { ...record, doc: { ...record.doc, state: 'queued' as const } }
    delete (requeued as { executionLease?: unknown }).executionLease
    expect(historicalState(requeued, revoked)).toBe('active')
    expect(historicalState(requeued, closeLease(lease, 'released', later(lease.issuedAt, 5), 'checkpoint'))).toBe('queued')
    expect(historicalState({ ...requeued, doc: { ...record.doc, state: 'cancelled' } }, revoked)).toBe('cancelled')
  })
})

describe('work.checkpoint with the binding (§11.5)', () => {
  it('accepts a checkpoint buffered in the grace after the lease expired, with no charge for a zero delta', () => {
    const { w, id, r } = running(700)
    const events = exec(w, 'work.checkpoint', checkpointPayload(w, id, r), cast.worker1, {
      extensions: offlineExtensions(bindingOf(w, id, { bufferedAt: later(item(w, id).executionLease!.expiresAt, 60) })),
    })
    expect(events.map((e) => e.kind)).toEqual(['work.checkpointed'])
    expect(item(w, id).doc.state).toBe('queued')
  })

  it('refuses a binding that contradicts the Command or its lease', () => {
    const { w, id, r } = running()
    expect(buffered(w, id, r, bindingOf(w, id, { agentId: cast.worker2.actor.id })).code).toBe('AUTH_FORBIDDEN')
    expect(buffered(w, id, r, bindingOf(w, id, { groupId: 'urn:weft:test:group:other' })).code).toBe('INVALID_COMMAND')
    expect(buffered(w, id, r, bindingOf(w, id, { executionLeaseId: 'urn:weft:test:lease:other' })).code).toBe('INVALID_COMMAND')
    expect(buffered(w, id, r, bindingOf(w, id, { originalSessionEpoch: 2 })).code).toBe('INVALID_COMMAND')
    const lease = item(w, id).executionLease!
    expect(buffered(w, id, r, bindingOf(w, id, { historicalLeaseExpiresAt: later(lease.expiresAt, 1) })).code).toBe('INVALID_COMMAND')
  })

  it('refuses unordered times, a grace beyond the bound, and a checkpoint dated after its buffering', () => {
    const { w, id, r } = running()
    const lease = item(w, id).executionLease!
    expect(buffered(w, id, r, bindingOf(w, id, { disconnectedAt: later(lease.issuedAt, 130) })).code).toBe('INVALID_COMMAND')
    expect(buffered(w, id, r, bindingOf(w, id, { disconnectedAt: later(lease.issuedAt, -1) })).code).toBe('INVALID_COMMAND')
    expect(buffered(w, id, r, bindingOf(w, id, { bufferedAt: later(lease.issuedAt, 500) })).code).toBe('INVALID_COMMAND')
    expect(buffered(w, id, r, bindingOf(w, id, { graceDeadline: later(lease.expiresAt, MAX_OFFLINE_GRACE_SECONDS + 1) })).code).toBe('INVALID_COMMAND')
    expect(buffered(w, id, r, bindingOf(w, id, { bufferedAt: later(lease.issuedAt, 80) })).code).toBe('INVALID_COMMAND')
    expect(item(w, id).doc.state).toBe('active')
  })

  it('refuses progress buffered outside the window (WORK_LEASE_EXPIRED)', () => {
    const { w, id, r } = running(2000)
    const lease = item(w, id).executionLease!
    expect(buffered(w, id, r, bindingOf(w, id, { bufferedAt: later(lease.expiresAt, 400) })).code).toBe('WORK_LEASE_EXPIRED')
    expect(buffered(w, id, r, bindingOf(w, id, { disconnectedAt: later(lease.expiresAt, 10), bufferedAt: later(lease.expiresAt, 20) })).code).toBe('WORK_LEASE_EXPIRED')
  })

  it('refuses a superseded lease of the same epoch (§11.3)', () => {
    const { w, id, r } = running()
    const old = item(w, id).executionLease!
    exec(w, 'work.checkpoint', checkpointPayload(w, id, r), cast.worker1)
    start(w, id)
    const error = buffered(w, id, r, offlineBinding(old))
    expect(error.code).toBe('WORK_LEASE_EXPIRED')
    expect(error.message).toMatch(/superseded/)
  })
})

describe('lease renewal with the binding', () => {
  it('checks the binding under the current lease and refuses a usage delta', () => {
    const { w, id, r } = running()
    const payload = { workItemId: id, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, leaseSeconds: 600 }
    expect(rejection(w, renew, payload, cast.worker1, { extensions: offlineExtensions(bindingOf(w, id, {}, { toolCalls: 1 })) }).code).toBe('INVALID_COMMAND')
    expect(rejection(w, renew, payload, cast.worker1, { extensions: offlineExtensions(bindingOf(w, id, { agentId: cast.worker2.actor.id })) }).code).toBe('AUTH_FORBIDDEN')
    expect(exec(w, renew, payload, cast.worker1, { extensions: offlineExtensions(bindingOf(w, id)) }).map((e) => e.kind)).toEqual(['work.progressed'])
  })
})
