/**
 * What the loops of a Worker share. `createWorker` (worker.ts) builds the {@link WorkerParts} and
 * the {@link WorkerState} once and hands them to each loop: the queue projection
 * (worker-queue.ts), offers and schedule disclosure (worker-offers.ts), filling and launching
 * slots (worker-launch.ts) and reconnection (worker-recovery.ts). State that only one loop reads
 * stays inside that loop; what is here is read by more than one, and each field says who writes it.
 * @module
 */
import type { Client, Clock, RandomSource } from '@weft/client'
import type { AdmissionLimits } from './admission.js'
import type { DisclosureTracker } from './disclosure.js'
import type { ExecutorTable } from './executor.js'
import type { OfflineBuffer } from './offline.js'
import type { Projection } from './projection.js'
import type { Scheduler, SchedulerItem, TrackedWork, WorkerStore } from './seams.js'
import type { Slot } from './slot.js'
import type { LeaseOptions, Worker, WorkerLogEntry, WorkerOptions } from './worker.js'

/** The services of a Worker, fixed at creation. */
export interface WorkerParts {
  readonly options: WorkerOptions
  readonly actor: { readonly type: 'agent'; readonly id: string }
  /** The Worker Agent's ID: the owner and candidate it looks for in the projection. */
  readonly self: string
  readonly clock: Clock
  readonly random: RandomSource
  readonly store: WorkerStore
  readonly limits: AdmissionLimits
  /** Lease lengths with the defaults filled in. */
  readonly leases: LeaseOptions
  readonly executors: ExecutorTable
  /** §11.2 re-disclosure, unless turned off. */
  readonly disclosure: DisclosureTracker | undefined
  readonly offline: OfflineBuffer
  readonly client: Client
  readonly projection: Projection
  readonly scheduler: Scheduler
  log(entry: WorkerLogEntry): void
  /** Something changed: wakes {@link Worker.idle}, and ticks soon when the Worker runs by itself. */
  wake(): void
  /** Whether {@link Worker.stop} was called. */
  stopped(): boolean
}

/** A WorkItem running in a slot. */
export interface Running {
  readonly slot: Slot
  /** Its urgency when it was picked: preemption asks the least urgent of a Group first (§11.3). */
  readonly urgency: number
  /** Settles when the run has ended and its outcome was taken in. */
  done: Promise<void>
}

/** The state more than one loop reads, by WorkItem ID unless said otherwise. */
export interface WorkerState {
  /** Joined Group IDs: only their WorkItems are queued (written by `join`). */
  readonly joined: Set<string>
  /** Owned WorkItems that are queued, active or blocked: the load admission counts (written by the queue). */
  readonly held: Set<string>
  /** Live offers to this Worker that the offers loop decides (written by the queue). */
  readonly offers: Map<string, TrackedWork>
  /** What this Worker put in the Scheduler: the facts of each queued item (written by the queue and `fill`). */
  readonly enqueued: Map<string, SchedulerItem>
  /** When each owned WorkItem first became ready: the basis of aging, kept across preemption (written by the queue and `fill`). */
  readonly readyAt: Map<string, number>
  /** Queued items that already asked a running one to yield: one request each (§11.3; written by the queue and the launcher). */
  readonly preemptedFor: Set<string>
  /** What runs in the slots (written by the launcher). */
  readonly running: Map<string, Running>
  /**
   * Slots whose work.start lost its answer (§19): the Authority may have started the WorkItem
   * under a lease only that start's receipt names. The next launch for the same Ownership Epoch
   * takes the slot again, and it sends the same start, whose receipt (the first, if it was
   * applied) gives the lease (written by the launcher; the queue drops a stale one).
   */
  readonly unstarted: Map<string, Slot>
  /** Retry back-offs (§11.4): when each ends, epoch ms (written by the launcher; the queue ends them). */
  readonly backoff: Map<string, number>
  /** WorkItems whose start the Authority refused for want of an Execution Approval (§12; written by the launcher). */
  readonly needsApproval: Set<string>
}

/** An empty {@link WorkerState}. */
export function createWorkerState(): WorkerState {
  return {
    joined: new Set(),
    held: new Set(),
    offers: new Map(),
    enqueued: new Map(),
    readyAt: new Map(),
    preemptedFor: new Set(),
    running: new Map(),
    unstarted: new Map(),
    backoff: new Map(),
    needsApproval: new Set(),
  }
}
