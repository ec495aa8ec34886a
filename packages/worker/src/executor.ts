/**
 * The executor API: what an executor is given and may call while it runs one WorkItem in a slot
 * (§10.3, §11.1, §11.3–§11.5, §13). An executor is a function of a frozen {@link WorkSnapshot} and a
 * {@link SlotContext}; it returns the Artifacts and Evidence of its result (§13.2) or throws, and
 * the slot turns everything it does into Commands under the current Execution Lease.
 *
 * The slot itself (`slot.ts`) implements this API; nothing here holds state.
 * @module
 */
import type { Artifact, Evidence, UsageDelta, WorkContract } from '@weft/spec'
import type { ResourceNeeds } from './admission.js'
import type { UsageTotals } from './offline.js'

/** The WorkItem as one run sees it: a frozen copy, never the projection's record. */
export interface WorkSnapshot {
  readonly workItemId: string
  readonly groupId: string
  readonly missionId: string
  readonly ownershipEpoch: number
  readonly contract: WorkContract
  readonly dependencyIds: readonly string[]
}

/** What an executor returns: the published Artifacts and the Evidence mapped to the acceptance criteria (§13.2). */
export interface ExecutorResult {
  /** Artifacts published with {@link SlotContext.publishArtifact} (manifests or their IDs); at least one. */
  readonly artifacts: readonly (Artifact | string)[]
  /** Evidence covering the acceptance criteria, e.g. from {@link SlotContext.evidence}; at least one. */
  readonly evidence: readonly Evidence[]
}

/** An executor: runs one WorkItem to a result, or throws (retried per the contract, §11.4). */
export type ExecutorFn = (item: WorkSnapshot, ctx: SlotContext) => Promise<ExecutorResult>

/** An executor with what it declares for admission control (§10.3). */
export interface ExecutorSpec {
  readonly run: ExecutorFn
  /** Resources one WorkItem needs; a contract budget below them is declined with `budget`. */
  readonly needs?: ResourceNeeds
  /** Expected run time, ms, for deadline feasibility and the §11.2 estimate. */
  readonly expectedDurationMs?: number
}

/** An executor function or its {@link ExecutorSpec}. */
export type Executor = ExecutorFn | ExecutorSpec

/** The parts of a §11.4 progress report an executor gives; the rest has defaults. */
export interface ProgressReport {
  readonly phase: string
  readonly completedMilestones?: readonly string[]
  readonly nextCheckpoint?: string
  readonly blockers?: readonly string[]
  /** Revised completion estimate, epoch ms; default now plus the expected duration. */
  readonly completionEstimateMs?: number
  readonly evidenceIds?: readonly string[]
}

/** The descriptive part of a checkpoint record (§11.3, §11.4); hash and time are filled in. */
export interface CheckpointLabel {
  readonly phase?: string
  readonly completedMilestones?: readonly string[]
  readonly nextStep?: string
}

/** What {@link SlotContext.publishArtifact} needs besides the bytes (§13.1). */
export interface ArtifactMeta {
  readonly mediaType: string
  /** Output schema; default: the schema of the contract deliverable with the same media type, else the first. */
  readonly schemaUri?: string
  /** Where the bytes can be fetched; default from the Worker's `artifactUri`. */
  readonly uri?: string
  readonly classification?: Artifact['classification']
  readonly sourceArtifactHashes?: readonly string[]
  readonly toolVersions?: Artifact['toolVersions']
  readonly modelVersions?: Artifact['modelVersions']
}

/** What {@link SlotContext.evidence} needs (§13.2: subject, criteria, method, result, Artifacts). */
export interface EvidenceInput {
  readonly type: Evidence['type']
  readonly criterionIds: readonly string[]
  readonly method: string
  readonly result: Evidence['result']
  readonly artifactHashes?: readonly string[]
  /** Default: this WorkItem. */
  readonly subject?: Evidence['subject']
  readonly details?: Record<string, unknown>
  readonly toolVersion?: string
  readonly modelVersion?: string
}

/** Options of {@link SlotContext.sideEffect}. */
export interface SideEffectOptions {
  /**
   * Whether the effect can be undone. Only reversible effects may run while the Group service is
   * unreachable, and never for a contract whose side-effect risk is `high_risk` or `destructive` (§11.5).
   */
  readonly reversible?: boolean
  /** Key the effect per attempt (`attemptKey`) so a retry is not deduplicated against a failed attempt (§11.4). */
  readonly perAttempt?: boolean
}

