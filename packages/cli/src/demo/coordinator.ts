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
 * The Coordinator holds no state the log does not: a second instance (a replacement under a
 * higher Coordinator Epoch, §7.2) folds the same Events and continues from there. An instance
 * that sees another Coordinator Epoch in its Group stands by and issues nothing; the Authority
 * would refuse its coordination Commands anyway (`AUTH_STALE_COORDINATOR`, `AUTH_FORBIDDEN`).
 * @module
 */
import { ProtocolError, sign, UsageError, type SigningKey } from '@weft/codec'
import { createClient, newUrnUuid, systemRandom, type Client, type Clock, type EventFeed, type RandomSource, type Transport } from '@weft/client'
import type { Approval, CapabilityRef, CommandPayload, ContextPackage, Evidence, EvidenceType, ResourceBudget, SelectionBasis, WorkContract } from '@weft/spec'
import type { TrackedWork } from '@weft/worker'
import { reviewSubmission, type BlobSource, type StageCheck } from './review.js'
import { createTracker, memberKey, type GroupFacts, type Tracker } from './tracker.js'

// ---------------------------------------------------------------------------------------------
// The plan
// ---------------------------------------------------------------------------------------------

/** A stage promoted to a child Mission (§14): what `mission.create_child` needs besides the parent link. */
export interface Promotion {
  /** The child Mission's plan; its Coordinator runs it. */
  readonly plan: MissionPlan
  /** Its Coordinator Agent, which first accepts the parent WorkItem (§14: promotion needs an owner). */
  readonly coordinatorAgentId: string
  readonly title: string
  readonly objective: string
  readonly definitionOfDone: CommandPayload<'mission.create_child'>['definitionOfDone']
  /** Within the parent WorkItem's budget and deadline (§4 invariant 11). */
  readonly budget: ResourceBudget
  readonly deadline: string
  readonly coordinatorLeaseSeconds?: number
  readonly childFailurePolicy?: CommandPayload<'mission.create_child'>['childFailurePolicy']
}

/** One stage of a plan: one WorkItem. */
export interface StageSpec {
  /** Unique within the plan; dependencies name stages by key. */
  readonly key: string
  readonly workItemId: string
  readonly title: string
  /** The complete Work Contract (§10.1); its dependency list is filled from {@link dependsOn}. */
  readonly contract: WorkContract
  readonly dependsOn?: readonly string[]
  /** Authorized only after the named stage has started: work discovered while executing (§10.4). */
  readonly arrival?: { readonly afterStarted: string }
  /** Offer only to these Agents, in this order (Organization policy or an explicit assignment). */
  readonly candidates?: readonly string[]
  /** The plan's deterministic test or business rule over the submitted Artifacts (§13.2 step 2). */
  readonly check?: StageCheck
  /** How the Coordinator resolves a blocker of this stage (§11.4); default: a generic resolution. */
  readonly resolution?: string
  /** Promote this stage to a child Mission (§14). */
  readonly promote?: Promotion
}

/** A Mission's plan: its stages, and how it reacts to a change request. */
export interface MissionPlan {
  readonly missionId: string
  readonly groupId: string
  /** A short label for progress output, e.g. `checkout`. */
  readonly label: string
  readonly title: string
  readonly stages: readonly StageSpec[]
  /**
   * The corrective stages of change round `round` (1, 2, …) after the MissionOwner's request
   * (§7.3: revised or corrective WorkItems, earlier submissions kept). Called with the same
   * arguments by every Coordinator instance, so a replacement plans the same WorkItems.
   */
  readonly revise?: (round: number, request: Approval) => readonly StageSpec[]
}

/** An Agent the Coordinator may offer work to (from the Organization's Agent Registry, §6.1). */
export interface DirectoryEntry {
  readonly agentId: string
  readonly capabilities: readonly CapabilityRef[]
  /** The Membership role granted to it (§8); default `worker`. */
  readonly role?: 'worker' | 'reviewer'
}

// ---------------------------------------------------------------------------------------------
// The runtime
// ---------------------------------------------------------------------------------------------

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

/** Where the Coordinator stands. */
export type CoordinatorStatus =
  /** Its Group is not readable yet, or another Agent holds the Coordinator lease. */
  | 'standby'
  | 'running'
  | 'awaiting_approval'
  | 'approved'
  | 'cancelled'
  | 'failed'
  /** It held the lease and a higher Coordinator Epoch replaced it (§7.2). */
  | 'replaced'

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

