// The README's example of @weft/store-sqlite, run by the release check (tools/release-check).
// It writes authority.db and worker.db (with their WAL files) into the working directory. Its setup
// signs Commands with @weft/client, not a dependency of this package: the check installs every Weft package.
import assert from 'node:assert/strict'
import Database from 'better-sqlite3'
import { createClient } from '@weft/client'
import { sha256Tagged, sign, type SigningKey } from '@weft/codec'
import type { AgentCard } from '@weft/spec'

// --- Setup: an earlier run of the Authority left a history in authority.db. The control plane
// registered a Coordinator Agent and opened its session, and a human created a Mission with its Group.

const keyOf = (name: string, seed: number): SigningKey => ({ keyId: `urn:example:key:${name}`, pair: keyPairFromSeed(new Uint8Array(32).fill(seed)) })
const owner = { actor: { type: 'human', id: 'urn:example:human:owner' }, signingKey: keyOf('owner', 1) } as const
const coordinator = { actor: { type: 'agent', id: 'urn:example:agent:coordinator' }, signingKey: keyOf('coordinator', 2) } as const
const controlPlane = { actor: { type: 'service', id: 'urn:example:control-plane' }, signingKey: keyOf('control-plane', 3) } as const
// The Authority of the README block: the same Principal and key (seed 8).
const earlierAuthority = { actor: { type: 'service', id: 'urn:example:authority' }, signingKey: keyOf('authority', 8) } as const
const groupId = 'urn:example:group:1'
{
  const principals = [owner, coordinator, controlPlane, earlierAuthority]
  const earlierRegistry = Registry.fromEvidence({
    organizationId: 'urn:example:org',
    bindings: principals.map((p) => ({ keyId: p.signingKey.keyId, principal: p.actor, algorithm: 'Ed25519', publicKey: encodeBase64url(p.signingKey.pair.publicKey), validFrom: '2026-01-01T00:00:00Z', validityHistory: [] })),
  }) as Registry
  const earlierStore = openSqliteAuthorityStore('authority.db')
  const earlier = createAuthority({ registry: earlierRegistry, keys: { authority: earlierAuthority.actor, signingKey: earlierAuthority.signingKey }, store: earlierStore, policy: { controlPlane: [controlPlane.actor.id] } })
  const as = (p: (typeof principals)[number]) => createClient({ actor: p.actor, signingKey: p.signingKey, transport: earlier.connect(), groupId })
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
  await as(controlPlane).registryAgentCardRegister({ card })
  await as(controlPlane).identitySessionOpen({ agentId: coordinator.actor.id })
  await as(owner).missionCreate({
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
  earlierStore.close()
}

// Keep what the README's lines print, to check it below.
const printed: unknown[][] = []
const print = console.log
console.log = (...values: unknown[]) => void printed.push(values)

import { createAuthority, createDelivery } from '@weft/authority'
import { encodeBase64url, keyPairFromSeed, Registry, utf8Encode } from '@weft/codec'
import { openSqliteAuthorityStore, openSqliteWorkerStore } from '@weft/store-sqlite'

const authority = { type: 'service', id: 'urn:example:authority' } as const
const signingKey = { keyId: 'urn:example:key:authority', pair: keyPairFromSeed(new Uint8Array(32).fill(8)) }
const registry = Registry.fromEvidence({
  organizationId: 'urn:example:org',
  bindings: [{ keyId: signingKey.keyId, principal: authority, algorithm: 'Ed25519', publicKey: encodeBase64url(signingKey.pair.publicKey), validFrom: '2026-01-01T00:00:00Z', validityHistory: [] }],
}) as Registry

const store = openSqliteAuthorityStore('authority.db')
const group = createAuthority({ registry, keys: { authority, signingKey }, store }) // state = fold(stored log), or its checkpoint + the rest
const delivery = createDelivery(group, { cursorStore: store.cursorStore }) // ACK Cursors survive restarts
const contentHash = await store.blobStore.put(utf8Encode('patch bytes'), 'text/x-diff')
console.log(contentHash, (await store.blobStore.get(contentHash)).byteLength) // re-hashed on the way out
if (group.organizationEvents().length + group.state.groups.size > 0) group.checkpoint() // the next start skips the fold
delivery.close()
store.close()

const worker = openSqliteWorkerStore('worker.db')
const key = 'urn:example:side-effect:1'
if (worker.sideEffect(key) === undefined) worker.recordSideEffect(key, { ticket: 42 }) // never twice (§16)
worker.close()

console.log = print

// --- Checks

// What the README printed: the content hash of the bytes, and their length read back.
assert.deepEqual(printed, [[sha256Tagged(utf8Encode('patch bytes')), 11]])

// The README's Authority came back to the state the earlier run left: the Agent's session and the Group.
assert.equal(group.state.org.agents.get(coordinator.actor.id)?.sessionEpoch, 1)
assert.equal(group.state.groups.get(groupId)?.mission.missionId, 'urn:example:mission:1')

// It saved a state checkpoint at the end of the log: the next start resumes from it (an unusable
// checkpoint would be reported through onWarning and the log folded instead) to the same state.
const reopened = openSqliteAuthorityStore('authority.db')
const warnings: unknown[] = []
const next = createAuthority({ registry, keys: { authority, signingKey }, store: reopened, onWarning: (warning) => void warnings.push(warning) })
assert.deepEqual(warnings, [])
const history = next.organizationEvents().length + next.events(groupId).length
assert.equal(reopened.checkpoint()?.manifest.position, history)
assert.deepEqual([...reopened.eventsAfter(history)], [])
assert.deepEqual(next.state, group.state)
assert.deepEqual(next.state, next.replayState())

// ACK Cursors survive a restart.
const head = next.group(groupId)!.head
const restarted = createDelivery(next, { cursorStore: reopened.cursorStore })
assert.equal(restarted.cursor(owner.actor, groupId), 0)
restarted.ack(owner.actor, [{ groupId, sequence: head }])
restarted.close()
reopened.close()
const third = openSqliteAuthorityStore('authority.db')
const afterRestart = createAuthority({ registry, keys: { authority, signingKey }, store: third })
assert.equal(createDelivery(afterRestart, { cursorStore: third.cursorStore }).cursor(owner.actor, groupId), head)

// Blobs are re-hashed on the way out: bytes changed in the file are refused, and a put repairs them.
third.close()
const file = new Database('authority.db')
file.prepare('UPDATE blobs SET bytes = ? WHERE hash = ?').run(Buffer.from('patch bytez'), contentHash)
file.close()
const fourth = openSqliteAuthorityStore('authority.db')
await assert.rejects(fourth.blobStore.get(contentHash), { code: 'PROTOCOL_VIOLATION' })
assert.equal(await fourth.blobStore.put(utf8Encode('patch bytes')), contentHash)
assert.deepEqual(await fourth.blobStore.get(contentHash), utf8Encode('patch bytes'))
fourth.close()

// The Worker store kept the side effect's result, and refuses to record it twice.
const workerAgain = openSqliteWorkerStore('worker.db')
assert.deepEqual(workerAgain.sideEffect(key), { result: { ticket: 42 } })
assert.throws(() => workerAgain.recordSideEffect(key, { ticket: 43 }), /already recorded/)
assert.deepEqual(workerAgain.sideEffect(key), { result: { ticket: 42 } })
workerAgain.close()
