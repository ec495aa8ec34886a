/**
 * The Commands a Coordinator issues (§7.2, §8, §10, §13.2, §14), each a function of the
 * {@link CoordinatorContext} it runs in: authorize and offer a stage, review a submission, resolve
 * a blocker, promote a stage and decide on the child Mission, enrol Agents, renew the lease,
 * submit the Mission, and sign the handover Context Package. What to do is decided elsewhere
 * (`stage-step.ts`, `coordinator-lifecycle.ts`); a refused Command is logged and left for the
 * next round, which reads the log again.
 * @module
 */
import { ProtocolError, sign, UsageError, type SigningKey } from '@weft/codec'
import type { Client, Clock } from '@weft/client'
import type { Approval, ContextPackage, Evidence, EvidenceType, WorkContract } from '@weft/spec'
import type { TrackedWork } from '@weft/worker'
import type { CoordinatorDecision, CoordinatorLogEntry } from './coordinator.js'
import { rankCandidates, selectionBasis, type MemberRole, type StaffingSource } from './coordinator-staffing.js'
import { explicitCandidates, type MissionPlan, type Promotion, type StageSpec } from './mission-plan.js'
import { reviewSubmission, type BlobSource } from './review.js'
import type { StageStep } from './stage-step.js'
import { memberKey, type GroupFacts } from './tracker.js'

/** WorkItem states that need nothing more from the Coordinator. */
const TERMINAL: ReadonlySet<string> = new Set(['verified', 'cancelled'])
const DEFAULT_RESOLUTION = 'The Coordinator arranged what the blocker asked for; resume from the checkpoint.'

/** What a Coordinator's actions share: who it is, its client and log, its plan, and its records. */
export interface CoordinatorContext extends StaffingSource {
  readonly actor: { readonly type: 'agent'; readonly id: string }
  readonly signingKey: SigningKey
  readonly client: Client
  readonly plan: MissionPlan
  readonly clock: Clock
  /** Offer lifetime in seconds (§10.3). */
  readonly offerSeconds: number
  /** The Coordinator lease it renews to, in seconds (§7.2). */
  readonly leaseSeconds: number
  /** Ownership lease a child Mission's Coordinator asks for on the parent WorkItem, in seconds (§14). */
  readonly ownershipLeaseSeconds: number
  /** For a child Mission's Coordinator: the parent WorkItem it accepts before the child exists (§14). */
  readonly parent: { readonly groupId: string; readonly workItemId: string } | undefined
  /** Where it reads Artifact bytes for the integrity review (§13.1). */
  readonly blobs: BlobSource | undefined
  /** Submissions already reviewed and child submissions already decided, by the Event ID that made them. */
  readonly reviewed: Set<string>
  /** Every decision taken so far, oldest first. */
  readonly decisions: CoordinatorDecision[]
  /** The Agents `stages` may be offered to, with their roles (§8). */
  memberRoles(stages: readonly StageSpec[]): ReadonlyMap<string, MemberRole>
  newId(): string
  log(entry: CoordinatorLogEntry): void
}

const iso = (ms: number): string => new Date(ms).toISOString()

/** Records a decision for the audit trail and logs it (no private reasoning, §4). */
function decide(ctx: CoordinatorContext, d: Omit<CoordinatorDecision, 'atMs'>): void {
  ctx.decisions.push({ atMs: ctx.clock.now(), ...d })
  ctx.log({ level: 'info', message: `${d.kind}: ${d.detail}`, ...(d.workItemId === undefined ? {} : { workItemId: d.workItemId }) })
}

/** Runs one Command; a refusal is logged and reported as `false` (the next round re-reads the log and decides again). */
async function attempt(ctx: CoordinatorContext, what: string, workItemId: string | undefined, run: () => Promise<unknown>): Promise<boolean> {
  try {
    await run()
    return true
  } catch (error) {
    const e = ProtocolError.from(error)
    ctx.log({ level: 'warn', message: `${what} refused: ${e.message}`, code: e.code, ...(workItemId === undefined ? {} : { workItemId }) })
    return false
  }
}

/** §10.4: authorizes `stage` with its dependency edges (the contract lists them too, §10.1). */
export async function authorize(ctx: CoordinatorContext, stage: StageSpec, dependencyIds: readonly string[]): Promise<void> {
  const deps = [...dependencyIds]
  const contract: WorkContract = { ...stage.contract, dependencyWorkItemIds: deps }
  await attempt(ctx, 'work.authorize', stage.workItemId, () => ctx.client.workAuthorize({ workItemId: stage.workItemId, contract, dependencyIds: deps }))
}

