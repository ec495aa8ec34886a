/**
 * Executing WorkItems (§11.3, §11.4, §12, §13.2): the execution approval gate, start under a new
 * Execution Lease, renewal, checkpoint, block and unblock, usage recording and submission. Every
 * owner Command after start goes through {@link requireCurrentExecution}. Handlers only; the
 * reducers are in `work-reducers.ts`.
 * @module
 */
import type { Artifact, WorkContract } from '@weft/spec'
import { reject, requireGroup, type HandlerContext, type HandlerFor } from '../commit/handler.js'
import { parseInstant } from '@weft/codec/time'
import type { ActorRef, GroupState, WorkItemRecord } from '../model.js'
import { checkEvidenceCovers } from './evidence.js'
import { leaseLive, ownerLive, ownershipDeadlineMs, renewLease, requireCurrentExecution, requireOwner, workLease } from './leases.js'
import { offlineBindingOf, reconcileCheckpoint, reconcileRenewal } from './offline.js'
import { limitsOf, requireNotExhausted, requireUsageFits } from './work-budget.js'
import { nextState, requireRows } from './work-machine.js'
import {
  childMissionRunning,
  executionRef,
  isCurrentCoordinator,
  isMissionOwner,
  isPolicyService,
  present,
  requireCoordinatorOr,
  requireMissionActive,
  requireWorkItem,
  workDraft,
} from './work-roles.js'

/**
 * The execution approval a WorkItem needs before start (§12): what its contract says, raised to
 * `policy_required` when Organization policy asks for one.
 */
export function executionApprovalMode(ctx: HandlerContext, group: GroupState, record: WorkItemRecord): WorkContract['executionApproval'] {
  const mode = record.doc.contract.executionApproval
  if (mode === 'not_required' && ctx.policy.requiresExecutionApproval?.(group, record.doc.workItemId) === true) return 'policy_required'
  return mode
}

/** Checks that an approval's resources, operations and budget stay within the contract (§4.11, §12). */
function requireApprovalWithinContract(contract: WorkContract, resources: readonly string[], operations: readonly string[], budget: WorkContract['budget']): void {
  const unknown = resources.filter((r) => !contract.allowedResources.some((g) => g.resource === r))
  const allowedOps = new Set(contract.allowedResources.flatMap((g) => g.operations))
  const extraOps = operations.filter((op) => !allowedOps.has(op))
  if (unknown.length > 0 || extraOps.length > 0) reject('INVALID_COMMAND', 'the approval exceeds the resources or operations of the Work Contract', { resources: unknown, operations: extraOps })
  const cap = limitsOf(contract.budget)
  for (const [dimension, value] of Object.entries(limitsOf(budget))) {
    const limit = cap[dimension as keyof typeof cap]
    if (limit !== undefined && value > limit) reject('BUDGET_EXCEEDED', `the approval budget exceeds the Work Contract in ${dimension}`, { dimension, limit, requested: value })
  }
}

/**
 * `approval.grant_execution` (§12): opens the start gate of a queued WorkItem whose contract or
 * policy requires it, for its current Ownership Epoch until an absolute expiry. `human_required`
 * takes a human MissionOwner; `policy_required` the MissionOwner, the current Coordinator or an
 * Organization policy service.
 */
export const grantExecution: HandlerFor<'approval.grant_execution'> = (command, ctx) => {
  const group = requireGroup(ctx)
  const p = command.payload
  const actor = command.actor as ActorRef
  const record = requireWorkItem(group, p.workItemId)
  const mode = executionApprovalMode(ctx, group, record)
  nextState(record.doc.state, command.kind, { executionApprovalRequired: mode !== 'not_required' })
  const allowed =
    mode === 'human_required' ? actor.type === 'human' && isMissionOwner(group, actor) : isMissionOwner(group, actor) || isCurrentCoordinator(ctx, group, actor) || isPolicyService(ctx, actor)
  if (!allowed) reject('AUTH_FORBIDDEN', `${mode} execution approval cannot come from ${actor.id}`)
  if (record.doc.owner?.ownershipEpoch !== p.ownershipEpoch) reject('WORK_STALE_OWNERSHIP', `Ownership Epoch ${p.ownershipEpoch} is not current`, { ownershipEpoch: p.ownershipEpoch })
  if (record.executionApprovals.some((a) => a.approvalId === p.approvalId) || group.approvals.has(p.approvalId)) reject('INVALID_COMMAND', `approval ${p.approvalId} already exists`)
  requireApprovalWithinContract(record.doc.contract, p.resources, p.operations, p.budget)
  const { expiresInSeconds, ...granted } = p
  return [workDraft('approval.execution.granted', { ...granted, expiresAt: ctx.after(expiresInSeconds) })]
}

