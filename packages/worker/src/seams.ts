/**
 * The seams between the parts of the reference Worker: the local store, the per-Group projection
 * the inbox feeds, and the Scheduler's view of a queued WorkItem. Each part is built and tested on
 * its own against these types; `worker.ts` composes them.
 * @module
 */
import type { Event, EventPayload, MissionState, WorkContract, WorkItemState } from '@weft/spec'

/** The usage figures of a `resource_usage_recorded` Event (§12). */
type UsageRecorded = EventPayload<'ext.missionweaveprotocol.core.resource_usage_recorded'>

// ---------------------------------------------------------------------------------------------
// Local state (§11.1: durable local projections, rebuildable by replay)
// ---------------------------------------------------------------------------------------------

/** A Command signed while the Group service was unreachable, kept until reconciliation (§11.5). */
export interface BufferedCommand {
  /** Local sequence number, assigned by the store on {@link WorkerStore.bufferCommand}; replay order. */
  readonly seq: number
  readonly groupId: string
  readonly workItemId: string
  readonly kind: string
  /** The Command as first signed offline, JSON text: rebased and re-signed on reconnect. */
  readonly command: string
  /** When it was buffered (epoch ms of the Worker clock). */
  readonly bufferedAtMs: number
}

/**
 * Where a Worker keeps what must survive a crash: each Group's contiguous Event log and durable
 * cursor, the ledger of side effects that already ran, executor checkpoints and the offline buffer.
 * Every method is synchronous and atomic: after it returns, a kill loses nothing it wrote; if it
 * throws, it wrote nothing. The in-memory store is the default; `@weft/store-sqlite` is durable.
 */
export interface WorkerStore {
  /**
   * Appends Events of one Group that continue its log exactly (`events[0].sequence` is
   * {@link cursor} + 1, no gap, ascending) and advances the cursor to the last one, atomically.
   * @throws Error (appending nothing) when the Events do not continue the log.
   */
  appendEvents(groupId: string, events: readonly Event[]): void
  /** The highest contiguous sequence stored for `groupId`; 0 when none. */
  cursor(groupId: string): number
  /**
   * Starts the empty log of `groupId` after `sequence`: the subscriber's visibility start (§8: a
   * late joiner never receives the history before it), so the cursor becomes `sequence` and the
   * next append must begin at `sequence + 1`. Persisted like an append; {@link clearProjectionLog} forgets it.
   * @throws Error when the Group already has stored Events or a start.
   */
  startAfter(groupId: string, sequence: number): void
  /** Every Group with stored Events or a stored ACK, in first-seen order. */
  groups(): readonly string[]
  /** Stored Events of `groupId` with a sequence above `afterSequence` (default 0), at most `limit`, ascending. */
  events(groupId: string, afterSequence?: number, limit?: number): readonly Event[]
  /** The last sequence acknowledged to the Authority for `groupId`; 0 when none. */
  acked(groupId: string): number
  /** Records an ACK sent to the Authority; never lowers the stored value. */
  setAcked(groupId: string, sequence: number): void

  /** The recorded outcome of the side effect with idempotency key `key` (§16), or `undefined`. */
  sideEffect(key: string): { readonly result: unknown } | undefined
  /**
   * Records that the side effect `key` ran with `result` (JSON-serializable).
   * @throws Error when `key` is already recorded (the caller must have checked {@link sideEffect}).
   */
  recordSideEffect(key: string, result: unknown): void

  /** Stores the latest executor checkpoint state (JSON-serializable) of a WorkItem under one Ownership Epoch. */
  putCheckpoint(workItemId: string, ownershipEpoch: number, state: unknown): void
  /** The latest stored checkpoint of a WorkItem, or `undefined`. */
  checkpoint(workItemId: string): { readonly ownershipEpoch: number; readonly state: unknown } | undefined

  /** Adds a Command to the offline buffer and returns it with its assigned {@link BufferedCommand.seq}. */
  bufferCommand(entry: Omit<BufferedCommand, 'seq'>): BufferedCommand
  /** The offline buffer in `seq` order. */
  buffered(): readonly BufferedCommand[]
  /** Removes buffered Commands by `seq` (after reconciliation accepted or refused them). */
  dropBuffered(seqs: readonly number[]): void

  /**
   * Forgets every Group log and cursor (not side effects, checkpoints or the buffer): what a
   * rebuild by replay from the Authority starts from.
   */
  clearProjectionLog(): void
  /** Releases resources (a database handle); the store is unusable afterwards. */
  close(): void
}

// ---------------------------------------------------------------------------------------------
// Projection (§11.1): per-Group queues derived from accepted Group Events
// ---------------------------------------------------------------------------------------------

