import { describe, expect, it } from 'vitest'
import { CAPABILITY, agentCard, cast, contract } from '@weft/testkit/fixtures'
import { accept, authorize, exec, item, offer, refused, wid, world } from '../../test/fixtures-work.js'
import { SELECTION } from '@weft/testkit/documents'

const dependencyAdd = 'ext.missionweaveprotocol.core.work_dependency_add'

describe('work.propose and work.authorize (§10.2)', () => {
  it('creates the WorkItem open at revision 1 with its own WorkItem Conversation (§9)', () => {
    const w = world()
    const [event] = authorize(w, wid('a'))
    const record = item(w, wid('a'))
    expect(event?.aggregateRevision).toBe(1)
    expect(record.doc).toMatchObject({ state: 'open', revision: 1, exclusive: true, authorizedBy: cast.coordinator.actor })
    expect(w.group.conversations.get(record.doc.conversationId)).toMatchObject({ type: 'work_item', primaryWorkItemId: wid('a'), state: 'active' })
    expect(record.reservedBudget).toEqual(contract().budget)
  })

  it('authorizes an open proposal once, crediting the proposer', () => {
    const w = world()
    exec(w, 'work.propose', { proposalId: 'urn:weft:test:proposal:1', contract: contract() }, cast.worker1)
    exec(w, 'work.authorize', { workItemId: wid('a'), contract: contract(), proposalId: 'urn:weft:test:proposal:1' }, cast.coordinator)
    expect(item(w, wid('a')).doc.createdBy).toEqual(cast.worker1.actor)
    expect(w.group.proposals.get('urn:weft:test:proposal:1')?.authorizedAs).toBe(wid('a'))
    expect(refused(w, 'work.authorize', { workItemId: wid('b'), contract: contract(), proposalId: 'urn:weft:test:proposal:1' }, cast.coordinator)).toBe('INVALID_COMMAND')
    expect(refused(w, 'work.authorize', { workItemId: wid('c'), contract: contract(), proposalId: 'urn:weft:test:proposal:none' }, cast.coordinator)).toBe('INVALID_COMMAND')
  })

  it('rejects a second authorization of the same WorkItem as a transition from open', () => {
    const w = world()
    authorize(w, wid('a'))
    expect(refused(w, 'work.authorize', { workItemId: wid('a'), contract: contract() }, cast.coordinator)).toBe('INVALID_STATE_TRANSITION')
  })

  it('lets the MissionOwner authorize only with an explicit emergency override (§7.1)', () => {
    const w = world()
    expect(refused(w, 'work.authorize', { workItemId: wid('a'), contract: contract() }, cast.owner)).toBe('AUTH_FORBIDDEN')
    const [event] = exec(w, 'work.authorize', { workItemId: wid('a'), contract: contract(), emergencyOverride: true }, cast.owner)
    expect(event?.payload).toMatchObject({ emergencyOverride: true })
    expect(refused(w, 'work.authorize', { workItemId: wid('b'), contract: contract(), emergencyOverride: true }, cast.coordinator)).toBe('AUTH_FORBIDDEN')
  })

  it('refuses a Coordinator whose lease has expired (§7.2)', () => {
    const w = world()
    w.clock.advance(86_400)
    expect(refused(w, 'work.authorize', { workItemId: wid('a'), contract: contract() }, cast.coordinator)).toBe('AUTH_FORBIDDEN')
  })

  it('refuses new work once the Mission left active', () => {
    const w = world()
    w.group.mission = { ...w.group.mission, state: 'awaiting_approval' }
    expect(refused(w, 'work.authorize', { workItemId: wid('a'), contract: contract() }, cast.coordinator)).toBe('INVALID_STATE_TRANSITION')
  })
})

