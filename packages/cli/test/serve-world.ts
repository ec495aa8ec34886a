/**
 * The test world of `weft serve`: a data directory with a small Organization (a human owner, a
 * Coordinator, two Workers and a reviewer with fixed keys), `weft serve` as a real child process
 * on a loopback port, Agents on the WebSocket binding, the owner on the control endpoint, and the
 * Commands that carry a Mission's WorkItems through their states. Waits are on log lines and
 * receipts, never on time.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createInterface } from 'node:readline'
import { createClient, type BuiltCommand, type Client, type Receipt, type Transport } from '@weft/client'
import { connectWebSocket, helloTranscriptBytes, TransportUnavailableError, type WebSocketConnection } from '@weft/client/wire'
import { encodeBase64url, keyPairFromSeed, ProtocolError, sign, type SigningKey } from '@weft/codec'
import type { Actor, Artifact, CommandPayload, Event, EventPayload, Evidence, Lease, WorkContract } from '@weft/spec'
import { openSqliteAuthorityStore } from '@weft/store-sqlite'
import { contract as testContract, PATCH_SCHEMA } from '@weft/testkit/work-contract'
import { expect } from 'vitest'
import { WebSocket } from 'ws'
import { controlTransport } from '../src/serve/control.js'
import { newOrganization, ORGANIZATION_FILE, STORE_FILE, writeOrganization, type PrincipalEntry } from '../src/serve/organization.js'

const CLI = fileURLToPath(new URL('..', import.meta.url))

/** A Principal of the test Organization with its key. */
export interface Person {
  readonly actor: Actor & { readonly type: 'human' | 'agent' }
  readonly key: SigningKey
}

/** A Principal `urn:weft:serve-test:<type>:<name>` whose key is the Ed25519 seed of 32 bytes `seed`. */
export function person(type: 'human' | 'agent', name: string, seed: number): Person {
  return { actor: { type, id: `urn:weft:serve-test:${type}:${name}` }, key: { keyId: `urn:weft:serve-test:key:${name}`, pair: keyPairFromSeed(new Uint8Array(32).fill(seed)) } }
}

/** The cast: the MissionOwner (human) and four Agents. */
export const people = {
  owner: person('human', 'owner', 31),
  coordinator: person('agent', 'coordinator', 32),
  worker1: person('agent', 'worker-1', 33),
  worker2: person('agent', 'worker-2', 34),
  reviewer: person('agent', 'reviewer', 35),
} as const

/** A cast member by name. */
export type Who = keyof typeof people

/** The one capability of the test Agents. */
export const CAPABILITY = { id: 'weft.serve-test.implementation', version: '1.0.0' }

const sha = (c: string): string => `sha256:${c.repeat(64)}`

/** The `principals` entry of `p`, with an Agent Card template for Agents. */
export function principalEntry(p: Person): PrincipalEntry {
  const base = { type: p.actor.type, id: p.actor.id, keyId: p.key.keyId, publicKey: encodeBase64url(p.key.pair.publicKey) }
  if (p.actor.type === 'human') return base
  const name = p.actor.id.split(':').pop()!
  return {
    ...base,
    card: {
      displayName: name,
      owner: people.owner.actor,
      endpoints: [{ transport: 'wss', uri: `wss://agents.serve-test.invalid/${name}` }],
      capabilities: [
        {
          ...CAPABILITY,
          inputSchema: 'urn:weft:serve-test:schema:in',
          inputSchemaHash: sha('a'),
          outputSchema: 'urn:weft:serve-test:schema:out',
          outputSchemaHash: sha('b'),
          constraints: {},
          verifiedEvidence: ['urn:weft:serve-test:evidence:capability'],
        },
      ],
      maxConcurrency: 2,
    },
  }
}

const made: string[] = []

/** A fresh temporary directory, removed by {@link removeTemporaryDirs}. */
export async function temporaryDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'weft-serve-'))
  made.push(dir)
  return dir
}

