/**
 * A client-driven test world: an Authority made by `createAuthority` (the domain handlers) on a
 * test clock and the test Registry, one `@weft/client` per cast member speaking to it through
 * `authority.connect()`, and steps that bring Organizations, Missions and WorkItems into any state
 * of their machines through real signed Commands only — the way users drive the Authority.
 *
 * Every receipt is shown to every client, as a subscription would deliver the Events, so each
 * client learns the Session, Membership and Coordinator Epochs it must carry.
 *
 * It also holds the claim vocabulary the coverage test reads (STYLE §12): {@link rowTag} and
 * {@link refusedTag} format a transition row the one way the row tests title it and the coverage
 * test expects it, and {@link WORK_ITEM_ROW_CASES} / {@link MISSION_ROW_CASES} are the lists the
 * row tests iterate.
 */
import { createClient, type Client, type Receipt, type Transport } from '@weft/client'
import { sha256Tagged, utf8Encode, type ErrorCode, type Registry } from '@weft/codec'
import { isCommandKind, type Artifact, type CommandPayload, type Event, type EventKind, type EventPayload, type WorkContract } from '@weft/spec'
import { MISSION_TRANSITIONS, WORK_ITEM_TRANSITIONS, type AnyTransitionRow } from '@weft/spec/machines'
import { signedVerifier } from '@weft/validators/signed'
import { expect, it } from 'vitest'
import { createAuthority, type Authority, type AuthorityPolicy, type AuthorityStore, type GroupState, type RandomSource, type WorkItemRecord } from '@weft/authority'
import { manifest } from './artifacts.js'
import { childPayload, decision, missionPayload, SELECTION } from './documents.js'
import { agentCard, cast, contract, evidence, GROUP, refusal, seededRandom, testClock, testRegistry, type Cast, type TestClock } from './fixtures.js'

/** A cast member by name (`owner`, `coordinator`, `worker1`, ...). */
export type Who = keyof typeof cast

/** The Agents the Organization registers and opens sessions for. */
export const AGENT_NAMES = ['coordinator', 'worker1', 'worker2', 'worker3', 'reviewer'] as const satisfies readonly Who[]

/** One view of the world: the shared Authority, clock and clients, addressing one Group. */
export interface World {
  readonly authority: Authority
  readonly clock: TestClock
  readonly registry: Registry
  /** The Group this view's clients name by default. */
  readonly groupId: string
  /** A client per cast member, defaulting to {@link groupId}; all share one epoch view per Principal. */
  readonly as: Readonly<Record<Who, Client>>
  /** The same world addressing another Group (a child Mission's, a follow-up's). */
  in(groupId: string): World
  /** The state of this view's Group (throws when it does not exist). */
  group(): GroupState
  /** The record of WorkItem `workItemId` in this view's Group. */
  item(workItemId: string): WorkItemRecord
  /** A fresh name, unique in the world: `<prefix>-<n>`. */
  fresh(prefix: string): string
}

/** Options of {@link createWorld}. */
export interface WorldOptions {
  readonly policy?: Partial<AuthorityPolicy>
  readonly store?: AuthorityStore
  /** Principals the Registry binds besides the cast (no client is made for them). */
  readonly principals?: readonly Cast[]
}

/**
 * An Authority over the domain handlers (on a test clock starting at `T0` of `fixtures.ts`, the
 * test Registry, a seeded random source, `cast.controlPlane` as control plane) and a client per
 * cast member.
 * Nothing is registered yet: see {@link boot} and {@link started}.
 */
export function createWorld(options: WorldOptions = {}): World {
  const clock = testClock()
  const registry = testRegistry(options.principals)
  const authority = createAuthority({
    registry,
    keys: { authority: { type: 'service', id: cast.authority.actor.id }, signingKey: cast.authority.key },
    clock: { now: () => clock.nowMs },
    random: seededRandom(),
    policy: { controlPlane: [cast.controlPlane.actor.id], ...options.policy },
    ...(options.store === undefined ? {} : { store: options.store }),
  })
  const inner = authority.connect()
  return worldOver({ authority, clock, registry, submit: (command, bytes) => inner.submit(command, bytes), random: (i) => seededRandom(100 + i) })
}

