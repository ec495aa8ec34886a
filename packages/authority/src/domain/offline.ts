/**
 * Bounded offline execution (§11.5): the critical
 * `urn:missionweaveprotocol:extension:bounded-offline-execution` binding a Worker attaches to every
 * Command it buffered while the Group service was unreachable, and the checks and usage charge the
 * Authority applies when the Worker reconciles after reconnecting.
 *
 * **The binding.** The Command's `extensions` map holds, under {@link BOUNDED_OFFLINE_EXECUTION},
 * an entry `{ version: "1.x.y", critical: true, data }` whose `data` is an {@link OfflineBinding}
 * (camelCase, every member required except `originalActionId`, nothing else allowed). The
 * envelope is rebased: `issuedAt`, `sessionEpoch` and `membershipEpoch` come from the Worker's
 * current session, so the ingress checks them as for any Command; the binding keeps the facts of
 * the historical execution.
 *
 * **The window.** Progress is accepted only when it was buffered while the historical Execution
 * Lease, or its bounded grace, still held:
 * `lease.issuedAt <= disconnectedAt <= historicalLeaseExpiresAt`,
 * `disconnectedAt <= bufferedAt <= min(graceDeadline, now)`, and
 * `graceDeadline <= historicalLeaseExpiresAt + {@link MAX_OFFLINE_GRACE_SECONDS}`. The
 * historical expiry may not be later than the one the Authority recorded for the lease (a Worker
 * that reconciled a renewal first still cites the expiry it knew while offline). The lease must be
 * the latest Execution Lease issued for the WorkItem, bound to the binding's Agent, Ownership Epoch
 * and original Session Epoch, and not closed at or before `bufferedAt`; the Ownership Epoch must
 * still be current.
 *
 * **The charge.** A nonzero `usageDelta` becomes one
 * `ext.missionweaveprotocol.core.resource_usage_recorded` Event with `offlineReconciliation`,
 * placed before the progress Event in the same transaction; a delta that does not fit refuses the
 * whole Command (`BUDGET_EXCEEDED`), so neither Event is appended.
 * @module
 */
import { isAbsoluteUri, isProtocolTimestamp } from '@weft/codec'
import { BOUNDED_OFFLINE_EXECUTION, USAGE_DIMENSIONS, type Command, type Lease, type OfflineBinding, type UsageDelta, type WorkItemState } from '@weft/spec'
import { reject, requireGroup, type AnyEventDraft, type CommandOf, type HandlerContext } from '../commit/handler.js'
import type { ActorRef, GroupState, WorkItemRecord } from '../model.js'
import { closedLeasesOf, requireOwner } from './leases.js'
import { requireUsageFits } from './work-budget.js'
import { nextState } from './work-machine.js'
import { requireWorkItem, workDraft } from './work-roles.js'
import { parseInstant } from '@weft/codec/time'

// The binding's shape is the protocol's, shared with the Workers that write it.
export { BOUNDED_OFFLINE_EXECUTION, type OfflineBinding }

/** The major version of the binding this Authority interprets; another major is an unknown critical profile (§18). */
export const OFFLINE_BINDING_MAJOR = 1

/**
 * The longest lease-grace period, in seconds, a binding may claim after its historical lease
 * expiry (§11.5: the grace is bounded). Fifteen minutes.
 */
export const MAX_OFFLINE_GRACE_SECONDS = 900

type Extensions = NonNullable<Command['extensions']>

const ID_FIELDS = ['agentId', 'groupId', 'workItemId', 'executionLeaseId'] as const
const EPOCH_FIELDS = ['originalSessionEpoch', 'ownershipEpoch'] as const
const TIME_FIELDS = ['disconnectedAt', 'bufferedAt', 'graceDeadline', 'historicalLeaseExpiresAt'] as const
const KNOWN_FIELDS: ReadonlySet<string> = new Set([...ID_FIELDS, ...EPOCH_FIELDS, ...TIME_FIELDS, 'usageDelta', 'originalActionId'])

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isCount(value: unknown, min: number): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min
}

