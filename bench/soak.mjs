// Soak benchmark (`npm run bench -- soak [--seconds N] [--json]`, never part of a plain `npm run
// bench`): `weft serve` (SQLite, plain ws on the loopback, default limits) as a child process, under
// a hostile mix for a few minutes (default 180 s) beside one legitimate Agent:
//
//   re-subscribers   3 Agents that stop reading their socket and send SUBSCRIBE from 0 every 500 ms
//   blind ACKers     2 Agents that stop reading, subscribe from 0 and ACK the head every 200 ms
//   PING flooders    2 Agents that stop reading and send PINGs as fast as their socket takes them
//   oversized        1 Agent sending COMMAND frames over the Authority's 1 MiB Command limit (and,
//                    every 20th, over the 2 MiB frame limit), and bodies over the control
//                    endpoint's limit
//   connection flood unauthenticated sockets from 127.0.0.2-11 that, with the Agents connected, fill
//                    the connection limit (1000), each reopened as the handshake timeout closes it,
//                    and one more each second from 127.0.0.12, which the limit refuses
//
// Each hostile Agent opens a new session whenever the server closes its connection. The legitimate
// Agent reads its Events (ACKing as it goes) and posts a signed message.post every 100 ms. Printed:
// the server's peak resident set (VmRSS of /proc/<pid>/status, sampled every 250 ms), the legitimate
// Agent's p50/p99 Command latency and its errors (refusals, feed errors, a gap or repeat in its
// Events, a lost connection), and what the hostile clients saw. The attackers run in a worker thread
// so that their work does not sit in the legitimate Agent's event loop; they share the machine's
// cores with the server, as the legitimate Agent does. Everything stays on loopback addresses, every
// loop ends at the deadline, and the server is stopped at the end. SOAK_NODE_ARGS (space-separated)
// go to the server's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it.
import { spawn } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads'
import { createClient } from '@weft/client'
import { connectWebSocket, helloTranscriptBytes } from '@weft/client/wire'
import { controlTransport, newOrganization, ORGANIZATION_FILE, writeOrganization } from '@weft/cli/serve'
import { encodeBase64url, keyPairFromSeed } from '@weft/codec'
import { WebSocket } from 'ws'
import { table } from './table.mjs'

const TARGETS = { peakRssMb: 300, p99Ms: 50, errors: 0 }
const DEFAULT_SECONDS = 180
/** History posted before the attack: each replay of the Group is about 2 MB. */
const SEEDED = 500
const SEEDED_TEXT = 4096
const MAX_CONNECTIONS = 1000
const GROUP = 'urn:weft:bench-soak:group:1'
const bin = join(import.meta.dirname, '..', 'packages', 'cli', 'bin', 'weft.mjs')

const person = (type, name, seed) => ({
  actor: { type, id: `urn:weft:bench-soak:${type}:${name}` },
  key: { keyId: `urn:weft:bench-soak:key:${name}`, pair: keyPairFromSeed(new Uint8Array(32).fill(seed)) },
})
const ROLES = { resubscriber: 3, acker: 2, pinger: 2, oversized: 1 }
const cast = {
  owner: person('human', 'owner', 41),
  coordinator: person('agent', 'coordinator', 42),
  legit: person('agent', 'legit', 43),
  hostile: Object.entries(ROLES).flatMap(([role, n], r) => Array.from({ length: n }, (_, i) => ({ role, seed: 60 + r * 8 + i, ...person('agent', `${role}-${i}`, 60 + r * 8 + i) }))),
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const iso = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

// ---------------------------------------------------------------------------------------------
// The attackers (worker thread)
// ---------------------------------------------------------------------------------------------

let frames = 0
const frameId = () => `urn:weft:bench-soak:frame:${++frames}`
const PING = () => JSON.stringify({ protocolVersion: '0.1', frameId: frameId(), frameType: 'PING', nonce: 'AAAAAAAAAAAAAAAAAAAAAA', sentAt: iso(Date.now()) })

/** Opens a socket from `localAddress`; resolves `undefined` when the upgrade is refused (HTTP 429/503) or fails. */
function open(url, counters, localAddress = '127.0.0.1') {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, { perMessageDeflate: false, localAddress })
    const closed = new Promise((done) => socket.once('close', (code) => done(code)))
    socket.once('open', () => resolve({ socket, closed }))
    socket.once('unexpected-response', (request, response) => {
      counters[`refused${response.statusCode}`] = (counters[`refused${response.statusCode}`] ?? 0) + 1
      request.destroy()
      resolve(undefined)
    })
    socket.once('error', () => resolve(undefined))
  })
}

