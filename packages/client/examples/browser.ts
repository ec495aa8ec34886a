// The README's "Browsers" examples of @weft/client: an Agent whose key is a non-extractable
// WebCrypto key (as a web page holds it), and a person's pre-authenticated console session, both
// over `@weft/client/wire`. The same code runs in a page bundled with the `browser` condition (the
// page's WebSocket instead of `ws`); here it runs in Node, whose WebCrypto has Ed25519 too. Run by
// the release check (tools/release-check). Its server is createWireServer of @weft/authority, which
// is NOT a dependency of @weft/client: the example runs in a consumer project where every Weft
// package is installed.
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { createTestOrganization } from '@weft/authority/testing'
import { createWireServer } from '@weft/authority/wire'
import { ProtocolError } from '@weft/codec'

// --- Setup: an Authority serving WebSocket on loopback, and a Group where the README's Agent holds a Membership.

const org = createTestOrganization({ organizationId: 'urn:example:org', humans: ['owner'], agents: ['coordinator', 'w1'] })
const groupId = 'urn:example:group:1'
const { authority, clientOf } = await org.start({ groupId })
const { registry, controlPlane } = org
const owner = org.humans.owner
// The README's Agent and its key.
const { actor, signingKey } = org.agents.w1
await clientOf(owner).missionCreate({
  missionId: 'urn:example:mission:1',
  title: 'Release',
  objective: 'Ship the release.',
  definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
  deadline: new Date(Date.now() + 30 * 86_400_000).toISOString(),
  budget: { currency: 'USD', financialLimit: 100, modelTokenLimit: 100_000, toolCallLimit: 1_000 },
  approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
  coordinatorAgentId: org.agents.coordinator.actor.id,
  coordinatorLeaseSeconds: 86_400,
})
// The control plane gives the README's Agent a Membership that reads the whole history (§8).
await clientOf(controlPlane).membershipChange({ membershipId: `${groupId}:membership:w1`, member: actor, role: 'worker', state: 'active', scopes: ['group:read', 'group:write'], visibilityStartSequence: 0 })

// The seeds (in a page: from the person's key file, wiped once imported).
const seed = org.agents.w1.seed
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
const ownerSeed = owner.seed
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