/** What {@link worldOver} builds a test World from. */
export interface WorldParts {
  /** What the views read Group state from. */
  readonly authority: Pick<Authority, 'group'>
  readonly clock: TestClock
  readonly registry: Registry
  /** Where every client's Commands go. */
  readonly submit: Transport['submit']
  /** The clients that see every receipt; views of several Authorities may share one list. Default: a new one. */
  readonly audience?: Client[]
  /** Put into every fresh name, keeping one view's names apart from another's. Default none. */
  readonly tag?: string
  /** The random source of the `i`-th cast member's client. Default: each client's own (node:crypto). */
  readonly random?: (i: number) => RandomSource
}

/**
 * A client per cast member over `parts.submit`, each seeing every receipt (§16: as a subscription
 * would deliver it), and the {@link World} views over them, starting in {@link GROUP}.
 */
export function worldOver(parts: WorldParts): World {
  const { authority, clock, registry, tag = '' } = parts
  const audience = parts.audience ?? []
  const transport: Transport = {
    submit: async (command, bytes) => {
      const receipt = await parts.submit(command, bytes)
      for (const c of audience) c.observe(receipt.events)
      return receipt
    },
  }
  const names = Object.keys(cast) as Who[]
  const root = Object.fromEntries(
    names.map((who, i) => {
      const c = createClient({
        actor: cast[who].actor,
        signingKey: cast[who].key,
        transport,
        groupId: GROUP,
        clock: { now: () => clock.nowMs },
        ...(parts.random === undefined ? {} : { random: parts.random(i) }),
      })
      audience.push(c)
      return [who, c]
    }),
  ) as Record<Who, Client>
  let counter = 0
  const view = (groupId: string, as: Record<Who, Client>): World => ({
    authority: authority as Authority,
    clock,
    registry,
    groupId,
    as,
    in: (other) => view(other, Object.fromEntries(names.map((who) => [who, root[who].withGroup(other)])) as Record<Who, Client>),
    group: () => authority.group(groupId) ?? fail(`no Group ${groupId}`),
    item: (workItemId) => authority.group(groupId)?.workItems.get(workItemId) ?? fail(`no WorkItem ${workItemId} in ${groupId}`),
    fresh: (prefix) => `${prefix}-${tag}${++counter}`,
  })
  return view(GROUP, root)
}

function fail(message: string): never {
  throw new Error(message)
}

/** The cast member whose Principal ID is `id`. */
export function whoIs(id: string): Who {
  const found = (Object.keys(cast) as Who[]).find((who) => cast[who].actor.id === id)
  return found ?? fail(`no cast member ${id}`)
}

/** The client of the current Coordinator of this view's Mission. */
export function coordinatorOf(w: World): Client {
  return w.as[whoIs(w.group().mission.coordinator.agentId)]
}

/** The client of this view's MissionOwner (a human for a root Mission, the parent Coordinator for a child). */
export function ownerOf(w: World): Client {
  return w.as[whoIs(w.group().mission.missionOwner.id)]
}

/** The Organization bootstrap (§6.1, §6.3): the control plane registers every Agent's card and opens its first session. */
export async function boot(w: World, agents: readonly Who[] = AGENT_NAMES): Promise<void> {
  for (const who of agents) {
    await w.as.controlPlane.registryAgentCardRegister({ card: agentCard(cast[who]) })
    await w.as.controlPlane.identitySessionOpen({ agentId: cast[who].actor.id })
  }
}

/** The `mission.create` payload of Mission `urn:weft:test:mission:<name>`, coordinated by `cast.coordinator`. */
export function missionCreate(name: string, overrides: Partial<CommandPayload<'mission.create'>> = {}): CommandPayload<'mission.create'> {
  return missionPayload(`urn:weft:test:mission:${name}`, overrides)
}

