/**
 * The world one simulated seed runs in: a small Organization on one in-memory Group Authority
 * and one virtual clock, built from the demo's pieces (Principals, Agent Cards, stage kinds,
 * scripted executors, Coordinators, the MissionOwner). Two Missions share three reference
 * Workers; each Worker reaches the Authority only through a {@link linkedTransport} and a
 * {@link faultyFeed}, and every Coordinator through a link of its own, so the fault schedule
 * can cut, drop, repeat and reorder without touching the agents' code.
 *
 * The world is small on purpose (five WorkItems, about 130 Events when both Missions finish): a
 * seed costs about 80 ms of CPU, so a thousand seeds fit in under two minutes.
 * @module
 */
import { createHash } from 'node:crypto'
import { createAuthority, createDelivery, createMemoryBlobStore, deliveryFeed, type Authority, type Delivery } from '@weft/authority'
import { createClient, type Client, type Transport } from '@weft/client'
import type { Registry } from '@weft/codec'
import { type AgentCard, isEventOf, type UsageDelta } from '@weft/spec'
import { createMemoryWorkerStore, createWorker, type ExecutorSpec, type Worker, type WorkerStore } from '@weft/worker'
import { createVirtualClock, seededRandom, type VirtualClock } from '../demo/clock.js'
import { createCoordinator, type Coordinator } from '../demo/coordinator.js'
import type { DirectoryEntry, MissionPlan, StageSpec } from '../demo/mission-plan.js'
import { agentCard, agentPrincipal, humanPrincipal, registryOf, servicePrincipal, type AgentPrincipal, type HumanPrincipal, type ServicePrincipal } from '../demo/organization.js'
import { approveAll, createMissionOwner, type MissionOwner } from '../demo/owner.js'
import { demoExecutors, type ExecutorEnv } from '../demo/executors.js'
import { CAPABILITIES, planStage, type CapabilityName, type MissionFrame } from '../demo/plans.js'
import { faultyFeed, linkedTransport, type DeliveryFaultRates, type FaultyFeed, type SimLink } from './faults.js'
import { createPrng } from './prng.js'

/** Where virtual time starts for every seed. */
export const SIM_START = Date.parse('2026-07-15T08:00:00.000Z')

const HOUR = 3_600_000

/** The longest quiet step of the clock: under half the Execution Lease, so renewals happen in time (§11.3). */
const MAX_QUIET_STEP_MS = 240_000

/** The Worker fleet: capabilities and slots. */
export const SIM_WORKERS: Readonly<Record<string, { readonly capabilities: readonly CapabilityName[]; readonly slots: number }>> = {
  w1: { capabilities: ['requirements', 'implement', 'test'], slots: 2 },
  w2: { capabilities: ['implement', 'test'], slots: 1 },
  w3: { capabilities: ['requirements', 'implement', 'test'], slots: 1 },
}

/** Coordinator Agents: each Mission starts with the first; replacements take turns (§7.2). */
export const SIM_COORDINATORS = ['cora', 'cole', 'cyra'] as const

/** Leases the Workers ask for (§11.3): one hour of ownership, ten minutes of execution. */
export const SIM_LEASES = { ownershipLeaseSeconds: 3600, executionLeaseSeconds: 600 } as const

/** How long an offer stays acceptable (§10.3). */
export const SIM_OFFER_SECONDS = 300

/** Per-delivery fault rates of every Worker feed. */
export const SIM_DELIVERY_FAULTS: DeliveryFaultRates = { drop: 0.02, duplicate: 0.04, reorder: 0.04 }

/** One Worker of the fleet across its incarnations. */
export interface SimWorkerSlot {
  readonly name: string
  readonly agentId: string
  /** The running runtime; absent while crashed. */
  worker?: Worker
  /** The feed of the running runtime. */
  feed?: FaultyFeed
  readonly link: SimLink
  /** Local state (§11.1); replaced by an empty store when a crash loses it. */
  store: WorkerStore
  /** The Session Epoch of the running (or last) runtime (§6.3). */
  sessionEpoch: number
  /** Groups the running runtime has joined. */
  readonly joined: Set<string>
  /** Its round never returned (see {@link SimWorld.stuck}); it is not ticked again. */
  stuck: boolean
}

