// The README's WebSocket example of @weft/client (`@weft/client/wire`), run by the release check
// (tools/release-check). Its server is createWireServer of @weft/authority, which is NOT a
// dependency of @weft/client: the example runs in a consumer project where every Weft package is installed.
import assert from 'node:assert/strict'
import { createAuthority } from '@weft/authority'
import { createWireServer } from '@weft/authority/wire'
import { encodeBase64url, keyPairFromSeed, ProtocolError, Registry, sign, type SigningKey } from '@weft/codec'
import type { AgentCard, Event } from '@weft/spec'

// --- Setup: an Authority serving WebSocket on loopback, and a Group where the README's Agent holds a Membership.

const keyOf = (name: string, seed: number): SigningKey => ({ keyId: `urn:example:key:${name}`, pair: keyPairFromSeed(new Uint8Array(32).fill(seed)) })
const owner = { actor: { type: 'human', id: 'urn:example:human:owner' }, signingKey: keyOf('owner', 1) } as const
const coordinator = { actor: { type: 'agent', id: 'urn:example:agent:coordinator' }, signingKey: keyOf('coordinator', 2) } as const
const controlPlane = { actor: { type: 'service', id: 'urn:example:control-plane' }, signingKey: keyOf('control-plane', 3) } as const
const authorityService = { actor: { type: 'service', id: 'urn:example:authority' }, signingKey: keyOf('authority', 4) } as const
// The README's Agent, its key, its Group and the Authority's address.
const actor = { type: 'agent', id: 'urn:example:agent:w1' } as const
const signingKey = keyOf('w1', 5)
const groupId = 'urn:example:group:1'

const principals = [owner, coordinator, controlPlane, authorityService, { actor, signingKey }]
const registry = Registry.fromEvidence({
  organizationId: 'urn:example:org',
  bindings: principals.map((p) => ({ keyId: p.signingKey.keyId, principal: p.actor, algorithm: 'Ed25519', publicKey: encodeBase64url(p.signingKey.pair.publicKey), validFrom: '2026-01-01T00:00:00Z', validityHistory: [] })),
})
if (!(registry instanceof Registry)) throw new Error(`registry evidence refused: ${JSON.stringify(registry)}`)
const authority = createAuthority({ registry, keys: { authority: authorityService.actor, signingKey: authorityService.signingKey }, policy: { controlPlane: [controlPlane.actor.id] } })

// In-process clients of the Organization (createClient is imported by the README block below; imports are hoisted).
const local = authority.connect()
const as = (p: { readonly actor: { readonly type: 'human' | 'agent' | 'service'; readonly id: string }; readonly signingKey: SigningKey }) =>
  createClient({ actor: p.actor, signingKey: p.signingKey, transport: local, groupId })
const [ownerClient, controlPlaneClient] = [as(owner), as(controlPlane)]
const inDays = (days: number): string => new Date(Date.now() + days * 86_400_000).toISOString()
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
    capabilities: [{ id: 'example.release', version: '1.0.0', inputSchema: 'urn:example:schema:in', inputSchemaHash: `sha256:${'a'.repeat(64)}`, outputSchema: 'urn:example:schema:out', outputSchemaHash: `sha256:${'b'.repeat(64)}`, constraints: {}, verifiedEvidence: ['urn:example:evidence:release'] }],
    maxConcurrency: 1,
    issuedAt: '2026-01-01T00:00:00Z',
  } satisfies Omit<AgentCard, 'signature'>, controlPlane.signingKey)

await controlPlaneClient.registryAgentCardRegister({ card: cardOf(coordinator.actor.id, coordinator.signingKey) })
await controlPlaneClient.registryAgentCardRegister({ card: cardOf(actor.id, signingKey) })
await controlPlaneClient.identitySessionOpen({ agentId: coordinator.actor.id })
await ownerClient.missionCreate({
  missionId: 'urn:example:mission:1',
  title: 'Release',
  objective: 'Ship the release.',
  definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
  deadline: inDays(30),
  budget: { currency: 'USD', financialLimit: 100, modelTokenLimit: 100_000, toolCallLimit: 1_000 },
  approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
  coordinatorAgentId: coordinator.actor.id,
  coordinatorLeaseSeconds: 86_400,
})
// The control plane gives the README's Agent a Membership that reads the whole history (§8).
await controlPlaneClient.membershipChange({ membershipId: `${groupId}:membership:w1`, member: actor, role: 'worker', state: 'active', scopes: ['group:read', 'group:write'], visibilityStartSequence: 0 })

