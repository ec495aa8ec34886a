import { describe, expect, it } from 'vitest'
import type { CommandPayload, Membership } from '@weft/spec'
import { cast, T0 } from '@weft/testkit/fixtures'
import { seedGroup } from '../../test/fixtures-state.js'
import { codeOf, exec, expectValidGroup, expectValidPayloads, inGroup, seedItem } from '../../test/fixtures-missions.js'
import { actorKey, emptyState } from '../model.js'
import type { EventOf } from '../commit/handler.js'
import { membershipReducers } from './memberships.js'

const WORKER_MEMBERSHIP = 'urn:weft:test:membership:worker-1'

function setup() {
  const state = emptyState()
  const group = seedGroup(state)
  const change = (payload: Record<string, unknown> = {}, by = cast.coordinator) =>
    exec(
      state,
      'membership.change',
      // `undefined` members stand for "leave out": a signed Command has no undefined values.
      JSON.parse(
        JSON.stringify({
          membershipId: WORKER_MEMBERSHIP,
          member: cast.worker1.actor,
          role: 'worker',
          state: 'provisional',
          scopes: ['group:read', 'work:execute'],
          contextPackageId: 'urn:weft:test:context:1',
          provisionalExpiresInSeconds: 600,
          ...payload,
        }),
      ) as CommandPayload<'membership.change'>,
      by,
      { envelope: inGroup(group) },
    )
  return { state, group, change }
}

const active = { state: 'active', contextPackageId: undefined, provisionalExpiresInSeconds: undefined } as const

describe('membership.change (§8)', () => {
  it('grants a just-in-time provisional Membership that sees no history before the current head', () => {
    const { group, change } = setup()
    group.head = 7
    const events = change()
    const m = group.memberships.get(WORKER_MEMBERSHIP)!
    expect(m).toMatchObject({ state: 'provisional', membershipEpoch: 1, visibilityStartSequence: 7, contextPackageId: 'urn:weft:test:context:1', provisionalExpiresAt: '2026-07-15T00:10:00.000Z' })
    expect(group.membershipByMember.get(actorKey(cast.worker1.actor))).toBe(WORKER_MEMBERSHIP)
    expectValidPayloads(events)
    expectValidGroup(group)
  })

  it('fences the previous epoch on every change', () => {
    const { group, change } = setup()
    change()
    change(active)
    const m = group.memberships.get(WORKER_MEMBERSHIP)!
    expect(m.membershipEpoch).toBe(2)
    expect(m.state).toBe('active')
    expect(m.activatedAt).toBe(T0)
    expect(m.provisionalExpiresAt).toBeUndefined()
    change({ ...active, scopes: ['group:read'] })
    expect(group.memberships.get(WORKER_MEMBERSHIP)!.membershipEpoch).toBe(3)
    expectValidGroup(group)
  })

  it('is reserved to the Coordinator, the MissionOwner and the control plane', () => {
    const { change } = setup()
    expect(change({}, cast.owner)).toHaveLength(1)
    expect(change(active, cast.controlPlane)).toHaveLength(1)
    expect(codeOf(() => change(active, cast.worker2))).toBe('AUTH_FORBIDDEN')
  })

  it('keeps the MissionOwner and Coordinator seats with complete visibility', () => {
    const { group, change } = setup()
    expect(codeOf(() => change({ ...active, role: 'coordinator' }))).toBe('INVALID_COMMAND')
    const owner = group.membershipByMember.get(actorKey(cast.owner.actor))!
    const seat = { ...active, membershipId: owner, member: cast.owner.actor, role: 'mission_owner' as const, scopes: ['group:read', 'group:write'] }
    expect(codeOf(() => change({ ...seat, visibilityStartSequence: 3 }))).toBe('INVALID_COMMAND')
    expect(codeOf(() => change({ ...seat, role: 'observer' }))).toBe('INVALID_COMMAND')
    expect(change(seat)).toHaveLength(1)
    expect(group.memberships.get(owner)).toMatchObject({ membershipEpoch: 2, visibilityStartSequence: 0 })
  })

  it('refuses a second Membership for a member, an unregistered Agent and a step back to provisional', () => {
    const { change } = setup()
    change(active)
    expect(codeOf(() => change({ ...active, membershipId: 'urn:weft:test:membership:other' }))).toBe('INVALID_COMMAND')
    expect(codeOf(() => change({}))).toBe('INVALID_COMMAND')
    expect(codeOf(() => change({ membershipId: 'urn:weft:test:membership:ghost', member: { type: 'agent', id: 'urn:weft:test:agent:ghost' } }))).toBe('INVALID_COMMAND')
  })

  it('stores a complete Membership another domain appends (offer acceptance activates the Worker)', () => {
    const { state, group } = setup()
    const membership: Membership = {
      membershipId: WORKER_MEMBERSHIP,
      missionId: group.missionId,
      groupId: group.groupId,
      member: cast.worker1.actor,
      role: 'worker',
      state: 'active',
      membershipEpoch: 2,
      scopes: ['group:read'],
      visibilityStartSequence: 1,
      grantedAt: T0,
      activatedAt: T0,
    }
    membershipReducers['membership.changed'](state, { groupId: group.groupId, payload: { membership } } as EventOf<'membership.changed'>)
    expect(group.memberships.get(WORKER_MEMBERSHIP)).toEqual(membership)
    expect(group.membershipByMember.get(actorKey(cast.worker1.actor))).toBe(WORKER_MEMBERSHIP)
  })
})

