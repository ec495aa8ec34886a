/**
 * `weft demo --faults`: the failure suite of the proof of concept (§22). It runs the normal demo
 * ({@link runDemo}) and injects, one after the other as the run reaches a moment where each one
 * bites, the faults §22 names plus two ingress faults:
 *
 * | fault | what is done | what must hold |
 * | --- | --- | --- |
 * | duplicate Event delivery | Events a Worker already processed are fed to it again | its inbox drops them (§16, §4 invariant 8) |
 * | Worker restart | a Worker stops, its local projection is dropped and the control plane opens a new Session Epoch | its leases are revoked, its queues are rebuilt by replay, it resumes from its checkpoints (§11.1, §11.3) |
 * | Coordinator replacement | a Coordinator crashes; the MissionOwner appoints another under the next Coordinator Epoch | the old runtime's Commands are refused, the new one carries on (§7.2) |
 * | Group disconnection | a Worker's link is cut during active work | it works on within its lease, buffers a signed checkpoint and reconciles it on reconnect (§11.5) |
 * | lease expiry | a Worker stalls past its Execution Lease | the Coordinator reassigns under a higher Ownership Epoch; the stale owner's late result is refused, kept in the audit log and never completes the WorkItem (§4 invariant 5, §11.5) |
 * | high-priority arrival | (the demo's urgent security fix) | it preempts running work at a safe checkpoint (§11.3) |
 * | human change request | (the demo's scripted request) | a corrective round and a new submission follow (§7.3) |
 * | Action ID collision | an accepted Action ID is reused with other content | `ACTION_ID_COLLISION`, nothing appended (§15.1) |
 * | budget overflow | usage beyond a WorkItem budget is recorded | `BUDGET_EXCEEDED`, nothing applied (§12) |
 *
 * Every executor runs behind an audit of its side effects: each attempt is recorded as executed,
 * answered from the Worker's ledger, or refused; a run that lost its lease then tries one more
 * (stale) side effect, and a run that reached the outside repeats its operations once (duplicates),
 * so the verifier's "stale or duplicate side effects refused" is tested, not assumed. After the
 * run {@link verifyRun} checks the whole log.
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { WorkItemRecord } from '@weft/authority'
import { deliveryFeed } from '@weft/authority'
import { ProtocolError, sign } from '@weft/codec'
import { createClient, newUrnUuid, type Client, type EventFeed, type FeedHandlers } from '@weft/client'
import type { Event, EventPayload, Evidence } from '@weft/spec'
import { createMemoryWorkerStore, type Executor, type ExecutorFn, type SideEffectOptions, type SlotContext, type Worker, type WorkerOptions, type WorkerStore, type WorkSnapshot } from '@weft/worker'
import { seededRandom } from './clock.js'
import { capabilityMatches, createCoordinator, type Coordinator, type StageSpec } from './coordinator.js'
import { CAPABILITIES } from './plans.js'
import { runDemo, WORKER_SPECS, type DemoLine, type DemoOptions, type DemoResult, type DemoWorld } from './run.js'
import { verifyRun, type SideEffectAttempt, type Verification } from './verify.js'

/** The faults of the suite, in the order they are reported when they happen at the same time. */
export const FAULT_NAMES = [
  'duplicate-event-delivery',
  'action-id-collision',
  'budget-overflow',
  'coordinator-replacement',
  'worker-restart',
  'group-disconnection',
  'lease-expiry-reassignment',
  'high-priority-preemption',
  'human-change-request',
] as const

/** A fault of the suite. */
export type FaultName = (typeof FAULT_NAMES)[number]

/** One injected fault: when, what had to hold, and what did. */
export interface FaultRecord {
  readonly name: FaultName
  /** Virtual epoch ms of the injection (or of the scripted event, for the demo's own faults). */
  readonly atMs: number
  readonly expected: string
  readonly observed: string
  readonly held: boolean
}

/** A terminal announcement: a fault is injected, or it resolved. */
export interface FaultNotice {
  readonly atMs: number
  /** Virtual ms since the start of the run. */
  readonly elapsedMs: number
  readonly fault: FaultName
  readonly phase: 'inject' | 'held' | 'failed'
  readonly text: string
}

/** Options of {@link runFaultSuite}: those of the demo (its hooks are the suite's), plus announcements. */
export interface FaultSuiteOptions extends Omit<DemoOptions, 'hooks'> {
  readonly onNotice?: (notice: FaultNotice) => void
}

/** What the suite produced: the demo's result with the fault records and the verification. */
export interface FaultSuiteResult extends DemoResult {
  /** One record per fault of {@link FAULT_NAMES}, by time. */
  readonly faults: readonly FaultRecord[]
  readonly verification: Verification
  /** Every fault held and every check passed. */
  readonly passed: boolean
}

/** A suite run: its result, the world it ran in and the side-effect attempts the audit saw. */
export interface FaultSuiteRun {
  readonly result: FaultSuiteResult
  readonly world: DemoWorld
  readonly attempts: readonly SideEffectAttempt[]
}

/** The operation a run that lost its lease tries anyway (§11.3: it must be refused). */
export const STALE_PROBE_OPERATION = 'weft.faults:after-lease-loss'

const MINUTE = 60_000
/** How long a crashed Coordinator stays silent before its MissionOwner appoints another. */
const DETECTION_MS = 10 * MINUTE
/** How long a fault may take to resolve before it counts as failed. */
const RESOLVE_WITHIN_MS = 120 * MINUTE
/** The codes that fence a replaced Coordinator's runtime (§7.2, §8). */
const FENCED_COORDINATOR: ReadonlySet<string> = new Set(['AUTH_STALE_COORDINATOR', 'MEMBERSHIP_REQUIRED', 'MEMBERSHIP_STALE'])
/** The codes a stale owner's late result may get (§4 invariant 5, §11.3). */
const FENCED_OWNER: ReadonlySet<string> = new Set(['WORK_STALE_OWNERSHIP', 'WORK_LEASE_EXPIRED'])
const HELD_STATES: ReadonlySet<string> = new Set(['queued', 'active', 'blocked'])

/** What a fault found once it resolved. */
interface Outcome {
  readonly observed: string
  readonly held: boolean
}

