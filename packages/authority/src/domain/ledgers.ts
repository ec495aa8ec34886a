/**
 * The bookkeeping the reducers keep on state records beside their normative documents: closed
 * leases (§11.3), the retry ledger (§11.4), the pending submission (§13.2) and the snapshots a
 * Group recorded (§7.4). `../model.ts` declares the records with these fields, and the domain
 * modules that write them (`leases.ts`, `retry.ts`, `evidence.ts`, `policy.ts`) read and fold them.
 *
 * The shapes live here, importing nothing of the package, so that the state model does not import
 * the domain modules that import it back.
 * @module
 */
import type { EventPayload, Evidence, Lease } from '@weft/spec'

/** How a lease ends (§11.3): released by its holder, expired by time, or revoked. */
export type LeaseClosure = 'expired' | 'revoked' | 'released'

/** A closed lease: its end, when and why are always recorded. */
export type ClosedLease = Lease & { readonly state: LeaseClosure; readonly closedAt: string; readonly closureReason: string }

/** Why no retry of a failed WorkItem may follow under the contract in force when it failed. */
export type RetryExhaustion = 'permanent' | 'attempts' | 'deadline' | 'cost'

/** One failure as the ledger keeps it. */
export interface FailureFacts {
  /** `occurredAt` of the `work.failed` Event. */
  readonly failedAt: string
  /** The failure code its Evidence names; absent for an unclassified failure. */
  readonly code?: string
  /** Attempts the failed round used. */
  readonly attempts: number
  /** A classified failure the policy does not allow to be retried. */
  readonly permanent: boolean
}

/** What the reducers book of a WorkItem's failures (`WorkItemRecord.retryLedger`), a fold of the log. */
export interface RetryLedger {
  attemptsUsed: number
  lastFailure?: FailureFacts
  exhausted?: RetryExhaustion
}

/** A WorkItem's pending submission (§13.2): the epoch it was made under and its Evidence. */
export interface SubmissionFacts {
  readonly ownershipEpoch: number
  readonly evidence: readonly Evidence[]
}

/** A Group Snapshot as `group.snapshot.created` references it (§7.4). */
export type SnapshotReference = EventPayload<'group.snapshot.created'>
