/**
 * The bounded offline execution binding (§11.5): a critical Command extension a Worker attaches to
 * progress it buffered while it had lost the Group service. The Worker writes it and the Authority
 * judges it, so both read its shape from here.
 * @module
 */
import type { Static } from 'typebox'
import type { UsageTotals } from './parts.js'

/** The profile URI of the §11.5 binding, the key of its entry in a Command's `extensions`. */
export const BOUNDED_OFFLINE_EXECUTION = 'urn:missionweaveprotocol:extension:bounded-offline-execution'

/**
 * The `data` of a bounded offline execution binding (§11.5): the facts of the historical execution,
 * kept unchanged when the buffered Command is rebased and re-signed under the current session.
 * Every member is required except {@link originalActionId}; nothing else is allowed.
 */
export interface OfflineBinding {
  /** The Agent that executed offline; must be the Command's actor. */
  readonly agentId: string
  /** The Group; must be the Command's Group. */
  readonly groupId: string
  /** The WorkItem executed; must be the one the Command names. */
  readonly workItemId: string
  /** The Session Epoch the historical Execution Lease was issued under. */
  readonly originalSessionEpoch: number
  readonly ownershipEpoch: number
  /** The historical Execution Lease ID. */
  readonly executionLeaseId: string
  /** When the Worker lost the Group service. */
  readonly disconnectedAt: string
  /** When the Worker signed and buffered the Command. */
  readonly bufferedAt: string
  /** The end of the lease-grace period the Worker worked under. */
  readonly graceDeadline: string
  /** The expiry of the historical Execution Lease as the Worker knew it. */
  readonly historicalLeaseExpiresAt: string
  /** Usage consumed offline since the last reported delta, all six dimensions (zeros allowed, §12). */
  readonly usageDelta: Readonly<Static<typeof UsageTotals>>
  /** The Action ID the Command had when first buffered, for the Worker's own audit; the rebased Command has a new one. */
  readonly originalActionId?: string
}
