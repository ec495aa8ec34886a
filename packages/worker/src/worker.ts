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
 *
 * **Its loops.** This module drives the rounds; each loop of a round is a module of its own over
 * the parts and state they share (worker-state.ts): the queue projection (worker-queue.ts), offers
 * and schedule disclosure (worker-offers.ts), filling and launching slots (worker-launch.ts) and
 * reconnection (worker-recovery.ts).
 * @module
 */
import { ProtocolError, UsageError, type SigningKey } from '@weft/codec'
import { systemClock } from '@weft/codec/time'
import { createClient, systemRandom, type Client, type Clock, type EventFeed, type FeedSubscription, type RandomSource, type Transport } from '@weft/client'
import { type ErrorCode, type Event, type OfferDeclineReason, payloadOf, type ScheduleEstimate } from '@weft/spec'
import { admissionLimits, expectedDuration, type AdmissionLimits } from './admission.js'
import type { Scheduler, WorkerStore } from './seams.js'
import { createInbox, type Inbox } from './inbox.js'
import { createMemoryWorkerStore } from './memory-store.js'
import { createOfflineBuffer, type OfflineBuffer } from './offline.js'
import { createProjection, type Projection } from './projection.js'
import { createDisclosureTracker, type DisclosureOptions, type DisclosureTracker } from './disclosure.js'
import { createScheduler } from './scheduler.js'
import { DEFAULT_EXECUTOR, executorTable, type Executor } from './executor.js'
import type { SlotOutcome } from './slot.js'
import type { ArtifactSink, TokenScope } from './slot-host.js'
import { createLauncher } from './worker-launch.js'
import { createOffers, MAX_RELATIVE_SECONDS } from './worker-offers.js'
import { createQueue } from './worker-queue.js'
import { offlineAwareTransport, reconnect } from './worker-recovery.js'
import { createWorkerState, type WorkerParts } from './worker-state.js'

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
  /** `{ now() }` in epoch ms; default the wall clock. Every lease, back-off and estimate reads it. */
  readonly clock?: Clock
  /**
   * Where the IDs the Worker mints come from: its client's Action IDs (§15.1), Message IDs and
   * what its executors' contexts mint. Default `systemRandom` (WebCrypto); a seeded source makes a
   * run reproducible.
   */
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
  const clock = options.clock ?? systemClock
  const random = options.random ?? systemRandom
  const ownsStore = options.store === undefined
  const store = options.store ?? createMemoryWorkerStore()
  const limits = admissionLimits(options.admission)
  const leases: LeaseOptions = { ...DEFAULT_LEASES, ...Object.fromEntries(Object.entries(options.leases ?? {}).filter(([, v]) => v !== undefined)) }
  const executors = executorTable({ ...(options.executor === undefined ? {} : { [DEFAULT_EXECUTOR]: options.executor }), ...options.executors }, (contract) => expectedDuration(limits, contract))
  const disclosure: DisclosureTracker | undefined = options.disclosure === false ? undefined : createDisclosureTracker(self, options.disclosure)
  const log = (entry: WorkerLogEntry): void => options.logger?.(entry)
  const offline: OfflineBuffer = createOfflineBuffer({ store, ...(options.offlineGraceSeconds === undefined ? {} : { graceSeconds: options.offlineGraceSeconds }) })

  // Every Command goes through here: a transport failure marks the Worker offline (§11.5).
  const transport = offlineAwareTransport(options.transport, offline, clock, () => wake())
  const client = createClient({ actor, signingKey: options.signingKey, transport, clock, random })
  client.epochs.setSession(options.sessionEpoch)

  const projection = createProjection(self)
  const scheduler = createScheduler({
    ...(options.weights === undefined ? {} : { weightOf: options.weights }),
    ...(options.quotas === undefined ? {} : { quotaOf: options.quotas }),
    ...(options.agingMs === undefined ? {} : { agingMs: options.agingMs }),
  })

  const parts: WorkerParts = {
    options,
    actor,
    self,
    clock,
    random,
    store,
    limits,
    leases,
    executors,
    disclosure,
    offline,
    client,
    projection,
    scheduler,
    log,
    wake: () => wake(),
    stopped: () => stopped,
  }
  const state = createWorkerState()
  const { running, enqueued, backoff, joined } = state
  const queue = createQueue(parts, state)
  const offers = createOffers(parts, state)
  const launcher = createLauncher(parts, state, queue)

  // Driving: the rounds run one after another on `chain`; `generation` counts wake-ups for idle().
  const subscriptions: FeedSubscription[] = []
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
    launcher.learnAssignments(events)
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

  /**
   * §8: a late joiner receives nothing up to its visibility start, which its own Membership
   * announces; an empty log of that Group starts there instead of waiting for sequence 1.
   */
  function lateStart(event: Event): void {
    const groupId = event.groupId
    const m = payloadOf(event, 'membership.changed')?.membership
    if (m === undefined || groupId === undefined || inbox.cursor(groupId) !== 0) return
    if (m.member.type === 'agent' && m.member.id === self && m.visibilityStartSequence > 0) inbox.startAfter(groupId, m.visibilityStartSequence)
  }

  /** One round: reconcile, take in projection changes, decide offers, keep leases, preempt, fill, disclose. */
  async function round(): Promise<void> {
    if (stopped) return
    let nowMs = clock.now()
    // §11.5: reconcile before any other Command.
    if (offline.offline) await reconnect(parts, state, queue, nowMs)
    queue.drain(nowMs)
    queue.endBackoffs(nowMs)
    if (offline.offline) {
      launcher.checkExpiries(nowMs)
      return
    }
    await offers.decide(nowMs)
    nowMs = clock.now()
    // §11.3: each running lease is checked and renewed at half its length. Inline, not a helper of
    // the launcher: an extra await would reorder the round against the executors running beside it.
    for (const r of [...running.values()]) {
      r.slot.checkExpiry(nowMs)
      await r.slot.renewIfDue(nowMs)
    }
    queue.drain(nowMs)
    launcher.preemptForUrgent()
    await launcher.fill(nowMs)
    await offers.disclose(clock.now())
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
      queue.resyncAll(clock.now())
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
    decisions: offers.decisions,
    runs: launcher.runs,
    snapshot: () => ({
      queued: [...enqueued.values()]
        .map((i) => ({ groupId: i.groupId, workItemId: i.id, urgency: i.urgency }))
        .sort((a, b) => (a.groupId === b.groupId ? (a.workItemId < b.workItemId ? -1 : 1) : a.groupId < b.groupId ? -1 : 1)),
      active: [...running.keys()].sort(),
      backoff: [...backoff].map(([workItemId, untilMs]) => ({ workItemId, untilMs })),
      offline: offline.offline,
    }),
  }
}
