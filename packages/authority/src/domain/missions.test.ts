import { describe, expect, it } from 'vitest'
import { sign, signingHash } from '@weft/codec'
import type { ChildFailurePolicy, CommandPayload, Event } from '@weft/spec'
import { MISSION_TRANSITIONS } from '@weft/spec/machines'
import { cast, command, testClock, type Cast } from '@weft/testkit/fixtures'
import { context } from '../../test/fixtures-state.js'
import { boot, codeOf, contextPackage, domainReducers, exec, expectValidGroup, expectValidPayloads, inGroup, openMission, publish, seedItem, type ExecOptions } from '../../test/fixtures-missions.js'
import { childPayload, decision, missionPayload } from '@weft/testkit/documents'
import { emptyState, type AuthorityState, type GroupState } from '../model.js'
import { applyEvents, type ReducerTable } from '../commit/transact.js'
import { missionHandlers } from './missions.js'
import { workReducers } from './work.js'

const withWork: ExecOptions = { reducers: workReducers }

/** A booted Authority with one active root Mission. */
function active(): { state: AuthorityState; group: GroupState } {
  const state = emptyState()
  boot(state)
  return { state, group: openMission(state, 'root') }
}

/** Publishes one Artifact and submits the Mission for approval. */
function submit(state: AuthorityState, group: GroupState, by: Cast = cast.coordinator): Event[] {
  const hash = publish(group, 'urn:weft:test:work:deliverable', `result of ${group.groupId}`)
  return exec(state, 'mission.submit_for_approval', { artifactHashes: [hash] }, by, { envelope: inGroup(group) })
}

function awaiting(): { state: AuthorityState; group: GroupState } {
  const s = active()
  submit(s.state, s.group)
  return s
}

/** The MissionOwner's decision on the pending submission. */
function decide(state: AuthorityState, group: GroupState, verdict: 'approved' | 'changes_requested', by: Cast = cast.owner): Event[] {
  const kind = verdict === 'approved' ? 'mission.approve' : 'mission.request_changes'
  return exec(state, kind, { approval: decision(group, by, verdict) }, by, { ...withWork, envelope: inGroup(group) })
}

/** A root Mission whose active WorkItem `big` was promoted to a child Mission coordinated by worker2. */
function withChild(policy: ChildFailurePolicy = 'block_parent_work_item') {
  const { state, group: parent } = active()
  const item = seedItem(parent, 'big', 'active')
  const events = exec(state, 'mission.create_child', childPayload(item.doc.workItemId, 'child', cast.worker2, { childFailurePolicy: policy }), cast.coordinator, { envelope: inGroup(parent) })
  return { state, parent, item, child: state.groups.get('urn:weft:test:group:child')!, events }
}

/** The child's Coordinator ends the child Mission as failed. */
function failChild(state: AuthorityState, child: GroupState): Event[] {
  return exec(state, 'mission.terminate', { reason: 'The vendor API is gone.' }, cast.worker2, { ...withWork, envelope: inGroup(child) })
}

/**
 * Runs `mission.create_follow_up` like the pipeline, stamping the genesis envelope by hand:
 * `materialize` opens a new Group only for `mission.created` today.
 */
function followUp(state: AuthorityState, payload: CommandPayload<'mission.create_follow_up'>, by: Cast = cast.owner): Event[] {
  const groupId = 'urn:weft:test:group:follow-up'
  const cmd = command('mission.create_follow_up', payload, by, { groupId })
  const drafts = missionHandlers['mission.create_follow_up'](cmd, { ...context(state, groupId), commandHash: signingHash(cmd as object) })
  const events = drafts.map(
    (d, i) =>
      sign(
        'event',
        {
          protocolVersion: '0.1',
          eventId: `urn:weft:test:event:follow-up:${i}`,
          kind: d.kind,
          actor: by.actor,
          cause: { type: 'command', id: cmd.actionId },
          correlationId: cmd.correlationId,
          occurredAt: '2026-07-15T00:00:00.000Z',
          payload: d.payload,
          acceptedBy: cast.authority.actor,
          groupId,
          sequence: i + 1,
          aggregateRevision: i + 1,
        },
        cast.authority.key,
      ) as unknown as Event,
  )
  applyEvents(state, events, domainReducers as ReducerTable)
  return events
}

