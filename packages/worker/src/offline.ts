/**
 * Bounded offline execution (§11.5), Worker side: telling a lost Group service from a refused
 * Command, the critical `urn:missionweaveprotocol:extension:bounded-offline-execution` binding every
 * buffered Command carries, the durable buffer of signed progress and checkpoints, and
 * reconciliation on reconnect (rebase onto the current session, re-sign, resubmit in order).
 *
 * What may be buffered is what the Authority can reconcile: `work.checkpoint` and
 * `ext.missionweaveprotocol.core.work_execution_lease_renew` (progress). Anything that needs a
 * currently valid lease — Artifact publication, submission, failure, external side effects that are
 * not reversible — waits for reconnection instead (§11.5).
 *
 * Buffered Commands of one WorkItem are coalesced: a checkpoint supersedes the progress and the
 * checkpoints buffered before it (its binding carries their usage), and a progress report
 * supersedes the earlier ones. Only the latest state can be reconciled anyway: once a checkpoint is
 * applied its Execution Lease is released, so a later one under the same lease would be refused.
 * @module
 */
import { ProtocolError, UsageError } from '@weft/codec'
import type { Receipt } from '@weft/client'
import { BOUNDED_OFFLINE_EXECUTION, USAGE_DIMENSIONS, type Command, type OfflineBinding, type UsageDimension } from '@weft/spec'
import type { BufferedCommand, WorkerStore } from './seams.js'

// The binding's shape is the protocol's, shared with the Authority that judges it.
export { BOUNDED_OFFLINE_EXECUTION, type OfflineBinding }

/** The binding version this Worker writes. */
export const OFFLINE_BINDING_VERSION = '1.0.0'

/**
 * The longest lease grace this Worker claims, in seconds. §11.5 only says the grace is bounded;
 * fifteen minutes is the bound the reference Authority accepts.
 */
export const MAX_GRACE_SECONDS = 900

/** Usage in all six dimensions of the Budget Ledger (§12), zeros allowed. */
export type UsageTotals = { readonly [D in UsageDimension]: number }

/** All six usage dimensions at zero. */
export function zeroUsage(): UsageTotals {
  return { financialMicrounits: 0, modelTokens: 0, toolCalls: 0, computeSeconds: 0, wallClockSeconds: 0, externalActions: 0 }
}

/** The dimension-wise sum of `a` and `b` (absent dimensions count as zero). */
export function addUsage(a: Partial<UsageTotals>, b: Partial<UsageTotals>): UsageTotals {
  return Object.fromEntries(USAGE_DIMENSIONS.map((d) => [d, (a[d] ?? 0) + (b[d] ?? 0)])) as UsageTotals
}

/** Whether every dimension of `u` is zero. */
export function isZeroUsage(u: Partial<UsageTotals>): boolean {
  return USAGE_DIMENSIONS.every((d) => (u[d] ?? 0) === 0)
}

/** The Execution Lease a Worker held when it lost the Group service. */
export interface HistoricalLease {
  readonly agentId: string
  readonly groupId: string
  readonly workItemId: string
  readonly sessionEpoch: number
  readonly ownershipEpoch: number
  readonly leaseId: string
  /** Its expiry as the Worker knew it, epoch ms. */
  readonly expiresAtMs: number
}

/**
 * Whether `error`, raised by a transport's `submit`, means the Group service could not be reached
 * rather than that it refused the Command: any thrown value that is neither a `ProtocolError` (a
 * refusal, §19) nor a `UsageError` (local misuse). A Command that failed this way may or may not
 * have been applied; an unchanged retry of the same signed bytes is always safe (§15.1).
 */
export function isTransportUnavailable(error: unknown): boolean {
  return !(error instanceof ProtocolError) && !(error instanceof UsageError)
}

const iso = (ms: number): string => new Date(ms).toISOString()

