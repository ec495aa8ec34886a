// The README's example of @weft/store-postgres, run by the release check (tools/release-check).
// It needs a PostgreSQL server (13 or later) at WEFT_PG_URL, and works in a schema of its own, dropped at the end.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { createClient, type Transport } from '@weft/client'
import { encodeBase64url, keyPairFromSeed, Registry, sha256Tagged, sign, utf8Encode, type SigningKey } from '@weft/codec'
import type { AgentCard, Event } from '@weft/spec'

// --- Setup: an Organization (Registry, policy, the Authority's key) and a first signed Command.

const pgUrl = process.env['WEFT_PG_URL']
if (pgUrl === undefined) throw new Error('set WEFT_PG_URL to a PostgreSQL server, e.g. postgres://postgres@127.0.0.1:5432/weft')
const url = pgUrl
const schema = `weft_example_${randomBytes(6).toString('hex')}`

const keyOf = (name: string, seed: number): SigningKey => ({ keyId: `urn:example:key:${name}`, pair: keyPairFromSeed(new Uint8Array(32).fill(seed)) })
const owner = { actor: { type: 'human', id: 'urn:example:human:owner' }, signingKey: keyOf('owner', 1) } as const
const coordinator = { actor: { type: 'agent', id: 'urn:example:agent:coordinator' }, signingKey: keyOf('coordinator', 2) } as const
const controlPlane = { actor: { type: 'service', id: 'urn:example:control-plane' }, signingKey: keyOf('control-plane', 3) } as const
const authorityId = 'urn:example:authority'
const signingKey = keyOf('authority', 8)
const principals = [owner, coordinator, controlPlane, { actor: { type: 'service', id: authorityId }, signingKey }] as const
const registry = Registry.fromEvidence({
  organizationId: 'urn:example:org',
  bindings: principals.map((p) => ({ keyId: p.signingKey.keyId, principal: p.actor, algorithm: 'Ed25519', publicKey: encodeBase64url(p.signingKey.pair.publicKey), validFrom: '2026-01-01T00:00:00Z', validityHistory: [] })),
})
if (!(registry instanceof Registry)) throw new Error(`registry evidence refused: ${JSON.stringify(registry)}`)
// The control plane registers Agent Cards and opens sessions (§6.1, §6.3).
const policy = { controlPlane: [controlPlane.actor.id] }
const groupId = 'urn:example:group:1'

const card = sign('agent-card', {
  agentId: coordinator.actor.id,
  organizationId: 'urn:example:org',
  cardVersion: 1,
  displayName: 'Coordinator',
  owner: owner.actor,
  status: 'active',
  protocolVersions: ['0.1'],
  endpoints: [{ transport: 'wss', uri: 'wss://agents.example.invalid/coordinator' }],
  publicKeys: [{ keyId: coordinator.signingKey.keyId, algorithm: 'Ed25519', publicKey: encodeBase64url(coordinator.signingKey.pair.publicKey), validFrom: '2026-01-01T00:00:00Z' }],
  capabilities: [{ id: 'example.release', version: '1.0.0', inputSchema: 'urn:example:schema:in', inputSchemaHash: `sha256:${'a'.repeat(64)}`, outputSchema: 'urn:example:schema:out', outputSchemaHash: `sha256:${'b'.repeat(64)}`, constraints: {}, verifiedEvidence: ['urn:example:evidence:release'] }],
  maxConcurrency: 1,
  issuedAt: '2026-01-01T00:00:00Z',
} satisfies Omit<AgentCard, 'signature'>, controlPlane.signingKey)
// The exact text of a signed Command: the control plane registers the Coordinator's Agent Card.
const unsent: Transport = { submit: () => Promise.reject(new Error('built only')) }
const signedCommandText = createClient({ ...controlPlane, transport: unsent }).build('ext.missionweaveprotocol.registry.agent_card_register', { card }).bytes
const artifactBytes = utf8Encode('patch bytes')

// Keep what the README's log line reports, to check it below.
const warned: unknown[][] = []
const warn = console.warn
console.warn = (...values: unknown[]) => void warned.push(values)

import { createDelivery } from '@weft/authority'
import { createPostgresAuthority } from '@weft/store-postgres'

const authority = await createPostgresAuthority({
  url, // postgres://…, or pool: a pg.Pool of yours
  schema, // tables are created here when absent (default 'weft')
  registry, policy, // as for createAuthority
  keys: { authority: { type: 'service', id: authorityId }, signingKey },
  log: (entry) => console.warn(entry.msg, entry.detail), // background trouble: lost listener, failed catch-up
})
const receipt = await authority.submit(signedCommandText) // or createClient({ transport: authority.connect() })
// Subscribers of this process receive every process's Events, live; ACKs are stored in the database.
const delivery = createDelivery(authority, { cursorStore: authority.cursorStore, controlPlane: policy.controlPlane })
const hash = await authority.blobStore.put(artifactBytes) // Artifact bytes, shared by every process
await authority.close() // waits for Commands under way, writes pending ACK Cursors