/** The schema problems of a binding's `data`, at most eight (validation errors are bounded data, STYLE §8). */
export function offlineBindingIssues(data: unknown): { readonly path: string; readonly message: string }[] {
  if (!isObject(data)) return [{ path: '', message: 'must be an object' }]
  const issues: { path: string; message: string }[] = []
  const add = (path: string, message: string): void => {
    if (issues.length < 8) issues.push({ path, message })
  }
  for (const key of Object.keys(data)) if (!KNOWN_FIELDS.has(key)) add(`/${key}`, 'unknown member is not allowed')
  for (const key of [...ID_FIELDS, 'originalActionId'] as const) {
    const value = data[key]
    if (value === undefined && key === 'originalActionId') continue
    if (typeof value !== 'string' || value.length > 512 || !isAbsoluteUri(value)) add(`/${key}`, 'must be an identifier')
  }
  for (const key of EPOCH_FIELDS) if (!isCount(data[key], 1)) add(`/${key}`, 'must be a positive integer')
  for (const key of TIME_FIELDS) {
    const value = data[key]
    if (typeof value !== 'string' || !isProtocolTimestamp(value)) add(`/${key}`, 'must be an RFC 3339 timestamp')
  }
  const delta = data['usageDelta']
  if (!isObject(delta)) add('/usageDelta', 'must be an object')
  else {
    for (const key of Object.keys(delta)) if (!(USAGE_DIMENSIONS as readonly string[]).includes(key)) add(`/usageDelta/${key}`, 'unknown member is not allowed')
    for (const d of USAGE_DIMENSIONS) if (!isCount(delta[d], 0)) add(`/usageDelta/${d}`, 'must be a non-negative integer')
  }
  return issues
}

/**
 * The bounded offline execution binding of `command`, or `undefined` when it carries none.
 * @throws ProtocolError `UNKNOWN_CRITICAL_EXTENSION` for a major version other than
 * {@link OFFLINE_BINDING_MAJOR}, `INVALID_COMMAND` when the entry is not critical (§11.5 makes it
 * critical), `SCHEMA_VALIDATION_FAILED` (with `details.issues`) when `data` is malformed.
 */
export function offlineBindingOf(command: Pick<Command, 'extensions'>): OfflineBinding | undefined {
  const entry = command.extensions?.[BOUNDED_OFFLINE_EXECUTION]
  if (entry === undefined) return undefined
  if (Number(entry.version.split('.')[0]) !== OFFLINE_BINDING_MAJOR) {
    reject('UNKNOWN_CRITICAL_EXTENSION', `bounded offline execution ${entry.version} cannot be interpreted`, { profiles: [BOUNDED_OFFLINE_EXECUTION] })
  }
  // §11.5: a buffered Command carries the binding as critical, so no recipient can ignore it.
  if (!entry.critical) reject('INVALID_COMMAND', 'the bounded offline execution binding must be critical')
  const issues = offlineBindingIssues(entry.data)
  if (issues.length > 0) reject('SCHEMA_VALIDATION_FAILED', 'the bounded offline execution binding does not conform to its schema', { issues })
  return entry.data as OfflineBinding
}

/**
 * The entries of `extensions` that are not critical (§18: an unknown noncritical extension may be
 * retained and relayed without interpretation), as given, or `undefined` when there are none.
 */
export function noncriticalExtensions(extensions: Extensions | undefined): Extensions | undefined {
  const kept = Object.entries(extensions ?? {}).filter(([, entry]) => !entry.critical)
  return kept.length === 0 ? undefined : Object.fromEntries(kept)
}

/** The lease named `leaseId` among `record`'s current and closed Execution Leases. */
function findExecutionLease(record: WorkItemRecord, leaseId: string): Lease | undefined {
  if (record.executionLease?.leaseId === leaseId) return record.executionLease
  return closedLeasesOf(record).findLast((l) => l.leaseType === 'execution' && l.leaseId === leaseId)
}