/** A session of Agent `who` over a raw socket, or `undefined` when it could not open one. */
async function session(url, who, counters) {
  const opened = await open(url, counters)
  if (opened === undefined) return undefined
  const { socket } = opened
  const next = () => new Promise((resolve) => socket.once('message', (data) => resolve(JSON.parse(String(data)))))
  const clientNonce = encodeBase64url(new Uint8Array(32).fill(frames % 251))
  const base = { protocolVersion: '0.1', frameType: 'HELLO', agentId: who.actor.id, keyId: who.key.keyId, clientNonce }
  socket.send(JSON.stringify({ ...base, frameId: frameId(), phase: 'client_init', supportedVersions: ['0.1'] }))
  const challenge = await Promise.race([next(), opened.closed])
  if (challenge?.phase !== 'server_challenge') return socket.terminate()
  const transcript = helloTranscriptBytes({ agentId: who.actor.id, keyId: who.key.keyId, selectedVersion: '0.1', clientNonce, serverNonce: challenge.serverNonce, challenge: challenge.challenge })
  socket.send(JSON.stringify({ ...base, frameId: frameId(), phase: 'client_response', serverNonce: challenge.serverNonce, challengeSignature: encodeBase64url(who.key.pair.sign(transcript)) }))
  const accept = await Promise.race([next(), opened.closed])
  if (accept?.phase !== 'server_accept') return socket.terminate()
  counters.sessions++
  opened.closed.then((code) => (counters[`closed${code}`] = (counters[`closed${code}`] ?? 0) + 1))
  return opened
}

/** Runs `body` on a fresh session of `who` again and again until the deadline; a refused session waits a second. */
async function sessions(url, who, deadline, counters, body) {
  while (Date.now() < deadline) {
    const s = await session(url, who, counters)
    if (s === undefined) {
      await sleep(1000)
      continue
    }
    let closed = false
    s.closed.then(() => (closed = true))
    await body(s.socket, () => closed || Date.now() >= deadline)
    s.socket.terminate()
    await s.closed
  }
}

const subscribeFrame = () =>
  JSON.stringify({ protocolVersion: '0.1', frameId: frameId(), frameType: 'SUBSCRIBE', subscriptionId: `urn:weft:bench-soak:sub:${frames}`, groups: [{ groupId: GROUP, afterSequence: 0 }] })

