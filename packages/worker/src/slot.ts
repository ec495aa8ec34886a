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
 *
 * The executor's side of this is `executor.ts`; the lease lifecycle is the machine of
 * `slot-lifecycle.ts`, the only place it changes; what the slot needs from its Worker is
 * `slot-host.ts`; lost answers (§19) are kept by `slot-answers.ts`, calls waiting out an outage by
 * `slot-waiters.ts`, side effects by `slot-effects.ts` and the signed documents are built by
 * `slot-documents.ts`.
 * @module
 */
import { deepFreeze, ProtocolError, sha256Tagged, utf8Encode } from '@weft/codec'
import { timestampOf } from '@weft/codec/time'
import type { BuiltCommand, Receipt } from '@weft/client'
import type { Artifact, Command, CommandKind, CommandPayload, UsageDelta, WorkProgress } from '@weft/spec'
import {
  Blocked,
  Preempted,
  PreemptionRequested,
  type ArtifactMeta,
  type CheckpointLabel,
  type EvidenceInput,
  type ExecutorFn,
  type ExecutorResult,
  type ProgressReport,
  type SideEffectOptions,
  type SlotContext,
  type WorkSnapshot,
} from './executor.js'
import { addUsage, isTransportUnavailable, isZeroUsage, offlineBinding, offlineExtensions, zeroUsage, type BufferableKind, type UsageTotals } from './offline.js'
import { failureFacts, retryDecision, type FailureFacts } from './retry.js'
import { createLostAnswers } from './slot-answers.js'
import { canonicalEnvelope, failureReportOf, progressOf, signArtifactManifest, signEvidence, snapshotOf, submissionOf } from './slot-documents.js'
import { createSideEffects } from './slot-effects.js'
import { createWaiters } from './slot-waiters.js'
import type { SlotHost, SlotWork } from './slot-host.js'
import { heldLease, INITIAL_LIFECYCLE, leaseFromReceipt, slotTransition, type SlotEvent, type SlotLease, type SlotLifecycle } from './slot-lifecycle.js'

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

/** A running slot, as the Worker drives it. */
export interface Slot {
  readonly work: SlotWork
  /** The current Execution Lease, if one is held. */
  readonly lease: SlotLease | undefined
  /** `true` while the slot itself changes its lease (start, checkpoint, block and restart), when projection changes are its own. */
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
  /** Where the slot stands: changed only by {@link on} (slot-lifecycle.ts). */
  let life: SlotLifecycle = INITIAL_LIFECYCLE
  const answers = createLostAnswers(host, work.groupId)
  // A work.start whose answer was lost: the next start sends it again, so an applied one's lease is this slot's.
  let unansweredStart: BuiltCommand | undefined
  let usage: UsageTotals = zeroUsage()
  // Usage consumed offline (§11.5), or whose record lost its answer and was not applied: charged on reconnection.
  let offlineUsage: UsageTotals = zeroUsage()
  let token: { leaseId: string; value: unknown } | undefined
  const controller = new AbortController()
  // Executor calls waiting for the service to come back (§11.5).
  const waiters = createWaiters()

  const now = () => host.now()

  /** Moves the lifecycle on by `event`; `false` when the machine ignored it. */
  function on(event: SlotEvent): boolean {
    const next = slotTransition(life, event)
    if (next === life) return false
    life = next
    return true
  }

  /** Offline for this slot: the service is unreachable, or it came back and this slot has not reconciled yet. */
  const offlineNow = () => host.offline.offline || life.awaitingReconnect

  function lose(error: ProtocolError): void {
    if (!on({ type: 'lost', error })) return
    token = undefined
    if (!controller.signal.aborted) controller.abort(error)
    waiters.fail(error)
  }

  /**
   * Loses the lease for `why` and throws the loss: the first one if the lease was already lost, and
   * `undefined` when the slot had stopped its executor itself (a run that ended loses nothing).
   */
  function expire(why: string): never {
    lose(new ProtocolError('WORK_LEASE_EXPIRED', why, { retryable: false }))
    throw life.lost
  }

  function requireLive(): SlotLease {
    if (life.lost !== undefined) throw life.lost
    const lease = heldLease(life)
    if (lease === undefined) throw new ProtocolError('WORK_LEASE_EXPIRED', `no Execution Lease is held for WorkItem ${workItemId}`, { retryable: false })
    return lease
  }

