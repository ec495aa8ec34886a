/**
 * Model-based test of the Group Authority against the §10.2 WorkItem statechart (STYLE §13):
 * fast-check generates random sequences of protocol actions on a few WorkItems (offers, accepts,
 * starts, renewals, checkpoints, blocks, submissions with current or stale epochs and leases,
 * reviews, failures, cancellations, new Sessions, virtual time passing deadlines), sends each as a
 * signed Command through `@weft/client`, and compares the outcome with the reference model of
 * `model-spec.ts` (the XState machine plus the facts its guards read). After every step the §4
 * invariants are checked on the live state and the log.
 *
 * `WEFT_MODEL_RUNS` sets the number of runs (default 100), `WEFT_FUZZ_SEED` the fast-check seed.
 */
import type { CommandOptions, Receipt } from '@weft/client'
import type { ErrorCode } from '@weft/codec'
import type { CommandKind, CommandPayload, Event } from '@weft/spec'
import type { WorkItemEventType } from '@weft/spec/machines'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { aggregateKey } from '../src/model.js'
import { cast, T0_MS, type Cast } from '@weft/testkit/fixtures'
import { manifest } from '@weft/testkit/artifacts'
import { SELECTION } from '@weft/testkit/documents'
import {
  endItem,
  executionFaults,
  machineStep,
  offerFaults,
  openItem,
  ownerFaults,
  ownerLive,
  ownershipLive,
  rowEmits,
  settleOffers,
  stateOf,
  type Flags,
  type ItemModel,
  type MachineSnapshot,
  type Model,
} from './model-spec.js'
import { accepted, evidenceOf, fencingViolations, groupOf, openWorld, ownershipViolations, sendAs, sequenceViolations, WORKERS, type World } from './model-world.js'

const RUNS = Number(process.env['WEFT_MODEL_RUNS'] ?? 100)
const SEED = process.env['WEFT_FUZZ_SEED'] === undefined ? undefined : Number(process.env['WEFT_FUZZ_SEED'])
const ITEMS = ['urn:weft:test:work:model-a', 'urn:weft:test:work:model-b']
/** Steps between two full replays of the log (and once more at the end of each run). */
const REPLAY_EVERY = 4
/** Virtual time stays inside the 24 h Coordinator lease the bootstrap grants. */
const TIME_BUDGET_MS = 20 * 3_600_000
const NEVER_ISSUED = 'urn:weft:test:lease:never-issued'

type Pick = 'current' | 'stale'
/** Who acts: the WorkItem's owner (for an accept, a pending candidate), or Worker 0, 1 or 2. */
type Who = 'owner' | number

/** The envelope choices of a Command: `expectedRevision` and an older runtime's Session Epoch. */
interface Knobs {
  readonly cas: 'none' | Pick
  readonly staleSession: boolean
}

/** A Command sent the plain way: no `expectedRevision`, the current Session. */
const PLAIN: Knobs = { cas: 'none', staleSession: false }

/** How the pipeline answers before any handler runs, given the knobs (§6.3, §15.3). */
interface Ingress {
  readonly options: CommandOptions
  readonly sessionEpoch?: number
  readonly faults: readonly ErrorCode[]
}

/** The Command kinds that drive the WorkItem machine. */
type WorkCommand = Extract<WorkItemEventType, CommandKind>

/** One WorkItem Command as the model judges it. */
interface Plan {
  readonly item: ItemModel
  readonly who: Cast
  readonly kind: WorkCommand
  readonly payload: CommandPayload<WorkCommand>
  readonly ingress: Ingress
  /** Why the handler must refuse it; empty when it must be accepted into `next`. */
  readonly faults: readonly ErrorCode[]
  readonly next?: MachineSnapshot
  /** The model's facts after acceptance; `execute` moves the machine and the revision. */
  readonly apply?: (receipt: Receipt) => void
}

function ingressOf(model: Model, item: ItemModel, who: Cast, knobs: Knobs): Ingress {
  const session = model.sessions.get(who.actor.id) ?? 0
  const options = knobs.cas === 'none' ? {} : { expectedRevision: knobs.cas === 'current' ? item.revision : item.revision - 1 }
  // §6.3: the older runtime's Command is fenced before anything else is looked at.
  if (knobs.staleSession && session > 1) return { options, sessionEpoch: session - 1, faults: ['AUTH_STALE_SESSION'] }
  return { options, faults: knobs.cas === 'stale' ? ['REVISION_CONFLICT'] : [] }
}

