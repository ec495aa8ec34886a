/**
 * WorkItem leases as the log tells them (§10.2, §11.3, §14): every lease a Command ends is closed
 * by the Event it appends, with when and why, and a fresh fold of the log closes it alike; and
 * `authority.lease`, the operator's view of one lease by its ID.
 */
import { describe, expect, it } from 'vitest'
import { closedLeasesOf } from '../src/domain/leases.js'
import type { WorkItemRecord } from '../src/model.js'
import { createMemoryStore } from '../src/log/store.js'
import { cast, T0 } from '@weft/testkit/fixtures'
import { accept, authorize, cancelWork, checkpoint, createWorld, offer, payloadOf, promote, reach, started, wid, type World } from '@weft/testkit/world'

/** The closed leases of `record` as `[leaseId, leaseType, state, closedAt, closureReason]`. */
function closuresOf(record: WorkItemRecord | undefined): unknown[][] {
  return closedLeasesOf(record ?? fail('no such WorkItem')).map((l) => [l.leaseId, l.leaseType, l.state, l.closedAt, l.closureReason])
}

/** The closed leases of WorkItem `id` in the live state. */
function closures(w: World, id: string): unknown[][] {
  return closuresOf(w.item(id))
}

/** The same WorkItem's closed leases in a fresh fold of the stored log. */
function replayedClosures(w: World, id: string): unknown[][] {
  return closuresOf(w.authority.replayState().groups.get(w.groupId)?.workItems.get(id))
}

function fail(message: string): never {
  throw new Error(message)
}

describe('promotion to a child Mission ends the parent WorkItem’s leases (§10.2, §11.3, §14)', () => {
  it('[command mission.create_child] [event mission.child.created] revokes an active WorkItem’s Execution and ownership leases, and a replay closes them alike', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const execution = w.item(id).executionLease!.leaseId
    const ownership = w.item(id).ownershipLease!.leaseId
    const { receipt } = await promote(w, id)
    // The Event names the fenced Ownership Epoch; its reducer closes that epoch's leases at its instant.
    expect(payloadOf(receipt, 'mission.child.created').fencedOwnershipEpoch).toBe(w.item(id).doc.owner?.ownershipEpoch)
    const at = receipt.events[0]!.occurredAt
    const reason = 'promoted to a child Mission'
    expect(closures(w, id)).toEqual([
      [execution, 'execution', 'revoked', at, reason],
      [ownership, 'ownership', 'revoked', at, reason],
    ])
    expect([w.item(id).executionLease, w.item(id).ownershipLease]).toEqual([undefined, undefined])
    expect(replayedClosures(w, id)).toEqual(closures(w, id))
  })

  it('[event mission.child.created] revokes a queued WorkItem’s ownership lease', async () => {
    const w = await started()
    const id = await reach(w, 'queued')
    const ownership = w.item(id).ownershipLease!.leaseId
    const { receipt } = await promote(w, id)
    const reason = 'promoted to a child Mission'
    expect(closures(w, id)).toEqual([[ownership, 'ownership', 'revoked', receipt.events[0]!.occurredAt, reason]])
    expect(replayedClosures(w, id)).toEqual(closures(w, id))
  })
})