/** The §11.5 binding of a Command buffered at `bufferedAtMs` under `lease`. */
export function offlineBinding(
  lease: HistoricalLease,
  times: { readonly disconnectedAtMs: number; readonly bufferedAtMs: number; readonly graceMs: number },
  usage: Partial<UsageTotals>,
  originalActionId?: string,
): OfflineBinding {
  return {
    agentId: lease.agentId,
    groupId: lease.groupId,
    workItemId: lease.workItemId,
    originalSessionEpoch: lease.sessionEpoch,
    ownershipEpoch: lease.ownershipEpoch,
    executionLeaseId: lease.leaseId,
    disconnectedAt: iso(times.disconnectedAtMs),
    bufferedAt: iso(times.bufferedAtMs),
    graceDeadline: iso(lease.expiresAtMs + times.graceMs),
    historicalLeaseExpiresAt: iso(lease.expiresAtMs),
    usageDelta: addUsage(zeroUsage(), usage),
    ...(originalActionId === undefined ? {} : { originalActionId }),
  }
}

/** The `extensions` member carrying `binding` (critical, as §11.5 requires). */
export function offlineExtensions(binding: OfflineBinding): NonNullable<Command['extensions']> {
  return { [BOUNDED_OFFLINE_EXECUTION]: { version: OFFLINE_BINDING_VERSION, critical: true, data: binding } }
}

/** The binding carried by a buffered Command, or `undefined`. */
export function bindingOf(command: Pick<Command, 'extensions'>): OfflineBinding | undefined {
  return command.extensions?.[BOUNDED_OFFLINE_EXECUTION]?.data as OfflineBinding | undefined
}

/** The buffered kinds (§11.5: signed progress and checkpoints). */
export type BufferableKind = 'work.checkpoint' | 'ext.missionweaveprotocol.core.work_execution_lease_renew'

/** What {@link OfflineBuffer.reconcile} did with each buffered Command. */
export interface ReconcileReport {
  /** Accepted after rebasing, in buffer order. */
  readonly accepted: readonly { readonly entry: BufferedCommand; readonly receipt: Receipt }[]
  /** Refused by the Authority (dropped from the buffer), in buffer order. */
  readonly refused: readonly { readonly entry: BufferedCommand; readonly error: ProtocolError }[]
  /** `false` when the Group service was still unreachable: the rest stays buffered. */
  readonly complete: boolean
}

/**
 * Rebases a buffered Command onto the current session and submits it: the caller keeps kind,
 * payload, Group, correlation and extensions (the binding among them) and takes a fresh Action ID,
 * `issuedAt` and the current Session and Membership Epochs (§11.5).
 */
export type Resubmit = (command: Command) => Promise<Receipt>

/** The Worker's connection state and its durable buffer of offline Commands (§11.5). */
export interface OfflineBuffer {
  /** Whether the Group service is considered unreachable. */
  readonly offline: boolean
  /** When the loss was first detected, epoch ms; `undefined` while online. */
  readonly disconnectedAtMs: number | undefined
  /** The lease grace, ms. */
  readonly graceMs: number
  /** Records that the Group service is unreachable; the first detection fixes the disconnect time. */
  markDisconnected(nowMs: number): void
  /** Whether work under a lease expiring at `leaseExpiresAtMs` may go on at `nowMs` (§11.5: lease plus bounded grace). */
  withinGrace(leaseExpiresAtMs: number, nowMs: number): boolean
  /**
   * The usage the buffered Commands of `workItemId` that a new Command of `kind` supersedes carry:
   * a new checkpoint must carry it on, since it replaces them.
   */
  carriedUsage(workItemId: string, kind: BufferableKind): UsageTotals
  /**
   * Buffers a signed Command carrying the binding and drops the buffered Commands of the same
   * WorkItem it supersedes (see the module comment).
   * @throws UsageError when the Command has no binding or another kind.
   */
  buffer(command: Command & { readonly kind: BufferableKind }, nowMs: number): BufferedCommand
  /** The buffered Commands of `workItemId` (all when omitted), in buffer order. */
  pending(workItemId?: string): readonly BufferedCommand[]
  /**
   * Resubmits every buffered Command in order through `resubmit`. An accepted or refused Command
   * leaves the buffer; an unreachable service stops the run and keeps the rest. When the whole
   * buffer is through, the Worker is online again.
   */
  reconcile(resubmit: Resubmit): Promise<ReconcileReport>
}