/** What this Worker knows about one WorkItem of a Group it reads. Derived only from Events. */
export interface TrackedWork {
  readonly workItemId: string
  readonly groupId: string
  readonly missionId: string
  /** The authoritative state as of the last applied Event (§10.2). */
  state: WorkItemState
  contract: WorkContract | undefined
  dependencyIds: readonly string[]
  /** Candidate Agent IDs of the open offer, when one is pending. */
  offeredTo: readonly string[]
  offerExpiresAt: string | undefined
  /** Current owner Agent ID, if any. */
  owner: string | undefined
  ownershipEpoch: number
  ownershipLeaseExpiresAt: string | undefined
  /** The current Execution Lease while active. */
  executionLeaseId: string | undefined
  executionLeaseExpiresAt: string | undefined
  /** The last checkpoint record accepted by the Authority, as carried by its Event payload. */
  lastCheckpoint: unknown
  /** Sequence of the Event that last changed this record. */
  updatedAtSequence: number
  /**
   * The WorkItem's aggregate revision after the last WorkItem Event (§15.3: what `expectedRevision`
   * names); absent until a WorkItem Event was applied.
   */
  revision?: number | undefined
  /** The start-by deadline of the current ownership grant (§11.3); cleared when ownership ends. */
  startBy?: string | undefined
  /** Why the WorkItem is `blocked` (§11.4), while it is. */
  blockedReason?: string | undefined
  /** The last contract revision asked the owner to accept again (§10.1). */
  requiresReacceptance?: boolean | undefined
  /** The latest Execution Approval granted for this WorkItem (§12): the start gate when the contract requires one. */
  executionApproval?: { readonly approvalId: string; readonly ownershipEpoch: number; readonly expiresAt: string } | undefined
  /** Cumulative resource usage after the last recorded charge (§12). */
  usage?: UsageRecorded['cumulativeUsage'] | undefined
  /** The remaining budget after the last recorded charge (§12); an absent dimension has no limit. */
  remainingBudget?: UsageRecorded['remainingBudget'] | undefined
  /** The child Mission's Group while this WorkItem waits on it (§14). */
  childGroupId?: string | undefined
}

/** One Group as the Worker sees it. */
export interface GroupView {
  readonly groupId: string
  missionId: string | undefined
  /** The highest sequence applied to this view. */
  head: number
  readonly work: Map<string, TrackedWork>
  /** IDs of WorkItems in `verified` state (dependency satisfaction, §10.4). */
  readonly verified: Set<string>
  /** The Mission's state as of the last applied Mission Event (§7.1); absent before its genesis is seen. */
  missionState?: MissionState | undefined
  /**
   * IDs of WorkItems owned by {@link WorkerView.self} in state `queued`, kept by the reducers so
   * the ready set is found without scanning the Group (dependencies are checked on read).
   */
  readonly queuedForMe?: Set<string>
}

/**
 * The Worker's projection: one {@link GroupView} per Group, built only by the generated
 * `WorkerEventReducers` (src/gen) from Events, so replay from sequence 0 rebuilds it exactly.
 */
export interface WorkerView {
  /** The Worker's own Agent ID: "offered to me" and "owned by me" are judged against it. */
  readonly self: string
  readonly groups: Map<string, GroupView>
  /** WorkItem IDs whose record changed since the last {@link drainChanges} call: what the Scheduler re-syncs. */
  readonly changed: Set<string>
}

// ---------------------------------------------------------------------------------------------
// Scheduler (§11.1): what it orders
// ---------------------------------------------------------------------------------------------

/** A WorkItem owned by this Worker and ready to run, as the Scheduler orders it. */
export interface SchedulerItem {
  readonly id: string
  readonly groupId: string
  /**
   * Requested urgency inside the Group, 0 (lowest) to 3 (critical): mapped from the Work
   * Contract's urgency. Orders work inside its Group only, never across Groups (§11.1).
   */
  readonly urgency: number
  /** The contract deadline, epoch ms, when there is one. */
  readonly deadlineMs?: number
  /** When it became ready (epoch ms): the basis of aging. */
  readonly readyAtMs: number
  /** High-risk work waits for a risk gate to open (§11.1 "risk gates"). */
  readonly riskGated?: boolean
}

/** Options of the Scheduler. */
export interface SchedulerOptions {
  /**
   * The fair-share weight of a Group (> 0), e.g. from its Organization priority class. Read when a
   * Group first gets work and after {@link Scheduler.setWeight}. Default 1 for every Group.
   */
  readonly weightOf?: (groupId: string) => number
  /** The most WorkItems of one Group active at once (per-Group quota, §11.1). Default unlimited. */
  readonly quotaOf?: (groupId: string) => number
  /**
   * Aging inside a Group: waiting this long counts as much as one urgency level, so a low-urgency
   * item under a constant stream of urgent arrivals still starts within a bounded number of picks.
   * Default 60,000 ms.
   */
  readonly agingMs?: number
}

/**
 * The Worker-owned Scheduler (§11.1): weighted fairness across Groups (stride scheduling over
 * per-Group weights), urgency, deadlines and aging inside a Group, per-Group quotas and risk gates.
 * Every operation is O(log n) in the number of queued items and Groups.
 */
export interface Scheduler {
  /** Queues `item`, or re-queues it with new ordering facts when its ID is queued already (§11.3: priority changes reorder at once). */
  enqueue(item: SchedulerItem): void
  /** Removes a queued item; `false` when it was not queued. */
  remove(id: string): boolean
  /** Whether `id` is queued (not active). */
  has(id: string): boolean
  /**
   * Takes the next item to run: the Group furthest behind its fair share among Groups with a ready
   * item under quota, then that Group's best item by urgency, deadline and age. The item leaves the
   * queue and counts against its Group's quota until {@link release}.
   * @returns `undefined` when nothing is ready.
   */
  pick(nowMs: number): SchedulerItem | undefined
  /** An item taken by {@link pick} no longer occupies a slot (finished, blocked, preempted or lost). */
  release(id: string): void
  /** Opens or closes the risk gate of a queued item (§11.1). */
  setRiskGate(id: string, open: boolean): void
  /** Changes a Group's weight from the next pick on. */
  setWeight(groupId: string, weight: number): void
  /** Queued items in all Groups. */
  readonly size: number
  /** Queued items of one Group. */
  queued(groupId: string): number
  /** Items of one Group taken by {@link pick} and not released. */
  active(groupId: string): number
  /**
   * The number of items of `id`'s own Group ahead of it plus this Group's share of the cross-Group
   * load, as a coarse position for §11.2 disclosure: never another Group's names or exact positions.
   * `undefined` when `id` is not queued.
   */
  estimatedPosition(id: string): number | undefined
}