describe('membership.end (§8)', () => {
  it('ends the Membership, fencing its epoch, and a later change re-opens it under the next epoch', () => {
    const { state, group, change } = setup()
    change(active)
    const events = exec(state, 'membership.end', { membershipId: WORKER_MEMBERSHIP, reason: 'No more work here.' }, cast.coordinator, { envelope: inGroup(group) })
    expect(events[0]!.payload).toMatchObject({ membershipId: WORKER_MEMBERSHIP, member: cast.worker1.actor, membershipEpoch: 1 })
    expect(group.memberships.get(WORKER_MEMBERSHIP)).toMatchObject({ state: 'ended', endedAt: T0, membershipEpoch: 1 })
    expectValidPayloads(events)
    expectValidGroup(group)
    expect(codeOf(() => exec(state, 'membership.end', { membershipId: WORKER_MEMBERSHIP, reason: 'Again.' }, cast.coordinator, { envelope: inGroup(group) }))).toBe('INVALID_STATE_TRANSITION')
    change(active)
    expect(group.memberships.get(WORKER_MEMBERSHIP)).toMatchObject({ state: 'active', membershipEpoch: 2 })
    expect(group.memberships.get(WORKER_MEMBERSHIP)!.endedAt).toBeUndefined()
  })

  it('lets a member leave, but never ends the seats or another member’s Membership on its own authority', () => {
    const { state, group, change } = setup()
    change(active)
    exec(state, 'membership.change', { membershipId: 'urn:weft:test:membership:w2', member: cast.worker2.actor, role: 'worker', state: 'active', scopes: ['group:read'] }, cast.coordinator, {
      envelope: inGroup(group),
    })
    const end = (membershipId: string, by = cast.coordinator) => exec(state, 'membership.end', { membershipId, reason: 'Done.' }, by, { envelope: inGroup(group) })
    expect(codeOf(() => end(WORKER_MEMBERSHIP, cast.worker2))).toBe('AUTH_FORBIDDEN')
    expect(codeOf(() => end(group.membershipByMember.get(actorKey(cast.coordinator.actor))!, cast.owner))).toBe('INVALID_COMMAND')
    expect(codeOf(() => end('urn:weft:test:membership:none'))).toBe('INVALID_COMMAND')
    expect(end(WORKER_MEMBERSHIP, cast.worker1)).toHaveLength(1)
  })
})

