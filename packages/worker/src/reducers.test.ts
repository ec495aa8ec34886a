import { describe, expect, it } from 'vitest'
import { EVENT_KINDS, type Event, type EventKind, type EventPayload } from '@weft/spec'
import { COORDINATOR, OTHER, SELF, groupLog, lifecycle } from '../test/events.js'
import type { TrackedWork, WorkerView } from './seams.js'
import { applyWorkerEvent } from './gen/reducers.js'
import { emptyView, workerReducers } from './reducers.js'

/** Folds whole logs into a fresh view, Group by Group. */
function fold(...logs: readonly (readonly Event[])[]): WorkerView {
  const view = emptyView(SELF)
  for (const log of logs) for (const event of log) applyWorkerEvent(workerReducers, view, event)
  return view
}

const run = lifecycle()
const view = fold(run.alpha.events, run.beta.events, run.gamma.events)
const alpha = view.groups.get(run.alpha.groupId)!
const beta = view.groups.get(run.beta.groupId)!
const gamma = view.groups.get(run.gamma.groupId)!
const item = (log: { id(name: string): string; groupId: string }, name: string): TrackedWork => view.groups.get(log.groupId)!.work.get(log.id(name))!
const payloadOf = (events: readonly Event[], kind: EventKind, name?: string): Record<string, unknown> =>
  events.findLast((e) => e.kind === kind && (name === undefined || e.workItemId?.endsWith(`:${name}`)))!.payload

/**
 * Facts the view deliberately does not fold, each with its reason. Every other catalogued kind must
 * occur in the logs this file folds (checked below), so no reducer goes untested.
 */
const IGNORED: Readonly<Partial<Record<EventKind, string>>> = {
  'mission.coordinator.assigned': 'Coordinator changes do not move WorkItems (§7.2)',
  'mission.coordinator.renewed': 'Coordinator lease renewal does not move WorkItems (§7.2)',
  'membership.changed': 'Memberships gate Commands at the Authority, not the queue (§8)',
  'membership.ended': 'as membership.changed',
  'membership.delegation.granted': 'delegation shapes who may authorize, not the queue (§9.1)',
  'message.posted': 'Messages carry no authority (§9)',
  'message.corrected': 'as message.posted',
  'message.retracted': 'as message.posted',
  'message.redacted': 'as message.posted',
  'work.proposed': 'a proposal is not a WorkItem (§10.2)',
  'artifact.published': 'the executor tracks its own Artifacts',
  'policy.cooperation_override.granted': 'one-shot grants bind a future Command, not the queue (§20)',
  'group.snapshot.created': 'archival facts (§7.4)',
  'group.archived': 'archival facts (§7.4)',
  'ext.missionweaveprotocol.registry.agent_card_registered': 'Organization-scoped, outside every Group log (§15.2)',
  'ext.missionweaveprotocol.identity.session_opened': 'Organization-scoped; its Group effect is work_execution_lease_revoked (§11.3)',
}