/** The handler's faults (`domain`) together with the machine's verdict on `kind` with `flags`. */
function judge(item: ItemModel, kind: WorkItemEventType, flags: Flags, domain: readonly ErrorCode[], guardFaults?: readonly ErrorCode[]): { faults: ErrorCode[]; next?: MachineSnapshot } {
  const step = machineStep(item, kind, flags, guardFaults)
  const faults = [...new Set([...domain, ...step.faults])]
  return faults.length === 0 && step.next !== undefined ? { faults, next: step.next } : { faults }
}

/**
 * Sends a judged Command and checks the Authority agrees: accepted exactly when the model has no
 * fault, refused with one of the model's codes otherwise; an accepted Command moves the machine,
 * adds one WorkItem revision and appends only Events its §10.2 row allows.
 */
async function execute(world: World, plan: Plan): Promise<void> {
  const { item, ingress } = plan
  const outcome = await sendAs(world, plan.who, plan.kind as never, plan.payload as never, ingress.options, ingress.sessionEpoch)
  const expected = ingress.faults.length > 0 ? ingress.faults : plan.faults
  const label = `${plan.kind} on ${item.id} (${stateOf(item)}) by ${plan.who.actor.id}`
  if ('error' in outcome) {
    expect(expected, `${label} was refused (${outcome.error.code}: ${outcome.error.message}); the model accepts it`).not.toEqual([])
    expect(expected, `${label}: ${outcome.error.message}`).toContain(outcome.error.code)
    return
  }
  expect(expected, `${label} was accepted; the model refuses it`).toEqual([])
  const from = stateOf(item)
  item.snapshot = plan.next!
  item.revision += 1
  const allowed = rowEmits(from, plan.kind, stateOf(item))
  expect(
    outcome.receipt.events.map((e) => e.kind).filter((kind) => !allowed.has(kind)),
    `${label}: Events outside its row`,
  ).toEqual([])
  plan.apply?.(outcome.receipt)
}

function workerOf(item: ItemModel, who: Who): Cast {
  if (who !== 'owner') return WORKERS[who % WORKERS.length]!
  return WORKERS.find((w) => w.actor.id === item.owner?.agentId) ?? WORKERS[0]
}

/** The Ownership Epoch a Command cites: the current one, or one that is not (older when there is one). */
function epochOf(item: ItemModel, pick: Pick): number {
  const current = item.owner?.epoch ?? Math.max(1, item.lastEpoch)
  if (pick === 'current') return current
  return current > 1 ? current - 1 : current + 1
}

/** The Execution Lease ID a Command cites: the latest issued, or an older (or never issued) one. */
function leaseOf(item: ItemModel, pick: Pick): string {
  return (pick === 'current' ? item.execIds.at(-1) : item.execIds.at(-2)) ?? NEVER_ISSUED
}

/** The parameters of an owner Command that executes (§11.3). */
interface OwnerParams {
  readonly item: number
  readonly who: Who
  readonly epoch: Pick
  readonly lease: Pick
  readonly seconds: number
  readonly knobs: Knobs
}

/** What an owner Command cites, and why it is not the current execution. */
function ownerReport(model: Model, p: OwnerParams): { item: ItemModel; who: Cast; epoch: number; leaseId: string; faults: ErrorCode[] } {
  const item = model.items[p.item]!
  const who = workerOf(item, p.who)
  const epoch = epochOf(item, p.epoch)
  const leaseId = leaseOf(item, p.lease)
  return { item, who, epoch, leaseId, faults: executionFaults(item, who.actor.id, epoch, leaseId, model.nowMs) }
}

function checkpointNow(model: Model, phase: string): CommandPayload<'work.checkpoint'>['checkpoint'] {
  return { phase, completedMilestones: ['half way'], nextStep: 'finish', stateArtifactHash: `sha256:${'c'.repeat(64)}`, createdAt: new Date(model.nowMs).toISOString() }
}

const until = (model: Model, seconds: number): number => model.nowMs + seconds * 1000

// ------------------------------------------------------------------------------------------------
// The actions. Each judges its Command on the model, sends it, and lets `execute` compare.
// ------------------------------------------------------------------------------------------------