/** What the Command carries besides its binding. */
export interface OfflineCommand {
  readonly actor: ActorRef
  readonly actionId: string
  readonly groupId: string | undefined
  /** The rebased Session Epoch of the current session. */
  readonly sessionEpoch: number | undefined
}

/**
 * The historical Execution Lease of `binding`, after every §11.5 check of the binding against
 * the Authority's record: Agent, Group and WorkItem, the current Ownership Epoch, the lease's
 * identity and closure, and the lease/grace window (see the module comment).
 * @throws ProtocolError `AUTH_FORBIDDEN` (another Agent's binding, or not the owner),
 * `WORK_STALE_OWNERSHIP` (the owner changed), `WORK_LEASE_EXPIRED` (an unknown or superseded
 * lease, progress buffered after its closure or outside its window), `INVALID_COMMAND` (a binding
 * that contradicts the Command or the lease, or an unordered or unbounded window).
 */
export function requireOfflineWindow(ctx: HandlerContext, group: GroupState, record: WorkItemRecord, command: OfflineCommand, binding: OfflineBinding): Lease {
  const { actor } = command
  if (actor.type !== 'agent' || binding.agentId !== actor.id) reject('AUTH_FORBIDDEN', 'the offline binding belongs to another Agent')
  if (binding.groupId !== command.groupId || binding.groupId !== group.groupId) reject('INVALID_COMMAND', 'the offline binding names another Group')
  if (binding.workItemId !== record.doc.workItemId) reject('INVALID_COMMAND', 'the offline binding names another WorkItem')
  // §11.5: the Command is rebased onto the current session, never onto an older one.
  if (command.sessionEpoch === undefined || binding.originalSessionEpoch > command.sessionEpoch) {
    reject('INVALID_COMMAND', 'the original Session Epoch is later than the current one', { originalSessionEpoch: binding.originalSessionEpoch })
  }
  // §11.5: progress for a changed owner is refused.
  requireOwner(record, actor, binding.ownershipEpoch)
  const lease = findExecutionLease(record, binding.executionLeaseId)
  if (lease === undefined) reject('WORK_LEASE_EXPIRED', `Execution Lease ${binding.executionLeaseId} is unknown`, { executionLeaseId: binding.executionLeaseId })
  if (lease.holderAgentId !== actor.id || lease.ownershipEpoch !== binding.ownershipEpoch || lease.sessionEpoch !== binding.originalSessionEpoch) {
    reject('INVALID_COMMAND', 'the offline binding does not match its Execution Lease', { executionLeaseId: lease.leaseId })
  }
  // §11.3: a Command carrying an older Lease ID is rejected even under an unchanged Ownership Epoch.
  if ([...record.executionLeaseIds].at(-1) !== lease.leaseId) reject('WORK_LEASE_EXPIRED', `Execution Lease ${lease.leaseId} was superseded`, { executionLeaseId: lease.leaseId })
  const disconnected = parseInstant(binding.disconnectedAt)
  const buffered = parseInstant(binding.bufferedAt)
  const grace = parseInstant(binding.graceDeadline)
  const expiry = parseInstant(binding.historicalLeaseExpiresAt)
  if (expiry > parseInstant(lease.expiresAt)) reject('INVALID_COMMAND', 'the historical lease expiry is later than the Authority recorded', { recorded: lease.expiresAt })
  if (!(parseInstant(lease.issuedAt) <= disconnected && disconnected <= buffered && buffered <= ctx.nowMs)) {
    reject('INVALID_COMMAND', 'the offline times must follow lease issue <= disconnect <= buffer <= now')
  }
  if (grace > expiry + MAX_OFFLINE_GRACE_SECONDS * 1000) reject('INVALID_COMMAND', `the grace deadline exceeds the historical lease expiry by more than ${MAX_OFFLINE_GRACE_SECONDS} s`)
  // §11.5: only work already running under a lease continues offline, and only within its grace.
  if (disconnected > expiry || buffered > grace) {
    reject('WORK_LEASE_EXPIRED', 'the progress was buffered outside the historical lease and grace window', { bufferedAt: binding.bufferedAt, graceDeadline: binding.graceDeadline })
  }
  // §11.5: progress buffered after the lease was released, revoked or expired by the Authority is refused.
  if (lease.closedAt !== undefined && parseInstant(lease.closedAt) <= buffered) {
    reject('WORK_LEASE_EXPIRED', `Execution Lease ${lease.leaseId} was ${lease.state} before the progress was buffered`, { closedAt: lease.closedAt })
  }
  return lease
}

