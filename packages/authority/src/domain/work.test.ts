import type { ErrorCode } from '@weft/codec'
import type { WorkContract } from '@weft/spec'
import { WORK_ITEM_TRANSITIONS, type WorkItemTransition } from '@weft/spec/machines'
import { describe, expect, it } from 'vitest'
import { cast, contract, evidence } from '@weft/testkit/fixtures'
import { accept, checkpointOf, exec, failure, item, offer, reach, refused, start, submit, wid, world, type Running, type World } from '../../test/fixtures-work.js'
import { SELECTION } from '@weft/testkit/documents'
import { workHandlers, workReducers } from './work.js'

/** How one row is performed and how it is refused, from a WorkItem brought into the row's `from` state. */
interface RowCase {
  readonly contract?: Partial<WorkContract>
  perform(w: World, id: string, running: Running | undefined): void
  readonly refusedWith: ErrorCode
  refuse(w: World, id: string, running: Running | undefined): string
}

const renew = 'ext.missionweaveprotocol.core.work_execution_lease_renew'
const usage = 'ext.missionweaveprotocol.core.resource_usage_record'
const dependencyAdd = 'ext.missionweaveprotocol.core.work_dependency_add'

function lease(running: Running | undefined): Running {
  if (running === undefined) throw new Error('the row needs a running WorkItem')
  return running
}

function block(w: World, id: string, running: Running | undefined) {
  const r = lease(running)
  return { workItemId: id, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, checkpoint: checkpointOf(w), reason: 'Waiting for data.', blockedLeaseSeconds: 600 }
}

function approval(id: string) {
  return {
    approvalId: 'urn:weft:test:approval:exec-1',
    workItemId: id,
    ownershipEpoch: 1,
    operations: ['write'],
    resources: ['urn:weft:test:resource:repo'],
    budget: { toolCallLimit: 10 },
    expiresInSeconds: 600,
  }
}