/** The owner creates this view's Group with its Mission (§7.1). */
export async function openMission(w: World, overrides: Partial<CommandPayload<'mission.create'>> = {}): Promise<Receipt> {
  return w.as.owner.missionCreate(missionCreate(w.groupId.split(':').pop()!, overrides), { groupId: w.groupId })
}

/** The role each enrolled member gets. */
const ROLE: Partial<Record<Who, 'worker' | 'reviewer'>> = { reviewer: 'reviewer' }

/** The Coordinator grants `members` active Memberships in this view's Group (§8). */
export async function enrol(w: World, members: readonly Who[]): Promise<void> {
  for (const who of members) {
    await coordinatorOf(w).membershipChange({
      membershipId: `${w.groupId}:membership:${who}`,
      member: cast[who].actor,
      role: ROLE[who] ?? 'worker',
      state: 'active',
      scopes: ['group:read'],
    })
  }
}

/** The members {@link started} enrols. */
export const MEMBERS = ['worker1', 'worker2', 'worker3', 'reviewer'] as const satisfies readonly Who[]

/** A world with the Organization booted, {@link GROUP}'s Mission open and {@link MEMBERS} enrolled. */
export async function started(options: WorldOptions = {}): Promise<World> {
  const w = createWorld(options)
  await boot(w)
  await openMission(w)
  await enrol(w, MEMBERS)
  return w
}

// ---------------------------------------------------------------------------------------------
// WorkItems (§10–§13), each step one Command through a client
// ---------------------------------------------------------------------------------------------

/** `urn:weft:test:work:<name>`. */
export function wid(name: string): string {
  return `urn:weft:test:work:${name}`
}

/**
 * Contract overrides that fit a child Mission made by {@link promote}: its budget and deadline
 * are within the child's (§14).
 */
export const CHILD_CONTRACT: Partial<WorkContract> = {
  budget: { currency: 'USD', financialLimit: 2, modelTokenLimit: 1000, toolCallLimit: 5 },
  deadline: '2026-07-30T00:00:00Z',
}

/** The Coordinator authorizes WorkItem `id` under {@link contract} with `overrides`. */
export function authorize(w: World, id: string, overrides: Partial<WorkContract> = {}): Promise<Receipt> {
  return coordinatorOf(w).workAuthorize({ workItemId: id, contract: contract(overrides) })
}

/** The Coordinator offers WorkItem `id` to `candidates` for `seconds`. */
export function offer(w: World, id: string, candidates: readonly Who[] = ['worker1', 'worker2'], seconds = 600): Promise<Receipt> {
  return coordinatorOf(w).workOffer({ workItemId: id, candidateAgentIds: candidates.map((c) => cast[c].actor.id), selectionBasis: SELECTION, offerExpiresInSeconds: seconds })
}

/** `who` accepts its offer of WorkItem `id` with an ownership lease of `seconds`. */
export function accept(w: World, id: string, who: Who = 'worker1', seconds = 3600): Promise<Receipt> {
  return w.as[who].workAcceptOffer({ workItemId: id, ownershipLeaseSeconds: seconds })
}

/** The owner's current Ownership Epoch and Execution Lease ID, as the Authority holds them. */
export interface Running {
  readonly epoch: number
  readonly leaseId: string
}

/** The current {@link Running} of WorkItem `id` (the latest Execution Lease ID issued when none is live). */
export function runningOf(w: World, id: string): Running {
  const record = w.item(id)
  return { epoch: record.doc.owner?.ownershipEpoch ?? record.lastOwnershipEpoch, leaseId: record.executionLease?.leaseId ?? [...record.executionLeaseIds].at(-1) ?? 'urn:weft:test:lease:none' }
}

/** The owner of WorkItem `id` in the Authority's state. */
export function ownerName(w: World, id: string): Who {
  return whoIs(w.item(id).doc.owner?.agentId ?? fail(`WorkItem ${id} has no owner`))
}

/** The owner starts WorkItem `id` under a new Execution Lease of `seconds`. */
export function start(w: World, id: string, seconds = 600): Promise<Receipt> {
  return w.as[ownerName(w, id)].workStart({ workItemId: id, ownershipEpoch: runningOf(w, id).epoch, executionLeaseSeconds: seconds })
}

