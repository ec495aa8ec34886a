// The README's examples of @weft/authority that need an Organization at work (capability tokens,
// delivery, compaction and restore, state checkpoints, the WebSocket binding), run by the release
// check (tools/release-check).
import assert from 'node:assert/strict'
import { createAuthority, createAuthorizationService, createDelivery, verifySnapshotImage, buildGroupSnapshot, signGroupSnapshot, type Authority, type SubscriptionHandlers } from '@weft/authority'
import { createTestOrganization, type ClientOf } from '@weft/authority/testing'
import { ProtocolError } from '@weft/codec'
import type { Event } from '@weft/spec'

// --- Setup: an Organization, its Authority, and a WorkItem in progress, all through signed Commands.

// Keys, the Registry binding them, the Agent Cards the control plane signs, and what createAuthority
// needs of the Organization: one call (see "Test Organizations" in the README).
const capability = { id: 'example.implementation', version: '1.0.0' }
const org = createTestOrganization({
  organizationId: 'urn:example:org',
  humans: ['owner'],
  agents: ['coordinator', { name: 'worker', capabilities: [capability], maxConcurrency: 2 }, 'outsider'],
})
const { humans: { owner }, agents: { coordinator, worker: workerAgent, outsider }, controlPlane, authorityService, registry } = org
// The control plane registers Agent Cards and opens sessions (§6.1, §6.3).
const { policy } = org.authorityOptions
const controlPlaneId = controlPlane.actor.id
const authorityKey = authorityService.signingKey
const worker = workerAgent.actor
const workerKey = workerAgent.signingKey
const groupId = 'urn:example:group:1'
const workItemId = 'urn:example:work:1'
const inDays = (days: number): string => new Date(Date.now() + days * 86_400_000).toISOString()

/**
 * The Organization's first Commands: Agent Cards and sessions (`org.open`, which also hands out a
 * client per Principal that learns its epochs from every receipt), the Mission and its Group, the
 * worker's Membership.
 */
