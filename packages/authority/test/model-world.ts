/**
 * The system under test of the model-based test (`model-property.test.ts`, `model-scripted.test.ts`): a real Authority over the domain
 * handlers on a test clock, bootstrapped through signed Commands, with one `@weft/client` per
 * Principal; and the §4 invariants checked on its state and log after every step, each returning
 * the violations it finds (an empty list when the invariant holds).
 */
import { createClient, type Client, type CommandOptions, type Receipt } from '@weft/client'
import { ProtocolError } from '@weft/codec'
import { EVENT_CATALOG, type CommandKind, type CommandPayload, type Event, type Evidence } from '@weft/spec'
import { createAuthority } from '../src/authority.js'
import { aggregateKey, type GroupState } from '../src/model.js'
import type { Authority } from '../src/commit/pipeline.js'
import { aggregateIdOf } from '../src/commit/transact.js'
import { cast, contract, evidence, GROUP, testClock, testRegistry, type Cast, type TestClock, seededRandom } from '@weft/testkit/fixtures'
import { bootstrap, workerMembership } from './fixtures-pipeline.js'

/** The Workers of the model world. */
export const WORKERS = [cast.worker1, cast.worker2, cast.worker3] as const

/** The Authority, its clock, and a client per Principal (by actor ID), every client seeing every Event. */
export interface World {
  readonly authority: Authority
  readonly clock: TestClock
  readonly clients: ReadonlyMap<string, Client>
}

/** An accepted Command's receipt, or the refusal. */
export type Outcome = { readonly receipt: Receipt } | { readonly error: ProtocolError }

/** A client of `who`; with a seed its Action IDs repeat run to run, without one they are random. */
function clientFor(authority: Authority, clock: TestClock, who: Cast, seed?: number): Client {
  const random = seed === undefined ? {} : { random: seededRandom(seed) }
  return createClient({ actor: who.actor, signingKey: who.key, transport: authority.connect(), groupId: GROUP, clock: { now: () => clock.nowMs }, ...random })
}

/**
 * A bootstrapped world: the Agents registered with a session each, the Mission and Group created
 * (`cast.coordinator` coordinates), the three Workers made members, and one `open` WorkItem per
 * ID of `workItemIds`, authorized by the Coordinator.
 */
export async function openWorld(workItemIds: readonly string[]): Promise<World> {
  const clock = testClock()
  const authority = createAuthority({
    registry: testRegistry(),
    keys: { authority: { type: 'service', id: cast.authority.actor.id }, signingKey: cast.authority.key },
    clock: { now: () => clock.nowMs },
    random: seededRandom(),
    policy: { controlPlane: [cast.controlPlane.actor.id] },
  })
  await bootstrap(authority, clock)
  const principals = [cast.controlPlane, cast.owner, cast.coordinator, ...WORKERS]
  const clients = new Map(principals.map((who, i) => [who.actor.id, clientFor(authority, clock, who, i + 2)]))
  const world: World = { authority, clock, clients }
  for (const client of clients.values()) client.observe([...authority.organizationEvents(), ...authority.events(GROUP)])
  for (const who of WORKERS) await accepted(world, cast.coordinator, 'membership.change', workerMembership(who))
  for (const workItemId of workItemIds) await accepted(world, cast.coordinator, 'work.authorize', { workItemId, contract: contract() })
  return world
}

/** The client of `who`. */
export function clientOf(world: World, who: Cast): Client {
  const client = world.clients.get(who.actor.id)
  if (client === undefined) throw new Error(`no client for ${who.actor.id}`)
  return client
}

/**
 * Sends one Command as `who` and settles it either way. With `sessionEpoch`, it goes out from a
 * runtime of `who` that still believes in that Session Epoch (§6.3: an older runtime left
 * connected). Every client observes the Events of an accepted Command.
 * @throws Error when the refusal is not a `ProtocolError`.
 */
export async function sendAs<K extends CommandKind>(world: World, who: Cast, kind: K, payload: CommandPayload<K>, options: CommandOptions = {}, sessionEpoch?: number): Promise<Outcome> {
  let client = clientOf(world, who)
  if (sessionEpoch !== undefined) {
    const membershipEpoch = client.epochs.membership(GROUP)
    // Random Action IDs: a seeded stream could repeat an Action ID of the live runtime (§15.1).
    client = clientFor(world.authority, world.clock, who)
    client.epochs.setSession(sessionEpoch)
    client.epochs.setMembership(GROUP, membershipEpoch)
  }
  try {
    const receipt = await client.send(kind, payload, options)
    for (const other of world.clients.values()) other.observe(receipt.events)
    return { receipt }
  } catch (error) {
    if (error instanceof ProtocolError) return { error }
    throw error
  }
}