describe('Work Contract completeness and narrowing (§10.1, §4.11)', () => {
  it('needs business impact and criteria with descriptions', () => {
    const w = world()
    const incomplete = [contract({ businessImpact: ' ' }), contract({ acceptanceCriteria: [{ criterionId: 'x', description: '  ', evidenceRequired: ['deterministic_test'] }] })]
    for (const c of incomplete) expect(refused(w, 'work.authorize', { workItemId: wid('a'), contract: c }, cast.coordinator)).toBe('WORK_CONTRACT_INCOMPLETE')
  })

  it('inherits from the Mission the currency and the limits a budget leaves out (§12)', () => {
    const w = world()
    // The Mission limits model tokens and names USD; neither contract need repeat them.
    authorize(w, wid('a'), { budget: { financialLimit: 5, toolCallLimit: 5, modelTokenLimit: 5 } })
    authorize(w, wid('b'), { budget: { currency: 'USD', financialLimit: 5, toolCallLimit: 5 } })
    expect([item(w, wid('a')).doc.state, item(w, wid('b')).doc.state]).toEqual(['open', 'open'])
  })

  it('rejects criteria sharing an ID and deadlines past the Mission (INVALID_COMMAND)', () => {
    const w = world()
    const twice = { criterionId: 'same', description: 'Twice.', evidenceRequired: ['deterministic_test' as const] }
    expect(refused(w, 'work.authorize', { workItemId: wid('a'), contract: contract({ acceptanceCriteria: [twice, twice] }) }, cast.coordinator)).toBe('INVALID_COMMAND')
    expect(refused(w, 'work.authorize', { workItemId: wid('a'), contract: contract({ deadline: '2026-12-01T00:00:00Z' }) }, cast.coordinator)).toBe('INVALID_COMMAND')
    expect(refused(w, 'work.authorize', { workItemId: wid('a'), contract: contract({ budget: { currency: 'EUR', financialLimit: 1, modelTokenLimit: 1, toolCallLimit: 1 } }) }, cast.coordinator)).toBe(
      'INVALID_COMMAND',
    )
  })

  it('keeps the WorkItems of the Mission within its budget, and releases a cancelled one (§12)', () => {
    const w = world()
    const big = { currency: 'USD', financialLimit: 600, modelTokenLimit: 1000, toolCallLimit: 10 }
    authorize(w, wid('a'), { budget: big })
    expect(refused(w, 'work.authorize', { workItemId: wid('b'), contract: contract({ budget: big }) }, cast.coordinator)).toBe('BUDGET_EXCEEDED')
    exec(w, 'work.cancel', { workItemId: wid('a'), reason: 'Descoped.' }, cast.coordinator)
    expect(item(w, wid('a')).reservedBudget).toMatchObject({ financialLimit: 0, toolCallLimit: 0 })
    authorize(w, wid('b'), { budget: big })
    expect(item(w, wid('b')).doc.state).toBe('open')
  })

  it('keeps children within the parent WorkItem: budget, deadline and resources', () => {
    const w = world()
    authorize(w, wid('parent'))
    const child = (overrides: Parameters<typeof contract>[0]) => ({ workItemId: wid('child'), contract: contract(overrides), parentWorkItemId: wid('parent') })
    expect(refused(w, 'work.authorize', child({ budget: { currency: 'USD', financialLimit: 11, modelTokenLimit: 10, toolCallLimit: 10 } }), cast.coordinator)).toBe('BUDGET_EXCEEDED')
    expect(refused(w, 'work.authorize', child({ deadline: '2026-08-15T00:00:00Z' }), cast.coordinator)).toBe('INVALID_COMMAND')
    expect(refused(w, 'work.authorize', child({ allowedResources: [{ resource: 'urn:weft:test:resource:repo', operations: ['delete'] }] }), cast.coordinator)).toBe('INVALID_COMMAND')
    exec(w, 'work.authorize', child({ budget: { currency: 'USD', financialLimit: 6, modelTokenLimit: 6000, toolCallLimit: 30 } }), cast.coordinator)
    expect(item(w, wid('child')).depth).toBe(1)
    const sibling = { workItemId: wid('sibling'), contract: contract({ budget: { currency: 'USD', financialLimit: 6, modelTokenLimit: 10, toolCallLimit: 10 } }), parentWorkItemId: wid('parent') }
    expect(refused(w, 'work.authorize', sibling, cast.coordinator)).toBe('BUDGET_EXCEEDED')
  })
})

