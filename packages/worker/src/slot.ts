/**
 * One isolated execution slot (§11.1, §11.3–§11.5): it starts a WorkItem under a fresh Execution
 * Lease, hands the executor a context of its own, renews the lease while the executor runs, turns
 * what the executor does into Commands of the current lease, and reports how the run ended.
 *
 * **Isolation.** Every run gets a new {@link SlotContext}: a frozen copy of the WorkItem, its own
 * abort signal, checkpoints, usage counters, capability token and side-effect keys. Nothing in one
 * context refers to another slot's state; two contexts share only the Worker's signing identity and
 * its local store, which is keyed by WorkItem.
 *
 * **Checkpoints release the lease.** In MissionWeaveProtocol `work.checkpoint` ends the Execution
 * Lease and returns the WorkItem to `queued` (§10.2). So {@link SlotContext.checkpoint} records the
 * checkpoint and immediately starts again under a new Execution Lease (`work.start`), keeping the
 * slot: the executor continues as if nothing happened, under the new lease. At a safe point with a
 * preemption request pending, the slot checkpoints and stops instead (§11.3 cooperative preemption).
 *
 * **Progress** (§11.4) travels as an Execution Lease renewal with its structured `progress`
 * (`ext.missionweaveprotocol.core.work_execution_lease_renew`), the only owner Command that carries
 * progress without releasing the lease.
 *
 * **Offline** (§11.5): while the Group service is unreachable the executor may go on within the
 * lease grace; checkpoints and progress are signed and buffered with the bounded offline execution
 * binding, usage is carried in the binding, reversible side effects may run, and everything that
 * needs a currently valid lease (Artifacts, submission, failure, other side effects) waits for
 * reconciliation.
 * @module
 */
import { canonicalize, ProtocolError, sha256Tagged, sign, UsageError, utf8Encode, type SigningKey } from '@weft/codec'
import { attemptKey, sideEffectKey, type BuiltCommand, type CommandOptions, type Receipt } from '@weft/client'
import type {
  Artifact,
  CapabilityRef,
  Command,
  CommandKind,
  CommandPayload,
  Evidence,
  EventPayload,
  UsageDelta,
  WorkContract,
  WorkProgress,
} from '@weft/spec'
import type { ResourceNeeds } from './admission.js'
import type { WorkerStore } from './seams.js'
import { addUsage, isTransportUnavailable, isZeroUsage, offlineBinding, offlineExtensions, zeroUsage, type BufferableKind, type OfflineBuffer, type UsageTotals } from './offline.js'
import { failureFacts, retryDecision, type FailureFacts } from './retry.js'

// ---------------------------------------------------------------------------------------------
// What an executor sees
// ---------------------------------------------------------------------------------------------

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
// What a slot needs from its Worker
// ---------------------------------------------------------------------------------------------

/** The WorkItem a slot runs, with the assignment facts its Commands and manifests cite. */
export interface SlotWork extends WorkSnapshot {
  /** The Agent Card version the assignment pinned (§6.1). */
  readonly agentCardVersion: number
  /** The capability versions the assignment pinned (§6.1). */
  readonly capabilityPins: readonly CapabilityRef[]
}

/** Lease and retry timing of a slot. */
export interface SlotTiming {
  /** Execution Lease length asked for at start and renewal. */
  readonly leaseSeconds: number
  /** Ownership kept after a checkpoint, for resumption (§11.3). */
  readonly resumeWithinSeconds: number
  /** Ownership kept while blocked (§11.4). */
  readonly blockedLeaseSeconds: number
  /** Base delay of retry back-off, ms. */
  readonly baseRetryDelayMs: number
}

/** Where Artifact bytes go (structurally the `BlobStore` of `@weft/authority`). */
export interface ArtifactSink {
  put(bytes: Uint8Array, mediaType?: string): Promise<string>
}

/** What a capability token is bound to (§12). */
export interface TokenScope {
  readonly workItemId: string
  readonly ownershipEpoch: number
  readonly executionLeaseId: string
  readonly sessionEpoch: number
  readonly expiresAt: string
}

/** The services of the Worker a slot uses. */
export interface SlotHost {
  readonly actor: { readonly type: 'agent'; readonly id: string }
  readonly signingKey: SigningKey
  readonly store: WorkerStore
  readonly offline: OfflineBuffer
  readonly timing: SlotTiming
  readonly blobs: ArtifactSink | undefined
  /** The retrieval URI of Artifact bytes with content hash `hash`. */
  artifactUri(hash: string): string
  /** The capability token of a lease (§12), or `undefined` when the Worker has no Authorization Service hook. */
  tokenFor(scope: TokenScope): unknown
  now(): number
  newId(): string
  /** Builds and signs a Command (Action ID, epochs, `issuedAt` of now). */
  build<K extends CommandKind>(kind: K, payload: CommandPayload<K>, options?: CommandOptions): BuiltCommand<K>
  /** Submits a built Command; a transport failure marks the Worker offline before it rethrows. */
  submit(built: BuiltCommand): Promise<Receipt>
  /** The expected run time of one attempt of `contract`, ms. */
  expectedDurationMs(contract: WorkContract): number
}

