// The world the authority benchmark drives: a cast of Principals with real Ed25519 keys, the
// documents they sign (Agent Cards, Work Contracts, Evidence, Artifact manifests: the valid
// conformance vectors of the protocol bundle, re-addressed to this world and signed for real), an
// Authority on a virtual clock, and one @weft/client per Principal. `createWorld` bootstraps an
// Organization and one Group through real Commands; `world.cycle()` then runs one WorkItem
// lifecycle plus a Message. Every Command is built and signed by its client first (the client's
// cost); only the Authority call is timed.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createAuthority } from '@weft/authority'
import { createClient } from '@weft/client'
import { encodeBase64url, keyPairFromSeed, Registry, sha256Tagged, sign, utf8Encode } from '@weft/codec'
import { locateBundle } from '@weft/spec/bundle'

export const ORG = 'urn:weft:bench:org'
export const GROUP = 'urn:weft:bench:group:1'
const MISSION = 'urn:weft:bench:mission:1'
/** The virtual clock starts here and advances {@link STEP_MS} per Command, so no window or lease lapses. */
const T0_MS = Date.parse('2026-07-15T00:00:00.000Z')
const STEP_MS = 2

function principal(type, name, n) {
  const seed = new Uint8Array(32).fill(n)
  return { actor: { type, id: `urn:weft:bench:${type}:${name}` }, key: { keyId: `urn:weft:bench:key:${name}`, pair: keyPairFromSeed(seed) }, seed }
}

/** Everyone who signs something: the MissionOwner, the Coordinator, three Workers, a reviewer, the control plane, the Agent Registry and the Authority. */
export const cast = {
  owner: principal('human', 'owner', 1),
  coordinator: principal('agent', 'coordinator', 2),
  workers: [principal('agent', 'worker-1', 3), principal('agent', 'worker-2', 4), principal('agent', 'worker-3', 5)],
  reviewer: principal('agent', 'reviewer', 6),
  controlPlane: principal('service', 'control-plane', 7),
  registry: principal('service', 'registry', 9),
  authority: principal('service', 'authority', 8),
}

const everyone = () => [cast.owner, cast.coordinator, ...cast.workers, cast.reviewer, cast.controlPlane, cast.registry, cast.authority]

/** A Registry binding every key of the cast, open-ended from the start of 2026. */
export function registry() {
  const bindings = everyone().map((m) => ({
    keyId: m.key.keyId,
    principal: m.actor,
    algorithm: 'Ed25519',
    publicKey: encodeBase64url(m.key.pair.publicKey),
    validFrom: '2026-01-01T00:00:00Z',
    validityHistory: [],
  }))
  const result = Registry.fromEvidence({ organizationId: ORG, bindings })
  if (!(result instanceof Registry)) throw new Error(`bench registry rejected: ${JSON.stringify(result)}`)
  return result
}

/** A valid conformance vector of the protocol bundle, without its placeholder signature. */
function vector(name) {
  const location = locateBundle()
  if (!location.found) throw new Error(location.reason)
  const { signature: _placeholder, ...document } = JSON.parse(readFileSync(join(location.dir, 'conformance/vectors/valid', `${name}.json`), 'utf8'))
  return Object.freeze(document)
}

const VECTORS = { card: vector('agent-card'), contract: vector('work-contract'), evidence: vector('evidence'), artifact: vector('artifact'), mission: vector('mission') }
const [CAPABILITY] = VECTORS.contract.requiredCapabilities

/** The vector Agent Card, issued by the Organization's registry service for `who` at card version 1. */
function agentCard(who) {
  const name = who.actor.id.split(':').pop()
  const publicKey = { ...VECTORS.card.publicKeys[0], keyId: who.key.keyId, publicKey: encodeBase64url(who.key.pair.publicKey) }
  const identity = { agentId: who.actor.id, organizationId: ORG, cardVersion: 1, displayName: name, owner: cast.owner.actor }
  return sign('agent-card', { ...VECTORS.card, ...identity, endpoints: [{ transport: 'wss', uri: `wss://agents.bench.invalid/${name}` }], publicKeys: [publicKey] }, cast.registry.key)
}