describe('authority.lease(groupId, leaseId): a WorkItem lease by its ID (§11.3)', () => {
  it('shows a live ownership lease of a queued WorkItem', async () => {
    const w = await started()
    const id = await reach(w, 'queued')
    const lease = w.item(id).ownershipLease!
    expect(w.authority.lease(w.groupId, lease.leaseId)).toEqual({
      leaseId: lease.leaseId,
      kind: 'ownership',
      missionId: w.group().missionId,
      groupId: w.groupId,
      workItemId: id,
      holderAgentId: cast.worker1.actor.id,
      sessionEpoch: 1,
      ownershipEpoch: 1,
      issuedAt: T0,
      expiresAt: '2026-07-15T01:00:00.000Z',
      startBy: '2026-07-15T01:00:00.000Z',
      renewalCount: 0,
      state: 'active',
      live: true,
    })
  })

  it('shows a live Execution Lease, and one whose expiry passed with no Event closing it yet as not live', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const leaseId = w.item(id).executionLease!.leaseId
    expect(w.authority.lease(w.groupId, leaseId)).toMatchObject({
      kind: 'execution',
      workItemId: id,
      holderAgentId: cast.worker1.actor.id,
      ownershipEpoch: 1,
      state: 'active',
      live: true,
      expiresAt: '2026-07-15T00:10:00.000Z',
    })
    expect(w.authority.lease(w.groupId, leaseId)).not.toHaveProperty('startBy')
    w.clock.advance(600)
    expect(w.authority.lease(w.groupId, leaseId)).toMatchObject({ state: 'active', live: false })
  })

  it('[command work.checkpoint] [event work.checkpointed] tells a checkpoint released the Execution Lease', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const leaseId = w.item(id).executionLease!.leaseId
    w.clock.advance(30)
    const receipt = await checkpoint(w, id)
    expect(w.authority.lease(w.groupId, leaseId)).toMatchObject({ kind: 'execution', state: 'released', closedAt: receipt.events[0]!.occurredAt, closureReason: 'checkpoint' })
    expect(w.authority.lease(w.groupId, leaseId)).not.toHaveProperty('live')
    // The ownership lease lives on, renewed to the resume bound.
    expect(w.authority.lease(w.groupId, w.item(id).ownershipLease!.leaseId)).toMatchObject({ kind: 'ownership', state: 'active', live: true, renewalCount: 1 })
  })

  it('[command work.offer] [event work.offer.created] tells an ownership lease that lapsed expired when a new offer fenced it', async () => {
    const w = await started()
    const id = wid(w.fresh('lapsing'))
    await authorize(w, id)
    await offer(w, id, ['worker1'])
    await accept(w, id, 'worker1', 60)
    const leaseId = w.item(id).ownershipLease!.leaseId
    w.clock.advance(61)
    expect(w.authority.lease(w.groupId, leaseId)).toMatchObject({ state: 'active', live: false })
    const receipt = await offer(w, id, ['worker2'])
    expect(w.authority.lease(w.groupId, leaseId)).toMatchObject({
      kind: 'ownership',
      holderAgentId: cast.worker1.actor.id,
      state: 'expired',
      closedAt: receipt.events[0]!.occurredAt,
      closureReason: 'ownership fenced by a new offer',
    })
  })

  it('[command work.cancel] [event work.cancelled] tells cancellation revoked both leases', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const ids = [w.item(id).executionLease!.leaseId, w.item(id).ownershipLease!.leaseId]
    await cancelWork(w, id)
    expect(ids.map((leaseId) => w.authority.lease(w.groupId, leaseId))).toMatchObject([
      { kind: 'execution', state: 'revoked', closureReason: 'cancelled' },
      { kind: 'ownership', state: 'revoked', closureReason: 'cancelled' },
    ])
  })

  it('[command mission.create_child] tells promotion revoked both leases, as a fresh Authority over the same store does', async () => {
    const store = createMemoryStore()
    const w = await started({ store })
    const id = await reach(w, 'active')
    const ids = [w.item(id).executionLease!.leaseId, w.item(id).ownershipLease!.leaseId]
    const { child, receipt } = await promote(w, id)
    const views = ids.map((leaseId) => w.authority.lease(w.groupId, leaseId))
    expect(views).toMatchObject([
      { kind: 'execution', state: 'revoked', closedAt: receipt.events[0]!.occurredAt, closureReason: 'promoted to a child Mission' },
      { kind: 'ownership', state: 'revoked', closedAt: receipt.events[0]!.occurredAt, closureReason: 'promoted to a child Mission' },
    ])
    // A lease is looked up in its own Group only.
    expect(w.authority.lease(child.groupId, ids[0]!)).toBeUndefined()
    const restarted = createWorld({ store })
    expect(ids.map((leaseId) => restarted.authority.lease(w.groupId, leaseId))).toEqual(views)
  })

  it('answers undefined for an unknown lease ID, a coordinator lease and an unknown Group', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    expect(w.authority.lease(w.groupId, 'urn:weft:test:lease:unknown')).toBeUndefined()
    expect(w.authority.lease(w.groupId, w.group().coordinatorLease.leaseId)).toBeUndefined()
    expect(w.authority.lease('urn:weft:test:group:unknown', w.item(id).executionLease!.leaseId)).toBeUndefined()
  })
})