describe('dependencies (§10.4)', () => {
  it('reconciles the contract and payload dependency sets', () => {
    const w = world()
    authorize(w, wid('a'))
    authorize(w, wid('b'))
    exec(w, 'work.authorize', { workItemId: wid('c'), contract: contract({ dependencyWorkItemIds: [wid('a')] }), dependencyIds: [wid('b'), wid('a')] }, cast.coordinator)
    expect(item(w, wid('c')).dependencyIds).toEqual([wid('a'), wid('b')])
    expect(item(w, wid('c')).doc.contract.dependencyWorkItemIds).toEqual([wid('a'), wid('b')])
  })

  it('rejects self-dependencies, unknown dependencies and cycles', () => {
    const w = world()
    authorize(w, wid('a'))
    exec(w, 'work.authorize', { workItemId: wid('b'), contract: contract(), dependencyIds: [wid('a')] }, cast.coordinator)
    exec(w, 'work.authorize', { workItemId: wid('c'), contract: contract(), dependencyIds: [wid('b')] }, cast.coordinator)
    expect(refused(w, 'work.authorize', { workItemId: wid('d'), contract: contract(), dependencyIds: [wid('d')] }, cast.coordinator)).toBe('INVALID_COMMAND')
    expect(refused(w, 'work.authorize', { workItemId: wid('d'), contract: contract(), dependencyIds: [wid('nowhere')] }, cast.coordinator)).toBe('INVALID_COMMAND')
    try {
      exec(w, dependencyAdd, { workItemId: wid('a'), dependencyId: wid('c') }, cast.coordinator)
      expect.unreachable()
    } catch (error) {
      expect(error).toMatchObject({ code: 'INVALID_COMMAND', details: { cycle: [wid('a'), wid('c'), wid('b'), wid('a')] } })
    }
    expect(item(w, wid('a')).dependencyIds).toEqual([])
  })

  it('adds a dependency only from open or failed, by the Coordinator or MissionOwner', () => {
    const w = world()
    authorize(w, wid('a'))
    authorize(w, wid('b'))
    expect(refused(w, dependencyAdd, { workItemId: wid('b'), dependencyId: wid('a') }, cast.worker1)).toBe('AUTH_FORBIDDEN')
    offer(w, wid('b'))
    expect(refused(w, dependencyAdd, { workItemId: wid('b'), dependencyId: wid('a') }, cast.coordinator)).toBe('INVALID_STATE_TRANSITION')
    const [revised] = exec(w, dependencyAdd, { workItemId: wid('a'), dependencyId: wid('b') }, cast.owner)
    expect(revised?.payload).toMatchObject({ revisionReason: 'dependency_added', previousContractVersion: 1, addedDependencyId: wid('b'), requiresReacceptance: false })
    expect(refused(w, dependencyAdd, { workItemId: wid('a'), dependencyId: wid('b') }, cast.coordinator)).toBe('INVALID_COMMAND')
  })
})