async function offer(model: Model, world: World, p: { item: number; candidates: number[]; seconds: number; knobs: Knobs }): Promise<void> {
  const item = model.items[p.item]!
  // §10.2: owned states may be re-offered only once the owner is no longer live.
  const { faults, next } = judge(item, 'work.offer', { noLiveOwner: !ownerLive(item, model.nowMs) }, [], ['INVALID_STATE_TRANSITION', 'WORK_ALREADY_OWNED'])
  const candidateAgentIds = p.candidates.map((i) => WORKERS[i]!.actor.id)
  await execute(world, {
    item,
    who: cast.coordinator,
    kind: 'work.offer',
    payload: { workItemId: item.id, candidateAgentIds, selectionBasis: SELECTION, offerExpiresInSeconds: p.seconds },
    ingress: ingressOf(model, item, cast.coordinator, p.knobs),
    faults,
    ...(next === undefined ? {} : { next }),
    apply: () => {
      // §10.2: a new offer replaces the pending ones and fences an expired owner.
      settleOffers(item, () => 'withdrawn')
      item.offers.push(...candidateAgentIds.map((agentId) => ({ agentId, status: 'pending' as const, expiresMs: until(model, p.seconds) })))
      delete item.owner
      delete item.ownershipUntilMs
      delete item.exec
    },
  })
}

async function acceptOffer(model: Model, world: World, p: { item: number; who: Who; seconds: number; knobs: Knobs }): Promise<void> {
  const item = model.items[p.item]!
  const pending = item.offers.find((o) => o.status === 'pending')
  const who = p.who === 'owner' && pending !== undefined ? WORKERS.find((w) => w.actor.id === pending.agentId)! : workerOf(item, p.who)
  const faults = offerFaults(item, who.actor.id, model.nowMs)
  const judged = judge(item, 'work.accept_offer', { offerValid: faults.length === 0 }, faults, faults)
  await execute(world, {
    item,
    who,
    kind: 'work.accept_offer',
    payload: { workItemId: item.id, ownershipLeaseSeconds: p.seconds },
    ingress: ingressOf(model, item, who, p.knobs),
    ...judged,
    apply: () => {
      // §10.3: the first valid acceptance wins the next Ownership Epoch; the other candidates lose.
      item.lastEpoch += 1
      item.owner = { agentId: who.actor.id, epoch: item.lastEpoch }
      item.ownershipUntilMs = until(model, p.seconds)
      settleOffers(item, (o) => (o.agentId === who.actor.id ? 'accepted' : 'lost_race'))
    },
  })
}

async function start(model: Model, world: World, p: Omit<OwnerParams, 'lease'>): Promise<void> {
  const item = model.items[p.item]!
  const who = workerOf(item, p.who)
  const epoch = epochOf(item, p.epoch)
  // §11.3: the start gate needs the current owner within its start-by deadline.
  const domain = [...ownerFaults(item, who.actor.id, epoch), ...(ownershipLive(item, model.nowMs) ? [] : (['WORK_LEASE_EXPIRED'] as const))]
  await execute(world, {
    item,
    who,
    kind: 'work.start',
    payload: { workItemId: item.id, ownershipEpoch: epoch, executionLeaseSeconds: p.seconds },
    ingress: ingressOf(model, item, who, p.knobs),
    ...judge(item, 'work.start', { startAllowed: domain.length === 0 }, domain, domain),
    apply: (receipt) => {
      const leaseId = (receipt.events[0]!.payload as { executionLease: { leaseId: string } }).executionLease.leaseId
      item.exec = { leaseId, holder: who.actor.id, untilMs: until(model, p.seconds) }
      item.execIds.push(leaseId)
    },
  })
}

async function renew(model: Model, world: World, p: OwnerParams): Promise<void> {
  const { item, who, epoch, leaseId, faults } = ownerReport(model, p)
  const kind = 'ext.missionweaveprotocol.core.work_execution_lease_renew'
  await execute(world, {
    item,
    who,
    kind,
    payload: { workItemId: item.id, ownershipEpoch: epoch, executionLeaseId: leaseId, leaseSeconds: p.seconds },
    ingress: ingressOf(model, item, who, p.knobs),
    ...judge(item, kind, {}, faults),
    apply: () => void (item.exec!.untilMs = until(model, p.seconds)),
  })
}

/** `work.checkpoint` or `work.block`: execution stops; ownership stays for `seconds` (§11.3, §11.4). */
async function pause(model: Model, world: World, p: OwnerParams & { readonly block: boolean }): Promise<void> {
  const { item, who, epoch, leaseId, faults } = ownerReport(model, p)
  const common = { item, who, ingress: ingressOf(model, item, who, p.knobs) }
  const apply = (): void => {
    delete item.exec
    item.ownershipUntilMs = until(model, p.seconds)
  }
  const cited = { workItemId: item.id, ownershipEpoch: epoch, executionLeaseId: leaseId, checkpoint: checkpointNow(model, p.block ? 'blocked' : 'paused') }
  if (p.block) {
    const payload = { ...cited, reason: 'Waiting for access.', blockedLeaseSeconds: p.seconds }
    await execute(world, { ...common, kind: 'work.block', payload, ...judge(item, 'work.block', {}, faults), apply })
  } else {
    await execute(world, { ...common, kind: 'work.checkpoint', payload: { ...cited, resumeWithinSeconds: p.seconds }, ...judge(item, 'work.checkpoint', {}, faults), apply })
  }
}