/** Options of {@link createOfflineBuffer}. */
export interface OfflineBufferOptions {
  /** Where buffered Commands survive a crash. */
  readonly store: WorkerStore
  /** The lease grace in seconds, 0 to {@link MAX_GRACE_SECONDS}. Default 300. */
  readonly graceSeconds?: number
}

/**
 * Creates the offline buffer over `store`. A Worker that restarts with Commands still buffered
 * starts offline, so that it reconciles them before anything else.
 * @throws UsageError on a grace outside 0 to {@link MAX_GRACE_SECONDS} seconds.
 */
export function createOfflineBuffer(options: OfflineBufferOptions): OfflineBuffer {
  const { store } = options
  const graceSeconds = options.graceSeconds ?? 300
  if (!Number.isFinite(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_GRACE_SECONDS) {
    throw new UsageError(`offline grace must be 0 to ${MAX_GRACE_SECONDS} seconds (§11.5: the grace is bounded), got ${String(graceSeconds)}`)
  }
  const graceMs = graceSeconds * 1000
  const leftover = store.buffered()
  let offline = leftover.length > 0
  let disconnectedAtMs: number | undefined = leftover[0]?.bufferedAtMs

  const parse = (entry: BufferedCommand): Command => JSON.parse(entry.command) as Command
  /** The buffered entries of `workItemId` a new `kind` Command replaces. */
  const superseded = (workItemId: string, kind: BufferableKind): BufferedCommand[] => store.buffered().filter((e) => e.workItemId === workItemId && (kind === 'work.checkpoint' || e.kind === kind))

  return {
    get offline() {
      return offline
    },
    get disconnectedAtMs() {
      return disconnectedAtMs
    },
    graceMs,
    markDisconnected(nowMs) {
      if (!offline) disconnectedAtMs = nowMs
      offline = true
    },
    withinGrace: (leaseExpiresAtMs, nowMs) => nowMs <= leaseExpiresAtMs + graceMs,
    carriedUsage(workItemId, kind) {
      return superseded(workItemId, kind).reduce<UsageTotals>((sum, e) => addUsage(sum, bindingOf(parse(e))?.usageDelta ?? {}), zeroUsage())
    },
    buffer(command, nowMs) {
      const binding = bindingOf(command)
      if (binding === undefined) throw new UsageError('a buffered Command must carry the bounded offline execution binding (§11.5)')
      if (command.kind !== 'work.checkpoint' && command.kind !== 'ext.missionweaveprotocol.core.work_execution_lease_renew') {
        throw new UsageError(`${command.kind} cannot be buffered offline; only checkpoints and progress can (§11.5)`)
      }
      const replaced = superseded(binding.workItemId, command.kind).map((e) => e.seq)
      const entry = store.bufferCommand({ groupId: binding.groupId, workItemId: binding.workItemId, kind: command.kind, command: JSON.stringify(command), bufferedAtMs: nowMs })
      if (replaced.length > 0) store.dropBuffered(replaced)
      return entry
    },
    pending: (workItemId) => store.buffered().filter((e) => workItemId === undefined || e.workItemId === workItemId),
    async reconcile(resubmit) {
      const accepted: { entry: BufferedCommand; receipt: Receipt }[] = []
      const refused: { entry: BufferedCommand; error: ProtocolError }[] = []
      for (const entry of store.buffered()) {
        try {
          accepted.push({ entry, receipt: await resubmit(parse(entry)) })
        } catch (error) {
          if (isTransportUnavailable(error)) return { accepted, refused, complete: false }
          // A UsageError here means the Worker can no longer sign for this Group (e.g. its Membership ended): as final as a refusal.
          refused.push({ entry, error: ProtocolError.from(error, 'INVALID_COMMAND') })
        }
        store.dropBuffered([entry.seq])
      }
      offline = false
      disconnectedAtMs = undefined
      return { accepted, refused, complete: true }
    },
  }
}
