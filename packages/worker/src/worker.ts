/**
 * `createWorker`: the reference MissionWeaveProtocol Worker runtime (§10.3, §11, §13, §16). It
 * reads its Groups through an {@link EventFeed} into per-Group inboxes and a durable local store,
 * folds them into a projection, decides offers by admission control, queues what it owns in the
 * weighted-fair {@link Scheduler}, runs executors in isolated slots under fenced Execution Leases,
 * preempts cooperatively, retries under the contract's policy and keeps working within a bounded
 * grace while the Group service is unreachable.
 *
 * It meets a Group Authority only through a {@link Transport} (signed Commands out) and an
 * {@link EventFeed} (accepted Events in): in one process `authority.connect()` and
 * `deliveryFeed(createDelivery(authority), agent)`, across the network the WebSocket binding.
 *
 * **Driving it.** Every decision is taken in {@link Worker.tick}: one round of reconciliation,
 * projection changes, offers, renewals, preemption and slot filling, on the injected clock. Tests
 * call `tick()` (or {@link Worker.idle}) and move the clock by hand; a host calls
 * {@link Worker.start}, which ticks whenever Events arrive or a run ends, and on an interval.
 * @module
 */
import { ProtocolError, UsageError, type SigningKey } from '@weft/codec'
import { createClient, newUrnUuid, systemRandom, type Client, type Clock, type EventFeed, type FeedSubscription, type RandomSource, type Receipt, type Transport } from '@weft/client'
import type { CapabilityRef, Command, ErrorCode, Event, EventPayload, OfferDeclineReason, ScheduleEstimate, WorkContract } from '@weft/spec'
import { admissionLimits, decideAdmission, estimateSchedule, expectedDuration, type AdmissionLimits, type ResourceNeeds } from './admission.js'
import type { Scheduler, SchedulerItem, TrackedWork, WorkerStore } from './seams.js'
import { createInbox, type Inbox } from './inbox.js'
import { createMemoryWorkerStore } from './memory-store.js'
import { createOfflineBuffer, isTransportUnavailable, type OfflineBuffer } from './offline.js'
import { createProjection, type Projection } from './projection.js'
import { createDisclosureTracker, type DisclosureOptions, type DisclosureTracker } from './disclosure.js'
import { createScheduler, urgencyLevel } from './scheduler.js'
import { createSlot, type ArtifactSink, type Executor, type ExecutorFn, type Slot, type SlotHost, type SlotOutcome, type SlotTiming, type TokenScope } from './slot.js'

/** The key of the executor that runs any capability without a dedicated one. */
export const DEFAULT_EXECUTOR = 'default'

/** Lease lengths a Worker asks for (§11.3, §11.4), in seconds. */
export interface LeaseOptions {
  /** Ownership after accepting an offer; stretched to cover the disclosed start. Default 3600. */
  readonly ownershipLeaseSeconds: number
  /** Execution Lease at start and renewal; renewed at half. Default 600. */
  readonly executionLeaseSeconds: number
  /** Ownership kept after a checkpoint (preemption, retry back-off). Default 3600. */
  readonly resumeWithinSeconds: number
  /** Ownership kept while blocked. Default 3600. */
  readonly blockedLeaseSeconds: number
}

/** A structured log line of the Worker. */
export interface WorkerLogEntry {
  readonly level: 'info' | 'warn'
  readonly message: string
  readonly workItemId?: string
  readonly code?: string
}

/** Options of {@link createWorker}. */
export interface WorkerOptions {
  /** The Worker Agent; the Registry must bind `signingKey` to it (§6.4). */
  readonly actor: { readonly type: 'agent'; readonly id: string }
  readonly signingKey: SigningKey
  /**
   * The Session Epoch the Organization opened for this runtime (§6.3). A restarted runtime gets a
   * new one (`ext.missionweaveprotocol.identity.session_open`), which revokes its old leases (§11.3).
   */
  readonly sessionEpoch: number
  /** Carries signed Commands to the Authority. */
  readonly transport: Transport
  /** Brings the Events of the Groups the Worker joins (§16). */
  readonly feed: EventFeed
  /** Local state (§11.1); default in memory. A store passed in is not closed by {@link Worker.stop}. */
  readonly store?: WorkerStore
  /** Epoch ms; default `Date.now`. Every lease, back-off and estimate reads it. */
  readonly clock?: Clock
  readonly random?: RandomSource
  /** Declared isolated execution slots: the Agent Card's maximum concurrency (§11.1). */
  readonly slots: number
  /** Executors by capability ID, or {@link DEFAULT_EXECUTOR} for any capability. */
  readonly executors?: Readonly<Record<string, Executor>>
  /** One executor for every capability (same as `executors: { default: executor }`). */
  readonly executor?: Executor
  /** A Group's fair-share weight (§11.1), e.g. from its Organization priority class. Default 1. */
  readonly weights?: (groupId: string) => number
  /** The most WorkItems of one Group running at once. Default unlimited. */
  readonly quotas?: (groupId: string) => number
  /** Waiting this long counts as one urgency level inside a Group. Default 60 s. */
  readonly agingMs?: number
  /** Admission limits (§10.3). */
  readonly admission?: Partial<AdmissionLimits>
  readonly leases?: Partial<LeaseOptions>
  /** Lease grace while the Group service is unreachable, 0 to 900 s (§11.5). Default 300. */
  readonly offlineGraceSeconds?: number
  /** Base delay of retry back-off (§11.4). Default 1000 ms. */
  readonly retryBaseDelayMs?: number
  /**
   * Queued work at or above this urgency (0–3) preempts the lowest-urgency running work of its own
   * Group when every slot is busy (§11.3); `false` turns the rule off. Default 3 (critical).
   */
  readonly preemptAtUrgency?: number | false
  /** Where Artifact bytes and checkpoint states are stored, e.g. the Authority's blob store. */
  readonly blobs?: ArtifactSink
  /** The retrieval URI of Artifact bytes by content hash. Default `urn:weft:blob:<hex>`. */
  readonly artifactUri?: (contentHash: string) => string
  /** Fetches the capability token of a lease from the Authorization Service (§12). */
  readonly tokenFor?: (scope: TokenScope) => unknown
  readonly logger?: (entry: WorkerLogEntry) => void
  /**
   * Re-disclosure of queued work's schedule (§11.2) as a Message in the WorkItem's Conversation,
   * on a material change and rate-limited; `false` turns it off. See {@link DisclosureOptions}.
   */
  readonly disclosure?: Partial<DisclosureOptions> | false
}