/** Everything a seed runs in, for the fault schedule, hooks and tests. */
export interface SimWorld {
  readonly seed: number
  readonly clock: VirtualClock
  readonly authority: Authority
  readonly delivery: Delivery
  readonly missions: readonly MissionPlan[]
  readonly owner: MissionOwner
  /** The Coordinator in charge of each Mission, by Group ID. */
  readonly coordinators: Map<string, Coordinator>
  /** Each Coordinator's link, by Group ID. */
  readonly coordinatorLinks: Map<string, SimLink>
  readonly workers: ReadonlyMap<string, SimWorkerSlot>
  /**
   * The usage the executors reported for `workItemId` so far (§12), summed over every run and
   * every Worker: each `ctx.reportUsage` call that returned. The Authority may charge less (a
   * refusal, a lease lost offline, state lost in a crash), never more.
   */
  reportedUsage(workItemId: string): Readonly<Record<string, number>> | undefined
  /** Accepted transactions so far (one per Command that appended Events). */
  commits(): number
  /**
   * Every actor acts once on the current instant (the MissionOwner, the Coordinators, then the
   * Workers; `between` runs before the Workers' turn); then held-back deliveries arrive.
   */
  round(between?: () => Promise<void>): Promise<void>
  /** Actors whose round did not return: a deadlock inside the runtime, reported rather than waited on. */
  stuck(): readonly string[]
  /** Moves the clock to the next timer, at most one quiet step ahead. */
  advanceQuietly(): Promise<void>
  /** Moves the clock by `ms` at once (a jump past offers and leases). */
  jump(ms: number): Promise<void>
  /** Stops a Worker as a crash would; with `keepState: false` its local state is lost too. */
  crash(name: string, keepState: boolean): Promise<void>
  /** Starts a crashed Worker again under a new Session Epoch (§6.3, §11.3). */
  respawn(name: string): Promise<void>
  /**
   * The MissionOwner appoints the next Coordinator of the pool for `groupId` with the outgoing
   * one's Context Package (§7.2). Resolves `false` when the Authority refused.
   */
  replaceCoordinator(groupId: string): Promise<boolean>
  /** Whether every Mission reached a terminal state. */
  finished(): boolean
  /** Stops every runtime. */
  close(): Promise<void>
}

