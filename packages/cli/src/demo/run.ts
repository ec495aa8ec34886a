/**
 * `runDemo`: the proof of concept of §22 in one process. One Organization, one in-memory Group
 * Authority, two concurrent software-development Missions with their automated Coordinators, a
 * child Mission with its own Coordinator, the human MissionOwner, and reference Workers from
 * `@weft/worker` that meet the Authority only through a transport (`authority.connect()`) and an
 * Event feed (`deliveryFeed`). Workers are shared by both Missions, run several isolated slots,
 * order work across the two Groups by weight (§11.1), and the checkout Mission's urgent security
 * fix preempts running work at a safe checkpoint (§11.3). Every executor run is audited for slot
 * isolation (context, capability token, side-effect keys, §11.1, §12, §16), and each Worker's
 * per-Group queues are reported as they change.
 *
 * Everything runs on one virtual clock driven by the run loop: a round lets every actor act on
 * the current instant, and a quiet round moves the clock to the next timer (an executor's work)
 * in steps short enough that no lease lapses unrenewed. A day of simulated work takes well under
 * a second of wall time.
 *
 * Seams for the failure suite and reports: {@link DemoHooks} run at set-up and at every round
 * with the whole {@link DemoWorld} (its links can be cut, its Workers stopped and respawned, its
 * feeds duplicated), and {@link DemoResult} carries per-slot timeline records.
 * @module
 */
import { createHash } from 'node:crypto'
import { createAuthority, createDelivery, createMemoryBlobStore, deliveryFeed, type Authority, type BlobStore, type Delivery } from '@weft/authority'
import { createClient, type Transport } from '@weft/client'
import { UsageError, type Registry } from '@weft/codec'
import { createWorker, type Worker, type WorkerLogEntry, type WorkerOptions } from '@weft/worker'
import { isEventOf } from '@weft/spec'
import { reportFacts, type ReportFacts } from '../report/facts.js'
import { createVirtualClock, seededRandom, type VirtualClock } from './clock.js'
import { createCoordinator, type Coordinator, type CoordinatorLogEntry } from './coordinator.js'
import type { DirectoryEntry, MissionPlan } from './mission-plan.js'
import {
  agentCard,
  agentPrincipal,
  humanPrincipal,
  registryOf,
  servicePrincipal,
  type AgentPrincipal,
  type CardSpec,
  type HumanPrincipal,
  type Principal,
  type ServicePrincipal,
} from './organization.js'
import { approveAll, createMissionOwner, requestChangesOnce, type Decider, type MissionOwner } from './owner.js'
import { demoExecutors, type ExecutorEnv } from './executors.js'
import { CAPABILITIES, demoPlans, type CapabilityName, type DemoPlans } from './plans.js'
import { countsOf, describe, outcomeOf, queueLines } from './progress.js'
import { groupOfItem, slotAudit, slotTokens } from './slots.js'
import { mergeLogs, preemptionLog, slotTimeline, type SlotRecord } from './timeline.js'
import { slotIsolation, type IsolationReport, type SlotInvocation } from './verify.js'

/** The default start of virtual time. */
export const DEMO_START = '2026-07-15T08:00:00.000Z'

/** A notable moment of the run, for progress output (one line per Event of interest). */
export interface DemoLine {
  readonly atMs: number
  /** Virtual milliseconds since the start. */
  readonly elapsedMs: number
  /** The Mission's short label (`checkout`, `search`, `staging`); for a `queues` line, the Worker's name. */
  readonly mission: string
  /** `queues`: a Worker's per-Group queue (§11.1), Groups by Mission label. */
  readonly kind:
    | 'queues'
    | 'offer'
    | 'reassign'
    | 'accept'
    | 'start'
    | 'checkpoint'
    | 'preempt'
    | 'block'
    | 'unblock'
    | 'submit'
    | 'verified'
    | 'failed'
    | 'promote'
    | 'awaiting'
    | 'approved'
    | 'changes'
    | 'coordinator'
  readonly text: string
}