describe('workerReducers over a three-Group lifecycle', () => {
  it('records each Group’s Mission, and its state as Mission Events say', () => {
    expect(alpha.missionId).toBe(run.alpha.missionId)
    expect(alpha.missionState).toBe('active')
    expect(beta.missionState).toBe('cancelled')
    expect(gamma.missionId).toBe(run.gamma.missionId)
  })

  it('tracks every WorkItem of each Group, mine or not', () => {
    expect([...alpha.work.keys()]).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8'].map(run.alpha.id))
    expect([...beta.work.keys()]).toEqual(['b1', 'b2'].map(run.beta.id))
    expect([...gamma.work.keys()]).toEqual(['c1', 'c2'].map(run.gamma.id))
    expect(item(run.alpha, 'a3')).toMatchObject({ state: 'active', owner: OTHER, missionId: run.alpha.missionId })
  })

  it('takes a WorkItem from authorization to verified, through checkpoint, resume, usage and submission', () => {
    const a1 = item(run.alpha, 'a1')
    expect(a1.state).toBe('verified')
    expect(alpha.verified.has(a1.workItemId)).toBe(true)
    expect(a1.contract?.contractVersion).toBe(1)
    expect(a1.owner).toBe(SELF)
    expect(a1.offeredTo).toEqual([])
    expect(a1.offerExpiresAt).toBeUndefined()
    expect(a1.executionLeaseId).toBeUndefined()
    expect(a1.ownershipLeaseExpiresAt).toBeUndefined()
    expect(a1.lastCheckpoint).toEqual(payloadOf(run.alpha.events, 'work.checkpointed', 'a1')['checkpoint'])
    expect(a1.usage).toEqual(payloadOf(run.alpha.events, 'ext.missionweaveprotocol.core.resource_usage_recorded', 'a1')['cumulativeUsage'])
    expect(a1.remainingBudget).toEqual({ modelTokens: 9900, toolCalls: 48 })
    const events = run.alpha.events.filter((e) => e.workItemId === a1.workItemId)
    expect(a1.updatedAtSequence).toBe(events.at(-1)!.sequence)
    expect(a1.revision).toBe(events.at(-1)!.aggregateRevision)
  })

  it('holds an accepted WorkItem queued under its Ownership Epoch, start-by and lease expiry', () => {
    const a2 = item(run.alpha, 'a2')
    const accepted = payloadOf(run.alpha.events, 'work.offer.accepted', 'a2')
    expect(a2).toMatchObject({ state: 'queued', owner: SELF, ownershipEpoch: 1, ownershipLeaseExpiresAt: accepted['ownershipLeaseExpiresAt'], startBy: accepted['startBy'] })
    expect(a2.dependencyIds).toEqual([run.alpha.id('a1')])
  })

  it('moves a blocked WorkItem back to queued with its blocked lease, and forgets the blocker', () => {
    const a4 = item(run.alpha, 'a4')
    const blocked = payloadOf(run.alpha.events, 'work.blocked', 'a4')
    expect(a4).toMatchObject({ state: 'queued', executionLeaseId: undefined, ownershipLeaseExpiresAt: blocked['blockedLeaseExpiresAt'], blockedReason: undefined })
    expect(a4.lastCheckpoint).toEqual(blocked['checkpoint'])
    const upToBlock = run.alpha.events.slice(0, run.alpha.events.findIndex((e) => e.kind === 'work.blocked') + 1)
    const whileBlocked = fold(upToBlock).groups.get(run.alpha.groupId)!.work.get(a4.workItemId)!
    expect(whileBlocked).toMatchObject({ state: 'blocked', blockedReason: blocked['reason'], executionLeaseId: undefined })
  })

  it('requeues a WorkItem whose Execution Lease a replacement Session revoked, keeping ownership at least as long as the lease (§11.3)', () => {
    const a5 = item(run.alpha, 'a5')
    const started = payloadOf(run.alpha.events, 'work.started', 'a5')
    expect(a5).toMatchObject({ state: 'queued', executionLeaseId: undefined, executionLeaseExpiresAt: undefined, owner: SELF })
    expect(Date.parse(a5.ownershipLeaseExpiresAt!)).toBeGreaterThanOrEqual(Date.parse(started['executionLeaseExpiresAt'] as string))
    expect(a5.ownershipLeaseExpiresAt).toBe(payloadOf(run.alpha.events, 'work.offer.accepted', 'a5')['ownershipLeaseExpiresAt'])
    // An ownership lease shorter than the revoked Execution Lease is carried to the latter's expiry.
    const short = groupLog('short').genesis().authorize('s1').offer('s1').accept('s1', SELF, 60).start('s1').revokeLease('s1')
    const s1 = fold(short.events).groups.get(short.groupId)!.work.get(short.id('s1'))!
    expect(s1.ownershipLeaseExpiresAt).toBe(payloadOf(short.events, 'work.started', 's1')['executionLeaseExpiresAt'])
    const approval = payloadOf(run.alpha.events, 'approval.execution.granted', 'a5')
    expect(a5.executionApproval).toEqual({ approvalId: approval['approvalId'], ownershipEpoch: 1, expiresAt: approval['expiresAt'] })
  })

  it('ends cancelled and failed work, and re-offers failed work under a new Ownership Epoch', () => {
    expect(item(run.alpha, 'a6')).toMatchObject({ state: 'cancelled', ownershipLeaseExpiresAt: undefined })
    expect(item(run.alpha, 'a8')).toMatchObject({ state: 'queued', owner: SELF, ownershipEpoch: 2 })
  })

  it('blocks a promoted WorkItem on its child Mission and fences its leases (§14)', () => {
    expect(item(run.alpha, 'a7')).toMatchObject({ state: 'blocked', childGroupId: run.gamma.groupId, ownershipLeaseExpiresAt: undefined, startBy: undefined })
    expect(gamma.missionState).toBe('active')
  })

  it('revises the contract and dependency set of an open WorkItem without moving its state (§10.4)', () => {
    const b2 = item(run.beta, 'b2')
    expect(b2.contract?.contractVersion).toBe(2)
    expect(b2.dependencyIds).toEqual([run.beta.id('b1')])
    expect(b2.requiresReacceptance).toBe(false)
  })

  it('reopens a WorkItem unblocked after its ownership lapsed, then cancels the Mission’s unfinished work', () => {
    expect(item(run.beta, 'b1')).toMatchObject({ state: 'cancelled', owner: undefined })
    expect(item(run.beta, 'b2')).toMatchObject({ state: 'cancelled', offeredTo: [], offerExpiresAt: undefined })
  })

  it('indexes exactly the WorkItems owned by this Worker in state queued', () => {
    const queued = [...view.groups.values()].flatMap((g) => [...g.work.values()].filter((w) => w.state === 'queued' && w.owner === SELF).map((w) => w.workItemId))
    expect([...alpha.queuedForMe!, ...beta.queuedForMe!, ...gamma.queuedForMe!].sort()).toEqual(queued.sort())
    expect(queued.sort()).toEqual([run.alpha.id('a2'), run.alpha.id('a4'), run.alpha.id('a5'), run.alpha.id('a8'), run.gamma.id('c2')].sort())
  })

  it('marks every WorkItem an Event touched as changed', () => {
    const touched = new Set([run.alpha, run.beta, run.gamma].flatMap((log) => log.events.flatMap((e) => (e.workItemId === undefined ? [] : [e.workItemId]))))
    expect(view.changed).toEqual(touched)
  })
})