/** One admission decision (§10.3), kept locally: core has no Command for a decline. */
export interface AdmissionRecord {
  readonly workItemId: string
  readonly groupId: string
  readonly atMs: number
  /** `accepted`: the Authority took the acceptance; `declined`: admission said no; `refused`: the Authority refused the acceptance. */
  readonly decision: 'accepted' | 'declined' | 'refused'
  readonly reason?: OfferDeclineReason
  readonly detail?: string
  readonly code?: ErrorCode
  readonly scheduleEstimate?: ScheduleEstimate
}

/** How one run in a slot ended. */
export interface RunRecord {
  readonly workItemId: string
  readonly groupId: string
  readonly atMs: number
  readonly outcome: SlotOutcome['kind'] | 'start_refused'
  readonly attempt?: number
  readonly code?: string
}

/** What the Worker holds right now, for operators and tests. */
export interface WorkerSnapshot {
  /** Queued in the Scheduler, by Group then WorkItem ID. */
  readonly queued: readonly { readonly groupId: string; readonly workItemId: string; readonly urgency: number }[]
  /** Running in slots. */
  readonly active: readonly string[]
  /** Waiting out a retry back-off, with the time it ends. */
  readonly backoff: readonly { readonly workItemId: string; readonly untilMs: number }[]
  readonly offline: boolean
}

/** The Worker runtime. */
export interface Worker {
  readonly actor: { readonly type: 'agent'; readonly id: string }
  /** The client signing this Worker's Commands (its epochs are learned from the feed). */
  readonly client: Client
  /** The folded per-Group view (read it, never write it). */
  readonly projection: Projection
  readonly scheduler: Scheduler
  /** Whether the Group service is considered unreachable (§11.5). */
  readonly offline: boolean
  /**
   * Subscribes to `groupIds` from the stored Cursor of each (§16) and feeds its inbox.
   * @throws ProtocolError `GROUP_NOT_FOUND` from the feed for a Group the Worker may not read.
   */
  join(groupIds: readonly string[]): void
  /** One decision round on the current clock; resolves when the Commands it sent are answered (runs go on). */
  tick(): Promise<void>
  /**
   * Ticks until no slot is busy and nothing can be started now. Executors that wait for something
   * outside the Worker keep it from resolving.
   */
  idle(): Promise<void>
  /** Ticks by itself: when Events arrive, when a run ends and every `intervalMs` (default 1000). */
  start(options?: { readonly intervalMs?: number }): void
  /**
   * Stops ticking and closes the subscriptions; running executors are told their lease is gone
   * (signal raised; their slots send no further Command and run no further side effect). Executors
   * are not awaited. Like a crash, as far as the Authority can tell: leases run out or are revoked
   * by the next session (§11.3, §11.5).
   */
  stop(): Promise<void>
  /** Asks the executor running `workItemId` to stop at its next safe point (§11.3); `false` when it is not running. */
  preempt(workItemId: string): boolean
  /** Every admission decision so far, oldest first. */
  decisions(): readonly AdmissionRecord[]
  /** Every run outcome so far, oldest first. */
  runs(): readonly RunRecord[]
  snapshot(): WorkerSnapshot
}

const DEFAULT_LEASES: LeaseOptions = { ownershipLeaseSeconds: 3600, executionLeaseSeconds: 600, resumeWithinSeconds: 3600, blockedLeaseSeconds: 3600 }
const MAX_RELATIVE_SECONDS = 31_536_000
const HELD_STATES: ReadonlySet<string> = new Set(['queued', 'active', 'blocked'])

/** What the Worker keeps of an assignment: the pinned card and capability versions (§6.1). */
interface Pins {
  readonly ownershipEpoch: number
  readonly agentCardVersion: number
  readonly capabilityPins: readonly CapabilityRef[]
}

interface Running {
  readonly slot: Slot
  readonly urgency: number
  done: Promise<void>
}

