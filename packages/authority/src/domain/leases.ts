/**
 * WorkItem leases (§11.3–§11.5): the ownership lease that follows an accepted offer, the Execution
 * Lease that `work.start` issues, and the fencing checks every owner Command passes. The blocked
 * lease of §11.4 is the ownership lease renewed to the blocked bound, so a record holds at most one
 * ownership lease and one Execution Lease.
 * @module
 */
import type { Lease, WorkOwner } from '@weft/spec'
import { reject } from '../commit/handler.js'
import type { ActorRef, GroupState, OrganizationState, WorkItemRecord } from '../model.js'
import { cardActive } from '../ingress/standing.js'
import { parseInstant } from '@weft/codec/time'
import type { ClosedLease, LeaseClosure } from './ledgers.js'

export type { LeaseClosure } from './ledgers.js'

/** Whether `lease` is active and its expiry has not been reached at `nowMs`. */
export function leaseLive(lease: Lease | undefined, nowMs: number): lease is Lease {
  return lease !== undefined && lease.state === 'active' && nowMs < parseInstant(lease.expiresAt)
}

/**
 * When a queued owner's right to start ends: the earlier of the ownership lease's start-by and its
 * expiry (§11.3: an ownership grant carries a start-by deadline).
 */
export function ownershipDeadlineMs(lease: Lease): number {
  const expires = parseInstant(lease.expiresAt)
  return lease.startBy === undefined ? expires : Math.min(expires, parseInstant(lease.startBy))
}

/**
 * Whether the WorkItem has a live owner at `nowMs` (the `noLiveOwner` / `ownershipLive` guards of
 * §10.2): a queued owner within its start-by deadline, an active owner under an unexpired
 * Execution Lease, a blocked owner within its bounded blocked lease. Other states have no owner
 * that could be fenced. An owner whose Agent Card is no longer active is not live whatever its
 * leases say: its Commands are refused, so it could never use them (§6.1, §11.5).
 */
export function ownerLive(record: WorkItemRecord, nowMs: number, agents: OrganizationState['agents']): boolean {
  if (record.doc.owner === undefined || !cardActive(agents.get(record.doc.owner.agentId))) return false
  switch (record.doc.state) {
    case 'active':
      return leaseLive(record.executionLease, nowMs)
    case 'queued':
      return leaseLive(record.ownershipLease, nowMs) && nowMs < ownershipDeadlineMs(record.ownershipLease)
    case 'blocked':
      return leaseLive(record.ownershipLease, nowMs)
    default:
      return false
  }
}

/** `lease` closed at `at` (§11.3: release, expiry and revocation say when and why). */
export function closeLease(lease: Lease, state: LeaseClosure, at: string, reason: string): ClosedLease {
  return { ...lease, state, closedAt: at, closureReason: reason }
}

/**
 * Takes an optional member off a WorkItem record. Records live as long as their Group and every
 * handler reads them; a `delete` would switch a record to the engine's slow dictionary form for
 * good, so the member is set to `undefined`, which every reader (`=== undefined`, `?.`, `??`) takes
 * for absent.
 */
export function clearMember(record: WorkItemRecord, member: 'ownershipLease' | 'executionLease' | 'offerExpiresAt'): void {
  ;(record as { [M in typeof member]?: unknown })[member] = undefined
}

/**
 * Takes the lease in `slot` off `record`, closing it at `at` for `reason` (§11.3; §12: cancellation
 * and failure revoke), and files it with {@link closedLeasesOf}. A lease a Command closed already
 * keeps its own end.
 */
export function retireLease(record: WorkItemRecord, slot: 'ownershipLease' | 'executionLease', state: LeaseClosure, at: string, reason: string): void {
  const lease = record[slot]
  if (lease === undefined) return
  clearMember(record, slot)
  const closed = lease.state === 'active' ? closeLease(lease, state, at, reason) : closeLease(lease, lease.state, lease.closedAt ?? at, lease.closureReason ?? reason)
  // The record's current lease members hold only live leases; the closed ones, with when and why, stay inspectable here.
  const history = record.closedLeases
  if (history === undefined) record.closedLeases = [closed]
  else history.push(closed)
}

/** The leases of `record` closed so far, oldest first. */
export function closedLeasesOf(record: WorkItemRecord): readonly ClosedLease[] {
  return record.closedLeases ?? []
}

/**
 * `lease` renewed at `at` until `expiresAt`. An ownership lease's start-by moves with it: after a
 * checkpoint or a block the owner must resume within the new bound (§11.3, §11.4).
 */
