/**
 * An automated Coordinator Agent for one Mission (§7.2, §9.1, §10, §13.2, §14). It follows a
 * {@link MissionPlan}: a WorkItem graph whose stages carry complete Work Contracts and
 * dependencies. Each {@link Coordinator.tick} reconciles the plan with what the Group log says
 * and issues the Commands that move it on:
 *
 * - grants Worker Memberships to the Agents of its directory the plan needs (§8);
 * - authorizes each WorkItem (a stage that "arrives" later is authorized once the stage it waits
 *   for has started, §10.4 dynamic planning) and offers it once its dependencies are verified,
 *   to the best-ranked eligible candidates, with a structured selection basis (§10.3);
 * - re-offers an offer that expired unaccepted (a Worker's decline is local, §10.3) to the next
 *   candidate, and a WorkItem whose owner let its lease lapse to another one: the new acceptance
 *   wins a higher Ownership Epoch, and the old owner is fenced (§11.5);
 * - reviews each submission (§13.2, `review.ts`) and accepts it with its own review Evidence, or
 *   fails it with failure Evidence and offers it again within the contract's attempt budget;
 * - resolves blockers, promotes a stage to a child Mission and decides on the child's result as
 *   its MissionOwner (§14);
 * - renews its Coordinator lease, submits the Mission's Artifact set for approval once every
 *   WorkItem is verified (§7.3), and plans corrective WorkItems after a change request.
 *
 * Its parts: the plan it follows (`mission-plan.ts`), where it stands in the Mission's lifecycle
 * (`coordinator-lifecycle.ts`), the next step of each stage (`stage-step.ts`), whom it enrols and
 * offers to (`coordinator-staffing.ts`) and the Commands that carry its decisions out
 * (`coordinator-actions.ts`).
 *
 * The Coordinator holds no state the log does not: a second instance (a replacement under a
 * higher Coordinator Epoch, §7.2) folds the same Events and continues from there. An instance
 * that sees another Coordinator Epoch in its Group stands by and issues nothing; the Authority
 * would refuse its coordination Commands anyway (`AUTH_STALE_COORDINATOR`, `AUTH_FORBIDDEN`).
 * @module
 */
import { UsageError, type SigningKey } from '@weft/codec'
import { systemClock } from '@weft/codec/time'
import { createClient, newUrnUuid, systemRandom, type Client, type Clock, type EventFeed, type RandomSource, type Transport } from '@weft/client'
import type { ContextPackage } from '@weft/spec'
import { acceptPromotion, authorize, enrol, handoverPackage, perform, renewLease, submitIfDone, type CoordinatorContext } from './coordinator-actions.js'
import { hasHeld, nextStatus, type CoordinatorStatus } from './coordinator-lifecycle.js'
import { memberRolesByLength } from './coordinator-staffing.js'
import { checkPlan, stagesByKey, stagesOf, type DirectoryEntry, type MissionPlan, type StageSpec } from './mission-plan.js'
import type { BlobSource } from './review.js'
import { nextStageStep } from './stage-step.js'
import { createTracker, type GroupFacts, type Tracker } from './tracker.js'

/** Options of {@link createCoordinator}. */
export interface CoordinatorOptions {
  readonly actor: { readonly type: 'agent'; readonly id: string }
  readonly signingKey: SigningKey
  /** The Session Epoch the Organization opened for this runtime (§6.3). */
  readonly sessionEpoch: number
  readonly transport: Transport
  readonly feed: EventFeed
  readonly plan: MissionPlan
  /** The Agents it may enrol and offer work to. */
  readonly directory: readonly DirectoryEntry[]
  /** For a child Mission's Coordinator: the parent WorkItem it accepts before the child exists (§14). */
  readonly parent?: { readonly groupId: string; readonly workItemId: string }
  /** Where it reads Artifact bytes for the integrity review (§13.1). */
  readonly blobs?: BlobSource
  readonly clock?: Clock
  readonly random?: RandomSource
  /** Offer lifetime (§10.3). Default 300 s. */
  readonly offerSeconds?: number
  /** Coordinator lease asked for at renewal, renewed when less than half is left (§7.2). Default 14,400 s. */
  readonly leaseSeconds?: number
  /** Ownership lease the child Coordinator asks for when it accepts the parent WorkItem. Default 3,600 s. */
  readonly ownershipLeaseSeconds?: number
  readonly logger?: (entry: CoordinatorLogEntry) => void
}

/** A structured log line of the Coordinator. */
export interface CoordinatorLogEntry {
  readonly level: 'info' | 'warn'
  readonly message: string
  readonly workItemId?: string
  readonly code?: string
}

/** One decision the Coordinator took, for the audit trail and reports (no private reasoning, §4). */
export interface CoordinatorDecision {
  readonly atMs: number
  readonly kind: 'offer' | 'reassign' | 'accept_result' | 'reject_result' | 'unblock' | 'promote' | 'approve_child' | 'submit' | 'revise' | 'give_up'
  readonly workItemId?: string
  readonly candidates?: readonly string[]
  readonly detail: string
}

/** A running Coordinator. */
export interface Coordinator {
  readonly actor: { readonly type: 'agent'; readonly id: string }
  /** Its client; epochs are learned from the Events it reads. */
  readonly client: Client
  readonly plan: MissionPlan
  readonly tracker: Tracker
  /** One reconciliation round on the current clock; resolves when its Commands are answered. */
  tick(): Promise<void>
  status(): CoordinatorStatus
  /** The stages it currently drives: the plan's, plus the corrective stages of every change round so far (§7.3). */
  stages(): readonly StageSpec[]
  /** Agents holding a live Membership in the plan's Group, as its log shows. */
  enrolled(): readonly string[]
  decisions(): readonly CoordinatorDecision[]
  /**
   * A signed Context Package of the Mission as this Coordinator's log stands (§7.2, §13.3), for
   * a replacement Coordinator. `packageId` defaults to a fresh ID.
   * @throws UsageError before the Group's first Event.
   */
  handover(summary?: string, packageId?: string): ContextPackage
  close(): void
}