/** Publishes an Artifact, then submits it with passing Evidence, both under the cited execution (§11.3, §13). */
async function submit(model: Model, world: World, p: OwnerParams): Promise<void> {
  const { item, who, epoch, leaseId, faults } = ownerReport(model, p)
  const ingress = ingressOf(model, item, who, p.knobs)
  const group = groupOf(world)
  const artifact = manifest(group, item.id, `${item.id} ${epoch} ${leaseId} step ${model.steps}`, who, { createdAt: new Date(model.nowMs).toISOString() })
  const published = await sendAs(world, who, 'artifact.publish', { artifact, ownershipEpoch: epoch, executionLeaseId: leaseId }, {}, ingress.sessionEpoch)
  const publishFaults = ingress.sessionEpoch === undefined ? faults : ingress.faults
  expect('error' in published ? publishFaults.includes(published.error.code) : publishFaults.length === 0, `artifact.publish on ${item.id}: ${JSON.stringify(publishFaults)}`).toBe(true)
  await execute(world, {
    item,
    who,
    kind: 'work.submit',
    payload: { workItemId: item.id, ownershipEpoch: epoch, executionLeaseId: leaseId, artifactIds: [artifact.artifactId], evidence: [evidenceOf(world, item.id, who, 'passed')] },
    ingress,
    ...judge(item, 'work.submit', {}, faults),
    apply: () => {
      delete item.exec
      item.submittedEpoch = epoch
    },
  })
}

async function acceptResult(model: Model, world: World, p: { item: number; knobs: Knobs }): Promise<void> {
  const item = model.items[p.item]!
  // §11.5: only a submission of the current Ownership Epoch may complete the WorkItem.
  const stale: ErrorCode[] = item.submittedEpoch !== undefined && item.submittedEpoch === item.owner?.epoch ? [] : ['WORK_STALE_OWNERSHIP']
  await execute(world, {
    item,
    who: cast.coordinator,
    kind: 'work.accept_result',
    payload: { workItemId: item.id, evidence: [evidenceOf(world, item.id, cast.coordinator, 'passed')] },
    ingress: ingressOf(model, item, cast.coordinator, p.knobs),
    ...judge(item, 'work.accept_result', { acceptanceCriteriaMet: stale.length === 0 }, stale, stale),
    apply: () => endItem(item),
  })
}

/** `work.fail`: by the Coordinator without a lease, or by the owner citing its execution (§11.4). */
async function fail(model: Model, world: World, p: OwnerParams & { readonly byOwner: boolean }): Promise<void> {
  const report = ownerReport(model, p)
  const { item } = report
  const who = p.byOwner ? report.who : cast.coordinator
  const cited = p.byOwner ? { ownershipEpoch: report.epoch, executionLeaseId: report.leaseId } : {}
  await execute(world, {
    item,
    who,
    kind: 'work.fail',
    payload: { workItemId: item.id, reason: 'It cannot be done.', ...cited, evidence: [evidenceOf(world, item.id, who, 'failed')] },
    ingress: ingressOf(model, item, who, p.knobs),
    ...judge(item, 'work.fail', {}, p.byOwner ? report.faults : []),
    apply: () => endItem(item),
  })
}

async function cancel(model: Model, world: World, p: { item: number; byHuman: boolean; knobs: Knobs }): Promise<void> {
  const item = model.items[p.item]!
  const who = p.byHuman ? cast.owner : cast.coordinator
  await execute(world, {
    item,
    who,
    kind: 'work.cancel',
    payload: { workItemId: item.id, reason: 'Not needed any more.' },
    ingress: ingressOf(model, item, who, p.knobs),
    ...judge(item, 'work.cancel', {}, []),
    apply: () => endItem(item),
  })
}

