// The README's example of @weft/worker, run by the release check (tools/release-check): a Worker
// on an in-process Authority takes an offered WorkItem and runs the README's executor to a submission.
import assert from 'node:assert/strict'
import { createClient, sideEffectKey, type Client, type Transport } from '@weft/client'
import { canonicalizeOrThrow, encodeBase64url, keyPairFromSeed, Registry, sha256Tagged, sign, utf8Encode, type SigningKey } from '@weft/codec'
import type { AgentCard, EventPayload, WorkContract } from '@weft/spec'

// --- Setup: an Organization with its Authority, a Mission whose Group has a Coordinator, and the
// builder Agent's card, session and Membership, all through signed Commands. `createAuthority`
// comes from the README block's import below (imports are hoisted).

type Actor = { readonly type: 'human' | 'agent' | 'service'; readonly id: string }
const keyOf = (name: string, seed: number): SigningKey => ({ keyId: `urn:example:key:${name}`, pair: keyPairFromSeed(new Uint8Array(32).fill(seed)) })
const owner = { actor: { type: 'human', id: 'urn:example:human:ada' }, signingKey: keyOf('ada', 1) } as const
const coordinator = { actor: { type: 'agent', id: 'urn:example:agent:coordinator' }, signingKey: keyOf('coordinator', 2) } as const
const controlPlane = { actor: { type: 'service', id: 'urn:example:service:control-plane' }, signingKey: keyOf('control-plane', 7) } as const
const authorityService = { actor: { type: 'service', id: 'urn:example:service:authority' }, signingKey: keyOf('authority', 8) } as const
const builderId = 'urn:example:agent:builder'
const signingKey = keyOf('builder', 3)

const registry = Registry.fromEvidence({
  organizationId: 'urn:example:org',
  bindings: [owner, coordinator, controlPlane, authorityService, { actor: { type: 'agent', id: builderId }, signingKey }].map(({ actor, signingKey: key }) => ({
    keyId: key.keyId,
    principal: actor,
    algorithm: 'Ed25519',
    publicKey: encodeBase64url(key.pair.publicKey),
    validFrom: '2026-01-01T00:00:00Z',
    validityHistory: [],
  })),
})
if (!(registry instanceof Registry)) throw new Error(`registry evidence refused: ${JSON.stringify(registry)}`)

const authority = createAuthority({
  registry,
  keys: { authority: authorityService.actor, signingKey: authorityService.signingKey },
  policy: { controlPlane: [controlPlane.actor.id] },
})

const groupId = 'urn:example:group:checkout'
// Another Group's ID: the Worker would give it three times the share of this one.
const urgentGroup = 'urn:example:group:incident'
const capability = { id: 'example.build', version: '1.0.0' }
const inDays = (days: number): string => new Date(Date.now() + days * 86_400_000).toISOString()

// The people and services that are not the Worker share one link; every client sees every
// receipt, as a subscription would show it, and so learns the epochs it must carry.
const link = authority.connect()
const clients: Client[] = []
const transport: Transport = {
  submit: async (command, bytes) => {
    const receipt = await link.submit(command, bytes)
    for (const c of clients) c.observe(receipt.events)
    return receipt
  },
}
const clientOf = (who: { readonly actor: Actor; readonly signingKey: SigningKey }): Client => {
  const client = createClient({ actor: who.actor, signingKey: who.signingKey, transport, groupId })
  clients.push(client)
  return client
}
const asOwner = clientOf(owner)
const asCoordinator = clientOf(coordinator)
const asControlPlane = clientOf(controlPlane)

// The Organization's Agent Cards (§6.1), issued by the control plane, which then opens each
// Agent's first session (§6.3): Session Epoch 1.
const cardOf = (agentId: string, key: SigningKey): AgentCard =>
  sign('agent-card', {
    agentId,
    organizationId: 'urn:example:org',
    cardVersion: 1,
    displayName: agentId.split(':').pop()!,
    owner: owner.actor,
    status: 'active',
    protocolVersions: ['0.1'],
    endpoints: [{ transport: 'wss', uri: `wss://agents.example.invalid/${agentId.split(':').pop()}` }],
    publicKeys: [{ keyId: key.keyId, algorithm: 'Ed25519', publicKey: encodeBase64url(key.pair.publicKey), validFrom: '2026-01-01T00:00:00Z' }],
    capabilities: [{ ...capability, inputSchema: 'urn:example:schema:in', inputSchemaHash: `sha256:${'a'.repeat(64)}`, outputSchema: 'urn:example:schema:out', outputSchemaHash: `sha256:${'b'.repeat(64)}`, constraints: {}, verifiedEvidence: ['urn:example:evidence:capability'] }],
    maxConcurrency: 2,
    issuedAt: '2026-01-01T00:00:00Z',
  } satisfies Omit<AgentCard, 'signature'>, controlPlane.signingKey)
