/**
 * Bounded offline execution (§11.5) through the client world: a Worker loses the Group service,
 * keeps working within its lease grace, buffers signed progress with the critical binding, and
 * reconciles it after reconnecting, rebased onto its current session.
 */
import { canonicalize } from '@weft/codec'
import type { EventKind, Lease } from '@weft/spec'
import { eventPayloads } from '@weft/validators/payloads'
import { describe, expect, it } from 'vitest'
import { usageOf } from '../src/domain/work-budget.js'
import type { OfflineBinding } from '../src/domain/offline.js'
import type { Usage } from '../src/domain/work-budget.js'
import { FOREIGN_EXTENSION, later, offlineBinding, offlineExtensions } from './fixtures-offline.js'
import { cast } from '@weft/testkit/fixtures'
import { accept, checkpointNow, expectIntegrity, expectRefused, kinds, offer, payloadOf, reach, runningOf, started, type World } from '@weft/testkit/world'

const USAGE = { modelTokens: 120, toolCalls: 3, computeSeconds: 40 }

/** worker1 runs a new WorkItem; returns its ID and the Execution Lease it will later cite as historical. */
async function running(w: World, contract = {}): Promise<{ id: string; lease: Lease }> {
  const id = await reach(w, 'active', { candidates: ['worker1'], contract })
  return { id, lease: w.item(id).executionLease! }
}

/** worker1 sends the checkpoint it buffered under `binding`, signed now under its current session. */
function reconcileCheckpoint(w: World, id: string, binding: OfflineBinding) {
  const checkpoint = { ...checkpointNow(w), createdAt: binding.bufferedAt }
  return w.as.worker1.workCheckpoint(
    { workItemId: id, ownershipEpoch: binding.ownershipEpoch, executionLeaseId: binding.executionLeaseId, checkpoint, resumeWithinSeconds: 600 },
    { extensions: offlineExtensions(binding) },
  )
}

/** The Group's head, aggregate revisions and the WorkItem's ledger and state, to show a refusal changed nothing. */
function snapshot(w: World, id: string) {
  const record = w.item(id)
  return { head: w.group().head, revisions: [...w.group().revisions], own: { ...usageOf(record).own }, state: record.doc.state, doc: record.doc }
}

function expectPayloadsValid(events: readonly { kind: string; payload: unknown }[]): void {
  for (const e of events) expect([e.kind, eventPayloads[e.kind as EventKind].errors(e.payload)]).toEqual([e.kind, []])
}

describe('reconciling buffered progress (§11.5)', () => {
  it('charges a nonzero offline delta and applies the checkpoint in one transaction, usage Event first', async () => {
    const w = await started()
    const { id, lease } = await running(w)
    // The Group service is gone past the lease expiry; the Worker stays within its grace.
    w.clock.advance(700)
    const binding = offlineBinding(lease, { bufferedAt: later(lease.expiresAt, 60) }, USAGE)
    const receipt = await reconcileCheckpoint(w, id, binding)
    expect(kinds(receipt.events)).toEqual(['ext.missionweaveprotocol.core.resource_usage_recorded', 'work.checkpointed'])
    expect(receipt.events.map((e) => e.sequence)).toEqual([receipt.events[0]!.sequence, receipt.events[0]!.sequence! + 1])
    const usage = payloadOf(receipt, 'ext.missionweaveprotocol.core.resource_usage_recorded')
    expect(usage).toMatchObject({
      workItemId: id,
      executionLeaseId: lease.leaseId,
      ownershipEpoch: lease.ownershipEpoch,
      usageDelta: USAGE,
      cumulativeUsage: { modelTokens: 120, toolCalls: 3, computeSeconds: 40, financialMicrounits: 0 },
      offlineReconciliation: {
        historicalSessionEpoch: 1,
        reconciliationSessionEpoch: 1,
        disconnectedAt: binding.disconnectedAt,
        bufferedAt: binding.bufferedAt,
        graceDeadline: binding.graceDeadline,
        historicalLeaseExpiresAt: lease.expiresAt,
        reconciledActionId: receipt.actionId,
      },
    })
    expectPayloadsValid(receipt.events)
    expect(w.item(id).doc.state).toBe('queued')
    expect(usageOf(w.item(id)).own).toMatchObject(USAGE)
    expectIntegrity(w)
  })

  it('accepts a checkpoint rebased onto a replacement session, naming both sessions', async () => {
    const w = await started()
    const { id, lease } = await running(w)
    w.clock.advance(300)
    // Reconnecting opens Session Epoch 2, which revokes the historical lease and requeues the item (§11.3).
    await w.as.controlPlane.identitySessionOpen({ agentId: cast.worker1.actor.id })
    expect(w.item(id).doc.state).toBe('queued')
    w.clock.advance(30)
    const receipt = await reconcileCheckpoint(w, id, offlineBinding(lease, {}, USAGE))
    expect(receipt.events.map((e) => e.kind)).toEqual(['ext.missionweaveprotocol.core.resource_usage_recorded', 'work.checkpointed'])
    expect(payloadOf(receipt, 'ext.missionweaveprotocol.core.resource_usage_recorded').offlineReconciliation).toMatchObject({ historicalSessionEpoch: 1, reconciliationSessionEpoch: 2 })
    expect(w.item(id).lastCheckpoint?.createdAt).toBe(later(lease.issuedAt, 120))
    expectPayloadsValid(receipt.events)
    expectIntegrity(w)
  })

  it('posts a buffered Message in the WorkItem Conversation after its charge, relaying noncritical extension data unchanged', async () => {
    const w = await started()
    const { id, lease } = await running(w)
    w.clock.advance(200)
    const conversationId = w.item(id).doc.conversationId
    const receipt = await w.as.worker1.messagePost(
      { messageId: 'urn:weft:test:message:offline', conversationId, content: [{ type: 'text', text: 'Done offline.' }] },
      { extensions: offlineExtensions(offlineBinding(lease, {}, { toolCalls: 1 }), {}, FOREIGN_EXTENSION) },
    )
    expect(kinds(receipt.events)).toEqual(['ext.missionweaveprotocol.core.resource_usage_recorded', 'message.posted'])
    const message = payloadOf(receipt, 'message.posted')
    expect(canonicalize(message.extensions)).toEqual(canonicalize(FOREIGN_EXTENSION))
    expect(canonicalize(w.group().messages.get('urn:weft:test:message:offline')?.message.extensions)).toEqual(canonicalize(FOREIGN_EXTENSION))
    expectPayloadsValid(receipt.events)
    expectIntegrity(w)
  })
})