function followUpPayload(overrides: Partial<CommandPayload<'mission.create_follow_up'>> = {}): CommandPayload<'mission.create_follow_up'> {
  return { ...missionPayload('urn:weft:test:mission:follow-up'), followUpToMissionId: 'urn:weft:test:mission:root', reason: 'A correction is needed.', ...overrides }
}

const kinds = (events: readonly Event[]) => events.map((e) => `${e.kind}@${e.groupId?.split(':').pop()}`)

/** One performed and one refused scenario per row of MISSION_TRANSITIONS, keyed by the row's name. */
const rows: Record<string, { perform(): void; refuse(): void }> = {
  'none --mission.create--> active': {
    perform() {
      const state = emptyState()
      boot(state)
      const events = exec(state, 'mission.create', missionPayload('urn:weft:test:mission:new'), cast.owner, { envelope: { groupId: 'urn:weft:test:group:new' } })
      const group = state.groups.get('urn:weft:test:group:new')!
      expect(events.map((e) => [e.kind, e.sequence, e.aggregateRevision])).toEqual([['mission.created', 1, 1]])
      expect(group.mission).toMatchObject({
        state: 'active',
        revision: 1,
        missionOwner: cast.owner.actor,
        coordinator: { agentId: cast.coordinator.actor.id, coordinatorEpoch: 1, agentCardVersion: 1 },
      })
      expect(group.coordinatorLease).toMatchObject({ leaseType: 'coordinator', coordinatorEpoch: 1, sessionEpoch: 1, expiresAt: '2026-07-16T00:00:00.000Z', state: 'active' })
      expect([...group.memberships.values()].map((m) => [m.member.id, m.role, m.membershipEpoch, m.visibilityStartSequence])).toEqual([
        [cast.owner.actor.id, 'mission_owner', 1, 0],
        [cast.coordinator.actor.id, 'coordinator', 1, 0],
      ])
      expect(group.conversations.get(group.group.mainConversationId)).toMatchObject({ type: 'group', title: 'Planning' })
      expect(group.head).toBe(1)
      expectValidPayloads(events)
      expectValidGroup(group)
    },
    refuse() {
      const { state } = active()
      expect(codeOf(() => openMission(state, 'root', { missionId: 'urn:weft:test:mission:other' }))).toBe('INVALID_COMMAND')
    },
  },
  'none --mission.create_follow_up--> active': {
    perform() {
      const { state, group } = awaiting()
      decide(state, group, 'approved')
      const original = group.approvals.get([...group.approvals.keys()][0]!)!
      const revocation = decision(group, cast.owner, 'revoked', { approvalId: 'urn:weft:test:approval:revocation', revokesApprovalId: original.approvalId })
      const events = followUp(state, followUpPayload({ approvalRevocation: revocation }))
      const next = state.groups.get('urn:weft:test:group:follow-up')!
      expect(next.mission).toMatchObject({ state: 'active', followUpToMissionId: group.missionId, missionOwner: cast.owner.actor })
      expect(next.approvals.get(revocation.approvalId)).toEqual(revocation)
      // §7.1: the approved Mission and its Approval are untouched.
      expect(group.mission.state).toBe('approved')
      expect(group.approvals.get(original.approvalId)).toEqual(original)
      expectValidPayloads(events)
      expectValidGroup(next)
    },
    refuse() {
      const { state } = active()
      expect(codeOf(() => followUp(state, followUpPayload()))).toBe('INVALID_STATE_TRANSITION')
    },
  },
  'none --mission.create_child--> active': {
    perform() {
      const { state, parent, item, child, events } = withChild()
      expect(kinds(events)).toEqual(['mission.child.created@root', 'mission.created@child'])
      expect(events[0]!.workItemId).toBe(item.doc.workItemId)
      expect(events[0]!.payload).toMatchObject({ depth: 1, fencedOwnershipEpoch: 2, childFailurePolicy: 'block_parent_work_item' })
      expect(child.mission).toMatchObject({ state: 'active', missionOwner: cast.coordinator.actor, parent: { missionId: parent.missionId, workItemId: item.doc.workItemId, depth: 1 } })
      expect(child.mission.coordinator.agentId).toBe(cast.worker2.actor.id)
      // §14: the parent WorkItem waits for its child, its ownership fenced.
      expect(item.doc).toMatchObject({ state: 'blocked', revision: 6 })
      expect(item.executionLease).toBeUndefined()
      expect(item.ownershipLease).toBeUndefined()
      expect(item).toMatchObject({ childMissionId: child.missionId, childGroupId: child.groupId })
      expect(state.childLinks.get(child.groupId)).toEqual({ parentGroupId: parent.groupId, parentWorkItemId: item.doc.workItemId })
      expectValidPayloads(events)
      expectValidGroup(parent)
      expectValidGroup(child)
    },
    refuse() {
      const { state, group } = active()
      const done = seedItem(group, 'done', 'verified')
      expect(codeOf(() => exec(state, 'mission.create_child', childPayload(done.doc.workItemId, 'child'), cast.coordinator, { envelope: inGroup(group) }))).toBe('INVALID_STATE_TRANSITION')
      expect(state.groups.has('urn:weft:test:group:child')).toBe(false)
    },
  },
  'active --mission.submit_for_approval--> awaiting_approval': {
    perform() {
      const { state, group } = active()
      seedItem(group, 'shipped', 'verified')
      seedItem(group, 'dropped', 'cancelled')
      const events = submit(state, group)
      expect(group.mission).toMatchObject({ state: 'awaiting_approval', revision: 2 })
      expect(group.submission).toMatchObject({ missionRevision: 1, eventId: events[0]!.eventId })
      expectValidPayloads(events)
      expectValidGroup(group)
    },
    refuse() {
      const { state, group } = active()
      seedItem(group, 'broken', 'failed')
      seedItem(group, 'running', 'active')
      try {
        submit(state, group)
        expect.unreachable()
      } catch (error) {
        expect(error).toMatchObject({ code: 'INVALID_STATE_TRANSITION' })
        expect(JSON.stringify(error)).toContain('urn:weft:test:work:broken')
      }
      expect(codeOf(() => submit(state, group))).toBe('INVALID_STATE_TRANSITION')
      expect(group.mission.state).toBe('active')
    },
  },
  'awaiting_approval --mission.request_changes--> active': {
    perform() {
      const { state, group } = awaiting()
      const events = decide(state, group, 'changes_requested')
      expect(group.mission).toMatchObject({ state: 'active', revision: 3 })
      expect(group.submission).toBeUndefined()
      expect(group.approvals.size).toBe(1)
      expectValidPayloads(events)
      expectValidGroup(group)
      // A revised submission names the new revision.
      submit(state, group)
      expect(group.submission?.missionRevision).toBe(3)
    },
    refuse() {
      const { state, group } = active()
      expect(codeOf(() => decide(state, group, 'changes_requested'))).toBe('INVALID_STATE_TRANSITION')
    },
  },
  'awaiting_approval --mission.approve--> approved': {
    perform() {
      const { state, group } = awaiting()
      const events = decide(state, group, 'approved')
      expect(group.mission).toMatchObject({ state: 'approved', revision: 3 })
      expect(group.coordinatorLease).toMatchObject({ state: 'released', closureReason: 'mission approved' })
      expect(kinds(events)).toEqual(['mission.approved@root'])
      expectValidPayloads(events)
      expectValidGroup(group)
    },
    refuse() {
      const { state, group } = awaiting()
      expect(codeOf(() => exec(state, 'mission.approve', { approval: decision(group, cast.coordinator, 'approved') }, cast.coordinator, { envelope: inGroup(group) }))).toBe('AUTH_FORBIDDEN')
      decide(state, group, 'approved')
      expect(codeOf(() => decide(state, group, 'approved'))).toBe('INVALID_STATE_TRANSITION')
    },
  },
  'active --mission.cancel--> cancelled': {
    perform() {
      const { state, group } = active()
      const open = seedItem(group, 'open', 'open')
      const running = seedItem(group, 'running', 'active')
      const done = seedItem(group, 'done', 'verified')
      const events = exec(state, 'mission.cancel', { reason: 'Priorities changed.' }, cast.owner, { ...withWork, envelope: inGroup(group) })
      expect(kinds(events)).toEqual(['mission.cancelled@root', 'work.cancelled@root', 'work.cancelled@root'])
      expect(events.slice(1).map((e) => [e.workItemId, e.actor])).toEqual([
        [open.doc.workItemId, cast.authority.actor],
        [running.doc.workItemId, cast.authority.actor],
      ])
      expect([open.doc.state, running.doc.state, done.doc.state]).toEqual(['cancelled', 'cancelled', 'verified'])
      expect(group.mission.state).toBe('cancelled')
      expect(group.coordinatorLease.state).toBe('revoked')
      expectValidPayloads(events)
      expectValidGroup(group)
    },
    refuse() {
      const { state, group } = active()
      expect(codeOf(() => exec(state, 'mission.cancel', { reason: 'I think we should stop.' }, cast.coordinator, { envelope: inGroup(group) }))).toBe('AUTH_FORBIDDEN')
    },
  },
  'awaiting_approval --mission.cancel--> cancelled': {
    perform() {
      const { state, group } = awaiting()
      const events = exec(state, 'mission.cancel', { reason: 'Organization policy.' }, cast.controlPlane, { ...withWork, envelope: inGroup(group) })
      expect(kinds(events)).toEqual(['mission.cancelled@root'])
      expect(group.mission.state).toBe('cancelled')
      expectValidGroup(group)
    },
    refuse() {
      const { state, group } = awaiting()
      exec(state, 'mission.cancel', { reason: 'Once.' }, cast.owner, { ...withWork, envelope: inGroup(group) })
      expect(codeOf(() => exec(state, 'mission.cancel', { reason: 'Twice.' }, cast.owner, { ...withWork, envelope: inGroup(group) }))).toBe('INVALID_STATE_TRANSITION')
    },
  },
  'active --system.parent_mission_cancelled--> cancelled': {
    perform() {
      const { state, parent, child } = withChild()
      const childItem = seedItem(child, 'child-task', 'queued', cast.worker3)
      const events = exec(state, 'mission.cancel', { reason: 'Stop everything.' }, cast.owner, { ...withWork, envelope: inGroup(parent) })
      expect(kinds(events)).toEqual(['mission.cancelled@root', 'work.cancelled@root', 'mission.cancelled@child', 'work.cancelled@child'])
      expect(events[2]!.actor).toEqual(cast.authority.actor)
      expect(child.mission.state).toBe('cancelled')
      expect(childItem.doc.state).toBe('cancelled')
      expectValidPayloads(events)
      expectValidGroup(child)
    },
    refuse() {
      const { state, parent, child } = withChild()
      submit(state, child, cast.worker2)
      decide(state, child, 'approved', cast.coordinator)
      const head = child.head
      exec(state, 'mission.cancel', { reason: 'Stop everything.' }, cast.owner, { ...withWork, envelope: inGroup(parent) })
      expect([child.mission.state, child.head]).toEqual(['approved', head])
      expect(codeOf(() => exec(state, 'mission.cancel', { reason: 'Again.' }, cast.coordinator, { envelope: inGroup(child) }))).toBe('INVALID_STATE_TRANSITION')
    },
  },
  'awaiting_approval --system.parent_mission_cancelled--> cancelled': {
    perform() {
      const { state, parent, child } = withChild()
      submit(state, child, cast.worker2)
      const events = exec(state, 'mission.cancel', { reason: 'Stop everything.' }, cast.owner, { ...withWork, envelope: inGroup(parent) })
      expect(kinds(events)).toContain('mission.cancelled@child')
      expect(child.mission.state).toBe('cancelled')
    },
    refuse() {
      const { state, parent, child } = withChild()
      failChild(state, child)
      exec(state, 'mission.cancel', { reason: 'Stop everything.' }, cast.owner, { ...withWork, envelope: inGroup(parent) })
      expect(child.mission.state).toBe('failed')
      expect(codeOf(() => exec(state, 'mission.renew_coordinator', { leaseSeconds: 60 }, cast.worker2, { envelope: inGroup(child) }))).toBe('INVALID_STATE_TRANSITION')
    },
  },
  'active --mission.terminate--> failed': {
    perform() {
      const { state, group } = active()
      const blocked = seedItem(group, 'stuck', 'blocked')
      const submitted = seedItem(group, 'in-review', 'submitted')
      const events = exec(state, 'mission.terminate', { reason: 'Unrecoverable.' }, cast.coordinator, { ...withWork, envelope: inGroup(group) })
      expect(kinds(events)).toEqual(['mission.terminated@root', 'work.failed@root', 'work.failed@root'])
      expect([blocked.doc.state, submitted.doc.state, group.mission.state]).toEqual(['failed', 'failed', 'failed'])
      expect(group.coordinatorLease.state).toBe('revoked')
      expectValidPayloads(events)
      expectValidGroup(group)
    },
    refuse() {
      const { state, group } = active()
      expect(codeOf(() => exec(state, 'mission.terminate', { reason: 'No.' }, cast.worker1, { envelope: inGroup(group) }))).toBe('AUTH_FORBIDDEN')
      expect(codeOf(() => exec(state, 'mission.terminate', { reason: 'No.' }, cast.owner, { envelope: inGroup(group) }))).toBe('AUTH_FORBIDDEN')
    },
  },
  'awaiting_approval --mission.terminate--> failed': {
    perform() {
      const { state, group } = awaiting()
      const events = exec(state, 'mission.terminate', { reason: 'Policy stop.' }, cast.controlPlane, { ...withWork, envelope: inGroup(group) })
      expect(kinds(events)).toEqual(['mission.terminated@root'])
      expect(group.mission.state).toBe('failed')
    },
    refuse() {
      const { state, group } = awaiting()
      decide(state, group, 'approved')
      expect(codeOf(() => exec(state, 'mission.terminate', { reason: 'Too late.' }, cast.controlPlane, { envelope: inGroup(group) }))).toBe('INVALID_STATE_TRANSITION')
    },
  },
  'active --system.child_mission_failed--> failed': {
    perform() {
      const { state, parent, item, child } = withChild('fail_parent_mission')
      const other = seedItem(parent, 'other', 'queued')
      const events = failChild(state, child)
      expect(kinds(events)).toEqual(['mission.terminated@child', 'work.failed@root', 'mission.terminated@root', 'work.failed@root'])
      expect(events.slice(1).every((e) => e.actor.id === cast.authority.actor.id)).toBe(true)
      expect([item.doc.state, other.doc.state, parent.mission.state]).toEqual(['failed', 'failed', 'failed'])
      expectValidPayloads(events)
      expectValidGroup(parent)
    },
    refuse() {
      const { state, parent, item, child } = withChild('block_parent_work_item')
      const head = parent.head
      const events = failChild(state, child)
      expect(kinds(events)).toEqual(['mission.terminated@child'])
      expect([item.doc.state, parent.mission.state, parent.head]).toEqual(['blocked', 'active', head])
      // §14: the Coordinator replans; the parent Mission is not failed by the child.
      expect(codeOf(() => exec(state, 'mission.approve', { approval: decision(parent, cast.owner, 'approved') }, cast.owner, { envelope: inGroup(parent) }))).toBe('INVALID_STATE_TRANSITION')
    },
  },
  'awaiting_approval --system.child_mission_failed--> failed': {
    perform() {
      const { state, parent, child } = withChild('fail_parent_mission')
      // Commands cannot submit a Mission whose WorkItem waits for a child; the state is seeded.
      parent.mission = { ...parent.mission, state: 'awaiting_approval' }
      failChild(state, child)
      expect(parent.mission.state).toBe('failed')
    },
    refuse() {
      const { state, parent, item, child } = withChild('fail_parent_work_item')
      parent.mission = { ...parent.mission, state: 'awaiting_approval' }
      const events = failChild(state, child)
      expect(kinds(events)).toEqual(['mission.terminated@child', 'work.failed@root'])
      expect([item.doc.state, parent.mission.state]).toEqual(['failed', 'awaiting_approval'])
    },
  },
  'active --mission.assign_coordinator--> active': {
    perform() {
      const { state, group } = active()
      const pkg = contextPackage(group)
      const events = exec(state, 'mission.assign_coordinator', { coordinatorAgentId: cast.worker3.actor.id, leaseSeconds: 3600, contextPackage: pkg, reason: 'Lease lapsed.' }, cast.owner, {
        envelope: inGroup(group),
      })
      expect(kinds(events)).toEqual(['mission.coordinator.assigned@root', 'membership.changed@root', 'membership.ended@root'])
      expect(group.mission).toMatchObject({ state: 'active', revision: 2, coordinator: { agentId: cast.worker3.actor.id, coordinatorEpoch: 2, leaseId: group.coordinatorLease.leaseId } })
      expect(group.coordinatorLease).toMatchObject({ holderAgentId: cast.worker3.actor.id, coordinatorEpoch: 2, state: 'active' })
      expect(events[0]!.payload).toMatchObject({ replacedCoordinatorEpoch: 1 })
      expect(group.contextPackages.get(pkg.contextPackageId)).toEqual(pkg)
      const roles = [...group.memberships.values()].map((m) => [m.member.id, m.role, m.state])
      expect(roles).toContainEqual([cast.worker3.actor.id, 'coordinator', 'active'])
      expect(roles).toContainEqual([cast.coordinator.actor.id, 'coordinator', 'ended'])
      expectValidPayloads(events)
      expectValidGroup(group)
    },
    refuse() {
      const { state, group } = active()
      const other = openMission(state, 'other')
      const assign = (by: Cast, pkg = contextPackage(group)) =>
        exec(state, 'mission.assign_coordinator', { coordinatorAgentId: cast.worker3.actor.id, leaseSeconds: 3600, contextPackage: pkg }, by, { envelope: inGroup(group) })
      // §13.3: another Mission's content never enters this Mission's context.
      expect(codeOf(() => assign(cast.owner, contextPackage(other)))).toBe('AUTH_FORBIDDEN')
      expect(codeOf(() => assign(cast.worker1))).toBe('AUTH_FORBIDDEN')
      expect(group.mission.coordinator.coordinatorEpoch).toBe(1)
    },
  },
  'awaiting_approval --mission.assign_coordinator--> awaiting_approval': {
    perform() {
      const { state, group } = awaiting()
      exec(state, 'mission.assign_coordinator', { coordinatorAgentId: cast.worker3.actor.id, leaseSeconds: 3600, contextPackage: contextPackage(group) }, cast.controlPlane, {
        envelope: inGroup(group),
      })
      expect(group.mission).toMatchObject({ state: 'awaiting_approval', coordinator: { coordinatorEpoch: 2 } })
    },
    refuse() {
      const { state, group } = awaiting()
      decide(state, group, 'approved')
      expect(
        codeOf(() =>
          exec(state, 'mission.assign_coordinator', { coordinatorAgentId: cast.worker3.actor.id, leaseSeconds: 3600, contextPackage: contextPackage(group) }, cast.owner, { envelope: inGroup(group) }),
        ),
      ).toBe('INVALID_STATE_TRANSITION')
    },
  },
  'active --mission.renew_coordinator--> active': {
    perform() {
      const { state, group } = active()
      const clock = testClock()
      clock.advance(3600)
      const events = exec(state, 'mission.renew_coordinator', { leaseSeconds: 86_400 }, cast.coordinator, { envelope: inGroup(group), clock })
      expect(events[0]!.payload).toEqual({ coordinatorEpoch: 1, leaseId: group.coordinatorLease.leaseId, leaseExpiresAt: '2026-07-16T01:00:00.000Z', renewalCount: 1 })
      expect(group.coordinatorLease).toMatchObject({ expiresAt: '2026-07-16T01:00:00.000Z', renewalCount: 1, lastRenewedAt: '2026-07-15T01:00:00.000Z' })
      expect(group.mission).toMatchObject({ state: 'active', revision: 2 })
      expectValidPayloads(events)
      expectValidGroup(group)
    },
    refuse() {
      const { state, group } = active()
      const clock = testClock()
      clock.advance(86_400)
      expect(codeOf(() => exec(state, 'mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, { envelope: inGroup(group), clock }))).toBe('WORK_LEASE_EXPIRED')
    },
  },
  'awaiting_approval --mission.renew_coordinator--> awaiting_approval': {
    perform() {
      const { state, group } = awaiting()
      exec(state, 'mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, { envelope: inGroup(group) })
      expect(group.mission.state).toBe('awaiting_approval')
      expect(group.coordinatorLease.renewalCount).toBe(1)
    },
    refuse() {
      const { state, group } = awaiting()
      exec(state, 'mission.cancel', { reason: 'Stop.' }, cast.owner, { ...withWork, envelope: inGroup(group) })
      expect(codeOf(() => exec(state, 'mission.renew_coordinator', { leaseSeconds: 60 }, cast.coordinator, { envelope: inGroup(group) }))).toBe('INVALID_STATE_TRANSITION')
    },
  },
}

describe('the Mission machine, row by row (§7.1, §7.2, §14)', () => {
  it('has a scenario for every row and no scenario without a row', () => {
    const names = MISSION_TRANSITIONS.map((row) => `${row.from} --${row.event}--> ${row.to}`)
    expect(Object.keys(rows).sort()).toEqual([...names].sort())
  })
  for (const row of MISSION_TRANSITIONS) {
    const name = `${row.from} --${row.event}--> ${row.to}`
    it(`row ${name}`, () => rows[name]!.perform())
    it(`row ${name}: refused`, () => rows[name]!.refuse())
  }
})

describe('mission.create (§7.1)', () => {
  it('refuses a Coordinator without an open session and a root Mission without final human approval', () => {
    const { state } = active()
    state.org.agents.get(cast.worker1.actor.id)!.sessionEpoch = 0
    expect(codeOf(() => openMission(state, 'a', { coordinatorAgentId: cast.worker1.actor.id }))).toBe('INVALID_COMMAND')
    expect(codeOf(() => openMission(state, 'b', { coordinatorAgentId: 'urn:weft:test:agent:unknown' }))).toBe('INVALID_COMMAND')
    expect(codeOf(() => openMission(state, 'c', { approvalPolicy: { finalHumanApproval: false, highRiskExecutionApproval: true } }))).toBe('INVALID_COMMAND')
    expect(codeOf(() => openMission(state, 'd', { deadline: '2026-07-01T00:00:00Z' }))).toBe('INVALID_COMMAND')
    expect([...state.groups.keys()]).toEqual(['urn:weft:test:group:root'])
  })
})

describe('mission.create_follow_up (§7.1)', () => {
  it('belongs to the same human MissionOwner and revokes only an Approval of the linked Mission', () => {
    const { state, group } = awaiting()
    decide(state, group, 'approved')
    const stranger = { ...cast.owner, actor: { type: 'human' as const, id: 'urn:weft:test:human:stranger' } }
    expect(codeOf(() => followUp(state, followUpPayload(), stranger))).toBe('AUTH_FORBIDDEN')
    const bogus = decision(group, cast.owner, 'revoked', { approvalId: 'urn:weft:test:approval:bogus', revokesApprovalId: 'urn:weft:test:approval:none' })
    expect(codeOf(() => followUp(state, followUpPayload({ approvalRevocation: bogus })))).toBe('INVALID_COMMAND')
    expect(state.groups.has('urn:weft:test:group:follow-up')).toBe(false)
  })
})

describe('submission and decision (§7.3)', () => {
  it('refuses Artifacts not published in the Group and a stale Mission revision', () => {
    const { state, group } = active()
    const sha = `sha256:${'e'.repeat(64)}`
    expect(codeOf(() => exec(state, 'mission.submit_for_approval', { artifactHashes: [sha] }, cast.coordinator, { envelope: inGroup(group) }))).toBe('INVALID_COMMAND')
    const hash = publish(group, 'urn:weft:test:work:x', 'x')
    expect(codeOf(() => exec(state, 'mission.submit_for_approval', { artifactHashes: [hash], missionRevision: 7 }, cast.coordinator, { envelope: inGroup(group) }))).toBe('REVISION_CONFLICT')
  })

  it('binds the decision to exactly the submitted revision and Artifact set', () => {
    const { state, group } = awaiting()
    const approve = (overrides: Parameters<typeof decision>[3]) =>
      exec(state, 'mission.approve', { approval: decision(group, cast.owner, 'approved', overrides) }, cast.owner, { envelope: inGroup(group) })
    expect(codeOf(() => approve({ artifactHashes: [`sha256:${'f'.repeat(64)}`] }))).toBe('INVALID_COMMAND')
    expect(codeOf(() => approve({ missionRevision: 2 }))).toBe('INVALID_COMMAND')
    expect(codeOf(() => approve({ kind: 'child_mission' }))).toBe('INVALID_COMMAND')
    expect(codeOf(() => exec(state, 'mission.approve', { approval: decision(group, cast.owner, 'changes_requested') }, cast.owner, { envelope: inGroup(group) }))).toBe('INVALID_COMMAND')
    expect(group.mission.state).toBe('awaiting_approval')
  })
})

describe('child Missions (§14)', () => {
  it('turns the approved child result into the parent WorkItem’s Evidence', () => {
    const { state, parent, item, child } = withChild()
    submit(state, child, cast.worker2)
    const events = decide(state, child, 'approved', cast.coordinator)
    expect(kinds(events)).toEqual(['mission.approved@child', 'work.result.accepted@root'])
    expect(events[1]).toMatchObject({ workItemId: item.doc.workItemId, actor: cast.authority.actor, payload: { childMissionId: child.missionId, evidence: [] } })
    expect(item.doc.state).toBe('verified')
    expectValidPayloads(events)
    expectValidGroup(parent)
  })

  it('fails only the parent WorkItem under fail_parent_work_item', () => {
    const { state, parent, item, child } = withChild('fail_parent_work_item')
    const events = failChild(state, child)
    expect(kinds(events)).toEqual(['mission.terminated@child', 'work.failed@root'])
    expect([item.doc.state, parent.mission.state]).toEqual(['failed', 'active'])
    expectValidPayloads(events)
  })

  it('keeps child budgets, deadlines and depth within the parent', () => {
    const { state, group } = active()
    const item = seedItem(group, 'big', 'queued')
    const create = (overrides: Partial<CommandPayload<'mission.create_child'>>) =>
      exec(state, 'mission.create_child', childPayload(item.doc.workItemId, 'child', cast.worker2, overrides), cast.coordinator, { envelope: inGroup(group) })
    expect(codeOf(() => create({ budget: { currency: 'USD', financialLimit: 11, modelTokenLimit: 1, toolCallLimit: 1 } }))).toBe('BUDGET_EXCEEDED')
    expect(codeOf(() => create({ budget: { modelTokenLimit: 10_001 } }))).toBe('BUDGET_EXCEEDED')
    expect(codeOf(() => create({ deadline: '2026-08-02T00:00:00Z' }))).toBe('INVALID_COMMAND')
    expect(codeOf(() => create({ coordinatorAgentId: cast.coordinator.actor.id }))).toBe('INVALID_COMMAND')
    expect(codeOf(() => create({ childMissionId: group.missionId }))).toBe('INVALID_COMMAND')
    create({})
    expect(codeOf(() => create({ childMissionId: 'urn:weft:test:mission:again', childGroupId: 'urn:weft:test:group:again' }))).toBe('INVALID_STATE_TRANSITION')
  })

  it('stops at the Organization’s maximum Mission depth', () => {
    const { state, group } = active()
    const coordinators = [cast.worker2, cast.worker3]
    let parent = group
    let owner: Cast = cast.coordinator
    for (let depth = 1; depth <= 5; depth++) {
      const item = seedItem(parent, `level-${depth}`, 'queued')
      const next = coordinators[depth % 2]!
      const create = () => exec(state, 'mission.create_child', childPayload(item.doc.workItemId, `level-${depth}`, next), owner, { envelope: inGroup(parent) })
      if (depth === 5) {
        expect(codeOf(create)).toBe('RATE_LIMITED')
        break
      }
      create()
      parent = state.groups.get(`urn:weft:test:group:level-${depth}`)!
      expect(parent.mission.parent?.depth).toBe(depth)
      owner = next
    }
  })
})