function checkOptions(o: CoordinatorOptions): void {
  if (o?.actor?.type !== 'agent' || typeof o.actor.id !== 'string') throw new UsageError('createCoordinator: actor must be { type: "agent", id } (a Coordinator is an Agent, §3)')
  if (!Number.isSafeInteger(o.sessionEpoch) || o.sessionEpoch < 1) throw new UsageError('createCoordinator: sessionEpoch must be a positive integer')
  if (typeof o.transport?.submit !== 'function' || typeof o.feed?.subscribe !== 'function') throw new UsageError('createCoordinator: transport and feed are required')
  checkPlan(o.plan)
}

/** Drives one stage one step (§10.2 rows), from what the log says about its WorkItem. */
async function drive(ctx: CoordinatorContext, g: GroupFacts, stage: StageSpec, byKey: ReadonlyMap<string, StageSpec>, nowMs: number): Promise<void> {
  let step = nextStageStep(ctx.tracker, ctx.groupId, stage, byKey, nowMs)
  if (step.step === 'authorize') {
    await authorize(ctx, stage, step.dependencyIds)
    // Delivery is synchronous in process; over a network the next round sees the WorkItem.
    step = nextStageStep(ctx.tracker, ctx.groupId, stage, byKey, nowMs)
    if (step.step === 'authorize') return
  }
  await perform(ctx, g, stage, step, nowMs)
}

/**
 * Creates a Coordinator for `options.plan`. It subscribes to its Group (and, for a child
 * Mission's Coordinator, to the parent Group) on its first ticks, as soon as it may read them.
 * @throws UsageError on malformed options or a plan whose stages name unknown stages.
 * @example
 * ```ts
 * const coordinator = createCoordinator({ actor, signingKey, sessionEpoch: 1, transport: authority.connect(),
 *   feed: deliveryFeed(delivery, actor), plan, directory })
 * while (coordinator.status() !== 'approved') { await coordinator.tick(); await workersTick() }
 * ```
 */
export function createCoordinator(options: CoordinatorOptions): Coordinator {
  checkOptions(options)
  const actor = Object.freeze({ type: 'agent' as const, id: options.actor.id })
  const self = actor.id
  const { plan, directory } = options
  const groupId = plan.groupId
  const clock = options.clock ?? systemClock
  const random = options.random ?? systemRandom
  const client = createClient({ actor, signingKey: options.signingKey, transport: options.transport, groupId, clock, random })
  client.epochs.setSession(options.sessionEpoch)
  const tracker = createTracker({ self, feed: options.feed, onApplied: (events) => client.observe(events) })
  const ctx: CoordinatorContext = {
    actor,
    signingKey: options.signingKey,
    client,
    tracker,
    plan,
    groupId,
    directory,
    clock,
    offerSeconds: options.offerSeconds ?? 300,
    leaseSeconds: options.leaseSeconds ?? 14_400,
    ownershipLeaseSeconds: options.ownershipLeaseSeconds ?? 3600,
    parent: options.parent,
    blobs: options.blobs,
    reviewed: new Set(),
    decisions: [],
    memberRoles: memberRolesByLength(directory),
    newId: () => newUrnUuid(random),
    log: (entry) => options.logger?.(entry),
  }
  let status: CoordinatorStatus = 'standby'
  let chain: Promise<void> = Promise.resolve()

  async function round(): Promise<void> {
    const nowMs = clock.now()
    // §7.2, §8: a replaced Coordinator's Membership ends with its epoch, and its feed with it.
    if (hasHeld(status) && tracker.lost(groupId)) {
      status = nextStatus(status, { seat: 'lost' })
      return
    }
    // §14: a child Mission's Coordinator waits for the promotion before its Group can exist.
    const promoted = options.parent === undefined || tracker.work(options.parent.workItemId)?.childGroupId === groupId
    if (promoted) tracker.subscribe(groupId)
    const g = tracker.group(groupId)
    if (g === undefined) {
      status = nextStatus(status, { seat: 'unreadable' })
      if (options.parent !== undefined) await acceptPromotion(ctx, options.parent, nowMs)
      return
    }
    const mine = g.coordinatorAgentId === self && client.epochs.coordinator(groupId) === g.coordinatorEpoch
    status = nextStatus(status, mine ? { seat: 'held', missionState: g.missionState } : { seat: 'other' })
    if (status !== 'running') return
    await renewLease(ctx, g, nowMs)
    const stages = stagesOf(plan, g)
    const byKey = stagesByKey(stages)
    await enrol(ctx, g, stages)
    for (const stage of stages) await drive(ctx, g, stage, byKey, clock.now())
    await submitIfDone(ctx, g, stages)
  }

  return {
    actor,
    client,
    plan,
    tracker,
    tick() {
      const next = chain.then(round)
      chain = next.catch(() => {})
      return next
    },
    status: () => status,
    stages() {
      const g = tracker.group(groupId)
      return g === undefined ? [...plan.stages] : stagesOf(plan, g)
    },
    enrolled() {
      const g = tracker.group(groupId)
      if (g === undefined) return []
      return [...g.members.values()].filter((m) => m.member.type === 'agent' && m.state !== 'ended' && m.member.id !== self).map((m) => m.member.id)
    },
    decisions: () => [...ctx.decisions],
    handover: (summary, packageId) => handoverPackage(ctx, summary, packageId),
    close: () => tracker.close(),
  }
}