/** The context of one run in one slot. Every member belongs to this run only (§11.1). */
export interface SlotContext {
  /** The WorkItem, frozen. */
  readonly item: WorkSnapshot
  /**
   * Raised when the Scheduler asks for preemption (reach a safe point soon) or the lease is lost
   * (stop). `signal.reason` tells which: a {@link PreemptionRequested} or a `ProtocolError`.
   */
  readonly signal: AbortSignal
  /** The attempt number, 1-based, counted durably across crashes and retries (§11.4). */
  readonly attempt: number
  /** The state of the last checkpoint stored for this WorkItem, to resume from; `undefined` on a fresh start. */
  readonly resumeState: unknown
  /** Reports structured progress (§11.4), renewing the lease. */
  progress(report: ProgressReport): Promise<void>
  /**
   * Stores `state` (JSON) durably and emits `work.checkpoint` with the hash of its canonical form,
   * then continues under a new Execution Lease; at a pending preemption request it stops instead,
   * like {@link safePoint}.
   */
  checkpoint(state: unknown, label?: CheckpointLabel): Promise<void>
  /**
   * A safe, idempotent point (§11.3): returns at once unless preemption was requested, in which case
   * it checkpoints `state` (default: the last checkpointed state) and throws {@link Preempted}, which
   * the slot catches. Rejects with the lease error once the lease is lost.
   */
  safePoint(state?: unknown): Promise<void>
  /** Checkpoints `state` and stops on a blocker (§11.4): emits `work.block` and throws {@link Blocked}. */
  block(reason: string, options?: { readonly requiredResolution?: string; readonly state?: unknown }): Promise<never>
  /** Publishes Artifact bytes under the current lease (§13.1) and returns the signed manifest. */
  publishArtifact(bytes: Uint8Array | string, meta: ArtifactMeta): Promise<Artifact>
  /** A signed Evidence document about this WorkItem (or the given subject), produced by this Worker. */
  evidence(input: EvidenceInput): Evidence
  /**
   * Runs an external side effect at most once per idempotency key (§11.4, §16). A recorded result
   * is returned without calling `fn` again; otherwise `fn(key)` runs only under a live lease, and
   * its result (JSON) is recorded durably.
   * @throws ProtocolError `WORK_LEASE_EXPIRED` when the lease is lost, or, while offline, for an
   * effect that is not reversible (§11.5).
   */
  sideEffect<T>(operationId: string, fn: (key: string) => T | Promise<T>, options?: SideEffectOptions): Promise<T>
  /** The idempotency key of `operationId` for this WorkItem and Ownership Epoch (§16). */
  sideEffectKey(operationId: string): string
  /** Records resource usage (§12) under the current lease; while offline it is carried in the next buffered checkpoint. */
  reportUsage(delta: UsageDelta): Promise<void>
  /** The usage this run recorded so far, all six dimensions. */
  usage(): UsageTotals
  /** The capability token of the current lease from the Worker's `tokenFor` hook, if any (§12); never shared with other slots. */
  token(): Promise<unknown>
}

/** Thrown by {@link SlotContext.safePoint} after the preemption checkpoint; the slot catches it. */
export class Preempted extends Error {
  constructor() {
    super('preempted at a safe point (§11.3)')
    this.name = 'Preempted'
  }
}

/** Thrown by {@link SlotContext.block}; the slot catches it. */
export class Blocked extends Error {
  constructor(reason: string) {
    super(`blocked: ${reason}`)
    this.name = 'Blocked'
  }
}

/** The `signal.reason` of a preemption request. */
export class PreemptionRequested extends Error {
  constructor() {
    super('the Scheduler requested preemption (§11.3): reach a safe point')
    this.name = 'PreemptionRequested'
  }
}

// ---------------------------------------------------------------------------------------------
// How a Worker picks the executor of a WorkItem
// ---------------------------------------------------------------------------------------------

/** The key of the executor that runs any capability without a dedicated one. */
export const DEFAULT_EXECUTOR = 'default'

/** The function of an {@link Executor}, given either way. */
export function runOf(executor: Executor): ExecutorFn {
  return typeof executor === 'function' ? executor : executor.run
}

/** A Worker's executors by capability ID, with {@link DEFAULT_EXECUTOR} for the rest. */
export interface ExecutorTable {
  /** The executor of the first required capability that has one, else the default one. */
  forContract(contract: WorkContract): Executor | undefined
  /** Whether capability `id` would run: it has an executor, or there is a default one (§10.3 `capability`). */
  has(id: string): boolean
  /** What one WorkItem needs of the executor of capability `id` (§10.3 `budget`). */
  needsOf(id: string): ResourceNeeds | undefined
  /** The expected run time of one attempt of `contract`, ms: the executor's own figure, else `fallback(contract)`. */
  durationOf(contract: WorkContract): number
}

/**
 * The lookup over `executors`; `fallback` estimates the run time of a contract whose executor
 * declares none (§11.2: the estimate only needs the expected duration).
 */
export function executorTable(executors: Readonly<Record<string, Executor>>, fallback: (contract: WorkContract) => number): ExecutorTable {
  const forContract = (contract: WorkContract): Executor | undefined => {
    for (const need of contract.requiredCapabilities) {
      const e = executors[need.id]
      if (e !== undefined) return e
    }
    return executors[DEFAULT_EXECUTOR]
  }
  return {
    forContract,
    has: (id) => executors[id] !== undefined || executors[DEFAULT_EXECUTOR] !== undefined,
    needsOf: (id) => {
      const e = executors[id] ?? executors[DEFAULT_EXECUTOR]
      return typeof e === 'object' ? e.needs : undefined
    },
    durationOf: (contract) => {
      const e = forContract(contract)
      return typeof e === 'object' && e.expectedDurationMs !== undefined ? e.expectedDurationMs : fallback(contract)
    },
  }
}
