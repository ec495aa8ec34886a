// WebSocket binding benchmark (§17): an Authority behind createWireServer on a loopback socket,
// driven by connectWebSocket clients in the same process, on each backend of wire-backends.mjs
// (in memory, SQLite at synchronous 'full' as `weft serve` runs it and at 'normal', PostgreSQL),
// backends side by side. Per backend:
//
//   authority mix   the authority suite's one-at-a-time signed figure: submit(bytes) over its
//                   lifecycle mix, replayed into a fresh log (wire-mix.mjs), each Command awaiting
//                   the last one's receipt; in memory it is the common baseline
//   in-process      authority.submit(bytes) of message.post, one caller awaiting each receipt
//   wire x1         one connection, one Command in flight at a time (receipt latency)
//   wire x50        50 Agents, one connection each, one Command in flight per connection
//   fan-out         one publisher, 100 subscribed Agents, one connection each: every Event reaches
//                   every subscriber (Events/s counts deliveries; latency is commit to onEvent)
//
// Every Command is signed and built before timing; timing covers submission to receipt. Clients
// and server share one process (and its cores), so the wire figures include the client's strict
// parsing and frame validation. The wire figures are divided by the same backend's in-process
// message.post figure: the same Commands without the socket. WEFT_BENCH_WIRE_COMMANDS sets the
// Commands per case (default 2000), WEFT_BENCH_WIRE_EVENTS the fanned-out Events (default 300);
// WEFT_PG_URL the PostgreSQL database (default: a throwaway server, or a `skipped:` row).
import { fmt, median, table } from './table.mjs'
import { backends } from './wire-backends.mjs'
import { recordMix, replayOn } from './wire-mix.mjs'
import { agents, connect, CONNECTIONS, GROUP, posts, setUp, SUBSCRIBERS } from './wire-world.mjs'

const COMMANDS = Number(process.env.WEFT_BENCH_WIRE_COMMANDS ?? 2000)
const FANOUT_EVENTS = Number(process.env.WEFT_BENCH_WIRE_EVENTS ?? 300)
/** Replays of the authority mix per backend; the backends take turns within a round, so load changes reach all alike. */
const MIX_ROUNDS = 3

// Goals, per backend: the binding should keep a Command's round trip short and let many
// connections together approach the backend's own in-process rate; fan-out should not be the
// bottleneck of a busy Group.
const TARGETS = { p99Ms: 25, manyVsInProcess: 0.5, fanoutPerSec: 20_000 }

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

/** Rate and latency percentiles of `latencies` (ms) over `elapsedMs`. */
function rated(latencies, elapsedMs) {
  latencies.sort((a, b) => a - b)
  return { n: latencies.length, perSec: (latencies.length * 1000) / elapsedMs, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
}

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
  return rated(latencies, performance.now() - began)
}

/** One publisher posting in process, every subscriber receiving every Event over its connection. */
async function fanOut(world, subscribers, n) {
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
        latencies.push(performance.now() - world.commitTimes.at.get(event.sequence))
        // §16: subscribers acknowledge as they go, which keeps their Group window open (§17.3).
        if (++count % 100 === 0 || event.sequence === last) void conn.feed.ack(GROUP, event.sequence)
        if (event.sequence === last && ++done === subscribers.length) finished()
      },
    })
  }
  await Promise.all(subscribers.map(({ conn }) => conn.ping()))
  const commands = posts(world, world.ownerClient, n)
  world.commitTimes.recording = true
  const began = performance.now()
  for (const built of commands) {
    await world.authority.submit(built.bytes)
    // A steady publisher: the event loop turns between Commands, so frames flow while it posts.
    await new Promise((resolve) => setImmediate(resolve))
  }
  await allDone
  const elapsedMs = performance.now() - began
  world.commitTimes.recording = false
  return rated(latencies, elapsedMs)
}