async function unblock(model: Model, world: World, p: { item: number; by: 'coordinator' | 'human' | Who; knobs: Knobs }): Promise<void> {
  const item = model.items[p.item]!
  const who = p.by === 'coordinator' ? cast.coordinator : p.by === 'human' ? cast.owner : workerOf(item, p.by)
  // §11.4: the Coordinator, the MissionOwner or the owner clears a blocker.
  const forbidden: ErrorCode[] = who !== cast.coordinator && who !== cast.owner && who.actor.id !== item.owner?.agentId ? ['AUTH_FORBIDDEN'] : []
  const judged = judge(item, 'work.unblock', { ownershipLive: ownershipLive(item, model.nowMs) }, forbidden)
  await execute(world, {
    item,
    who,
    kind: 'work.unblock',
    payload: { workItemId: item.id },
    ingress: ingressOf(model, item, who, p.knobs),
    ...judged,
    apply: () => {
      if (judged.next?.value !== 'open') return
      // §10.2: ownership lapsed while blocked; the WorkItem is offered again from `open`.
      delete item.owner
      delete item.ownershipUntilMs
    },
  })
}

/**
 * §11.3: a replacement Session for a Worker (the one executing something, or a given one) revokes
 * its Execution Leases and requeues their WorkItems, in the same transaction.
 */
async function openSession(model: Model, world: World, p: { worker: 'executing' | number }): Promise<void> {
  const executing = model.items.find((item) => item.exec !== undefined)?.exec?.holder
  const agentId = p.worker === 'executing' ? (executing ?? WORKERS[0].actor.id) : WORKERS[p.worker % WORKERS.length]!.actor.id
  const revoked = model.items.filter((item) => stateOf(item) === 'active' && item.exec?.holder === agentId)
  const receipt = await accepted(world, cast.controlPlane, 'ext.missionweaveprotocol.identity.session_open', { agentId })
  model.sessions.set(agentId, (model.sessions.get(agentId) ?? 0) + 1)
  const revocations = receipt.events.filter((e) => e.kind === 'ext.missionweaveprotocol.core.work_execution_lease_revoked')
  expect(revocations.map((e) => (e.payload as { workItemId: string }).workItemId)).toEqual(revoked.map((item) => item.id))
  for (const item of revoked) {
    const step = machineStep(item, 'ext.missionweaveprotocol.identity.session_open', {})
    expect(step.next?.value).toBe('queued')
    item.snapshot = step.next!
    item.revision += 1
    item.ownershipUntilMs = Math.max(item.ownershipUntilMs ?? 0, item.exec!.untilMs)
    delete item.exec
  }
}

type Deadline = 'offer' | 'ownership' | 'execution' | 'seconds'

/** The instant `deadline` of `item` ends, if it is still ahead. */
function deadlineOf(model: Model, item: ItemModel, deadline: Deadline): number | undefined {
  const at =
    deadline === 'offer'
      ? Math.max(...item.offers.filter((o) => o.status === 'pending').map((o) => o.expiresMs))
      : deadline === 'ownership'
        ? item.ownershipUntilMs
        : deadline === 'execution'
          ? item.exec?.untilMs
          : undefined
  return at !== undefined && at > model.nowMs ? at : undefined
}

/**
 * Moves virtual time just past a deadline of an item (or by `seconds`). The Authority runs no
 * timers: the machine's timer events change no state and nothing is appended (§10.2).
 */
async function advance(model: Model, world: World, p: { item: number; deadline: Deadline; seconds: number }): Promise<void> {
  const before = model.nowMs
  const target = deadlineOf(model, model.items[p.item]!, p.deadline)
  model.nowMs = target === undefined ? until(model, p.seconds) : target + 1000
  world.clock.advance((model.nowMs - before) / 1000)
  for (const item of model.items) {
    const passed = (at: number | undefined): boolean => at !== undefined && at > before && at <= model.nowMs
    const timers: WorkItemEventType[] = []
    if (stateOf(item) === 'offered' && item.offers.some((o) => o.status === 'pending' && passed(o.expiresMs))) timers.push('timer.offer_expired')
    if (['queued', 'blocked'].includes(stateOf(item)) && passed(item.ownershipUntilMs)) timers.push('timer.ownership_lease_expired')
    if (stateOf(item) === 'active' && passed(item.exec?.untilMs)) timers.push('timer.execution_lease_expired')
    for (const timer of timers) expect(machineStep(item, timer, {}).next?.value, `${timer} on ${item.id}`).toBe(stateOf(item))
  }
}

/**
 * The next happy-path action for an item, chosen from the model's state, so that random runs reach
 * the deep states often; the model still judges the Command like any other.
 */
