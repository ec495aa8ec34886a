/**
 * @weft/authority: a MissionWeaveProtocol 0.1 Group Authority. Signed Commands go in through
 * {@link createAuthority}'s ingress; accepted transactions come out as signed, per-Group ordered
 * Events, and the state is always the fold of that log.
 *
 * @example
 * ```ts
 * import { createAuthority } from '@weft/authority'
 *
 * const authority = createAuthority({ registry, keys: { authority: { type: 'service', id }, signingKey } })
 * const receipt = await authority.submit(signedCommandText) // or createClient({ transport: authority.connect() })
 * authority.events(receipt.groupId!) // the Group's log
 * ```
 * @packageDocumentation
 */
export { createAuthority } from './authority.js'
export type { Authority, AuthorityOptions, AuthorityKeys, AuditEntry, AcceptedTransaction } from './commit/pipeline.js'
export { DEFAULT_MAX_AUDIT_ENTRIES } from './commit/pipeline.js'
export { DEFAULT_POLICY } from './policy.js'
// What of a refused Command an audit entry keeps and an error's `details` echo (§6.4, §19).
export { MAX_ECHO_CHARS, MAX_ECHO_ITEMS } from './ingress/bounded.js'
export { createMemoryStore } from './log/store.js'
export type { AuthorityStore, StoredReceipt, SnapshotRecord, MemoryStoreOptions } from './log/store.js'
// The asynchronous face of the store seam, for hosts over a store that must wait (PostgreSQL).
export type { AsyncAuthorityStore, AnyAuthorityStore } from './log/store.js'
export type { Clock, RandomSource } from '@weft/codec/time'
export type { ActorRef, AuthorityState, GroupState, OrganizationState, AgentRecord, WorkItemRecord, ArtifactRecord, MessageRecord, GrantRecord, ProposalRecord } from './model.js'
export type { AuthorityPolicy } from './policy.js'
// §11.3: `authority.lease(groupId, leaseId)`, a WorkItem lease by its ID, live or closed.
export type { LeaseView, ActiveLeaseView, ClosedLeaseView, LeaseViewBase, LeaseClosure } from './domain/leases.js'
// §12: `authority.budgetLedger(groupId, workItemId?)`, and the same over any fold of the log.
export { budgetLedgerOf } from './domain/budget-ledger.js'
export type { BudgetLedger, BudgetLedgerEntry, BudgetLimitSource, BudgetRef } from './domain/budget-ledger.js'

// Authorization Service (§12): least-privilege capability tokens bound to the Execution Lease.
export { createAuthorizationService, containsTokenMaterial } from './tokens.js'
export type {
  AuthorizationService,
  AuthorizationServiceOptions,
  AuthorizationSource,
  TokenBinding,
  TokenRequest,
  TokenNarrowing,
  TokenUse,
  CapabilityClaims,
  IssuedToken,
  TokenMaterial,
} from './tokens.js'

// Delivery (§8, §16, §17.2–§17.3): subscriptions, paged replay, ACK Cursors, backpressure.
export { createDelivery } from './delivery/delivery.js'
export { createMemoryCursorStore } from './delivery/cursors.js'
export { deliveryFeed } from './delivery/feed.js'
export type { Delivery, DeliveryOptions, DeliverySource, DeliveryGroup, Subscription, SubscriptionHandlers, SubscribeOptions, ChannelStatus, ReplayPage } from './delivery/delivery.js'
export type { CursorStore } from './delivery/cursors.js'

// Archival (§7.4): signed Group Snapshots.
export { buildGroupSnapshot, signGroupSnapshot, verifyGroupSnapshot, snapshotArtifactHash } from './log/snapshots.js'
export type { UnsignedGroupSnapshot, SnapshotOptions, SnapshotVerifyOptions, SnapshotVerification } from './log/snapshots.js'

// Compaction and restore (§7.4, §16): the online log behind a signed snapshot, CURSOR_TOO_OLD, restore.
export { verifySnapshotImage, snapshotImage } from './log/snapshots.js'
export type { RestorePoint, ImageVerification, SnapshotRefusal } from './log/snapshots.js'
export { cursorTooOld } from './log/compaction.js'
export type { EventPage, OnlineLog } from './log/compaction.js'
export { restoreState } from './log/restore.js'
// §12: the limit a Resource Budget sets on one usage dimension, money in microunits (what the ledger compares usage with).
export { limitOf as budgetLimit } from './domain/work-budget.js'
export type { RestoreOptions } from './log/restore.js'

// State checkpoints (§7.4, §16): a signed image of the state a restart resumes from.
export type { StateCheckpoint, CheckpointManifest, CheckpointSnapshotRef } from './log/store.js'
export type { AuthorityWarning, AuthorityWarningKind } from './log/checkpoint.js'

// Proving a stored log on open (§6.4, §15.2, §16): signatures, per-Group chains, acknowledged heads.
export { createLogProver, proveLog, checkpointAnchor, chainLink, LogProofError, LOG_CHAIN_FORMAT } from './log/log-proof.js'
export type { LogRow, LogHead, LogAnchor, LogProver, LogProofOptions, LogProofSummary, LogProofPlace } from './log/log-proof.js'

// Redaction (§9): redacted Messages served as auditable tombstones; the log keeps its IDs and sequences.
export { REDACTION_EXTENSION } from './delivery/redaction.js'
export type { RedactionTombstone } from './delivery/redaction.js'

// Retry limits of the Work Contract (§11.4), derived from the log.
export { retryStatusOf } from './domain/retry.js'
export type { RetryStatus, RetryExhaustion } from './domain/retry.js'

// Artifacts (§13): content-addressed bytes outside the log, provenance, Context Packages.
export { createMemoryBlobStore, resolveArtifact, checkedCopy } from './log/blobs.js'
export type { BlobStore, MemoryBlobStoreOptions } from './log/blobs.js'
export { createProvenanceIndex } from './delivery/provenance.js'
export type { ProvenanceIndex, ProducedBy } from './delivery/provenance.js'
export { buildContextPackage, signContextPackage, checkContextPackageScope } from './delivery/context-packages.js'
export type { UnsignedContextPackage, BuildContextPackageInput, ContextScope } from './delivery/context-packages.js'

// Library-author surface: the pipeline over custom tables, the handler contract, transactions.
export { createPipeline, fold } from './commit/pipeline.js'
export type { PipelineOptions } from './commit/pipeline.js'
export type { IngressStage, Diagnostic } from './ingress/refusal.js'
export { handlers, reducers } from './domain/compose.js'
export { emptyState, actorKey, aggregateKey } from './model.js'
export type { CommandOf, AnyCommand, EventOf, EventDraft, AnyEventDraft, HandlerFor, ReducerFor, HandlerContext } from './commit/handler.js'
export { draft, reject, requireGroup } from './commit/handler.js'
export { materialize, applyEvents, aggregateIdOf } from './commit/transact.js'
export { CHECKPOINT_FORMAT, historyPosition, signCheckpointManifest } from './log/checkpoint.js'
export type { ReducerTable, TransactionCause, MaterializeOptions } from './commit/transact.js'
export { dispatchCommand, applyEvent } from './gen/index.js'
export type { AnyEvent, CommandHandlers, EventReducers } from './gen/index.js'
export type { CommandRule } from './ingress/checks.js'
export { systemClock, systemRandom, timestampOf, uuidSource } from '@weft/codec/time'