function positiveInteger(value: unknown, name: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1) throw new UsageError(`createWorker: ${name} must be a positive integer, got ${String(value)}`)
  return value as number
}

function checkOptions(options: WorkerOptions): void {
  if (options?.actor?.type !== 'agent' || typeof options.actor.id !== 'string') throw new UsageError('createWorker: actor must be { type: "agent", id } (only Agents execute WorkItems, §3)')
  positiveInteger(options.slots, 'slots')
  positiveInteger(options.sessionEpoch, 'sessionEpoch')
  if (typeof options.transport?.submit !== 'function') throw new UsageError('createWorker: transport must have submit(command, bytes)')
  if (typeof options.feed?.subscribe !== 'function' || typeof options.feed.ack !== 'function') throw new UsageError('createWorker: feed must be an EventFeed (subscribe, ack)')
  if (options.executor === undefined && Object.keys(options.executors ?? {}).length === 0) throw new UsageError('createWorker: give an executor or executors by capability ID')
  const p = options.preemptAtUrgency
  if (p !== undefined && p !== false && !(Number.isInteger(p) && p >= 0 && p <= 3)) throw new UsageError('createWorker: preemptAtUrgency must be 0 to 3 or false')
  for (const [name, value] of Object.entries(options.leases ?? {})) {
    if (value !== undefined) positiveInteger(value, `leases.${name}`)
    if (typeof value === 'number' && value > MAX_RELATIVE_SECONDS) throw new UsageError(`createWorker: leases.${name} is above one year`)
  }
}

function runOf(executor: Executor): ExecutorFn {
  return typeof executor === 'function' ? executor : executor.run
}

/** A deferred wake-up for {@link Worker.idle}. */
function signal(): { promise: Promise<void>; fire: () => void } {
  let fire!: () => void
  const promise = new Promise<void>((resolve) => (fire = resolve))
  return { promise, fire }
}

/**
 * Creates a Worker. Local state already in `store` (a restart) is folded back into the
 * projection at once, so the queues are what they were (§11.1); Commands left in the offline buffer
 * are reconciled on the first tick before anything else (§11.5).
 * @throws UsageError on malformed options.
 * @example
 * ```ts
 * const worker = createWorker({
 *   actor: { type: 'agent', id: workerId }, signingKey, sessionEpoch: 1,
 *   transport: authority.connect(), feed: deliveryFeed(createDelivery(authority), { type: 'agent', id: workerId }),
 *   slots: 2,
 *   executor: async (item, ctx) => {
 *     const artifact = await ctx.publishArtifact('patch', { mediaType: 'text/x-diff' })
 *     const evidence = ctx.evidence({ type: 'deterministic_test', criterionIds: ['tests-pass'], method: 'npm test', result: 'passed', artifactHashes: [artifact.contentHash] })
 *     return { artifacts: [artifact], evidence: [evidence] }
 *   },
 * })
 * worker.join([groupId])
 * worker.start()
 * ```
 */