describe('work.offer (§10.3)', () => {
  it('records one pending offer per candidate pinning its Agent Card version, expiring in absolute time', () => {
    const w = world()
    authorize(w, wid('a'))
    const [created] = offer(w, wid('a'), [cast.worker1, cast.worker2], 120)
    const offers = item(w, wid('a')).doc.offers ?? []
    expect(offers.map((o) => [o.agentId, o.status, o.agentCardVersion])).toEqual([
      [cast.worker1.actor.id, 'pending', 1],
      [cast.worker2.actor.id, 'pending', 1],
    ])
    expect(created?.payload).toMatchObject({ offerExpiresAt: '2026-07-15T00:02:00.000Z' })
    expect(item(w, wid('a')).offerExpiresAt).toBe('2026-07-15T00:02:00.000Z')
  })

  it('replaces earlier pending offers, which then cannot be accepted', () => {
    const w = world()
    authorize(w, wid('a'))
    offer(w, wid('a'), [cast.worker1])
    offer(w, wid('a'), [cast.worker2])
    expect(item(w, wid('a')).doc.offers?.map((o) => o.status)).toEqual(['withdrawn', 'pending'])
    expect(refused(w, 'work.accept_offer', { workItemId: wid('a'), ownershipLeaseSeconds: 600 }, cast.worker1)).toBe('WORK_OFFER_EXPIRED')
  })

  it('rejects candidates that are unregistered or lack a required capability version', () => {
    const w = world()
    authorize(w, wid('a'))
    const payload = (candidate: string) => ({ workItemId: wid('a'), candidateAgentIds: [candidate], selectionBasis: SELECTION, offerExpiresInSeconds: 60 })
    expect(refused(w, 'work.offer', payload('urn:weft:test:agent:nobody'), cast.coordinator)).toBe('INVALID_COMMAND')
    const newer = contract({ requiredCapabilities: [{ id: CAPABILITY.id, version: '1.2.0' }] })
    expect(refused(w, 'work.offer', { ...payload(cast.worker1.actor.id), contract: newer }, cast.coordinator)).toBe('INVALID_COMMAND')
    const major = contract({ requiredCapabilities: [{ id: CAPABILITY.id, version: '0.9.0' }] })
    expect(refused(w, 'work.offer', { ...payload(cast.worker1.actor.id), contract: major }, cast.coordinator)).toBe('INVALID_COMMAND')
    const basis = { ...SELECTION, requiredCapabilities: [{ id: 'weft.test.other', version: '1.0.0' }] }
    expect(refused(w, 'work.offer', { ...payload(cast.worker1.actor.id), selectionBasis: basis }, cast.coordinator)).toBe('INVALID_COMMAND')
  })

  it('accepts a compatible higher capability version and pins it on acceptance', () => {
    const w = world()
    const agent = w.state.org.agents.get(cast.worker1.actor.id)!
    const card = { ...agentCard(cast.worker1, 2), capabilities: agentCard(cast.worker1, 2).capabilities.map((c) => ({ ...c, version: '1.4.0' })) }
    agent.card = card
    agent.cardVersions.push(card)
    authorize(w, wid('a'))
    offer(w, wid('a'))
    accept(w, wid('a'))
    expect(item(w, wid('a')).doc.owner).toMatchObject({ agentCardVersion: 2, capabilityPins: [{ id: CAPABILITY.id, version: '1.4.0' }] })
  })

  it('carries a corrected contract as a new contract version before the offer (§10.1)', () => {
    const w = world()
    authorize(w, wid('a'))
    const events = exec(
      w,
      'work.offer',
      { workItemId: wid('a'), candidateAgentIds: [cast.worker1.actor.id], selectionBasis: SELECTION, offerExpiresInSeconds: 60, contract: contract({ goal: 'Implement the feature, clarified.' }) },
      cast.coordinator,
    )
    expect(events.map((e) => e.kind)).toEqual(['work.contract.revised', 'work.offer.created'])
    expect(events.map((e) => e.aggregateRevision)).toEqual([2, 3])
    expect(events[0]?.payload).toMatchObject({ revisionReason: 'offer_correction', previousContractVersion: 1, requiresReacceptance: true })
    expect(item(w, wid('a')).doc.contract).toMatchObject({ contractVersion: 2, goal: 'Implement the feature, clarified.' })
  })
})