/** How a run ended. */
export type SlotOutcome =
  | { readonly kind: 'submitted' }
  | { readonly kind: 'preempted' }
  | { readonly kind: 'blocked' }
  | { readonly kind: 'retry'; readonly delayMs: number; readonly attempt: number }
  | { readonly kind: 'failed'; readonly failure: FailureFacts }
  | { readonly kind: 'lost'; readonly error: ProtocolError }

/** The executor's state as stored in a checkpoint, with the attempt counter (§11.4: attempts counted durably). */
export interface CheckpointEnvelope {
  readonly attempt: number
  readonly state: unknown
}

/**
 * An owner Command whose answer the link lost: the Authority may or may not have applied it. It is
 * kept to be sent again unchanged on reconnection (§19); `applied` and `notApplied` carry out what
 * each outcome means for the slot.
 */
interface Unanswered {
  readonly built: BuiltCommand
  readonly applied: (receipt: Receipt) => void
  readonly notApplied?: () => void | Promise<void>
}

/** The current Execution Lease as the slot knows it. */
export interface SlotLease {
  readonly leaseId: string
  readonly sessionEpoch: number
  readonly issuedAtMs: number
  readonly renewedAtMs: number
  readonly expiresAtMs: number
  /**
   * The Group sequence of the Event that issued or last renewed the lease, when the receipt gave
   * one: a view of the log that has not reached it knows nothing of this lease yet.
   */
  readonly sequence?: number
}

/** A running slot, as the Worker drives it. */
export interface Slot {
  readonly work: SlotWork
  /** The current Execution Lease, if one is held. */
  readonly lease: SlotLease | undefined
  /** `true` while the slot itself changes its lease (start, checkpoint and restart), when projection changes are its own. */
  readonly transitioning: boolean
  readonly preemptionRequested: boolean
  /** Starts under a new Execution Lease (`work.start`). Rejects with the refusal or the transport error. */
  start(): Promise<void>
  /** Runs the executor to its outcome. Never rejects. */
  run(executor: ExecutorFn): Promise<SlotOutcome>
  /** Asks the executor to reach a safe point (§11.3). */
  requestPreemption(): void
  /** Loses the lease: raises the signal, refuses further side effects and Commands. */
  lose(error: ProtocolError): void
  /** Renews the lease when half of it has passed (§11.3); loses it when the renewal is refused. */
  renewIfDue(nowMs: number): Promise<void>
  /** Loses the lease when it expired, offline past the grace (§11.5). */
  checkExpiry(nowMs: number): void
  /**
   * After reconciliation: `checkpointed` says whether a buffered checkpoint of this slot was applied
   * (its lease is then released, so the slot starts again); Commands waiting for the service go on.
   */
  reconnected(checkpointed: boolean): Promise<void>
}

/** The owner Commands whose refusal means the slot no longer holds a usable lease. */
const LEASE_CODES: ReadonlySet<string> = new Set(['WORK_LEASE_EXPIRED', 'WORK_STALE_OWNERSHIP', 'INVALID_STATE_TRANSITION', 'AUTH_STALE_SESSION'])

const iso = (ms: number): string => new Date(ms).toISOString()

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

function leaseOf(receipt: Receipt, kind: 'work.started' | 'work.progressed', fallback: SlotLease | undefined, nowMs: number): SlotLease {
  const event = receipt.events.find((e) => e.kind === kind)
  if (event === undefined) throw new ProtocolError('PROTOCOL_VIOLATION', `the receipt of ${receipt.kind} carries no ${kind} Event`)
  const p = event.payload as EventPayload<'work.started'>
  return {
    leaseId: p.executionLease.leaseId,
    sessionEpoch: p.executionLease.sessionEpoch ?? fallback?.sessionEpoch ?? 1,
    issuedAtMs: Date.parse(p.executionLease.issuedAt),
    renewedAtMs: nowMs,
    expiresAtMs: Date.parse(p.executionLeaseExpiresAt),
    ...(event.sequence === undefined ? {} : { sequence: event.sequence }),
  }
}

/**
 * The canonical JSON bytes of a checkpoint envelope (§11.3: the state is identified by their hash).
 * @throws UsageError when the executor's state is not JSON.
 */