/** The owner renews the Execution Lease `leaseId` (default: the current one) of WorkItem `id` for `seconds` (§11.3). */
export function renew(w: World, id: string, seconds = 600, leaseId = runningOf(w, id).leaseId): Promise<Receipt> {
  return w.as[ownerName(w, id)].coreWorkExecutionLeaseRenew({ workItemId: id, ownershipEpoch: runningOf(w, id).epoch, executionLeaseId: leaseId, leaseSeconds: seconds })
}

/** The MissionOwner grants the Execution Approval of WorkItem `id` for its current Ownership Epoch (§12). */
export function grantExecution(w: World, id: string): Promise<Receipt> {
  return ownerOf(w).approvalGrantExecution({
    approvalId: `urn:weft:test:approval:${w.fresh('execution')}`,
    workItemId: id,
    ownershipEpoch: runningOf(w, id).epoch,
    operations: ['write'],
    resources: ['urn:weft:test:resource:repo'],
    budget: { currency: 'USD', financialLimit: 1 },
    expiresInSeconds: 600,
  })
}

/** A checkpoint taken now (§11.4). */
export function checkpointNow(w: World, phase = 'build'): CommandPayload<'work.checkpoint'>['checkpoint'] {
  return { phase, completedMilestones: ['tests written'], nextStep: 'implement', stateArtifactHash: sha256Tagged(utf8Encode(phase)), createdAt: new Date(w.clock.nowMs).toISOString() }
}

/** The owner checkpoints WorkItem `id`, keeping ownership for `resumeWithinSeconds`. */
export function checkpoint(w: World, id: string, resumeWithinSeconds = 600): Promise<Receipt> {
  const { epoch, leaseId } = runningOf(w, id)
  return w.as[ownerName(w, id)].workCheckpoint({ workItemId: id, ownershipEpoch: epoch, executionLeaseId: leaseId, checkpoint: checkpointNow(w), resumeWithinSeconds })
}

/** The owner blocks WorkItem `id` under a blocked lease of `seconds`. */
export function block(w: World, id: string, seconds = 600): Promise<Receipt> {
  const { epoch, leaseId } = runningOf(w, id)
  return w.as[ownerName(w, id)].workBlock({
    workItemId: id,
    ownershipEpoch: epoch,
    executionLeaseId: leaseId,
    checkpoint: checkpointNow(w),
    reason: 'Waiting for credentials.',
    blockedLeaseSeconds: seconds,
  })
}

/** The owner publishes an Artifact of WorkItem `id` (fresh content unless given) and returns its manifest. */
export async function publish(w: World, id: string, content = `${w.fresh('patch')} for ${id}`): Promise<Artifact> {
  const who = ownerName(w, id)
  const artifact = manifest(w.group(), id, content, cast[who])
  const { epoch, leaseId } = runningOf(w, id)
  await w.as[who].artifactPublish({ artifact, ownershipEpoch: epoch, executionLeaseId: leaseId })
  return artifact
}

/** The owner publishes an Artifact and submits WorkItem `id` with its own passing Evidence (§13.2). */
export async function submit(w: World, id: string): Promise<Receipt> {
  const artifact = await publish(w, id)
  const who = ownerName(w, id)
  const { epoch, leaseId } = runningOf(w, id)
  return w.as[who].workSubmit({ workItemId: id, ownershipEpoch: epoch, executionLeaseId: leaseId, artifactIds: [artifact.artifactId], evidence: [evidence(w.group(), id, cast[who])] })
}

/** The Coordinator accepts the submission of WorkItem `id` with `reviewer`'s Evidence (§7.2: not its own alone). */
export function acceptResult(w: World, id: string, reviewer: Who = 'reviewer'): Promise<Receipt> {
  return coordinatorOf(w).workAcceptResult({ workItemId: id, evidence: [evidence(w.group(), id, cast[reviewer])] })
}