const TERMINAL: ReadonlySet<string> = new Set(['verified', 'cancelled'])
const DEFAULT_RESOLUTION = 'The Coordinator arranged what the blocker asked for; resume from the checkpoint.'

function checkOptions(o: CoordinatorOptions): void {
  if (o?.actor?.type !== 'agent' || typeof o.actor.id !== 'string') throw new UsageError('createCoordinator: actor must be { type: "agent", id } (a Coordinator is an Agent, §3)')
  if (!Number.isSafeInteger(o.sessionEpoch) || o.sessionEpoch < 1) throw new UsageError('createCoordinator: sessionEpoch must be a positive integer')
  if (typeof o.transport?.submit !== 'function' || typeof o.feed?.subscribe !== 'function') throw new UsageError('createCoordinator: transport and feed are required')
  const keys = new Set<string>()
  for (const s of allStages(o.plan)) {
    if (keys.has(s.key)) throw new UsageError(`createCoordinator: stage key ${s.key} repeats`)
    keys.add(s.key)
  }
  for (const s of o.plan.stages) for (const d of [...(s.dependsOn ?? []), ...(s.arrival === undefined ? [] : [s.arrival.afterStarted])]) {
    if (!keys.has(d)) throw new UsageError(`createCoordinator: stage ${s.key} names unknown stage ${d}`)
  }
}

/** The Agents a stage names itself: its child Mission's Coordinator (§14) or the plan's assignment. */
function explicitCandidates(stage: StageSpec): readonly string[] | undefined {
  return stage.promote !== undefined ? [stage.promote.coordinatorAgentId] : stage.candidates
}

function allStages(plan: MissionPlan): readonly StageSpec[] {
  return plan?.stages ?? []
}

/** Whether `have` satisfies `need` (same major version, at least the version asked for, §6.1). */
export function capabilityMatches(have: CapabilityRef, need: CapabilityRef): boolean {
  const [hm, hn = 0, hp = 0] = have.version.split('.').map(Number)
  const [nm, nn = 0, np = 0] = need.version.split('.').map(Number)
  return have.id === need.id && hm === nm && (hn > nn || (hn === nn && hp >= np))
}

/**
 * Whether the owner of `w` still holds it at `nowMs` as the log tells (the `noLiveOwner` guard of
 * §10.2): queued within its ownership lease, active under an
 * unexpired Execution Lease, blocked within its blocked lease.
 */