/** One injectable fault. */
interface Fault {
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
interface Tap {
  readonly handlers: Map<string, FeedHandlers>
  readonly delivered: Map<string, Event[]>
  acks: number
}

/** An executor run as it started (§11.3: does it resume from a checkpoint?). */
interface RunStart {
  /** `name#sessionEpoch`. */
  readonly runtime: string
  readonly workItemId: string
  readonly ownershipEpoch: number
  readonly resumed: boolean
  readonly atMs: number
}

/** The suite's state across hooks. */
interface Suite {
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
  preemptionSeen: boolean
  /** The Organization control plane's client, once needed. */
  control: Client | undefined
  notice(fault: FaultName, phase: FaultNotice['phase'], text: string): void
}

// ---------------------------------------------------------------------------------------------
// Small readers of the world
// ---------------------------------------------------------------------------------------------

function worldOf(s: Suite): DemoWorld {
  if (s.world === undefined) throw new Error('the failure suite ran before the demo was set up')
  return s.world
}

const nowOf = (s: Suite): number => worldOf(s).clock.now()

function agentIdOf(s: Suite, name: string): string {
  const agent = worldOf(s).principals.agents.get(name)
  if (agent === undefined) throw new Error(`no Agent ${name}`)
  return agent.actor.id
}

/** `+HH:MM` of virtual time since the start. */
function clockText(elapsedMs: number): string {
  const minutes = Math.floor(elapsedMs / MINUTE)
  return `+${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`
}

/** A virtual duration in seconds or minutes. */
function durationText(ms: number): string {
  return ms < 2 * MINUTE ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / MINUTE)} min`
}

/** Every WorkItem of the Authority's state with its Group. */
function* workItems(s: Suite): Generator<{ readonly groupId: string; readonly record: WorkItemRecord }> {
  for (const [groupId, group] of worldOf(s).authority.state.groups) for (const record of group.workItems.values()) yield { groupId, record }
}

function recordOf(s: Suite, groupId: string, workItemId: string): WorkItemRecord | undefined {
  return worldOf(s).authority.group(groupId)?.workItems.get(workItemId)
}

/** WorkItems the Agent holds (queued, active or blocked) as the Authority says. */
function heldBy(s: Suite, agentId: string): Set<string> {
  const held = new Set<string>()
  for (const { record } of workItems(s)) if (record.doc.owner?.agentId === agentId && HELD_STATES.has(record.doc.state)) held.add(record.doc.workItemId)
  return held
}

/** Every stage any Coordinator drives, plus the plans' own (corrective stages included). */
function stageOf(s: Suite, workItemId: string): StageSpec | undefined {
  const w = worldOf(s)
  for (const c of w.coordinators.values()) for (const stage of c.stages()) if (stage.workItemId === workItemId) return stage
  return [...w.plans.checkout.plan.stages, ...w.plans.search.plan.stages, ...w.plans.staging.stages].find((stage) => stage.workItemId === workItemId)
}

const titleOf = (s: Suite, workItemId: string): string => stageOf(s, workItemId)?.title ?? workItemId

function labelOf(s: Suite, groupId: string): string {
  const p = worldOf(s).plans
  return [p.checkout.plan, p.search.plan, p.staging].find((plan) => plan.groupId === groupId)?.label ?? groupId
}

/** A Worker that runs exactly one WorkItem, online, with the Authority agreeing: its Agent's only active WorkItem, under the Agent's Execution Lease. */
interface SoleRun {
  readonly name: string
  readonly worker: Worker
  readonly groupId: string
  readonly record: WorkItemRecord
  readonly lease: NonNullable<WorkItemRecord['executionLease']>
}

/** Every {@link SoleRun} of the fleet now. */
function soleRuns(s: Suite): SoleRun[] {
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
function holdsLiveLease(s: Suite, agentId: string, item: WorkSnapshot): boolean {
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

function codeOf(error: unknown): string {
  return ProtocolError.from(error).code
}

/** Runs `send` and answers `accepted` or the refusal's §19 code. */
async function outcomeCode(send: () => Promise<unknown>): Promise<string> {
  try {
    await send()
    return 'accepted'
  } catch (error) {
    return codeOf(error)
  }
}

// ---------------------------------------------------------------------------------------------
// The Worker seams: a tapped feed, a kept store, audited executors
// ---------------------------------------------------------------------------------------------

/** Wraps a Worker's feed so the suite can hand it an already delivered Event again (§16). */
function tapped(s: Suite, name: string, feed: EventFeed): EventFeed {
  const tap: Tap = { handlers: new Map(), delivered: new Map(), acks: 0 }
  s.taps.set(name, tap)
  return {
    subscribe(groups, handlers) {
      for (const g of groups) tap.handlers.set(g.groupId, handlers)
      return feed.subscribe(groups, {
        ...handlers,
        onEvent(event) {
          if (event.groupId !== undefined) {
            const list = tap.delivered.get(event.groupId) ?? []
            list.push(event)
            tap.delivered.set(event.groupId, list)
          }
          handlers.onEvent(event)
        },
      })
    },
    ack(groupId, sequence) {
      tap.acks++
      return feed.ack(groupId, sequence)
    },
  }
}

/** Runs one side-effect attempt through the slot and records what became of it (§16). */
async function attempt<T>(s: Suite, runtime: string, agentId: string, ctx: SlotContext, operationId: string, fn: (key: string) => T | Promise<T>, options: SideEffectOptions | undefined, probe?: 'stale' | 'duplicate'): Promise<T> {
  const base = { worker: runtime, workItemId: ctx.item.workItemId, ownershipEpoch: ctx.item.ownershipEpoch, operationId, key: ctx.sideEffectKey(operationId), atMs: nowOf(s), ...(probe === undefined ? {} : { probe }) }
  let executed = false
  try {
    const value = await ctx.sideEffect(
      operationId,
      (key) => {
        executed = true
        s.attempts.push({ ...base, key, outcome: 'executed', current: holdsLiveLease(s, agentId, ctx.item) })
        return fn(key)
      },
      options,
    )
    if (!executed) s.attempts.push({ ...base, outcome: 'replayed' })
    return value
  } catch (error) {
    if (!executed) s.attempts.push({ ...base, outcome: 'refused', code: codeOf(error) })
    throw error
  }
}

/**
 * An executor whose side effects are audited: every attempt is recorded, the operations of a run
 * that reached the outside are repeated once (the ledger must answer them), and a run that lost
 * its lease tries one more side effect (the slot must refuse it).
 */
function audited(s: Suite, runtime: string, agentId: string, executor: Executor): Executor {
  const inner: ExecutorFn = typeof executor === 'function' ? executor : executor.run
  const run: ExecutorFn = async (item, ctx) => {
    s.runs.push({ runtime, workItemId: item.workItemId, ownershipEpoch: item.ownershipEpoch, resumed: ctx.resumeState !== undefined, atMs: nowOf(s) })
    const operations = new Map<string, { fn: (key: string) => unknown; options: SideEffectOptions | undefined }>()
    const counted: SlotContext = {
      ...ctx,
      sideEffect: (operationId, fn, options) => {
        operations.set(operationId, { fn, options })
        return attempt(s, runtime, agentId, ctx, operationId, fn, options)
      },
    }
    try {
      const result = await inner(item, counted)
      // §16: the same operation again under the same Ownership Epoch is a duplicate.
      for (const [operationId, op] of operations) await attempt(s, runtime, agentId, ctx, operationId, op.fn, op.options, 'duplicate')
      return result
    } catch (error) {
      // §11.3: after the lease is lost, no side effect may leave the slot.
      if (ctx.signal.aborted && ctx.signal.reason instanceof ProtocolError) {
        await attempt(s, runtime, agentId, ctx, STALE_PROBE_OPERATION, () => 'performed after the lease was lost', { reversible: true }, 'stale').catch(() => {})
      }
      throw error
    }
  }
  return typeof executor === 'function' ? run : { ...executor, run }
}

/** The `worker` hook: one local store per Worker name (kept across restarts), a tapped feed, audited executors. */
function workerHook(s: Suite, name: string, options: WorkerOptions): WorkerOptions {
  const store = s.stores.get(name) ?? createMemoryWorkerStore()
  s.stores.set(name, store)
  const runtime = `${name}#${options.sessionEpoch}`
  const executors = options.executors === undefined ? {} : { executors: Object.fromEntries(Object.entries(options.executors).map(([id, e]) => [id, audited(s, runtime, options.actor.id, e)])) }
  return { ...options, ...executors, store, feed: tapped(s, name, options.feed) }
}