async function attack({ url, controlUrl, deadline, hostile, initialHead }) {
  const counters = { sessions: 0, pings: 0, oversizedCommands: 0, oversizedErrors: 0, controlRefusals: 0, floodOpened: 0 }
  let head = initialHead
  parentPort.on('message', (m) => {
    if (typeof m.head === 'number') head = m.head
  })
  const roles = {
    async resubscriber(who) {
      await sessions(url, who, deadline, counters, async (socket, done) => {
        socket.pause()
        while (!done()) {
          socket.send(subscribeFrame())
          await sleep(500)
        }
      })
    },
    async acker(who) {
      await sessions(url, who, deadline, counters, async (socket, done) => {
        socket.pause()
        socket.send(subscribeFrame())
        while (!done()) {
          socket.send(JSON.stringify({ protocolVersion: '0.1', frameId: frameId(), frameType: 'ACK', acknowledgements: [{ groupId: GROUP, sequence: head }], sentAt: iso(Date.now()) }))
          await sleep(200)
        }
      })
    },
    async pinger(who) {
      await sessions(url, who, deadline, counters, async (socket, done) => {
        socket.pause()
        while (!done()) {
          // As fast as the socket takes them, keeping this client's own buffer small.
          if (socket.bufferedAmount < 1 << 20) {
            for (let i = 0; i < 500; i++) socket.send(PING())
            counters.pings += 500
          }
          await sleep(5)
        }
      })
    },
    async oversized(who) {
      // One signed message.post of 1.2 MB (over the 1 MiB Command limit) and one of 2.5 MB (over the 2 MiB frame limit).
      const client = createClient({ actor: who.actor, signingKey: who.key, transport: { submit: () => Promise.reject(new Error('not sent')) }, groupId: GROUP })
      const commandFrame = (size) => {
        const { command } = client.build(
          'message.post',
          { messageId: `urn:weft:bench-soak:message:oversized-${size}`, conversationId: 'urn:weft:bench-soak:conversation:any', content: [{ type: 'text', text: 'z'.repeat(size) }] },
          { membershipEpoch: 1, sessionEpoch: 1 },
        )
        return JSON.stringify({ protocolVersion: '0.1', frameId: frameId(), frameType: 'COMMAND', command })
      }
      const large = commandFrame(1_200_000)
      const huge = commandFrame(2_500_000)
      const body = large.slice(large.indexOf('"command":') + 10, -1)
      const control = (async () => {
        while (Date.now() < deadline) {
          const response = await fetch(new URL('/commands', controlUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body }).catch(() => undefined)
          if (response !== undefined && response.status !== 200) counters.controlRefusals++
          await response?.arrayBuffer().catch(() => undefined)
          await sleep(500)
        }
      })()
      await sessions(url, who, deadline, counters, async (socket, done) => {
        socket.on('message', () => counters.oversizedErrors++)
        for (let n = 1; !done(); n++) {
          if (socket.bufferedAmount < 4 << 20) {
            socket.send(n % 20 === 0 ? huge : large)
            counters.oversizedCommands++
          }
          await sleep(2)
        }
      })
      await control
    },
  }

  /** Unauthenticated sockets, `slots` of them from each address, each reopened once the server closed it. */
  const flood = async (address, slots) => {
    await Promise.all(
      Array.from({ length: slots }, async () => {
        while (Date.now() < deadline) {
          const opened = await open(url, counters, address)
          if (opened === undefined) {
            await sleep(1000)
            continue
          }
          counters.floodOpened++
          await Promise.race([opened.closed, sleep(Math.max(0, deadline - Date.now()))])
          opened.socket.terminate()
        }
      }),
    )
  }
  /** One more socket each second, from an address of its own: refused while the flood holds the limit. */
  const beyond = async () => {
    while (Date.now() < deadline) {
      const opened = await open(url, counters, '127.0.0.12')
      opened?.socket.terminate()
      await sleep(1000)
    }
  }
  // Up to the limit with the legitimate and the hostile Agents connected: what comes beyond is refused.
  const floodSize = MAX_CONNECTIONS - 9
  await Promise.all([
    // Key pairs do not cross to a worker thread: each is made again from its seed.
    ...hostile.map((who) => roles[who.role]({ actor: who.actor, key: { keyId: who.keyId, pair: keyPairFromSeed(new Uint8Array(32).fill(who.seed)) } })),
    ...Array.from({ length: 10 }, (_, i) => flood(`127.0.0.${i + 2}`, Math.floor(floodSize / 10) + (i < floodSize % 10 ? 1 : 0))),
    beyond(),
  ])
  parentPort.postMessage({ counters })
}

if (!isMainThread && workerData?.soak === true) await attack(workerData)

// ---------------------------------------------------------------------------------------------
// The server, the legitimate Agent and the report (main thread)
// ---------------------------------------------------------------------------------------------

