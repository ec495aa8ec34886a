/**
 * Organization policy (§8, §9.1, §12, §14, §20): what the handlers and the ingress consult, and
 * the defaults `createAuthority` fills in, in one place.
 * @module
 */
import type { GroupState } from './model.js'

/** Organization policy the handlers consult (§8, §9.1, §12, §14, §20). All fields have defaults. */
export interface AuthorityPolicy {
  /** How far `issuedAt` may be from the Authority clock, either way, in seconds (§6.4 freshness). Default 300. */
  readonly freshnessSeconds: number
  /** Largest accepted Command, in UTF-8 bytes. Default 1 MiB. */
  readonly maxCommandBytes: number
  /** Default maximum depth of the parent/child Mission graph (§14). Default 4. */
  readonly maxMissionDepth: number
  /** Organization cooperation limit on delegated descendant depth (§9.1). Default 8. */
  readonly maxDelegationDepth: number
  /** Service Principals the Organization trusts as its control plane (§7.1, §7.2, §15.1). */
  readonly controlPlane: readonly string[]
  /**
   * §20 `message_rate`: Messages (posts, corrections, retractions) one actor may have accepted per
   * Group in any sliding minute of the Authority clock. Absent: no limit. At most 1024.
   */
  readonly maxMessagesPerMinute?: number
  /** §20 `proposal_rate`: `work.propose` Commands one actor may have accepted per Group per sliding minute. Absent: no limit. At most 1024. */
  readonly maxProposalsPerMinute?: number
  /**
   * §20 `queued_work_items`: WorkItems of one Group waiting to run (`open`, `offered`, `queued`);
   * `work.authorize` beyond it is refused. Absent: no limit.
   */
  readonly maxQueuedWorkItems?: number
  /**
   * §20 `active_work_items`: WorkItems one Worker owns unfinished (`queued`, `active`, `blocked`) in
   * one Group; `work.accept_offer` beyond it is refused. Absent: no limit.
   */
  readonly maxActiveWorkItems?: number
  /** Whether an Execution Approval is required before `work.start` for the item (§12); default: the contract says. */
  readonly requiresExecutionApproval?: (state: GroupState, workItemId: string) => boolean
}

/** The policy fields `createAuthority` fills in when absent. */
export const DEFAULT_POLICY: AuthorityPolicy = Object.freeze({
  freshnessSeconds: 300,
  maxCommandBytes: 1024 * 1024,
  maxMissionDepth: 4,
  maxDelegationDepth: 8,
  controlPlane: Object.freeze([]) as readonly string[],
})
