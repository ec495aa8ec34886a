// WebSocket binding benchmark (§17): the Authority behind createWireServer on a loopback socket,
// driven by connectWebSocket clients in the same process, against the in-process submit() of the
// same Authority in the same run.
//
//   in-process   authority.submit(bytes), one caller awaiting each receipt
//   wire x1      one connection, one Command in flight at a time (receipt latency)
//   wire x50     50 Agents, one connection each, one Command in flight per connection
//   fan-out      one publisher, 100 subscribed Agents, one connection each: every Event reaches
//                every subscriber (Events/s counts deliveries; latency is commit to onEvent)
//
// Every Command is a signed message.post built before timing; timing covers submission to
// receipt. Clients and server share one process (and its cores), so the wire figures include the
// client's strict parsing and frame validation. WEFT_BENCH_WIRE_COMMANDS sets the Commands per
// case (default 2000), WEFT_BENCH_WIRE_EVENTS the fanned-out Events (default 300).
import { createAuthority } from '@weft/authority'
import { createWireServer } from '@weft/authority/wire'
import { createClient } from '@weft/client'
import { connectWebSocket } from '@weft/client/wire'
import { encodeBase64url, keyPairFromSeed, Registry, sign } from '@weft/codec'
import { fmt, table } from './table.mjs'

const COMMANDS = Number(process.env.WEFT_BENCH_WIRE_COMMANDS ?? 2000)
const FANOUT_EVENTS = Number(process.env.WEFT_BENCH_WIRE_EVENTS ?? 300)
const CONNECTIONS = 50
const SUBSCRIBERS = 100

// Goals: the binding should keep a Command's round trip short and let many connections together
// approach the Authority's own rate; fan-out should not be the bottleneck of a busy Group.
const TARGETS = { p99Ms: 25, manyVsInProcess: 0.5, fanoutPerSec: 20_000 }

const ORG = 'urn:weft:bench-wire:org'
const GROUP = 'urn:weft:bench-wire:group:1'
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
// One in-process caller, 50 senders and 100 subscribers, each its own Agent (one runtime per Agent, §6.3).
const agents = Array.from({ length: 1 + CONNECTIONS + SUBSCRIBERS }, (_, i) => principal('agent', `agent-${i}`, 10 + i))

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

/** An Authority on a clock that starts at T0 and runs with real time, a Mission with every Agent enrolled, and a loopback wire server. */
async function setUp() {
  const began = performance.now()
  const clock = { now: () => T0_MS + Math.floor(performance.now() - began) }
  const registry = registryOf()
  const authority = createAuthority({ registry, keys: { authority: authorityService.actor, signingKey: authorityService.key }, clock, policy: { controlPlane: [controlPlane.actor.id] } })
  const inProcess = (who) => createClient({ actor: who.actor, signingKey: who.key, transport: authority.connect(), groupId: GROUP, clock: () => clock.now() })
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
  const server = await createWireServer({ authority, registry, sessionIssuer: { actor: controlPlane.actor, signingKey: controlPlane.key }, insecureLoopback: true, clock, idleTimeoutMs: 0 })
  const conversationId = authority.group(GROUP).group.mainConversationId
  return { authority, clock, server, conversationId, inProcess, control, ownerClient }
}

let messages = 0
/** `n` signed message.post Commands of `client`, built now. */
function posts(world, client, n) {
  return Array.from({ length: n }, () => client.build('message.post', { messageId: `urn:weft:bench-wire:message:${++messages}`, conversationId: world.conversationId, content: [{ type: 'text', text: 'Status: on track.' }] }))
}