export function renewLease(lease: Lease, at: string, expiresAt: string): Lease {
  const renewed: { -readonly [K in keyof Lease]: Lease[K] } = { ...lease }
  renewed.expiresAt = expiresAt
  renewed.renewalCount = lease.renewalCount + 1
  renewed.lastRenewedAt = at
  if (lease.leaseType === 'ownership') renewed.startBy = expiresAt
  return renewed
}

/** What a new WorkItem lease is bound to (§11.3). */
export interface WorkLeaseTerms {
  readonly leaseId: string
  readonly holderAgentId: string
  readonly sessionEpoch: number
  readonly ownershipEpoch: number
  /** Issue and start instant. */
  readonly at: string
  readonly expiresAt: string
  /** An ownership lease's start-by deadline; its expiry when absent. */
  readonly startBy?: string
}

/**
 * A new ownership or Execution Lease of `record`. An ownership lease's start-by is its expiry; an
 * Execution Lease has no start-by (lease schema).
 */
export function workLease(type: 'ownership' | 'execution', record: WorkItemRecord, terms: WorkLeaseTerms): Lease {
  const { missionId, groupId, workItemId } = record.doc
  const { leaseId, holderAgentId, sessionEpoch, ownershipEpoch, at, expiresAt } = terms
  // Two literals rather than a conditional spread: a lease is made on every acceptance and start.
  if (type === 'ownership') {
    const startBy = terms.startBy ?? expiresAt
    return { leaseId, leaseType: type, missionId, groupId, workItemId, holderAgentId, sessionEpoch, ownershipEpoch, startBy, issuedAt: at, startsAt: at, expiresAt, state: 'active', renewalCount: 0 }
  }
  return { leaseId, leaseType: type, missionId, groupId, workItemId, holderAgentId, sessionEpoch, ownershipEpoch, issuedAt: at, startsAt: at, expiresAt, state: 'active', renewalCount: 0 }
}

/**
 * The owner of `record` under `ownershipEpoch`, when `actor` is it.
 * @throws ProtocolError `WORK_STALE_OWNERSHIP` when `ownershipEpoch` is not the current one (§4.5:
 * a fenced epoch never completes the item), `AUTH_FORBIDDEN` when the epoch is current but `actor`
 * is not its owner.
 */
export function requireOwner(record: WorkItemRecord, actor: ActorRef, ownershipEpoch: number): WorkOwner {
  const owner = record.doc.owner
  if (owner === undefined || owner.ownershipEpoch !== ownershipEpoch) {
    reject('WORK_STALE_OWNERSHIP', `Ownership Epoch ${ownershipEpoch} of ${record.doc.workItemId} is fenced`, {
      ownershipEpoch,
      currentOwnershipEpoch: owner?.ownershipEpoch ?? null,
    })
  }
  if (actor.type !== 'agent' || actor.id !== owner.agentId) reject('AUTH_FORBIDDEN', `only the owner of ${record.doc.workItemId} may do this`)
  return owner
}

/**
 * The current Execution Lease of `record`, after checking everything §11.3 asks of an owner
 * Command that executes (renewal, checkpoint, block, Artifact publication, submission, usage,
 * Worker-reported failure): the actor owns the item under the current `ownershipEpoch`, the item
 * is `active`, `executionLeaseId` names the current Execution Lease, and that lease is unexpired.
 * @throws ProtocolError `WORK_STALE_OWNERSHIP`, `AUTH_FORBIDDEN`, `INVALID_STATE_TRANSITION` or
 * `WORK_LEASE_EXPIRED` (also for an older or unknown Lease ID of the same epoch).
 * @example
 * ```ts
 * const lease = requireCurrentExecution(group, record, command.actor, payload.ownershipEpoch, payload.executionLeaseId, ctx.nowMs)
 * ```
 */
export function requireCurrentExecution(group: GroupState, record: WorkItemRecord, actor: ActorRef, ownershipEpoch: number, executionLeaseId: string, nowMs: number): Lease {
  if (record.doc.groupId !== group.groupId) reject('INVALID_COMMAND', `WorkItem ${record.doc.workItemId} is not in Group ${group.groupId}`)
  requireOwner(record, actor, ownershipEpoch)
  if (record.doc.state !== 'active') reject('INVALID_STATE_TRANSITION', `WorkItem ${record.doc.workItemId} is ${record.doc.state}, not active`, { state: record.doc.state })
  const lease = record.executionLease
  if (lease === undefined || lease.leaseId !== executionLeaseId) {
    // §11.3: a delayed Command with an older Lease ID is rejected even when its epoch is unchanged.
    const known = record.executionLeaseIds.has(executionLeaseId)
    reject('WORK_LEASE_EXPIRED', known ? `Execution Lease ${executionLeaseId} was superseded` : `Execution Lease ${executionLeaseId} is unknown`, {
      executionLeaseId,
    })
  }
  if (lease.state !== 'active' || nowMs >= parseInstant(lease.expiresAt)) {
    reject('WORK_LEASE_EXPIRED', `Execution Lease ${executionLeaseId} expired at ${lease.expiresAt}`, { executionLeaseId })
  }
  return lease
}

