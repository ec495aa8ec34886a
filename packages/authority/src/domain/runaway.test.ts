import { describe, expect, it } from 'vitest'
import type { CooperationOverrideGrant, Event } from '@weft/spec'
import { cast, command, contract, DEFAULT_TEST_POLICY, GROUP, T0_MS, testClock } from '@weft/testkit/fixtures'
import { context, seedGroup } from '../../test/fixtures-state.js'
import { codeOf, inGroup } from '../../test/fixtures-missions.js'
import { emptyState, type ActorRef, type AuthorityState } from '../model.js'
import { consumeOverride, indexOverride, noteRate, RATE_RING_CAPACITY, RATE_WINDOW_MS, recentActions, requireWithinRate } from './runaway.js'
import { proposeWork } from './work-plan.js'

/** The fields of an accepted Event the runaway reducers read. */
function accepted(actor: ActorRef, atMs: number, actionId = `urn:weft:test:action:${atMs}`): Event {
  return { groupId: GROUP, actor, occurredAt: new Date(atMs).toISOString(), cause: { type: 'command', id: actionId } } as Event
}

function setup(): { state: AuthorityState } {
  const state = emptyState()
  seedGroup(state)
  return { state }
}

function grant(actionId: string, beneficiary: ActorRef = cast.worker1.actor): CooperationOverrideGrant {
  return {
    grantId: `urn:weft:test:override:${actionId}`,
    missionId: 'urn:weft:test:mission:one',
    groupId: GROUP,
    policyName: 'proposal_rate',
    beneficiary,
    targetCommandKind: 'work.propose',
    targetActionId: actionId,
    reason: 'Planning burst.',
    approver: cast.owner.actor,
    grantedAt: new Date(T0_MS).toISOString(),
    expiresAt: new Date(T0_MS + 600_000).toISOString(),
  }
}

describe('rate ring (§20)', () => {
  it('counts one actor in a sliding minute and forgets what left the window', () => {
    const { state } = setup()
    const group = state.groups.get(GROUP)!
    noteRate(state, accepted(cast.worker1.actor, T0_MS), 'message_rate')
    noteRate(state, accepted(cast.worker1.actor, T0_MS + 30_000), 'message_rate')
    noteRate(state, accepted(cast.worker2.actor, T0_MS + 30_000), 'message_rate')
    expect(recentActions(group, cast.worker1.actor, 'message_rate', T0_MS + 30_000)).toHaveLength(2)
    expect(recentActions(group, cast.worker1.actor, 'proposal_rate', T0_MS + 30_000)).toHaveLength(0)
    expect(recentActions(group, cast.worker1.actor, 'message_rate', T0_MS + RATE_WINDOW_MS)).toHaveLength(1)
    expect(recentActions(group, cast.worker2.actor, 'message_rate', T0_MS + 30_000)).toHaveLength(1)
  })

  it('stays bounded however many actions fall into one window', () => {
    const { state } = setup()
    const group = state.groups.get(GROUP)!
    for (let i = 0; i < RATE_RING_CAPACITY + 50; i++) noteRate(state, accepted(cast.worker1.actor, T0_MS + i), 'message_rate')
    expect(recentActions(group, cast.worker1.actor, 'message_rate', T0_MS + 2_000)).toHaveLength(RATE_RING_CAPACITY)
  })
})

describe('proposal rate (§20)', () => {
  const limited = (state: AuthorityState, clock = testClock()) => ({ ...context(state, GROUP, clock), policy: { ...DEFAULT_TEST_POLICY, maxProposalsPerMinute: 1 } })
  const propose = (actionId?: string, grantId?: string) =>
    command('work.propose', { proposalId: 'urn:weft:test:proposal:p2', contract: contract() }, cast.coordinator, {
      ...inGroup(GROUP),
      ...(actionId === undefined ? {} : { actionId }),
      ...(grantId === undefined ? {} : { cooperationOverrideGrantId: grantId }),
    })

  it('[error RATE_LIMITED] refuses a proposal beyond the rate and admits the one a grant names', () => {
    const { state } = setup()
    const group = state.groups.get(GROUP)!
    expect(proposeWork(propose(), limited(state)).map((d) => d.kind)).toEqual(['work.proposed'])
    noteRate(state, accepted(cast.coordinator.actor, T0_MS - 1_000), 'proposal_rate')
    expect(codeOf(() => proposeWork(propose(), limited(state)))).toBe('RATE_LIMITED')
    const g = grant('urn:weft:test:action:p2', cast.coordinator.actor)
    group.overrides.set(g.grantId, { grant: g })
    expect(proposeWork(propose('urn:weft:test:action:p2', g.grantId), limited(state)).map((d) => d.kind)).toEqual(['work.proposed'])
    // The window has passed for the earlier proposal: no grant needed.
    const later = testClock(T0_MS + RATE_WINDOW_MS)
    const next = command('work.propose', { proposalId: 'urn:weft:test:proposal:p3', contract: contract() }, cast.coordinator, { groupId: GROUP }, later)
    expect(proposeWork(next, limited(state, later))).toHaveLength(1)
  })

  it('checks no ring when the Organization sets no rate', () => {
    const { state } = setup()
    for (let i = 0; i < 5; i++) noteRate(state, accepted(cast.coordinator.actor, T0_MS - i), 'proposal_rate')
    expect(() => requireWithinRate(propose(), context(state, GROUP), state.groups.get(GROUP)!, 'proposal_rate', undefined)).not.toThrow()
  })
})

describe('override consumption (§20)', () => {
  it('marks a grant consumed by the first Event of its target Action by its beneficiary, and by nothing else', () => {
    const { state } = setup()
    const group = state.groups.get(GROUP)!
    const g = grant('urn:weft:test:action:target')
    const record = { grant: g }
    group.overrides.set(g.grantId, record)
    indexOverride(group, record)
    consumeOverride(state, accepted(cast.worker2.actor, T0_MS, 'urn:weft:test:action:target'))
    consumeOverride(state, accepted(cast.worker1.actor, T0_MS, 'urn:weft:test:action:other'))
    expect(group.overrides.get(g.grantId)?.consumedByActionId).toBeUndefined()
    consumeOverride(state, accepted(cast.worker1.actor, T0_MS, 'urn:weft:test:action:target'))
    expect(group.overrides.get(g.grantId)?.consumedByActionId).toBe('urn:weft:test:action:target')
  })
})
