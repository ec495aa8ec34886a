// Worker ingestion benchmark: accepted Group Events through the Worker's inbox (dedupe, gap hold,
// one atomic append per contiguous run into the memory store) into its per-Group projection, and
// the rebuild of that projection from a stored log, against a baseline measured in the same run.
//
//   receive      inbox.receive(event), one Event at a time, in order (the live path)
//   batch        inbox.receiveMany(page) with pages of 500 Events (the replay path)
//   disordered   the log cut into pages, each page shuffled with 10% repeats, via receiveMany
//   baseline     a bare loop pushing a JSON copy of each Event onto an array: the cost of merely
//                keeping a copy of what arrives, with no ordering, dedupe or folding
//   rebuild      createInbox(...).rebuild() over a fresh projection from the stored log
//
// fabricateLog builds the log: WorkItem lifecycles across Groups, envelopes per
// spec/src/documents/event.ts and WorkItem payloads per spec/src/payloads/events.ts, with the
// Mission, Work Contract and Evidence documents taken from the valid conformance vectors of the
// protocol bundle and re-addressed. The genesis payload is cut to the Mission and Group documents
// the Worker reads, and signatures are placeholders (the inbox does not verify; the feed delivers
// Events the authority accepted).
// WEFT_BENCH_EVENTS sets the log size (default 100000).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { locateBundle } from '@weft/spec/bundle'
import { createInbox, createMemoryWorkerStore, createProjection } from '@weft/worker'
import { fmt, median, table } from './table.mjs'

const EVENTS = Number(process.env.WEFT_BENCH_EVENTS ?? 100_000)
const GROUPS = 8
const ROUNDS = 5
const PAGE = 500
const TARGETS = { receivePerSec: 100_000, rebuildMs: 1_000 }

const T0_MS = Date.parse('2026-07-15T00:00:00.000Z')
const SELF = 'urn:weft:bench:agent:worker-1'
const COORDINATOR = 'urn:weft:bench:agent:coordinator'
const AUTHORITY = { type: 'service', id: 'urn:weft:bench:service:authority' }
const SIGNATURE = { algorithm: 'Ed25519', keyId: 'urn:weft:bench:key:authority', createdAt: '2026-07-15T00:00:00.000Z', value: 'placeholder' }
const HASH = `sha256:${'ab'.repeat(32)}`

const iso = (seconds) => new Date(T0_MS + seconds * 1000).toISOString()

/** A valid conformance vector of the protocol bundle, with a placeholder signature where it has one. */
function vector(name) {
  const location = locateBundle()
  if (!location.found) throw new Error(location.reason)
  const document = JSON.parse(readFileSync(join(location.dir, 'conformance/vectors/valid', `${name}.json`), 'utf8'))
  return 'signature' in document ? { ...document, signature: SIGNATURE } : document
}

let vectors
/** The Mission, Work Contract and Evidence documents the log re-addresses, read once. */
const documentsOf = () => (vectors ??= { mission: vector('mission'), contract: vector('work-contract'), evidence: vector('evidence') })