function principalEntry(p) {
  const entry = { type: p.actor.type, id: p.actor.id, keyId: p.key.keyId, publicKey: encodeBase64url(p.key.pair.publicKey) }
  if (p.actor.type === 'human') return entry
  const name = p.actor.id.split(':').pop()
  const capability = {
    id: 'weft.bench-soak.work',
    version: '1.0.0',
    inputSchema: 'urn:weft:bench-soak:schema:in',
    inputSchemaHash: `sha256:${'a'.repeat(64)}`,
    outputSchema: 'urn:weft:bench-soak:schema:out',
    outputSchemaHash: `sha256:${'b'.repeat(64)}`,
    constraints: {},
    verifiedEvidence: ['urn:weft:bench-soak:evidence:capability'],
  }
  return {
    ...entry,
    card: { displayName: name, owner: cast.owner.actor, endpoints: [{ transport: 'wss', uri: `wss://agents.bench-soak.invalid/${name}` }], capabilities: [capability], maxConcurrency: 1 },
  }
}

/**
 * Starts `weft serve` on a new data directory; resolves with the child and its URLs. Its log goes
 * to a file, as a deployment's does, so that the server never waits for this process to read it.
 */
async function startServe(dir) {
  const org = newOrganization(new Date(Date.now() - 86_400_000))
  await writeOrganization(join(dir, ORGANIZATION_FILE), { ...org, principals: [cast.owner, cast.coordinator, cast.legit, ...cast.hostile].map(principalEntry) })
  const logFile = join(dir, 'serve.log')
  const fd = openSync(logFile, 'w')
  const child = spawn(process.execPath, [...(process.env.SOAK_NODE_ARGS ?? '').split(' ').filter(Boolean), bin, 'serve', '--data', dir, '--port', '0', '--insecure-loopback', '--control-port', '0'], {
    stdio: ['ignore', 'ignore', fd],
  })
  closeSync(fd)
  let exited
  child.once('exit', (code) => (exited = code))
  for (let waited = 0; waited < 60_000; waited += 50) {
    const lines = logLines(logFile)
    const listening = lines.find((l) => l.msg === 'listening')
    if (listening !== undefined) return { child, url: listening.url, controlUrl: listening.controlUrl, logFile }
    if (exited !== undefined) throw new Error(`weft serve exited (${exited}) before listening: ${readFileSync(logFile, 'utf8')}`)
    await sleep(50)
  }
  throw new Error('weft serve did not start listening within a minute')
}

/** The JSON lines of a log file. */
function logLines(file) {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((text) => {
      try {
        return [JSON.parse(text)]
      } catch {
        return []
      }
    })
}