/** An Agent connected over the wire, with a client on the connection that knows its epochs. */
async function connect(world, who) {
  const conn = await connectWebSocket({ url: world.server.url, actor: who.actor, signingKey: who.key, clock: () => world.clock.now(), heartbeatMs: 0 })
  const client = createClient({ actor: who.actor, signingKey: who.key, transport: conn.transport, groupId: GROUP, clock: () => world.clock.now() })
  client.epochs.setSession(conn.sessionEpoch())
  client.observe(world.authority.events(GROUP))
  return { conn, client }
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

/** Closed-loop senders, one Command in flight each: Commands/s over all and the latency percentiles. */
async function closedLoop(loops) {
  const latencies = []
  const began = performance.now()
  await Promise.all(
    loops.map(async ({ send, commands }) => {
      for (const built of commands) {
        const t = performance.now()
        await send(built)
        latencies.push(performance.now() - t)
      }
    }),
  )
  const elapsedMs = performance.now() - began
  latencies.sort((a, b) => a - b)
  return { commands: latencies.length, perSec: (latencies.length * 1000) / elapsedMs, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

/** One publisher posting in process, every subscriber receiving every Event over its connection. */
async function fanOut(world, subscribers, n) {
  const committedAt = new Map()
  const stop = world.authority.onCommit((events) => {
    const now = performance.now()
    for (const e of events) if (e.groupId === GROUP) committedAt.set(e.sequence, now)
  })
  const head = world.authority.group(GROUP).head
  const last = head + n
  const latencies = []
  let done = 0
  let finished
  const allDone = new Promise((resolve) => (finished = resolve))
  for (const { conn } of subscribers) {
    let count = 0
    conn.feed.subscribe([{ groupId: GROUP, afterSequence: head }], {
      onEvent(event) {
        latencies.push(performance.now() - committedAt.get(event.sequence))
        // §16: subscribers acknowledge as they go, which keeps their Group window open (§17.3).
        if (++count % 100 === 0 || event.sequence === last) void conn.feed.ack(GROUP, event.sequence)
        if (event.sequence === last && ++done === subscribers.length) finished()
      },
    })
  }
  await Promise.all(subscribers.map(({ conn }) => conn.ping()))
  const commands = posts(world, world.ownerClient, n)
  const began = performance.now()
  for (const built of commands) {
    await world.authority.submit(built.bytes)
    // A steady publisher: the event loop turns between Commands, so frames flow while it posts.
    await new Promise((resolve) => setImmediate(resolve))
  }
  await allDone
  const elapsedMs = performance.now() - began
  stop()
  latencies.sort((a, b) => a - b)
  return { deliveries: latencies.length, perSec: (latencies.length * 1000) / elapsedMs, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

/**
 * Runs the four cases and returns table rows, a JSON summary and the targets missed.
 * @param {{ log: (line: string) => void }} options
 */
export async function wireCases({ log }) {
  log('wire: setting up an Authority with 152 Agents ...')
  const world = await setUp()
  try {
    const [caller, ...rest] = agents
    const local = world.inProcess(caller)
    local.observe((await world.control.identitySessionOpen({ agentId: caller.actor.id })).events)
    local.observe(world.authority.events(GROUP))
    log('wire: in-process submit() ...')
    const inProcess = await closedLoop([{ send: (b) => world.authority.submit(b.bytes), commands: posts(world, local, COMMANDS) }])

    const senders = await Promise.all(rest.slice(0, CONNECTIONS).map((who) => connect(world, who)))
    log('wire: 1 connection ...')
    const one = await closedLoop([{ send: (b) => senders[0].client.resend(b), commands: posts(world, senders[0].client, COMMANDS) }])
    log(`wire: ${CONNECTIONS} connections ...`)
    const share = Math.ceil(COMMANDS / CONNECTIONS)
    const many = await closedLoop(senders.map(({ client }) => ({ send: (b) => client.resend(b), commands: posts(world, client, share) })))

    log(`wire: fan-out to ${SUBSCRIBERS} subscribers ...`)
    const subscribers = await Promise.all(rest.slice(CONNECTIONS).map((who) => connect(world, who)))
    const fan = await fanOut(world, subscribers, FANOUT_EVENTS)
    await Promise.all([...senders, ...subscribers].map(({ conn }) => conn.close()))

    const ms = (x) => x.toFixed(2)
    const rows = [
      ['in-process submit(), 1 caller', inProcess.commands, `${fmt(inProcess.perSec)} Commands/s`, ms(inProcess.p50), ms(inProcess.p99)],
      ['WebSocket, 1 connection', one.commands, `${fmt(one.perSec)} Commands/s`, ms(one.p50), ms(one.p99)],
      [`WebSocket, ${CONNECTIONS} connections`, many.commands, `${fmt(many.perSec)} Commands/s`, ms(many.p50), ms(many.p99)],
      [`fan-out, ${SUBSCRIBERS} subscribers`, fan.deliveries, `${fmt(fan.perSec)} Events/s`, ms(fan.p50), ms(fan.p99)],
    ]
    const missed = []
    if (one.p99 > TARGETS.p99Ms) missed.push(`1-connection p99 ${ms(one.p99)} ms > ${TARGETS.p99Ms} ms`)
    if (many.perSec < TARGETS.manyVsInProcess * inProcess.perSec) missed.push(`${CONNECTIONS} connections ${fmt(many.perSec)}/s < ${TARGETS.manyVsInProcess} x in-process ${fmt(inProcess.perSec)}/s`)
    if (fan.perSec < TARGETS.fanoutPerSec) missed.push(`fan-out ${fmt(fan.perSec)} Events/s < ${fmt(TARGETS.fanoutPerSec)}`)
    const summary = {
      inProcessPerSec: Math.round(inProcess.perSec),
      wireOnePerSec: Math.round(one.perSec),
      wireOneP50Ms: Number(ms(one.p50)),
      wireOneP99Ms: Number(ms(one.p99)),
      wireManyPerSec: Math.round(many.perSec),
      wireManyP50Ms: Number(ms(many.p50)),
      wireManyP99Ms: Number(ms(many.p99)),
      fanoutEventsPerSec: Math.round(fan.perSec),
      fanoutP50Ms: Number(ms(fan.p50)),
      fanoutP99Ms: Number(ms(fan.p99)),
      targetsMet: missed.length === 0,
      missed,
    }
    return { rows, summary, missed }
  } finally {
    await world.server.close()
  }
}

/** The suite entry of `bench/run.mjs`: the rows as a table. */
export async function run({ log }) {
  const { rows, summary, missed } = await wireCases({ log })
  return { table: table(['case', 'n', 'rate', 'p50 ms', 'p99 ms'], rows), summary, missed }
}

// `node bench/wire.mjs` runs the suite alone (built packages, or tsx with --conditions=@weft/source).
if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await run({ log: (line) => console.error(line) })
  console.log(result.table)
  console.log(JSON.stringify({ suite: 'wire', ...result.summary }))
}