async function openOrganization(target: Authority): Promise<ClientOf> {
  const as = await org.open(target, { groupId })
  await as(owner).missionCreate({
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
  // visibilityStartSequence 0: the worker may read the Group's whole history (§8).
  await as(coordinator).membershipChange({ membershipId: `${groupId}:membership:worker`, member: worker, role: 'worker', state: 'active', scopes: ['group:read', 'group:write'], visibilityStartSequence: 0 })
  return as
}

const authority = createAuthority(org.authorityOptions)
const as = await openOrganization(authority)

// The coordinator authorizes and offers a WorkItem; the worker accepts and starts it.
await as(coordinator).workAuthorize({
  workItemId,
  contract: {
    contractVersion: 1,
    goal: 'Implement the feature.',
    requiredDeliverables: [{ deliverableId: 'patch', description: 'The change.', mediaType: 'text/x-diff', schema: 'urn:example:schema:patch' }],
    acceptanceCriteria: [{ criterionId: 'tests-pass', description: 'The tests pass.', evidenceRequired: ['deterministic_test'] }],
    inputArtifacts: [],
    dependencyWorkItemIds: [],
    allowedResources: [{ resource: 'urn:example:repo', operations: ['read', 'write'] }],
    requiredCapabilities: [capability],
    deadline: inDays(7),
    requestedUrgency: 'normal',
    businessImpact: 'Needed for the release.',
    retryPolicy: { maxAttempts: 3, backoff: 'exponential', maxDelay: 'PT5M', retryableFailures: ['TRANSIENT'] },
    budget: { currency: 'USD', financialLimit: 10, modelTokenLimit: 10_000, toolCallLimit: 50 },
    sideEffectRisk: 'reversible',
    executionApproval: 'not_required',
  },
})
await as(coordinator).workOffer({
  workItemId,
  candidateAgentIds: [worker.id],
  selectionBasis: { requiredCapabilities: [capability], verifiedMatches: [capability], authorizationEligible: true, availabilityEstimate: inDays(0), expectedCost: 1, reliabilityEvidence: [], policyRulesApplied: ['example.first-fit'] },
  offerExpiresInSeconds: 600,
})
await as(workerAgent).workAcceptOffer({ workItemId, ownershipLeaseSeconds: 3600 })
const agentId = worker.id
const ownershipEpoch = authority.group(groupId)!.workItems.get(workItemId)!.doc.owner!.ownershipEpoch
await as(workerAgent).workStart({ workItemId, ownershipEpoch, executionLeaseSeconds: 600 })
const executionLeaseId = authority.group(groupId)!.workItems.get(workItemId)!.executionLease!.leaseId

/** What `action` throws. */
function thrown(action: () => unknown): unknown {
  try {
    action()
  } catch (error) {
    return error
  }
  throw new Error('expected an error, nothing was thrown')
}

/** The code of the ProtocolError `action` throws. */
function codeOf(action: () => unknown): string {
  const error = thrown(action)
  if (error instanceof ProtocolError) return error.code
  throw error
}

// --- Capability tokens (§12)

const service = createAuthorizationService({ authority })
const { token } = service.issue({ agentId, groupId, workItemId, ownershipEpoch, executionLeaseId,
  operations: ['write'], resources: ['urn:example:repo'], limits: { toolCalls: 5 }, ttlSeconds: 300 })
service.check(token, { operation: 'write', resource: 'urn:example:repo', cost: { toolCalls: 1 } })

// Opaque, bound to the lease, least privilege: only what was asked, within what was asked.
assert.match(token, /^wct_[A-Za-z0-9_-]+$/)
const claims = service.check(token, { operation: 'write', resource: 'urn:example:repo', cost: { toolCalls: 5 } })
assert.deepEqual([claims.agentId, claims.executionLeaseId, claims.operations, claims.limits.toolCalls], [agentId, executionLeaseId, ['write'], 5])
assert.equal(codeOf(() => service.check(token, { operation: 'read', resource: 'urn:example:repo' })), 'AUTH_FORBIDDEN')
assert.equal(codeOf(() => service.check(token, { operation: 'write', resource: 'urn:example:other' })), 'AUTH_FORBIDDEN')
assert.equal(codeOf(() => service.check(token, { operation: 'write', resource: 'urn:example:repo', cost: { toolCalls: 6 } })), 'BUDGET_EXCEEDED')
assert.equal(codeOf(() => service.check(`${token.slice(0, -2)}AA`, { operation: 'write', resource: 'urn:example:repo' })), 'AUTH_FORBIDDEN')

// --- Delivery (§16)

const inbox: Event[] = []

const delivery = createDelivery(authority, { controlPlane: [controlPlaneId] })
const sub = delivery.subscribe(worker, [{ groupId, afterSequence: 0 }], { onEvent: (event) => inbox.push(event) })
delivery.ack(worker, [{ groupId, sequence: inbox.at(-1)!.sequence! }])

// The replay handed out the whole log, in order, and the ACK Cursor is where the worker stopped.
const head = authority.group(groupId)!.head
assert.deepEqual(inbox.map((e) => e.sequence), Array.from({ length: head }, (_, i) => i + 1))
assert.equal(delivery.cursor(worker, groupId), head)
// Then live: the next transaction's Events arrive without another call.
await as(workerAgent).coreWorkExecutionLeaseRenew({ workItemId, ownershipEpoch, executionLeaseId, leaseSeconds: 600 })
assert.ok(inbox.length > head && inbox.every((e, i) => e.sequence === i + 1), 'live Events follow the replay with no gap')
// A Group the subscriber may not read answers as an absent one does.
assert.equal(codeOf(() => delivery.subscribe(outsider.actor, [{ groupId }], { onEvent: () => undefined })), 'GROUP_NOT_FOUND')
assert.equal(codeOf(() => delivery.subscribe(outsider.actor, [{ groupId: 'urn:example:group:absent' }], { onEvent: () => undefined })), 'GROUP_NOT_FOUND')
assert.equal(delivery.subscribe(controlPlane.actor, [{ groupId, afterSequence: head }], { onEvent: () => undefined }).status(groupId), 'live')

// --- Compaction and restore (§7.4, §16)

// The worker goes away at its ACK Cursor; the Group moves on, and an Organization service
// compacts the online log behind a Signed Group Snapshot at the head.
sub.close()
const cursor = delivery.cursor(worker, groupId)
await as(workerAgent).coreWorkExecutionLeaseRenew({ workItemId, ownershipEpoch, executionLeaseId, leaseSeconds: 600 })
const snapshot = signGroupSnapshot(
  buildGroupSnapshot(authority.group(groupId)!, authority.events(groupId), { snapshotId: 'urn:example:snapshot:1', createdBy: controlPlane.actor, createdAt: new Date().toISOString() }),
  controlPlane.signingKey,
)
const stateBefore = authority.group(groupId)
authority.compact(groupId, snapshot)
const S = snapshot.throughSequence
assert.ok(cursor < S)
assert.equal(authority.group(groupId), stateBefore, 'compaction leaves the state as it was')
// Both reads of the log refuse a position below S, with the snapshot reference.
for (const read of [() => authority.events(groupId, cursor), () => authority.eventPage(groupId, cursor, 10)]) {
  const error = thrown(read)
  assert.ok(error instanceof ProtocolError && error.code === 'CURSOR_TOO_OLD')
  assert.deepEqual(error.details, { groupId, afterSequence: cursor, snapshotId: 'urn:example:snapshot:1', throughSequence: S, snapshotHash: authority.snapshot(groupId)!.snapshotHash, stateHash: snapshot.stateHash, oldestSequence: S + 1 })
}

// What the worker restores into, and how it follows the Group afterwards.
const view = { content: undefined as Record<string, unknown> | undefined, reset(content: Record<string, unknown>) { this.content = content } }
const resumed: Event[] = []
const handlers: SubscriptionHandlers = { onEvent: (event) => resumed.push(event), onError: (error) => assert.fail(error) }

try {
  delivery.subscribe(worker, [{ groupId, afterSequence: cursor }], handlers)
} catch (error) {
  if (!(error instanceof ProtocolError) || error.code !== 'CURSOR_TOO_OLD') throw error
  const restored = verifySnapshotImage(delivery.snapshot(worker, groupId)!, registry) // signature and image hash
  if (!restored.ok) throw new Error(restored.reason)
  view.reset(restored.content) // Mission, Group, Memberships, WorkItems, approvals, Artifact references
  delivery.subscribe(worker, [{ groupId, afterSequence: restored.resumeAfterSequence }], handlers)
}

// The worker took the restore path: the image is the Group at S, and it resumed right after S.
assert.equal(view.content?.['groupId'], groupId)
assert.equal(view.content?.['throughSequence'], S)
assert.ok(['mission', 'group', 'memberships', 'workItems', 'approvals', 'artifacts'].every((member) => view.content !== undefined && member in view.content))
assert.equal((view.content!['workItems'] as { workItem: { workItemId: string; state: string } }[])[0]?.workItem.state, 'active')
assert.equal(resumed.length, 0)
await as(workerAgent).coreWorkExecutionLeaseRenew({ workItemId, ownershipEpoch, executionLeaseId, leaseSeconds: 600 })
assert.deepEqual(resumed.map((e) => e.sequence), [S + 1])
// A tampered image is refused.
const point = delivery.snapshot(worker, groupId)!
assert.equal(verifySnapshotImage({ ...point, image: point.image.replace('"active"', '"failed"') }, registry).ok, false)

// --- State checkpoints

// Keep what the README's lines print and warn, to check it below.
const printed: unknown[][] = []
const print = console.log
console.log = (...values: unknown[]) => void printed.push(values)
const warnings: unknown[][] = []
const warn = console.warn
console.warn = (...values: unknown[]) => void warnings.push(values)

// With the Organization's `registry` and `policy`, and the Authority's `authorityService` and `authorityKey`:
import { createMemoryStore } from '@weft/authority'

const keys = { authority: authorityService.actor, signingKey: authorityKey }
const store = createMemoryStore({ checkpoints: true }) // or openSqliteAuthorityStore(path): always on
const first = createAuthority({ registry, keys, store, policy })
await openOrganization(first) // accepted Commands; a compaction saves a checkpoint too, or at any time:
const manifest = first.checkpoint() // { position, imageHash, imageBytes, snapshots, signature, ... }; UsageError on an empty history
const second = createAuthority({ registry, keys, store, policy, onWarning: (w) => console.warn(w.kind, w.message) })
console.log(second.state.groups.size === first.state.groups.size, manifest.position)

// The second Authority resumed from the checkpoint (no warning) at the end of the history, and
// its state is the fold of that history.
assert.deepEqual(warnings, [])
assert.deepEqual(printed.splice(0), [[true, manifest.position]])
assert.equal(manifest.position, first.organizationEvents().length + first.events(groupId).length)
assert.equal(store.checkpoint?.()?.manifest.imageHash, manifest.imageHash)
assert.equal(second.state.groups.size, 1)
assert.deepEqual(second.state, second.replayState())
assert.throws(() => createAuthority({ registry, keys, store: createMemoryStore({ checkpoints: true }) }).checkpoint(), { name: 'UsageError' })

// --- The WebSocket binding

const cert = `-----BEGIN CERTIFICATE-----
MIIBmzCCAUGgAwIBAgIUReYjGYOKq0mhQ+ZtEY4mmB4vtHowCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTIwNDAzMzYxMFoYDzIwNzYxMTIx
MDMzNjEwWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAASGoedpIP4Dgki4logVvl0Rth4I8j2NqhOKxA56mS5R13U3QvRNh4bk
y3SKV0XFzeIfE94nOxh++dt0c53OmWLro28wbTAdBgNVHQ4EFgQULMDvXZTI574Z
8zf+doi8/b3Ayn4wHwYDVR0jBBgwFoAULMDvXZTI574Z8zf+doi8/b3Ayn4wDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDSAAwRQIgBgCJNPuE9Tsb1/vnO1/4VCiAisZf0w+MklI8AWeHEZUCIQDD
CjfhFpZRKCy8TvYD2N2fOOAlrQTdKUS0LJlvKkEIwg==
-----END CERTIFICATE-----
`
const key = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgiCPqrh7lvYY1L27K
DYfW7nSPou20lFHDQYSnedQxEqahRANCAASGoedpIP4Dgki4logVvl0Rth4I8j2N
qhOKxA56mS5R13U3QvRNh4bky3SKV0XFzeIfE94nOxh++dt0c53OmWLr
-----END PRIVATE KEY-----
`
const epochBefore = authority.state.org.agents.get(worker.id)!.sessionEpoch

import { createWireServer } from '@weft/authority/wire'
import { connectWebSocket } from '@weft/client/wire'

const server = await createWireServer({ authority, registry, sessionIssuer: controlPlane, tls: { cert, key }, port: 0 }) // 0: a free port
console.log(server.url) // wss://127.0.0.1:<that port>
const agent = await connectWebSocket({ url: server.url, actor: worker, signingKey: workerKey, ca: cert })
console.log(agent.sessionEpoch()) // the Session Epoch the handshake opened for the worker
await agent.close()
await server.close()

console.log = print
console.warn = warn
assert.deepEqual(warnings, [])
assert.match(String(printed[0]?.[0]), /^wss:\/\/127\.0\.0\.1:[1-9]\d*$/)
assert.equal(printed[0]?.[0], `wss://127.0.0.1:${server.port}`)
assert.equal(printed[1]?.[0], epochBefore + 1)
assert.equal(authority.state.org.agents.get(worker.id)!.sessionEpoch, epochBefore + 1)
// The new session fenced the old one: its Execution Lease was revoked and the token stopped by itself.
assert.equal(codeOf(() => service.check(token, { operation: 'write', resource: 'urn:example:repo' })), 'AUTH_STALE_SESSION')
// Plain ws only on the loopback, and only when asked for.
await assert.rejects(createWireServer({ authority, registry, sessionIssuer: controlPlane }), { name: 'UsageError' })
await assert.rejects(createWireServer({ authority, registry, sessionIssuer: controlPlane, insecureLoopback: true, host: '0.0.0.0' }), { name: 'UsageError' })

// --- People on the same listener (§5): a console's app and sign-in state, reduced to one session.

import type { IncomingMessage, ServerResponse } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { once } from 'node:events'
import type { HumanAdmission } from '@weft/authority/wire'
import { WebSocket } from 'ws'

const sessionToken = 'example-token'
const sessionId = 'urn:example:console-session:1'
const consoleApp = (_request: IncomingMessage, response: ServerResponse): void => void response.writeHead(200, { 'content-type': 'text/plain' }).end('the console')
const sessions = {
  admit(request: IncomingMessage): HumanAdmission {
    const offered = String(request.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim())
    if (!offered.includes(`weft-session.${sessionToken}`)) return { ok: false, status: 401, error: new ProtocolError('AUTH_REQUIRED', 'Sign in first.') }
    return { ok: true, principal: { type: 'human', id: owner.actor.id }, keyId: owner.signingKey.keyId, sessionId, expiresAtMs: Date.now() + 3_600_000 }
  },
}
const printedBefore = printed.length
console.log = (...values: unknown[]) => void printed.push(values)

const wire = await createWireServer({
  authority, registry, sessionIssuer: controlPlane, tls: { cert, key }, port: 0,
  http: (request, response) => consoleApp(request, response),
  humanSessions: {
    path: '/console/ws',
    protocol: 'weft-console.v1',
    admit: (request) => sessions.admit(request), // Origin, then the token subprotocol
  },
})
// What the console's page does once signed in (a browser's WebSocket; here ws's):
const page = new WebSocket(`${wire.url}/console/ws`, ['weft-console.v1', `weft-session.${sessionToken}`], { ca: cert })
const [greeting] = await once(page, 'message') // a PING: the session is open, no HELLO
// On sign-out, every socket of the session gets a fatal AUTH_REQUIRED and closes with 4401:
console.log(wire.endHumanSessions(sessionId)) // 1

console.log = print
const closed = await once(page, 'close')
assert.match(String(greeting), /"frameType":"PING"/)
assert.deepEqual(printed.slice(printedBefore), [[1]])
assert.equal(closed[0], 4401)
// Plain requests reach the console's app rather than the 426 of an Agents-only listener.
const plain = await new Promise<string>((resolve, reject) => {
  httpsRequest(`${wire.url.replace('wss:', 'https:')}/console/`, { ca: cert }, (response) => {
    let body = ''
    response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => resolve(`${String(response.statusCode)} ${body}`))
  }).on('error', reject).end()
})
assert.equal(plain, '200 the console')
await wire.close()

delivery.close()