/** One Group's Event stream: genesis, then one WorkItem lifecycle after another, each depending on the previous one. */
function* groupStream(g) {
  const groupId = `urn:weft:bench:group:${g}`
  const missionId = `urn:weft:bench:mission:${g}`
  const revisions = new Map()
  let sequence = 0
  const event = (kind, payload, actor, aggregate) => {
    sequence++
    const revision = (revisions.get(aggregate) ?? 0) + 1
    revisions.set(aggregate, revision)
    const eventId = `urn:weft:bench:event:${g}:${sequence}`
    const workItemId = payload.workItemId ?? payload.workItem?.workItemId
    return {
      protocolVersion: '0.1',
      eventId,
      groupId,
      sequence,
      aggregateRevision: revision,
      kind,
      actor: actor === undefined ? AUTHORITY : { type: 'agent', id: actor },
      cause: { type: 'command', id: `urn:weft:bench:action:${g}:${sequence}` },
      correlationId: `urn:weft:bench:correlation:${g}`,
      ...(workItemId === undefined ? {} : { workItemId }),
      occurredAt: iso(sequence),
      payload,
      acceptedBy: AUTHORITY,
      signature: SIGNATURE,
    }
  }
  const lease = (workItemId, n, at) => ({
    leaseId: `${workItemId}:lease:${n}`,
    leaseType: 'execution',
    missionId,
    groupId,
    workItemId,
    holderAgentId: SELF,
    sessionEpoch: 1,
    ownershipEpoch: 1,
    issuedAt: iso(at),
    startsAt: iso(at),
    expiresAt: iso(at + 600),
    state: 'active',
    renewalCount: 0,
  })
  const { mission: missionVector, contract, evidence: evidenceVector } = documentsOf()
  const evidence = (workItemId) => ({ ...evidenceVector, evidenceId: `${workItemId}:evidence`, missionId, groupId, workItemId, createdAt: iso(sequence) })
  const mission = { ...missionVector, missionId, groupId, revision: 1, state: 'active', createdAt: iso(0) }
  yield event('mission.created', { mission, group: { groupId, missionId, state: 'active', mainConversationId: `${groupId}:conversation`, createdAt: iso(0) } }, undefined, 'mission')
  let previous
  for (let n = 1; ; n++) {
    const id = `urn:weft:bench:work:${g}:${n}`
    const w = `work:${id}`
    const checkpoint = { phase: 'build', completedMilestones: ['parsed'], nextStep: 'test', stateArtifactHash: HASH, createdAt: iso(sequence) }
    const workItem = {
      workItemId: id,
      missionId,
      groupId,
      conversationId: `${id}:conversation`,
      revision: 1,
      state: 'open',
      exclusive: true,
      contract: { ...contract, contractVersion: 1, dependencyWorkItemIds: previous ? [previous] : [] },
      createdBy: { type: 'agent', id: COORDINATOR },
      createdAt: iso(sequence),
    }
    yield event('work.authorized', { workItem, dependencyIds: workItem.contract.dependencyWorkItemIds }, COORDINATOR, w)
    yield event(
      'work.offer.created',
      {
        workItemId: id,
        candidateAgentIds: [SELF],
        offers: [{ offerId: `${id}:offer`, agentId: SELF, agentCardVersion: 1, expiresAt: iso(sequence + 600), status: 'pending' }],
        offerExpiresAt: iso(sequence + 600),
        selectionBasis: {
          requiredCapabilities: contract.requiredCapabilities,
          verifiedMatches: contract.requiredCapabilities,
          authorizationEligible: true,
          availabilityEstimate: iso(sequence),
          expectedCost: 1,
          reliabilityEvidence: [],
          policyRulesApplied: ['default'],
        },
      },
      COORDINATOR,
      w,
    )
    yield event(
      'work.offer.accepted',
      {
        workItemId: id,
        assigneeId: SELF,
        sessionEpoch: 1,
        ownershipEpoch: 1,
        ownershipLeaseId: `${id}:ownership`,
        ownershipLeaseExpiresAt: iso(sequence + 3600),
        startBy: iso(sequence + 1800),
        agentCardVersion: 1,
        capabilityPins: contract.requiredCapabilities,
        withdrawnAgentIds: [],
      },
      SELF,
      w,
    )
    for (const n of [1, 2]) {
      const executionLease = lease(id, n, sequence)
      yield event('work.started', { workItemId: id, ownershipEpoch: 1, executionLease, executionLeaseExpiresAt: executionLease.expiresAt }, SELF, w)
      if (n === 1) {
        yield event(
          'work.progressed',
          { workItemId: id, ownershipEpoch: 1, executionLease: { ...executionLease, renewalCount: 1, lastRenewedAt: iso(sequence) }, executionLeaseExpiresAt: iso(sequence + 900) },
          SELF,
          w,
        )
        yield event('work.checkpointed', { workItemId: id, ownershipEpoch: 1, executionLeaseId: executionLease.leaseId, checkpoint, resumeBy: iso(sequence + 1200) }, SELF, w)
      }
    }
    yield event(
      'ext.missionweaveprotocol.core.resource_usage_recorded',
      {
        workItemId: id,
        executionLeaseId: `${id}:lease:2`,
        ownershipEpoch: 1,
        usageDelta: { modelTokens: 100 },
        cumulativeUsage: { financialMicrounits: 0, modelTokens: 100, toolCalls: 0, computeSeconds: 0, wallClockSeconds: 0, externalActions: 0 },
        remainingBudget: { modelTokens: 9900 },
      },
      SELF,
      w,
    )
    yield event('work.submitted', { workItemId: id, ownershipEpoch: 1, executionLeaseId: `${id}:lease:2`, artifactIds: [`${id}:artifact`], artifactHashes: [HASH], evidence: [evidence(id)] }, SELF, w)
    yield event('work.result.accepted', { workItemId: id, evidence: [evidence(id)] }, COORDINATOR, w)
    yield event(
      'message.posted',
      {
        messageId: `${id}:message`,
        missionId,
        groupId,
        conversationId: `${groupId}:conversation`,
        author: { type: 'agent', id: COORDINATOR },
        kind: 'message',
        authority: false,
        content: [{ type: 'text', text: `${id} done` }],
        committedAt: iso(sequence),
      },
      COORDINATOR,
      `message:${n}`,
    )
    previous = id
  }
}

/**
 * A realistic Event log of `events` Events over `groups` Groups: each Group opens with
 * `mission.created`, then runs WorkItem lifecycles (authorize, offer, accept, start, renew,
 * checkpoint, start, usage, submit, verify, Message), each depending on the one before. The
 * Groups are interleaved Event by Event, as one feed would deliver them; each is contiguous.
 * @param {number} events @param {number} groups @returns {object[]}
 */
export function fabricateLog(events, groups) {
  const streams = Array.from({ length: groups }, (_, g) => groupStream(g + 1))
  const log = []
  for (let i = 0; log.length < events; i = (i + 1) % groups) log.push(streams[i].next().value)
  return log
}

/** A deterministic shuffle (mulberry32). */
function shuffle(items, seed) {
  let s = seed >>> 0
  const random = () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[items[i], items[j]] = [items[j], items[i]]
  }
  return items
}