/** Carries out `step` for `stage` (any step but `authorize`, which {@link authorize} does). */
export async function perform(ctx: CoordinatorContext, g: GroupFacts, stage: StageSpec, step: StageStep, nowMs: number): Promise<void> {
  switch (step.step) {
    case 'offer':
      return offer(ctx, stage, step.work, nowMs, step.why)
    case 'review':
      return review(ctx, g, stage, step.work)
    case 'unblock':
      return unblock(ctx, stage, step.work)
    case 'promote':
      return promote(ctx, stage, step.promotion)
    case 'decide_child':
      return decideChild(ctx, stage, step.childGroupId)
    default:
      return
  }
}

/** Offers `stage` (§10.3): sequentially to the best candidate, to a bounded set of two for urgent work. */
async function offer(ctx: CoordinatorContext, stage: StageSpec, w: TrackedWork, nowMs: number, why: 'offer' | 'reassign'): Promise<void> {
  const passedOver = new Set<string>(w.state === 'offered' || w.state === 'failed' ? w.offeredTo : [])
  if (w.owner !== undefined && why === 'reassign') passedOver.add(w.owner)
  const ranked = rankCandidates(ctx, stage, passedOver)
  if (ranked.length === 0) {
    ctx.log({ level: 'warn', message: `no Agent of the directory can take ${stage.title}`, workItemId: stage.workItemId })
    return
  }
  const explicit = explicitCandidates(stage) !== undefined
  const urgent = !explicit && (stage.contract.requestedUrgency === 'high' || stage.contract.requestedUrgency === 'critical')
  const chosen = ranked.slice(0, urgent ? 2 : 1)
  const rules = ['capability-match', explicit ? 'plan-assignment' : 'least-loaded', urgent ? 'bounded-candidate-set' : 'sequential-offer', ...(why === 'reassign' ? ['lapsed-owner-fenced'] : [])]
  const sent = await attempt(ctx, 'work.offer', stage.workItemId, () =>
    ctx.client.workOffer({ workItemId: stage.workItemId, candidateAgentIds: chosen, selectionBasis: selectionBasis(ctx, stage, chosen, nowMs, rules), offerExpiresInSeconds: ctx.offerSeconds }),
  )
  if (sent) decide(ctx, { kind: why, workItemId: stage.workItemId, candidates: chosen, detail: `${stage.title} → ${chosen.join(', ')}` })
}

/** §11.4: resolves the blocker of `stage` as the plan says. */
async function unblock(ctx: CoordinatorContext, stage: StageSpec, w: TrackedWork): Promise<void> {
  const ok = await attempt(ctx, 'work.unblock', stage.workItemId, () => ctx.client.workUnblock({ workItemId: stage.workItemId, resolution: stage.resolution ?? DEFAULT_RESOLUTION }))
  if (ok) decide(ctx, { kind: 'unblock', workItemId: stage.workItemId, detail: `${stage.title}: ${w.blockedReason ?? 'blocked'}` })
}

/** A signed Evidence record by this Coordinator about a WorkItem of `g` (§13.2). */
function evidence(
  ctx: CoordinatorContext,
  g: GroupFacts,
  workItemId: string,
  type: EvidenceType,
  criterionIds: readonly string[],
  method: string,
  result: Evidence['result'],
  artifactHashes: readonly string[],
  details?: Record<string, unknown>,
): Evidence {
  return sign(
    'evidence',
    {
      evidenceId: ctx.newId(),
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
      generatedBy: ctx.actor,
      createdAt: iso(ctx.clock.now()),
    },
    ctx.signingKey,
  ) as unknown as Evidence
}

/** §13.2: reviews the pending submission of `stage`, then accepts it or fails it (to be offered again). */
async function review(ctx: CoordinatorContext, g: GroupFacts, stage: StageSpec, w: TrackedWork): Promise<void> {
  const facts = ctx.tracker.facts(stage.workItemId)
  const submission = facts.submission
  if (submission === undefined || ctx.reviewed.has(submission.eventId)) return
  ctx.reviewed.add(submission.eventId)
  const outcome = await reviewSubmission({
    contract: w.contract ?? stage.contract,
    submission,
    manifests: facts.artifacts,
    ...(ctx.blobs === undefined ? {} : { blobs: ctx.blobs }),
    ...(stage.check === undefined ? {} : { check: stage.check }),
  })
  if (outcome.passed) {
    const records = outcome.evidence.map((p) => evidence(ctx, g, stage.workItemId, p.type, p.criterionIds, p.method, 'passed', p.artifactHashes))
    const ok = await attempt(ctx, 'work.accept_result', stage.workItemId, () => ctx.client.workAcceptResult({ workItemId: stage.workItemId, evidence: records }))
    if (ok)
      decide(ctx, { kind: 'accept_result', workItemId: stage.workItemId, detail: `${stage.title}: ${records.length} review Evidence record(s) over ${submission.artifactHashes.length} Artifact(s)` })
    else ctx.reviewed.delete(submission.eventId)
    return
  }
  const reason = outcome.problems.join('; ').slice(0, 3900)
  const failure = evidence(
    ctx,
    g,
    stage.workItemId,
    'failure_report',
    outcome.failedCriteria.length > 0 ? outcome.failedCriteria : [stage.contract.acceptanceCriteria[0]!.criterionId],
    'Coordinator review of the submission (§13.2).',
    'failed',
    submission.artifactHashes,
    { problems: [...outcome.problems] },
  )
  const ok = await attempt(ctx, 'work.fail', stage.workItemId, () => ctx.client.workFail({ workItemId: stage.workItemId, reason: `Review rejected the submission: ${reason}`, evidence: [failure] }))
  if (ok) decide(ctx, { kind: 'reject_result', workItemId: stage.workItemId, detail: `${stage.title}: ${reason}` })
  else ctx.reviewed.delete(submission.eventId)
}