/** A link between an actor and the Authority that a fault can cut (§11.5): a cut link fails like a socket. */
export interface Link {
  up: boolean
}

/** The Worker fleet of the demo: name, capabilities and slots. */
export const WORKER_SPECS: Readonly<Record<string, { readonly capabilities: readonly CapabilityName[]; readonly slots: number; readonly description: string }>> = {
  ada: { capabilities: ['requirements', 'implement', 'test'], slots: 2, description: 'Full-stack engineering Agent shared by both Missions.' },
  brook: { capabilities: ['implement', 'test', 'integrate'], slots: 2, description: 'Build, test and release Agent.' },
  cyd: { capabilities: ['review', 'requirements'], slots: 1, description: 'Reviewer Agent.' },
}

/** Everything the run is made of, for hooks and tests. */
export interface DemoWorld {
  readonly clock: VirtualClock
  readonly authority: Authority
  readonly delivery: Delivery
  readonly blobs: BlobStore
  readonly registry: Registry
  readonly plans: DemoPlans
  readonly owner: MissionOwner
  readonly principals: {
    readonly owner: HumanPrincipal
    readonly controlPlane: ServicePrincipal
    readonly agents: ReadonlyMap<string, AgentPrincipal>
  }
  /** Coordinators by name; the loop reads this map every round, so a hook may replace one. */
  readonly coordinators: Map<string, Coordinator>
  /** Workers by name; the loop reads this map every round, so a hook may replace one. */
  readonly workers: Map<string, Worker>
  /** The link of each actor by name. */
  readonly links: Map<string, Link>
  /** A Worker of the fleet with its executors, on its link, with the given Session Epoch (not yet in {@link workers}). */
  spawnWorker(name: string, sessionEpoch?: number): Worker
  /** The external systems' ledger: calls per idempotency key (§16). */
  readonly sideEffects: Map<string, { readonly operationId: string; calls: number }>
  /** Every executor invocation the slot audit recorded so far, as copies (§11.1). */
  slotRuns(): readonly SlotInvocation[]
}

/** Seams for the failure suite (not part of the demo itself). */
export interface DemoHooks {
  /** After set-up, before the first round. */
  setup?(world: DemoWorld): void | Promise<void>
  /** At the start of every round. */
  round?(world: DemoWorld, round: number): void | Promise<void>
  /**
   * Adjusts the options each Worker of the fleet is created with (at start and by
   * {@link DemoWorld.spawnWorker}): e.g. a feed that delivers an Event twice (§16), a local store
   * kept across a restart (§11.1), executors whose side effects are audited.
   */
  worker?(name: string, options: WorkerOptions): WorkerOptions
}

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Seeds identifiers and executor pacing. Default 1. */
  readonly seed?: number
  /**
   * The MissionOwner's decider after the scripted change request; default {@link approveAll}
   * (the `--yes` flag). The search Mission always gets one scripted change request first.
   */
  readonly decide?: Decider
  readonly onLine?: (line: DemoLine) => void
  readonly hooks?: DemoHooks
  /** Virtual start, epoch ms. Default {@link DEMO_START}. */
  readonly startMs?: number
  /** Bound on loop rounds. Default 20,000; with {@link pace}, unbounded (the run waits for its people). */
  readonly maxRounds?: number
  /**
   * Run at a pace a person can follow: virtual time never runs ahead of `pace` virtual
   * milliseconds per wall-clock millisecond since the start, and a quiet round waits in wall time
   * instead of jumping to the next timer. Absent: as fast as the machine goes (a day in under a
   * second). `weft demo --console` uses it so that the console shows the work as it happens.
   */
  readonly pace?: number
  /**
   * Who decides on the Missions' submissions (§7.3): `'owner'` (the default) is the demo's scripted
   * MissionOwner with {@link decide}; `'external'` leaves them to the human signed in elsewhere,
   * the web console, and the run goes on until both root Missions are decided there.
   */
  readonly approvals?: 'owner' | 'external'
  /** Ends the run early (Ctrl-C of `weft demo --console`): the loop stops after its round. */
  readonly signal?: AbortSignal
}