for (const [agentId, key] of [[coordinator.actor.id, coordinator.signingKey], [builderId, signingKey]] as const) {
  await asControlPlane.registryAgentCardRegister({ card: cardOf(agentId, key) })
  await asControlPlane.identitySessionOpen({ agentId })
}

await asOwner.missionCreate({
  missionId: 'urn:example:mission:checkout',
  title: 'Checkout',
  objective: 'Resilient payment retries.',
  definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
  deadline: inDays(30),
  budget: { currency: 'USD', financialLimit: 100, modelTokenLimit: 100_000, toolCallLimit: 1_000 },
  approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
  coordinatorAgentId: coordinator.actor.id,
  coordinatorLeaseSeconds: 86_400,
})
// visibilityStartSequence 0: the Worker folds the Group from its first Event (§8).
await asCoordinator.membershipChange({ membershipId: `${groupId}:membership:builder`, member: { type: 'agent', id: builderId }, role: 'worker', state: 'active', scopes: ['group:read'], visibilityStartSequence: 0 })

// What the executor's side effect calls: a build service that deduplicates by idempotency key.
const patch = '--- a/pay.ts\n+++ b/pay.ts\n@@ -1 +1 @@\n-retry()\n+retry({ backoff: true })\n'
const builds: { readonly idempotencyKey: string }[] = []
const buildService = {
  run(request: { readonly idempotencyKey: string }): { readonly id: string; readonly patch: string } {
    builds.push(request)
    return { id: `build-${builds.length}`, patch }
  },
}

// --- The README block

import { createAuthority, createDelivery, deliveryFeed } from '@weft/authority'
import { createWorker } from '@weft/worker'

const agent = { type: 'agent', id: 'urn:example:agent:builder' } as const
const worker = createWorker({
  actor: agent,
  signingKey, // bound to the agent in the Registry
  sessionEpoch: 1, // opened by the Organization (identity.session_open)
  transport: authority.connect(),
  feed: deliveryFeed(createDelivery(authority), agent),
  slots: 2,
  weights: (groupId) => (groupId === urgentGroup ? 3 : 1),
  executor: async (_item, ctx) => {
    const done = await ctx.sideEffect('build', (key) => buildService.run({ idempotencyKey: key }))
    await ctx.checkpoint({ built: done.id }, { phase: 'built', nextStep: 'test' })
    await ctx.safePoint()
    const artifact = await ctx.publishArtifact(done.patch, { mediaType: 'text/x-diff' })
    const evidence = ctx.evidence({ type: 'deterministic_test', criterionIds: ['tests-pass'], method: 'npm test', result: 'passed', artifactHashes: [artifact.contentHash] })
    return { artifacts: [artifact], evidence: [evidence] }
  },
})
worker.join([groupId])
worker.start() // or drive it: await worker.tick(); await worker.idle()

// --- Work for it: the Coordinator authorizes a proposal and offers the WorkItem to the builder.