describe('workerReducers, one kind at a time', () => {
  const missionLog = groupLog('delta').genesis()
  missionLog.emit('mission.submitted_for_approval', { missionRevision: 1, artifactHashes: [`sha256:${'cd'.repeat(32)}`] }, { actor: COORDINATOR })
  const afterSubmit = fold(missionLog.events).groups.get(missionLog.groupId)!.missionState
  // The Mission reducers read no Approval field; a stand-in keeps this file short.
  const approval = { approvalId: 'urn:weft:test:approval:1' } as EventPayload<'mission.approved'>['approval']
  missionLog.emit('mission.changes_requested', { approval })
  const afterChanges = fold(missionLog.events).groups.get(missionLog.groupId)!.missionState
  missionLog.emit('mission.submitted_for_approval', { missionRevision: 2, artifactHashes: [`sha256:${'cd'.repeat(32)}`] }, { actor: COORDINATOR })
  missionLog.emit('mission.approved', { approval })
  const afterApproval = fold(missionLog.events).groups.get(missionLog.groupId)!.missionState
  const failing = groupLog('epsilon').genesis()
  failing.emit('mission.terminated', { reason: 'Out of budget.' })
  const followUp = groupLog('zeta')
  const genesis = groupLog('zeta').genesis().events[0]!.payload as EventPayload<'mission.created'>
  followUp.emit('mission.follow_up.created', { ...genesis, reason: 'More to do.' })
  const folded = [run.alpha, run.beta, run.gamma, missionLog, failing, followUp].flatMap((log) => log.events.map((e) => e.kind))

  it('follows the Mission through submission, change request, approval and termination (§7.1, §7.3)', () => {
    expect([afterSubmit, afterChanges, afterApproval]).toEqual(['awaiting_approval', 'active', 'approved'])
    expect(fold(failing.events).groups.get(failing.groupId)!.missionState).toBe('failed')
    const zeta = fold(followUp.events).groups.get(followUp.groupId)!
    expect([zeta.missionId, zeta.missionState]).toEqual([followUp.missionId, 'active'])
  })

  it('exercises every catalogued kind that is not deliberately ignored', () => {
    const missing = EVENT_KINDS.filter((kind) => !(kind in IGNORED) && !folded.includes(kind))
    expect(missing).toEqual([])
  })

  it('leaves the view untouched for every ignored kind', () => {
    for (const kind of Object.keys(IGNORED) as EventKind[]) {
      const before = fold(run.alpha.events)
      const after = fold(run.alpha.events)
      after.changed.clear()
      before.changed.clear()
      // The payload is not read by an ignoring reducer; the envelope is a real one of the Group.
      applyWorkerEvent(workerReducers, after, { ...run.alpha.events.at(-1)!, kind, payload: {} })
      expect(after, kind).toEqual(before)
    }
  })

  it('tolerates an Event kind outside the catalog without a change (§18)', () => {
    const before = fold(run.alpha.events)
    const after = fold(run.alpha.events)
    applyWorkerEvent(workerReducers, after, { ...run.alpha.events.at(-1)!, kind: 'ext.acme.inventory.restocked', payload: { sku: 'x' } })
    expect(after).toEqual(before)
  })

  it('tracks a WorkItem first seen after its authorization, never as ready without a contract', () => {
    const late = emptyView(SELF)
    const accepted = run.alpha.events.find((e) => e.kind === 'work.offer.accepted' && e.workItemId === run.alpha.id('a2'))!
    applyWorkerEvent(workerReducers, late, accepted)
    expect(late.groups.get(run.alpha.groupId)!.work.get(run.alpha.id('a2'))).toMatchObject({ state: 'queued', owner: SELF, contract: undefined, missionId: '' })
    // Refinements of a WorkItem never seen are skipped: there is no record to refine.
    const renewal = run.alpha.events.find((e) => e.kind === 'work.progressed')!
    const fresh = emptyView(SELF)
    applyWorkerEvent(workerReducers, fresh, renewal)
    expect(fresh.groups.get(run.alpha.groupId)!.work.size).toBe(0)
    expect(fresh.changed.size).toBe(0)
  })

  it('refuses to fold a Group Event that names no Group', () => {
    const { groupId: _dropped, ...bare } = run.alpha.events[1]!
    expect(() => applyWorkerEvent(workerReducers, emptyView(SELF), bare)).toThrow(/without groupId/)
  })
})
