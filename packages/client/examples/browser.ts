// The README's "Browsers" examples of @weft/client: an Agent whose key is a non-extractable
// WebCrypto key (as a web page holds it), and a person's pre-authenticated console session, both
// over `@weft/client/wire`. The same code runs in a page bundled with the `browser` condition (the
// page's WebSocket instead of `ws`); here it runs in Node, whose WebCrypto has Ed25519 too. Run by
// the release check (tools/release-check). Its server is createWireServer of @weft/authority, which
// is NOT a dependency of @weft/client: the example runs in a consumer project where every Weft
// package is installed.
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { createAuthority } from '@weft/authority'
import { createWireServer } from '@weft/authority/wire'
import { encodeBase64url, keyPairFromSeed, ProtocolError, Registry, sign, type SigningKey } from '@weft/codec'
import type { AgentCard } from '@weft/spec'

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

// The seed of the README's Agent (in a page: from the person's key file, wiped once imported).
const seed = new Uint8Array(32).fill(5)
const publicKey = signingKey.pair.publicKey
const keyId = signingKey.keyId
const conversationId = authority.group(groupId)!.group.mainConversationId

// A console session: the server's gate admits an upgrade offering 'weft-console.v1' and a ticket it issued at sign-in.
const tickets = new Map<string, string>() // ticket -> session ID
const server = await createWireServer({
  authority,
  registry,
  sessionIssuer: controlPlane,
  insecureLoopback: true,
  port: 0,
  humanSessions: {
    path: '/console/ws',
    protocol: 'weft-console.v1',
    admit: (request: IncomingMessage) => {
      const offered = String(request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim())
      const sessionId = tickets.get(offered[1] ?? '')
      if (sessionId === undefined) return { ok: false, status: 401, error: new ProtocolError('AUTH_REQUIRED', 'Sign in first.') }
      return { ok: true, principal: owner.actor, keyId: owner.signingKey.keyId, sessionId, expiresAtMs: Date.now() + 3_600_000 }
    },
  },
})
const url = server.url
const consoleUrl = `${server.url}/console/ws`
let issued = 0
/** What the console's sign-in hands the page: a fresh ticket per socket. */
const freshTicket = async (): Promise<string> => {
  const ticket = `ticket-${++issued}`
  tickets.set(ticket, `urn:example:console-session:${issued}`)
  return ticket
}
const ownerId = owner.actor.id
const ownerSeed = new Uint8Array(32).fill(1)
const ownerPublicKey = owner.signingKey.pair.publicKey
const ownerKeyId = owner.signingKey.keyId

import { createClient } from '@weft/client'
import { connectWebSocket } from '@weft/client/wire'
import { webCryptoKeyPair } from '@weft/codec'

// The private key is imported non-extractable: script can sign with it, never read it back.
const pair = await webCryptoKeyPair(seed, publicKey)
const conn = await connectWebSocket({ url, actor, signingKey: { keyId, pair } }) // HELLO signed by WebCrypto (§6.3)
const agent = createClient({ actor, signingKey: { keyId, pair }, transport: conn.transport, groupId })
agent.epochs.set({ session: conn.sessionEpoch(), groupId, membership: 1 })
const receipt = await agent.messagePost({ messageId: 'urn:example:message:1', conversationId, content: [{ type: 'text', text: 'Signed in WebCrypto.' }] })

const person = { type: 'human', id: ownerId } as const
const session = await connectWebSocket({ url: consoleUrl, actor: person, session: { protocols: async () => ['weft-console.v1', await freshTicket()] } })
const human = createClient({ actor: person, signingKey: { keyId: ownerKeyId, pair: await webCryptoKeyPair(ownerSeed, ownerPublicKey) }, transport: session.transport, groupId })
human.epochs.setMembership(groupId, 1) // a human's Commands carry a Membership Epoch and no Session Epoch (§15.1)
const answer = await human.messagePost({ messageId: 'urn:example:message:2', conversationId, content: [{ type: 'text', text: 'From the console.' }] })

// --- Checks

// The Agent's handshake opened a new session; its Command, signed asynchronously, was accepted.
assert.equal(conn.sessionEpoch(), authority.state.org.agents.get(actor.id)!.sessionEpoch)
assert.deepEqual([receipt.duplicate, receipt.events.map((e) => e.kind)], [false, ['message.posted']])
assert.throws(() => agent.build('message.post', { messageId: 'urn:example:message:9', conversationId, content: [{ type: 'text', text: 'x' }] }), /buildCommandAsync/)
const built = await agent.buildAsync('message.post', { messageId: 'urn:example:message:9', conversationId, content: [{ type: 'text', text: 'x' }] })
assert.equal(built.command.signature.keyId, keyId)
// The person's session opened without HELLO and without a Session Epoch; their Command carries none.
assert.equal(session.sessionEpoch(), 0)
assert.deepEqual([answer.actor, answer.events.map((e) => e.kind)], [person, ['message.posted']])
const logged = authority.history(groupId, 0, Number.MAX_SAFE_INTEGER).events.find((e) => e.eventId === answer.events[0]!.eventId)!
assert.equal(logged.cause.id, answer.actionId)
// A ticket the server does not know is refused (in Node the upgrade's answer is read: AUTH_REQUIRED).
await assert.rejects(connectWebSocket({ url: consoleUrl, actor: person, session: { protocols: () => ['weft-console.v1', 'forged'] }, reconnect: false }), (error) => error instanceof ProtocolError && error.code === 'AUTH_REQUIRED')
await conn.close()
await session.close()
await server.close()
