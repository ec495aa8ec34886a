/**
 * A small world for Coordinator tests, built through public APIs only: one Authority on a
 * virtual clock, the MissionOwner, one Coordinator (and a standby), and reference Workers whose
 * executors the test chooses. {@link step} drives everyone one round, the way `runDemo` does.
 */
import { createAuthority, createDelivery, createMemoryBlobStore, deliveryFeed, type Authority, type Delivery } from '@weft/authority'
import { createClient, type Transport } from '@weft/client'
import type { Registry } from '@weft/codec'
import { createWorker, type Executor, type ExecutorResult, type SlotContext, type Worker } from '@weft/worker'
import { createVirtualClock, seededRandom, type VirtualClock } from '../src/demo/clock.js'
import { createCoordinator, type Coordinator } from '../src/demo/coordinator.js'
import type { DirectoryEntry, MissionPlan, StageSpec } from '../src/demo/mission-plan.js'
import { agentCard, agentPrincipal, humanPrincipal, registryOf, servicePrincipal, type AgentPrincipal } from '../src/demo/organization.js'
import { approveAll, createMissionOwner, type Decider, type MissionOwner } from '../src/demo/owner.js'
import { CAPABILITIES, planStage, type MissionFrame, type StageOptions } from '../src/demo/plans.js'

export const START = Date.parse('2026-07-15T08:00:00.000Z')
export const GROUP = 'urn:weft:test:group:shop'
export const MISSION = 'urn:weft:test:mission:shop'

const owner = humanPrincipal('olive')
const controlPlane = servicePrincipal('control-plane')
const registrar = servicePrincipal('registry')
const authorityPrincipal = servicePrincipal('group-authority')
/** Agents: two Coordinators and three Workers. */
export const AGENTS = ['atlas', 'atlas-2', 'w1', 'w2', 'rev'] as const
export type AgentName = (typeof AGENTS)[number]
const agents = new Map<AgentName, AgentPrincipal>(AGENTS.map((n) => [n, agentPrincipal(n)]))

/** The Agent ID of `name`. */
export function idOf(name: AgentName): string {
  return agents.get(name)!.actor.id
}

/** Where the test plan's stages live. */
const FRAME: MissionFrame = { slug: 'shop', repository: 'urn:weft:test:repo', deadlineMs: START + 72 * 3_600_000 }

/** The WorkItem ID of stage `key` of the test plan. */
export function workIdOf(key: string): string {
  return `urn:weft:demo:work:shop:${key}`
}

/** An implementation stage `key` (patch and test report), whose test report the Coordinator re-checks. */
export function testStage(key: string, extras: StageOptions = {}): StageSpec {
  return planStage(FRAME, 'implement', key, `Stage ${key}`, 'Implement the change.', extras)
}

/** A plan over `stages`. */
export function testPlan(stages: readonly StageSpec[], revise?: MissionPlan['revise']): MissionPlan {
  return { missionId: MISSION, groupId: GROUP, label: 'shop', title: 'Shop', stages, ...(revise === undefined ? {} : { revise }) }
}

/** What an implementation executor delivers: a patch and a test report, with Evidence for both criteria. */
export async function deliverPatch(ctx: SlotContext, report: { passed: number; failed: number } = { passed: 3, failed: 0 }): Promise<ExecutorResult> {
  const patch = await ctx.publishArtifact(`diff for ${ctx.item.workItemId}\n`, { mediaType: 'text/x-diff' })
  const results = await ctx.publishArtifact(JSON.stringify(report), { mediaType: 'application/json' })
  const hashes = [patch.contentHash, results.contentHash]
  return {
    artifacts: [patch, results],
    evidence: [
      ctx.evidence({ type: 'deterministic_test', criterionIds: ['unit-tests-pass'], method: 'Ran the tests.', result: 'passed', artifactHashes: hashes }),
      ctx.evidence({ type: 'artifact_integrity', criterionIds: ['patch-applies'], method: 'Applied the patch.', result: 'passed', artifactHashes: hashes }),
    ],
  }
}

/** The test world. */
export interface TestWorld {
  readonly clock: VirtualClock
  readonly authority: Authority
  readonly delivery: Delivery
  readonly registry: Registry
  readonly blobs: Map<string, Uint8Array>
  readonly owner: MissionOwner
  readonly coordinator: Coordinator
  readonly workers: Map<AgentName, Worker>
  /** Workers that no longer tick (a crashed runtime, §11.5). */
  readonly dead: Set<AgentName>
  /** Other Coordinators taking part (e.g. a replacement). */
  readonly extra: Coordinator[]
  /** Creates another Coordinator of the same plan for `name`. */
  coordinatorFor(name: AgentName, plan?: MissionPlan): Coordinator
}

/** Options of {@link testWorld}. */
export interface TestWorldOptions {
  readonly plan: MissionPlan
  /** Executors by Worker; a Worker without one is not started. */
  readonly executors: Partial<Record<AgentName, Executor>>
  readonly directory?: readonly DirectoryEntry[]
  readonly decide?: Decider
  /** Default 300 s. */
  readonly offerSeconds?: number
}

/** The directory of the three Workers: w1 and w2 implement, rev reviews. */
export const DIRECTORY: readonly DirectoryEntry[] = [
  { agentId: idOf('w1'), capabilities: [CAPABILITIES.implement] },
  { agentId: idOf('w2'), capabilities: [CAPABILITIES.implement] },
  { agentId: idOf('rev'), capabilities: [CAPABILITIES.review] },
]