/** §14: the child Coordinator accepted the parent WorkItem; promote it. */
async function promote(ctx: CoordinatorContext, stage: StageSpec, p: Promotion): Promise<void> {
  const ok = await attempt(ctx, 'mission.create_child', stage.workItemId, () =>
    ctx.client.missionCreateChild({
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
      coordinatorLeaseSeconds: p.coordinatorLeaseSeconds ?? ctx.leaseSeconds,
      childFailurePolicy: p.childFailurePolicy ?? 'block_parent_work_item',
    }),
  )
  if (ok) decide(ctx, { kind: 'promote', workItemId: stage.workItemId, detail: `${stage.title} became child Mission ${p.plan.missionId}` })
}

/** §14: as the child's MissionOwner, decides on its submission: every child WorkItem verified and the set published there. */
async function decideChild(ctx: CoordinatorContext, stage: StageSpec, childGroupId: string): Promise<void> {
  const { tracker } = ctx
  tracker.subscribe(childGroupId)
  const child = tracker.group(childGroupId)
  const submission = child?.submission
  if (child === undefined || child.missionState !== 'awaiting_approval' || submission === undefined || ctx.reviewed.has(submission.eventId)) return
  ctx.reviewed.add(submission.eventId)
  const items = [...(tracker.view(childGroupId)?.work.values() ?? [])]
  const open = items.filter((w) => !TERMINAL.has(w.state)).map((w) => w.workItemId)
  const published = new Set(items.flatMap((w) => [...tracker.facts(w.workItemId).artifacts.keys()]))
  const missing = submission.artifactHashes.filter((h) => !published.has(h))
  const approve = open.length === 0 && missing.length === 0
  const approval = sign(
    'approval',
    {
      approvalId: ctx.newId(),
      kind: 'child_mission',
      decision: approve ? 'approved' : 'changes_requested',
      missionId: child.missionId,
      groupId: childGroupId,
      missionRevision: submission.missionRevision,
      artifactHashes: [...submission.artifactHashes],
      acceptancePolicyVersion: '1.0.0',
      approver: ctx.actor,
      comments: approve
        ? `Every child WorkItem is verified and the ${submission.artifactHashes.length} Artifact(s) are published in the child Group.`
        : `Open: ${open.join(', ') || 'none'}; unpublished: ${missing.join(', ') || 'none'}.`,
      conditions: [],
      occurredAt: iso(ctx.clock.now()),
    },
    ctx.signingKey,
  ) as unknown as Approval
  const to = ctx.client.withGroup(childGroupId)
  const ok = await attempt(ctx, approve ? 'mission.approve' : 'mission.request_changes', stage.workItemId, () => (approve ? to.missionApprove({ approval }) : to.missionRequestChanges({ approval })))
  if (ok) decide(ctx, { kind: 'approve_child', workItemId: stage.workItemId, detail: `${approve ? 'approved' : 'requested changes to'} child Mission ${child.missionId}` })
  else ctx.reviewed.delete(submission.eventId)
}

/** §7.3: once every WorkItem is verified or cancelled, the Artifact set of the verified submissions goes to the MissionOwner. */
export async function submitIfDone(ctx: CoordinatorContext, g: GroupFacts, stages: readonly StageSpec[]): Promise<void> {
  const { tracker } = ctx
  const items = [...(tracker.view(ctx.groupId)?.work.values() ?? [])]
  const planned = stages.every((s) => tracker.work(s.workItemId) !== undefined)
  if (!planned || items.length === 0 || items.some((w) => !TERMINAL.has(w.state))) return
  const hashes = new Set<string>()
  for (const w of items) if (w.state === 'verified') for (const h of tracker.facts(w.workItemId).submission?.artifactHashes ?? []) hashes.add(h)
  if (hashes.size === 0) return
  const ok = await attempt(ctx, 'mission.submit_for_approval', undefined, () => ctx.client.missionSubmitForApproval({ artifactHashes: [...hashes] }))
  if (ok) decide(ctx, { kind: 'submit', detail: `revision ${g.missionRevision} with ${hashes.size} Artifact(s) for the MissionOwner's Approval` })
}