// ---------------------------------------------------------------------------------------------
// The faults
// ---------------------------------------------------------------------------------------------

/** What an {@link instant} fault's single step found: its announcement and its outcome. */
interface Instant {
  readonly announce: string
  readonly outcome: Outcome
}

/** A fault injected and checked in one step: `run` answers `undefined` while the world is not ready. */
function instant(name: FaultName, expected: string, waitsFor: string, run: () => Promise<Instant | undefined>): Fault {
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

/** §16, §4 invariant 8: Events a Worker already processed come again; its inbox drops them. */
function duplicateDelivery(s: Suite): Fault {
  return instant('duplicate-event-delivery', 'The Worker deduplicates by Event ID: its projection, Cursor and ACKs do not change (§16).', 'a Worker that processed at least six Events of a Group', async () => {
    for (const [name, worker] of worldOf(s).workers) {
      const tap = s.taps.get(name)
      const store = s.stores.get(name)
      for (const [groupId, delivered] of tap?.delivered ?? []) {
        const handlers = tap?.handlers.get(groupId)
        const view = worker.projection.group(groupId)
        if (tap === undefined || store === undefined || handlers === undefined || view === undefined || delivered.length < 6 || view.head < 6) continue
        // The oldest and the three latest Events: a replay from far back and a redelivery around a reconnect.
        const again = [delivered[0]!, ...delivered.slice(-3)]
        const before = { view: structuredClone(view), acks: tap.acks, cursor: store.cursor(groupId) }
        for (const event of again) handlers.onEvent(event)
        const after = { view: worker.projection.group(groupId), acks: tap.acks, cursor: store.cursor(groupId) }
        const held = isDeepStrictEqual(before, after)
        return {
          announce: `feeding ${name} ${again.length} ${labelOf(s, groupId)} Events it already processed (sequences ${again.map((e) => e.sequence).join(', ')})`,
          outcome: {
            held,
            observed: held
              ? `${name}'s inbox dropped all ${again.length}: projection unchanged at sequence ${view.head}, Cursor ${after.cursor}, no new ACK`
              : `${name} changed: projection ${isDeepStrictEqual(before.view, after.view) ? 'unchanged' : 'changed'}, Cursor ${before.cursor} → ${after.cursor}, ACKs ${before.acks} → ${after.acks}`,
          },
        }
      }
    }
    return undefined
  })
}

/** §15.1: an accepted Action ID reused with other content is refused; the exact retry answers the original receipt. */
function actionIdCollision(s: Suite): Fault {
  const expected = 'The exact retry returns the original receipt; other content under the same Action ID is refused with ACTION_ID_COLLISION and appends nothing (§15.1).'
  return instant('action-id-collision', expected, 'a running Coordinator', async () => {
    const w = worldOf(s)
    const coordinator = [...w.coordinators.values()].find((c) => c.status() === 'running')
    if (coordinator === undefined) return undefined
    const groupId = coordinator.plan.groupId
    const built = coordinator.client.build('mission.renew_coordinator', { leaseSeconds: 14_400 }, { groupId })
    const first = await coordinator.client.resend(built)
    const retry = await coordinator.client.resend(built)
    const head = w.authority.group(groupId)?.head ?? 0
    const code = await outcomeCode(() => coordinator.client.send('mission.renew_coordinator', { leaseSeconds: 14_340 }, { groupId, actionId: built.command.actionId }))
    const appended = (w.authority.group(groupId)?.head ?? 0) - head
    return {
      announce: `${labelOf(s, groupId)}'s Coordinator renews its lease, retries the same Command, then reuses its Action ID ${built.command.actionId} for another lease length`,
      outcome: {
        held: first.events.length > 0 && retry.duplicate && code === 'ACTION_ID_COLLISION' && appended === 0,
        observed: `retry: ${retry.duplicate ? 'original receipt (duplicate)' : 'a new receipt'}; other content: ${code}; ${appended} Event(s) appended`,
      },
    }
  })
}

/** §12: usage beyond a WorkItem's budget is refused as a whole; nothing is applied. */
function budgetOverflow(s: Suite): Fault {
  const expected = 'The usage record is refused with BUDGET_EXCEEDED and the Group state is exactly as before (§12: no partial Event or state change).'
  return instant('budget-overflow', expected, 'active work under a live Execution Lease', async () => {
    const w = worldOf(s)
    for (const [name, worker] of w.workers) {
      const agentId = agentIdOf(s, name)
      for (const { groupId, record } of workItems(s)) {
        const lease = record.executionLease
        const owner = record.doc.owner
        const limit = record.doc.contract.budget.modelTokenLimit
        if (record.doc.state !== 'active' || lease?.state !== 'active' || lease.holderAgentId !== agentId || limit === undefined || owner === undefined) continue
        const workItemId = record.doc.workItemId
        const before = structuredClone(w.authority.group(groupId))
        const usageDelta = { modelTokens: limit + 1 }
        const code = await outcomeCode(() =>
          worker.client.send('ext.missionweaveprotocol.core.resource_usage_record', { workItemId, ownershipEpoch: owner.ownershipEpoch, executionLeaseId: lease.leaseId, usageDelta }, { groupId, workItemId }),
        )
        const unchanged = isDeepStrictEqual(before, w.authority.group(groupId))
        return {
          announce: `${name} records ${usageDelta.modelTokens} model tokens against ${titleOf(s, workItemId)}, whose budget allows ${limit}`,
          outcome: { held: code === 'BUDGET_EXCEEDED' && unchanged, observed: `${code}; Group state ${unchanged ? 'unchanged' : 'changed'}` },
        }
      }
    }
    return undefined
  })
}

/** §7.2: a Coordinator crashes; the MissionOwner appoints another under the next Coordinator Epoch. */
function coordinatorReplacement(s: Suite): Fault {
  const crashed = 'beacon'
  const successor = 'lark'
  let state: { failed: Coordinator; groupId: string; atMs: number; epoch: number; pkg: ReturnType<Coordinator['handover']> } | undefined
  let replacement: Coordinator | undefined
  return {
    name: 'coordinator-replacement',
    expected: `The replacement holds the next Coordinator Epoch and finishes the Mission; the crashed runtime's Commands are refused (§7.2: AUTH_STALE_COORDINATOR, or MEMBERSHIP_REQUIRED once its seat ended).`,
    waitsFor: 'the search Coordinator running with a verified WorkItem',
    async inject() {
      const w = worldOf(s)
      const failed = w.coordinators.get(crashed)
      const groupId = failed?.plan.groupId
      const group = groupId === undefined ? undefined : w.authority.group(groupId)
      if (failed?.status() !== 'running' || group === undefined || ![...group.workItems.values()].some((r) => r.doc.state === 'verified')) return undefined
      // The last Context Package it published before crashing is what its successor receives.
      const pkg = failed.handover(`Handover of ${failed.plan.title} after the Coordinator runtime stopped answering.`)
      failed.close()
      w.coordinators.delete(crashed)
      state = { failed, groupId: groupId!, atMs: nowOf(s), epoch: group.mission.coordinator.coordinatorEpoch, pkg }
      return `${crashed}, Coordinator of ${labelOf(s, groupId!)} under epoch ${state.epoch}, crashes; it stays silent for ${DETECTION_MS / MINUTE} minutes`
    },
    async observe() {
      const st = state!
      if (nowOf(s) < st.atMs + DETECTION_MS) return undefined
      const w = worldOf(s)
      const agent = w.principals.agents.get(successor)!
      const actor = { type: 'agent' as const, id: agent.actor.id }
      replacement = createCoordinator({
        actor,
        signingKey: agent.key,
        sessionEpoch: 1,
        transport: w.authority.connect(),
        feed: deliveryFeed(w.delivery, actor),
        plan: st.failed.plan,
        directory: Object.entries(WORKER_SPECS).map(([n, spec]) => ({ agentId: agentIdOf(s, n), capabilities: spec.capabilities.map((c) => CAPABILITIES[c]) })),
        blobs: w.blobs,
        clock: () => w.clock.now(),
        random: seededRandom(s.seed, `${successor}:${st.groupId}`),
        logger: (entry) => {
          if (entry.level === 'warn' && s.warnings.length < 200) s.warnings.push(`${successor} (replacement): ${entry.message}`)
        },
      })
      w.coordinators.set(`${successor}:${labelOf(s, st.groupId)}`, replacement)
      await w.owner.appointCoordinator(st.groupId, actor.id, st.pkg, `Coordinator ${crashed} stopped answering; ${successor} takes over from its Context Package.`)
      const group = w.authority.group(st.groupId)!
      const epoch = group.mission.coordinator.coordinatorEpoch
      const head = group.head
      // The crashed runtime comes back and acts on what it knew (§7.2: it is fenced).
      const code = await outcomeCode(() => st.failed.client.missionRenewCoordinator({ leaseSeconds: 14_400 }))
      const appended = group.head - head
      const held = epoch === st.epoch + 1 && group.mission.coordinator.agentId === actor.id && FENCED_COORDINATOR.has(code) && appended === 0
      return {
        held,
        observed: `${successor} appointed under epoch ${epoch} after ${DETECTION_MS / MINUTE} min of silence; the crashed runtime's lease renewal was refused with ${code}, ${appended} Event(s) appended`,
      }
    },
    confirm(outcome) {
      const w = worldOf(s)
      const groupId = state!.groupId
      const submitted = w.authority.events(groupId).filter((e) => e.kind === 'mission.submitted_for_approval')
      const byReplacement = submitted.filter((e) => e.actor.id === replacement?.actor.id).length
      const done = w.authority.group(groupId)?.mission.state === 'approved' && byReplacement > 0
      return { held: outcome.held && done, observed: `${outcome.observed}; the replacement took ${replacement?.decisions().length ?? 0} decision(s) and submitted ${byReplacement} revision(s), Mission ${w.authority.group(groupId)?.mission.state}` }
    },
  }
}

/** §11.1, §11.3: a Worker restarts with a new Session Epoch and without its local projection. */
function workerRestart(s: Suite): Fault {
  const name = 'ada'
  let st: { atMs: number; sessionEpoch: number; running: string[]; revoked: string[]; checkpointed: Set<string>; groups: string[]; next: Worker; rebuilt?: string } | undefined
  return {
    name: 'worker-restart',
    expected: 'Opening the new Session Epoch revokes the old runtime’s Execution Leases; the new runtime rebuilds its queues by replay from the Authority and resumes every revoked WorkItem from its checkpoint (§11.1, §11.3).',
    waitsFor: `the urgent preemption done, and ${name} running checkpointed work with more work held`,
    async inject() {
      const w = worldOf(s)
      const worker = w.workers.get(name)
      const agentId = agentIdOf(s, name)
      if (!s.preemptionSeen || worker === undefined) return undefined
      const held = heldBy(s, agentId)
      const running = [...workItems(s)].filter(({ record }) => record.doc.state === 'active' && record.executionLease?.holderAgentId === agentId)
      if (held.size < 2 || !running.some(({ record }) => record.lastCheckpoint !== undefined)) return undefined
      const groups = [...worker.projection.view.groups.keys()]
      await worker.stop()
      w.workers.delete(name)
      // §11.1: the projection log goes; checkpoints and the side-effect ledger are durable and stay.
      s.stores.get(name)?.clearProjectionLog()
      const control = controlPlane(s)
      const receipt = await control.identitySessionOpen({ agentId })
      const opened = receipt.events.find((e) => e.kind === 'ext.missionweaveprotocol.identity.session_opened')
      const sessionEpoch = (opened?.payload as EventPayload<'ext.missionweaveprotocol.identity.session_opened'> | undefined)?.sessionEpoch ?? 0
      const revoked = receipt.events
        .filter((e) => e.kind === 'ext.missionweaveprotocol.core.work_execution_lease_revoked')
        .map((e) => (e.payload as EventPayload<'ext.missionweaveprotocol.core.work_execution_lease_revoked'>).workItemId)
      const checkpointed = new Set(revoked.filter((id) => [...workItems(s)].some(({ record }) => record.doc.workItemId === id && record.lastCheckpoint !== undefined)))
      const next = w.spawnWorker(name, sessionEpoch)
      w.workers.set(name, next)
      st = { atMs: nowOf(s), sessionEpoch, running: running.map(({ record }) => record.doc.workItemId), revoked, checkpointed, groups, next }
      return `${name} stops with ${running.length} running and ${held.size - running.length} more held; its local projection is dropped and Session Epoch ${sessionEpoch} opened`
    },
    async observe() {
      const r = st!
      const w = worldOf(s)
      const agentId = agentIdOf(s, name)
      if (r.rebuilt === undefined) {
        const caughtUp = r.groups.every((g) => r.next.projection.group(g)?.head === w.authority.group(g)?.head)
        if (!caughtUp) return nowOf(s) > r.atMs + RESOLVE_WITHIN_MS ? { held: false, observed: 'the new runtime never caught up with the Group logs' } : undefined
        const mine = new Set<string>()
        for (const g of r.groups) for (const t of r.next.projection.group(g)?.work.values() ?? []) if (t.owner === agentId && HELD_STATES.has(t.state)) mine.add(t.workItemId)
        const authoritative = heldBy(s, agentId)
        if (!isDeepStrictEqual(mine, authoritative)) return { held: false, observed: `the replayed projection holds ${mine.size} WorkItem(s), the Authority ${authoritative.size}` }
        const events = r.groups.reduce((n, g) => n + (r.next.projection.group(g)?.head ?? 0), 0)
        r.rebuilt = `replayed ${events} Events of ${r.groups.length} Group(s): ${mine.size} held WorkItem(s), the same as the Authority's`
      }
      const runtime = `${name}#${r.sessionEpoch}`
      const restarts = r.revoked.map((id) => s.runs.find((run) => run.runtime === runtime && run.workItemId === id))
      if (restarts.some((x) => x === undefined)) return nowOf(s) > r.atMs + RESOLVE_WITHIN_MS ? { held: false, observed: `${r.rebuilt}; not every revoked WorkItem restarted` } : undefined
      const resumed = r.revoked.filter((id, i) => restarts[i]!.resumed && r.checkpointed.has(id))
      const notResumed = [...r.checkpointed].filter((id) => !resumed.includes(id))
      const fresh = r.revoked.length - r.checkpointed.size
      const held = r.revoked.length > 0 && r.running.every((id) => r.revoked.includes(id)) && notResumed.length === 0
      return {
        held,
        observed:
          `${r.revoked.length} Execution Lease(s) revoked; ${r.rebuilt}; every revoked WorkItem restarted, ${resumed.length} of ${r.checkpointed.size} checkpointed one(s) from the checkpoint` +
          `${fresh > 0 ? ` (${fresh} had no checkpoint yet and started over)` : ''}${notResumed.length > 0 ? `; not resumed: ${notResumed.map((id) => titleOf(s, id)).join(', ')}` : ''}`,
      }
    },
  }
}

/** A Worker a fault took hold of, the WorkItem it was running, and when. */
interface Seized {
  readonly name: string
  readonly worker: Worker
  readonly groupId: string
  readonly workItemId: string
  readonly atMs: number
}

/** A Worker whose link is cut while it runs a WorkItem under a lease that expires at `leaseExpiresMs`. */
interface Cut extends Seized {
  readonly leaseExpiresMs: number
}

/** §11.5: a Worker's link is cut during active work; it buffers a signed checkpoint and reconciles it on reconnect. */
function groupDisconnection(s: Suite): Fault {
  let st: Cut | undefined
  return {
    name: 'group-disconnection',
    expected: 'Offline the Worker goes on only within its lease, starts nothing new, buffers a signed checkpoint with the bounded-offline binding; on reconnect the Authority accepts it and nothing buffered is refused (§11.5).',
    waitsFor: 'a Worker running exactly one WorkItem under a freshly renewed Execution Lease',
    async inject() {
      const now = nowOf(s)
      const fresh = soleRuns(s).find(({ lease }) => now - Date.parse(lease.lastRenewedAt ?? lease.startsAt) <= MINUTE && Date.parse(lease.expiresAt) - now >= 8 * MINUTE)
      if (fresh === undefined) return undefined
      const { name, worker, groupId, record, lease } = fresh
      worldOf(s).links.get(name)!.up = false
      // The run pauses at its next safe point (§11.3), which comes within one chunk of work.
      worker.preempt(record.doc.workItemId)
      st = { name, worker, groupId, workItemId: record.doc.workItemId, atMs: now, leaseExpiresMs: Date.parse(lease.expiresAt) }
      return `${name}'s link to the Group service is cut while it runs ${titleOf(s, st.workItemId)}; it is asked to pause at its next safe point`
    },
    async observe() {
      const r = st!
      const w = worldOf(s)
      const store = s.stores.get(r.name)!
      const buffered = store.buffered()
      const checkpoint = buffered.find((b) => b.workItemId === r.workItemId && b.kind === 'work.checkpoint')
      const late = nowOf(s) >= r.leaseExpiresMs - 90_000
      // Reconnect once the checkpoint is buffered and time has moved on, so the reconciliation is visibly later.
      if (!late && (checkpoint === undefined || nowOf(s) <= checkpoint.bufferedAtMs)) return undefined
      const reconnectMs = nowOf(s)
      w.links.get(r.name)!.up = true
      await r.worker.tick()
      const agentId = agentIdOf(s, r.name)
      const log = w.authority.events(r.groupId)
      const accepted = log.find((e) => e.kind === 'work.checkpointed' && e.actor.id === agentId && (e.payload as EventPayload<'work.checkpointed'>).workItemId === r.workItemId && Date.parse(e.occurredAt) >= reconnectMs)
      const createdMs = accepted === undefined ? undefined : Date.parse((accepted.payload as EventPayload<'work.checkpointed'>).checkpoint.createdAt)
      const startedOffline = log.filter((e) => e.kind === 'work.started' && e.actor.id === agentId && Date.parse(e.occurredAt) > r.atMs && Date.parse(e.occurredAt) < reconnectMs).length
      const refused = w.authority.audit().filter((a) => a.actor?.id === agentId && Date.parse(a.at) >= reconnectMs).length
      const left = store.buffered().length
      const held = checkpoint !== undefined && createdMs !== undefined && createdMs < reconnectMs && startedOffline === 0 && refused === 0 && left === 0
      return {
        held,
        observed:
          checkpoint === undefined
            ? `no checkpoint was buffered before the lease ran short; reconnected at ${clockText(reconnectMs - s.startMs)}`
            : `worked ${durationText(checkpoint.bufferedAtMs - r.atMs)} offline and buffered ${buffered.length} signed Command(s), a checkpoint among them ${accepted === undefined ? 'that was never accepted' : `accepted on reconnect ${durationText(reconnectMs - (createdMs ?? reconnectMs))} after it was made`}; ${refused} refused, ${left} left in the buffer, ${startedOffline} WorkItem(s) started offline`,
      }
    },
  }
}

/** A stalled Worker; its late result cites `epoch` and `leaseId`, the assignment it held. */
interface Stall extends Seized {
  readonly agentId: string
  readonly epoch: number
  readonly leaseId: string
}

/** §11.5, §4 invariant 5: a Worker stalls past its lease; the WorkItem is reassigned and the late result refused. */
function leaseExpiry(s: Suite): Fault {
  let st: Stall | undefined
  return {
    name: 'lease-expiry-reassignment',
    expected: 'After the lease lapses the Coordinator reassigns under a higher Ownership Epoch; the stale owner’s late result is refused, kept in the audit log and never completes the WorkItem (§11.5, §4 invariant 5).',
    waitsFor: 'a Worker running exactly one WorkItem that another Worker of the fleet could take over',
    async inject() {
      const w = worldOf(s)
      // §10.3: only a stage the Coordinator may offer to any capable Agent can go to another Worker.
      const canTakeOver = (name: string, stage: StageSpec): boolean => stage.contract.requiredCapabilities.every((need) => WORKER_SPECS[name]!.capabilities.some((c) => capabilityMatches(CAPABILITIES[c], need)))
      const stalled = soleRuns(s).find(({ name, record }) => {
        const stage = stageOf(s, record.doc.workItemId)
        return stage !== undefined && stage.candidates === undefined && stage.promote === undefined && [...w.workers.keys()].some((n) => n !== name && canTakeOver(n, stage))
      })
      const owner = stalled?.record.doc.owner
      if (stalled === undefined || owner === undefined) return undefined
      const { name, worker, groupId, record, lease } = stalled
      // A stall: no ticks (so no renewals) and nothing reaches the Group service.
      w.links.get(name)!.up = false
      w.workers.delete(name)
      st = { name, worker, agentId: owner.agentId, groupId, workItemId: record.doc.workItemId, epoch: owner.ownershipEpoch, leaseId: lease.leaseId, atMs: nowOf(s) }
      return `${name} stalls while running ${titleOf(s, st.workItemId)} under ownership epoch ${st.epoch}: no renewals, nothing reaches the Group service`
    },
    async observe() {
      const r = st!
      const w = worldOf(s)
      const record = recordOf(s, r.groupId, r.workItemId)
      const owner = record?.doc.owner
      const reassigned = owner !== undefined && owner.ownershipEpoch > r.epoch && record?.doc.state === 'active'
      const timedOut = nowOf(s) > r.atMs + RESOLVE_WITHIN_MS
      if (!reassigned && !timedOut) return undefined
      // The stalled Worker wakes up and delivers its result late, under the epoch it knew.
      w.links.get(r.name)!.up = true
      w.workers.set(r.name, r.worker)
      const late = lateSubmission(s, r)
      const code = await outcomeCode(() => r.worker.client.resend(late))
      const audited = w.authority.audit().some((a) => a.actionId === late.command.actionId && a.kind === 'work.submit')
      const newOwner = Object.entries(WORKER_SPECS).find(([n]) => agentIdOf(s, n) === owner?.agentId)?.[0] ?? owner?.agentId
      const held = reassigned && FENCED_OWNER.has(code) && audited && record?.doc.state !== 'verified'
      return {
        held,
        observed: reassigned
          ? `reassigned ${durationText(nowOf(s) - r.atMs)} into the stall to ${newOwner} under ownership epoch ${owner!.ownershipEpoch}; ${r.name}'s late result: ${code}, ${audited ? 'kept in the audit log' : 'not in the audit log'}`
          : `not reassigned within ${RESOLVE_WITHIN_MS / MINUTE} min; late result: ${code}`,
      }
    },
    confirm(outcome) {
      const r = st!
      const log = worldOf(s).authority.events(r.groupId)
      const submissions = log.filter((e) => e.kind === 'work.submitted' && (e.payload as EventPayload<'work.submitted'>).workItemId === r.workItemId).map((e) => e.payload as EventPayload<'work.submitted'>)
      const accepted = log.some((e) => e.kind === 'work.result.accepted' && (e.payload as EventPayload<'work.result.accepted'>).workItemId === r.workItemId)
      const stale = submissions.filter((p) => p.ownershipEpoch <= r.epoch).length
      const final = submissions.at(-1)
      const held = outcome.held && accepted && stale === 0 && final !== undefined && final.ownershipEpoch > r.epoch
      return { held, observed: `${outcome.observed}; completed ${accepted ? `by the epoch ${final?.ownershipEpoch} submission` : 'never'}, ${stale} stale submission(s) in the log` }
    },
  }
}

/** The stalled owner's result under its old Ownership Epoch and Execution Lease, signed by it. */
function lateSubmission(s: Suite, r: Stall): ReturnType<Client['build']> {
  const w = worldOf(s)
  const key = w.principals.agents.get(r.name)!.key
  const random = seededRandom(s.seed, `faults:${r.name}:late`)
  const published = w.authority
    .events(r.groupId)
    .filter((e) => e.kind === 'artifact.published')
    .map((e) => e.payload as EventPayload<'artifact.published'>)
    .filter((p) => p.artifact.workItemId === r.workItemId && p.ownershipEpoch === r.epoch)
  const evidence = sign(
    'evidence',
    {
      evidenceId: newUrnUuid(random),
      missionId: w.authority.group(r.groupId)!.missionId,
      groupId: r.groupId,
      workItemId: r.workItemId,
      type: 'deterministic_test',
      subject: { type: 'work_item', id: r.workItemId },
      criterionIds: [recordOf(s, r.groupId, r.workItemId)!.doc.contract.acceptanceCriteria[0]!.criterionId],
      method: 'The stalled run finished and reports its result.',
      result: 'passed',
      artifactHashes: published.map((p) => p.artifact.contentHash),
      generatedBy: { type: 'agent', id: r.agentId },
      createdAt: new Date(nowOf(s)).toISOString(),
    },
    key,
  ) as unknown as Evidence
  const artifactIds = published.length > 0 ? published.map((p) => p.artifact.artifactId) : [newUrnUuid(random)]
  return r.worker.client.build('work.submit', { workItemId: r.workItemId, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, artifactIds, evidence: [evidence] }, { groupId: r.groupId, workItemId: r.workItemId })
}

/** The Organization control plane's client (§6.3: it opens Agent sessions). */
function controlPlane(s: Suite): Client {
  const w = worldOf(s)
  const cp = w.principals.controlPlane
  s.control ??= createClient({ actor: cp.actor, signingKey: cp.key, transport: w.authority.connect(), clock: () => w.clock.now(), random: seededRandom(s.seed, 'faults:control-plane') })
  return s.control
}

// ---------------------------------------------------------------------------------------------
// The demo's own faults, read from the log after the run
// ---------------------------------------------------------------------------------------------

const PREEMPTION_EXPECTED = 'The critical arrival makes the Worker preempt the lowest-urgency running WorkItem of its Group at its next safe checkpoint; the critical work starts and the preempted work resumes later from its checkpoint (§11.3).'
const CHANGE_EXPECTED = 'The MissionOwner’s change request is answered by corrective WorkItems and a new submission of a later revision, which is approved (§7.3).'

function preemptionRecord(s: Suite, result: DemoResult): FaultRecord {
  const w = worldOf(s)
  const critical = (id: string): boolean => [...workItems(s)].some(({ record }) => record.doc.workItemId === id && record.doc.contract.requestedUrgency === 'critical')
  // The Worker's Scheduler announces each preemption it requests for queued urgent work (§11.3).
  for (const request of s.lines.filter((l) => l.kind === 'preempt')) {
    const agent = request.text.split(' ')[0]
    const r = result.timeline.find((x) => x.ended === 'preempted' && x.endMs !== undefined && x.endMs >= request.atMs && x.agentId === (agent === undefined ? undefined : w.principals.agents.get(agent)?.actor.id))
    if (r?.endMs === undefined) continue
    const checkpoint = w.authority.events(r.groupId).find((e) => e.kind === 'work.checkpointed' && Date.parse(e.occurredAt) === r.endMs && (e.payload as EventPayload<'work.checkpointed'>).workItemId === r.workItemId)
    const safe = (checkpoint?.payload as EventPayload<'work.checkpointed'> | undefined)?.checkpoint.phase === 'preempted'
    const urgent = result.timeline.find((x) => x.groupId === r.groupId && x.startMs >= request.atMs && critical(x.workItemId))
    const freed = urgent !== undefined && urgent.agentId === r.agentId && urgent.startMs === r.endMs
    const resumed = result.timeline.find((x) => x.workItemId === r.workItemId && x.startMs > r.endMs!)
    const at = (ms: number): string => clockText(ms - result.startMs)
    return {
      name: 'high-priority-preemption',
      atMs: request.atMs,
      expected: PREEMPTION_EXPECTED,
      held: safe && urgent !== undefined && resumed !== undefined,
      observed:
        `${titleOf(s, r.workItemId)} was asked to stop at ${at(request.atMs)} and checkpointed ${safe ? 'at a safe point' : 'without a preemption checkpoint'} at ${at(r.endMs)}; ` +
        `${urgent === undefined ? 'the critical work never started' : `${titleOf(s, urgent.workItemId)} started ${freed ? 'on the freed slot' : `at ${at(urgent.startMs)}`}`}; ` +
        `${resumed === undefined ? 'the preempted work never resumed' : `the preempted work resumed at ${at(resumed.startMs)}`}`,
    }
  }
  return { name: 'high-priority-preemption', atMs: result.endMs, expected: PREEMPTION_EXPECTED, held: false, observed: 'no Worker preempted running work for a critical arrival' }
}

function changeRequestRecord(s: Suite, result: DemoResult): FaultRecord {
  const w = worldOf(s)
  for (const plan of [w.plans.search.plan, w.plans.checkout.plan]) {
    const log = w.authority.events(plan.groupId)
    const at = log.findIndex((e) => e.kind === 'mission.changes_requested')
    if (at < 0) continue
    const request = log[at]!
    const after = log.slice(at + 1)
    const before = log.slice(0, at).findLast((e) => e.kind === 'mission.submitted_for_approval')
    const revisionOf = (e: Event | undefined): number => (e?.payload as EventPayload<'mission.submitted_for_approval'> | undefined)?.missionRevision ?? 0
    const corrective = after.filter((e) => e.kind === 'work.authorized').length
    const resubmitted = after.find((e) => e.kind === 'mission.submitted_for_approval' && revisionOf(e) > revisionOf(before))
    const approved = after.some((e) => e.kind === 'mission.approved')
    return {
      name: 'human-change-request',
      atMs: Date.parse(request.occurredAt),
      expected: CHANGE_EXPECTED,
      held: corrective > 0 && resubmitted !== undefined && approved,
      observed: `${plan.label}: changes requested on revision ${revisionOf(before)}; ${corrective} corrective WorkItem(s) authorized; revision ${revisionOf(resubmitted)} submitted and ${approved ? 'approved' : 'not approved'}`,
    }
  }
  return { name: 'human-change-request', atMs: result.endMs, expected: CHANGE_EXPECTED, held: false, observed: 'no change request in the log' }
}

// ---------------------------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------------------------

/**
 * Runs the demo with the failure suite injected and verifies the run afterwards. Faults are
 * injected one at a time, each when the run reaches a moment where it bites; a fault that never
 * found its moment, or did not resolve, is recorded as not held.
 * @example
 * ```ts
 * const { result } = await runFaultSuite({ onNotice: (n) => console.log(n.fault, n.phase, n.text) })
 * result.faults.every((f) => f.held) && result.verification.passed // result.passed
 * ```
 */
export async function runFaultSuite(options: FaultSuiteOptions = {}): Promise<FaultSuiteRun> {
  const { onNotice, ...demo } = options
  const s: Suite = {
    seed: options.seed ?? 1,
    world: undefined,
    stores: new Map(),
    taps: new Map(),
    attempts: [],
    runs: [],
    lines: [],
    warnings: [],
    startMs: 0,
    preemptionSeen: false,
    control: undefined,
    notice(fault, phase, text) {
      const atMs = nowOf(s)
      onNotice?.({ atMs, elapsedMs: atMs - s.startMs, fault, phase, text })
    },
  }
  const faults: Fault[] = [duplicateDelivery(s), actionIdCollision(s), budgetOverflow(s), coordinatorReplacement(s), workerRestart(s), groupDisconnection(s), leaseExpiry(s)]
  const outcomes = new Map<FaultName, Outcome & { atMs: number }>()
  let next = 0
  let injectedAt: number | undefined

  async function step(): Promise<void> {
    while (next < faults.length) {
      const fault = faults[next]!
      let outcome: Outcome | undefined
      try {
        if (injectedAt === undefined) {
          const text = await fault.inject()
          if (text === undefined) return
          injectedAt = nowOf(s)
          s.notice(fault.name, 'inject', text)
        }
        outcome = await fault.observe()
      } catch (error) {
        injectedAt ??= nowOf(s)
        outcome = { held: false, observed: `the fault could not run: ${error instanceof Error ? error.message : String(error)}` }
      }
      if (outcome === undefined) return
      outcomes.set(fault.name, { ...outcome, atMs: injectedAt })
      s.notice(fault.name, outcome.held ? 'held' : 'failed', outcome.observed)
      injectedAt = undefined
      next++
    }
  }

  const { result, world } = await runDemo({
    ...demo,
    onLine(line) {
      s.lines.push(line)
      options.onLine?.(line)
    },
    hooks: {
      worker: (name, workerOptions) => workerHook(s, name, workerOptions),
      setup(w) {
        s.world = w
        s.startMs = w.clock.now()
        w.authority.onCommit((events) => {
          for (const e of events) if (e.kind === 'work.checkpointed' && (e.payload as EventPayload<'work.checkpointed'>).checkpoint.phase === 'preempted') s.preemptionSeen = true
        })
      },
      round: () => step(),
    },
  })

  const records: FaultRecord[] = faults.map((fault) => {
    const o = outcomes.get(fault.name)
    if (o === undefined) {
      const observed = injectedAt !== undefined && fault === faults[next] ? 'injected, but the run ended before it resolved' : `never injected: the run never showed ${fault.waitsFor}`
      return { name: fault.name, atMs: injectedAt ?? result.endMs, expected: fault.expected, observed, held: false }
    }
    const confirmed = fault.confirm?.(o) ?? o
    return { name: fault.name, atMs: o.atMs, expected: fault.expected, observed: confirmed.observed, held: confirmed.held }
  })
  records.push(preemptionRecord(s, result), changeRequestRecord(s, result))
  records.sort((a, b) => a.atMs - b.atMs || FAULT_NAMES.indexOf(a.name) - FAULT_NAMES.indexOf(b.name))
  const verification = verifyRun({ world, attempts: s.attempts })
  const warnings = [...result.warnings, ...s.warnings.filter((w) => !result.warnings.includes(w))].slice(0, 200)
  return {
    result: { ...result, warnings, faults: records, verification, passed: verification.passed && records.every((r) => r.held) },
    world,
    attempts: [...s.attempts],
  }
}

// ---------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------

/** One terminal line announcing a fault, aligned with the demo's progress lines. */
export function noticeText(notice: FaultNotice): string {
  return `${clockText(notice.elapsedMs)}  ${'[fault]'.padEnd(11)} ${notice.phase.padEnd(10)} ${notice.fault}: ${notice.text}\n`
}

/** The checklist printed after a suite run: every fault, then every check, then the verdict. */
export function checklistText(result: FaultSuiteResult): string {
  const mark = (held: boolean): string => (held ? '✓' : '✗')
  const lines = ['', `Failure suite (${result.faults.length} faults):`]
  for (const f of result.faults) {
    lines.push(`  ${mark(f.held)} ${f.name.padEnd(26)} ${clockText(f.atMs - result.startMs)}  ${f.observed}`)
    if (!f.held) lines.push(`      expected: ${f.expected}`)
  }
  lines.push('', `Post-run verification (${result.verification.checks.length} checks):`)
  for (const c of result.verification.checks) lines.push(`  ${mark(c.held)} ${c.title}: ${c.detail}`)
  const faultsHeld = result.faults.filter((f) => f.held).length
  const checksHeld = result.verification.checks.filter((c) => c.held).length
  lines.push('', `${faultsHeld} of ${result.faults.length} faults held, ${checksHeld} of ${result.verification.checks.length} checks passed: ${result.passed ? 'the run recovered from every fault.' : 'the suite FAILED.'}`, '')
  return lines.join('\n')
}