const settle = async (rounds: number): Promise<void> => {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

/**
 * Event-loop turns an actor's round may take. Everything is in process and time is virtual, so a
 * healthy round settles within a few turns; one still pending after this many waits on something
 * only a later round could give it (a deadlock), and the simulator reports it instead of hanging.
 */
const STUCK_AFTER_TURNS = 200

/** Whether `round` settles within {@link STUCK_AFTER_TURNS} turns (a refusal counts as settled). */
async function returns(round: Promise<void>): Promise<boolean> {
  let settled = false
  round.then(
    () => (settled = true),
    () => (settled = true),
  )
  for (let turn = 0; turn < STUCK_AFTER_TURNS && !settled; turn++) await new Promise<void>((resolve) => setImmediate(resolve))
  return settled
}

/** The two Missions of a seed: a three-stage one and a two-stage one, both ending in urgent testing (a bounded candidate set, §10.3). */
function simPlans(startMs: number): MissionPlan[] {
  const mission = (slug: string, title: string, stages: (frame: MissionFrame) => StageSpec[]): MissionPlan => ({
    missionId: `urn:weft:sim:mission:${slug}`,
    groupId: `urn:weft:sim:group:${slug}`,
    label: slug,
    title,
    stages: stages({ slug, repository: `urn:weft:sim:repo:${slug}`, deadlineMs: startMs + 48 * HOUR }),
  })
  return [
    mission('alpha', 'Alpha: rate limiter', (f) => [
      planStage(f, 'requirements', 'spec', 'Rate limiter requirements', 'Specify the limits and the refusal behaviour.'),
      planStage(f, 'implement', 'build', 'Token bucket', 'Implement the token bucket.', { dependsOn: ['spec'] }),
      planStage(f, 'test', 'verify', 'Limiter tests', 'Run the limiter suite.', { dependsOn: ['build'] }),
    ]),
    mission('beta', 'Beta: audit export', (f) => [
      planStage(f, 'implement', 'build', 'CSV audit export', 'Export the audit log as CSV.'),
      planStage(f, 'test', 'verify', 'Export tests', 'Run the export suite.', { dependsOn: ['build'] }),
    ]),
  ]
}

/** The Organization every seed shares: Principals, Registry evidence and signed Agent Cards (pure functions of their names). */
interface Organization {
  readonly owner: HumanPrincipal
  readonly controlPlane: ServicePrincipal
  readonly authority: ServicePrincipal
  readonly agents: ReadonlyMap<string, AgentPrincipal>
  readonly registry: Registry
  readonly cards: ReadonlyMap<string, AgentCard>
}

let organization: Organization | undefined

/** Built once per process: key derivation and card signatures are the same for every seed. */
function simOrganization(): Organization {
  if (organization !== undefined) return organization
  const owner = humanPrincipal('olga')
  const controlPlane = servicePrincipal('control-plane')
  const registrar = servicePrincipal('registry')
  const authority = servicePrincipal('group-authority')
  const agents = new Map<string, AgentPrincipal>([...SIM_COORDINATORS, ...Object.keys(SIM_WORKERS)].map((n) => [n, agentPrincipal(n)]))
  const registry = registryOf([owner, controlPlane, registrar, authority, ...agents.values()])
  const cards = new Map<string, AgentCard>()
  for (const [name, agent] of agents) {
    const spec = SIM_WORKERS[name]
    const capabilities = spec === undefined ? [CAPABILITIES.coordinate] : spec.capabilities.map((c) => CAPABILITIES[c])
    cards.set(name, agentCard(agent, { capabilities, maxConcurrency: spec?.slots ?? 1, description: `Simulated ${name}.` }, owner.actor, registrar, new Date(SIM_START - 86_400_000).toISOString()))
  }
  organization = { owner, controlPlane, authority, agents, registry, cards }
  return organization
}

/**
 * The in-process transport on the Authority's trusted path: every Command is still signed by its
 * client and goes through every other ingress check (freshness, idempotency, epochs, roles,
 * handlers), but its signature is not verified again. The simulator tests order and fencing under
 * faults; §6.4 verification is the conformance suite's, and skipping it here halves a seed's cost.
 */
function trustedTransport(authority: Authority): Transport {
  return { submit: async (command) => authority.submitTrusted(command) }
}

/**
 * Builds the world of `seed`: registers every Agent, opens their first Sessions, creates both
 * Missions and starts their Coordinators and the Workers.
 */
export async function createSimWorld(seed: number): Promise<SimWorld> {
  const clock = createVirtualClock(SIM_START)
  const now = (): number => clock.now()
  const org = simOrganization()
  const { owner, controlPlane, agents, cards } = org
  const authority = createAuthority({
    registry: org.registry,
    keys: { authority: org.authority.actor, signingKey: org.authority.key },
    clock: { now },
    random: seededRandom(seed, 'authority'),
    policy: { controlPlane: [controlPlane.actor.id] },
    deferEventSignatures: true,
    // The trusted path skips the schema check of the handlers' own Event payloads; a simulator is
    // where handler defects surface, so it keeps the check on.
    checkEventPayloads: true,
  })
  let commits = 0
  authority.onCommit(() => commits++)
  const delivery = createDelivery(authority)
  const blobs = createMemoryBlobStore()
  const agentOf = (name: string): AgentPrincipal => agents.get(name)!
  const actorOf = (name: string) => ({ type: 'agent' as const, id: agentOf(name).actor.id })

  const control: Client = createClient({ actor: controlPlane.actor, signingKey: controlPlane.key, transport: trustedTransport(authority), clock: { now }, random: seededRandom(seed, 'control-plane') })
  for (const [name, agent] of agents) {
    await control.registryAgentCardRegister({ card: cards.get(name)! })
    await control.identitySessionOpen({ agentId: agent.actor.id })
  }

  // Executors: the demo's scripted stages, paced short so a seed sees many lifecycles per step.
  const env: ExecutorEnv = {
    sleep: (ms) => clock.sleep(ms),
    external: (operationId, key) => `receipt:${operationId}:${key.slice(-12)}`,
    pace: (workItemId) => 0.15 + (createHash('sha256').update(`${seed}\u0000${workItemId}`).digest()[0]! / 255) * 0.15,
  }
  // Each executor's reported usage is summed, for the check that nothing is charged twice.
  const reported = new Map<string, Record<string, number>>()
  const metered = (spec: ExecutorSpec): ExecutorSpec => ({
    ...spec,
    run: (item, ctx) =>
      spec.run(
        item,
        Object.freeze({
          ...ctx,
          reportUsage: async (delta: UsageDelta) => {
            await ctx.reportUsage(delta)
            const sum = reported.get(item.workItemId) ?? {}
            for (const [dimension, n] of Object.entries(delta)) sum[dimension] = (sum[dimension] ?? 0) + (n ?? 0)
            reported.set(item.workItemId, sum)
          },
        }),
      ),
  })
  const executors = Object.fromEntries(Object.entries(demoExecutors(env)).map(([id, spec]) => [id, metered(spec)]))

  const missions = simPlans(SIM_START)
  const missionOwner = createMissionOwner({
    actor: owner.actor,
    signingKey: owner.key,
    transport: trustedTransport(authority),
    feed: deliveryFeed(delivery, owner.actor),
    decide: approveAll(),
    clock: { now },
    random: seededRandom(seed, 'olga'),
  })
  for (const plan of missions) {
    await missionOwner.createMission(plan.groupId, {
      missionId: plan.missionId,
      title: plan.title,
      objective: `${plan.title}, verified stage by stage.`,
      definitionOfDone: [{ criterionId: 'shipped', description: 'Every stage is verified.', evidenceRequired: ['human_review'] }],
      deadline: new Date(SIM_START + 72 * HOUR).toISOString(),
      budget: { currency: 'USD', financialLimit: 1000, modelTokenLimit: 5_000_000, toolCallLimit: 5000, externalSideEffectLimit: 10 },
      approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
      coordinatorAgentId: agentOf(SIM_COORDINATORS[0]).actor.id,
      coordinatorLeaseSeconds: 14_400,
    })
  }

  const directory: DirectoryEntry[] = Object.entries(SIM_WORKERS).map(([n, w]) => ({ agentId: agentOf(n).actor.id, capabilities: w.capabilities.map((c) => CAPABILITIES[c]) }))
  const coordinatorLinks = new Map<string, SimLink>()
  const appointments = new Map<string, number>()
  const coordinatorFor = (plan: MissionPlan, index: number): Coordinator => {
    const name = SIM_COORDINATORS[index % SIM_COORDINATORS.length]!
    const link: SimLink = { up: true, refused: 0 }
    coordinatorLinks.set(plan.groupId, link)
    appointments.set(plan.groupId, index)
    return createCoordinator({
      actor: actorOf(name),
      signingKey: agentOf(name).key,
      sessionEpoch: 1,
      transport: linkedTransport(trustedTransport(authority), link),
      feed: deliveryFeed(delivery, actorOf(name)),
      plan,
      directory,
      blobs,
      clock: { now },
      // One stream per appointment: a replacement never replays its predecessor's identifiers.
      random: seededRandom(seed, `${name}@${plan.label}#${index}`),
      offerSeconds: SIM_OFFER_SECONDS,
    })
  }
  const coordinators = new Map(missions.map((p) => [p.groupId, coordinatorFor(p, 0)]))

  const workers = new Map<string, SimWorkerSlot>()
  const stuck: string[] = []
  function start(slot: SimWorkerSlot): void {
    const spec = SIM_WORKERS[slot.name]!
    const feed = faultyFeed(deliveryFeed(delivery, actorOf(slot.name)), createPrng(seed, `feed:${slot.name}#${slot.sessionEpoch}`), SIM_DELIVERY_FAULTS)
    slot.feed = feed
    slot.joined.clear()
    slot.stuck = false
    slot.worker = createWorker({
      actor: actorOf(slot.name),
      signingKey: agentOf(slot.name).key,
      sessionEpoch: slot.sessionEpoch,
      transport: linkedTransport(trustedTransport(authority), slot.link),
      feed,
      store: slot.store,
      clock: { now },
      random: seededRandom(seed, `${slot.name}#${slot.sessionEpoch}`),
      slots: spec.slots,
      executors: Object.fromEntries(spec.capabilities.map((c) => [CAPABILITIES[c].id, executors[CAPABILITIES[c].id]!])),
      leases: SIM_LEASES,
      blobs,
    })
  }
  for (const name of Object.keys(SIM_WORKERS)) {
    const slot: SimWorkerSlot = { name, agentId: agentOf(name).actor.id, link: { up: true, refused: 0 }, store: createMemoryWorkerStore(), sessionEpoch: 1, joined: new Set(), stuck: false }
    workers.set(name, slot)
    start(slot)
  }

  /** §8: a Worker joins a Group once its Coordinator has enrolled it. */
  function joinWorkers(): void {
    const enrolled = new Map<string, string[]>()
    for (const [groupId, c] of coordinators) for (const id of c.enrolled()) enrolled.set(id, [...(enrolled.get(id) ?? []), groupId])
    for (const slot of workers.values()) {
      if (slot.worker === undefined) continue
      const fresh = (enrolled.get(slot.agentId) ?? []).filter((g) => !slot.joined.has(g))
      for (const groupId of fresh) {
        try {
          slot.worker.join([groupId])
          slot.joined.add(groupId)
        } catch {
          // Not readable yet (GROUP_NOT_FOUND): a later round joins.
        }
      }
    }
  }

  const rootsDone = (): boolean => missions.every((p) => ['approved', 'cancelled', 'failed'].includes(authority.group(p.groupId)?.mission.state ?? 'active'))

  return {
    seed,
    clock,
    authority,
    delivery,
    missions,
    owner: missionOwner,
    coordinators,
    coordinatorLinks,
    workers,
    reportedUsage: (workItemId) => reported.get(workItemId),
    commits: () => commits,
    stuck: () => [...stuck],
    async round(between) {
      if (!(await returns(missionOwner.tick()))) stuck.push('the MissionOwner')
      for (const [groupId, c] of coordinators) if (!(await returns(c.tick()))) stuck.push(`the Coordinator of ${groupId}`)
      joinWorkers()
      await between?.()
      for (const slot of workers.values()) {
        if (slot.worker === undefined || slot.stuck) continue
        if (await returns(slot.worker.tick())) continue
        slot.stuck = true
        stuck.push(`Worker ${slot.name} (session ${slot.sessionEpoch})`)
      }
      await settle(3)
      for (const slot of workers.values()) slot.feed?.flush()
      await settle(1)
    },
    async advanceQuietly() {
      clock.advanceTo(Math.min(clock.nextDueMs() ?? Number.POSITIVE_INFINITY, now() + MAX_QUIET_STEP_MS))
      await settle(2)
    },
    async jump(ms) {
      clock.advanceTo(now() + ms)
      await settle(2)
    },
    async crash(name, keepState) {
      const slot = workers.get(name)
      if (slot?.worker === undefined) return
      const worker = slot.worker
      delete slot.worker
      delete slot.feed
      await worker.stop()
      if (!keepState) slot.store = createMemoryWorkerStore()
    },
    async respawn(name) {
      const slot = workers.get(name)
      if (slot === undefined || slot.worker !== undefined) return
      // §6.3, §11.3: the new runtime's Session revokes the old one's leases before it may start anything.
      const receipt = await control.identitySessionOpen({ agentId: slot.agentId })
      slot.sessionEpoch = receipt.events.find((e) => isEventOf(e, 'ext.missionweaveprotocol.identity.session_opened'))?.payload.sessionEpoch ?? slot.sessionEpoch + 1
      start(slot)
    },
    async replaceCoordinator(groupId) {
      const outgoing = coordinators.get(groupId)
      const plan = missions.find((p) => p.groupId === groupId)
      if (outgoing === undefined || plan === undefined) return false
      const index = (appointments.get(groupId) ?? 0) + 1
      const next = SIM_COORDINATORS[index % SIM_COORDINATORS.length]!
      try {
        const pkg = outgoing.handover('Simulated Coordinator replacement.')
        await missionOwner.appointCoordinator(groupId, agentOf(next).actor.id, pkg, 'The Coordinator runtime is being replaced (simulated fault).')
      } catch {
        return false
      }
      outgoing.close()
      coordinators.set(groupId, coordinatorFor(plan, index))
      return true
    },
    finished: rootsDone,
    async close() {
      for (const slot of workers.values()) await slot.worker?.stop()
      for (const c of coordinators.values()) c.close()
      missionOwner.close()
    },
  }
}
