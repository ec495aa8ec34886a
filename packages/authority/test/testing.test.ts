/**
 * `@weft/authority/testing`, through its package export: the Organization `createTestOrganization`
 * describes (keys bound in one Registry, control-plane-signed Agent Cards, §6.1, §6.4), and the
 * Authority it starts with the cards registered and a session per Agent (§6.3), whose clients
 * learn their epochs from every receipt.
 */
import { createAuthority, createMemoryStore } from '@weft/authority'
import { createTestOrganization, TEST_CAPABILITY } from '@weft/authority/testing'
import { encodeBase64url, keyPairFromSeed, UsageError, verify } from '@weft/codec'
import type { CommandPayload } from '@weft/spec'
import { schemaCheckForKind } from '@weft/validators/signed'
import { describe, expect, it } from 'vitest'

const GROUP = 'urn:weft:testing-test:group:1'

function mission(coordinatorAgentId: string): CommandPayload<'mission.create'> {
  return {
    missionId: 'urn:weft:testing-test:mission:1',
    title: 'Release',
    objective: 'Ship the release.',
    definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
    deadline: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    budget: { currency: 'USD', financialLimit: 100 },
    approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    coordinatorAgentId,
    coordinatorLeaseSeconds: 86_400,
  }
}

describe('createTestOrganization', () => {
  const org = createTestOrganization({
    humans: ['owner', 'reviewer'],
    agents: ['coordinator', { name: 'worker', capabilities: [{ id: 'example.build', version: '2.0.0' }], maxConcurrency: 3, owner: 'reviewer' }],
    services: ['registry'],
  })

  it('binds every key in one Registry, the Authority and the control plane included (§6.4)', () => {
    const everyone = [org.humans.owner, org.humans.reviewer, org.agents.coordinator, org.agents.worker, org.services.registry, org.authorityService, org.controlPlane]
    expect(org.everyone).toEqual(expect.arrayContaining(everyone))
    expect(org.registry.valid).toBe(true)
    for (const p of everyone) {
      const resolved = org.registry.resolve(p.signingKey.keyId)
      expect(resolved.ok, p.actor.id).toBe(true)
      if (resolved.ok) expect([resolved.key.principal, encodeBase64url(resolved.key.publicKey.bytes)]).toEqual([p.actor, encodeBase64url(p.signingKey.pair.publicKey)])
    }
    expect(org.humans.owner.actor).toEqual({ type: 'human', id: 'urn:weft:test:org:human:owner' })
    expect(new Set(everyone.map((p) => encodeBase64url(p.signingKey.pair.publicKey))).size).toBe(everyone.length)
  })

  it('signs each Agent Card with the control plane: capabilities, concurrency, owner (default the first human) and key (§6.1)', () => {
    const { coordinator, worker } = org.agents
    for (const agent of [coordinator, worker]) {
      const verified = verify('agent-card', JSON.stringify(agent.card), org.registry, { validate: schemaCheckForKind })
      expect(verified.ok, agent.actor.id).toBe(true)
      expect(agent.card.signature.keyId).toBe(org.controlPlane.signingKey.keyId)
      expect(agent.card.publicKeys.map((k) => [k.keyId, k.publicKey])).toEqual([[agent.signingKey.keyId, encodeBase64url(agent.signingKey.pair.publicKey)]])
    }
    expect(coordinator.card).toMatchObject({ agentId: coordinator.actor.id, organizationId: org.organizationId, cardVersion: 1, status: 'active', owner: org.humans.owner.actor, maxConcurrency: 1 })
    expect(coordinator.card.capabilities.map((c) => [c.id, c.version])).toEqual([[TEST_CAPABILITY.id, TEST_CAPABILITY.version]])
    expect(worker.card).toMatchObject({ owner: org.humans.reviewer.actor, maxConcurrency: 3 })
    expect(worker.card.capabilities).toEqual([expect.objectContaining({ id: 'example.build', version: '2.0.0', constraints: {} })])
  })

  it('derives the same keys for the same names, and other keys in another Organization', () => {
    const again = createTestOrganization({ humans: ['owner'] })
    const other = createTestOrganization({ organizationId: 'urn:weft:other:org', humans: ['owner'] })
    expect(again.humans.owner.signingKey.pair.publicKey).toEqual(org.humans.owner.signingKey.pair.publicKey)
    expect(other.humans.owner.signingKey.pair.publicKey).not.toEqual(org.humans.owner.signingKey.pair.publicKey)
    expect(other.humans.owner.actor.id).toBe('urn:weft:other:org:human:owner')
  })

  it('gives each Principal the seed of its key, a fresh copy on every read', () => {
    const org = createTestOrganization({ humans: ['ada'], agents: ['builder'] })
    for (const p of org.everyone) expect(encodeBase64url(keyPairFromSeed(p.seed).publicKey)).toBe(encodeBase64url(p.signingKey.pair.publicKey))
    org.humans.ada.seed.fill(0)
    expect(org.humans.ada.seed.some((b) => b !== 0)).toBe(true)
  })

  it('starts an Authority with every card registered and a session per Agent; its clients carry the epochs they learn', async () => {
    const { authority, clientOf } = await org.start({ groupId: GROUP })
    for (const agent of [org.agents.coordinator, org.agents.worker]) {
      expect(authority.state.org.agents.get(agent.actor.id)).toMatchObject({ card: agent.card, sessionEpoch: 1 })
    }
    // A Mission names a Coordinator with an open session (§7.1); the Coordinator enrols the worker,
    // whose Command then carries the Session and Membership Epochs it learned from the receipts.
    await clientOf(org.humans.owner).missionCreate(mission(org.agents.coordinator.actor.id))
    await clientOf(org.agents.coordinator).membershipChange({
      membershipId: `${GROUP}:membership:worker`,
      member: org.agents.worker.actor,
      role: 'worker',
      state: 'active',
      scopes: ['group:read', 'group:write'],
    })
    const posted = await clientOf(org.agents.worker).messagePost({
      messageId: 'urn:weft:testing-test:message:1',
      conversationId: authority.group(GROUP)!.group.mainConversationId,
      content: [{ type: 'text', text: 'Ready.' }],
    })
    expect(posted.events.map((e) => e.kind)).toEqual(['message.posted'])
    expect(clientOf(org.agents.worker)).toBe(clientOf(org.agents.worker))
  })

  it('passes Authority options through and can leave the sessions to the caller', async () => {
    const store = createMemoryStore()
    const now = Date.parse('2026-07-15T00:00:00Z')
    const { authority } = await org.start({ store, clock: { now: () => now }, sessions: false })
    expect(authority.state.org.agents.get(org.agents.worker.actor.id)?.sessionEpoch ?? 0).toBe(0)
    expect(store.organizationEvents().map((e) => Date.parse(e.occurredAt))).toEqual([now, now])
    expect(store.organizationEvents().map((e) => e.kind)).toEqual(['ext.missionweaveprotocol.registry.agent_card_registered', 'ext.missionweaveprotocol.registry.agent_card_registered'])
  })

  it('opens an Authority the caller made, e.g. one with its own store', async () => {
    const authority = createAuthority({ ...org.authorityOptions, store: createMemoryStore({ checkpoints: true }) })
    const clientOf = await org.open(authority, { groupId: GROUP })
    await clientOf(org.humans.owner).missionCreate(mission(org.agents.coordinator.actor.id))
    expect(authority.group(GROUP)?.mission.coordinator.agentId).toBe(org.agents.coordinator.actor.id)
  })

  it('refuses a name given twice, an owner that is not a human, and an Organization ID that is not a URI', () => {
    expect(() => createTestOrganization({ humans: ['ada', 'ada'] })).toThrow(UsageError)
    expect(() => createTestOrganization({ services: ['authority'] })).toThrow(/authority/)
    expect(() => createTestOrganization({ humans: ['ada'], agents: [{ name: 'bot', owner: 'nobody' }] })).toThrow(/nobody/)
    expect(() => createTestOrganization({ organizationId: 'not a uri' })).toThrow(UsageError)
  })
})

// Compile-time: the names given are the keys of the result (checked by `npm run check`).
function typed(): void {
  const org = createTestOrganization({ humans: ['ada'], agents: ['bot'] })
  void org.agents.bot.card
  void org.humans.ada.signingKey
  // @ts-expect-error: no Agent of that name
  void org.agents.nobody
}
void typed