/** Failure Evidence about WorkItem `id` by `by`. */
export function failureEvidence(w: World, id: string, by: Who = 'coordinator'): ReturnType<typeof evidence> {
  return evidence(w.group(), id, cast[by], ['tests-pass'], 'failed')
}

/** The Coordinator fails WorkItem `id` with failure Evidence. */
export function failWork(w: World, id: string): Promise<Receipt> {
  return coordinatorOf(w).workFail({ workItemId: id, reason: 'Not feasible.', evidence: [failureEvidence(w, id)] })
}

/** The Coordinator cancels WorkItem `id`. */
export function cancelWork(w: World, id: string): Promise<Receipt> {
  return coordinatorOf(w).workCancel({ workItemId: id, reason: 'No longer needed.' })
}

/** A WorkItem state {@link reach} can bring a new WorkItem to. */
export type Reachable = 'open' | 'offered' | 'queued' | 'active' | 'blocked' | 'submitted' | 'verified' | 'failed' | 'cancelled'

/** Options of {@link reach}. */
export interface ReachOptions {
  /** The WorkItem name (default: a fresh one). */
  readonly name?: string
  /** Contract overrides. */
  readonly contract?: Partial<WorkContract>
  /** The offer's candidates; the first accepts (default `worker1`, `worker2`). */
  readonly candidates?: readonly Who[]
}

/**
 * Authorizes a new WorkItem and brings it to `state` through real Commands: offered to the
 * candidates, accepted by the first, started, then blocked, submitted or verified; `failed` and
 * `cancelled` are reached from `open` by the Coordinator. Returns its ID.
 */
export async function reach(w: World, state: Reachable, options: ReachOptions = {}): Promise<string> {
  const id = wid(options.name ?? w.fresh('item'))
  const candidates = options.candidates ?? ['worker1', 'worker2']
  await authorize(w, id, options.contract)
  if (state === 'open') return id
  if (state === 'failed') return failWork(w, id).then(() => id)
  if (state === 'cancelled') return cancelWork(w, id).then(() => id)
  await offer(w, id, candidates)
  if (state === 'offered') return id
  await accept(w, id, candidates[0])
  if (state === 'queued') return id
  await start(w, id)
  if (state === 'active') return id
  if (state === 'blocked') return block(w, id).then(() => id)
  await submit(w, id)
  if (state === 'submitted') return id
  await acceptResult(w, id)
  return id
}

// ---------------------------------------------------------------------------------------------
// Missions (§7, §14)
// ---------------------------------------------------------------------------------------------

/** The Coordinator submits the Mission with every Artifact published in its Group (§7.3). */
export function submitMission(w: World): Promise<Receipt> {
  const artifactHashes = [...new Set([...w.group().artifacts.values()].map((a) => a.manifest.contentHash))]
  return coordinatorOf(w).missionSubmitForApproval({ artifactHashes })
}

/** The MissionOwner approves the pending submission with a signed Approval (§7.3; `child_mission` for a child, §14). */
export function approveMission(w: World): Promise<Receipt> {
  const owner = whoIs(w.group().mission.missionOwner.id)
  return w.as[owner].missionApprove({ approval: decision(w.group(), cast[owner], 'approved') })
}

/** A Mission state {@link reachMission} can bring this view's Mission to. */
export type MissionReachable = 'active' | 'awaiting_approval' | 'approved'

/** Brings this view's (active) Mission to `state`: a verified WorkItem with an Artifact, then submission, then approval. */
export async function reachMission(w: World, state: MissionReachable, contractOverrides: Partial<WorkContract> = {}): Promise<void> {
  if (state === 'active') return
  await reach(w, 'verified', { contract: contractOverrides, candidates: w.group().mission.parent === undefined ? ['worker1'] : ['worker3'] })
  await submitMission(w)
  if (state === 'approved') await approveMission(w)
}

/** Options of {@link promote}. */
export interface PromoteOptions {
  /** The child Mission's name (default: a fresh one). */
  readonly name?: string
  readonly coordinator?: Who
  readonly childFailurePolicy?: CommandPayload<'mission.create_child'>['childFailurePolicy']
  readonly overrides?: Partial<CommandPayload<'mission.create_child'>>
}