export function ownerLive(w: TrackedWork, nowMs: number): boolean {
  const until = (t: string | undefined): boolean => t !== undefined && nowMs < Date.parse(t)
  switch (w.state) {
    case 'active':
      return until(w.executionLeaseExpiresAt)
    case 'queued':
    case 'blocked':
      // A checkpoint or block renews the ownership lease and moves its start-by with it (§11.3).
      return until(w.ownershipLeaseExpiresAt)
    default:
      return false
  }
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
  const clock = options.clock ?? Date.now
  const random = options.random ?? systemRandom
  const offerSeconds = options.offerSeconds ?? 300
  const leaseSeconds = options.leaseSeconds ?? 14_400
  const client = createClient({ actor, signingKey: options.signingKey, transport: options.transport, groupId, clock, random })
  client.epochs.setSession(options.sessionEpoch)
  const tracker = createTracker({ self, feed: options.feed, onApplied: (events) => client.observe(events) })
  const log = (entry: CoordinatorLogEntry): void => options.logger?.(entry)
  const decisionLog: CoordinatorDecision[] = []
  const decide = (d: Omit<CoordinatorDecision, 'atMs'>): void => {
    decisionLog.push({ atMs: clock(), ...d })
    log({ level: 'info', message: `${d.kind}: ${d.detail}`, ...(d.workItemId === undefined ? {} : { workItemId: d.workItemId }) })
  }
  /** Submissions already reviewed and child submissions already decided, by the Event ID that made them. */
  const reviewed = new Set<string>()
  /** Once it held the lease; a later Epoch then means replacement rather than standby. */
  let held = false
  let status: CoordinatorStatus = 'standby'
  let chain: Promise<void> = Promise.resolve()

  const iso = (ms: number): string => new Date(ms).toISOString()
  const newId = (): string => newUrnUuid(random)

  /** Runs one Command; a refusal is logged and reported as `false` (the next round re-reads the log and decides again). */
  async function attempt(what: string, workItemId: string | undefined, run: () => Promise<unknown>): Promise<boolean> {
    try {
      await run()
      return true
    } catch (error) {
      const e = ProtocolError.from(error)
      log({ level: 'warn', message: `${what} refused: ${e.message}`, code: e.code, ...(workItemId === undefined ? {} : { workItemId }) })
      return false
    }
  }

  // -------------------------------------------------------------------------------------------
  // Stages and candidates
  // -------------------------------------------------------------------------------------------

  /** The plan's stages plus the corrective stages of every change round the log shows (§7.3). */
  function stagesOf(g: GroupFacts): StageSpec[] {
    const out = [...plan.stages]
    const requests = g.decisions.filter((d) => d.decision === 'changes_requested')
    requests.forEach((request, i) => out.push(...(plan.revise?.(i + 1, request) ?? [])))
    return out
  }

  function keyed(stages: readonly StageSpec[]): Map<string, StageSpec> {
    return new Map(stages.map((s) => [s.key, s]))
  }

  function dependencyIds(stage: StageSpec, byKey: ReadonlyMap<string, StageSpec>): string[] {
    return (stage.dependsOn ?? []).map((k) => byKey.get(k)?.workItemId ?? k)
  }

  /** How many of this Coordinator's WorkItems an Agent holds or is offered now (its load as seen from this Mission, §11.2). */
  function loadOf(agentId: string): number {
    let n = 0
    for (const w of tracker.view(groupId)?.work.values() ?? []) {
      if ((w.owner === agentId && (w.state === 'queued' || w.state === 'active' || w.state === 'blocked')) || (w.state === 'offered' && w.offeredTo.includes(agentId))) n++
    }
    return n
  }

  /**
   * Ranked candidates for `stage` (§10.3): the plan's explicit candidates in order, else every
   * directory Agent with every required capability, least loaded first. Agents that already let
   * this WorkItem lapse, failed it, or left an offer of it unaccepted go last.
   */
  function candidatesFor(stage: StageSpec, passedOver: ReadonlySet<string>): string[] {
    const needs = stage.contract.requiredCapabilities
    const explicit = explicitCandidates(stage)
    const eligible = explicit ?? directory.filter((d) => needs.every((n) => d.capabilities.some((c) => capabilityMatches(c, n)))).map((d) => d.agentId)
    const lapsed = tracker.facts(stage.workItemId).lapsed
    const penalty = (id: string): number => (lapsed.has(id) ? 2 : passedOver.has(id) ? 1 : 0)
    const ranked = eligible
      .map((id, order) => ({ id, order, load: explicit === undefined ? loadOf(id) : 0 }))
      .sort((a, b) => penalty(a.id) - penalty(b.id) || a.load - b.load || a.order - b.order)
    return ranked.map((r) => r.id)
  }

  function selectionBasis(stage: StageSpec, chosen: readonly string[], nowMs: number, rules: readonly string[]): SelectionBasis {
    const needs = stage.contract.requiredCapabilities
    const entry = directory.find((d) => d.agentId === chosen[0])
    const matches = needs.map((n) => entry?.capabilities.find((c) => capabilityMatches(c, n)) ?? n)
    // §10.3: capability-specific reliability Evidence: accepted review Evidence of earlier work by this Agent.
    const reliability: string[] = []
    for (const w of tracker.view(groupId)?.work.values() ?? []) {
      if (w.state !== 'verified' || w.owner !== chosen[0]) continue
      for (const e of tracker.facts(w.workItemId).accepted ?? []) if (reliability.length < 8) reliability.push(e.evidenceId)
    }
    return {
      requiredCapabilities: needs,
      verifiedMatches: matches,
      authorizationEligible: true,
      availabilityEstimate: iso(nowMs),
      expectedCost: stage.contract.budget.financialLimit ?? 0,
      reliabilityEvidence: reliability,
      policyRulesApplied: rules.length > 0 ? [...rules] : ['capability-match'],
    }
  }

  // -------------------------------------------------------------------------------------------
  // Commands
  // -------------------------------------------------------------------------------------------

  /** Offers `stage` (§10.3): sequentially to the best candidate, to a bounded set of two for urgent work. */
  async function offer(stage: StageSpec, w: TrackedWork, nowMs: number, why: 'offer' | 'reassign'): Promise<void> {
    const passedOver = new Set<string>(w.state === 'offered' || w.state === 'failed' ? w.offeredTo : [])
    if (w.owner !== undefined && why === 'reassign') passedOver.add(w.owner)
    const ranked = candidatesFor(stage, passedOver)
    if (ranked.length === 0) {
      log({ level: 'warn', message: `no Agent of the directory can take ${stage.title}`, workItemId: stage.workItemId })
      return
    }
    const explicit = explicitCandidates(stage) !== undefined
    const urgent = !explicit && (stage.contract.requestedUrgency === 'high' || stage.contract.requestedUrgency === 'critical')
    const chosen = ranked.slice(0, urgent ? 2 : 1)
    const rules = ['capability-match', explicit ? 'plan-assignment' : 'least-loaded', urgent ? 'bounded-candidate-set' : 'sequential-offer', ...(why === 'reassign' ? ['lapsed-owner-fenced'] : [])]
    const sent = await attempt('work.offer', stage.workItemId, () =>
      client.workOffer({ workItemId: stage.workItemId, candidateAgentIds: chosen, selectionBasis: selectionBasis(stage, chosen, nowMs, rules), offerExpiresInSeconds: offerSeconds }),
    )
    if (sent) decide({ kind: why, workItemId: stage.workItemId, candidates: chosen, detail: `${stage.title} → ${chosen.join(', ')}` })
  }

  /** A signed Evidence record by this Coordinator about a WorkItem of `g` (§13.2). */
  function evidence(g: GroupFacts, workItemId: string, type: EvidenceType, criterionIds: readonly string[], method: string, result: Evidence['result'], artifactHashes: readonly string[], details?: Record<string, unknown>): Evidence {
    return sign(
      'evidence',
      {
        evidenceId: newId(),
        missionId: g.missionId,
        groupId: g.groupId,
        workItemId,
        type,
        subject: { type: 'work_item', id: workItemId },
        criterionIds: [...criterionIds],
        method,
        result,
        ...(details === undefined ? {} : { details }),
        artifactHashes: [...new Set(artifactHashes)],
        generatedBy: actor,
        createdAt: iso(clock()),
      },
      options.signingKey,
    ) as unknown as Evidence
  }

  /** §13.2: reviews the pending submission of `stage`, then accepts it or fails it (to be offered again). */
  async function review(g: GroupFacts, stage: StageSpec, w: TrackedWork): Promise<void> {
    const facts = tracker.facts(stage.workItemId)
    const submission = facts.submission
    if (submission === undefined || reviewed.has(submission.eventId)) return
    reviewed.add(submission.eventId)
    const outcome = await reviewSubmission({
      contract: w.contract ?? stage.contract,
      submission,
      manifests: facts.artifacts,
      ...(options.blobs === undefined ? {} : { blobs: options.blobs }),
      ...(stage.check === undefined ? {} : { check: stage.check }),
    })
    if (outcome.passed) {
      const records = outcome.evidence.map((p) => evidence(g, stage.workItemId, p.type, p.criterionIds, p.method, 'passed', p.artifactHashes))
      const ok = await attempt('work.accept_result', stage.workItemId, () => client.workAcceptResult({ workItemId: stage.workItemId, evidence: records }))
      if (ok) decide({ kind: 'accept_result', workItemId: stage.workItemId, detail: `${stage.title}: ${records.length} review Evidence record(s) over ${submission.artifactHashes.length} Artifact(s)` })
      else reviewed.delete(submission.eventId)
      return
    }
    const reason = outcome.problems.join('; ').slice(0, 3900)
    const failure = evidence(g, stage.workItemId, 'failure_report', outcome.failedCriteria.length > 0 ? outcome.failedCriteria : [stage.contract.acceptanceCriteria[0]!.criterionId], 'Coordinator review of the submission (§13.2).', 'failed', submission.artifactHashes, { problems: [...outcome.problems] })
    const ok = await attempt('work.fail', stage.workItemId, () => client.workFail({ workItemId: stage.workItemId, reason: `Review rejected the submission: ${reason}`, evidence: [failure] }))
    if (ok) decide({ kind: 'reject_result', workItemId: stage.workItemId, detail: `${stage.title}: ${reason}` })
    else reviewed.delete(submission.eventId)
  }

  /** §14: the child Coordinator accepted the parent WorkItem; promote it. */
  async function promote(stage: StageSpec, p: Promotion): Promise<void> {
    const ok = await attempt('mission.create_child', stage.workItemId, () =>
      client.missionCreateChild({
        parentWorkItemId: stage.workItemId,
        childMissionId: p.plan.missionId,
        childGroupId: p.plan.groupId,
        title: p.title,
        objective: p.objective,
        definitionOfDone: p.definitionOfDone,
        deadline: p.deadline,
        budget: p.budget,
        approvalPolicy: { finalHumanApproval: false, highRiskExecutionApproval: true },
        coordinatorAgentId: p.coordinatorAgentId,
        coordinatorLeaseSeconds: p.coordinatorLeaseSeconds ?? leaseSeconds,
        childFailurePolicy: p.childFailurePolicy ?? 'block_parent_work_item',
      }),
    )
    if (ok) decide({ kind: 'promote', workItemId: stage.workItemId, detail: `${stage.title} became child Mission ${p.plan.missionId}` })
  }

  /** §14: as the child's MissionOwner, decides on its submission: every child WorkItem verified and the set published there. */
  async function decideChild(stage: StageSpec, childGroupId: string): Promise<void> {
    tracker.subscribe(childGroupId)
    const child = tracker.group(childGroupId)
    const submission = child?.submission
    if (child === undefined || child.missionState !== 'awaiting_approval' || submission === undefined || reviewed.has(submission.eventId)) return
    reviewed.add(submission.eventId)
    const items = [...(tracker.view(childGroupId)?.work.values() ?? [])]
    const open = items.filter((w) => !TERMINAL.has(w.state)).map((w) => w.workItemId)
    const published = new Set(items.flatMap((w) => [...tracker.facts(w.workItemId).artifacts.keys()]))
    const missing = submission.artifactHashes.filter((h) => !published.has(h))
    const approve = open.length === 0 && missing.length === 0
    const approval = sign(
      'approval',
      {
        approvalId: newId(),
        kind: 'child_mission',
        decision: approve ? 'approved' : 'changes_requested',
        missionId: child.missionId,
        groupId: childGroupId,
        missionRevision: submission.missionRevision,
        artifactHashes: [...submission.artifactHashes],
        acceptancePolicyVersion: '1.0.0',
        approver: actor,
        comments: approve ? `Every child WorkItem is verified and the ${submission.artifactHashes.length} Artifact(s) are published in the child Group.` : `Open: ${open.join(', ') || 'none'}; unpublished: ${missing.join(', ') || 'none'}.`,
        conditions: [],
        occurredAt: iso(clock()),
      },
      options.signingKey,
    ) as unknown as Approval
    const to = client.withGroup(childGroupId)
    const ok = await attempt(approve ? 'mission.approve' : 'mission.request_changes', stage.workItemId, () => (approve ? to.missionApprove({ approval }) : to.missionRequestChanges({ approval })))
    if (ok) decide({ kind: 'approve_child', workItemId: stage.workItemId, detail: `${approve ? 'approved' : 'requested changes to'} child Mission ${child.missionId}` })
    else reviewed.delete(submission.eventId)
  }

  /** Drives one stage one step (§10.2 rows), from what the log says about its WorkItem. */
  async function drive(g: GroupFacts, stage: StageSpec, byKey: ReadonlyMap<string, StageSpec>, nowMs: number): Promise<void> {
    let w = tracker.work(stage.workItemId)
    const deps = dependencyIds(stage, byKey)
    if (w === undefined) {
      const waitFor = stage.arrival === undefined ? undefined : byKey.get(stage.arrival.afterStarted)
      if (waitFor !== undefined && !tracker.facts(waitFor.workItemId).started) return
      // §10.4: an edge may only point at an existing WorkItem; a dependency that arrives later is waited for.
      if (deps.some((d) => tracker.work(d) === undefined)) return
      const contract: WorkContract = { ...stage.contract, dependencyWorkItemIds: deps }
      await attempt('work.authorize', stage.workItemId, () => client.workAuthorize({ workItemId: stage.workItemId, contract, dependencyIds: deps }))
      // Delivery is synchronous in process; over a network the next round sees the WorkItem.
      w = tracker.work(stage.workItemId)
      if (w === undefined) return
    }
    const verified = tracker.view(groupId)?.verified
    const ready = deps.every((d) => verified?.has(d) === true)
    switch (w.state) {
      case 'open':
        if (ready) await offer(stage, w, nowMs, 'offer')
        return
      case 'offered':
        // §10.3: no Command exists for a decline; an offer nobody took expires and goes to the next candidate.
        if (w.offerExpiresAt !== undefined && nowMs >= Date.parse(w.offerExpiresAt)) await offer(stage, w, nowMs, 'offer')
        return
      case 'failed': {
        const attempts = (w.contract ?? stage.contract).retryPolicy.maxAttempts
        if (tracker.facts(stage.workItemId).failures < attempts) await offer(stage, w, nowMs, 'offer')
        return
      }
      case 'queued':
      case 'active':
      case 'blocked': {
        if (w.childGroupId !== undefined) return decideChild(stage, w.childGroupId)
        if (stage.promote !== undefined && w.owner === stage.promote.coordinatorAgentId && w.state === 'queued') return promote(stage, stage.promote)
        if (!ownerLive(w, nowMs)) return offer(stage, w, nowMs, 'reassign')
        if (w.state === 'blocked') {
          const ok = await attempt('work.unblock', stage.workItemId, () => client.workUnblock({ workItemId: stage.workItemId, resolution: stage.resolution ?? DEFAULT_RESOLUTION }))
          if (ok) decide({ kind: 'unblock', workItemId: stage.workItemId, detail: `${stage.title}: ${w.blockedReason ?? 'blocked'}` })
        }
        return
      }
      case 'submitted':
        return review(g, stage, w)
      default:
        return
    }
  }

  /** §7.3: once every WorkItem is verified or cancelled, the Artifact set of the verified submissions goes to the MissionOwner. */
  async function submitIfDone(g: GroupFacts, stages: readonly StageSpec[]): Promise<void> {
    const items = [...(tracker.view(groupId)?.work.values() ?? [])]
    const planned = stages.every((s) => tracker.work(s.workItemId) !== undefined)
    if (!planned || items.length === 0 || items.some((w) => !TERMINAL.has(w.state))) return
    const hashes = new Set<string>()
    for (const w of items) if (w.state === 'verified') for (const h of tracker.facts(w.workItemId).submission?.artifactHashes ?? []) hashes.add(h)
    if (hashes.size === 0) return
    const ok = await attempt('mission.submit_for_approval', undefined, () => client.missionSubmitForApproval({ artifactHashes: [...hashes] }))
    if (ok) decide({ kind: 'submit', detail: `revision ${g.missionRevision} with ${hashes.size} Artifact(s) for the MissionOwner's Approval` })
  }

  /** §14: a child Mission's Coordinator first accepts the parent WorkItem, which is then promoted. */
  async function acceptPromotion(nowMs: number): Promise<void> {
    const parent = options.parent!
    if (!tracker.subscribe(parent.groupId)) return
    const w = tracker.work(parent.workItemId)
    if (w?.state !== 'offered' || !w.offeredTo.includes(self) || w.offerExpiresAt === undefined || nowMs >= Date.parse(w.offerExpiresAt)) return
    await attempt('work.accept_offer', parent.workItemId, () =>
      client.withGroup(parent.groupId).workAcceptOffer({ workItemId: parent.workItemId, ownershipLeaseSeconds: options.ownershipLeaseSeconds ?? 3600 }),
    )
  }

  async function renewLease(g: GroupFacts, nowMs: number): Promise<void> {
    const left = Date.parse(g.coordinatorLeaseExpiresAt) - nowMs
    if (left <= 0 || left >= (leaseSeconds * 1000) / 2) return
    await attempt('mission.renew_coordinator', undefined, () => client.missionRenewCoordinator({ leaseSeconds }))
  }

  /** The Agents the stages may be offered to, with their roles; recomputed only when the stage list grows. */
  let wanted: { readonly stages: number; readonly members: Map<string, 'worker' | 'reviewer'> } | undefined
  function wantedMembers(stages: readonly StageSpec[]): Map<string, 'worker' | 'reviewer'> {
    if (wanted?.stages === stages.length) return wanted.members
    const members = new Map<string, 'worker' | 'reviewer'>()
    for (const s of stages) {
      const explicit = explicitCandidates(s)
      if (explicit !== undefined) for (const id of explicit) members.set(id, directory.find((d) => d.agentId === id)?.role ?? 'worker')
      else for (const d of directory) if (s.contract.requiredCapabilities.every((n) => d.capabilities.some((c) => capabilityMatches(c, n)))) members.set(d.agentId, d.role ?? 'worker')
    }
    wanted = { stages: stages.length, members }
    return members
  }

  /**
   * §8: the Agents some stage may be offered to (directory Agents with its capabilities, or the
   * Agents it names) get a Worker Membership.
   */
  async function enrol(g: GroupFacts, stages: readonly StageSpec[]): Promise<void> {
    for (const [agentId, role] of wantedMembers(stages)) {
      const known = g.members.get(memberKey({ type: 'agent', id: agentId }))
      if (agentId === self || (known !== undefined && known.state !== 'ended')) continue
      await attempt('membership.change', undefined, () =>
        client.membershipChange({
          membershipId: `${groupId}:member:${agentId.split(':').pop()}`,
          member: { type: 'agent', id: agentId },
          role,
          state: 'active',
          scopes: ['group:read'],
          // The reference Worker folds its Group from sequence 1 (§11.1 rebuild by replay).
          visibilityStartSequence: 0,
        }),
      )
    }
  }

  async function round(): Promise<void> {
    const nowMs = clock()
    // §7.2, §8: a replaced Coordinator's Membership ends with its epoch, and its feed with it.
    if (held && tracker.lost(groupId)) {
      status = 'replaced'
      return
    }
    // §14: a child Mission's Coordinator waits for the promotion before its Group can exist.
    const promoted = options.parent === undefined || tracker.work(options.parent.workItemId)?.childGroupId === groupId
    if (promoted) tracker.subscribe(groupId)
    const g = tracker.group(groupId)
    if (g === undefined) {
      if (options.parent !== undefined) await acceptPromotion(nowMs)
      return
    }
    const mine = g.coordinatorAgentId === self && client.epochs.coordinator(groupId) === g.coordinatorEpoch
    if (!mine) {
      status = held ? 'replaced' : 'standby'
      return
    }
    held = true
    if (g.missionState !== 'active') {
      status = g.missionState === 'awaiting_approval' ? 'awaiting_approval' : (g.missionState as CoordinatorStatus)
      return
    }
    status = 'running'
    await renewLease(g, nowMs)
    const stages = stagesOf(g)
    const byKey = keyed(stages)
    await enrol(g, stages)
    for (const stage of stages) await drive(g, stage, byKey, clock())
    await submitIfDone(g, stages)
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
      return g === undefined ? [...plan.stages] : stagesOf(g)
    },
    enrolled() {
      const g = tracker.group(groupId)
      if (g === undefined) return []
      return [...g.members.values()].filter((m) => m.member.type === 'agent' && m.state !== 'ended' && m.member.id !== self).map((m) => m.member.id)
    },
    decisions: () => [...decisionLog],
    handover(summary, packageId) {
      const g = tracker.group(groupId)
      const events = tracker.events(groupId)
      if (g === undefined || events.length === 0) throw new UsageError('handover: the Group has no Events yet')
      const hashes = new Set<string>()
      for (const w of tracker.view(groupId)?.work.values() ?? []) for (const h of tracker.facts(w.workItemId).artifacts.keys()) hashes.add(h)
      const items = [...(tracker.view(groupId)?.work.values() ?? [])]
      const state = items.map((w) => `${w.workItemId}: ${w.state}`).join('; ')
      const decided = decisionLog.filter((d) => d.kind === 'accept_result' || d.kind === 'reject_result').slice(-20)
      return sign(
        'context-package',
        {
          contextPackageId: packageId ?? newId(),
          version: 1,
          missionId: g.missionId,
          groupId,
          sourceEventRange: { fromSequence: events[0]!.sequence!, toSequence: events.at(-1)!.sequence!, eventIds: events.map((e) => e.eventId) },
          artifactHashes: [...hashes],
          summary: summary ?? `Mission ${g.missionId} at revision ${g.missionRevision} is ${g.missionState}. WorkItems: ${state || 'none yet'}.`,
          decisions: [],
          constraints: [`Follow the plan "${plan.title}"; reconcile WorkItem state from the log before assigning anything (§7.2).`],
          unresolvedQuestions: decided.length === 0 ? [] : [`${decided.length} review decision(s) were taken; their Evidence is in the log.`],
          generatedBy: actor,
          generatedAt: iso(clock()),
        },
        options.signingKey,
      ) as unknown as ContextPackage
    },
    close: () => tracker.close(),
  }
}