describe('refusals leave no Event and no state change (§11.5)', () => {
  it('refuses progress buffered outside the historical lease/grace window', async () => {
    const w = await started()
    const { id, lease } = await running(w)
    w.clock.advance(1000)
    await expectRefused(w, () => reconcileCheckpoint(w, id, offlineBinding(lease, { bufferedAt: later(lease.expiresAt, 301) })), 'WORK_LEASE_EXPIRED', id)
  })

  it('refuses progress buffered after the lease was closed', async () => {
    const w = await started()
    const { id, lease } = await running(w)
    w.clock.advance(100)
    await w.as.controlPlane.identitySessionOpen({ agentId: cast.worker1.actor.id })
    w.clock.advance(100)
    // Revoked at +100 s, buffered at +120 s.
    await expectRefused(w, () => reconcileCheckpoint(w, id, offlineBinding(lease, {}, USAGE)), 'WORK_LEASE_EXPIRED', id)
  })

  it('refuses progress for a changed owner', async () => {
    const w = await started()
    const { id, lease } = await running(w, {})
    // The lease expired; the Coordinator reassigns to worker2 under Ownership Epoch 2 (§11.5).
    w.clock.advance(700)
    await offer(w, id, ['worker2'])
    await accept(w, id, 'worker2')
    expect(runningOf(w, id).epoch).toBe(2)
    await expectRefused(w, () => reconcileCheckpoint(w, id, offlineBinding(lease, { bufferedAt: later(lease.expiresAt, 60) })), 'WORK_STALE_OWNERSHIP', id)
  })

  it('refuses a buffered Message outside the bound WorkItem Conversation', async () => {
    const w = await started()
    const { id, lease } = await running(w)
    w.clock.advance(200)
    const main = w.group().group.mainConversationId
    expect(main).not.toBe(w.item(id).doc.conversationId)
    await expectRefused(
      w,
      () =>
        w.as.worker1.messagePost(
          { messageId: 'urn:weft:test:message:astray', conversationId: main, content: [{ type: 'text', text: 'Wrong room.' }] },
          { extensions: offlineExtensions(offlineBinding(lease)) },
        ),
      'INVALID_COMMAND',
    )
  })

  it('refuses an overflowing charge together with its checkpoint, appending nothing', async () => {
    const w = await started()
    const { id, lease } = await running(w, { budget: { currency: 'USD', financialLimit: 10, modelTokenLimit: 100, toolCallLimit: 50 } })
    w.clock.advance(200)
    const before = snapshot(w, id)
    const events = w.authority.events(w.groupId).length
    await expectRefused(w, () => reconcileCheckpoint(w, id, offlineBinding(lease, {}, { modelTokens: 101 } satisfies Partial<Usage>)), 'BUDGET_EXCEEDED', id)
    expect(snapshot(w, id)).toEqual(before)
    expect(w.authority.events(w.groupId)).toHaveLength(events)
    expectIntegrity(w)
  })

  it('refuses the binding on a kind that does not interpret it (UNKNOWN_CRITICAL_EXTENSION)', async () => {
    const w = await started()
    const { id, lease } = await running(w)
    const { epoch, leaseId } = runningOf(w, id)
    const block = { workItemId: id, ownershipEpoch: epoch, executionLeaseId: leaseId, checkpoint: checkpointNow(w), reason: 'Offline.', blockedLeaseSeconds: 600 }
    await expectRefused(w, () => w.as.worker1.workBlock(block, { extensions: offlineExtensions(offlineBinding(lease)) }), 'UNKNOWN_CRITICAL_EXTENSION', id)
    // A noncritical entry of an unknown profile does not stop the same Command.
    const receipt = await w.as.worker1.workBlock(block, { extensions: { ...FOREIGN_EXTENSION } })
    expect(kinds(receipt.events)).toEqual(['work.blocked'])
  })
})
