import { sign } from '@weft/codec'
import type { Approval, Event } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { cast, command, contract, evidence, GROUP } from '@weft/testkit/fixtures'
import { run, seedGroup } from '../../test/fixtures-state.js'
import { activate, checkpointOf, exec, expectValid, item, reach, reducers, refused, start, submit, wid, world, type World } from '../../test/fixtures-work.js'
import { draft, type AnyEventDraft, type HandlerFor } from '../commit/handler.js'
import { emptyState } from '../model.js'
import { applyEvents, type ReducerTable } from '../commit/transact.js'
import { closedLeasesOf } from './leases.js'
import { usageOf } from './work-budget.js'

/** Appends `drafts` as another domain's handler would (Authority-caused facts), through materialize and the reducers. */
function propagate(w: World, drafts: readonly AnyEventDraft[]): Event[] {
  const cmd = command('mission.terminate', { reason: 'Propagated.' }, cast.controlPlane, { groupId: GROUP }, w.clock)
  const events = run(w.state, (() => drafts) as HandlerFor<'mission.terminate'>, cmd, reducers, w.clock, w.ids)
  expectValid(w, events)
  w.log.push(...events)
  return events
}

describe('reducers of WorkItem Events other domains emit', () => {
  it('work.failed propagated from the Mission, without epoch or Evidence, revokes the leases', () => {
    const w = world()
    const { id } = reach(w, 'active')
    propagate(w, [draft('work.failed', { workItemId: id, reason: 'The Mission was terminated.', evidence: [] }, { workItemId: id, actor: cast.authority.actor })])
    expect(item(w, id).doc.state).toBe('failed')
    expect(closedLeasesOf(item(w, id)).map((l) => l.state)).toEqual(['revoked', 'revoked'])
  })

  it('work.cancelled propagated from the Mission withdraws the pending offers', () => {
    const w = world()
    const { id } = reach(w, 'offered')
    propagate(w, [draft('work.cancelled', { workItemId: id, reason: 'The Mission was cancelled.' }, { workItemId: id, actor: cast.authority.actor })])
    expect(item(w, id).doc).toMatchObject({ state: 'cancelled', offers: [{ status: 'withdrawn' }, { status: 'withdrawn' }] })
  })

  it('work.result.accepted for an approved child Mission verifies the blocked parent with the Approval as its submission', () => {
    const w = world()
    const { id } = reach(w, 'blocked')
    item(w, id).childMissionId = 'urn:weft:test:mission:child'
    const approval = sign(
      'approval',
      {
        approvalId: 'urn:weft:test:approval:child',
        kind: 'child_mission',
        decision: 'approved',
        missionId: 'urn:weft:test:mission:child',
        groupId: 'urn:weft:test:group:child',
        missionRevision: 3,
        artifactHashes: [`sha256:${'c'.repeat(64)}`],
        acceptancePolicyVersion: '1.0.0',
        approver: cast.coordinator.actor,
        comments: '',
        conditions: [],
        occurredAt: '2026-07-15T00:00:00Z',
      },
      cast.coordinator.key,
    ) as unknown as Approval
    propagate(w, [
      draft('work.result.accepted', { workItemId: id, evidence: [], childMissionId: 'urn:weft:test:mission:child', childApproval: approval }, { workItemId: id, actor: cast.authority.actor }),
    ])
    expect(item(w, id).doc).toMatchObject({ state: 'verified', submission: { evidenceIds: [approval.approvalId], artifactHashes: approval.artifactHashes } })
  })

  it('an Execution Lease revoked by a new Session requeues the item under the same epoch for a fresh start (§11.3)', () => {
    const w = world()
    const { id, running } = reach(w, 'active')
    w.clock.advance(120)
    propagate(w, [
      draft(
        'ext.missionweaveprotocol.core.work_execution_lease_revoked',
        { workItemId: id, ownershipEpoch: 1, executionLeaseId: running!.leaseId, agentId: cast.worker1.actor.id, revokedSessionEpoch: 1, reason: 'A new Session opened.' },
        { workItemId: id, actor: cast.authority.actor },
      ),
    ])
    expect(item(w, id).doc).toMatchObject({ state: 'queued', owner: { ownershipEpoch: 1 } })
    expect(item(w, id).executionLease).toBeUndefined()
    const stale = { workItemId: id, ownershipEpoch: 1, executionLeaseId: running!.leaseId, checkpoint: checkpointOf(w), resumeWithinSeconds: 60 }
    expect(refused(w, 'work.checkpoint', stale, cast.worker1)).toBe('INVALID_STATE_TRANSITION')
    const again = start(w, id)
    expect(again.leaseId).not.toBe(running!.leaseId)
  })
})

describe('state = fold(log)', () => {
  it('replaying the log of a full lifecycle rebuilds the same WorkItems, usage and proposals', () => {
    const w = world()
    exec(w, 'work.propose', { proposalId: 'urn:weft:test:proposal:1', contract: contract() }, cast.worker2)
    const r = activate(w, wid('a'))
    exec(w, 'ext.missionweaveprotocol.core.resource_usage_record', { workItemId: wid('a'), ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, usageDelta: { toolCalls: 3 } }, cast.worker1)
    submit(w, wid('a'), r)
    exec(w, 'work.accept_result', { workItemId: wid('a'), evidence: [evidence(w.group, wid('a'), cast.reviewer)] }, cast.coordinator)
    reach(w, 'blocked', {}, 'b')

    const replayed = emptyState()
    const group = seedGroup(replayed)
    applyEvents(replayed, w.log, reducers as ReducerTable)
    expect(group.head).toBe(w.group.head)
    expect([...group.workItems.keys()]).toEqual([...w.group.workItems.keys()])
    for (const [id, record] of w.group.workItems) {
      const copy = group.workItems.get(id)!
      expect(copy.doc).toEqual(record.doc)
      expect(copy.ownershipLease).toEqual(record.ownershipLease)
      expect(copy.executionLease).toEqual(record.executionLease)
      expect(copy.reservedBudget).toEqual(record.reservedBudget)
      expect(usageOf(copy)).toEqual(usageOf(record))
    }
    expect([...group.proposals.keys()]).toEqual(['urn:weft:test:proposal:1'])
    expect(group.acceptedEvidence).toEqual(w.group.acceptedEvidence)
    expect([...group.conversations.keys()]).toEqual([...w.group.conversations.keys()])
  })
})