/**
 * The vector Work Contract, standing alone (no input Artifacts or dependencies), started without
 * an Execution Approval, and with one acceptance criterion a test run covers.
 */
const CONTRACT = Object.freeze({
  ...VECTORS.contract,
  inputArtifacts: [],
  dependencyWorkItemIds: [],
  executionApproval: 'not_required',
  acceptanceCriteria: VECTORS.contract.acceptanceCriteria.map((c) => ({ ...c, evidenceRequired: ['deterministic_test'] })),
})

const SELECTION = Object.freeze({
  requiredCapabilities: [CAPABILITY],
  verifiedMatches: [CAPABILITY],
  authorizationEligible: true,
  availabilityEstimate: '2026-07-15T00:00:00Z',
  expectedCost: 1,
  reliabilityEvidence: [],
  policyRulesApplied: ['weft.bench.first-fit'],
})

const iso = (ms) => new Date(ms).toISOString()

/** The seed of every Authority's ID source. */
export const SEED = 0x5eed

/** A seeded random source (a linear congruential generator). */
export function seeded(seed) {
  let x = seed >>> 0
  return (n) => {
    const bytes = new Uint8Array(n)
    for (let i = 0; i < n; i++) bytes[i] = (x = (Math.imul(x, 1103515245) + 12345) >>> 0) >>> 24
    return bytes
  }
}

/**
 * An Authority on `clock`. Its IDs come from a seeded source, so two Authorities fed the same
 * Commands at the same clock readings mint the same IDs and append the same Events: what
 * {@link replay} relies on.
 */
export function authorityOn(clock, options = {}) {
  return createAuthority({
    registry: registry(),
    keys: { authority: cast.authority.actor, signingKey: cast.authority.key },
    clock: { now: () => clock.nowMs },
    random: seeded(SEED),
    policy: { controlPlane: [cast.controlPlane.actor.id] },
    ...options,
  })
}

/**
 * A started world: the Authority, one client per Principal, the Group's main Conversation, and the
 * timing of every Authority call so far.
 * @param {{ trusted?: boolean, record?: boolean, authority?: object }} options - `trusted`: drive
 * `submitTrusted(command)` instead of `submit(bytes)`; `record`: keep every Command for {@link replay};
 * `authority`: extra `createAuthority` options
 */
export async function createWorld({ trusted = false, record = false, authority: extra = {} } = {}) {
  const clock = { nowMs: T0_MS }
  const authority = authorityOn(clock, extra)
  let seed = 1
  const transport = { submit: () => Promise.reject(new Error('the bench submits through the world')) }
  const clients = new Map()
  for (const who of everyone()) {
    clients.set(who, createClient({ actor: who.actor, signingKey: who.key, transport, groupId: GROUP, clock: { now: () => clock.nowMs }, random: seeded(seed++) }))
  }
  const world = {
    authority,
    clock,
    trusted,
    /** Milliseconds spent inside Authority calls, Commands submitted and Events appended, since the last {@link reset}. */
    elapsedMs: 0,
    commands: 0,
    events: 0,
    /** The duration of each Authority call in milliseconds, per Command kind. */
    byKind: new Map(),
    /** With `record`, every Command so far as built, with the clock reading it was submitted at (see {@link replay}). */
    recording: record ? [] : undefined,
    reset() {
      world.elapsedMs = 0
      world.commands = 0
      world.events = 0
      world.byKind = new Map()
    },
    /** Builds `kind` as `who` (untimed), submits it (timed), lets every client observe the Events. */
    async send(who, kind, payload, options) {
      clock.nowMs += STEP_MS
      const built = clients.get(who).build(kind, payload, options)
      let receipt
      const start = performance.now()
      if (world.trusted) receipt = authority.submitTrusted(built.command)
      else receipt = await authority.submit(built.bytes)
      const elapsedMs = performance.now() - start
      world.elapsedMs += elapsedMs
      world.commands++
      const calls = world.byKind.get(kind)
      if (calls === undefined) world.byKind.set(kind, [elapsedMs])
      else calls.push(elapsedMs)
      world.events += receipt.events.length
      world.recording?.push({ atMs: clock.nowMs, bytes: built.bytes, events: receipt.events.length })
      for (const client of clients.values()) client.observe(receipt.events)
      return receipt
    },
  }
  await bootstrap(world)
  world.conversationId = authority.group(GROUP).group.mainConversationId
  world.items = 0
  world.cycle = () => cycle(world)
  world.messages = 0
  world.post = () => post(world, cast.workers[world.messages % cast.workers.length])
  world.bootstrapped = world.commands
  world.reset()
  return world
}

