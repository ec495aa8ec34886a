/**
 * What the failure suite's faults share (`faults.ts`): the suite's state across the demo's hooks,
 * the shape of one injectable {@link Fault}, and small readers of the demo world (the Authority's
 * WorkItems, who runs what, under which lease) that the faults decide and judge by.
 * @module
 */
import type { WorkItemRecord } from '@weft/authority'
import { ProtocolError } from '@weft/codec'
import { createClient, type Client, type FeedHandlers } from '@weft/client'
import type { Event } from '@weft/spec'
import type { Worker, WorkerStore, WorkSnapshot } from '@weft/worker'
import { seededRandom } from './clock.js'
import type { FaultName, FaultNotice } from './faults.js'
import type { StageSpec } from './mission-plan.js'
import type { DemoLine, DemoWorld } from './run.js'
import type { SideEffectAttempt } from './verify.js'

/** A virtual minute in ms. */
export const MINUTE = 60_000
/** How long a fault may take to resolve before it counts as failed. */
export const RESOLVE_WITHIN_MS = 120 * MINUTE
/** WorkItem states in which its owner holds it (§10.2). */
export const HELD_STATES: ReadonlySet<string> = new Set(['queued', 'active', 'blocked'])

/** What a fault found once it resolved. */
export interface Outcome {
  readonly observed: string
  readonly held: boolean
}

/** One injectable fault. */
export interface Fault {
  readonly name: FaultName
  readonly expected: string
  /** What the world must show before the fault is injected. */
  readonly waitsFor: string
  /** Injects the fault if the world is ready; the announcement, or `undefined` when not yet. */
  inject(): Promise<string | undefined>
  /** Called every round after the injection; the outcome once resolved. */
  observe(): Promise<Outcome | undefined>
  /** After the run: the outcome amended with what only the end can show. */
  confirm?(outcome: Outcome): Outcome
}

/** What the suite's feed wrapper keeps of one Worker runtime's deliveries. */
export interface Tap {
  readonly handlers: Map<string, FeedHandlers>
  readonly delivered: Map<string, Event[]>
  acks: number
}

/** An executor run as it started (§11.3: does it resume from a checkpoint?). */
export interface RunStart {
  /** `name#sessionEpoch`. */
  readonly runtime: string
  readonly workItemId: string
  readonly ownershipEpoch: number
  readonly resumed: boolean
  readonly atMs: number
}

/** The suite's state across hooks. */
export interface Suite {
  readonly seed: number
  world: DemoWorld | undefined
  readonly stores: Map<string, WorkerStore>
  readonly taps: Map<string, Tap>
  readonly attempts: SideEffectAttempt[]
  readonly runs: RunStart[]
  readonly lines: DemoLine[]
  readonly warnings: string[]
  /** Virtual epoch ms of the start of the run. */
  startMs: number
  /** Whether a Worker has checkpointed at a safe point for a preemption yet (§11.3); the Worker restart waits for it. */
  preemptionSeen: boolean
  /** The Organization control plane's client, once needed. */
  control: Client | undefined
  notice(fault: FaultName, phase: FaultNotice['phase'], text: string): void
}

/**
 * The demo world the suite runs in.
 * @throws Error before the demo set it up.
 */
export function worldOf(s: Suite): DemoWorld {
  if (s.world === undefined) throw new Error('the failure suite ran before the demo was set up')
  return s.world
}

/** The virtual clock now. */
export const nowOf = (s: Suite): number => worldOf(s).clock.now()

/** The Agent ID of the demo Agent `name`. */
export function agentIdOf(s: Suite, name: string): string {
  const agent = worldOf(s).principals.agents.get(name)
  if (agent === undefined) throw new Error(`no Agent ${name}`)
  return agent.actor.id
}

/** `+HH:MM` of virtual time since the start. */
export function clockText(elapsedMs: number): string {
  const minutes = Math.floor(elapsedMs / MINUTE)
  return `+${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`
}