// Plain ws:// is for a loopback server only; a real deployment serves wss:// (tls: { cert, key }).
const server = await createWireServer({ authority, registry, sessionIssuer: controlPlane, insecureLoopback: true, port: 0 })
const url = server.url

import { createClient } from '@weft/client'
import { connectWebSocket, TransportUnavailableError } from '@weft/client/wire'

const conn = await connectWebSocket({ url, actor, signingKey })
const agent = createClient({ actor, signingKey, transport: conn.transport, groupId })
agent.epochs.setSession(conn.sessionEpoch())
conn.on('state', () => agent.epochs.setSession(conn.sessionEpoch())) // every reconnect opens a new session
conn.feed.subscribe([{ groupId, afterSequence: 0 }], { onEvent: (event) => agent.observe([event]) })

// --- Checks

// Record what the feed hands to the README's handler (which looks `agent.observe` up on each Event).
const seen: Event[] = []
const observe = agent.observe
agent.observe = (events) => {
  seen.push(...events)
  observe(events)
}
const until = async (what: string, done: () => boolean): Promise<void> => {
  for (const began = Date.now(); !done(); await new Promise((resolve) => setTimeout(resolve, 5))) {
    if (Date.now() - began > 3000) throw new Error(`timed out waiting for ${what}`)
  }
}
const group = () => authority.group(groupId)!
const sequences = (): number[] => seen.map((e) => e.sequence!)
const upTo = (head: number): number[] => Array.from({ length: head }, (_, i) => i + 1)

// The handshake opened a session, and the client carries its epoch.
assert.equal(conn.status, 'open')
assert.equal(conn.sessionEpoch(), authority.state.org.agents.get(actor.id)!.sessionEpoch)
assert.equal(agent.epochs.sessionEpoch, conn.sessionEpoch())
// The feed replays the Group from the start, in order; the client learns its Membership Epoch from it.
await until('the replay', () => seen.length === group().head)
assert.deepEqual(sequences(), upTo(group().head))
const membershipEpoch = group().memberships.get(`${groupId}:membership:w1`)!.membershipEpoch
assert.equal(agent.epochs.membership(groupId), membershipEpoch)

// Commands go over the same connection; their Events also come back on the feed, live.
const conversationId = group().group.mainConversationId
const post = (n: number) => agent.build('message.post', { messageId: `urn:example:message:${n}`, conversationId, content: [{ type: 'text', text: `Message ${n}.` }] })
const first = post(1)
const receipt = await agent.resend(first)
assert.deepEqual([receipt.duplicate, receipt.events.map((e) => e.kind)], [false, ['message.posted']])
await until('the live Event', () => seen.length === group().head)
assert.deepEqual(sequences(), upTo(group().head))

// A drop: the connection comes back by itself with a new handshake, and so a new Session Epoch,
// which the README's 'state' listener hands to the client.
const stale = post(2) // built under the old session, never sent
const before = conn.sessionEpoch()
const states: string[] = []
conn.on('state', (s) => void states.push(s.status))
server.connections.find((c) => c.agentId === actor.id)!.terminate()
await until('the reconnect', () => conn.status === 'open' && conn.sessionEpoch() > before)
assert.deepEqual(states, ['reconnecting', 'open'])
assert.equal(agent.epochs.sessionEpoch, conn.sessionEpoch())
assert.equal(conn.sessionEpoch(), authority.state.org.agents.get(actor.id)!.sessionEpoch)
// The same bytes again answer the original receipt; a Command of the old session is fenced, with the current epoch.
const retried = await agent.resend(first)
assert.deepEqual([retried.duplicate, retried.actionId, retried.events.map((e) => e.eventId)], [true, receipt.actionId, receipt.events.map((e) => e.eventId)])
await assert.rejects(agent.resend(stale), (error) => error instanceof ProtocolError && error.code === 'AUTH_STALE_SESSION' && error.details?.['currentSessionEpoch'] === conn.sessionEpoch())
// New Commands carry the new epoch; the resubscribed feed continues after the last Event it handed out.
await agent.messagePost({ messageId: 'urn:example:message:3', conversationId, content: [{ type: 'text', text: 'Message 3.' }] })
await until('the Event after the reconnect', () => seen.length === group().head)
assert.deepEqual(sequences(), upTo(group().head))

// Closed: a Command is not sent, and the rejection says so (it is not a ProtocolError).
await conn.close()
assert.equal(conn.status, 'closed')
await assert.rejects(agent.messagePost({ messageId: 'urn:example:message:4', conversationId, content: [{ type: 'text', text: 'Message 4.' }] }), (error) => error instanceof TransportUnavailableError && !(error instanceof ProtocolError))
await server.close()