describe('membership.grant_delegation (§9.1 issuance)', () => {
  const budget = { currency: 'USD', financialLimit: 5, modelTokenLimit: 5000, toolCallLimit: 20, computeSecondsLimit: 100, wallClockSecondsLimit: 100, externalSideEffectLimit: 0 }

  function delegate() {
    const s = setup()
    s.change({ ...active, role: 'work_delegate', member: cast.worker1.actor })
    const target = seedItem(s.group, 'root', 'open')
    const grant = (payload: Partial<CommandPayload<'membership.grant_delegation'>> = {}) =>
      exec(
        s.state,
        'membership.grant_delegation',
        {
          grantId: 'urn:weft:test:grant:1',
          granteeAgentId: cast.worker1.actor.id,
          targetWorkItemId: target.doc.workItemId,
          allowedCapabilities: [{ id: 'weft.test.implementation', version: '1.0.0' }],
          budget,
          maxDescendantDepth: 2,
          granteeMembershipEpoch: 1,
          expiresAt: '2026-07-20T00:00:00Z',
          ...payload,
        },
        cast.coordinator,
        { envelope: { ...inGroup(s.group), coordinatorEpoch: 1 } },
      )
    return { ...s, target, grant }
  }

  it('persists the complete Grant and hands it to the grantee Membership', () => {
    const { group, grant } = delegate()
    const events = grant()
    const stored = group.grants.get('urn:weft:test:grant:1')!
    expect(stored.grant).toMatchObject({ missionId: group.missionId, groupId: group.groupId, coordinatorEpoch: 1, grantedBy: cast.coordinator.actor, grantedAt: T0, granteeMembershipEpoch: 1 })
    expect(stored.workItemIds.size).toBe(0)
    expect(group.memberships.get(WORKER_MEMBERSHIP)!.delegationGrants).toEqual([stored.grant])
    expectValidPayloads(events)
    expectValidGroup(group)
  })

  it('refuses each failed issuance check with its own code', () => {
    const { group, grant } = delegate()
    expect(codeOf(() => grant({ granteeAgentId: cast.worker2.actor.id }))).toBe('MEMBERSHIP_REQUIRED')
    expect(codeOf(() => grant({ granteeMembershipEpoch: 2 }))).toBe('MEMBERSHIP_STALE')
    expect(codeOf(() => grant({ targetWorkItemId: 'urn:weft:test:work:none' }))).toBe('INVALID_COMMAND')
    expect(codeOf(() => grant({ budget: { ...budget, toolCallLimit: 51 } }))).toBe('BUDGET_EXCEEDED')
    expect(codeOf(() => grant({ budget: { ...budget, currency: 'EUR' } }))).toBe('INVALID_COMMAND')
    expect(codeOf(() => grant({ expiresAt: '2026-07-14T00:00:00Z' }))).toBe('INVALID_COMMAND')
    expect(codeOf(() => grant({ maxDescendantDepth: 9 }))).toBe('RATE_LIMITED')
    seedItem(group, 'done', 'verified')
    expect(codeOf(() => grant({ targetWorkItemId: 'urn:weft:test:work:done' }))).toBe('INVALID_STATE_TRANSITION')
    grant()
    expect(codeOf(() => grant())).toBe('INVALID_COMMAND')
  })

  it('refuses a grantee whose Membership is not work_delegate', () => {
    const { state, group, grant } = delegate()
    exec(state, 'membership.change', { membershipId: WORKER_MEMBERSHIP, member: cast.worker1.actor, role: 'worker', state: 'active', scopes: ['group:read'] }, cast.coordinator, {
      envelope: inGroup(group),
    })
    expect(codeOf(() => grant({ granteeMembershipEpoch: 2 }))).toBe('MEMBERSHIP_REQUIRED')
  })
})