/** The log cut into pages, each shuffled with a 10% sample of its Events repeated: reordering within a window, as around reconnects. */
function disordered(log) {
  const out = []
  for (let i = 0; i < log.length; i += PAGE) {
    const page = log.slice(i, i + PAGE)
    out.push(shuffle([...page, ...page.filter((_, k) => k % 10 === 0)], i + 1))
  }
  return out
}

/** Times `fn` and returns events per second and elapsed ms. */
function timed(events, fn) {
  const start = performance.now()
  fn()
  const elapsedMs = performance.now() - start
  return { perSec: (events * 1000) / elapsedMs, elapsedMs }
}

const freshInbox = (store = createMemoryWorkerStore()) => {
  const projection = createProjection(SELF)
  return { store, projection, inbox: createInbox({ store, projection }) }
}

/** @param {{ log: (line: string) => void }} options */
export async function ingestCases({ log }) {
  log(`worker ingest: fabricating ${EVENTS} Events over ${GROUPS} Groups`)
  const events = fabricateLog(EVENTS, GROUPS)
  const pages = Array.from({ length: Math.ceil(events.length / PAGE) }, (_, i) => events.slice(i * PAGE, (i + 1) * PAGE))
  const shuffled = disordered(events)
  const deliveries = shuffled.reduce((n, page) => n + page.length, 0)
  const samples = { receive: [], batch: [], disordered: [], baseline: [], rebuildMs: [] }
  let ready = 0
  for (let round = 0; round < ROUNDS; round++) {
    const one = freshInbox()
    samples.receive.push(
      timed(events.length, () => {
        for (const e of events) one.inbox.receive(e)
      }).perSec,
    )
    const many = freshInbox()
    samples.batch.push(
      timed(events.length, () => {
        for (const page of pages) many.inbox.receiveMany(page)
      }).perSec,
    )
    const messy = freshInbox()
    samples.disordered.push(
      timed(deliveries, () => {
        for (const page of shuffled) messy.inbox.receiveMany(page)
      }).perSec,
    )
    if (messy.inbox.cursor(events[0].groupId) !== one.inbox.cursor(events[0].groupId)) throw new Error('disordered delivery did not converge')
    const copies = []
    samples.baseline.push(
      timed(events.length, () => {
        for (const e of events) copies.push(JSON.parse(JSON.stringify(e)))
      }).perSec,
    )
    const again = freshInbox(one.store)
    const rebuilt = timed(events.length, () => again.inbox.rebuild())
    if (again.projection.group(events[0].groupId).head !== one.projection.group(events[0].groupId).head) throw new Error('rebuild did not reach the live head')
    samples.rebuildMs.push(rebuilt.elapsedMs)
    ready = again.projection.readyForMe().length
    log(`  round ${round + 1} of ${ROUNDS}`)
  }
  const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]))
  const missed = []
  if (m.receive < TARGETS.receivePerSec) missed.push(`receive ${fmt(m.receive)} Events/s < ${fmt(TARGETS.receivePerSec)}`)
  if (m.rebuildMs > TARGETS.rebuildMs) missed.push(`rebuild of ${fmt(events.length)} Events ${m.rebuildMs.toFixed(0)} ms > ${TARGETS.rebuildMs} ms`)
  const ratio = (x) => `${(x / m.baseline).toFixed(2)}x`
  const rows = [
    ['inbox.receive, in order (Events/s)', fmt(m.receive), fmt(m.baseline), ratio(m.receive), `>= ${fmt(TARGETS.receivePerSec)}`],
    [`inbox.receiveMany, pages of ${PAGE} (Events/s)`, fmt(m.batch), fmt(m.baseline), ratio(m.batch), ''],
    ['receiveMany, shuffled pages + 10% repeats (deliveries/s)', fmt(m.disordered), fmt(m.baseline), ratio(m.disordered), ''],
    ['baseline: push a JSON copy of each Event (Events/s)', fmt(m.baseline), '', '', ''],
    [`rebuild from a ${fmt(events.length)}-Event memory store (ms)`, m.rebuildMs.toFixed(0), '', '', `<= ${TARGETS.rebuildMs}`],
  ]
  const round = (x) => Math.round(x)
  const summary = {
    events: events.length,
    groups: GROUPS,
    receiveEventsPerSec: round(m.receive),
    batchEventsPerSec: round(m.batch),
    disorderedDeliveriesPerSec: round(m.disordered),
    baselineJsonCopyPerSec: round(m.baseline),
    receiveVsBaseline: +(m.receive / m.baseline).toFixed(3),
    rebuildMs: +m.rebuildMs.toFixed(1),
    readyAfterRebuild: ready,
    targets: TARGETS,
    targetsMet: missed.length === 0,
    missed,
  }
  return { rows, summary, missed }
}

/** The suite entry of bench/run.mjs. */
export async function run({ log }) {
  const { rows, summary, missed } = await ingestCases({ log })
  return { table: table(['worker ingest', 'weft', 'baseline', 'ratio', 'target'], rows), summary, missed }
}