/**
 * The Coordinator promotes WorkItem `parentWorkItemId` to a child Mission (§14) coordinated by
 * `worker2` (default), whose Coordinator then enrols `worker3` and the reviewer. Returns the child Group's view and
 * the receipt of `mission.create_child`.
 */
export async function promote(w: World, parentWorkItemId: string, options: PromoteOptions = {}): Promise<{ readonly child: World; readonly receipt: Receipt }> {
  const payload = childPayload(parentWorkItemId, options.name ?? w.fresh('child'), cast[options.coordinator ?? 'worker2'], {
    childFailurePolicy: options.childFailurePolicy ?? 'block_parent_work_item',
    ...options.overrides,
  })
  const receipt = await coordinatorOf(w).missionCreateChild(payload)
  const child = w.in(payload.childGroupId)
  await enrol(child, ['worker3', 'reviewer'])
  return { child, receipt }
}

// ---------------------------------------------------------------------------------------------
// Assertions
// ---------------------------------------------------------------------------------------------

/** Awaits a refusal and returns its §19 code (fails when the Command is accepted). */
export async function codeOf(promise: Promise<unknown>): Promise<ErrorCode> {
  return (await refusal(promise)).code
}

/**
 * Runs `attempt`, expects the refusal `code`, and checks the refusal changed nothing in this
 * view's Group (head and WorkItem state) and was kept in the audit record.
 */
export async function expectRefused(w: World, attempt: () => Promise<unknown>, code: ErrorCode, workItemId?: string): Promise<void> {
  const head = w.authority.group(w.groupId)?.head
  const state = workItemId === undefined ? undefined : w.item(workItemId).doc.state
  const audited = w.authority.audit().length
  expect(await codeOf(attempt())).toBe(code)
  expect(w.authority.group(w.groupId)?.head).toBe(head)
  if (workItemId !== undefined) expect(w.item(workItemId).doc.state).toBe(state)
  expect(
    w.authority
      .audit()
      .slice(audited)
      .map((a) => a.code),
  ).toEqual([code])
}

/** The payload of the first Event of `kind` in `receipt` (throws when there is none). */
export function payloadOf<K extends EventKind>(receipt: Receipt, kind: K): EventPayload<K> {
  const event = receipt.events.find((e) => e.kind === kind) ?? fail(`no ${kind} in ${kinds(receipt.events).join(', ')}`)
  return event.payload as EventPayload<K>
}

/** The kinds of `events`. */
export function kinds(events: readonly Event[]): string[] {
  return events.map((e) => e.kind)
}

/**
 * The invariants every world keeps (§4, §15.2, §16): the live state equals a fresh fold of the
 * stored log, every Group's sequences run 1, 2, 3, … up to its head, and every stored Event
 * verifies against the Registry under the `event` profile (§6.4).
 */
export function expectIntegrity(w: World): void {
  const a = w.authority
  expect(a.replayState()).toEqual(a.state)
  const groupIds = [...a.state.groups.keys()]
  for (const groupId of groupIds) {
    const sequences = a.events(groupId).map((e) => e.sequence)
    expect([groupId, sequences]).toEqual([groupId, sequences.map((_, i) => i + 1)])
    expect(a.group(groupId)?.head).toBe(sequences.length)
  }
  const log = [...a.organizationEvents(), ...groupIds.flatMap((g) => a.events(g))]
  expect(log.filter((e) => !signedVerifier.verify('event', JSON.stringify(e), w.registry).ok).map((e) => e.eventId)).toEqual([])
}

// ---------------------------------------------------------------------------------------------
// Claim tags (STYLE §12): the coverage test and the row tests share these
// ---------------------------------------------------------------------------------------------

/** `[row <from> --<event>--> <to>]`, with ` [<guard>]` inside the brackets when the row has a guard. */
export function rowTag(row: AnyTransitionRow): string {
  return `[row ${row.from} --${row.event}--> ${row.to}${row.guard === undefined ? '' : ` [${row.guard}]`}]`
}

