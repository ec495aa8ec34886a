// The README's `@weft/authority/testing` example, run by the release check (tools/release-check):
// a test Organization in one call, started, and a Mission created by its human.
import assert from 'node:assert/strict'
import type { CommandPayload } from '@weft/spec'

// Keep what the README's lines print, so the checks below can hold them to their comments.
const printed: unknown[][] = []
const print = console.log.bind(console)
console.log = (...values: unknown[]) => {
  printed.push(values)
  print(...values)
}

// --- Setup: a Mission without its Coordinator, which the block fills in.

const mission: Omit<CommandPayload<'mission.create'>, 'coordinatorAgentId'> = {
  missionId: 'urn:example:mission:1',
  title: 'Release',
  objective: 'Ship the release.',
  definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
  deadline: new Date(Date.now() + 30 * 86_400_000).toISOString(),
  budget: { currency: 'USD', financialLimit: 100 },
  approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
  coordinatorLeaseSeconds: 86_400,
}

// --- The README's block

import { createTestOrganization } from '@weft/authority/testing'

const org = createTestOrganization({
  humans: ['owner'],
  agents: ['coordinator', { name: 'builder', capabilities: [{ id: 'example.build', version: '1.0.0' }], maxConcurrency: 2 }],
})
const { authority, clientOf } = await org.start({ groupId: 'urn:example:group:1' })

// The cards are registered and every Agent has a session, so the owner may name the coordinator at once (§7.1).
await clientOf(org.humans.owner).missionCreate({ ...mission, coordinatorAgentId: org.agents.coordinator.actor.id })
console.log(authority.group('urn:example:group:1')?.mission.state) // active
console.log(authority.state.org.agents.get(org.agents.builder.actor.id)?.sessionEpoch) // 1

// --- What the block claims

console.log = print
assert.deepEqual(printed, [['active'], [1]])
// The cards the Authority registered are the ones the control plane signed for the Organization (§6.1).
const registered = authority.state.org.agents.get(org.agents.builder.actor.id)?.card
assert.deepEqual(registered, org.agents.builder.card)
assert.equal(registered?.signature.keyId, org.controlPlane.signingKey.keyId)
assert.deepEqual(registered?.capabilities.map((c) => `${c.id}@${c.version}`), ['example.build@1.0.0'])
assert.equal(registered?.maxConcurrency, 2)
assert.deepEqual(registered?.owner, org.humans.owner.actor)
// The coordinator's client learned its Session Epoch from the receipts and acts as Coordinator right away.
const coordinator = clientOf(org.agents.coordinator)
await coordinator.membershipChange({ membershipId: 'urn:example:group:1:membership:builder', member: org.agents.builder.actor, role: 'worker', state: 'active', scopes: ['group:read'] })
assert.equal(authority.group('urn:example:group:1')?.memberships.size, 3)