export function createWorker(options: WorkerOptions): Worker {
  checkOptions(options)
  const actor = Object.freeze({ type: 'agent' as const, id: options.actor.id })
  const self = actor.id
  const clock = options.clock ?? Date.now
  const random = options.random ?? systemRandom
  const ownsStore = options.store === undefined
  const store = options.store ?? createMemoryWorkerStore()
  const limits = admissionLimits(options.admission)
  const leases: LeaseOptions = { ...DEFAULT_LEASES, ...Object.fromEntries(Object.entries(options.leases ?? {}).filter(([, v]) => v !== undefined)) }
  const executors: Readonly<Record<string, Executor>> = { ...(options.executor === undefined ? {} : { [DEFAULT_EXECUTOR]: options.executor }), ...options.executors }
  const preemptAt = options.preemptAtUrgency ?? 3
  const disclosure: DisclosureTracker | undefined = options.disclosure === false ? undefined : createDisclosureTracker(self, options.disclosure)
  const log = (entry: WorkerLogEntry): void => options.logger?.(entry)
  const offline: OfflineBuffer = createOfflineBuffer({ store, ...(options.offlineGraceSeconds === undefined ? {} : { graceSeconds: options.offlineGraceSeconds }) })

  // Every Command goes through here: a transport failure marks the Worker offline (§11.5).
  const transport: Transport = {
    submit: async (command, bytes) => {
      try {
        return await options.transport.submit(command, bytes)
      } catch (error) {
        if (isTransportUnavailable(error)) {
          offline.markDisconnected(clock())
          wake()
        }
        throw error
      }
    },
  }
  const client = createClient({ actor, signingKey: options.signingKey, transport, clock, random })
  client.epochs.setSession(options.sessionEpoch)

  const projection = createProjection(self)
  const scheduler = createScheduler({
    ...(options.weights === undefined ? {} : { weightOf: options.weights }),
    ...(options.quotas === undefined ? {} : { quotaOf: options.quotas }),
    ...(options.agingMs === undefined ? {} : { agingMs: options.agingMs }),
  })

  const joined = new Set<string>()
  const subscriptions: FeedSubscription[] = []
  const running = new Map<string, Running>()
  /**
   * Slots whose work.start lost its answer (§19), by WorkItem: the Authority may have started the
   * WorkItem under a lease only that start's receipt names. The next launch for the same Ownership
   * Epoch takes the slot again, and it sends the same start, whose receipt (the first, if it was
   * applied) gives the lease.
   */
  const unstarted = new Map<string, Slot>()
  /** What this Worker put in the Scheduler, by WorkItem: the facts of each queued item. */
  const enqueued = new Map<string, SchedulerItem>()
  /** When each owned WorkItem first became ready: the basis of aging, kept across preemption. */
  const readyAt = new Map<string, number>()
  const backoff = new Map<string, number>()
  const held = new Set<string>()
  const offers = new Map<string, TrackedWork>()
  const decided = new Set<string>()
  const accepting = new Set<string>()
  const needsApproval = new Set<string>()
  const preemptedFor = new Set<string>()
  const pins = new Map<string, Pins>()
  const decisionLog: AdmissionRecord[] = []
  const runLog: RunRecord[] = []
  let started = false
  let stopped = false
  let timer: ReturnType<typeof setInterval> | undefined
  let tickQueued = false
  let chain: Promise<void> = Promise.resolve()
  let waker = signal()
  let generation = 0

  /** Something changed: wake {@link Worker.idle}, and tick soon when running by itself. */
  function wake(): void {
    generation++
    waker.fire()
    waker = signal()
    if (started && !stopped && !tickQueued) {
      tickQueued = true
      setImmediate(() => {
        tickQueued = false
        if (started && !stopped) void tick().catch((error: unknown) => log({ level: 'warn', message: `tick failed: ${String(error)}` }))
      })
    }
  }

  /** Learns what the projection does not keep: epochs (§6.3, §8) and assignment pins (§6.1). */
  function observe(events: readonly Event[]): void {
    client.observe(events)
    disclosure?.observe(events)
    for (const event of events) {
      if (event.kind !== 'work.offer.accepted') continue
      const p = event.payload as EventPayload<'work.offer.accepted'>
      if (p.assigneeId === self) pins.set(p.workItemId, { ownershipEpoch: p.ownershipEpoch, agentCardVersion: p.agentCardVersion, capabilityPins: p.capabilityPins })
    }
  }

  const inbox: Inbox = createInbox({
    store,
    projection,
    onApplied: (events) => {
      observe(events)
      const last = events.at(-1)
      if (last?.groupId !== undefined && last.sequence !== undefined) {
        store.setAcked(last.groupId, last.sequence)
        // §16: the ACK permits delivery cleanup; a failed ACK is repeated with the next run.
        try {
          void Promise.resolve(options.feed.ack(last.groupId, last.sequence)).catch(() => {})
        } catch {
          // The feed refused the ACK (e.g. access ended); the next Event says more.
        }
      }
      wake()
    },
  })
  // §11.1: a restart folds the stored logs back; the Scheduler is re-synced on the first tick.
  inbox.rebuild()
  for (const groupId of store.groups()) observe(store.events(groupId))

  const host: SlotHost = {
    actor,
    signingKey: options.signingKey,
    store,
    offline,
    timing: {
      leaseSeconds: leases.executionLeaseSeconds,
      resumeWithinSeconds: leases.resumeWithinSeconds,
      blockedLeaseSeconds: leases.blockedLeaseSeconds,
      baseRetryDelayMs: options.retryBaseDelayMs ?? 1000,
    } satisfies SlotTiming,
    blobs: options.blobs,
    artifactUri: options.artifactUri ?? ((hash) => `urn:weft:blob:${hash.slice('sha256:'.length)}`),
    tokenFor: (scope) => options.tokenFor?.(scope),
    now: () => clock(),
    newId: () => newUrnUuid(random),
    build: (kind, payload, opts) => client.build(kind, payload, opts),
    submit: (built) => client.resend(built),
    expectedDurationMs: (contract) => durationOf(contract),
  }

  function executorFor(contract: WorkContract): Executor | undefined {
    for (const need of contract.requiredCapabilities) {
      const e = executors[need.id]
      if (e !== undefined) return e
    }
    return executors[DEFAULT_EXECUTOR]
  }

  function durationOf(contract: WorkContract): number {
    const e = executorFor(contract)
    return typeof e === 'object' && e.expectedDurationMs !== undefined ? e.expectedDurationMs : expectedDuration(limits, contract)
  }

  function needsOf(id: string): ResourceNeeds | undefined {
    const e = executors[id] ?? executors[DEFAULT_EXECUTOR]
    return typeof e === 'object' ? e.needs : undefined
  }

  /** The pins of the current assignment: from live Events, else from the stored log (after a restart). */
  function pinsOf(w: TrackedWork): Pins | undefined {
    const known = pins.get(w.workItemId)
    if (known?.ownershipEpoch === w.ownershipEpoch) return known
    const found = store
      .events(w.groupId)
      .filter((e) => e.kind === 'work.offer.accepted')
      .map((e) => e.payload as EventPayload<'work.offer.accepted'>)
      .findLast((p) => p.workItemId === w.workItemId && p.assigneeId === self && p.ownershipEpoch === w.ownershipEpoch)
    if (found === undefined) return undefined
    const p: Pins = { ownershipEpoch: found.ownershipEpoch, agentCardVersion: found.agentCardVersion, capabilityPins: found.capabilityPins }
    pins.set(w.workItemId, p)
    return p
  }

  /**
   * §8: a late joiner receives nothing up to its visibility start, which its own Membership
   * announces; an empty log of that Group starts there instead of waiting for sequence 1.
   */
  function lateStart(event: Event): void {
    const groupId = event.groupId
    if (event.kind !== 'membership.changed' || groupId === undefined || inbox.cursor(groupId) !== 0) return
    const m = (event.payload as EventPayload<'membership.changed'>).membership
    if (m.member.type === 'agent' && m.member.id === self && m.visibilityStartSequence > 0) inbox.startAfter(groupId, m.visibilityStartSequence)
  }

  // -------------------------------------------------------------------------------------------
  // Queue projection: what the Scheduler holds follows the projection (§11.1, §11.3)
  // -------------------------------------------------------------------------------------------

  /** Whether `w` may be started now as far as this Worker can tell (§10.4, §11.3). */
  function ready(w: TrackedWork, nowMs: number): boolean {
    // An `active` one is ready only with a start whose answer was lost: its slot sends that start again.
    const startable = w.state === 'queued' || (w.state === 'active' && unstarted.get(w.workItemId)?.work.ownershipEpoch === w.ownershipEpoch)
    if (w.owner !== self || !startable || w.contract === undefined || backoff.has(w.workItemId)) return false
    const startBy = w.startBy ?? w.ownershipLeaseExpiresAt
    if (startBy !== undefined && nowMs >= Date.parse(startBy)) return false
    const group = projection.group(w.groupId)
    return w.dependencyIds.every((d) => group?.verified.has(d) === true)
  }

  /** §12: work whose contract (or the Authority) requires an Execution Approval waits behind a risk gate until one for its epoch is live. */
  function gated(w: TrackedWork, nowMs: number): boolean {
    const required = w.contract?.executionApproval !== 'not_required' || needsApproval.has(w.workItemId)
    if (!required) return false
    const a = w.executionApproval
    return a === undefined || a.ownershipEpoch !== w.ownershipEpoch || nowMs >= Date.parse(a.expiresAt)
  }

  function dequeue(id: string): void {
    if (enqueued.delete(id)) scheduler.remove(id)
    preemptedFor.delete(id)
  }

  /** Re-syncs one WorkItem: offers to decide, held set, slot fencing and the Scheduler entry. */
  function resync(w: TrackedWork, nowMs: number): void {
    const id = w.workItemId
    if (!joined.has(w.groupId)) return
    if (w.owner === self && HELD_STATES.has(w.state)) held.add(id)
    else held.delete(id)
    const offered = w.state === 'offered' && w.owner === undefined && w.offeredTo.includes(self) && w.offerExpiresAt !== undefined && nowMs < Date.parse(w.offerExpiresAt)
    if (offered) offers.set(id, w)
    else offers.delete(id)
    const run = running.get(id)
    if (run !== undefined) return fence(run.slot, w)
    if (unstarted.has(id) && (w.owner !== self || unstarted.get(id)!.work.ownershipEpoch !== w.ownershipEpoch)) unstarted.delete(id)
    if (!ready(w, nowMs)) return dequeue(id)
    const contract = w.contract!
    const item: SchedulerItem = {
      id,
      groupId: w.groupId,
      urgency: urgencyLevel(contract.requestedUrgency),
      deadlineMs: Date.parse(contract.deadline),
      readyAtMs: readyAt.get(id) ?? nowMs,
      riskGated: gated(w, nowMs),
    }
    readyAt.set(id, item.readyAtMs)
    const before = enqueued.get(id)
    // §11.3: a changed urgency, deadline or gate reorders at once; an unchanged item keeps its place.
    if (before !== undefined && before.urgency === item.urgency && before.deadlineMs === item.deadlineMs && before.riskGated === item.riskGated) return
    enqueued.set(id, item)
    scheduler.enqueue(item)
  }

  /** §11.3: a slot whose owner, epoch or lease the log no longer shows has lost its lease. */
  function fence(slot: Slot, w: TrackedWork): void {
    if (slot.transitioning) return
    // A projection behind the Event that issued or renewed the slot's lease (the feed lags the
    // receipts) describes an older state: nothing in it can have closed that lease.
    const issued = slot.lease?.sequence
    if (issued !== undefined && (projection.group(w.groupId)?.head ?? 0) < issued) return
    if (w.owner !== self || w.ownershipEpoch !== slot.work.ownershipEpoch) {
      slot.lose(new ProtocolError('WORK_STALE_OWNERSHIP', `WorkItem ${w.workItemId} is no longer owned under Ownership Epoch ${slot.work.ownershipEpoch}`, { retryable: false }))
      return
    }
    const lease = slot.lease
    if (lease !== undefined && (w.state !== 'active' || (w.executionLeaseId !== undefined && w.executionLeaseId !== lease.leaseId))) {
      slot.lose(new ProtocolError('WORK_LEASE_EXPIRED', `Execution Lease ${lease.leaseId} of WorkItem ${w.workItemId} was closed (${w.state})`, { retryable: false }))
    }
  }

  function resyncAll(nowMs: number): void {
    for (const group of projection.view.groups.values()) for (const w of group.work.values()) resync(w, nowMs)
  }

  /** Drains projection changes; a Group with a change also re-checks its ready set (a dependency may have been verified, §10.4). */
  function drain(nowMs: number): void {
    const touched = new Set<string>()
    for (const w of projection.drainChanges()) {
      resync(w, nowMs)
      touched.add(w.groupId)
    }
    for (const groupId of touched) for (const w of projection.readyForMe(groupId)) if (!enqueued.has(w.workItemId)) resync(w, nowMs)
  }

  // -------------------------------------------------------------------------------------------
  // Admission (§10.3)
  // -------------------------------------------------------------------------------------------

  /**
   * How many queued WorkItems would start before `w` if it were queued now: the Scheduler's own
   * estimate for a probe entry with `w`'s ordering facts, taken out again at once. §11.2: a count
   * of its own Group plus a weight share of the others, never their names or positions.
   */
  function aheadOf(w: TrackedWork, nowMs: number): number {
    const contract = w.contract!
    const probe = `${w.workItemId}#admission`
    scheduler.enqueue({ id: probe, groupId: w.groupId, urgency: urgencyLevel(contract.requestedUrgency), deadlineMs: Date.parse(contract.deadline), readyAtMs: nowMs })
    const ahead = scheduler.estimatedPosition(probe) ?? scheduler.size
    scheduler.remove(probe)
    return ahead
  }

  async function decideOffers(nowMs: number): Promise<void> {
    for (const [id, w] of [...offers].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (offline.offline) return
      const key = `${id}@${w.offerExpiresAt}`
      if (decided.has(key) || accepting.has(id) || w.contract === undefined) continue
      const group = projection.group(w.groupId)
      const decision = decideAdmission(
        { workItemId: id, groupId: w.groupId, contract: w.contract, dependencies: w.dependencyIds.map((d) => ({ workItemId: d, state: group?.work.get(d)?.state })) },
        { nowMs, slots: options.slots, active: running.size, held: held.size + accepting.size, ahead: aheadOf(w, nowMs) },
        { ...limits, expectedDurationMs: durationOf(w.contract) },
        { hasExecutor: (cap) => executors[cap] !== undefined || executors[DEFAULT_EXECUTOR] !== undefined, needsOf, member: (g) => client.epochs.membership(g) !== undefined },
      )
      const base = { workItemId: id, groupId: w.groupId, atMs: nowMs }
      if (!decision.accept) {
        decided.add(key)
        decisionLog.push({ ...base, decision: 'declined', reason: decision.reason, detail: decision.detail })
        log({ level: 'info', message: `declined offer (${decision.reason}): ${decision.detail}`, workItemId: id })
        continue
      }
      const startMs = Date.parse(decision.scheduleEstimate.estimatedStart)
      // §11.3: the start-by deadline is the ownership lease's end, so it must cover the disclosed start.
      const ownershipLeaseSeconds = Math.min(MAX_RELATIVE_SECONDS, Math.max(leases.ownershipLeaseSeconds, Math.ceil((startMs - nowMs) / 1000) + leases.executionLeaseSeconds))
      accepting.add(id)
      try {
        await client.workAcceptOffer({ workItemId: id, ownershipLeaseSeconds, scheduleEstimate: decision.scheduleEstimate }, { groupId: w.groupId })
        decided.add(key)
        decisionLog.push({ ...base, decision: 'accepted', scheduleEstimate: decision.scheduleEstimate })
      } catch (error) {
        if (isTransportUnavailable(error)) return
        decided.add(key)
        const e = ProtocolError.from(error)
        decisionLog.push({ ...base, decision: 'refused', code: e.code, detail: e.message })
        log({ level: 'info', message: `acceptance refused: ${e.message}`, workItemId: id, code: e.code })
      } finally {
        accepting.delete(id)
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Slots (§11.1, §11.3)
  // -------------------------------------------------------------------------------------------

  function record(w: { readonly workItemId: string; readonly groupId: string }, outcome: RunRecord['outcome'], extra: { attempt?: number; code?: string } = {}): void {
    runLog.push({ workItemId: w.workItemId, groupId: w.groupId, atMs: clock(), outcome, ...extra })
  }

  function ended(slot: Slot, outcome: SlotOutcome): void {
    const id = slot.work.workItemId
    running.delete(id)
    if (stopped) return
    scheduler.release(id)
    if (outcome.kind === 'retry') backoff.set(id, clock() + outcome.delayMs)
    const extra = outcome.kind === 'retry' ? { attempt: outcome.attempt } : outcome.kind === 'lost' ? { code: outcome.error.code } : outcome.kind === 'failed' ? { code: outcome.failure.code } : {}
    record(slot.work, outcome.kind, extra)
    if (outcome.kind === 'lost') log({ level: 'warn', message: `lease lost: ${outcome.error.message}`, workItemId: id, code: outcome.error.code })
    // The item left its slot: what the log says about it now decides whether it queues again (§11.3 step 5).
    const w = projection.work(id)
    if (w !== undefined) resync(w, clock())
    wake()
  }

  async function launch(w: TrackedWork, item: SchedulerItem): Promise<void> {
    const id = w.workItemId
    const assignment = pinsOf(w)
    const executor = w.contract === undefined ? undefined : executorFor(w.contract)
    if (assignment === undefined || executor === undefined || w.contract === undefined) {
      scheduler.release(id)
      log({ level: 'warn', message: 'cannot start: the assignment or an executor is unknown', workItemId: id })
      return
    }
    // §19: a slot whose start lost its answer is taken again, so that it sends the same start.
    const parked = unstarted.get(id)
    unstarted.delete(id)
    const slot = parked?.work.ownershipEpoch === w.ownershipEpoch ? parked : createSlot(host, {
      workItemId: id,
      groupId: w.groupId,
      missionId: w.missionId,
      ownershipEpoch: w.ownershipEpoch,
      contract: w.contract,
      dependencyIds: w.dependencyIds,
      agentCardVersion: assignment.agentCardVersion,
      capabilityPins: assignment.capabilityPins,
    })
    const run: Running = { slot, urgency: item.urgency, done: Promise.resolve() }
    running.set(id, run)
    try {
      await slot.start()
    } catch (error) {
      running.delete(id)
      scheduler.release(id)
      if (isTransportUnavailable(error)) {
        unstarted.set(id, slot)
        return
      }
      const e = ProtocolError.from(error)
      // §12: the Authority's policy may gate work the contract does not; wait for an approval Event.
      if (e.code === 'APPROVAL_REQUIRED') needsApproval.add(id)
      record(w, 'start_refused', { code: e.code })
      log({ level: 'warn', message: `start refused: ${e.message}`, workItemId: id, code: e.code })
      const now = projection.work(id)
      if (now !== undefined && e.code === 'APPROVAL_REQUIRED') resync(now, clock())
      return
    }
    backoff.delete(id)
    needsApproval.delete(id)
    run.done = slot.run(runOf(executor)).then((outcome) => ended(slot, outcome))
  }

  async function fill(nowMs: number): Promise<void> {
    while (running.size < options.slots && !offline.offline) {
      const item = scheduler.pick(nowMs)
      if (item === undefined) return
      enqueued.delete(item.id)
      preemptedFor.delete(item.id)
      // §11.1 aging counts time spent waiting in the queue: work that ran (and is preempted,
      // checkpointed or blocked) re-enters with a fresh ready time, never ahead of what preempted it.
      readyAt.delete(item.id)
      const w = projection.work(item.id)
      if (w === undefined || !ready(w, nowMs)) {
        scheduler.release(item.id)
        continue
      }
      await launch(w, item)
    }
  }

  /**
   * §11.2: a queued WorkItem whose estimate changed materially since the Group last heard it gets
   * one revised estimate in its Conversation. The estimate is built like the acceptance's, from the
   * Scheduler's coarse count of work ahead, this Worker's slots and the expected duration; nothing
   * of another Group enters the Message. Active work revises its estimate through `ctx.progress`.
   */
  async function discloseQueued(nowMs: number): Promise<void> {
    if (disclosure === undefined || offline.offline) return
    disclosure.retain(held)
    for (const [id, item] of [...enqueued]) {
      const w = projection.work(id)
      if (w?.contract === undefined || !disclosure.due(id, item.groupId, nowMs)) continue
      const ahead = scheduler.estimatedPosition(id) ?? scheduler.size
      // The WorkItem is one of the held ones: counting it again would overstate the load.
      const estimate = estimateSchedule({ nowMs, slots: options.slots, active: running.size, held: Math.max(0, held.size - 1), ahead }, limits, durationOf(w.contract))
      const plan = disclosure.review(id, item.groupId, estimate, nowMs)
      if (plan === undefined) continue
      try {
        await client.messagePost({ messageId: newUrnUuid(random), conversationId: plan.conversationId, content: plan.content }, { groupId: item.groupId, workItemId: id, conversationId: plan.conversationId })
        disclosure.posted(id, item.groupId, estimate, nowMs)
      } catch (error) {
        if (isTransportUnavailable(error)) return
        const e = ProtocolError.from(error)
        // §20: a refused post waits out its interval; a rate refusal also holds the Group back for its window.
        disclosure.refused(id, item.groupId, nowMs, e.code === 'RATE_LIMITED' ? 60_000 : 0)
        log({ level: 'info', message: `schedule disclosure refused: ${e.message}`, workItemId: id, code: e.code })
      }
    }
  }

  /**
   * §11.3: when every slot is busy, queued work at or above the preemption urgency asks the
   * lowest-urgency running work of its own Group (urgency orders work only inside a Group, §11.1)
   * to stop at its next safe point. One request per queued item.
   */
  function preemptForUrgent(): void {
    if (preemptAt === false || running.size < options.slots) return
    for (const item of enqueued.values()) {
      if (item.urgency < preemptAt || item.riskGated === true || preemptedFor.has(item.id)) continue
      let victim: Running | undefined
      for (const r of running.values()) {
        if (r.slot.work.groupId !== item.groupId || r.urgency >= item.urgency || r.slot.preemptionRequested) continue
        if (victim === undefined || r.urgency < victim.urgency) victim = r
      }
      if (victim === undefined) continue
      preemptedFor.add(item.id)
      victim.slot.requestPreemption()
      log({ level: 'info', message: `preemption requested for ${item.id}`, workItemId: victim.slot.work.workItemId })
    }
  }

  // -------------------------------------------------------------------------------------------
  // Offline reconciliation (§11.5)
  // -------------------------------------------------------------------------------------------

  /** Rebases a buffered Command onto the current session: new Action ID, `issuedAt` and epochs; same payload and binding. */
  function resubmit(command: Command): Promise<Receipt> {
    const built = client.build(command.kind as never, command.payload as never, {
      ...(command.groupId === undefined ? {} : { groupId: command.groupId }),
      ...(command.workItemId === undefined ? {} : { workItemId: command.workItemId }),
      correlationId: command.correlationId,
      ...(command.extensions === undefined ? {} : { extensions: command.extensions }),
    })
    return client.resend(built)
  }

  async function reconnect(nowMs: number): Promise<void> {
    const report = await offline.reconcile(resubmit)
    for (const r of report.refused) log({ level: 'warn', message: `buffered ${r.entry.kind} refused on reconciliation: ${r.error.message}`, workItemId: r.entry.workItemId, code: r.error.code })
    if (!report.complete) return
    const checkpointed = new Set(report.accepted.filter((a) => a.entry.kind === 'work.checkpoint').map((a) => a.entry.workItemId))
    for (const r of [...running.values()]) await r.slot.reconnected(checkpointed.has(r.slot.work.workItemId))
    resyncAll(nowMs)
    wake()
  }

  // -------------------------------------------------------------------------------------------
  // The round
  // -------------------------------------------------------------------------------------------

  async function round(): Promise<void> {
    if (stopped) return
    let nowMs = clock()
    // §11.5: reconcile before any other Command.
    if (offline.offline) await reconnect(nowMs)
    drain(nowMs)
    for (const [id, until] of backoff) {
      if (until > nowMs) continue
      backoff.delete(id)
      const w = projection.work(id)
      if (w !== undefined) resync(w, nowMs)
    }
    if (offline.offline) {
      for (const r of running.values()) r.slot.checkExpiry(nowMs)
      return
    }
    await decideOffers(nowMs)
    nowMs = clock()
    for (const r of [...running.values()]) {
      r.slot.checkExpiry(nowMs)
      await r.slot.renewIfDue(nowMs)
    }
    drain(nowMs)
    preemptForUrgent()
    await fill(nowMs)
    await discloseQueued(clock())
  }

  function tick(): Promise<void> {
    const next = chain.then(round)
    chain = next.catch(() => {})
    return next
  }

  return {
    actor,
    client,
    projection,
    scheduler,
    get offline() {
      return offline.offline
    },
    join(groupIds) {
      const fresh = [...new Set(groupIds)].filter((g) => !joined.has(g))
      if (fresh.length === 0) return
      for (const g of fresh) joined.add(g)
      try {
        const subscription = options.feed.subscribe(
          fresh.map((groupId) => ({ groupId, afterSequence: inbox.cursor(groupId) })),
          {
            onEvent: (event) => {
              try {
                inbox.receive(event)
                lateStart(event)
              } catch (error) {
                log({ level: 'warn', message: `Event ${event.eventId} not taken: ${String(error)}`, code: ProtocolError.from(error).code })
              }
            },
            onError: (error, groupId) => log({ level: 'warn', message: `Group ${groupId}: ${error.message}`, code: error.code }),
          },
        )
        subscriptions.push(subscription)
      } catch (error) {
        for (const g of fresh) joined.delete(g)
        throw error
      }
      // Items folded before the join (a restart) belong to these Groups now.
      resyncAll(clock())
      wake()
    },
    tick,
    async idle() {
      for (;;) {
        const woken = waker.promise
        const seen = generation
        await tick()
        // Idle only after a round in which nothing happened that the round may have missed.
        if (running.size === 0 && generation === seen) return
        await Promise.race([Promise.all([...running.values()].map((r) => r.done)), woken])
      }
    },
    start(opts = {}) {
      if (started) return
      started = true
      stopped = false
      const intervalMs = opts.intervalMs ?? 1000
      timer = setInterval(() => wake(), intervalMs)
      timer.unref?.()
      wake()
    },
    async stop() {
      stopped = true
      started = false
      if (timer !== undefined) clearInterval(timer)
      for (const s of subscriptions.splice(0)) s.close()
      for (const r of running.values()) r.slot.lose(new ProtocolError('WORK_LEASE_EXPIRED', 'the Worker stopped', { retryable: false }))
      // Executors are not awaited: one that ignores its signal must not hold the stop, and its slot sends nothing more.
      await chain
      if (ownsStore) store.close()
    },
    preempt(workItemId) {
      const r = running.get(workItemId)
      if (r === undefined) return false
      r.slot.requestPreemption()
      return true
    },
    decisions: () => [...decisionLog],
    runs: () => [...runLog],
    snapshot: () => ({
      queued: [...enqueued.values()].map((i) => ({ groupId: i.groupId, workItemId: i.id, urgency: i.urgency })).sort((a, b) => (a.groupId === b.groupId ? (a.workItemId < b.workItemId ? -1 : 1) : a.groupId < b.groupId ? -1 : 1)),
      active: [...running.keys()].sort(),
      backoff: [...backoff].map(([workItemId, untilMs]) => ({ workItemId, untilMs })),
      offline: offline.offline,
    }),
  }
}