function rssMb(pid) {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match === null ? 0 : Number(match[1]) / 1024
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0

/** Creates the Mission, enrols every Agent and posts the history; returns the conversation and the head. */
async function setUp(server) {
  const owner = createClient({ actor: cast.owner.actor, signingKey: cast.owner.key, transport: controlTransport(server.controlUrl), groupId: GROUP })
  const coordConn = await connectWebSocket({ url: server.url, actor: cast.coordinator.actor, signingKey: cast.coordinator.key, reconnect: false, heartbeatMs: 0 })
  const coordinator = createClient({ actor: cast.coordinator.actor, signingKey: cast.coordinator.key, transport: coordConn.transport, groupId: GROUP })
  coordinator.epochs.setSession(coordConn.sessionEpoch())
  const now = Date.now()
  const created = await owner.missionCreate(
    {
      missionId: 'urn:weft:bench-soak:mission:1',
      title: 'Soak',
      objective: 'Stay up.',
      definitionOfDone: [{ criterionId: 'up', description: 'It stays up.', evidenceRequired: ['human_review'] }],
      deadline: iso(now + 30 * 86_400_000),
      budget: { currency: 'USD', financialLimit: 100, modelTokenLimit: 1_000_000, toolCallLimit: 1000 },
      approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
      coordinatorAgentId: cast.coordinator.actor.id,
      coordinatorLeaseSeconds: 86_400,
    },
    { groupId: GROUP },
  )
  coordinator.observe(created.events)
  for (const who of [cast.legit, ...cast.hostile]) {
    const receipt = await coordinator.membershipChange({
      membershipId: `${GROUP}:membership:${who.actor.id.split(':').pop()}`,
      member: who.actor,
      role: 'worker',
      state: 'active',
      scopes: ['group:read'],
    })
    coordinator.observe(receipt.events)
  }
  await coordConn.close()
  owner.observe(created.events)
  const conversationId = created.events[0].payload.conversation.conversationId
  let head = 0
  for (let i = 0; i < SEEDED; i++) {
    const receipt = await owner.messagePost({ messageId: `urn:weft:bench-soak:message:seed-${i}`, conversationId, content: [{ type: 'text', text: 'h'.repeat(SEEDED_TEXT) }] })
    head = receipt.events[0].sequence
  }
  return { conversationId, head }
}

/** The legitimate Agent until `deadline`: reads every Event, posts every 100 ms; its latencies and errors. */
async function legitimate(server, conversationId, heads, deadline) {
  const head = heads.current
  const errors = []
  const latencies = []
  const conn = await connectWebSocket({ url: server.url, actor: cast.legit.actor, signingKey: cast.legit.key, reconnect: false })
  const client = createClient({ actor: cast.legit.actor, signingKey: cast.legit.key, transport: conn.transport, groupId: GROUP })
  client.epochs.setSession(conn.sessionEpoch())
  let closing = false
  conn.on('state', (s) => {
    if (s.status !== 'open' && !closing) errors.push(`connection ${s.status}`)
  })
  let last = 0
  let read = 0
  let caughtUp
  const caught = new Promise((resolve) => (caughtUp = resolve))
  conn.feed.subscribe([{ groupId: GROUP, afterSequence: 0 }], {
    onEvent(event) {
      // §16: in order, each once; the Agent sees the Group from its Membership on.
      if (last !== 0 && event.sequence !== last + 1) errors.push(`event ${event.sequence} after ${last}`)
      last = event.sequence
      read++
      client.observe([event])
      if (read % 50 === 0) void conn.feed.ack(GROUP, event.sequence)
      if (event.sequence >= head) caughtUp()
    },
    onError: (error) => errors.push(`feed ${error.code}`),
  })
  await caught
  let posted = 0
  while (Date.now() < deadline && conn.status === 'open') {
    const started = performance.now()
    try {
      const receipt = await client.messagePost({ messageId: `urn:weft:bench-soak:message:legit-${++posted}`, conversationId, content: [{ type: 'text', text: `Progress ${posted}.` }] })
      latencies.push(performance.now() - started)
      heads.moved(receipt.events[0].sequence)
    } catch (error) {
      errors.push(`command ${error?.code ?? error?.message}`)
    }
    await sleep(Math.max(0, 100 - (performance.now() - started)))
  }
  // Everything posted reaches the feed too.
  const until = Date.now() + 10_000
  while (last < heads.current && Date.now() < until) await sleep(50)
  if (last < heads.current) errors.push(`feed stopped at ${last} of ${heads.current}`)
  closing = true
  await conn.close()
  return { errors, latencies, read, posted }
}

/** @param {{ log: (line: string) => void, args?: readonly string[] }} options */
export async function run({ log, args = [] }) {
  const at = args.indexOf('--seconds')
  const seconds = at === -1 ? DEFAULT_SECONDS : Number(args[at + 1])
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error('--seconds takes a positive number')
  const dir = mkdtempSync(join(tmpdir(), 'weft-soak-'))
  const server = await startServe(dir)
  const pid = server.child.pid
  let sampler
  try {
    log(`soak: weft serve (pid ${pid}) at ${server.url}; posting ${SEEDED} Messages of history`)
    const { conversationId, head } = await setUp(server)
    const baseline = rssMb(pid)
    let peak = baseline
    sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 250)
    const deadline = Date.now() + seconds * 1000
    log(`soak: ${seconds} s of attack beside one legitimate Agent`)
    const hostile = cast.hostile.map((h) => ({ role: h.role, actor: h.actor, keyId: h.key.keyId, seed: h.seed }))
    const worker = new Worker(new URL(import.meta.url), { workerData: { soak: true, url: server.url, controlUrl: server.controlUrl, deadline, hostile, initialHead: head } })
    const attacked = new Promise((resolve, reject) => {
      worker.on('message', (m) => m.counters !== undefined && resolve(m.counters))
      worker.once('error', reject)
    })
    const heads = {
      current: head,
      /** The legitimate Agent's receipts move the head; the blind ACKers acknowledge it. */
      moved(sequence) {
        heads.current = Math.max(heads.current, sequence)
        worker.postMessage({ head: heads.current })
      },
    }
    const legit = await legitimate(server, conversationId, heads, deadline)
    const counters = await attacked
    await worker.terminate()
    clearInterval(sampler)
    peak = Math.max(peak, rssMb(pid))

    const lines = logLines(server.logFile)
    const serverBackpressureCloses = lines.filter((l) => l.msg === 'connection closed' && l.code === 'BACKPRESSURE').length
    const internalErrors = lines.filter((l) => l.code === 'INTERNAL_ERROR').length
    legit.latencies.sort((a, b) => a - b)
    const m = {
      peakRssMb: peak,
      baselineRssMb: baseline,
      p50Ms: percentile(legit.latencies, 50),
      p90Ms: percentile(legit.latencies, 90),
      p99Ms: percentile(legit.latencies, 99),
      maxMs: legit.latencies.at(-1) ?? 0,
      errors: legit.errors.length,
    }
    const met = { peakRssMb: m.peakRssMb < TARGETS.peakRssMb, p99Ms: m.p99Ms < TARGETS.p99Ms, errors: m.errors === TARGETS.errors }
    const yes = (ok) => (ok ? 'met' : 'MISSED')
    const rows = [
      ['peak server RSS (MB)', m.peakRssMb.toFixed(1), `< ${TARGETS.peakRssMb}`, yes(met.peakRssMb)],
      ['  RSS before the attack (MB)', m.baselineRssMb.toFixed(1), '', ''],
      ['legitimate p50 (ms)', m.p50Ms.toFixed(1), '', ''],
      ['legitimate p90 (ms)', m.p90Ms.toFixed(1), '', ''],
      ['legitimate p99 (ms)', m.p99Ms.toFixed(1), `< ${TARGETS.p99Ms}`, yes(met.p99Ms)],
      ['legitimate slowest (ms)', m.maxMs.toFixed(1), '', ''],
      ['legitimate errors', String(m.errors), `= ${TARGETS.errors}`, yes(met.errors)],
      ['  Commands / Events read', `${legit.latencies.length} / ${legit.read}`, '', ''],
      ['hostile sessions opened', String(counters.sessions), '', ''],
      ['  closed by the server for BACKPRESSURE (1013)', String(serverBackpressureCloses), '', ''],
      ['  closed for an oversized frame (1009)', String(counters.closed1009 ?? 0), '', ''],
      ['  PINGs sent', String(counters.pings), '', ''],
      ['  oversized COMMAND frames / answers', `${counters.oversizedCommands} / ${counters.oversizedErrors}`, '', ''],
      ['  oversized control bodies refused', String(counters.controlRefusals), '', ''],
      ['flood sockets opened / refused (503, 429)', `${counters.floodOpened} / ${counters.refused503 ?? 0}, ${counters.refused429 ?? 0}`, '', ''],
    ]
    if (legit.errors.length > 0) log(`soak: legitimate errors: ${legit.errors.slice(0, 10).join('; ')}`)
    if (internalErrors > 0) log(`soak: the server logged ${internalErrors} INTERNAL_ERROR lines`)
    const missed = Object.entries(met)
      .filter(([, ok]) => !ok)
      .map(([name]) => `${name} ${m[name]} (target ${name === 'errors' ? '=' : '<'} ${TARGETS[name]})`)
    return {
      table: table(['soak', 'value', 'target', ''], rows),
      summary: { seconds, ...m, met, legit: { commands: legit.latencies.length, events: legit.read }, hostile: counters, serverBackpressureCloses, internalErrors },
      missed,
    }
  } finally {
    clearInterval(sampler)
    server.child.kill('SIGTERM')
    const stopped = await Promise.race([new Promise((resolve) => server.child.once('exit', () => resolve(true))), sleep(15_000).then(() => false)])
    if (!stopped) server.child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}