async function progress(model: Model, world: World, p: { item: number; candidates: number[]; seconds: number; active: 'submit' | 'checkpoint' | 'block' | 'renew' }): Promise<void> {
  const item = model.items[p.item]!
  const owner: OwnerParams = { item: p.item, who: 'owner', epoch: 'current', lease: 'current', seconds: p.seconds, knobs: PLAIN }
  const offerable = item.offers.some((o) => o.status === 'pending' && o.expiresMs > model.nowMs)
  switch (stateOf(item)) {
    case 'offered':
      return offerable ? acceptOffer(model, world, { item: p.item, who: 'owner', seconds: p.seconds, knobs: PLAIN }) : offer(model, world, { ...p, knobs: PLAIN })
    case 'queued':
      return ownerLive(item, model.nowMs) ? start(model, world, owner) : offer(model, world, { ...p, knobs: PLAIN })
    case 'active':
      if (p.active === 'renew') return renew(model, world, owner)
      return p.active === 'submit' ? submit(model, world, owner) : pause(model, world, { ...owner, block: p.active === 'block' })
    case 'submitted':
      return acceptResult(model, world, { item: p.item, knobs: PLAIN })
    case 'blocked':
      return unblock(model, world, { item: p.item, by: 'coordinator', knobs: PLAIN })
    case 'verified':
    case 'cancelled':
      return
    default:
      return offer(model, world, { ...p, knobs: PLAIN })
  }
}

// ------------------------------------------------------------------------------------------------
// Checks after every step.
// ------------------------------------------------------------------------------------------------

const ms = (iso: string | undefined): number | undefined => (iso === undefined ? undefined : Date.parse(iso))

/** The facts the model tracks, as the Authority's state shows them. */
function authorityView(world: World, item: ItemModel): unknown {
  const group = groupOf(world)
  const record = group.workItems.get(item.id)
  const owner = record?.doc.owner
  return {
    state: record?.doc.state,
    revision: [record?.doc.revision, group.revisions.get(aggregateKey('workItem', item.id))],
    owner: owner === undefined ? undefined : `${owner.agentId} @${owner.ownershipEpoch}`,
    lastEpoch: record?.lastOwnershipEpoch,
    ownershipUntil: ms(record?.ownershipLease?.expiresAt),
    exec: record?.executionLease === undefined ? undefined : `${record.executionLease.leaseId} until ${ms(record.executionLease.expiresAt)}`,
    offers: (record?.doc.offers ?? []).map((o) => `${o.agentId} ${o.status}`),
  }
}

/** The same facts as the model predicts them. */
function modelView(item: ItemModel): unknown {
  return {
    state: stateOf(item),
    revision: [item.revision, item.revision],
    owner: item.owner === undefined ? undefined : `${item.owner.agentId} @${item.owner.epoch}`,
    lastEpoch: item.lastEpoch,
    ownershipUntil: item.ownershipUntilMs,
    exec: item.exec === undefined ? undefined : `${item.exec.leaseId} until ${item.exec.untilMs}`,
    offers: item.offers.map((o) => `${o.agentId} ${o.status}`),
  }
}

function checkReplay(world: World): void {
  expect(world.authority.replayState(), 'fold(log) differs from the live state').toEqual(world.authority.state)
}

/** The Authority agrees with the model, and the §4 invariants (a)–(c) hold; (d) every few steps. */
function verifyStep(model: Model, world: World): void {
  expect(model.items.map((item) => authorityView(world, item))).toEqual(model.items.map(modelView))
  const group = groupOf(world)
  const log: readonly Event[] = world.authority.events(group.groupId)
  expect(ownershipViolations(group, log), 'one current Ownership Epoch, the highest issued').toEqual([])
  expect(fencingViolations(log), 'no stale result completes a WorkItem').toEqual([])
  expect(sequenceViolations(group, log), 'sequences 1..head without a gap').toEqual([])
  if (model.steps % REPLAY_EVERY === 0) checkReplay(world)
}

/** One fast-check command: an action with its parameters, checked after it runs. */
class Step implements fc.AsyncCommand<Model, World> {
  constructor(
    private readonly label: string,
    private readonly body: (model: Model, world: World) => Promise<void>,
  ) {}

  check(model: Readonly<Model>): boolean {
    return model.nowMs - T0_MS < TIME_BUDGET_MS
  }

  async run(model: Model, world: World): Promise<void> {
    await this.body(model, world)
    model.steps += 1
    verifyStep(model, world)
  }

  toString(): string {
    return this.label
  }
}

function step<P>(name: string, params: fc.Arbitrary<P>, action: (model: Model, world: World, p: P) => Promise<void>): fc.Arbitrary<Step> {
  return params.map((p) => new Step(`${name} ${JSON.stringify(p)}`, (model, world) => action(model, world, p)))
}

function weighted<T>(usual: T, ...rare: T[]): fc.Arbitrary<T> {
  return fc.oneof({ weight: 5, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary: fc.constantFrom(...rare) })
}