/**
 * The state the WorkItem machine row of a reconciled checkpoint is taken from: the WorkItem's state
 * while `lease` is still its Execution Lease; `active` when a replacement Session revoked `lease`
 * after the progress was buffered (§11.3 requeued it, same owner, no newer lease: the revocation is
 * the only way a WorkItem is `queued` with its latest Execution Lease revoked), since the work was
 * `active` under that lease when the Worker buffered it. Any other state is returned as is and
 * finds no checkpoint row.
 */
export function historicalState(record: WorkItemRecord, lease: Lease): WorkItemState {
  if (record.executionLease?.leaseId === lease.leaseId) return record.doc.state
  return record.doc.state === 'queued' && record.executionLease === undefined && lease.state === 'revoked' ? 'active' : record.doc.state
}

/**
 * The usage charge of a reconciled Command (§11.5, §12): no draft for an all-zero delta, else the
 * `ext.missionweaveprotocol.core.resource_usage_recorded` draft naming both sessions, to be placed
 * before the progress Event of the same transaction.
 * @throws ProtocolError `BUDGET_EXCEEDED` when the delta does not fit every level of the WorkItem's
 * budget ancestry (the Command is then refused whole).
 */
export function offlineCharge(ctx: HandlerContext, group: GroupState, record: WorkItemRecord, command: OfflineCommand, binding: OfflineBinding): AnyEventDraft[] {
  if (USAGE_DIMENSIONS.every((d) => binding.usageDelta[d] === 0)) return []
  // The Event's delta schema lists only the dimensions that moved.
  const usageDelta = Object.fromEntries(USAGE_DIMENSIONS.filter((d) => binding.usageDelta[d] > 0).map((d) => [d, binding.usageDelta[d]])) as UsageDelta
  const charge = requireUsageFits(group, record, usageDelta, ctx.state)
  return [
    workDraft('ext.missionweaveprotocol.core.resource_usage_recorded', {
      workItemId: binding.workItemId,
      executionLeaseId: binding.executionLeaseId,
      ownershipEpoch: binding.ownershipEpoch,
      usageDelta,
      ...charge,
      offlineReconciliation: {
        historicalSessionEpoch: binding.originalSessionEpoch,
        reconciliationSessionEpoch: command.sessionEpoch ?? binding.originalSessionEpoch,
        disconnectedAt: binding.disconnectedAt,
        bufferedAt: binding.bufferedAt,
        graceDeadline: binding.graceDeadline,
        historicalLeaseExpiresAt: binding.historicalLeaseExpiresAt,
        reconciledActionId: command.actionId,
      },
    }),
  ]
}

/** What {@link reconcileOffline} found: the WorkItem, its historical lease and the charge drafts. */
export interface OfflineReconciliationPlan {
  readonly record: WorkItemRecord
  readonly lease: Lease
  readonly charge: readonly AnyEventDraft[]
}

/**
 * Reconciles a buffered owner Command (§11.5): `binding` must cite the same WorkItem, Ownership
 * Epoch and Execution Lease as the payload `ref`; then {@link requireOfflineWindow} and
 * {@link offlineCharge}.
 * @throws ProtocolError as those do, or `INVALID_COMMAND` when binding and payload disagree.
 */