/** Boots the Organization, creates the Mission and its Coordinator, and the Workers with executors. */
export async function testWorld(options: TestWorldOptions): Promise<TestWorld> {
  const clock = createVirtualClock(START)
  const now = (): number => clock.now()
  const registry = registryOf([owner, controlPlane, registrar, authorityPrincipal, ...agents.values()])
  const authority = createAuthority({
    registry,
    keys: { authority: authorityPrincipal.actor, signingKey: authorityPrincipal.key },
    clock: { now },
    random: seededRandom(9, 'authority'),
    policy: { controlPlane: [controlPlane.actor.id] },
  })
  const delivery = createDelivery(authority)
  const backing = new Map<string, Uint8Array>()
  const blobs = createMemoryBlobStore({ backing })
  const transport = (): Transport => authority.connect()
  const control = createClient({ actor: controlPlane.actor, signingKey: controlPlane.key, transport: transport(), clock: { now }, random: seededRandom(9, 'cp') })
  for (const [name, agent] of agents) {
    const capabilities = name.startsWith('atlas') ? [CAPABILITIES.coordinate] : name === 'rev' ? [CAPABILITIES.review] : [CAPABILITIES.implement]
    await control.registryAgentCardRegister({ card: agentCard(agent, { capabilities, maxConcurrency: 1, description: name }, owner.actor, registrar, new Date(START - 86_400_000).toISOString()) })
    await control.identitySessionOpen({ agentId: agent.actor.id })
  }
  const missionOwner = createMissionOwner({
    actor: owner.actor,
    signingKey: owner.key,
    transport: transport(),
    feed: deliveryFeed(delivery, owner.actor),
    decide: options.decide ?? approveAll(),
    clock: { now },
    random: seededRandom(9, 'owner'),
  })
  await missionOwner.createMission(GROUP, {
    missionId: MISSION,
    title: 'Shop',
    objective: 'Ship the shop change.',
    definitionOfDone: [{ criterionId: 'shipped', description: 'Shipped.', evidenceRequired: ['human_review'] }],
    deadline: new Date(START + 72 * 3_600_000).toISOString(),
    budget: { currency: 'USD', financialLimit: 1000, modelTokenLimit: 1_000_000, toolCallLimit: 10_000 },
    approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    coordinatorAgentId: idOf('atlas'),
    coordinatorLeaseSeconds: 14_400,
  })
  const coordinatorFor = (name: AgentName, plan = options.plan): Coordinator =>
    createCoordinator({
      actor: { type: 'agent', id: idOf(name) },
      signingKey: agents.get(name)!.key,
      sessionEpoch: 1,
      transport: transport(),
      feed: deliveryFeed(delivery, { type: 'agent', id: idOf(name) }),
      plan,
      directory: options.directory ?? DIRECTORY,
      blobs,
      clock: { now },
      random: seededRandom(9, name),
      offerSeconds: options.offerSeconds ?? 300,
    })
  const workers = new Map<AgentName, Worker>()
  for (const [name, executor] of Object.entries(options.executors) as [AgentName, Executor][]) {
    const actor = { type: 'agent' as const, id: idOf(name) }
    workers.set(
      name,
      createWorker({
        actor,
        signingKey: agents.get(name)!.key,
        sessionEpoch: 1,
        transport: transport(),
        feed: deliveryFeed(delivery, actor),
        clock: { now },
        random: seededRandom(9, name),
        slots: 1,
        executor,
        blobs,
      }),
    )
  }
  return { clock, authority, delivery, registry, blobs: backing, owner: missionOwner, coordinator: coordinatorFor('atlas'), workers, dead: new Set(), extra: [], coordinatorFor }
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

const joined = new WeakMap<Worker, boolean>()

/** One round: owner, Coordinators, live Workers (joining their Group once enrolled), then settle. */
export async function step(w: TestWorld): Promise<void> {
  await w.owner.tick()
  for (const c of [w.coordinator, ...w.extra]) await c.tick()
  const enrolled = new Set([w.coordinator, ...w.extra].flatMap((c) => c.enrolled()))
  for (const [name, worker] of w.workers) {
    if (w.dead.has(name)) continue
    if (!joined.get(worker) && enrolled.has(idOf(name))) {
      worker.join([GROUP])
      joined.set(worker, true)
    }
    await worker.tick()
  }
  await settle()
}

/** Rounds until `done` holds (at most `rounds`), moving the clock `stepMs` after each quiet round. */
export async function until(w: TestWorld, done: () => boolean, rounds = 200, stepMs = 60_000): Promise<void> {
  for (let i = 0; i < rounds && !done(); i++) {
    const before = w.authority.group(GROUP)?.head ?? 0
    await step(w)
    if ((w.authority.group(GROUP)?.head ?? 0) === before) w.clock.advanceTo(Math.min(w.clock.nextDueMs() ?? Number.POSITIVE_INFINITY, w.clock.now() + stepMs))
  }
  if (!done()) throw new Error(`the condition did not hold within ${rounds} rounds`)
}

/** The state of WorkItem `key` of the test plan in the Authority. */
export function stateOf(w: TestWorld, key: string): string | undefined {
  return w.authority.group(GROUP)?.workItems.get(workIdOf(key))?.doc.state
}