const itemArb = fc.nat({ max: ITEMS.length - 1 })
const workerArb = fc.nat({ max: WORKERS.length - 1 })
const whoArb: fc.Arbitrary<Who> = fc.oneof({ weight: 4, arbitrary: fc.constant<Who>('owner') }, { weight: 1, arbitrary: workerArb })
const pickArb = weighted<Pick>('current', 'stale')
const secondsArb = fc.integer({ min: 30, max: 1800 })
const knobsArb: fc.Arbitrary<Knobs> = fc.record({ cas: weighted<Knobs['cas']>('none', 'current', 'stale'), staleSession: fc.nat({ max: 7 }).map((n) => n === 7) })
const candidatesArb = fc.subarray([0, 1, 2], { minLength: 1 })
const ownerArb = fc.record({ item: itemArb, who: whoArb, epoch: pickArb, lease: pickArb, seconds: secondsArb, knobs: knobsArb })

/** The actions, weighted towards the ones that move a WorkItem forward. */
const actions: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 12,
    arbitrary: step(
      'progress',
      fc.record({ item: itemArb, candidates: candidatesArb, seconds: secondsArb, active: fc.constantFrom('submit' as const, 'checkpoint' as const, 'block' as const, 'renew' as const) }),
      progress,
    ),
  },
  { weight: 3, arbitrary: step('offer', fc.record({ item: itemArb, candidates: candidatesArb, seconds: secondsArb, knobs: knobsArb }), offer) },
  { weight: 4, arbitrary: step('accept', fc.record({ item: itemArb, who: whoArb, seconds: secondsArb, knobs: knobsArb }), acceptOffer) },
  { weight: 4, arbitrary: step('start', ownerArb, start) },
  { weight: 2, arbitrary: step('renew', ownerArb, renew) },
  {
    weight: 2,
    arbitrary: step(
      'checkpoint',
      ownerArb.map((p) => ({ ...p, block: false })),
      pause,
    ),
  },
  {
    weight: 2,
    arbitrary: step(
      'block',
      ownerArb.map((p) => ({ ...p, block: true })),
      pause,
    ),
  },
  { weight: 2, arbitrary: step('unblock', fc.record({ item: itemArb, by: fc.oneof(fc.constantFrom('coordinator' as const, 'human' as const), whoArb), knobs: knobsArb }), unblock) },
  { weight: 4, arbitrary: step('submit', ownerArb, submit) },
  { weight: 2, arbitrary: step('accept_result', fc.record({ item: itemArb, knobs: knobsArb }), acceptResult) },
  { weight: 2, arbitrary: step('fail', fc.record({ item: itemArb, who: whoArb, epoch: pickArb, lease: pickArb, seconds: secondsArb, knobs: knobsArb, byOwner: fc.boolean() }), fail) },
  { weight: 1, arbitrary: step('cancel', fc.record({ item: itemArb, byHuman: fc.boolean(), knobs: knobsArb }), cancel) },
  { weight: 3, arbitrary: step('session_open', fc.record({ worker: fc.oneof(fc.constant('executing' as const), workerArb) }), openSession) },
  { weight: 5, arbitrary: step('advance', fc.record({ item: itemArb, deadline: fc.constantFrom<Deadline>('offer', 'ownership', 'execution', 'seconds'), seconds: secondsArb }), advance) },
)

function freshModel(): Model {
  return { nowMs: T0_MS, sessions: new Map(WORKERS.map((w) => [w.actor.id, 1])), items: ITEMS.map(openItem), steps: 0 }
}

/** Runs `steps` on a fresh world and model, then replays the whole log once more. */
async function runModel(steps: Iterable<fc.AsyncCommand<Model, World>>): Promise<World> {
  let world: World | undefined
  await fc.asyncModelRun(async () => {
    world = await openWorld(ITEMS)
    return { model: freshModel(), real: world }
  }, steps)
  checkReplay(world!)
  return world!
}