/** Keyed `${event}|${guard ?? ''}`. */
const cases: Record<string, RowCase> = {
  'work.propose|': {
    perform: (w, id) => void exec(w, 'work.propose', { proposalId: id, contract: contract() }, cast.worker1),
    refusedWith: 'WORK_CONTRACT_INCOMPLETE',
    refuse: (w, id) => refused(w, 'work.propose', { proposalId: id, contract: contract({ goal: '   ' }) }, cast.worker1),
  },
  'work.authorize|': {
    perform: (w, id) => void exec(w, 'work.authorize', { workItemId: id, contract: contract() }, cast.coordinator),
    refusedWith: 'AUTH_FORBIDDEN',
    refuse: (w, id) => refused(w, 'work.authorize', { workItemId: id, contract: contract() }, cast.worker1),
  },
  'work.offer|': {
    perform: (w, id) => void offer(w, id, [cast.worker3]),
    refusedWith: 'AUTH_FORBIDDEN',
    refuse: (w, id) => refused(w, 'work.offer', { workItemId: id, candidateAgentIds: [cast.worker3.actor.id], selectionBasis: SELECTION, offerExpiresInSeconds: 60 }, cast.worker1),
  },
  'work.offer|noLiveOwner': {
    perform: (w, id) => {
      w.clock.advance(3601)
      const [created] = offer(w, id, [cast.worker2])
      expect(created?.payload).toMatchObject({ fencedOwnershipEpoch: 1 })
      expect(item(w, id).doc.owner).toBeUndefined()
    },
    refusedWith: 'INVALID_STATE_TRANSITION',
    refuse: (w, id) => refused(w, 'work.offer', { workItemId: id, candidateAgentIds: [cast.worker2.actor.id], selectionBasis: SELECTION, offerExpiresInSeconds: 60 }, cast.coordinator),
  },
  'work.accept_offer|offerValid': {
    perform: (w, id) => void accept(w, id),
    refusedWith: 'WORK_OFFER_EXPIRED',
    refuse: (w, id) => {
      w.clock.advance(601)
      return refused(w, 'work.accept_offer', { workItemId: id, ownershipLeaseSeconds: 600 }, cast.worker1)
    },
  },
  'approval.grant_execution|executionApprovalRequired': {
    contract: { executionApproval: 'human_required' },
    perform: (w, id) => {
      exec(w, 'approval.grant_execution', approval(id), cast.owner)
      expect(item(w, id).executionApprovals.map((a) => a.ownershipEpoch)).toEqual([1])
    },
    refusedWith: 'AUTH_FORBIDDEN',
    refuse: (w, id) => refused(w, 'approval.grant_execution', approval(id), cast.controlPlane),
  },
  'work.start|startAllowed': {
    perform: (w, id) => void start(w, id),
    refusedWith: 'WORK_LEASE_EXPIRED',
    refuse: (w, id) => {
      w.clock.advance(3601)
      return refused(w, 'work.start', { workItemId: id, ownershipEpoch: 1, executionLeaseSeconds: 600 }, cast.worker1)
    },
  },
  'work.checkpoint|': {
    perform: (w, id, running) => {
      const r = lease(running)
      const [done] = exec(w, 'work.checkpoint', { workItemId: id, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, checkpoint: checkpointOf(w), resumeWithinSeconds: 900 }, cast.worker1)
      expect(item(w, id).ownershipLease?.startBy).toBe((done!.payload as { resumeBy: string }).resumeBy)
      expect(item(w, id).executionLease).toBeUndefined()
    },
    refusedWith: 'WORK_LEASE_EXPIRED',
    refuse: (w, id, running) =>
      refused(
        w,
        'work.checkpoint',
        { workItemId: id, ownershipEpoch: lease(running).epoch, executionLeaseId: 'urn:weft:test:lease:unknown', checkpoint: checkpointOf(w), resumeWithinSeconds: 900 },
        cast.worker1,
      ),
  },
  'work.block|': {
    perform: (w, id, running) => void exec(w, 'work.block', block(w, id, running), cast.worker1),
    refusedWith: 'AUTH_FORBIDDEN',
    refuse: (w, id, running) => refused(w, 'work.block', block(w, id, running), cast.worker2),
  },
  'work.unblock|ownershipLive': {
    perform: (w, id) => void exec(w, 'work.unblock', { workItemId: id, resolution: 'Credentials arrived.' }, cast.coordinator),
    refusedWith: 'AUTH_FORBIDDEN',
    refuse: (w, id) => refused(w, 'work.unblock', { workItemId: id }, cast.worker2),
  },
  'work.unblock|': {
    perform: (w, id) => {
      w.clock.advance(601)
      exec(w, 'work.unblock', { workItemId: id }, cast.coordinator)
      expect(item(w, id).doc.owner).toBeUndefined()
      expect(item(w, id).ownershipLease).toBeUndefined()
    },
    refusedWith: 'INVALID_STATE_TRANSITION',
    refuse: (w, id) => {
      // §14: a WorkItem blocked on a running child Mission cannot be unblocked by hand.
      item(w, id).childMissionId = 'urn:weft:test:mission:child'
      return refused(w, 'work.unblock', { workItemId: id }, cast.coordinator)
    },
  },
  'work.submit|': {
    perform: (w, id, running) => void submit(w, id, lease(running)),
    refusedWith: 'INVALID_COMMAND',
    refuse: (w, id, running) => {
      const r = lease(running)
      const other = evidence(w.group, id, cast.worker1, ['something-else'])
      return refused(w, 'work.submit', { workItemId: id, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, artifactIds: ['urn:weft:test:artifact:none'], evidence: [other] }, cast.worker1)
    },
  },
  'work.accept_result|acceptanceCriteriaMet': {
    perform: (w, id) => void exec(w, 'work.accept_result', { workItemId: id, evidence: [evidence(w.group, id, cast.reviewer)] }, cast.coordinator, { coordinatorEpoch: 1 }),
    refusedWith: 'INVALID_COMMAND',
    refuse: (w, id) => refused(w, 'work.accept_result', { workItemId: id, evidence: [evidence(w.group, id, cast.reviewer, ['tests-pass'], 'failed')] }, cast.coordinator),
  },
  'work.fail|': {
    perform: (w, id) => void exec(w, 'work.fail', { workItemId: id, reason: 'Cannot be done.', evidence: [failure(w, id)] }, cast.coordinator),
    refusedWith: 'INVALID_COMMAND',
    refuse: (w, id) => refused(w, 'work.fail', { workItemId: id, reason: 'Cannot be done.', evidence: [evidence(w.group, id, cast.coordinator)] }, cast.coordinator),
  },
  'work.cancel|': {
    perform: (w, id) => void exec(w, 'work.cancel', { workItemId: id, reason: 'No longer needed.' }, cast.owner),
    refusedWith: 'AUTH_FORBIDDEN',
    refuse: (w, id) => refused(w, 'work.cancel', { workItemId: id, reason: 'No longer needed.' }, cast.worker2),
  },
  [`${renew}|`]: {
    perform: (w, id, running) => {
      const r = lease(running)
      w.clock.advance(300)
      exec(w, renew, { workItemId: id, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, leaseSeconds: 600 }, cast.worker1)
      expect(item(w, id).executionLease).toMatchObject({ leaseId: r.leaseId, renewalCount: 1, expiresAt: new Date(w.clock.nowMs + 600_000).toISOString() })
    },
    refusedWith: 'WORK_STALE_OWNERSHIP',
    refuse: (w, id, running) => refused(w, renew, { workItemId: id, ownershipEpoch: 2, executionLeaseId: lease(running).leaseId, leaseSeconds: 600 }, cast.worker1),
  },
  [`${usage}|`]: {
    perform: (w, id, running) => {
      const r = lease(running)
      const [recorded] = exec(w, usage, { workItemId: id, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, usageDelta: { toolCalls: 5 } }, cast.worker1)
      expect(recorded?.payload).toMatchObject({ cumulativeUsage: { toolCalls: 5 }, remainingBudget: { toolCalls: 45 } })
    },
    refusedWith: 'BUDGET_EXCEEDED',
    refuse: (w, id, running) => {
      const r = lease(running)
      return refused(w, usage, { workItemId: id, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, usageDelta: { toolCalls: 51 } }, cast.worker1)
    },
  },
  [`${dependencyAdd}|`]: {
    perform: (w, id) => {
      exec(w, 'work.authorize', { workItemId: wid('dependency'), contract: contract() }, cast.coordinator)
      exec(w, dependencyAdd, { workItemId: id, dependencyId: wid('dependency') }, cast.coordinator)
      expect(item(w, id).doc.contract).toMatchObject({ contractVersion: 2, dependencyWorkItemIds: [wid('dependency')] })
    },
    refusedWith: 'INVALID_COMMAND',
    refuse: (w, id) => refused(w, dependencyAdd, { workItemId: id, dependencyId: id }, cast.coordinator),
  },
}