/**
 * `work.start` (§11.3): the owner starts a queued WorkItem within its start-by deadline, once every
 * dependency is verified (§10.4), no budget above it is exhausted and any required execution
 * approval for the current epoch is valid (§12), under a new Execution Lease.
 */
export const startWork: HandlerFor<'work.start'> = (command, ctx) => {
  const group = requireGroup(ctx)
  const p = command.payload
  const actor = command.actor as ActorRef
  const record = requireWorkItem(group, p.workItemId)
  requireOwner(record, actor, p.ownershipEpoch)
  requireRows(record.doc.state, command.kind)
  requireMissionActive(group)
  const ownership = record.ownershipLease
  if (!leaseLive(ownership, ctx.nowMs) || ctx.nowMs >= ownershipDeadlineMs(ownership)) {
    reject('WORK_LEASE_EXPIRED', `the ownership of WorkItem ${p.workItemId} passed its start-by deadline`)
  }
  const unsatisfied = record.dependencyIds.filter((id) => group.workItems.get(id)?.doc.state !== 'verified')
  if (unsatisfied.length > 0) reject('INVALID_STATE_TRANSITION', `WorkItem ${p.workItemId} waits for its dependencies`, { unsatisfiedDependencies: unsatisfied })
  // §12: work under an exhausted budget stays paused until an escalation raises that budget.
  requireNotExhausted(group, record, ctx.state)
  if (executionApprovalMode(ctx, group, record) !== 'not_required') {
    const approved = record.executionApprovals.some((a) => a.ownershipEpoch === p.ownershipEpoch && ctx.nowMs < parseInstant(a.expiresAt))
    if (!approved) reject('APPROVAL_REQUIRED', `WorkItem ${p.workItemId} needs a valid execution approval for Ownership Epoch ${p.ownershipEpoch}`)
  }
  nextState(record.doc.state, command.kind, { startAllowed: true })
  const executionLease = workLease('execution', record, {
    leaseId: ctx.newId(),
    holderAgentId: actor.id,
    sessionEpoch: command.sessionEpoch ?? ctx.state.org.agents.get(actor.id)?.sessionEpoch ?? 1,
    ownershipEpoch: p.ownershipEpoch,
    at: ctx.now,
    expiresAt: ctx.after(p.executionLeaseSeconds),
  })
  return [workDraft('work.started', { workItemId: p.workItemId, ownershipEpoch: p.ownershipEpoch, executionLease, executionLeaseExpiresAt: executionLease.expiresAt })]
}

/** The record of an owner Command under the current Execution Lease, after the §11.3 checks and the row check. */
function currentExecution(
  ctx: HandlerContext,
  kind: 'work.checkpoint' | 'work.block' | 'work.submit' | 'ext.missionweaveprotocol.core.work_execution_lease_renew' | 'ext.missionweaveprotocol.core.resource_usage_record',
  actor: ActorRef,
  p: { readonly workItemId: string; readonly ownershipEpoch: number; readonly executionLeaseId: string },
): { readonly group: GroupState; readonly record: WorkItemRecord } {
  const group = requireGroup(ctx)
  const record = requireWorkItem(group, p.workItemId)
  requireCurrentExecution(group, record, actor, p.ownershipEpoch, p.executionLeaseId, ctx.nowMs)
  nextState(record.doc.state, kind)
  return { group, record }
}