/** A Mission's end state. */
export interface MissionOutcome {
  readonly label: string
  readonly missionId: string
  readonly groupId: string
  readonly title: string
  readonly state: string
  readonly revision: number
  readonly events: number
  readonly changeRequests: number
  readonly artifactHashes: readonly string[]
}

/** What a run produced. */
export interface DemoResult {
  readonly seed: number
  /** Both root Missions ended approved. */
  readonly approved: boolean
  readonly missions: readonly MissionOutcome[]
  readonly timeline: readonly SlotRecord[]
  readonly counts: Readonly<Record<string, number>>
  /** Every external operation by idempotency key with how often the external system saw it. */
  readonly sideEffects: readonly { readonly key: string; readonly operationId: string; readonly calls: number }[]
  readonly startMs: number
  readonly endMs: number
  readonly rounds: number
  /** Refusals and lease losses the actors logged, the first 200: the run's diagnostics. */
  readonly warnings: readonly string[]
  /** WorkItem graphs, notable Events and Artifact provenance, for the HTML report (`renderReport`). */
  readonly facts: ReportFacts
  /**
   * The slot audit (§11.1): overlapping runs on one Worker checked for shared context, token or
   * side-effect key. {@link runDemo} always sets it; results made elsewhere may leave it out.
   */
  readonly isolation?: IsolationReport
}

/** A run's result and the world it ran in. */
export interface DemoRun {
  readonly result: DemoResult
  readonly world: DemoWorld
}

/** The longest wall-clock wait of a paced quiet round (see {@link DemoOptions.pace}). */
const PACE_SLICE_MS = 50

/** The longest quiet step of the clock: well under half of every lease, so renewals happen in time. */
const MAX_STEP_MS = 120_000

/** How the reference Worker logs a preemption request (§11.3); the victim is the entry's WorkItem. */
const PREEMPTION_LOG = 'preemption requested for '

/** The most diagnostics a result keeps. */
const MAX_WARNINGS = 200