export function reconcileOffline(
  ctx: HandlerContext,
  group: GroupState,
  record: WorkItemRecord,
  command: OfflineCommand,
  binding: OfflineBinding,
  ref: { readonly workItemId: string; readonly ownershipEpoch: number; readonly executionLeaseId: string },
): OfflineReconciliationPlan {
  if (binding.workItemId !== ref.workItemId || binding.ownershipEpoch !== ref.ownershipEpoch || binding.executionLeaseId !== ref.executionLeaseId) {
    reject('INVALID_COMMAND', 'the offline binding and the payload cite different executions')
  }
  const lease = requireOfflineWindow(ctx, group, record, command, binding)
  return { record, lease, charge: offlineCharge(ctx, group, record, command, binding) }
}

/** The {@link OfflineCommand} view of a Command envelope. */
export function offlineCommandOf(command: Pick<Command, 'actor' | 'actionId' | 'groupId' | 'sessionEpoch'>): OfflineCommand {
  return { actor: command.actor as ActorRef, actionId: command.actionId, groupId: command.groupId, sessionEpoch: command.sessionEpoch }
}

/**
 * `work.checkpoint` buffered offline (§11.5): the historical checks of {@link reconcileOffline}
 * replace the current-lease check of an online checkpoint, the WorkItem machine row is taken from
 * the {@link historicalState}, and the checkpoint must have been taken by the time it was buffered.
 * Returns the charge drafts that precede `work.checkpointed`.
 */
export function reconcileCheckpoint(ctx: HandlerContext, command: CommandOf<'work.checkpoint'>, binding: OfflineBinding): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  const p = command.payload
  const record = requireWorkItem(group, p.workItemId)
  const plan = reconcileOffline(ctx, group, record, offlineCommandOf(command), binding, p)
  nextState(historicalState(record, plan.lease), command.kind)
  if (parseInstant(p.checkpoint.createdAt) > parseInstant(binding.bufferedAt))
    reject('INVALID_COMMAND', 'a buffered checkpoint cannot be dated after it was buffered', { createdAt: p.checkpoint.createdAt })
  return plan.charge
}

/**
 * `ext.missionweaveprotocol.core.work_execution_lease_renew` buffered offline (§11.5), after the
 * online checks of the current Execution Lease passed (an offline renewal never revives an expired
 * lease). The binding is checked like any other; its usage delta must be zero because the renewal
 * emits only `work.progressed` (COMMAND_CATALOG), and §11.5 charges offline usage with the
 * checkpoint or Message it reconciles.
 */
export function reconcileRenewal(
  ctx: HandlerContext,
  group: GroupState,
  record: WorkItemRecord,
  command: CommandOf<'ext.missionweaveprotocol.core.work_execution_lease_renew'>,
  binding: OfflineBinding,
): void {
  if (USAGE_DIMENSIONS.some((d) => binding.usageDelta[d] !== 0)) reject('INVALID_COMMAND', 'a buffered renewal carries no usage; charge it with the buffered checkpoint or Message')
  reconcileOffline(ctx, group, record, offlineCommandOf(command), binding, command.payload)
}

/**
 * `message.post` buffered offline (§11.5): the Message must go to the Conversation of the bound
 * WorkItem, the binding passes {@link requireOfflineWindow}, and its usage charge precedes
 * `message.posted`. Returns the charge drafts.
 * @throws ProtocolError `INVALID_COMMAND` for an unknown WorkItem or another Conversation.
 */
export function reconcileMessage(ctx: HandlerContext, group: GroupState, command: CommandOf<'message.post'>, binding: OfflineBinding): readonly AnyEventDraft[] {
  const record = group.workItems.get(binding.workItemId) ?? reject('INVALID_COMMAND', `the offline binding names unknown WorkItem ${binding.workItemId}`)
  // §11.5: buffered progress outside the bound WorkItem Conversation is refused.
  if (command.payload.conversationId !== record.doc.conversationId)
    reject('INVALID_COMMAND', 'a buffered Message must go to the Conversation of its bound WorkItem', { conversationId: record.doc.conversationId })
  const offline = offlineCommandOf(command)
  requireOfflineWindow(ctx, group, record, offline, binding)
  return offlineCharge(ctx, group, record, offline, binding)
}