const contract: WorkContract = {
  contractVersion: 1,
  goal: 'Retry failed payments with back-off.',
  requiredDeliverables: [{ deliverableId: 'patch', description: 'The change.', mediaType: 'text/x-diff', schema: 'urn:example:schema:patch' }],
  acceptanceCriteria: [{ criterionId: 'tests-pass', description: 'The tests pass.', evidenceRequired: ['deterministic_test'] }],
  inputArtifacts: [],
  dependencyWorkItemIds: [],
  allowedResources: [{ resource: 'urn:example:resource:repo', operations: ['read', 'write'] }],
  requiredCapabilities: [capability],
  deadline: inDays(7),
  requestedUrgency: 'normal',
  businessImpact: 'Fewer lost payments.',
  retryPolicy: { maxAttempts: 3, backoff: 'exponential', maxDelay: 'PT5M', retryableFailures: ['TRANSIENT'] },
  budget: { currency: 'USD', financialLimit: 10, modelTokenLimit: 10_000, toolCallLimit: 50 },
  sideEffectRisk: 'reversible',
  executionApproval: 'not_required',
}
const workItemId = 'urn:example:work:retries'
await asCoordinator.workPropose({ proposalId: 'urn:example:proposal:retries', contract })
await asCoordinator.workAuthorize({ workItemId, contract, proposalId: 'urn:example:proposal:retries' })
await asCoordinator.workOffer({
  workItemId,
  candidateAgentIds: [builderId],
  selectionBasis: { requiredCapabilities: [capability], verifiedMatches: [capability], authorizationEligible: true, availabilityEstimate: inDays(0), expectedCost: 1, reliabilityEvidence: [], policyRulesApplied: ['example.first-fit'] },
  offerExpiresInSeconds: 600,
})

// The running Worker accepts, starts and submits by itself; wait for that (at most 8 s).
const record = () => authority.group(groupId)!.workItems.get(workItemId)!
for (const until = Date.now() + 8000; record().doc.state !== 'submitted' && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 10))
await worker.stop()

// --- Checks

const events = authority.events(groupId).filter((e) => (e.payload as { workItemId?: string }).workItemId === workItemId)
assert.equal(record().doc.state, 'submitted')
assert.deepEqual(events.map((e) => e.kind), ['work.offer.created', 'work.offer.accepted', 'work.started', 'work.checkpointed', 'work.started', 'work.submitted'])
assert.deepEqual(worker.decisions().map((d) => d.decision), ['accepted'])
assert.deepEqual(worker.runs().map((r) => [r.workItemId, r.outcome]), [[workItemId, 'submitted']])
// The Worker ran under the Session Epoch the control plane opened, and signed with `signingKey`.
assert.equal(authority.state.org.agents.get(builderId)?.sessionEpoch, 1)
assert.equal((events[1]!.payload as EventPayload<'work.offer.accepted'>).sessionEpoch, 1)

// The side effect ran exactly once, with the §16 key of this WorkItem, Ownership Epoch and operation.
assert.deepEqual(builds, [{ idempotencyKey: sideEffectKey({ missionId: 'urn:example:mission:checkout', workItemId, ownershipEpoch: 1, operationId: 'build' }) }])

// The checkpoint released the first lease and the work went on under a new one (§11.3); its hash
// identifies the stored state (the executor's state with the attempt counter).
const [first, checkpointed, second, submitted] = events.slice(2).map((e) => e.payload) as [EventPayload<'work.started'>, EventPayload<'work.checkpointed'>, EventPayload<'work.started'>, EventPayload<'work.submitted'>]
assert.equal(checkpointed.executionLeaseId, first.executionLease.leaseId)
assert.notEqual(second.executionLease.leaseId, first.executionLease.leaseId)
assert.deepEqual([checkpointed.checkpoint.phase, checkpointed.checkpoint.nextStep], ['built', 'test'])
assert.equal(checkpointed.checkpoint.stateArtifactHash, sha256Tagged(canonicalizeOrThrow({ attempt: 1, state: { built: 'build-1' } })))

// The submission, under the second lease, carries the published patch and the Evidence for the criterion.
const artifact = authority.group(groupId)!.artifacts.get(submitted.artifactIds[0]!)?.manifest
assert.equal(submitted.executionLeaseId, second.executionLease.leaseId)
assert.equal(artifact?.mediaType, 'text/x-diff')
assert.equal(artifact?.contentHash, sha256Tagged(utf8Encode(patch)))
assert.deepEqual(submitted.artifactHashes, [artifact?.contentHash])
const [evidence] = submitted.evidence
assert.deepEqual([submitted.evidence.length, evidence?.type, evidence?.criterionIds, evidence?.result, evidence?.artifactHashes], [1, 'deterministic_test', ['tests-pass'], 'passed', [artifact?.contentHash]])
assert.deepEqual([evidence?.generatedBy, evidence?.signature.keyId], [agent, signingKey.keyId])