/** {@link sendAs}, for set-up Commands that must be accepted. */
export async function accepted<K extends CommandKind>(world: World, who: Cast, kind: K, payload: CommandPayload<K>): Promise<Receipt> {
  const outcome = await sendAs(world, who, kind, payload)
  if ('error' in outcome) throw new Error(`set-up ${kind} refused: ${outcome.error.code} ${outcome.error.message}`)
  return outcome.receipt
}

/** The Group of the world. */
export function groupOf(world: World): GroupState {
  const group = world.authority.group(GROUP)
  if (group === undefined) throw new Error('the world has no Group')
  return group
}

/** Evidence about `workItemId` by `by`: a passing test of `tests-pass`, or a failed one. */
export function evidenceOf(world: World, workItemId: string, by: Cast, result: 'passed' | 'failed'): Evidence {
  return evidence(groupOf(world), workItemId, by, ['tests-pass'], result)
}

const aggregates = new Map(EVENT_CATALOG.map((e) => [e.kind as string, e.aggregate as string]))

/** The WorkItem an Event is about: its WorkItem aggregate, or the WorkItem of a published Artifact. */
function workItemOf(event: Event): string | undefined {
  if (aggregates.get(event.kind) === 'workItem') return aggregateIdOf(event)
  if (event.kind === 'artifact.published') return (event.payload as { artifact: { workItemId: string } }).artifact.workItemId
  return undefined
}

/**
 * §4.5, §10.3 (invariant a): per WorkItem, the Ownership Epochs the log issues are 1, 2, 3, ... in
 * order; the state's highest issued epoch is the log's; a current owner holds exactly that epoch;
 * and every live lease of the WorkItem belongs to it (none without an owner).
 */
export function ownershipViolations(group: GroupState, log: readonly Event[]): string[] {
  const issued = new Map<string, number>()
  const found: string[] = []
  for (const event of log) {
    if (event.kind !== 'work.offer.accepted') continue
    const { workItemId, ownershipEpoch } = event.payload as { workItemId: string; ownershipEpoch: number }
    const previous = issued.get(workItemId) ?? 0
    if (ownershipEpoch !== previous + 1) found.push(`${workItemId}: epoch ${ownershipEpoch} issued after ${previous}`)
    issued.set(workItemId, Math.max(previous, ownershipEpoch))
  }
  for (const [id, record] of group.workItems) {
    const highest = issued.get(id) ?? 0
    const current = record.doc.owner?.ownershipEpoch
    if (record.lastOwnershipEpoch !== highest) found.push(`${id}: state says epoch ${record.lastOwnershipEpoch} was issued last, the log ${highest}`)
    if (current !== undefined && current !== highest) found.push(`${id}: current epoch ${current} is not the highest issued (${highest})`)
    for (const lease of [record.ownershipLease, record.executionLease]) {
      if (lease?.state === 'active' && lease.ownershipEpoch !== current) found.push(`${id}: live ${lease.leaseType} lease of epoch ${lease.ownershipEpoch}, current ${current}`)
    }
  }
  return found
}

/** The execution a WorkItem's log says is current: epoch, Execution Lease and its end, pending submission. */
interface Fence {
  epoch?: number | undefined
  lease?: string | undefined
  leaseUntilMs?: number | undefined
  submittedEpoch?: number | undefined
}

/** The (epoch, Execution Lease ID) an owner-reported Event cites, if it is one. */
function citedExecution(event: Event): { readonly epoch: number; readonly lease: string } | undefined {
  const p = event.payload as { ownershipEpoch?: number; executionLeaseId?: string; executionLease?: { leaseId: string } }
  const lease = event.kind === 'work.progressed' ? p.executionLease?.leaseId : p.executionLeaseId
  const owned = ['work.progressed', 'work.checkpointed', 'work.blocked', 'work.submitted', 'work.failed', 'artifact.published'].includes(event.kind)
  return owned && p.ownershipEpoch !== undefined && lease !== undefined ? { epoch: p.ownershipEpoch, lease } : undefined
}

