import { describe, expect, it } from 'vitest'
import { validators } from '@weft/validators'
import { agentCard, cast } from '@weft/testkit/fixtures'
import { seedGroup } from '../../test/fixtures-state.js'
import { AGENTS, boot, codeOf, exec, expectValidGroup, expectValidPayloads, seedItem } from '../../test/fixtures-missions.js'
import { emptyState } from '../model.js'
import { workReducers } from './work.js'

describe('ext.missionweaveprotocol.registry.agent_card_register (§6.1)', () => {
  it('registers Organization-signed card versions in increasing order, as Organization facts', () => {
    const state = emptyState()
    const first = exec(state, 'ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(cast.worker1) }, cast.controlPlane)
    expect(first[0]).not.toHaveProperty('groupId')
    expect(first[0]).not.toHaveProperty('sequence')
    expect(state.org.agents.get(cast.worker1.actor.id)).toMatchObject({ sessionEpoch: 0, card: { cardVersion: 1 } })
    exec(state, 'ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(cast.worker1, 2) }, cast.controlPlane)
    const record = state.org.agents.get(cast.worker1.actor.id)!
    expect(record.card.cardVersion).toBe(2)
    expect(record.cardVersions.map((c) => c.cardVersion)).toEqual([1, 2])
    expect(validators.agentCard.errors(record.card)).toEqual([])
    expect(state.org.log).toHaveLength(2)
    expectValidPayloads(first)
  })

  it('refuses a version that does not increase and a service outside the control plane', () => {
    const state = emptyState()
    exec(state, 'ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(cast.worker1, 2) }, cast.controlPlane)
    expect(codeOf(() => exec(state, 'ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(cast.worker1, 2) }, cast.controlPlane))).toBe('INVALID_COMMAND')
    expect(codeOf(() => exec(state, 'ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(cast.worker1, 3) }, cast.registry))).toBe('AUTH_FORBIDDEN')
    expect(state.org.agents.get(cast.worker1.actor.id)!.cardVersions).toHaveLength(1)
  })
})

describe('ext.missionweaveprotocol.identity.session_open (§6.3, §11.3)', () => {
  it('issues Session Epoch n + 1 for a registered Agent', () => {
    const state = emptyState()
    boot(state)
    expect(AGENTS.map((a) => state.org.agents.get(a.actor.id)!.sessionEpoch)).toEqual([1, 1, 1, 1, 1])
    const events = exec(state, 'ext.missionweaveprotocol.identity.session_open', { agentId: cast.worker1.actor.id }, cast.controlPlane)
    expect(events.map((e) => [e.kind, e.payload])).toEqual([['ext.missionweaveprotocol.identity.session_opened', { agentId: cast.worker1.actor.id, sessionEpoch: 2 }]])
    expect(state.org.agents.get(cast.worker1.actor.id)!.sessionEpoch).toBe(2)
    expectValidPayloads(events)
  })

  it('refuses an unregistered Agent and an Agent whose card was revoked', () => {
    const state = emptyState()
    expect(codeOf(() => exec(state, 'ext.missionweaveprotocol.identity.session_open', { agentId: cast.worker1.actor.id }, cast.controlPlane))).toBe('INVALID_COMMAND')
    exec(state, 'ext.missionweaveprotocol.registry.agent_card_register', { card: { ...agentCard(cast.worker1), status: 'revoked' } }, cast.controlPlane)
    expect(codeOf(() => exec(state, 'ext.missionweaveprotocol.identity.session_open', { agentId: cast.worker1.actor.id }, cast.controlPlane))).toBe('AUTH_FORBIDDEN')
  })

  it('revokes the Agent’s Execution Leases in every Group and requeues their WorkItems', () => {
    const state = emptyState()
    const one = seedGroup(state)
    const two = seedGroup(state, 'urn:weft:test:group:two', 'urn:weft:test:mission:two')
    const a = seedItem(one, 'a', 'active', cast.worker1)
    const b = seedItem(two, 'b', 'active', cast.worker1)
    const other = seedItem(two, 'c', 'active', cast.worker2)
    const queued = seedItem(one, 'd', 'queued', cast.worker1)
    const leaseA = a.executionLease!.leaseId
    const events = exec(state, 'ext.missionweaveprotocol.identity.session_open', { agentId: cast.worker1.actor.id }, cast.controlPlane, { reducers: workReducers })
    expect(events.map((e) => [e.kind, e.groupId, e.workItemId])).toEqual([
      ['ext.missionweaveprotocol.identity.session_opened', undefined, undefined],
      ['ext.missionweaveprotocol.core.work_execution_lease_revoked', one.groupId, a.doc.workItemId],
      ['ext.missionweaveprotocol.core.work_execution_lease_revoked', two.groupId, b.doc.workItemId],
    ])
    expect(events[1]!.payload).toMatchObject({ executionLeaseId: leaseA, ownershipEpoch: 2, agentId: cast.worker1.actor.id, revokedSessionEpoch: 1 })
    expect([a.doc.state, b.doc.state, other.doc.state, queued.doc.state]).toEqual(['queued', 'queued', 'active', 'queued'])
    expect(a.executionLease?.state === 'active').toBe(false)
    expect(a.doc.owner?.ownershipEpoch).toBe(2)
    expectValidPayloads(events)
    expectValidGroup(one)
    expectValidGroup(two)
  })
})