// The log as a store: what it reads of the Command accepted above (its signer and Action ID).
const actor = controlPlane.actor
const actionId = receipt.actionId
const logged: string[] = []
const log = console.log
console.log = (...values: unknown[]) => void logged.push(values.join(' '))

import { createPostgresAuthorityStore } from '@weft/store-postgres'

const store = await createPostgresAuthorityStore({ url, schema }) // or pool: a pg.Pool of yours
for await (const event of store.allEvents()) console.log(event.kind, event.groupId ?? '-', event.sequence ?? '-')
const online = await store.groupEvents(groupId, 0, 100) // after the Group's latest compaction
const stored = await store.receipt(`${actor.type}:${actor.id}`, actionId) // undefined when none
await store.close() // ends the pool it opened; a given pool is left open

console.log = log

// --- Checks

const until = async (what: string, done: () => boolean): Promise<void> => {
  for (const began = Date.now(); !done(); await new Promise((resolve) => setTimeout(resolve, 5))) {
    if (Date.now() - began > 3000) throw new Error(`timed out waiting for ${what}`)
  }
}
// Two more Authority processes on the same database and schema (two instances in this one process).
const open = () => createPostgresAuthority({ url, schema, registry, policy, keys: { authority: { type: 'service', id: authorityId }, signingKey }, log: (entry) => console.warn(entry.msg, entry.detail) })
const [a, b] = [await open(), await open()]
try {
  // The store read the one Organization Event and its receipt; the Group has no Events yet.
  assert.deepEqual(logged, ['ext.missionweaveprotocol.registry.agent_card_registered - -'])
  assert.deepEqual([online, stored?.actionId, stored?.events.map((e) => e.eventId)], [[], actionId, receipt.events.map((e) => e.eventId)])

  // The Command was accepted and committed: a later process folds it from the database, and a retry
  // of it on any process answers the original receipt.
  assert.deepEqual([receipt.duplicate, receipt.events.map((e) => e.kind)], [false, ['ext.missionweaveprotocol.registry.agent_card_registered']])
  assert.equal(a.state.org.agents.get(coordinator.actor.id)?.card.cardVersion, 1)
  const retried = await b.submit(signedCommandText)
  assert.deepEqual([retried.duplicate, retried.actionId, retried.events.map((e) => e.eventId)], [true, receipt.actionId, receipt.events.map((e) => e.eventId)])

  // The Artifact bytes are content-addressed, and every process reads them.
  assert.equal(hash, sha256Tagged(artifactBytes))
  assert.deepEqual(await b.blobStore.get(hash), artifactBytes)

  // Process b accepts a Mission; process a folds it as soon as it is committed.
  const as = (p: (typeof principals)[number]) => createClient({ actor: p.actor, signingKey: p.signingKey, transport: b.connect(), groupId })
  const ownerClient = as(owner)
  await as(controlPlane).identitySessionOpen({ agentId: coordinator.actor.id })
  await ownerClient.missionCreate({
    missionId: 'urn:example:mission:1',
    title: 'Release',
    objective: 'Ship the release.',
    definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
    deadline: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    budget: { currency: 'USD', financialLimit: 100, modelTokenLimit: 100_000, toolCallLimit: 1_000 },
    approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    coordinatorAgentId: coordinator.actor.id,
    coordinatorLeaseSeconds: 86_400,
  })
  await until('process a to fold the Mission', () => a.group(groupId) !== undefined)

  // A subscriber of process a (the control plane reads every Group) gets b's next Events live.
  const received: Event[] = []
  const fromA = createDelivery(a, { cursorStore: a.cursorStore, controlPlane: policy.controlPlane })
  fromA.subscribe(controlPlane.actor, [{ groupId, afterSequence: 0 }], { onEvent: (event) => void received.push(event) })
  const conversationId = b.group(groupId)!.group.mainConversationId
  const posted = await ownerClient.messagePost({ messageId: 'urn:example:message:1', conversationId, content: [{ type: 'text', text: 'Hello.' }] })
  const head = posted.events.at(-1)!.sequence!
  await until('the live Event on process a', () => received.length === head)
  assert.deepEqual(received.map((e) => e.eventId), b.events(groupId).map((e) => e.eventId))

  // The ACK goes to the database: close writes it, and process b reads it on its next catch-up.
  fromA.ack(controlPlane.actor, [{ groupId, sequence: head }])
  fromA.close()
  await a.close()
  await b.catchUp()
  assert.equal(b.cursorStore.get(controlPlane.actor, groupId), head)

  // close waits for a Command under way: it commits, then the pool ends.
  const underWay = b.submit(ownerClient.build('message.post', { messageId: 'urn:example:message:2', conversationId, content: [{ type: 'text', text: 'Bye.' }] }).bytes)
  await b.close()
  assert.deepEqual((await underWay).events.map((e) => e.kind), ['message.posted'])
  const last = await open()
  assert.equal(last.group(groupId)?.messages.has('urn:example:message:2'), true)
  await last.close()

  // No background trouble was logged.
  delivery.close()
  console.warn = warn
  assert.deepEqual(warned, [])
} finally {
  console.warn = warn
  await Promise.all([a.close(), b.close()])
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
}