/** A virtual duration in seconds or minutes. */
export function durationText(ms: number): string {
  return ms < 2 * MINUTE ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / MINUTE)} min`
}

/** Every WorkItem of the Authority's state with its Group. */
export function* workItems(s: Suite): Generator<{ readonly groupId: string; readonly record: WorkItemRecord }> {
  for (const [groupId, group] of worldOf(s).authority.state.groups) for (const record of group.workItems.values()) yield { groupId, record }
}

/** The Authority's record of a WorkItem. */
export function recordOf(s: Suite, groupId: string, workItemId: string): WorkItemRecord | undefined {
  return worldOf(s).authority.group(groupId)?.workItems.get(workItemId)
}

/** WorkItems the Agent holds (queued, active or blocked) as the Authority says. */
export function heldBy(s: Suite, agentId: string): Set<string> {
  const held = new Set<string>()
  for (const { record } of workItems(s)) if (record.doc.owner?.agentId === agentId && HELD_STATES.has(record.doc.state)) held.add(record.doc.workItemId)
  return held
}

/** Every stage any Coordinator drives, plus the plans' own (corrective stages included). */
export function stageOf(s: Suite, workItemId: string): StageSpec | undefined {
  const w = worldOf(s)
  for (const c of w.coordinators.values()) for (const stage of c.stages()) if (stage.workItemId === workItemId) return stage
  return [...w.plans.checkout.plan.stages, ...w.plans.search.plan.stages, ...w.plans.staging.stages].find((stage) => stage.workItemId === workItemId)
}

/** A WorkItem's title, for announcements. */
export const titleOf = (s: Suite, workItemId: string): string => stageOf(s, workItemId)?.title ?? workItemId

/** A Group's Mission label (`checkout`, ...), for announcements. */
export function labelOf(s: Suite, groupId: string): string {
  const p = worldOf(s).plans
  return [p.checkout.plan, p.search.plan, p.staging].find((plan) => plan.groupId === groupId)?.label ?? groupId
}

/** A Worker that runs exactly one WorkItem, online, with the Authority agreeing: its Agent's only active WorkItem, under the Agent's Execution Lease. */
export interface SoleRun {
  readonly name: string
  readonly worker: Worker
  readonly groupId: string
  readonly record: WorkItemRecord
  readonly lease: NonNullable<WorkItemRecord['executionLease']>
}

/** Every {@link SoleRun} of the fleet now. */
export function soleRuns(s: Suite): SoleRun[] {
  const out: SoleRun[] = []
  for (const [name, worker] of worldOf(s).workers) {
    const active = worker.snapshot().active
    if (active.length !== 1 || worker.offline) continue
    const agentId = agentIdOf(s, name)
    const running = [...workItems(s)].filter(({ record }) => record.doc.state === 'active' && record.doc.owner?.agentId === agentId)
    const only = running.length === 1 && running[0]!.record.doc.workItemId === active[0] ? running[0]! : undefined
    const lease = only?.record.executionLease
    if (only !== undefined && lease?.state === 'active' && lease.holderAgentId === agentId) out.push({ name, worker, ...only, lease })
  }
  return out
}

/** Whether the Authority holds `ownershipEpoch` of the WorkItem for `agentId` under a live Execution Lease now (§11.3). */
export function holdsLiveLease(s: Suite, agentId: string, item: WorkSnapshot): boolean {
  const record = recordOf(s, item.groupId, item.workItemId)
  const lease = record?.executionLease
  return (
    record?.doc.state === 'active' &&
    record.doc.owner?.agentId === agentId &&
    record.doc.owner.ownershipEpoch === item.ownershipEpoch &&
    lease?.state === 'active' &&
    lease.holderAgentId === agentId &&
    Date.parse(lease.expiresAt) > nowOf(s)
  )
}

/** The §19 code of a refusal. */
export function codeOf(error: unknown): string {
  return ProtocolError.from(error).code
}

/** Runs `send` and answers `accepted` or the refusal's §19 code. */
export async function outcomeCode(send: () => Promise<unknown>): Promise<string> {
  try {
    await send()
    return 'accepted'
  } catch (error) {
    return codeOf(error)
  }
}

/** The Organization control plane's client (§6.3: it opens Agent sessions). */
export function controlPlane(s: Suite): Client {
  const w = worldOf(s)
  const cp = w.principals.controlPlane
  s.control ??= createClient({ actor: cp.actor, signingKey: cp.key, transport: w.authority.connect(), clock: w.clock, random: seededRandom(s.seed, 'faults:control-plane') })
  return s.control
}

/** What an {@link instant} fault's single step found: its announcement and its outcome. */
export interface Instant {
  readonly announce: string
  readonly outcome: Outcome
}

/** A fault injected and checked in one step: `run` answers `undefined` while the world is not ready. */
export function instant(name: FaultName, expected: string, waitsFor: string, run: () => Promise<Instant | undefined>): Fault {
  let outcome: Outcome | undefined
  return {
    name,
    expected,
    waitsFor,
    async inject() {
      const done = await run()
      outcome = done?.outcome
      return done?.announce
    },
    observe: async () => outcome,
  }
}