/** What every {@link LeaseView} tells, live or closed: the lease's binding and bounds (§11.3). */
export interface LeaseViewBase {
  readonly leaseId: string
  /** `ownership`: the queued or blocked ownership grant after an accepted offer; `execution`: the lease `work.start` issues. */
  readonly kind: 'ownership' | 'execution'
  readonly missionId: string
  readonly groupId: string
  readonly workItemId: string
  /** The Agent holding it. */
  readonly holderAgentId: string
  /** The holder's Session Epoch it was issued under. */
  readonly sessionEpoch: number
  readonly ownershipEpoch: number
  readonly issuedAt: string
  /** Its expiry, as last renewed. */
  readonly expiresAt: string
  /** An ownership lease's start-by deadline (§11.3); absent on an Execution Lease. */
  readonly startBy?: string
  readonly renewalCount: number
  readonly lastRenewedAt?: string
}

/** A lease no Event has closed: the WorkItem's current lease of its kind. */
export interface ActiveLeaseView extends LeaseViewBase {
  readonly state: 'active'
  /**
   * Whether its expiry is still ahead at the Authority's clock. The Authority runs no timers: a
   * lease whose expiry passed stays `active` in the log, and not `live`, until the next Command
   * that fences its holder closes it as `expired`.
   */
  readonly live: boolean
}

/** A lease an Event closed, and how it ended (§11.3). */
export interface ClosedLeaseView extends LeaseViewBase {
  /** `released` (checkpoint, block, submission, verification), `expired` (its holder fenced after it lapsed) or `revoked` (replacement Session, cancellation, failure, promotion to a child Mission). */
  readonly state: LeaseClosure
  /** `occurredAt` of the Event that closed it. */
  readonly closedAt: string
  /** Why, as the closing Event's reducer recorded it (`checkpoint`, `cancelled`, `promoted to a child Mission`, ...). */
  readonly closureReason: string
}

/** One WorkItem lease as {@link findLease} shows it: narrow on `state`. */
export type LeaseView = ActiveLeaseView | ClosedLeaseView

/** The members both views share, copied from `lease`, a lease of `record` (optional members only when present). */
function viewBase(record: WorkItemRecord, lease: Lease): LeaseViewBase {
  const { leaseId, missionId, groupId, holderAgentId, sessionEpoch, issuedAt, expiresAt, startBy, renewalCount, lastRenewedAt } = lease
  return {
    leaseId,
    // §11.4: a blocked lease is the ownership lease renewed, so only an Execution Lease is `execution`.
    kind: lease.leaseType === 'execution' ? 'execution' : 'ownership',
    missionId,
    groupId,
    // The lease schema requires both on a WorkItem lease; the record stands in for the type's sake.
    workItemId: lease.workItemId ?? record.doc.workItemId,
    holderAgentId,
    sessionEpoch,
    ownershipEpoch: lease.ownershipEpoch ?? record.lastOwnershipEpoch,
    issuedAt,
    expiresAt,
    ...(startBy === undefined ? {} : { startBy }),
    renewalCount,
    ...(lastRenewedAt === undefined ? {} : { lastRenewedAt }),
  }
}

/**
 * The ownership or Execution Lease `leaseId` of a WorkItem of `group`, current or closed, as a
 * {@link LeaseView} at `nowMs`; `undefined` when no WorkItem of the Group has held it. Reads the
 * records' current leases and the closed-lease history the reducers keep ({@link closedLeasesOf}),
 * scanning the Group's WorkItems: an operator's query, not a Command path.
 */
export function findLease(group: GroupState, leaseId: string, nowMs: number): LeaseView | undefined {
  for (const record of group.workItems.values()) {
    // A record's slots hold only active leases; the reducers move each to the history as they close it.
    const current = record.ownershipLease?.leaseId === leaseId ? record.ownershipLease : record.executionLease?.leaseId === leaseId ? record.executionLease : undefined
    if (current !== undefined) return { ...viewBase(record, current), state: 'active', live: leaseLive(current, nowMs) }
    const closed = closedLeasesOf(record).find((l) => l.leaseId === leaseId)
    if (closed !== undefined) return { ...viewBase(record, closed), state: closed.state, closedAt: closed.closedAt, closureReason: closed.closureReason }
  }
  return undefined
}