const mine = new Set<string>(Object.keys(workHandlers))
const rows = WORK_ITEM_TRANSITIONS.filter((row) => mine.has(row.event))

function keyOf(row: WorkItemTransition): string {
  return `${row.event}|${row.guard ?? ''}`
}

function nameOf(row: WorkItemTransition): string {
  return `row ${row.from} --${row.event}--> ${row.to}${row.guard === undefined ? '' : ` [${row.guard}]`}`
}

describe('WorkItem machine rows of the WorkItem Commands', () => {
  it('has a case for every row whose event is a WorkItem Command', () => {
    expect(rows.length).toBeGreaterThan(20)
    expect(rows.filter((row) => cases[keyOf(row)] === undefined).map(nameOf)).toEqual([])
  })

  for (const row of rows) {
    const c = cases[keyOf(row)]
    if (c === undefined) continue
    it(nameOf(row), () => {
      const w = world()
      const { id, running } = reach(w, row.from, c.contract)
      c.perform(w, id, running)
      if (row.to === 'none') expect(w.group.proposals.has(id)).toBe(true)
      else expect(item(w, id).doc.state).toBe(row.to)
    })
    it(`${nameOf(row)} refused: ${c.refusedWith}`, () => {
      const w = world()
      const { id, running } = reach(w, row.from, c.contract)
      const before = w.group.workItems.get(id)?.doc
      expect(c.refuse(w, id, running)).toBe(c.refusedWith)
      expect(w.group.workItems.get(id)?.doc).toBe(before)
    })
  }
})

describe('WorkItem domain tables', () => {
  it('reduce every Event kind their Commands emit', () => {
    const emitted = new Set(rows.flatMap((row) => row.emits).filter((kind) => kind !== 'membership.changed'))
    expect([...emitted].filter((kind) => !(kind in workReducers))).toEqual([])
  })
})