const settle = async (rounds: number): Promise<void> => {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

/** Wraps `inner` so a cut link fails like an unreachable socket, not a protocol refusal (§11.5). */
function linked(inner: Transport, link: Link): Transport {
  return {
    submit: async (command, bytes) => {
      if (!link.up) throw new Error('ECONNREFUSED: the Group service is unreachable')
      return inner.submit(command, bytes)
    },
  }
}

/**
 * The virtual clock's pace (see {@link DemoOptions.pace}): how far a quiet round may move it, and
 * in wall time how long it waits first.
 * @throws UsageError for a pace that is not a positive number.
 */
function pacer(clock: VirtualClock, startMs: number, pace: number | undefined): { quietStep(): Promise<void> } {
  if (pace !== undefined && !(Number.isFinite(pace) && pace > 0)) throw new UsageError(`runDemo: pace must be a positive number of virtual milliseconds per wall millisecond, got ${String(pace)}`)
  const wallStart = performance.now()
  /** The latest virtual instant the pace allows now. */
  const pacedLimit = (): number => (pace === undefined ? Number.POSITIVE_INFINITY : startMs + Math.floor((performance.now() - wallStart) * pace))
  return {
    async quietStep() {
      // A quiet round: move virtual time to the next timer, never further than one step.
      const next = clock.nextDueMs()
      const target = Math.min(next ?? Number.POSITIVE_INFINITY, clock.now() + MAX_STEP_MS)
      if (pace !== undefined && target > pacedLimit()) {
        // Paced: wait in wall time (a short slice, so Commands from people are taken up promptly).
        await new Promise<void>((resolve) => setTimeout(resolve, Math.max(1, Math.min(PACE_SLICE_MS, (target - pacedLimit()) / pace))))
        clock.advanceTo(Math.min(target, pacedLimit()))
      } else clock.advanceTo(target)
    },
  }
}

/** The demo's Organization (§5): its Principals, its Registry and its Group Authority. */
interface DemoOrganization {
  readonly owner: HumanPrincipal
  readonly controlPlane: ServicePrincipal
  readonly registrar: ServicePrincipal
  readonly authorityPrincipal: ServicePrincipal
  /** The Coordinators' and the Workers' Agents by name. */
  readonly agents: ReadonlyMap<string, AgentPrincipal>
  readonly registry: Registry
  readonly authority: Authority
}

/** The Organization (§5): its registry, control plane, Authority, the owner and the Agents. */
function createOrganization(seed: number, now: () => number): DemoOrganization {
  const owner = humanPrincipal('priya')
  const controlPlane = servicePrincipal('control-plane')
  const registrar = servicePrincipal('registry')
  const authorityPrincipal = servicePrincipal('group-authority')
  const coordinatorNames = ['atlas', 'beacon', 'lark'] as const
  const agents = new Map<string, AgentPrincipal>([...coordinatorNames, ...Object.keys(WORKER_SPECS)].map((n) => [n, agentPrincipal(n)]))
  const principals: Principal[] = [owner, controlPlane, registrar, authorityPrincipal, ...agents.values()]
  const registry = registryOf(principals)
  const authority = createAuthority({
    registry,
    keys: { authority: authorityPrincipal.actor, signingKey: authorityPrincipal.key },
    clock: { now },
    random: seededRandom(seed, 'authority'),
    policy: { controlPlane: [controlPlane.actor.id] },
    deferEventSignatures: true,
  })
  return { owner, controlPlane, registrar, authorityPrincipal, agents, registry, authority }
}

/** §6.1, §6.3: the control plane registers every Agent Card and opens each Agent's first session. */
async function registerAgents(org: DemoOrganization, seed: number, startMs: number, now: () => number): Promise<void> {
  const cards: Record<string, CardSpec> = {
    atlas: { capabilities: [CAPABILITIES.coordinate], maxConcurrency: 1, description: 'Coordinator of the checkout Mission.' },
    beacon: { capabilities: [CAPABILITIES.coordinate], maxConcurrency: 1, description: 'Coordinator of the search Mission.' },
    lark: { capabilities: [CAPABILITIES.coordinate, CAPABILITIES.integrate], maxConcurrency: 1, description: 'Release lead; coordinates staging rollouts.' },
    ...Object.fromEntries(Object.entries(WORKER_SPECS).map(([n, w]) => [n, { capabilities: w.capabilities.map((c) => CAPABILITIES[c]), maxConcurrency: w.slots, description: w.description }])),
  }
  const { controlPlane } = org
  const control = createClient({ actor: controlPlane.actor, signingKey: controlPlane.key, transport: org.authority.connect(), clock: { now }, random: seededRandom(seed, 'control-plane') })
  for (const [name, agent] of org.agents) {
    await control.registryAgentCardRegister({ card: agentCard(agent, cards[name]!, org.owner.actor, org.registrar, new Date(startMs - 86_400_000).toISOString()) })
    await control.identitySessionOpen({ agentId: agent.actor.id })
  }
}

/**
 * Runs the demo to the end: both root Missions approved (or otherwise terminal), or the round
 * bound reached.
 * @example
 * ```ts
 * const { result } = await runDemo({ onLine: (l) => console.log(l.text) })
 * process.exitCode = result.approved ? 0 : 1
 * ```
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoRun> {
  const seed = options.seed ?? 1
  const startMs = options.startMs ?? Date.parse(DEMO_START)
  const clock = createVirtualClock(startMs)
  const now = (): number => clock.now()

  const org = createOrganization(seed, now)
  const { owner, controlPlane, authorityPrincipal, agents, registry, authority } = org
  const agentId = (name: string): string => agents.get(name)!.actor.id
  const delivery = createDelivery(authority)
  const blobs = createMemoryBlobStore()
  const links = new Map<string, Link>()
  const transportOf = (name: string): Transport => {
    const link: Link = { up: true }
    links.set(name, link)
    return linked(authority.connect(), link)
  }

  const plans = demoPlans(startMs, { checkoutCoordinator: agentId('atlas'), searchCoordinator: agentId('beacon'), stagingLead: agentId('lark'), implementer: agentId('ada') })
  const planOf = new Map<string, MissionPlan>([plans.checkout.plan, plans.search.plan, plans.staging].map((p) => [p.groupId, p]))
  const weights = new Map<string, number>([
    [plans.checkout.plan.groupId, plans.checkout.weight],
    [plans.search.plan.groupId, plans.search.weight],
    // The child Mission inherits its parent's priority class.
    [plans.staging.groupId, plans.checkout.weight],
  ])

  await registerAgents(org, seed, startMs, now)

  // The external systems executors act on (§16): every call is counted by idempotency key.
  const sideEffects = new Map<string, { readonly operationId: string; calls: number }>()
  const env: ExecutorEnv = {
    sleep: (ms) => clock.sleep(ms),
    external(operationId, key) {
      const entry = sideEffects.get(key) ?? { operationId, calls: 0 }
      entry.calls += 1
      sideEffects.set(key, entry)
      return `receipt:${operationId}:${key.slice('sha256:'.length, 'sha256:'.length + 12)}`
    },
    pace: (workItemId) => 0.8 + (createHash('sha256').update(`${seed}\u0000${workItemId}`).digest()[0]! / 255) * 0.4,
  }
  const executors = demoExecutors(env)

  // §12, §11.1: each slot gets a token bound to its own lease, and every run is audited.
  const tokens = slotTokens(authority, now, seededRandom(seed, 'authorization'))
  const audit = slotAudit({
    now,
    scopeOf: (workItemId) => {
      const groupId = groupOfItem(authority, workItemId)
      const plan = groupId === undefined ? undefined : planOf.get(groupId)
      return plan === undefined ? undefined : { groupId: plan.groupId, missionId: plan.missionId, workItemId }
    },
    claimsOf: tokens.claimsOf,
  })

  const coordinators = new Map<string, Coordinator>()
  // Progress output and the preemption record.
  const emit = (atMs: number, mission: string, kind: DemoLine['kind'], text: string): void => {
    options.onLine?.({ atMs, elapsedMs: atMs - startMs, mission, kind, text })
  }
  const preemptions = preemptionLog()
  const titles = new Map<string, string>([plans.checkout.plan, plans.search.plan, plans.staging].flatMap((p) => p.stages.map((s) => [s.workItemId, s.title] as const)))
  const titleOf = (workItemId: string): string => titles.get(workItemId) ?? workItemId
  const warnings: string[] = []
  const warn = (text: string): void => {
    if (warnings.length < MAX_WARNINGS) warnings.push(text)
  }
  const names = new Map([...[...agents].map(([n, a]) => [a.actor.id, n] as const), [owner.actor.id, owner.name], [authorityPrincipal.actor.id, 'the Authority']])
  const labelOf = (groupId: string | undefined): string => (groupId === undefined ? 'org' : (planOf.get(groupId)?.label ?? groupId))

  function spawnWorker(name: string, sessionEpoch = 1): Worker {
    const spec = WORKER_SPECS[name]
    const agent = agents.get(name)
    if (spec === undefined || agent === undefined) throw new Error(`no Worker ${name} in the fleet`)
    const actor = { type: 'agent' as const, id: agent.actor.id }
    const workerOptions: WorkerOptions = {
      actor,
      signingKey: agent.key,
      sessionEpoch,
      transport: transportOf(name),
      feed: deliveryFeed(delivery, actor),
      clock: { now },
      random: seededRandom(seed, `${name}#${sessionEpoch}`),
      slots: spec.slots,
      executors: Object.fromEntries(spec.capabilities.map((c) => [CAPABILITIES[c].id, audit.observed(`${name}#${sessionEpoch}`, actor.id, executors[CAPABILITIES[c].id]!)])),
      tokenFor: tokens.tokenFor(actor.id),
      weights: (groupId) => weights.get(groupId) ?? 1,
      leases: { ownershipLeaseSeconds: 6 * 3600, executionLeaseSeconds: 600 },
      // Aging is measured in hours here: stages take tens of minutes, and work preempted for an
      // urgent arrival must not outrank that arrival on its age alone (§11.1 anti-starvation).
      agingMs: 2 * 3_600_000,
      blobs,
      logger: (entry: WorkerLogEntry) => {
        // The Worker's Scheduler asked running work to stop at its next safe point (§11.3).
        if (entry.message.startsWith(PREEMPTION_LOG) && entry.workItemId !== undefined) {
          const urgent = entry.message.slice(PREEMPTION_LOG.length)
          preemptions.requested(entry.workItemId)
          emit(now(), labelOf(groupOfItem(authority, entry.workItemId)), 'preempt', `${name} asks ${titleOf(entry.workItemId)} to stop at its next safe point for ${titleOf(urgent)}`)
        }
        if (entry.level === 'warn') warn(`${name}: ${entry.message}`)
      },
    }
    return createWorker(options.hooks?.worker?.(name, workerOptions) ?? workerOptions)
  }

  authority.onCommit((events) => {
    for (const event of events) {
      if (isEventOf(event, 'work.authorized') && !titles.has(event.payload.workItem.workItemId)) {
        // Corrective WorkItems are planned after a change request (§7.3): their Coordinator knows their titles.
        for (const c of coordinators.values()) for (const s of c.stages()) if (!titles.has(s.workItemId)) titles.set(s.workItemId, s.title)
      }
      if (isEventOf(event, 'work.checkpointed')) preemptions.checkpointed(event.payload.workItemId, Date.parse(event.occurredAt))
      const text = describe(event, titles, names, preemptions.keys)
      if (text !== undefined) emit(Date.parse(event.occurredAt), labelOf(event.groupId), text.kind, text.text)
    }
  })

  // The MissionOwner creates both root Missions (§7.1).
  const decide = requestChangesOnce({ [plans.changeRequest.missionId]: plans.changeRequest }, options.decide ?? approveAll())
  const missionOwner = createMissionOwner({
    actor: owner.actor,
    signingKey: owner.key,
    transport: transportOf('priya'),
    feed: deliveryFeed(delivery, owner.actor),
    decide,
    clock: { now },
    random: seededRandom(seed, 'priya'),
  })
  await missionOwner.createMission(plans.checkout.plan.groupId, plans.checkout.create)
  await missionOwner.createMission(plans.search.plan.groupId, plans.search.create)

  const directory: DirectoryEntry[] = Object.entries(WORKER_SPECS).map(([n, w]) => ({ agentId: agentId(n), capabilities: w.capabilities.map((c) => CAPABILITIES[c]) }))
  const coordinatorLog = (name: string) => (entry: CoordinatorLogEntry) => {
    if (entry.level === 'warn') warn(`${name}: ${entry.message}`)
  }
  const coordinatorFor = (name: string, plan: MissionPlan, parent?: { groupId: string; workItemId: string }): Coordinator =>
    createCoordinator({
      actor: { type: 'agent', id: agentId(name) },
      signingKey: agents.get(name)!.key,
      sessionEpoch: 1,
      transport: transportOf(name),
      feed: deliveryFeed(delivery, { type: 'agent', id: agentId(name) }),
      plan,
      directory,
      blobs,
      clock: { now },
      random: seededRandom(seed, name),
      logger: coordinatorLog(name),
      ...(parent === undefined ? {} : { parent }),
    })
  const promoted = plans.checkout.plan.stages.find((s) => s.promote !== undefined)!
  coordinators.set('atlas', coordinatorFor('atlas', plans.checkout.plan))
  coordinators.set('beacon', coordinatorFor('beacon', plans.search.plan))
  coordinators.set('lark', coordinatorFor('lark', plans.staging, { groupId: plans.checkout.plan.groupId, workItemId: promoted.workItemId }))

  const workers = new Map<string, Worker>(Object.keys(WORKER_SPECS).map((n) => [n, spawnWorker(n)]))
  const world: DemoWorld = {
    clock,
    authority,
    delivery,
    blobs,
    registry,
    plans,
    owner: missionOwner,
    principals: { owner, controlPlane, agents },
    coordinators,
    workers,
    links,
    spawnWorker,
    sideEffects,
    slotRuns: () => audit.runs(),
  }
  await options.hooks?.setup?.(world)

  // Worker Memberships are granted by each Coordinator; a Worker joins a Group once it may read it (§8).
  const joined = new WeakMap<Worker, Set<string>>()
  function joinWorkers(): void {
    for (const c of coordinators.values()) {
      for (const id of c.enrolled()) {
        const name = names.get(id)
        const worker = name === undefined ? undefined : workers.get(name)
        if (worker === undefined) continue
        let groups = joined.get(worker)
        if (groups === undefined) joined.set(worker, (groups = new Set()))
        if (groups.has(c.plan.groupId)) continue
        worker.join([c.plan.groupId])
        groups.add(c.plan.groupId)
      }
    }
  }
  const showQueues = queueLines(planOf.values(), now, emit)

  let commits = 0
  authority.onCommit(() => commits++)
  const rootGroups = [plans.checkout.plan.groupId, plans.search.plan.groupId]
  const finished = (): boolean => rootGroups.every((g) => ['approved', 'cancelled', 'failed'].includes(authority.group(g)?.mission.state ?? 'active'))

  const pace = pacer(clock, startMs, options.pace)
  const maxRounds = options.maxRounds ?? (options.pace === undefined ? 20_000 : Number.POSITIVE_INFINITY)
  let rounds = 0
  while (rounds < maxRounds && !finished() && options.signal?.aborted !== true) {
    rounds++
    const before = commits
    await options.hooks?.round?.(world, rounds)
    if (options.approvals !== 'external') await missionOwner.tick().catch(() => {})
    for (const c of coordinators.values()) await c.tick()
    joinWorkers()
    for (const w of workers.values()) await w.tick()
    await settle(3)
    showQueues(workers)
    if (commits === before) {
      await pace.quietStep()
      await settle(2)
    }
  }
  for (const w of workers.values()) {
    await w.stop()
    // §11.3: the runs a Worker ended at a safe point on request mark their checkpoints as preemptions.
    for (const r of w.runs()) if (r.outcome === 'preempted') preemptions.ended(r.workItemId, r.atMs)
  }
  for (const c of coordinators.values()) c.close()
  missionOwner.close()

  const logs = [...planOf.keys()].map((g) => (authority.group(g) === undefined ? [] : authority.events(g)))
  const all = mergeLogs(logs)
  const result: DemoResult = {
    seed,
    approved: rootGroups.every((g) => authority.group(g)?.mission.state === 'approved'),
    missions: [...planOf.values()].map((p) => outcomeOf(authority, p)),
    timeline: slotTimeline(all, preemptions.keys),
    counts: countsOf(all, preemptions.keys.size, authority, rounds),
    sideEffects: [...sideEffects].map(([key, v]) => ({ key, operationId: v.operationId, calls: v.calls })),
    startMs,
    endMs: now(),
    rounds,
    warnings,
    facts: reportFacts(authority, [...planOf.keys()], { titles, actors: names }),
    isolation: slotIsolation(audit.runs()),
  }
  return { result, world }
}
