// The world of the wire benchmark: 152 Agents with real Ed25519 keys and Agent Cards, one Mission
// Group they all belong to, an Authority on a backend of `wire-backends.mjs`, its delivery (with
// the backend's ACK Cursor store, as `weft serve` wires it) and a loopback WebSocket server.
import { createDelivery } from '@weft/authority'
import { createWireServer } from '@weft/authority/wire'
import { createClient } from '@weft/client'
import { connectWebSocket } from '@weft/client/wire'
import { encodeBase64url, keyPairFromSeed, Registry, sign } from '@weft/codec'

export const CONNECTIONS = 50
export const SUBSCRIBERS = 100
export const GROUP = 'urn:weft:bench-wire:group:1'

const ORG = 'urn:weft:bench-wire:org'
const T0_MS = Date.parse('2026-07-15T00:00:00.000Z')

function principal(type, name, n) {
  const seed = new Uint8Array(32).fill(n)
  return { actor: { type, id: `urn:weft:bench-wire:${type}:${name}` }, key: { keyId: `urn:weft:bench-wire:key:${name}`, pair: keyPairFromSeed(seed) } }
}

const owner = principal('human', 'owner', 1)
const coordinator = principal('agent', 'coordinator', 2)
const controlPlane = principal('service', 'control-plane', 3)
const registryService = principal('service', 'registry', 4)
const authorityService = principal('service', 'authority', 5)
/** One in-process caller, 50 senders and 100 subscribers, each its own Agent (one runtime per Agent, §6.3). */
export const agents = Array.from({ length: 1 + CONNECTIONS + SUBSCRIBERS }, (_, i) => principal('agent', `agent-${i}`, 10 + i))

/** The Organization-registered key of `who`, as the Registry binds it and the Agent Card lists it (§6.1, §6.4). */
const keyOf = (who) => ({ keyId: who.key.keyId, algorithm: 'Ed25519', publicKey: encodeBase64url(who.key.pair.publicKey), validFrom: '2026-01-01T00:00:00Z' })

function registryOf() {
  const everyone = [owner, coordinator, controlPlane, registryService, authorityService, ...agents]
  const result = Registry.fromEvidence({ organizationId: ORG, bindings: everyone.map((m) => ({ ...keyOf(m), principal: m.actor, validityHistory: [] })) })
  if (!(result instanceof Registry)) throw new Error(`bench registry rejected: ${JSON.stringify(result)}`)
  return result
}

/** A minimal Agent Card (one capability), issued by the registry service. */
function cardOf(who) {
  const name = who.actor.id.split(':').pop()
  return sign(
    'agent-card',
    {
      agentId: who.actor.id,
      organizationId: ORG,
      cardVersion: 1,
      displayName: name,
      owner: owner.actor,
      status: 'active',
      protocolVersions: ['0.1'],
      endpoints: [{ transport: 'wss', uri: `wss://agents.bench.invalid/${name}` }],
      publicKeys: [keyOf(who)],
      capabilities: [
        {
          id: 'weft.bench.status',
          version: '1.0.0',
          inputSchema: 'urn:weft:bench-wire:schema:input',
          inputSchemaHash: `sha256:${'a'.repeat(64)}`,
          outputSchema: 'urn:weft:bench-wire:schema:output',
          outputSchemaHash: `sha256:${'b'.repeat(64)}`,
          constraints: {},
          verifiedEvidence: ['urn:weft:bench-wire:evidence:capability'],
        },
      ],
      maxConcurrency: 1,
      issuedAt: '2026-07-01T00:00:00Z',
    },
    registryService.key,
  )
}

/**
 * An Authority on `backend` (a fresh log) on a clock that starts at T0 and runs with real time, a
 * Mission with every Agent enrolled, its delivery and a loopback wire server. `world.close()`
 * closes the connections made with {@link connect}, the server, the delivery and the log.
 */
