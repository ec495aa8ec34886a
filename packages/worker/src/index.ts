/**
 * @weft/worker: the reference MissionWeaveProtocol 0.1 Worker. Per-Group inboxes and queues folded
 * from accepted Events and rebuildable by replay (§11.1, §16), admission control with structured
 * declines and schedule disclosure (§10.3, §11.2), a weighted-fair Scheduler across Groups
 * (§11.1), isolated execution slots under fenced Execution Leases with cooperative preemption
 * (§11.3), retries under the contract's policy (§11.4) and bounded offline execution (§11.5).
 *
 * The Worker meets a Group Authority only through a `Transport` (Commands) and an `EventFeed`
 * (Events) of `@weft/client`.
 *
 * @example
 * ```ts
 * import { createWorker } from '@weft/worker'
 *
 * const worker = createWorker({ actor, signingKey, sessionEpoch: 1, transport, feed, slots: 2, executor })
 * worker.join([groupId])
 * worker.start()
 * ```
 * @packageDocumentation
 */
export { createWorker } from './worker.js'
export { DEFAULT_EXECUTOR } from './executor.js'
export type { Worker, WorkerOptions, LeaseOptions, WorkerLogEntry, AdmissionRecord, RunRecord, WorkerSnapshot } from './worker.js'
export { Preempted, Blocked, PreemptionRequested } from './executor.js'
export type {
  Executor,
  ExecutorFn,
  ExecutorSpec,
  ExecutorResult,
  SlotContext,
  WorkSnapshot,
  ProgressReport,
  CheckpointLabel,
  ArtifactMeta,
  EvidenceInput,
  SideEffectOptions,
} from './executor.js'
export type { ArtifactSink, TokenScope } from './slot-host.js'
export { ExecutorFailure, UNCLASSIFIED_FAILURE, failureFacts, retryDecision, backoffMs, durationMs } from './retry.js'
export type { FailureFacts, RetryDecision, RetryFacts, NoRetryReason } from './retry.js'
export { decideAdmission, admissionLimits, estimateSchedule, expectedDuration, versionSatisfies, DEFAULT_ADMISSION_LIMITS } from './admission.js'
export type { AdmissionLimits, AdmissionDecision, Acceptance, Decline, OfferFacts, CapacityFacts, Abilities, ResourceNeeds } from './admission.js'
export { createMemoryWorkerStore } from './memory-store.js'
export type { WorkerStore, BufferedCommand, TrackedWork, GroupView, WorkerView, SchedulerItem, SchedulerOptions, Scheduler } from './seams.js'
export { createScheduler, urgencyLevel, schedulerRank, MAX_URGENCY, DEFAULT_AGING_MS } from './scheduler.js'

// Library-author surface: the parts createWorker is made of, for custom runtimes and stores.
export { createProjection } from './projection.js'
export type { Projection } from './projection.js'
export { createInbox, DEFAULT_MAX_HELD_PER_GROUP } from './inbox.js'
export type { Inbox, InboxOptions, InboxOutcome, InboxTally } from './inbox.js'
export { workerReducers, emptyView, openGroup } from './reducers.js'
export { applyWorkerEvent } from './gen/index.js'
export type { WorkerEventReducers } from './gen/index.js'
export type { WorkerEventOf, WorkerReducerFor } from './reducer-types.js'
export { checkContinuation } from './memory-store.js'
export { describeWorkerStoreContract, contractEvent } from './store-contract.js'
export type { ContractAssertion, ContractHarness } from './store-contract.js'
export { createSlot } from './slot.js'
export type { Slot, SlotOutcome, CheckpointEnvelope } from './slot.js'
export type { SlotHost, SlotWork, SlotTiming } from './slot-host.js'
export type { SlotLease } from './slot-lifecycle.js'
export {
  createOfflineBuffer,
  isTransportUnavailable,
  offlineBinding,
  offlineExtensions,
  bindingOf,
  zeroUsage,
  addUsage,
  isZeroUsage,
  BOUNDED_OFFLINE_EXECUTION,
  OFFLINE_BINDING_VERSION,
  MAX_GRACE_SECONDS,
} from './offline.js'
export type { OfflineBuffer, OfflineBufferOptions, OfflineBinding, HistoricalLease, ReconcileReport, Resubmit, BufferableKind, UsageTotals } from './offline.js'
export { IndexedHeap } from './heap.js'
export type { HeapNode } from './heap.js'

// §11.2 schedule re-disclosure for queued work.
export { createDisclosureTracker, disclosureOptions, materialChange, disclosureContent, disclosedEstimate, DEFAULT_DISCLOSURE_OPTIONS, SCHEDULE_ESTIMATE_DATA_SCHEMA } from './disclosure.js'
export type { DisclosureOptions, DisclosureReason, DisclosureTracker, DisclosurePlan, ScheduleEstimateData } from './disclosure.js'