describe('the Group Authority against the §10.2 WorkItem statechart, with the §4 invariants', () => {
  it(
    'random Command sequences agree with the machine, keep one current Ownership Epoch (the highest issued), never let a stale result complete a WorkItem, keep sequences 1..head without a gap, and fold(log) equals the live state',
    async () => {
      const property = fc.asyncProperty(fc.commands([actions], { maxCommands: 40, size: 'max' }), async (steps) => void (await runModel(steps)))
      await fc.assert(property, { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) })
    },
    Math.max(60_000, RUNS * 3_000),
  )

  it('a scripted run reaches verified through a stale submission, a lost race, an expired offer and a replaced Session', async () => {
    const knobs = PLAIN
    const owner = (p: Partial<OwnerParams> = {}): OwnerParams => ({ item: 0, who: 'owner', epoch: 'current', lease: 'current', seconds: 600, knobs, ...p })
    const script: [string, (model: Model, world: World) => Promise<void>][] = [
      ['offer to two', (m, w) => offer(m, w, { item: 0, candidates: [0, 1], seconds: 300, knobs })],
      ['worker 2 wins', (m, w) => acceptOffer(m, w, { item: 0, who: 1, seconds: 900, knobs })],
      ['worker 1 lost the race', (m, w) => acceptOffer(m, w, { item: 0, who: 0, seconds: 900, knobs })],
      ['start', (m, w) => start(m, w, owner())],
      ['expire the Execution Lease', (m, w) => advance(m, w, { item: 0, deadline: 'execution', seconds: 1 })],
      ['re-offer to worker 3', (m, w) => offer(m, w, { item: 0, candidates: [2], seconds: 60, knobs })],
      ['the offer expires', (m, w) => advance(m, w, { item: 0, deadline: 'offer', seconds: 1 })],
      ['too late', (m, w) => acceptOffer(m, w, { item: 0, who: 2, seconds: 900, knobs })],
      ['offer again', (m, w) => offer(m, w, { item: 0, candidates: [2], seconds: 600, knobs })],
      ['worker 3 accepts', (m, w) => acceptOffer(m, w, { item: 0, who: 'owner', seconds: 900, knobs })],
      ['the old owner submits under the stale epoch', (m, w) => submit(m, w, owner({ who: 1, epoch: 'stale' }))],
      ['start', (m, w) => start(m, w, owner())],
      ['a new Session requeues', (m, w) => openSession(m, w, { worker: 2 })],
      ['the old runtime renews', (m, w) => renew(m, w, owner({ knobs: { cas: 'none', staleSession: true } }))],
      ['start again', (m, w) => start(m, w, owner())],
      ['submit under the superseded lease', (m, w) => submit(m, w, owner({ lease: 'stale' }))],
      ['submit', (m, w) => submit(m, w, owner({ knobs: { cas: 'current', staleSession: false } }))],
      ['accept the result', (m, w) => acceptResult(m, w, { item: 0, knobs })],
    ]
    const world = await runModel(script.map(([label, body]) => new Step(label, body)))
    const kinds = world.authority.events(groupOf(world).groupId).map((e) => e.kind)
    expect(groupOf(world).workItems.get(ITEMS[0]!)?.doc.state).toBe('verified')
    expect(kinds.filter((k) => k === 'work.offer.accepted')).toHaveLength(2)
    expect(kinds.filter((k) => k === 'work.submitted')).toHaveLength(1)
  })

  it('the invariant checks catch a stale submission, a second current epoch and a sequence gap in a log', async () => {
    const knobs = PLAIN
    const owner: OwnerParams = { item: 0, who: 'owner', epoch: 'current', lease: 'current', seconds: 600, knobs }
    const world = await runModel(
      [
        (m: Model, w: World) => offer(m, w, { item: 0, candidates: [0], seconds: 300, knobs }),
        (m: Model, w: World) => acceptOffer(m, w, { item: 0, who: 'owner', seconds: 900, knobs }),
        (m: Model, w: World) => start(m, w, owner),
        (m: Model, w: World) => submit(m, w, owner),
      ].map((body, i) => new Step(`scripted ${i}`, body)),
    )
    const group = groupOf(world)
    const log = world.authority.events(group.groupId)
    const tampered = (kind: string, change: (payload: Record<string, unknown>) => Record<string, unknown>): Event[] =>
      log.map((e) => (e.kind === kind ? { ...e, payload: change(e.payload as Record<string, unknown>) } : e))
    expect(fencingViolations(tampered('work.submitted', (p) => ({ ...p, ownershipEpoch: 2 })))).toHaveLength(1)
    expect(fencingViolations(tampered('work.submitted', (p) => ({ ...p, executionLeaseId: NEVER_ISSUED })))).toHaveLength(1)
    expect(
      ownershipViolations(
        group,
        tampered('work.offer.accepted', (p) => ({ ...p, ownershipEpoch: 2 })),
      ),
    ).not.toEqual([])
    expect(
      sequenceViolations(
        group,
        log.filter((e) => e.sequence !== 3),
      ),
    ).not.toEqual([])
    expect([fencingViolations(log), ownershipViolations(group, log), sequenceViolations(group, log)]).toEqual([[], [], []])
  })
})