/** `ext.missionweaveprotocol.core.work_execution_lease_renew` (§11.3): extends the current Execution Lease, with optional progress. */
export const renewExecution: HandlerFor<'ext.missionweaveprotocol.core.work_execution_lease_renew'> = (command, ctx) => {
  const p = command.payload
  const { group, record } = currentExecution(ctx, command.kind, command.actor as ActorRef, p)
  // §11.5: a renewal buffered offline also carries a binding that must hold.
  const binding = offlineBindingOf(command)
  if (binding !== undefined) reconcileRenewal(ctx, group, record, command, binding)
  const lease = renewLease(record.executionLease!, ctx.now, ctx.after(p.leaseSeconds))
  return [
    workDraft(
      'work.progressed',
      p.progress === undefined
        ? { workItemId: p.workItemId, ownershipEpoch: p.ownershipEpoch, executionLease: lease, executionLeaseExpiresAt: lease.expiresAt }
        : { workItemId: p.workItemId, ownershipEpoch: p.ownershipEpoch, executionLease: lease, executionLeaseExpiresAt: lease.expiresAt, progress: p.progress },
    ),
  ]
}

function requireCheckpointTaken(ctx: HandlerContext, createdAt: string): void {
  if (parseInstant(createdAt) > ctx.nowMs) reject('INVALID_COMMAND', 'a checkpoint cannot be dated after its Command is accepted', { createdAt })
}

/**
 * `work.checkpoint` (§11.3): a durable checkpoint releases the Execution Lease; ownership stays until
 * `resumeBy`. One buffered offline (§11.5) is reconciled by `reconcileCheckpoint` in `offline.ts`.
 */
export const checkpointWork: HandlerFor<'work.checkpoint'> = (command, ctx) => {
  const p = command.payload
  // §11.5: a checkpoint buffered offline is fenced by its historical lease and grace window instead
  // of the current lease, and first charges its offline usage in the same transaction.
  const binding = offlineBindingOf(command)
  if (binding === undefined) currentExecution(ctx, command.kind, command.actor as ActorRef, p)
  const charge = binding === undefined ? [] : reconcileCheckpoint(ctx, command, binding)
  requireCheckpointTaken(ctx, p.checkpoint.createdAt)
  // One literal per shape rather than spreads of helper objects: every checkpoint takes this path.
  const resumeBy = ctx.after(p.resumeWithinSeconds)
  const { workItemId, ownershipEpoch, executionLeaseId, checkpoint, progress } = p
  const checkpointed = workDraft(
    'work.checkpointed',
    progress === undefined ? { workItemId, ownershipEpoch, executionLeaseId, checkpoint, resumeBy } : { workItemId, ownershipEpoch, executionLeaseId, checkpoint, resumeBy, progress },
  )
  return charge.length === 0 ? [checkpointed] : [...charge, checkpointed]
}

/** `work.block` (§11.4): checkpoint, blocker and a bounded blocked lease; the execution slot is released. */
export const blockWork: HandlerFor<'work.block'> = (command, ctx) => {
  const p = command.payload
  currentExecution(ctx, command.kind, command.actor as ActorRef, p)
  requireCheckpointTaken(ctx, p.checkpoint.createdAt)
  const blockedLeaseExpiresAt = ctx.after(p.blockedLeaseSeconds)
  return [workDraft('work.blocked', { ...executionRef(p), checkpoint: p.checkpoint, reason: p.reason, ...present({ requiredResolution: p.requiredResolution }), blockedLeaseExpiresAt })]
}

/**
 * `work.unblock` (§10.2, §11.4): by the Coordinator, the MissionOwner or the owner. The WorkItem
 * re-enters its queue while the blocked lease is live, else it becomes `open` to be re-offered.
 */