/** Removes every directory {@link temporaryDir} and {@link dataDir} made (run it after the servers stopped). */
export async function removeTemporaryDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
}

/** A fresh data directory whose `organization.json` registers the whole cast (as a user edits it after `--init`). */
export async function dataDir(): Promise<string> {
  const dir = await temporaryDir()
  // Backdated a day so every key is valid for the Commands signed now.
  const org = newOrganization(new Date(Date.now() - 86_400_000))
  await writeOrganization(join(dir, ORGANIZATION_FILE), { ...org, principals: Object.values(people).map(principalEntry) })
  return dir
}

/** One parsed line of the server log. */
export type LogLine = Record<string, unknown> & { readonly msg: string }

/** A `weft serve` child process. */
export interface ServeProcess {
  readonly child: ChildProcess
  readonly url: string
  readonly controlUrl: string
  /** Every log line so far, parsed. */
  readonly log: readonly LogLine[]
  /** Resolves with the first log line (past or future) `match` accepts. */
  waitLog(match: (line: LogLine) => boolean): Promise<LogLine>
  /** The exit code (or the signal) once the process ended. */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/** Node options that run the process under `umask 000`, as a careless shell would start it. */
export const UMASK_000: readonly string[] = ['--import', 'data:text/javascript,process.umask(0)']

/** How the `weft` bin runs the sources when `dist/` is absent (see {@link startServe}). */
export const WEFT: readonly string[] = ['--conditions=@weft/source', '--import', 'tsx', 'src/bin-run.ts']

/**
 * Starts `weft serve --data dir [...extra] --port 0 --insecure-loopback --control-port 0` and resolves once
 * it logs `listening`. The command line is the one `bin/weft.mjs` runs when `dist/` is absent
 * (`node --conditions=@weft/source --import tsx src/bin-run.ts`), started directly so that the
 * test's signals reach the server process itself rather than the launcher in front of it.
 * @param node - Options for `node` before those, e.g. {@link UMASK_000}.
 */
export async function startServe(dir: string, extra: readonly string[] = [], node: readonly string[] = []): Promise<ServeProcess> {
  const child = spawn(process.execPath, [...node, ...WEFT, 'serve', '--data', dir, ...extra, '--port', '0', '--insecure-loopback', '--control-port', '0'], {
    cwd: CLI,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const log: LogLine[] = []
  const waiting: { match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = []
  const stderr: string[] = []
  createInterface({ input: child.stderr! }).on('line', (text) => {
    let line: LogLine
    try {
      line = JSON.parse(text) as LogLine
    } catch {
      stderr.push(text)
      return
    }
    log.push(line)
    for (const w of [...waiting]) {
      if (!w.match(line)) continue
      waiting.splice(waiting.indexOf(w), 1)
      w.resolve(line)
    }
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  const waitLog = (match: (line: LogLine) => boolean): Promise<LogLine> => {
    const found = log.find(match)
    if (found !== undefined) return Promise.resolve(found)
    return new Promise((resolve, reject) => {
      waiting.push({ match, resolve })
      void exited.then(({ code, signal }) => reject(new Error(`weft serve exited (${code ?? signal}) first: ${stderr.join('\n')}`)))
    })
  }
  const listening = await waitLog((l) => l.msg === 'listening')
  return { child, url: listening['url'] as string, controlUrl: listening['controlUrl'] as string, log, waitLog, exited }
}

// ---------------------------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------------------------

/** Clients of the cast that all see every receipt, as subscribers of the Group would (§16). */
export interface Party {
  /** The owner on the control endpoint. */
  readonly owner: Client
  /** Every receipt any client of the party got, in arrival order. */
  readonly receipts: readonly Receipt[]
  /** Connects Agent `who` over the wire and returns its client (`reconnect: false`: a lost server stays lost). */
  connect(who: Exclude<Who, 'owner'>, url?: string): Promise<Client>
  /** Closes every connection. */
  close(): Promise<void>
}

/**
 * A {@link Party} talking to `server` (the Agents' default URL) for the Group `groupId`; its
 * clients learn their epochs from `history` (a stored log, after a restart) and every receipt.
 */
export function party(server: Pick<ServeProcess, 'url' | 'controlUrl'>, groupId: string, history: readonly Event[] = []): Party {
  const clients: Client[] = []
  const connections: WebSocketConnection[] = []
  // Every Event seen, so an Agent connecting later learns its epochs too.
  const seen: Event[] = [...history]
  const receipts: Receipt[] = []
  const shared = (inner: Transport): Transport => ({
    async submit(command, bytes) {
      const receipt = await inner.submit(command, bytes)
      receipts.push(receipt)
      seen.push(...receipt.events)
      for (const c of clients) c.observe(receipt.events)
      return receipt
    },
  })
  const owner = createClient({ actor: people.owner.actor, signingKey: people.owner.key, transport: shared(controlTransport(server.controlUrl)), groupId })
  owner.observe(seen)
  clients.push(owner)
  return {
    owner,
    receipts,
    async connect(who, url = server.url) {
      const { actor, key } = people[who]
      const conn = await connectWebSocket({ url, actor, signingKey: key, reconnect: false, heartbeatMs: 0 })
      connections.push(conn)
      const client = createClient({ actor, signingKey: key, transport: shared(conn.transport), groupId })
      client.observe(seen)
      client.epochs.setSession(conn.sessionEpoch())
      clients.push(client)
      return client
    },
    async close() {
      await Promise.all(connections.map((c) => c.close()))
    },
  }
}

/** The code an attempt to open a session of `who` on `server` fails with (§19), or `open` (the session is closed again). */
export function handshakeOutcome(server: Pick<ServeProcess, 'url'>, who: Exclude<Who, 'owner'>): Promise<string> {
  const { actor, key } = people[who]
  return connectWebSocket({ url: server.url, actor, signingKey: key, reconnect: false, heartbeatMs: 0 }).then(
    async (c) => {
      await c.close()
      return 'open'
    },
    (e: unknown) => (e instanceof ProtocolError ? e.code : String(e)),
  )
}

/** A frame as it arrives, parsed. */
export type Frame = Record<string, unknown> & { readonly frameType: string }

/** A raw WebSocket with its session open: the frames it read since, and each next one. */
export interface RawSession {
  readonly socket: WebSocket
  /** Every frame read after `server_accept`, in order. */
  readonly frames: Frame[]
  /** The next frame read. */
  next(): Promise<Frame>
  /** The close code, once the socket closed. */
  readonly closed: Promise<number>
}

/** A raw WebSocket of `who` with its session open: every frame it reads is kept. */
export async function rawSession(url: string, who: Exclude<Who, 'owner'>): Promise<RawSession> {
  const socket = new WebSocket(url, { perMessageDeflate: false })
  const frames: Frame[] = []
  const waiting: ((frame: Frame) => void)[] = []
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as Frame
    frames.push(frame)
    waiting.shift()?.(frame)
  })
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)))
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
  const next = (): Promise<Frame> => new Promise((resolve) => waiting.push(resolve))
  const { actor, key } = people[who]
  const clientNonce = encodeBase64url(new Uint8Array(32).fill(7))
  socket.send(
    JSON.stringify({
      protocolVersion: '0.1',
      frameId: 'urn:weft:serve-test:frame:init',
      frameType: 'HELLO',
      phase: 'client_init',
      agentId: actor.id,
      keyId: key.keyId,
      clientNonce,
      supportedVersions: ['0.1'],
    }),
  )
  const challenge = (await next()) as Frame & { serverNonce: string; challenge: string }
  const transcript = helloTranscriptBytes({ agentId: actor.id, keyId: key.keyId, selectedVersion: '0.1', clientNonce, serverNonce: challenge.serverNonce, challenge: challenge.challenge })
  socket.send(
    JSON.stringify({
      protocolVersion: '0.1',
      frameId: 'urn:weft:serve-test:frame:response',
      frameType: 'HELLO',
      phase: 'client_response',
      agentId: actor.id,
      keyId: key.keyId,
      clientNonce,
      serverNonce: challenge.serverNonce,
      challengeSignature: encodeBase64url(key.pair.sign(transcript)),
    }),
  )
  expect(await next()).toMatchObject({ frameType: 'HELLO', phase: 'server_accept' })
  frames.length = 0
  return { socket, frames, next, closed }
}

// ---------------------------------------------------------------------------------------------
// Documents
// ---------------------------------------------------------------------------------------------

/** A day in milliseconds. */
export const DAY = 86_400_000
/** `ms` as a second-precision RFC 3339 timestamp. */
export const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

/**
 * The instant the kit's deadlines count from, fixed when a test file loads: a child WorkItem given
 * the same number of days as its parent then has the same deadline (§10.1 forbids a later one),
 * even when a second boundary passes between the two authorizations.
 */
const DEADLINES_FROM_MS = Date.now()

/** The `mission.create` payload of a Mission coordinated by the cast's Coordinator. */
export function missionPayload(name: string): CommandPayload<'mission.create'> {
  return {
    missionId: `urn:weft:serve-test:mission:${name}`,
    title: `Mission ${name}`,
    objective: 'Ship the feature behind the flag.',
    definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
    deadline: iso(DEADLINES_FROM_MS + 30 * DAY),
    budget: { currency: 'USD', financialLimit: 100, modelTokenLimit: 1_000_000, toolCallLimit: 1000 },
    approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    coordinatorAgentId: people.coordinator.actor.id,
    coordinatorLeaseSeconds: 86_400,
  }
}

/** The kit's Work Contract (§10.1) with budget `budget`, due in `deadlineDays`, requiring {@link CAPABILITY}. */
export function contract(budget: WorkContract['budget'], deadlineDays = 20): WorkContract {
  return testContract({ goal: 'Implement the change.', requiredCapabilities: [CAPABILITY], deadline: iso(DEADLINES_FROM_MS + deadlineDays * DAY), budget })
}

/** The selection basis of an offer to holders of {@link CAPABILITY}. */
export function selection(): CommandPayload<'work.offer'>['selectionBasis'] {
  return {
    requiredCapabilities: [CAPABILITY],
    verifiedMatches: [CAPABILITY],
    authorizationEligible: true,
    availabilityEstimate: iso(Date.now()),
    expectedCost: 1,
    reliabilityEvidence: [],
    policyRulesApplied: ['weft.serve-test.first-fit'],
  }
}

/** Passing Evidence for `tests-pass` of a WorkItem, by `by`. */
export function evidence(missionId: string, groupId: string, workItemId: string, by: Person): Evidence {
  return sign(
    'evidence',
    {
      evidenceId: `urn:weft:serve-test:evidence:${by.actor.id.split(':').pop()}:${workItemId.split(':').pop()}`,
      missionId,
      groupId,
      workItemId,
      type: 'deterministic_test',
      subject: { type: 'work_item', id: workItemId },
      criterionIds: ['tests-pass'],
      method: 'Ran the test suite.',
      result: 'passed',
      artifactHashes: [],
      generatedBy: by.actor,
      createdAt: iso(Date.now()),
    },
    by.key,
  ) as unknown as Evidence
}

/** An Artifact manifest of a WorkItem produced by `by` (the bytes stay outside the log, §13.1). */
export function artifact(missionId: string, groupId: string, workItemId: string, by: Person): Artifact {
  const contentHash = sha('c')
  return sign(
    'artifact',
    {
      artifactId: `urn:weft:serve-test:artifact:${workItemId.split(':').pop()}`,
      contentHash,
      uri: `https://blobs.serve-test.invalid/${contentHash.slice(7)}`,
      sizeBytes: 64,
      mediaType: 'text/x-diff',
      schemaUri: PATCH_SCHEMA,
      producer: { agentId: by.actor.id, agentCardVersion: 1, capabilities: [CAPABILITY] },
      missionId,
      groupId,
      workItemId,
      sourceArtifactHashes: [],
      toolVersions: [{ name: 'weft-serve-test', version: '1.0.0' }],
      modelVersions: [{ provider: 'test', model: 'test-model', version: '2026-01' }],
      classification: 'internal',
      createdAt: iso(Date.now()),
    },
    by.key,
  ) as unknown as Artifact
}

/** The Group ID of Mission `name`. */
export function groupOf(name: string): string {
  return `urn:weft:serve-test:group:${name}`
}

/** Opens Mission `name` as the owner and enrols the Workers and the reviewer as the Coordinator. */
export async function openMission(p: Party, coordinator: Client, name: string): Promise<Receipt> {
  const receipt = await p.owner.missionCreate(missionPayload(name), { groupId: groupOf(name) })
  const enrol = (who: Who, role: 'worker' | 'reviewer') =>
    coordinator.membershipChange({ membershipId: `${groupOf(name)}:membership:${who}`, member: people[who].actor, role, state: 'active', scopes: ['group:read'] })
  await enrol('worker1', 'worker')
  await enrol('worker2', 'worker')
  await enrol('reviewer', 'reviewer')
  return receipt
}

/** `urn:weft:serve-test:work:<name>`. */
export function wid(name: string): string {
  return `urn:weft:serve-test:work:${name}`
}

/** The Coordinator authorizes WorkItem `name` with a budget of money, tokens and tool calls, below WorkItem `parent` when given. */
export function authorizeWork(
  coordinator: Client,
  name: string,
  [financialLimit, modelTokenLimit, toolCallLimit]: readonly [number, number, number],
  options: { readonly parent?: string; readonly deadlineDays?: number } = {},
): Promise<Receipt> {
  const terms = contract({ currency: 'USD', financialLimit, modelTokenLimit, toolCallLimit }, options.deadlineDays)
  return coordinator.workAuthorize({ workItemId: wid(name), contract: terms, ...(options.parent === undefined ? {} : { parentWorkItemId: wid(options.parent) }) })
}

/** The Coordinator offers WorkItem `name` to `to` alone. */
export function offerWork(coordinator: Client, name: string, to: Client): Promise<Receipt> {
  return coordinator.workOffer({ workItemId: wid(name), candidateAgentIds: [to.actor.id], selectionBasis: selection(), offerExpiresInSeconds: 600 })
}

/** `worker` accepts its offer of `name` and starts it; returns the Ownership Epoch and Execution Lease ID. */
export async function acceptAndStart(worker: Client, name: string): Promise<{ readonly epoch: number; readonly leaseId: string }> {
  const accepted = await worker.workAcceptOffer({ workItemId: wid(name), ownershipLeaseSeconds: 3600 })
  const epoch = (accepted.events[0]!.payload as EventPayload<'work.offer.accepted'>).ownershipEpoch
  const started = await worker.workStart({ workItemId: wid(name), ownershipEpoch: epoch, executionLeaseSeconds: 600 })
  const payload = started.events.find((e) => e.kind === 'work.started')!.payload as EventPayload<'work.started'>
  return { epoch, leaseId: (payload.executionLease as Lease).leaseId }
}

/** A signal to the child and its exit. */
export async function stop(server: ServeProcess, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  server.child.kill(signal)
  return server.exited
}

/** After a file's tests: closes the parties' connections, kills the servers still running and removes the temporary directories. */
export async function tearDown(servers: readonly ServeProcess[], parties: readonly Party[] = []): Promise<void> {
  await Promise.all(parties.map((p) => p.close()))
  await Promise.all(servers.filter((s) => s.child.exitCode === null).map((s) => stop(s, 'SIGKILL')))
  await removeTemporaryDirs()
}

// ---------------------------------------------------------------------------------------------
// Load and the stored log
// ---------------------------------------------------------------------------------------------

/** What a {@link postLoad} saw of each Command it built. */
export interface Load {
  /** Every Command built, by Action ID, in build order. */
  readonly sent: Map<string, BuiltCommand>
  /** The receipts that came back, by Action ID. */
  readonly acknowledged: Map<string, Receipt>
  /** Commands without an answer: the connection went down with them sent or about to be (§15.1: resend unchanged). */
  readonly unanswered: Set<string>
  /** Refusals by Action ID (none expected). */
  readonly refused: Map<string, string>
}

let posts = 0

/**
 * Posts Messages in `conversationId` as `client`, `window` Commands in flight at a time, until
 * the connection fails; `onReceipt(n)` is told the count of receipts so far (a test stops the
 * server from there).
 */
export async function postLoad(client: Client, conversationId: string, onReceipt: (n: number) => void, window = 8): Promise<Load> {
  const load: Load = { sent: new Map(), acknowledged: new Map(), unanswered: new Set(), refused: new Map() }
  let down = false
  const lane = async (): Promise<void> => {
    while (!down) {
      const built = client.build('message.post', { messageId: `urn:weft:serve-test:message:${process.pid}-${++posts}`, conversationId, content: [{ type: 'text', text: `Progress ${posts}.` }] })
      const actionId = built.command.actionId
      load.sent.set(actionId, built)
      try {
        load.acknowledged.set(actionId, await client.resend(built))
        onReceipt(load.acknowledged.size)
      } catch (error) {
        if (error instanceof TransportUnavailableError) {
          load.unanswered.add(actionId)
          down = true
        } else load.refused.set(actionId, (error as { code?: string }).code ?? String(error))
      }
    }
  }
  await Promise.all(Array.from({ length: window }, lane))
  return load
}

/** The stored log of a data directory: every Group's Events, read from the SQLite file. */
export function storedGroupLog(dir: string, groupId: string): Event[] {
  const store = openSqliteAuthorityStore(join(dir, STORE_FILE))
  try {
    return [...store.groupEvents(groupId)]
  } finally {
    store.close()
  }
}

/**
 * The laws a stored Group log keeps after any stop (§4, §15.2, §16): sequences run 1..n; every
 * receipt the clients got has its Events in the log, once each, at its sequences; and every Event
 * was caused by a Command some client sent: `known` (answered setup Commands), or the load's
 * Commands, acknowledged or unanswered, each at most one transaction.
 * Returns the Action IDs of the unanswered Commands that did land.
 */
export function checkLog(log: readonly Event[], known: readonly Receipt[], load: Load): Set<string> {
  expect(log.map((e) => e.sequence)).toEqual(log.map((_, i) => i + 1))
  const ids = log.map((e) => e.eventId)
  expect(new Set(ids).size).toBe(ids.length)
  const byId = new Map(log.map((e) => [e.eventId, e]))
  for (const receipt of [...known, ...load.acknowledged.values()]) {
    for (const event of receipt.events) {
      if (event.groupId === undefined) continue
      expect(byId.get(event.eventId)?.sequence).toBe(event.sequence)
    }
  }
  const causes = new Map<string, number>()
  for (const event of log) causes.set(event.cause.id, (causes.get(event.cause.id) ?? 0) + 1)
  const knownIds = new Set(known.map((r) => r.actionId))
  const strangers = [...causes.keys()].filter((id) => !knownIds.has(id) && !load.sent.has(id))
  expect(strangers).toEqual([])
  // message.post is one Event per transaction: a Command applied twice would show up as two.
  for (const id of load.sent.keys()) expect(causes.get(id) ?? 0).toBeLessThanOrEqual(1)
  for (const id of load.acknowledged.keys()) expect(causes.get(id)).toBe(1)
  return new Set([...load.unanswered].filter((id) => causes.has(id)))
}