/**
 * Submits a world's recorded Commands, in order and at their clock readings, to a new Authority
 * with the same seed, which therefore accepts every one of them with the same Events. The first
 * `world.bootstrapped` Commands set the stage untimed; the rest are timed as one loop. Trusted
 * replays submit Command objects parsed from the bytes before timing starts.
 * @returns {Promise<{ commands: number, events: number, elapsedMs: number, authority: object }>}
 */
export async function replay(world, { trusted = false, window = 1, authority: extra = {} } = {}) {
  const clock = { nowMs: T0_MS }
  const authority = authorityOn(clock, extra)
  const entries = world.recording
  const start = world.bootstrapped
  for (const entry of entries.slice(0, start)) {
    clock.nowMs = entry.atMs
    await authority.submit(entry.bytes)
  }
  const timed = entries.slice(start)
  const commands = trusted ? timed.map((e) => JSON.parse(e.bytes)) : undefined
  let events = 0
  const began = performance.now()
  // Signed Commands are submitted `window` at a time, as by that many clients at once: each waits
  // for its receipt (in submission order) before the next goes out.
  const inFlight = []
  for (let i = 0; i < timed.length; i++) {
    clock.nowMs = timed[i].atMs
    if (trusted) {
      events += authority.submitTrusted(commands[i]).events.length
      continue
    }
    inFlight.push(authority.submit(timed[i].bytes))
    if (inFlight.length >= window) events += (await inFlight.shift()).events.length
  }
  for (const receipt of inFlight) events += (await receipt).events.length
  const elapsedMs = performance.now() - began
  const expected = timed.reduce((n, e) => n + e.events, 0)
  if (events !== expected) throw new Error(`replay appended ${events} Events where the recording had ${expected}`)
  return { commands: timed.length, events, elapsedMs, authority }
}

/** Agent Cards and sessions for every Agent, the Group with its Mission, and Worker Memberships. */
async function bootstrap(world) {
  for (const who of [cast.coordinator, ...cast.workers, cast.reviewer]) {
    await world.send(cast.controlPlane, 'ext.missionweaveprotocol.registry.agent_card_register', { card: agentCard(who) })
    await world.send(cast.controlPlane, 'ext.missionweaveprotocol.identity.session_open', { agentId: who.actor.id })
  }
  const { objective, definitionOfDone, budget, deadline, approvalPolicy } = VECTORS.mission
  const mission = { missionId: MISSION, title: 'Release', objective, definitionOfDone, deadline, budget, approvalPolicy }
  await world.send(cast.owner, 'mission.create', { ...mission, coordinatorAgentId: cast.coordinator.actor.id, coordinatorLeaseSeconds: 86_400 }, { groupId: GROUP })
  for (const who of [...cast.workers, cast.reviewer]) {
    const name = who.actor.id.split(':').pop()
    await world.send(cast.coordinator, 'membership.change', {
      membershipId: `${GROUP}:membership:${name}`,
      member: who.actor,
      role: 'worker',
      state: 'active',
      scopes: ['group:read', 'group:write'],
    })
  }
}