describe('work.accept_offer (§10.3, §8)', () => {
  it.each([true, false])('first accept wins: the second candidate was withdrawn and gets WORK_ALREADY_OWNED (exclusive: %s)', (exclusive) => {
    // A non-exclusive WorkItem still has one owner in 0.1 (see the README): the same race, the same answer.
    const w = world()
    authorize(w, wid('a'), {}, { exclusive })
    expect(item(w, wid('a')).doc.exclusive).toBe(exclusive)
    offer(w, wid('a'), [cast.worker1, cast.worker2])
    const [accepted] = accept(w, wid('a'), cast.worker1)
    expect(accepted?.payload).toMatchObject({ assigneeId: cast.worker1.actor.id, ownershipEpoch: 1, withdrawnAgentIds: [cast.worker2.actor.id] })
    expect(item(w, wid('a')).doc.offers?.map((o) => o.status)).toEqual(['accepted', 'lost_race'])
    expect(refused(w, 'work.accept_offer', { workItemId: wid('a'), ownershipLeaseSeconds: 600 }, cast.worker2)).toBe('WORK_ALREADY_OWNED')
    expect(item(w, wid('a')).doc.owner?.agentId).toBe(cast.worker1.actor.id)
  })

  it('creates the ownership lease with its start-by deadline and a new Ownership Epoch', () => {
    const w = world()
    authorize(w, wid('a'))
    offer(w, wid('a'))
    accept(w, wid('a'), cast.worker1, 900)
    const record = item(w, wid('a'))
    expect(record.lastOwnershipEpoch).toBe(1)
    expect(record.ownershipLease).toMatchObject({ leaseType: 'ownership', holderAgentId: cast.worker1.actor.id, ownershipEpoch: 1, startBy: '2026-07-15T00:15:00.000Z', state: 'active' })
    expect(record.ownershipLease?.leaseId).toBe(record.doc.owner?.ownershipLeaseId)
  })

  it('refuses a non-candidate (AUTH_FORBIDDEN) and an expired offer (WORK_OFFER_EXPIRED)', () => {
    const w = world()
    authorize(w, wid('a'))
    offer(w, wid('a'), [cast.worker1], 60)
    expect(refused(w, 'work.accept_offer', { workItemId: wid('a'), ownershipLeaseSeconds: 600 }, cast.worker3)).toBe('AUTH_FORBIDDEN')
    w.clock.advance(60)
    expect(refused(w, 'work.accept_offer', { workItemId: wid('a'), ownershipLeaseSeconds: 600 }, cast.worker1)).toBe('WORK_OFFER_EXPIRED')
    // §10.2: expiry changes nothing; a new offer makes it acceptable again.
    expect(item(w, wid('a')).doc.state).toBe('offered')
    offer(w, wid('a'), [cast.worker1], 60)
    accept(w, wid('a'))
    expect(item(w, wid('a')).doc.state).toBe('queued')
  })

  it('activates a provisional Membership under the next epoch, or creates a worker Membership (§8)', () => {
    const w = world()
    const provisional = {
      membershipId: 'urn:weft:test:membership:w1',
      missionId: w.group.missionId,
      groupId: w.group.groupId,
      member: cast.worker1.actor,
      role: 'worker' as const,
      state: 'provisional' as const,
      membershipEpoch: 1,
      scopes: ['work_item:read'],
      visibilityStartSequence: 1,
      contextPackageId: 'urn:weft:test:context:1',
      provisionalExpiresAt: '2026-07-15T01:00:00Z',
      grantedAt: '2026-07-15T00:00:00Z',
    }
    w.group.memberships.set(provisional.membershipId, provisional)
    w.group.membershipByMember.set(`agent:${cast.worker1.actor.id}`, provisional.membershipId)
    authorize(w, wid('a'))
    offer(w, wid('a'), [cast.worker1])
    const events = accept(w, wid('a'), cast.worker1)
    expect(events.map((e) => e.kind)).toEqual(['work.offer.accepted', 'membership.changed'])
    expect(w.group.memberships.get(provisional.membershipId)).toMatchObject({ state: 'active', membershipEpoch: 2, visibilityStartSequence: 1 })
    expect(w.group.memberships.get(provisional.membershipId)).not.toHaveProperty('provisionalExpiresAt')

    authorize(w, wid('b'))
    offer(w, wid('b'), [cast.worker2])
    const head = w.group.head
    const [, created] = accept(w, wid('b'), cast.worker2)
    expect(created?.payload).toMatchObject({ membership: { member: cast.worker2.actor, role: 'worker', state: 'active', membershipEpoch: 1, visibilityStartSequence: head } })

    // An active Membership needs no change.
    authorize(w, wid('c'))
    offer(w, wid('c'), [cast.worker2])
    expect(accept(w, wid('c'), cast.worker2).map((e) => e.kind)).toEqual(['work.offer.accepted'])
  })
})