function canonicalEnvelope(env: CheckpointEnvelope): Uint8Array {
  const json = env.state === undefined ? { attempt: env.attempt } : env
  const result = canonicalize(json)
  if (!result.ok) throw new UsageError(`a checkpoint state must be JSON (no canonical form: ${result.reason} at ${result.path || 'the root'})`)
  return result.bytes
}

/** A deferred promise. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void } {
  let resolve!: () => void
  let reject!: (e: unknown) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  // A waiter may be abandoned when its executor stops; its rejection must not surface as unhandled.
  promise.catch(() => {})
  return { promise, resolve, reject }
}

/**
 * Creates the slot that runs `work`. The stored checkpoint of the WorkItem, if any, is where the
 * run resumes; its attempt counter carries on under the same Ownership Epoch.
 */
export function createSlot(host: SlotHost, work: SlotWork): Slot {
  const workItemId = work.workItemId
  const stored = host.store.checkpoint(workItemId)
  const envelope = stored?.state as CheckpointEnvelope | undefined
  const attempt = stored !== undefined && stored.ownershipEpoch === work.ownershipEpoch ? (envelope?.attempt ?? 1) : 1
  let lastState: unknown = envelope?.state
  let lease: SlotLease | undefined
  let transitioning = false
  let preemption = false
  let lost: ProtocolError | undefined
  let ended: SlotOutcome | undefined
  let offlineUsage: UsageTotals = zeroUsage()
  // Checkpoints, renewals and usage records sent whose answer the link lost, in the order sent: each
  // is retried unchanged on reconnection, never rebuilt, so none is applied twice (§19).
  const unanswered: Unanswered[] = []
  // A work.start whose answer was lost: the next start sends it again, so an applied one's lease is this slot's.
  let unansweredStart: BuiltCommand | undefined
  let usage: UsageTotals = zeroUsage()
  let token: { leaseId: string; value: unknown } | undefined
  const controller = new AbortController()
  let waiters: ReturnType<typeof deferred>[] = []
  // Set once this slot saw the service unreachable; cleared by `reconnected` after reconciliation (§11.5).
  let awaitingReconnect = false
  // A buffered checkpoint of this slot was applied on reconnect: its lease is released and must be replaced.
  let needsStart = false
  const inFlight = new Map<string, Promise<unknown>>()

  const now = () => host.now()
  /** Offline for this slot: the service is unreachable, or it came back and this slot has not reconciled yet. */
  const offlineNow = () => host.offline.offline || awaitingReconnect

  function lose(error: ProtocolError): void {
    if (lost !== undefined || ended !== undefined) return
    lost = error
    lease = undefined
    token = undefined
    if (!controller.signal.aborted) controller.abort(error)
    for (const w of waiters) w.reject(error)
    waiters = []
  }

  function requireLive(): SlotLease {
    if (lost !== undefined) throw lost
    if (lease === undefined) throw new ProtocolError('WORK_LEASE_EXPIRED', `no Execution Lease is held for WorkItem ${workItemId}`, { retryable: false })
    return lease
  }

  /** Waits until the Group service is back and this slot holds a lease again (§11.5: reconcile first). */
  async function online(): Promise<SlotLease> {
    while (offlineNow()) {
      awaitingReconnect = true
      // Without a lease only when reconnection is to start one (see `restart`).
      if (!needsStart) requireLive()
      else if (lost !== undefined) throw lost
      const w = deferred()
      waiters.push(w)
      await w.promise
    }
    return requireLive()
  }

  /** A refusal of an owner Command: the lease is gone when the code says so. */
  function refused(error: unknown): never {
    const e = ProtocolError.from(error)
    if (LEASE_CODES.has(e.code)) lose(e)
    throw e
  }

  /**
   * Sends one owner Command that needs a live lease; waits out an unreachable service. After a lost
   * answer the same signed bytes go again (§19), and a new Command is built only when the first
   * was not applied (under the lease held then, which reconnection may have replaced).
   */
  async function sendOnline<K extends CommandKind>(kind: K, payload: (l: SlotLease) => CommandPayload<K>): Promise<Receipt> {
    // The Command last sent, while its answer is unknown.
    let built: BuiltCommand | undefined
    for (;;) {
      const l = await online()
      try {
        if (built !== undefined) {
          const receipt = await retried(built)
          if (receipt !== undefined) return receipt
        }
        built = host.build(kind, payload(l), { groupId: work.groupId, workItemId })
        return await host.submit(built)
      } catch (error) {
        if (!isTransportUnavailable(error)) refused(error)
      }
    }
  }

  /**
   * §19: sends again, unchanged, a Command whose answer was lost. The Authority answers a repeated
   * Action ID with its first receipt, and idempotency is checked before every stage whose outcome
   * could have changed since, so any other refusal means it never applied it; all but freshness,
   * which comes first: past the window the retry is refused as `AUTH_INVALID_SIGNATURE` either way,
   * and the Worker's log tells, the receipt rebuilt from the Events the Command caused.
   * @returns the receipt when the Command was applied, now or before; `undefined` when it was not
   * @throws the transport's error when the answer is lost again
   */
  async function retried(built: BuiltCommand): Promise<Receipt | undefined> {
    try {
      return await host.submit(built)
    } catch (error) {
      if (isTransportUnavailable(error)) throw error
      return ProtocolError.from(error).code === 'AUTH_INVALID_SIGNATURE' ? receiptFromLog(built) : undefined
    }
  }

  /** The receipt of `built` as this Worker's log knows it: the Events it caused; `undefined` when the log holds none. */
  function receiptFromLog(built: BuiltCommand): Receipt | undefined {
    const { actionId, kind } = built.command
    const events = host.store.events(work.groupId).filter((e) => e.cause.type === 'command' && e.cause.id === actionId)
    const first = events[0]
    if (first === undefined) return undefined
    return { actionId, actor: host.actor, kind, groupId: work.groupId, commandHash: first.commandHash ?? '', events, acceptedAt: first.occurredAt, duplicate: true }
  }

  /** Sends `built` and, when the link loses the answer, keeps it in {@link unanswered} with `outcome` before throwing the transport's error. */
  async function sendKept(built: BuiltCommand, outcome: Omit<Unanswered, 'built'>): Promise<Receipt> {
    try {
      return await host.submit(built)
    } catch (error) {
      if (isTransportUnavailable(error)) unanswered.push({ built, ...outcome })
      throw error
    }
  }

  /** §19: every unanswered Command again, in the order sent; each outcome is carried out. */
  async function settleUnanswered(): Promise<void> {
    while (unanswered.length > 0) {
      const { built, applied, notApplied } = unanswered[0]!
      const receipt = await retried(built)
      unanswered.shift()
      if (receipt !== undefined) applied(receipt)
      else await notApplied?.()
    }
  }

  async function startLease(): Promise<void> {
    transitioning = true
    try {
      // A start whose answer was lost goes again first: if it was applied, its lease is this slot's.
      let receipt = unansweredStart === undefined ? undefined : await retried(unansweredStart)
      // Its lease may have run out since (the receipt is the first one): then a new start is needed.
      if (receipt !== undefined && leaseOf(receipt, 'work.started', lease, now()).expiresAtMs <= now()) receipt = undefined
      if (receipt === undefined) {
        unansweredStart = host.build('work.start', { workItemId, ownershipEpoch: work.ownershipEpoch, executionLeaseSeconds: host.timing.leaseSeconds }, { groupId: work.groupId, workItemId })
        receipt = await host.submit(unansweredStart)
      }
      unansweredStart = undefined
      lease = leaseOf(receipt, 'work.started', lease, now())
      token = undefined
    } catch (error) {
      if (!isTransportUnavailable(error)) unansweredStart = undefined
      throw error
    } finally {
      transitioning = false
    }
  }

  /**
   * A new lease after an online checkpoint released the last one. When the start's answer is lost,
   * reconnection sends it again (§19) and the run goes on under the lease it names.
   */
  async function restart(): Promise<void> {
    try {
      await startLease()
    } catch (error) {
      if (!isTransportUnavailable(error)) refused(error)
      needsStart = true
      await online()
    }
  }

  /**
   * The checkpoint record of `env`, stored durably first. §11.3: the state is identified by the hash
   * of its canonical JSON form, kept in the Artifact sink when there is one so another owner can
   * resume from it.
   */
  async function checkpointRecord(env: CheckpointEnvelope, label: CheckpointLabel = {}): Promise<CommandPayload<'work.checkpoint'>['checkpoint']> {
    const canonical = canonicalEnvelope(env)
    host.store.putCheckpoint(workItemId, work.ownershipEpoch, env)
    lastState = env.state
    const bytes = canonical
    if (host.blobs !== undefined) await host.blobs.put(bytes, 'application/json')
    return {
      phase: label.phase ?? 'running',
      completedMilestones: [...(label.completedMilestones ?? [])],
      nextStep: label.nextStep ?? 'continue',
      stateArtifactHash: sha256Tagged(bytes),
      createdAt: iso(now()),
    }
  }

  /** §11.5: offline, work goes on only within the historical lease plus its bounded grace. */
  function requireGrace(): SlotLease {
    const l = requireLive()
    if (!host.offline.withinGrace(l.expiresAtMs, now())) {
      lose(new ProtocolError('WORK_LEASE_EXPIRED', `the lease grace of WorkItem ${workItemId} ended while offline (§11.5)`, { retryable: false }))
      throw lost
    }
    return l
  }

  /** Buffers a checkpoint or progress renewal while offline (§11.5); loses the lease past the grace. */
  function bufferOffline<K extends BufferableKind>(kind: K, payload: (l: SlotLease) => CommandPayload<K>): void {
    const l = requireGrace()
    const t = now()
    const carried = kind === 'work.checkpoint' ? addUsage(offlineUsage, host.offline.carriedUsage(workItemId, kind)) : zeroUsage()
    const historical = { agentId: host.actor.id, groupId: work.groupId, workItemId, sessionEpoch: l.sessionEpoch, ownershipEpoch: work.ownershipEpoch, leaseId: l.leaseId, expiresAtMs: l.expiresAtMs }
    const disconnectedAtMs = Math.max(host.offline.disconnectedAtMs ?? t, l.issuedAtMs)
    const actionId = host.newId()
    const binding = offlineBinding(historical, { disconnectedAtMs, bufferedAtMs: t, graceMs: host.offline.graceMs }, carried, actionId)
    const built = host.build(kind, payload(l), { groupId: work.groupId, workItemId, actionId, extensions: offlineExtensions(binding) })
    host.offline.buffer(built.command as Command & { kind: K }, t)
    awaitingReconnect = true
    if (kind === 'work.checkpoint') offlineUsage = zeroUsage()
  }

  /**
   * Stores `env` and emits the checkpoint. Online it releases the lease (§10.2); offline it is
   * buffered and the executor may go on under the historical lease within the grace.
   */
  async function emitCheckpoint(env: CheckpointEnvelope, label: CheckpointLabel | undefined, progress?: WorkProgress): Promise<'released' | 'buffered'> {
    // Nothing is stored locally that could not be emitted or buffered.
    if (offlineNow()) requireGrace()
    else requireLive()
    const checkpoint = await checkpointRecord(env, label)
    const payload = (l: SlotLease): CommandPayload<'work.checkpoint'> => ({
      workItemId,
      ownershipEpoch: work.ownershipEpoch,
      executionLeaseId: l.leaseId,
      checkpoint,
      resumeWithinSeconds: host.timing.resumeWithinSeconds,
      ...(progress === undefined ? {} : { progress }),
    })
    if (!offlineNow()) {
      transitioning = true
      try {
        // Lost with its answer, it may still have released the lease: then reconnection starts a new one.
        await sendKept(host.build('work.checkpoint', payload(requireLive()), { groupId: work.groupId, workItemId }), { applied: () => (needsStart = true) })
        lease = undefined
        return 'released'
      } catch (error) {
        if (!isTransportUnavailable(error)) refused(error)
      } finally {
        transitioning = false
      }
    }
    // Offline, or the answer was lost: a buffered copy is applied at reconciliation if the first was not.
    bufferOffline('work.checkpoint', payload)
    return 'buffered'
  }

  function progressOf(report: ProgressReport): WorkProgress {
    return {
      currentPhase: report.phase,
      completedMilestones: [...(report.completedMilestones ?? [])],
      nextCheckpoint: report.nextCheckpoint ?? 'next safe point',
      blockers: [...(report.blockers ?? [])],
      updatedCompletionEstimate: iso(report.completionEstimateMs ?? now() + host.expectedDurationMs(work.contract)),
      evidenceIds: [...new Set(report.evidenceIds ?? [])],
    }
  }

  async function renew(progress: WorkProgress | undefined): Promise<void> {
    const payload = (l: SlotLease): CommandPayload<'ext.missionweaveprotocol.core.work_execution_lease_renew'> => ({
      workItemId,
      ownershipEpoch: work.ownershipEpoch,
      executionLeaseId: l.leaseId,
      leaseSeconds: host.timing.leaseSeconds,
      ...(progress === undefined ? {} : { progress }),
    })
    const l = requireLive()
    if (!offlineNow()) {
      const extended = (receipt: Receipt): void => {
        if (lease?.leaseId === l.leaseId) lease = leaseOf(receipt, 'work.progressed', lease, now())
      }
      const build = (): BuiltCommand => host.build('ext.missionweaveprotocol.core.work_execution_lease_renew', payload(l), { groupId: work.groupId, workItemId })
      // Lost with its answer, it may still have extended the lease: reconnection learns the new
      // expiry. Its progress is not buffered as well, or both copies could be applied; if the
      // first was not, the progress goes again then, under the lease if it is still held.
      const again = async (): Promise<void> => {
        if (progress !== undefined && !needsStart && lease?.leaseId === l.leaseId) await sendKept(build(), { applied: extended })
      }
      try {
        extended(await sendKept(build(), { applied: extended, notApplied: again }))
      } catch (error) {
        if (!isTransportUnavailable(error)) refused(error)
      }
      return
    }
    // §11.5: a plain renewal is pointless offline; a progress report is buffered.
    if (progress !== undefined) bufferOffline('ext.missionweaveprotocol.core.work_execution_lease_renew', payload)
  }

  async function preempt(state: unknown): Promise<never> {
    await emitCheckpoint({ attempt, state }, { phase: 'preempted', nextStep: 'resume from this checkpoint' })
    ended = { kind: 'preempted' }
    throw new Preempted()
  }

  function evidence(input: EvidenceInput): Evidence {
    const unsigned = {
      evidenceId: host.newId(),
      missionId: work.missionId,
      groupId: work.groupId,
      workItemId,
      type: input.type,
      subject: input.subject ?? { type: 'work_item' as const, id: workItemId },
      criterionIds: [...input.criterionIds],
      method: input.method,
      result: input.result,
      ...(input.details === undefined ? {} : { details: input.details }),
      artifactHashes: [...(input.artifactHashes ?? [])],
      generatedBy: { type: host.actor.type, id: host.actor.id },
      ...(input.toolVersion === undefined ? {} : { toolVersion: input.toolVersion }),
      ...(input.modelVersion === undefined ? {} : { modelVersion: input.modelVersion }),
      createdAt: iso(now()),
    }
    return sign('evidence', unsigned, host.signingKey) as unknown as Evidence
  }

  const keyOf = (operationId: string): string => sideEffectKey({ missionId: work.missionId, workItemId, ownershipEpoch: work.ownershipEpoch, operationId })

  async function runSideEffect<T>(operationId: string, fn: (key: string) => T | Promise<T>, options: SideEffectOptions): Promise<T> {
    const base = keyOf(operationId)
    const key = options.perAttempt === true ? attemptKey(base, attempt) : base
    const recorded = host.store.sideEffect(key)
    if (recorded !== undefined) return recorded.result as T
    const running = inFlight.get(key)
    if (running !== undefined) return (await running) as T
    const l = requireLive()
    const t = now()
    if (offlineNow()) {
      const risky = work.contract.sideEffectRisk === 'high_risk' || work.contract.sideEffectRisk === 'destructive'
      // §11.5: offline, only reversible effects of already-active work, within the lease grace.
      if (options.reversible !== true || risky || !host.offline.withinGrace(l.expiresAtMs, t)) {
        throw new ProtocolError('WORK_LEASE_EXPIRED', `side effect ${operationId} needs a currently valid lease and the Group service is unreachable (§11.5)`, { retryable: true, details: { offline: true } })
      }
    } else if (t >= l.expiresAtMs) {
      lose(new ProtocolError('WORK_LEASE_EXPIRED', `the Execution Lease of WorkItem ${workItemId} expired`, { retryable: false }))
      throw lost
    }
    const promise = (async () => {
      const result = await fn(key)
      host.store.recordSideEffect(key, result)
      return result
    })()
    inFlight.set(key, promise)
    try {
      return await promise
    } finally {
      inFlight.delete(key)
    }
  }

  async function publishArtifact(bytes: Uint8Array | string, meta: ArtifactMeta): Promise<Artifact> {
    const content = typeof bytes === 'string' ? utf8Encode(bytes) : bytes
    const contentHash = sha256Tagged(content)
    if (host.blobs !== undefined) await host.blobs.put(content, meta.mediaType)
    const deliverable = work.contract.requiredDeliverables.find((d) => d.mediaType === meta.mediaType) ?? work.contract.requiredDeliverables[0]
    const manifest = sign(
      'artifact',
      {
        artifactId: host.newId(),
        contentHash,
        uri: meta.uri ?? host.artifactUri(contentHash),
        sizeBytes: content.byteLength,
        mediaType: meta.mediaType,
        schemaUri: meta.schemaUri ?? deliverable?.schema ?? 'urn:weft:schema:unspecified',
        producer: { agentId: host.actor.id, agentCardVersion: work.agentCardVersion, capabilities: work.capabilityPins.map((c) => ({ id: c.id, version: c.version })) },
        missionId: work.missionId,
        groupId: work.groupId,
        workItemId,
        sourceArtifactHashes: [...(meta.sourceArtifactHashes ?? [])],
        toolVersions: [...(meta.toolVersions ?? [])],
        modelVersions: [...(meta.modelVersions ?? [])],
        classification: meta.classification ?? 'internal',
        createdAt: iso(now()),
      },
      host.signingKey,
    ) as unknown as Artifact
    await sendOnline('artifact.publish', (l) => ({ artifact: manifest, ownershipEpoch: work.ownershipEpoch, executionLeaseId: l.leaseId }))
    return manifest
  }

  async function reportUsage(delta: UsageDelta): Promise<void> {
    if (isZeroUsage(delta)) return
    const l = requireLive()
    usage = addUsage(usage, delta)
    if (offlineNow()) {
      // §11.5: usage consumed offline rides in the next buffered checkpoint, or is recorded after reconnection.
      offlineUsage = addUsage(offlineUsage, delta)
      return
    }
    try {
      await chargeUsage(l, delta)
    } catch (error) {
      if (!isTransportUnavailable(error)) refused(error)
    }
  }

  /**
   * Records `delta` under `l`. When the answer is lost, whether it was charged is settled on
   * reconnection; until then it is kept apart from the offline usage, which a buffered checkpoint
   * carries and would charge a second time.
   */
  async function chargeUsage(l: SlotLease, delta: UsageDelta): Promise<void> {
    await sendKept(usageRecord(l, delta), {
      applied: () => {},
      notApplied: () => {
        offlineUsage = addUsage(offlineUsage, delta)
      },
    })
  }

  function usageRecord(l: SlotLease, delta: UsageDelta): BuiltCommand {
    return host.build('ext.missionweaveprotocol.core.resource_usage_record', { workItemId, ownershipEpoch: work.ownershipEpoch, executionLeaseId: l.leaseId, usageDelta: delta }, { groupId: work.groupId, workItemId })
  }


  function makeContext(): SlotContext {
    const item: WorkSnapshot = deepFreeze(structuredClone({ workItemId, groupId: work.groupId, missionId: work.missionId, ownershipEpoch: work.ownershipEpoch, contract: work.contract, dependencyIds: [...work.dependencyIds] }))
    const resumeState = deepFreeze(structuredClone(lastState))
    return Object.freeze({
      item,
      signal: controller.signal,
      attempt,
      resumeState,
      progress: async (report: ProgressReport) => renew(progressOf(report)),
      checkpoint: async (state: unknown, label?: CheckpointLabel) => {
        if (preemption) return preempt(state)
        if ((await emitCheckpoint({ attempt, state }, label)) === 'released') await restart()
      },
      safePoint: async (state?: unknown) => {
        requireLive()
        if (preemption) await preempt(state === undefined ? lastState : state)
      },
      block: async (reason: string, options: { requiredResolution?: string; state?: unknown } = {}) => {
        const env: CheckpointEnvelope = { attempt, state: options.state === undefined ? lastState : options.state }
        const checkpoint = await checkpointRecord(env, { phase: 'blocked', nextStep: options.requiredResolution ?? reason })
        transitioning = true
        try {
          await sendOnline('work.block', (l) => ({
            workItemId,
            ownershipEpoch: work.ownershipEpoch,
            executionLeaseId: l.leaseId,
            checkpoint,
            reason,
            blockedLeaseSeconds: host.timing.blockedLeaseSeconds,
            ...(options.requiredResolution === undefined ? {} : { requiredResolution: options.requiredResolution }),
          }))
        } finally {
          transitioning = false
        }
        lease = undefined
        ended = { kind: 'blocked' }
        throw new Blocked(reason)
      },
      publishArtifact,
      evidence,
      sideEffect: <T>(operationId: string, fn: (key: string) => T | Promise<T>, options: SideEffectOptions = {}) => runSideEffect(operationId, fn, options),
      sideEffectKey: keyOf,
      reportUsage,
      usage: () => ({ ...usage }),
      token: async () => {
        const l = requireLive()
        if (token?.leaseId !== l.leaseId) {
          const value = await host.tokenFor({ workItemId, ownershipEpoch: work.ownershipEpoch, executionLeaseId: l.leaseId, sessionEpoch: l.sessionEpoch, expiresAt: iso(l.expiresAtMs) })
          token = { leaseId: l.leaseId, value }
        }
        return token.value
      },
    })
  }

  async function submit(result: ExecutorResult): Promise<void> {
    const artifactIds = [...new Set((result?.artifacts ?? []).map((a) => (typeof a === 'string' ? a : a.artifactId)))]
    const evidenceList = [...(result?.evidence ?? [])]
    if (artifactIds.length === 0 || evidenceList.length === 0) throw new ProtocolError('INVALID_COMMAND', 'an executor result needs at least one Artifact and one piece of Evidence (§13.2)', { retryable: false })
    // §11.5: reconcile before submission.
    await sendOnline('work.submit', (l) => ({ workItemId, ownershipEpoch: work.ownershipEpoch, executionLeaseId: l.leaseId, artifactIds, evidence: evidenceList }))
    lease = undefined
  }

  async function fail(failure: FailureFacts, why: string): Promise<void> {
    const report = evidence({
      type: 'failure_report',
      criterionIds: work.contract.acceptanceCriteria.map((c) => c.criterionId),
      method: `Executor run, attempt ${attempt} of at most ${work.contract.retryPolicy.maxAttempts} under the contract retry policy (§11.4).`,
      result: 'failed',
      details: { code: failure.code, message: failure.message.slice(0, 2000), attempts: attempt, stopped: why },
    })
    await sendOnline('work.fail', (l) => ({ workItemId, reason: `${failure.code}: ${why}`, ownershipEpoch: work.ownershipEpoch, executionLeaseId: l.leaseId, evidence: [report] }))
    lease = undefined
  }

  /** What to do after the executor threw `error` (not a slot signal). */
  async function afterFailure(error: unknown): Promise<SlotOutcome> {
    const failure = failureFacts(error)
    const decision = retryDecision({
      policy: work.contract.retryPolicy,
      failure,
      attempts: attempt,
      nowMs: now(),
      deadlineMs: Date.parse(work.contract.deadline),
      attemptMs: host.expectedDurationMs(work.contract),
      baseDelayMs: host.timing.baseRetryDelayMs,
    })
    if (decision.retry) {
      // The next attempt number is stored before the lease is released, so a crash cannot reset it.
      await emitCheckpoint({ attempt: decision.nextAttempt, state: lastState }, { phase: 'retry-wait', nextStep: `attempt ${decision.nextAttempt}` })
      return { kind: 'retry', delayMs: decision.delayMs, attempt: decision.nextAttempt }
    }
    await fail(failure, decision.reason)
    return { kind: 'failed', failure }
  }

  async function settle(executor: ExecutorFn, ctx: SlotContext): Promise<SlotOutcome> {
    try {
      const result = await executor(ctx.item, ctx)
      if (ended !== undefined) return ended
      requireLive()
      await submit(result)
      return { kind: 'submitted' }
    } catch (error) {
      if (ended !== undefined) return ended
      if (lost !== undefined) return { kind: 'lost', error: lost }
      return await afterFailure(error)
    }
  }

  return {
    work,
    get lease() {
      return lease
    },
    get transitioning() {
      return transitioning
    },
    get preemptionRequested() {
      return preemption
    },
    start: startLease,
    async run(executor) {
      const outcome = await settle(executor, makeContext()).catch((error: unknown): SlotOutcome => {
        // A Command of the outcome itself (submit, fail, retry checkpoint) failed: the lease is gone or the Authority refused.
        return { kind: 'lost', error: lost ?? ProtocolError.from(error) }
      })
      for (const w of waiters) w.reject(lost ?? new ProtocolError('WORK_LEASE_EXPIRED', 'the run ended', { retryable: false }))
      waiters = []
      return outcome
    },
    requestPreemption() {
      if (preemption || lost !== undefined) return
      preemption = true
      if (!controller.signal.aborted) controller.abort(new PreemptionRequested())
    },
    lose,
    async renewIfDue(nowMs) {
      const l = lease
      if (l === undefined || lost !== undefined || transitioning || offlineNow()) return
      if (nowMs < l.renewedAtMs + (l.expiresAtMs - l.renewedAtMs) / 2) return
      await renew(undefined).catch(() => {})
    },
    checkExpiry(nowMs) {
      const l = lease
      if (l === undefined || lost !== undefined || transitioning) return
      const expired = offlineNow() ? !host.offline.withinGrace(l.expiresAtMs, nowMs) : nowMs >= l.expiresAtMs
      if (expired) lose(new ProtocolError('WORK_LEASE_EXPIRED', `the Execution Lease of WorkItem ${workItemId} expired${offlineNow() ? ' and its offline grace ended' : ''}`, { retryable: false }))
    },
    async reconnected(checkpointed) {
      if (lost !== undefined || ended !== undefined) return
      needsStart ||= checkpointed
      try {
        // §19 first: a checkpoint applied without an answer released the lease, a renewal extended it.
        await settleUnanswered()
        if (needsStart) {
          await startLease()
          needsStart = false
        }
        else if (lease !== undefined && now() >= lease.expiresAtMs) throw new ProtocolError('WORK_LEASE_EXPIRED', `the Execution Lease of WorkItem ${workItemId} expired while offline`, { retryable: false })
        // §11.5: the offline usage is charged once, now, under the live lease. Not through
        // sendOnline, which would wait for a reconnection this very call is completing; a link
        // that drops again keeps the record unanswered for the next reconnection (the catch below).
        const l = lease
        if (!isZeroUsage(offlineUsage) && l !== undefined) {
          const delta = Object.fromEntries(Object.entries(offlineUsage).filter(([, v]) => v > 0)) as UsageDelta
          offlineUsage = zeroUsage()
          await chargeUsage(l, delta)
        }
      } catch (error) {
        if (isTransportUnavailable(error)) return
        lose(ProtocolError.from(error))
        return
      }
      awaitingReconnect = false
      for (const w of waiters) w.resolve()
      waiters = []
    },
  }
}
