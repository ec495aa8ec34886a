/**
 * The actions and checks of the model-based test (`model-property.test.ts`, `model-scripted.test.ts`):
 * each action judges one protocol action on the reference model of `model-spec.ts`, sends it as a
 * signed Command through `@weft/client` to the world of `model-world.ts`, and compares the outcome;
 * {@link Step} then checks that the Authority agrees with the model and that the §4 invariants hold
 * on the live state and the log.
 */
import type { CommandOptions, Receipt } from '@weft/client'
import type { ErrorCode } from '@weft/codec'
import type { CommandKind, CommandPayload, Event } from '@weft/spec'
import type { WorkItemEventType } from '@weft/spec/machines'
import fc from 'fast-check'
import { expect } from 'vitest'
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

/** The WorkItems every run opens. */
export const ITEMS = ['urn:weft:test:work:model-a', 'urn:weft:test:work:model-b']
/** Steps between two full replays of the log (and once more at the end of each run). */
const REPLAY_EVERY = 4
/** Virtual time stays inside the 24 h Coordinator lease the bootstrap grants. */
const TIME_BUDGET_MS = 20 * 3_600_000
/** An Execution Lease ID the Authority never issued. */
export const NEVER_ISSUED = 'urn:weft:test:lease:never-issued'

/** Which Ownership Epoch or Execution Lease a Command cites: the current one, or one that is not. */
export type Pick = 'current' | 'stale'
/** Who acts: the WorkItem's owner (for an accept, a pending candidate), or Worker 0, 1 or 2. */
export type Who = 'owner' | number

/** The envelope choices of a Command: `expectedRevision` and an older runtime's Session Epoch. */
export interface Knobs {
  readonly cas: 'none' | Pick
  readonly staleSession: boolean
}

/** A Command sent the plain way: no `expectedRevision`, the current Session. */
export const PLAIN: Knobs = { cas: 'none', staleSession: false }

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
export interface OwnerParams {
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

/** `work.offer` by the Coordinator to the Workers `candidates` name, for `seconds` (§10.2). */
export async function offer(model: Model, world: World, p: { item: number; candidates: number[]; seconds: number; knobs: Knobs }): Promise<void> {
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

/** `work.accept_offer` by `who` (for `owner`, a pending candidate), holding ownership for `seconds` (§10.3). */
export async function acceptOffer(model: Model, world: World, p: { item: number; who: Who; seconds: number; knobs: Knobs }): Promise<void> {
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

/** `work.start` by `who` under the cited Ownership Epoch, with an Execution Lease for `seconds` (§11.3). */
export async function start(model: Model, world: World, p: Omit<OwnerParams, 'lease'>): Promise<void> {
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

/** The renewal of the cited Execution Lease for `seconds` (§11.3). */
export async function renew(model: Model, world: World, p: OwnerParams): Promise<void> {
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
export async function pause(model: Model, world: World, p: OwnerParams & { readonly block: boolean }): Promise<void> {
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
export async function submit(model: Model, world: World, p: OwnerParams): Promise<void> {
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

/** `work.accept_result` by the Coordinator, which completes the WorkItem (§11.5). */
export async function acceptResult(model: Model, world: World, p: { item: number; knobs: Knobs }): Promise<void> {
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
export async function fail(model: Model, world: World, p: OwnerParams & { readonly byOwner: boolean }): Promise<void> {
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

/** `work.cancel` by the Coordinator or, with `byHuman`, the MissionOwner. */
export async function cancel(model: Model, world: World, p: { item: number; byHuman: boolean; knobs: Knobs }): Promise<void> {
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

/** `work.unblock` by the Coordinator, the MissionOwner or a Worker (§11.4). */
export async function unblock(model: Model, world: World, p: { item: number; by: 'coordinator' | 'human' | Who; knobs: Knobs }): Promise<void> {
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
export async function openSession(model: Model, world: World, p: { worker: 'executing' | number }): Promise<void> {
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

/** The deadline {@link advance} moves time past: a pending offer's, the ownership's, the execution's, or none (`seconds`). */
export type Deadline = 'offer' | 'ownership' | 'execution' | 'seconds'

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
export async function advance(model: Model, world: World, p: { item: number; deadline: Deadline; seconds: number }): Promise<void> {
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
export class Step implements fc.AsyncCommand<Model, World> {
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

function freshModel(): Model {
  return { nowMs: T0_MS, sessions: new Map(WORKERS.map((w) => [w.actor.id, 1])), items: ITEMS.map(openItem), steps: 0 }
}

/** Runs `steps` on a fresh world and model, then replays the whole log once more. */
export async function runModel(steps: Iterable<fc.AsyncCommand<Model, World>>): Promise<World> {
  let world: World | undefined
  await fc.asyncModelRun(async () => {
    world = await openWorld(ITEMS)
    return { model: freshModel(), real: world }
  }, steps)
  checkReplay(world!)
  return world!
}