/** `[refused <from> --<event>--> <to>]`: a test that the row's Command is refused for the row's reason. */
export function refusedTag(row: AnyTransitionRow): string {
  return `[refused ${row.from} --${row.event}--> ${row.to}]`
}

/**
 * Rows no client-driven test can perform, and why. The row tests generate no performing test for
 * them and the coverage test exempts them; it fails if one of them is claimed after all.
 */
export const UNPERFORMABLE_ROWS: Readonly<Record<string, string>> = {
  '[row open --mission.create_child--> blocked]':
    'work-item.schema.json requires an owner and a selection basis in `blocked`, which a WorkItem never accepted lacks; the Authority refuses promotion before acceptance (missions.ts createChild)',
  '[row offered --mission.create_child--> blocked]': 'as for `open`: an offered WorkItem has no owner yet, and `blocked` needs one (work-item.schema.json)',
  '[row awaiting_approval --system.child_mission_failed--> failed [childIndispensable]]':
    'a Mission is submitted only when every WorkItem is verified or cancelled (§7.3); a parent WorkItem cancelled while its child runs no longer waits for it, so the child failure has nothing to propagate through',
}

/** One row of a machine table as the row tests see it. */
export interface RowCase {
  readonly row: AnyTransitionRow
  /** The row's {@link rowTag}. */
  readonly tag: string
  /** The row's {@link refusedTag}, for rows a Command drives (timer and system rows have no refusal). */
  readonly refusal?: string
  /** Why no test can perform the row ({@link UNPERFORMABLE_ROWS}), when that is so. */
  readonly unperformable?: string
}

function casesOf(rows: readonly AnyTransitionRow[]): readonly RowCase[] {
  return rows.map((row) => {
    const tag = rowTag(row)
    const unperformable = UNPERFORMABLE_ROWS[tag]
    return { row, tag, ...(isCommandKind(row.event) ? { refusal: refusedTag(row) } : {}), ...(unperformable === undefined ? {} : { unperformable }) }
  })
}

/** Every row of `WORK_ITEM_TRANSITIONS`; `rows-work-item.test.ts` generates its tests from this list. */
export const WORK_ITEM_ROW_CASES: readonly RowCase[] = casesOf(WORK_ITEM_TRANSITIONS)

/** Every row of `MISSION_TRANSITIONS`; `rows-mission.test.ts` generates its tests from this list. */
export const MISSION_ROW_CASES: readonly RowCase[] = casesOf(MISSION_TRANSITIONS)

/** The tags the row tests generated from `cases` claim: performed rows and refusals. */
export function claimsOf(cases: readonly RowCase[]): string[] {
  return cases.flatMap((c) => [...(c.unperformable === undefined ? [c.tag] : []), ...(c.refusal === undefined ? [] : [c.refusal])])
}

/**
 * Generates a row test file's tests from `cases`: for each row, the performing test (unless the row
 * is unperformable) and, for a Command-driven row, the refusal test, from the row's plan in `plans`
 * (keyed by {@link rowTag}). A row without a plan, or a plan without a step the row needs, becomes
 * a failing test, so the generated claims always run.
 */
export function rowTests<P extends { readonly perform?: S; readonly refuse?: R }, S, R>(
  cases: readonly RowCase[],
  plans: Readonly<Record<string, P>>,
  perform: (c: RowCase, step: S) => void,
  refuse: (c: RowCase, step: R) => void,
): void {
  for (const c of cases) {
    const plan = plans[c.tag]
    const name = `${c.row.from} --${c.row.event}--> ${c.row.to}`
    if (c.unperformable === undefined) {
      if (plan?.perform === undefined) it(`performs ${name}`, () => expect.fail(`add a performing step for ${c.tag}`))
      else perform(c, plan.perform)
    }
    if (c.refusal !== undefined) {
      if (plan?.refuse === undefined) it(`refuses ${name}`, () => expect.fail(`add a refusal for ${c.tag}`))
      else refuse(c, plan.refuse)
    }
  }
}