export const unblockWork: HandlerFor<'work.unblock'> = (command, ctx) => {
  const group = requireGroup(ctx)
  const p = command.payload
  const actor = command.actor as ActorRef
  const record = requireWorkItem(group, p.workItemId)
  const owner = record.doc.owner
  const isOwner = actor.type === 'agent' && owner?.agentId === actor.id
  requireCoordinatorOr(ctx, group, actor, isMissionOwner(group, actor) || isOwner, 'only the Coordinator, the MissionOwner or the owner may unblock')
  requireRows(record.doc.state, command.kind)
  if (childMissionRunning(ctx.state, record)) reject('INVALID_STATE_TRANSITION', `WorkItem ${p.workItemId} waits for its child Mission`)
  const next = nextState(record.doc.state, command.kind, { ownershipLive: ownerLive(record, ctx.nowMs, ctx.state.org.agents) })
  const resolution = present({ resolution: p.resolution })
  return [
    workDraft(
      'work.unblocked',
      next === 'queued' && owner !== undefined
        ? { workItemId: p.workItemId, nextState: 'queued', ownershipEpoch: owner.ownershipEpoch, ...resolution }
        : { workItemId: p.workItemId, nextState: 'open', ...resolution },
    ),
  ]
}

/**
 * `ext.missionweaveprotocol.core.resource_usage_record` (§12): a nonzero delta under the current
 * Execution Lease, charged at once to the WorkItem and its complete ancestry, across child Mission
 * links up to the root Mission; refused whole while any level is exhausted or when one would overflow.
 */
export const recordResourceUsage: HandlerFor<'ext.missionweaveprotocol.core.resource_usage_record'> = (command, ctx) => {
  const p = command.payload
  const { group, record } = currentExecution(ctx, command.kind, command.actor as ActorRef, p)
  const charge = requireUsageFits(group, record, p.usageDelta, ctx.state)
  return [workDraft('ext.missionweaveprotocol.core.resource_usage_recorded', { ...executionRef(p), usageDelta: p.usageDelta, ...charge })]
}

/**
 * §10.1, §13.1: a submission carries every deliverable the Work Contract requires. A required
 * deliverable is matched by a submitted Artifact whose signed manifest declares the same media type
 * and output schema; the content itself is judged in review (§13.2), not here.
 */
function requireDeliverables(contract: WorkContract, manifests: readonly Pick<Artifact, 'mediaType' | 'schemaUri'>[]): void {
  const missing = contract.requiredDeliverables.filter((d) => !manifests.some((m) => m.mediaType === d.mediaType && m.schemaUri === d.schema))
  if (missing.length === 0) return
  const wanted = missing.map((d) => `${d.deliverableId} (${d.mediaType}, ${d.schema})`).join(', ')
  reject('INVALID_COMMAND', `no submitted Artifact is the required deliverable ${wanted}`, { missingDeliverables: missing.map((d) => d.deliverableId) })
}

/**
 * `work.submit` (§13.2): Artifacts published for this WorkItem, together every required deliverable
 * of its Work Contract, and Evidence covering every acceptance criterion, under the current
 * Execution Lease, which the submission releases.
 */
export const submitWork: HandlerFor<'work.submit'> = (command, ctx) => {
  const p = command.payload
  const { group, record } = currentExecution(ctx, command.kind, command.actor as ActorRef, p)
  const manifests = p.artifactIds.map((artifactId) => {
    const artifact = group.artifacts.get(artifactId)
    if (artifact === undefined || artifact.manifest.workItemId !== p.workItemId) {
      reject('INVALID_COMMAND', `Artifact ${artifactId} was not published for WorkItem ${p.workItemId}`, { artifactId })
    }
    return artifact.manifest
  })
  requireDeliverables(record.doc.contract, manifests)
  checkEvidenceCovers(ctx, group, record, p.evidence)
  // The distinct content hashes in submission order; one Artifact (the usual case) needs no set.
  const artifactHashes = manifests.length === 1 ? [manifests[0]!.contentHash] : [...new Set(manifests.map((m) => m.contentHash))]
  return [
    workDraft('work.submitted', { workItemId: p.workItemId, ownershipEpoch: p.ownershipEpoch, executionLeaseId: p.executionLeaseId, artifactIds: p.artifactIds, artifactHashes, evidence: p.evidence }),
  ]
}