/** The four socket cases (and the in-process one beside them) on a fresh log of `backend`. */
async function wireCases(backend, log) {
  log(`wire: ${backend.label}: setting up an Authority with ${agents.length + 1} Agents ...`)
  const world = await setUp(backend)
  try {
    const [caller, ...rest] = agents
    const local = world.inProcess(caller)
    local.observe((await world.control.identitySessionOpen({ agentId: caller.actor.id })).events)
    local.observe(world.authority.events(GROUP))
    log(`wire: ${backend.label}: in-process submit() ...`)
    const inProcess = await closedLoop([{ send: (b) => world.authority.submit(b.bytes), commands: posts(world, local, COMMANDS) }])

    const senders = await Promise.all(rest.slice(0, CONNECTIONS).map((who) => connect(world, who)))
    log(`wire: ${backend.label}: 1 connection ...`)
    const one = await closedLoop([{ send: (b) => senders[0].client.resend(b), commands: posts(world, senders[0].client, COMMANDS) }])
    log(`wire: ${backend.label}: ${CONNECTIONS} connections ...`)
    const share = Math.ceil(COMMANDS / CONNECTIONS)
    const many = await closedLoop(senders.map(({ client }) => ({ send: (b) => client.resend(b), commands: posts(world, client, share) })))

    log(`wire: ${backend.label}: fan-out to ${SUBSCRIBERS} subscribers ...`)
    const subscribers = await Promise.all(rest.slice(CONNECTIONS).map((who) => connect(world, who)))
    const fan = await fanOut(world, subscribers, FANOUT_EVENTS)
    return { inProcess, one, many, fan, cursors: world.cursors }
  } finally {
    await world.close()
  }
}

/** Prepares every backend, measures the available ones, and disposes of all of them whatever happens. */
async function measure(log) {
  const all = backends()
  const skipped = new Map()
  const results = new Map()
  try {
    const ready = []
    for (const backend of all) {
      const reason = await backend.prepare()
      if (reason === undefined) ready.push(backend)
      else {
        skipped.set(backend.key, reason)
        log(`wire: ${backend.label} skipped: ${reason}`)
      }
    }
    log(`wire: authority mix, recording; then ${MIX_ROUNDS} rounds on ${ready.map((b) => b.label).join(', ')} ...`)
    const recorded = await recordMix()
    const mix = new Map(ready.map((b) => [b.key, []]))
    for (let round = 1; round <= MIX_ROUNDS; round++) {
      for (const backend of ready) mix.get(backend.key).push(await replayOn(recorded, backend))
      log(`wire: authority mix, round ${round} of ${MIX_ROUNDS}`)
    }
    for (const backend of ready) results.set(backend.key, { mixPerSec: median(mix.get(backend.key)), ...(await wireCases(backend, log)) })
  } finally {
    for (const backend of all) {
      await backend.dispose().catch((error) => log(`wire: ${backend.label}: cleanup failed: ${error?.message ?? error}`))
    }
  }
  return { all, skipped, results }
}

const ms = (x) => Number(x.toFixed(2))
const ratio = (a, b) => Number((a / b).toFixed(3))

/** One backend's JSON figures; the same members as `null`s, with the reason, for a skipped backend. */
function figures(r, baseline, skipped) {
  if (r === undefined) {
    const zero = { perSec: 1, p50: 0, p99: 0 }
    const shape = figures({ mixPerSec: 1, inProcess: zero, one: zero, many: zero, fan: zero, cursors: '' }, { mixPerSec: 1, inProcess: zero }, null)
    return { ...Object.fromEntries(Object.keys(shape).map((k) => [k, null])), skipped }
  }
  const { mixPerSec, inProcess, one, many, fan } = r
  const wire = (name, c) => ({ [`${name}PerSec`]: Math.round(c.perSec), [`${name}P50Ms`]: ms(c.p50), [`${name}P99Ms`]: ms(c.p99), [`${name}VsInProcess`]: ratio(c.perSec, inProcess.perSec) })
  return {
    skipped: null,
    mixSignedPerSec: Math.round(mixPerSec),
    mixVsMemory: ratio(mixPerSec, baseline.mixPerSec),
    inProcessPerSec: Math.round(inProcess.perSec),
    inProcessP50Ms: ms(inProcess.p50),
    inProcessP99Ms: ms(inProcess.p99),
    inProcessVsMemory: ratio(inProcess.perSec, baseline.inProcess.perSec),
    ...wire('wireOne', one),
    ...wire('wireMany', many),
    fanoutEventsPerSec: Math.round(fan.perSec),
    fanoutP50Ms: ms(fan.p50),
    fanoutP99Ms: ms(fan.p99),
    cursors: r.cursors,
  }
}