/** The vector Evidence, about the Artifact with `contentHash` of WorkItem `workItemId`, by `by`, now. */
function evidence(world, workItemId, contentHash, by) {
  const at = { evidenceId: `urn:weft:bench:evidence:${workItemId.split(':').pop()}:${by.actor.id.split(':').pop()}`, missionId: MISSION, groupId: GROUP, workItemId }
  const about = { subject: { type: 'artifact', id: contentHash }, artifactHashes: [contentHash], criterionIds: CONTRACT.acceptanceCriteria.map((c) => c.criterionId) }
  return sign('evidence', { ...VECTORS.evidence, ...at, ...about, generatedBy: by.actor, createdAt: iso(world.clock.nowMs) }, by.key)
}

/** The vector Artifact manifest for a patch of WorkItem `workItemId`, produced by `by` under card version 1, now. */
function manifest(world, workItemId, by) {
  const content = utf8Encode(`patch for ${workItemId}`)
  const contentHash = sha256Tagged(content)
  const at = { artifactId: `urn:weft:bench:artifact:${workItemId.split(':').pop()}`, missionId: MISSION, groupId: GROUP, workItemId }
  const bytes = { contentHash, uri: `https://blobs.bench.invalid/${contentHash.slice(7)}`, sizeBytes: content.byteLength, sourceArtifactHashes: [] }
  const producer = { agentId: by.actor.id, agentCardVersion: 1, capabilities: [CAPABILITY] }
  return sign('artifact', { ...VECTORS.artifact, ...at, ...bytes, producer, createdAt: iso(world.clock.nowMs) }, by.key)
}

const leaseOf = (receipt) => receipt.events[0].payload.executionLease.leaseId

/**
 * One WorkItem from authorization to verified (authorize, offer, accept, start, renew, checkpoint,
 * start again, publish, submit, accept) and one Message: 11 Commands.
 */
async function cycle(world) {
  const n = ++world.items
  const workItemId = `urn:weft:bench:work:${n}`
  const worker = cast.workers[n % cast.workers.length]
  const coordinator = cast.coordinator
  await world.send(coordinator, 'work.authorize', { workItemId, contract: CONTRACT })
  await world.send(coordinator, 'work.offer', { workItemId, candidateAgentIds: [worker.actor.id], selectionBasis: SELECTION, offerExpiresInSeconds: 600 })
  await world.send(worker, 'work.accept_offer', { workItemId, ownershipLeaseSeconds: 3600 })
  const ownershipEpoch = world.authority.group(GROUP).workItems.get(workItemId).doc.owner.ownershipEpoch
  let executionLeaseId = leaseOf(await world.send(worker, 'work.start', { workItemId, ownershipEpoch, executionLeaseSeconds: 600 }))
  await world.send(worker, 'ext.missionweaveprotocol.core.work_execution_lease_renew', { workItemId, ownershipEpoch, executionLeaseId, leaseSeconds: 600 })
  const checkpoint = { phase: 'build', completedMilestones: ['tests written'], nextStep: 'implement', stateArtifactHash: sha256Tagged(utf8Encode(workItemId)), createdAt: iso(world.clock.nowMs) }
  await world.send(worker, 'work.checkpoint', { workItemId, ownershipEpoch, executionLeaseId, checkpoint, resumeWithinSeconds: 600 })
  executionLeaseId = leaseOf(await world.send(worker, 'work.start', { workItemId, ownershipEpoch, executionLeaseSeconds: 600 }))
  const artifact = manifest(world, workItemId, worker)
  await world.send(worker, 'artifact.publish', { artifact, ownershipEpoch, executionLeaseId })
  const tested = (by) => [evidence(world, workItemId, artifact.contentHash, by)]
  await world.send(worker, 'work.submit', { workItemId, ownershipEpoch, executionLeaseId, artifactIds: [artifact.artifactId], evidence: tested(worker) })
  await world.send(coordinator, 'work.accept_result', { workItemId, evidence: tested(cast.reviewer) })
  await post(world, worker, `WorkItem ${n} is verified.`)
}

/** `who` posts a Message to the Group's main Conversation. */
function post(world, who, text = 'Status: on track.') {
  const n = ++world.messages
  return world.send(who, 'message.post', { messageId: `urn:weft:bench:message:${n}`, conversationId: world.conversationId, content: [{ type: 'text', text }] })
}