  const effects = createSideEffects(host, work, attempt, { requireLive, offline: offlineNow, expire })

  /** Waits until the Group service is back and this slot holds a lease again (§11.5: reconcile first). */
  async function online(): Promise<SlotLease> {
    while (offlineNow()) {
      on({ type: 'disconnected' })
      // Without a lease only when reconnection is to start one (see `restart`).
      if (life.phase.kind !== 'restartOwed') requireLive()
      else if (life.lost !== undefined) throw life.lost
      await waiters.wait()
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
          const receipt = await answers.retried(built)
          if (receipt !== undefined) return receipt
        }
        built = host.build(kind, payload(l), { groupId: work.groupId, workItemId })
        return await host.submit(built)
      } catch (error) {
        if (!isTransportUnavailable(error)) refused(error)
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // The lease: start, checkpoint (which releases it, §10.2), renewal and progress (§11.3, §11.4)
  // -------------------------------------------------------------------------------------------

  async function startLease(): Promise<void> {
    on({ type: 'changeBegan', change: 'start' })
    try {
      // A start whose answer was lost goes again first: if it was applied, its lease is this slot's.
      let receipt = unansweredStart === undefined ? undefined : await answers.retried(unansweredStart)
      // Its lease may have run out since (the receipt is the first one): then a new start is needed.
      if (receipt !== undefined && leaseFromReceipt(receipt, 'work.started', heldLease(life), now()).expiresAtMs <= now()) receipt = undefined
      if (receipt === undefined) {
        unansweredStart = host.build('work.start', { workItemId, ownershipEpoch: work.ownershipEpoch, executionLeaseSeconds: host.timing.leaseSeconds }, { groupId: work.groupId, workItemId })
        receipt = await host.submit(unansweredStart)
      }
      unansweredStart = undefined
      on({ type: 'started', lease: leaseFromReceipt(receipt, 'work.started', heldLease(life), now()) })
      token = undefined
    } catch (error) {
      if (!isTransportUnavailable(error)) unansweredStart = undefined
      throw error
    } finally {
      on({ type: 'changeEnded' })
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
      on({ type: 'restartOwed' })
      await online()
    }
  }

  /**
   * The checkpoint record of `env`, stored durably first. §11.3: the state is identified by the hash
   * of its canonical JSON form, kept in the Artifact sink when there is one so another owner can
   * resume from it.
   */
  async function checkpointRecord(env: CheckpointEnvelope, label: CheckpointLabel = {}): Promise<CommandPayload<'work.checkpoint'>['checkpoint']> {
    const bytes = canonicalEnvelope(env)
    host.store.putCheckpoint(workItemId, work.ownershipEpoch, env)
    lastState = env.state
    if (host.blobs !== undefined) await host.blobs.put(bytes, 'application/json')
    return {
      phase: label.phase ?? 'running',
      completedMilestones: [...(label.completedMilestones ?? [])],
      nextStep: label.nextStep ?? 'continue',
      stateArtifactHash: sha256Tagged(bytes),
      createdAt: timestampOf(now()),
    }
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
      on({ type: 'changeBegan', change: 'checkpoint' })
      try {
        // Lost with its answer, it may still have released the lease: then reconnection starts a new one.
        await answers.sendKept(host.build('work.checkpoint', payload(requireLive()), { groupId: work.groupId, workItemId }), {
          applied: () => {
            on({ type: 'restartOwed' })
          },
        })
        on({ type: 'released' })
        return 'released'
      } catch (error) {
        if (!isTransportUnavailable(error)) refused(error)
      } finally {
        on({ type: 'changeEnded' })
      }
    }
    // Offline, or the answer was lost: a buffered copy is applied at reconciliation if the first was not.
    bufferOffline('work.checkpoint', payload)
    return 'buffered'
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
        if (heldLease(life)?.leaseId === l.leaseId) on({ type: 'renewed', lease: leaseFromReceipt(receipt, 'work.progressed', heldLease(life), now()) })
      }
      const build = (): BuiltCommand => host.build('ext.missionweaveprotocol.core.work_execution_lease_renew', payload(l), { groupId: work.groupId, workItemId })
      // Lost with its answer, it may still have extended the lease: reconnection learns the new
      // expiry. Its progress is not buffered as well, or both copies could be applied; if the
      // first was not, the progress goes again then, under the lease if it is still held.
      const again = async (): Promise<void> => {
        if (progress !== undefined && life.phase.kind !== 'restartOwed' && heldLease(life)?.leaseId === l.leaseId) await answers.sendKept(build(), { applied: extended })
      }
      try {
        extended(await answers.sendKept(build(), { applied: extended, notApplied: again }))
      } catch (error) {
        if (!isTransportUnavailable(error)) refused(error)
      }
      return
    }
    // §11.5: a plain renewal is pointless offline; a progress report is buffered.
    if (progress !== undefined) bufferOffline('ext.missionweaveprotocol.core.work_execution_lease_renew', payload)
  }

  // -------------------------------------------------------------------------------------------
  // Offline (§11.5)
  // -------------------------------------------------------------------------------------------

  /** §11.5: offline, work goes on only within the historical lease plus its bounded grace. */
  function requireGrace(): SlotLease {
    const l = requireLive()
    if (!host.offline.withinGrace(l.expiresAtMs, now())) expire(`the lease grace of WorkItem ${workItemId} ended while offline (§11.5)`)
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
    on({ type: 'disconnected' })
    if (kind === 'work.checkpoint') offlineUsage = zeroUsage()
  }

  // -------------------------------------------------------------------------------------------
  // What the executor does through its context (executor.ts)
  // -------------------------------------------------------------------------------------------

  async function preempt(state: unknown): Promise<never> {
    await emitCheckpoint({ attempt, state }, { phase: 'preempted', nextStep: 'resume from this checkpoint' })
    on({ type: 'stopped', stop: 'preempted' })
    throw new Preempted()
  }

  async function blockOn(reason: string, options: { requiredResolution?: string; state?: unknown }): Promise<never> {
    const env: CheckpointEnvelope = { attempt, state: options.state === undefined ? lastState : options.state }
    const checkpoint = await checkpointRecord(env, { phase: 'blocked', nextStep: options.requiredResolution ?? reason })
    on({ type: 'changeBegan', change: 'block' })
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
      on({ type: 'changeEnded' })
    }
    on({ type: 'released' })
    on({ type: 'stopped', stop: 'blocked' })
    throw new Blocked(reason)
  }

  async function publishArtifact(bytes: Uint8Array | string, meta: ArtifactMeta): Promise<Artifact> {
    const content = typeof bytes === 'string' ? utf8Encode(bytes) : bytes
    const contentHash = sha256Tagged(content)
    if (host.blobs !== undefined) await host.blobs.put(content, meta.mediaType)
    const manifest = signArtifactManifest(host, work, content, contentHash, meta)
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
    const record = host.build(
      'ext.missionweaveprotocol.core.resource_usage_record',
      { workItemId, ownershipEpoch: work.ownershipEpoch, executionLeaseId: l.leaseId, usageDelta: delta },
      { groupId: work.groupId, workItemId },
    )
    await answers.sendKept(record, {
      applied: () => {},
      notApplied: () => {
        offlineUsage = addUsage(offlineUsage, delta)
      },
    })
  }

  function makeContext(): SlotContext {
    const item: WorkSnapshot = snapshotOf(work)
    const resumeState = deepFreeze(structuredClone(lastState))
    return Object.freeze({
      item,
      signal: controller.signal,
      attempt,
      resumeState,
      progress: async (report: ProgressReport) => renew(progressOf(report, () => now() + host.expectedDurationMs(work.contract))),
      checkpoint: async (state: unknown, label?: CheckpointLabel) => {
        if (life.preemptionRequested) return preempt(state)
        if ((await emitCheckpoint({ attempt, state }, label)) === 'released') await restart()
      },
      safePoint: async (state?: unknown) => {
        requireLive()
        if (life.preemptionRequested) await preempt(state === undefined ? lastState : state)
      },
      block: (reason: string, options: { requiredResolution?: string; state?: unknown } = {}) => blockOn(reason, options),
      publishArtifact,
      evidence: (input: EvidenceInput) => signEvidence(host, work, input),
      sideEffect: <T>(operationId: string, fn: (key: string) => T | Promise<T>, options: SideEffectOptions = {}) => effects.run(operationId, fn, options),
      sideEffectKey: effects.keyOf,
      reportUsage,
      usage: () => ({ ...usage }),
      token: async () => {
        const l = requireLive()
        if (token?.leaseId !== l.leaseId) {
          const value = await host.tokenFor({ workItemId, ownershipEpoch: work.ownershipEpoch, executionLeaseId: l.leaseId, sessionEpoch: l.sessionEpoch, expiresAt: timestampOf(l.expiresAtMs) })
          token = { leaseId: l.leaseId, value }
        }
        return token.value
      },
    })
  }

  // -------------------------------------------------------------------------------------------
  // How the run ends
  // -------------------------------------------------------------------------------------------

  async function submit(result: ExecutorResult): Promise<void> {
    const { artifactIds, evidence: evidenceList } = submissionOf(result)
    // §11.5: reconcile before submission.
    await sendOnline('work.submit', (l) => ({ workItemId, ownershipEpoch: work.ownershipEpoch, executionLeaseId: l.leaseId, artifactIds, evidence: evidenceList }))
    on({ type: 'released' })
  }

  async function fail(failure: FailureFacts, why: string): Promise<void> {
    const report = signEvidence(host, work, failureReportOf(work, attempt, failure, why))
    await sendOnline('work.fail', (l) => ({ workItemId, reason: `${failure.code}: ${why}`, ownershipEpoch: work.ownershipEpoch, executionLeaseId: l.leaseId, evidence: [report] }))
    on({ type: 'released' })
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
      if (life.stopped !== undefined) return { kind: life.stopped }
      requireLive()
      await submit(result)
      return { kind: 'submitted' }
    } catch (error) {
      if (life.stopped !== undefined) return { kind: life.stopped }
      if (life.lost !== undefined) return { kind: 'lost', error: life.lost }
      return await afterFailure(error)
    }
  }

  return {
    work,
    get lease() {
      return heldLease(life)
    },
    get transitioning() {
      return life.changing !== undefined
    },
    get preemptionRequested() {
      return life.preemptionRequested
    },
    start: startLease,
    async run(executor) {
      const outcome = await settle(executor, makeContext()).catch((error: unknown): SlotOutcome => {
        // A Command of the outcome itself (submit, fail, retry checkpoint) failed: the lease is gone or the Authority refused.
        return { kind: 'lost', error: life.lost ?? ProtocolError.from(error) }
      })
      waiters.fail(life.lost ?? new ProtocolError('WORK_LEASE_EXPIRED', 'the run ended', { retryable: false }))
      return outcome
    },
    requestPreemption() {
      if (!on({ type: 'preemptionRequested' })) return
      if (!controller.signal.aborted) controller.abort(new PreemptionRequested())
    },
    lose,
    async renewIfDue(nowMs) {
      const l = heldLease(life)
      if (l === undefined || life.lost !== undefined || life.changing !== undefined || offlineNow()) return
      if (nowMs < l.renewedAtMs + (l.expiresAtMs - l.renewedAtMs) / 2) return
      await renew(undefined).catch(() => {})
    },
    checkExpiry(nowMs) {
      const l = heldLease(life)
      if (l === undefined || life.lost !== undefined || life.changing !== undefined) return
      const expired = offlineNow() ? !host.offline.withinGrace(l.expiresAtMs, nowMs) : nowMs >= l.expiresAtMs
      if (expired) lose(new ProtocolError('WORK_LEASE_EXPIRED', `the Execution Lease of WorkItem ${workItemId} expired${offlineNow() ? ' and its offline grace ended' : ''}`, { retryable: false }))
    },
    async reconnected(checkpointed) {
      if (life.lost !== undefined || life.stopped !== undefined) return
      if (checkpointed) on({ type: 'restartOwed' })
      try {
        // §19 first: a checkpoint applied without an answer released the lease, a renewal extended it.
        await answers.settle()
        if (life.phase.kind === 'restartOwed') {
          await startLease()
          on({ type: 'restarted' })
        } else {
          const l = heldLease(life)
          if (l !== undefined && now() >= l.expiresAtMs) throw new ProtocolError('WORK_LEASE_EXPIRED', `the Execution Lease of WorkItem ${workItemId} expired while offline`, { retryable: false })
        }
        // §11.5: the offline usage is charged once, now, under the live lease. Not through
        // sendOnline, which would wait for a reconnection this very call is completing; a link
        // that drops again keeps the record unanswered for the next reconnection (the catch below).
        const l = heldLease(life)
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
      on({ type: 'reconciled' })
      waiters.release()
    },
  }
}