/** §14: a child Mission's Coordinator first accepts the parent WorkItem, which is then promoted. */
export async function acceptPromotion(ctx: CoordinatorContext, parent: { readonly groupId: string; readonly workItemId: string }, nowMs: number): Promise<void> {
  if (!ctx.tracker.subscribe(parent.groupId)) return
  const w = ctx.tracker.work(parent.workItemId)
  if (w?.state !== 'offered' || !w.offeredTo.includes(ctx.actor.id) || w.offerExpiresAt === undefined || nowMs >= Date.parse(w.offerExpiresAt)) return
  await attempt(ctx, 'work.accept_offer', parent.workItemId, () =>
    ctx.client.withGroup(parent.groupId).workAcceptOffer({ workItemId: parent.workItemId, ownershipLeaseSeconds: ctx.ownershipLeaseSeconds }),
  )
}

/** §7.2: renews the Coordinator lease once less than half of it is left. */
export async function renewLease(ctx: CoordinatorContext, g: GroupFacts, nowMs: number): Promise<void> {
  const left = Date.parse(g.coordinatorLeaseExpiresAt) - nowMs
  if (left <= 0 || left >= (ctx.leaseSeconds * 1000) / 2) return
  await attempt(ctx, 'mission.renew_coordinator', undefined, () => ctx.client.missionRenewCoordinator({ leaseSeconds: ctx.leaseSeconds }))
}

/**
 * §8: the Agents some stage may be offered to (directory Agents with its capabilities, or the
 * Agents it names) get a Worker Membership.
 */
export async function enrol(ctx: CoordinatorContext, g: GroupFacts, stages: readonly StageSpec[]): Promise<void> {
  for (const [agentId, role] of ctx.memberRoles(stages)) {
    const known = g.members.get(memberKey({ type: 'agent', id: agentId }))
    if (agentId === ctx.actor.id || (known !== undefined && known.state !== 'ended')) continue
    await attempt(ctx, 'membership.change', undefined, () =>
      ctx.client.membershipChange({
        membershipId: `${ctx.groupId}:member:${agentId.split(':').pop()}`,
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

/**
 * A signed Context Package of the Mission as the Coordinator's log stands (§7.2, §13.3), for a
 * replacement Coordinator. `packageId` defaults to a fresh ID.
 * @throws UsageError before the Group's first Event.
 */
export function handoverPackage(ctx: CoordinatorContext, summary: string | undefined, packageId: string | undefined): ContextPackage {
  const { tracker, groupId } = ctx
  const g = tracker.group(groupId)
  const events = tracker.events(groupId)
  if (g === undefined || events.length === 0) throw new UsageError('handover: the Group has no Events yet')
  const hashes = new Set<string>()
  for (const w of tracker.view(groupId)?.work.values() ?? []) for (const h of tracker.facts(w.workItemId).artifacts.keys()) hashes.add(h)
  const items = [...(tracker.view(groupId)?.work.values() ?? [])]
  const state = items.map((w) => `${w.workItemId}: ${w.state}`).join('; ')
  const decided = ctx.decisions.filter((d) => d.kind === 'accept_result' || d.kind === 'reject_result').slice(-20)
  return sign(
    'context-package',
    {
      contextPackageId: packageId ?? ctx.newId(),
      version: 1,
      missionId: g.missionId,
      groupId,
      sourceEventRange: { fromSequence: events[0]!.sequence!, toSequence: events.at(-1)!.sequence!, eventIds: events.map((e) => e.eventId) },
      artifactHashes: [...hashes],
      summary: summary ?? `Mission ${g.missionId} at revision ${g.missionRevision} is ${g.missionState}. WorkItems: ${state || 'none yet'}.`,
      decisions: [],
      constraints: [`Follow the plan "${ctx.plan.title}"; reconcile WorkItem state from the log before assigning anything (§7.2).`],
      unresolvedQuestions: decided.length === 0 ? [] : [`${decided.length} review decision(s) were taken; their Evidence is in the log.`],
      generatedBy: ctx.actor,
      generatedAt: iso(ctx.clock.now()),
    },
    ctx.signingKey,
  ) as unknown as ContextPackage
}