export async function setUp(backend) {
  const began = performance.now()
  const clock = { now: () => T0_MS + Math.floor(performance.now() - began) }
  const registry = registryOf()
  const policy = { controlPlane: [controlPlane.actor.id] }
  const log = await backend.open({ registry, keys: { authority: authorityService.actor, signingKey: authorityService.key }, clock, policy })
  const { authority } = log
  // Registered before the delivery's own listener, so the time is taken at commit, before any frame is written.
  const commitTimes = { recording: false, at: new Map() }
  authority.onCommit((events) => {
    if (!commitTimes.recording) return
    const now = performance.now()
    for (const e of events) if (e.groupId === GROUP) commitTimes.at.set(e.sequence, now)
  })
  const world = { authority, clock, commitTimes, conns: [], server: undefined, delivery: undefined }
  world.close = async () => {
    await Promise.all(world.conns.splice(0).map((conn) => conn.close()))
    await world.server?.close()
    world.delivery?.close()
    await log.close()
  }
  try {
    const inProcess = (who) => createClient({ actor: who.actor, signingKey: who.key, transport: authority.connect(), groupId: GROUP, clock })
    const control = inProcess(controlPlane)
    for (const who of [coordinator, ...agents]) await control.registryAgentCardRegister({ card: cardOf(who) })
    const coordinatorClient = inProcess(coordinator)
    coordinatorClient.observe((await control.identitySessionOpen({ agentId: coordinator.actor.id })).events)
    const ownerClient = inProcess(owner)
    const mission = {
      missionId: 'urn:weft:bench-wire:mission:1',
      title: 'Wire benchmark',
      objective: 'Measure the binding.',
      definitionOfDone: [{ criterionId: 'measured', description: 'Numbers exist.', evidenceRequired: ['human_review'] }],
      deadline: '2026-09-01T00:00:00Z',
      budget: { currency: 'USD', financialLimit: 1000 },
      approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
      coordinatorAgentId: coordinator.actor.id,
      coordinatorLeaseSeconds: 86_400,
    }
    const created = await ownerClient.missionCreate(mission, { groupId: GROUP })
    ownerClient.observe(created.events)
    coordinatorClient.observe(created.events)
    for (const [i, who] of agents.entries()) {
      await coordinatorClient.membershipChange({ membershipId: `${GROUP}:membership:${i}`, member: who.actor, role: 'worker', state: 'active', scopes: ['group:read', 'group:write'] })
    }
    // As `weft serve` wires it: the backend's Cursor store (when it has one) and the control plane reading every Group (§8).
    world.delivery = createDelivery(authority, { controlPlane: policy.controlPlane, ...(log.cursorStore === undefined ? {} : { cursorStore: log.cursorStore }) })
    world.server = await createWireServer({
      authority,
      registry,
      delivery: world.delivery,
      sessionIssuer: { actor: controlPlane.actor, signingKey: controlPlane.key },
      insecureLoopback: true,
      clock,
      idleTimeoutMs: 0,
    })
    return Object.assign(world, { conversationId: authority.group(GROUP).group.mainConversationId, inProcess, control, ownerClient, cursors: log.cursorStore === undefined ? 'memory' : 'backend' })
  } catch (error) {
    await world.close()
    throw error
  }
}

let messages = 0
/** `n` signed message.post Commands of `client`, built now. */
export function posts(world, client, n) {
  return Array.from({ length: n }, () =>
    client.build('message.post', { messageId: `urn:weft:bench-wire:message:${++messages}`, conversationId: world.conversationId, content: [{ type: 'text', text: 'Status: on track.' }] }),
  )
}

/** An Agent connected over the wire, with a client on the connection that knows its epochs; closed by `world.close()`. */
export async function connect(world, who) {
  const conn = await connectWebSocket({ url: world.server.url, actor: who.actor, signingKey: who.key, clock: world.clock, heartbeatMs: 0 })
  world.conns.push(conn)
  const client = createClient({ actor: who.actor, signingKey: who.key, transport: conn.transport, groupId: GROUP, clock: world.clock })
  client.epochs.setSession(conn.sessionEpoch())
  client.observe(world.authority.events(GROUP))
  return { conn, client }
}