/** The targets `r` missed, each named with its backend. */
function missedBy(label, r) {
  const missed = []
  if (r.one.p99 > TARGETS.p99Ms) missed.push(`${label}: 1-connection p99 ${ms(r.one.p99)} ms > ${TARGETS.p99Ms} ms`)
  if (r.many.perSec < TARGETS.manyVsInProcess * r.inProcess.perSec)
    missed.push(`${label}: ${CONNECTIONS} connections ${fmt(r.many.perSec)}/s < ${TARGETS.manyVsInProcess} x in-process ${fmt(r.inProcess.perSec)}/s`)
  if (r.fan.perSec < TARGETS.fanoutPerSec) missed.push(`${label}: fan-out ${fmt(r.fan.perSec)} Events/s < ${fmt(TARGETS.fanoutPerSec)}`)
  return missed
}

/** The suite entry of `bench/run.mjs`: one table with the backends side by side, and the JSON summary. */
export async function run({ log }) {
  const { all, skipped, results } = await measure(log)
  const baseline = results.get('memory')
  const x = (a, b) => `${(a / b).toFixed(2)}x`
  const ps = (c) => `${c.p50.toFixed(2)} / ${c.p99.toFixed(2)}`
  const row = (label, cell) => [label, ...all.map((b) => (results.has(b.key) ? cell(results.get(b.key)) : 'skipped'))]
  const rows = [
    row('authority mix, in-process submit(bytes) (Commands/s)', (r) => fmt(r.mixPerSec)),
    row('  vs in memory', (r) => x(r.mixPerSec, baseline.mixPerSec)),
    row(`message.post, in-process submit(), ${COMMANDS} (Commands/s)`, (r) => fmt(r.inProcess.perSec)),
    row('  p50 / p99 ms', (r) => ps(r.inProcess)),
    row('  vs in memory', (r) => x(r.inProcess.perSec, baseline.inProcess.perSec)),
    row(`WebSocket, 1 connection, ${COMMANDS} (Commands/s)`, (r) => fmt(r.one.perSec)),
    row('  p50 / p99 ms, to receipt', (r) => ps(r.one)),
    row('  vs in-process', (r) => x(r.one.perSec, r.inProcess.perSec)),
    row(`WebSocket, ${CONNECTIONS} connections, ${Math.ceil(COMMANDS / CONNECTIONS) * CONNECTIONS} (Commands/s)`, (r) => fmt(r.many.perSec)),
    row('  p50 / p99 ms, to receipt', (r) => ps(r.many)),
    row('  vs in-process', (r) => x(r.many.perSec, r.inProcess.perSec)),
    row(`fan-out, ${SUBSCRIBERS} subscribers x ${FANOUT_EVENTS} Events (Events/s)`, (r) => fmt(r.fan.perSec)),
    row('  p50 / p99 ms, commit to delivery', (r) => ps(r.fan)),
  ]
  const lines = [table(['wire', ...all.map((b) => b.label)], rows)]
  for (const [key, reason] of skipped) lines.push(`skipped: ${all.find((b) => b.key === key).label}: ${reason}`)

  const missed = all.flatMap((b) => (results.has(b.key) ? missedBy(b.label, results.get(b.key)) : []))
  const summary = {
    commands: COMMANDS,
    fanoutEvents: FANOUT_EVENTS,
    connections: CONNECTIONS,
    subscribers: SUBSCRIBERS,
    baseline: { backend: 'memory', mixSignedPerSec: Math.round(baseline.mixPerSec), inProcessPerSec: Math.round(baseline.inProcess.perSec) },
    backends: Object.fromEntries(all.map((b) => [b.key, { label: b.label, ...figures(results.get(b.key), baseline, skipped.get(b.key) ?? null) }])),
    targets: TARGETS,
    targetsMet: missed.length === 0,
    missed,
  }
  return { table: lines.join('\n'), summary, missed }
}

// `node bench/wire.mjs` runs the suite alone (built packages, or tsx with --conditions=@weft/source).
if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await run({ log: (line) => console.error(line) })
  console.log(result.table)
  console.log(JSON.stringify({ suite: 'wire', ...result.summary }))
}