/** Replays one Event into the fence of its WorkItem; returns what it broke. */
function advanceFence(fence: Fence, event: Event): string | undefined {
  const p = event.payload as { ownershipEpoch?: number; nextState?: string; executionLease?: { leaseId: string }; executionLeaseExpiresAt?: string }
  const cited = citedExecution(event)
  const at = Date.parse(event.occurredAt)
  let broken: string | undefined
  if (cited !== undefined && (cited.epoch !== fence.epoch || cited.lease !== fence.lease || at >= (fence.leaseUntilMs ?? 0))) {
    broken = `${event.kind} #${event.sequence} under epoch ${cited.epoch} / lease ${cited.lease}, current ${fence.epoch} / ${fence.lease}`
  }
  if (event.kind === 'work.result.accepted' && (fence.submittedEpoch === undefined || fence.submittedEpoch !== fence.epoch)) {
    broken = `work.result.accepted #${event.sequence} for a submission of epoch ${fence.submittedEpoch}, current ${fence.epoch}`
  }
  if (event.kind === 'work.started' && p.ownershipEpoch !== fence.epoch) broken = `work.started #${event.sequence} under epoch ${p.ownershipEpoch}, current ${fence.epoch}`
  switch (event.kind) {
    case 'work.offer.accepted':
      fence.epoch = p.ownershipEpoch
      break
    case 'work.started':
    case 'work.progressed':
      fence.lease = p.executionLease?.leaseId
      fence.leaseUntilMs = Date.parse(p.executionLeaseExpiresAt ?? '')
      return broken
    case 'work.submitted':
      fence.submittedEpoch = cited?.epoch
      break
    case 'work.unblocked':
      if (p.nextState === 'open') delete fence.epoch
      break
    case 'work.offer.created':
    case 'work.failed':
    case 'work.cancelled':
    case 'work.result.accepted':
      delete fence.epoch
      break
    case 'work.checkpointed':
    case 'work.blocked':
    case 'ext.missionweaveprotocol.core.work_execution_lease_revoked':
      break
    default:
      return broken
  }
  // Every lifecycle Event above ends the Execution Lease (§11.3: release, revocation, fencing).
  delete fence.lease
  delete fence.leaseUntilMs
  if (event.kind !== 'work.submitted') delete fence.submittedEpoch
  return broken
}

/**
 * §4.5, §11.3, §11.5 (invariant b), read from the log alone: every owner report (progress,
 * checkpoint, block, Artifact, submission, owner failure) cites the current Ownership Epoch and the
 * current, unexpired Execution Lease, and a result is accepted only for a pending submission of
 * the current epoch. A stale result that got in would show here.
 */
export function fencingViolations(log: readonly Event[]): string[] {
  const fences = new Map<string, Fence>()
  const found: string[] = []
  for (const event of log) {
    const workItemId = workItemOf(event)
    if (workItemId === undefined) continue
    const fence = fences.get(workItemId) ?? {}
    fences.set(workItemId, fence)
    const broken = advanceFence(fence, event)
    if (broken !== undefined) found.push(`${workItemId}: ${broken}`)
  }
  return found
}

/**
 * §4.7, §15.2 (invariant c): the Group's sequences are exactly 1..head, and each aggregate's
 * revisions run 1, 2, 3, ... ending at the revision the state records.
 */
export function sequenceViolations(group: GroupState, log: readonly Event[]): string[] {
  const found: string[] = []
  log.forEach((event, i) => {
    if (event.sequence !== i + 1) found.push(`Event ${i + 1} of the log has sequence ${event.sequence}`)
  })
  if (log.length !== group.head) found.push(`head ${group.head}, ${log.length} Events`)
  const revisions = new Map<string, number>()
  for (const event of log) {
    const key = aggregateKey(aggregates.get(event.kind) as never, aggregateIdOf(event))
    const previous = revisions.get(key) ?? 0
    if (event.aggregateRevision !== previous + 1) found.push(`${key}: revision ${event.aggregateRevision} after ${previous}`)
    revisions.set(key, event.aggregateRevision ?? previous)
  }
  for (const [key, revision] of revisions) if (group.revisions.get(key) !== revision) found.push(`${key}: state revision ${group.revisions.get(key)}, log ${revision}`)
  return found
}
