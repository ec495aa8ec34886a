/**
 * The lifecycle of one execution slot, as a small machine (§10.2, §11.3–§11.5, §19).
 * {@link slotTransition} is the only place it changes: the slot (`slot.ts`) sends it a
 * {@link SlotEvent} at each step of a run and asks {@link heldLease} which lease it may act under.
 *
 * The main line is the {@link SlotPhase}, the slot's hold on an Execution Lease:
 *
 * ```
 *   unleased ──started──► leased ──released──► unleased    (an answered checkpoint, block, submission, failure)
 *                          │  ▲
 *                          │  └── renewed: the same lease, a later expiry
 *   unleased, leased ──restartOwed──► restartOwed ──restarted──► leased (unleased if it kept no lease)
 * ```
 *
 * `restartOwed` is the §19 and §11.5 case: a checkpoint released the lease without the slot
 * hearing it (its answer was lost, or its buffered copy was applied on reconciliation), or a
 * restart's `work.start` lost its answer. A `work.start` is owed once the Group service is back;
 * until then the executor goes on under the lease it last knew (if any), within the offline grace.
 *
 * The run ends in one of two ways that are kept beside the phase: the lease is **lost** (refused,
 * fenced, expired, or the Worker stopped: the lease is dropped, the loss is kept for good and every
 * later call of the executor is refused with it), or the slot **stopped** the executor itself (a
 * preemption checkpoint or a block), which is then the run's outcome. Three more facts change on
 * their own: which lease-changing Command is in flight ({@link LeaseChange}; the Worker's fencing
 * leaves the slot alone meanwhile, since the projection changes it sees are the slot's own),
 * whether the slot is waiting to reconcile after the link dropped, and whether preemption was
 * requested (§11.3).
 * @module
 */
import { ProtocolError } from '@weft/codec'
import type { Receipt } from '@weft/client'
import { isEventOf } from '@weft/spec'

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

/** The slot's hold on an Execution Lease. */
export type SlotPhase =
  /** No lease: before the first start, after a release, or after a start that was refused or lost its answer. */
  | { readonly kind: 'unleased' }
  /** Holds `lease`: Commands of the run go out under it. */
  | { readonly kind: 'leased'; readonly lease: SlotLease }
  /**
   * The last lease was released unheard (§19) or a restart is unanswered: a `work.start` is owed on
   * reconnection. `lease` is the one the executor may still go on under offline (§11.5), if any.
   */
  | { readonly kind: 'restartOwed'; readonly lease: SlotLease | undefined }

/** The owner Command in flight that changes the lease: a start, a checkpoint (releases it) or a block (§10.2). */
export type LeaseChange = 'start' | 'checkpoint' | 'block'

/** How the slot itself stopped its executor: at a preemption checkpoint (§11.3) or on a blocker (§11.4). */
export type SlotStop = 'preempted' | 'blocked'

/** Everything a slot's lifecycle is at one moment. */
export interface SlotLifecycle {
  readonly phase: SlotPhase
  /** Why the lease was lost; kept for good once set. */
  readonly lost: ProtocolError | undefined
  /** The lease-changing Command in flight, if any. */
  readonly changing: LeaseChange | undefined
  /** The slot saw the service unreachable and has not reconciled since (§11.5): it acts as offline. */
  readonly awaitingReconnect: boolean
  readonly preemptionRequested: boolean
  /** Set when the slot stopped the executor itself; the run's outcome then is this, whatever the executor does next. */
  readonly stopped: SlotStop | undefined
}

/** What happens to a slot. */
export type SlotEvent =
  /** A `work.start` was answered with `lease`. */
  | { readonly type: 'started'; readonly lease: SlotLease }
  /** A renewal of the lease held was answered with its new expiry (§11.3). */
  | { readonly type: 'renewed'; readonly lease: SlotLease }
  /** An answered checkpoint, block, submission or failure ended the lease (§10.2). */
  | { readonly type: 'released' }
  /** A start is owed on reconnection (see {@link SlotPhase}); a lease kept is still acted under until then. */
  | { readonly type: 'restartOwed' }
  /** Reconnection started the owed lease. */
  | { readonly type: 'restarted' }
  /** The lease is gone: it is dropped and `error` kept, unless the run already ended. */
  | { readonly type: 'lost'; readonly error: ProtocolError }
  | { readonly type: 'changeBegan'; readonly change: LeaseChange }
  | { readonly type: 'changeEnded' }
  /** The slot met the unreachable service (§11.5). */
  | { readonly type: 'disconnected' }
  /** The slot reconciled after reconnection: its Commands wait no more. */
  | { readonly type: 'reconciled' }
  | { readonly type: 'preemptionRequested' }
  | { readonly type: 'stopped'; readonly stop: SlotStop }

/** A new slot: no lease yet, online, nothing requested. */
export const INITIAL_LIFECYCLE: SlotLifecycle = Object.freeze({
  phase: Object.freeze({ kind: 'unleased' as const }),
  lost: undefined,
  changing: undefined,
  awaitingReconnect: false,
  preemptionRequested: false,
  stopped: undefined,
})

/** The phase once the lease the slot acts under becomes `lease`: an owed restart stays owed until reconnection starts it. */
function withLease(phase: SlotPhase, lease: SlotLease): SlotPhase {
  return phase.kind === 'restartOwed' ? { kind: 'restartOwed', lease } : { kind: 'leased', lease }
}

/** The phase once the lease is dropped: an owed restart stays owed. */
function withoutLease(phase: SlotPhase): SlotPhase {
  if (phase.kind === 'leased') return { kind: 'unleased' }
  if (phase.kind === 'restartOwed' && phase.lease !== undefined) return { kind: 'restartOwed', lease: undefined }
  return phase
}

/**
 * The lifecycle after `event`: a pure function. An event that changes nothing returns `state`
 * itself, so a caller can tell whether it took effect.
 */
export function slotTransition(state: SlotLifecycle, event: SlotEvent): SlotLifecycle {
  const phase = state.phase
  switch (event.type) {
    case 'started':
    case 'renewed':
      return { ...state, phase: withLease(phase, event.lease) }
    case 'released': {
      const next = withoutLease(phase)
      return next === phase ? state : { ...state, phase: next }
    }
    case 'restartOwed':
      if (phase.kind === 'unleased') return { ...state, phase: { kind: 'restartOwed', lease: undefined } }
      if (phase.kind === 'leased') return { ...state, phase: { kind: 'restartOwed', lease: phase.lease } }
      return state
    case 'restarted':
      if (phase.kind !== 'restartOwed') return state
      return { ...state, phase: phase.lease === undefined ? { kind: 'unleased' } : { kind: 'leased', lease: phase.lease } }
    case 'lost':
      // The first end wins: a slot that stopped its executor itself, or already lost, keeps its outcome.
      if (state.lost !== undefined || state.stopped !== undefined) return state
      return { ...state, lost: event.error, phase: withoutLease(phase) }
    case 'changeBegan':
      return { ...state, changing: event.change }
    case 'changeEnded':
      return state.changing === undefined ? state : { ...state, changing: undefined }
    case 'disconnected':
      return state.awaitingReconnect ? state : { ...state, awaitingReconnect: true }
    case 'reconciled':
      return state.awaitingReconnect ? { ...state, awaitingReconnect: false } : state
    case 'preemptionRequested':
      // A lost slot has nothing left to stop; a second request is the first one.
      if (state.preemptionRequested || state.lost !== undefined) return state
      return { ...state, preemptionRequested: true }
    case 'stopped':
      return { ...state, stopped: event.stop }
  }
}

/** The lease the slot may act under: held, or kept while a restart is owed; `undefined` otherwise. */
export function heldLease(state: SlotLifecycle): SlotLease | undefined {
  const phase = state.phase
  return phase.kind === 'leased' || phase.kind === 'restartOwed' ? phase.lease : undefined
}

/**
 * The lease a `work.start` or renewal receipt names (its `kind` Event), renewed as of `nowMs`.
 * `previous` supplies the Session Epoch when the Event does not carry one.
 * @throws ProtocolError `PROTOCOL_VIOLATION` when the receipt carries no such Event.
 */
export function leaseFromReceipt(receipt: Receipt, kind: 'work.started' | 'work.progressed', previous: SlotLease | undefined, nowMs: number): SlotLease {
  const event = receipt.events.find((e) => isEventOf(e, kind))
  if (event === undefined) throw new ProtocolError('PROTOCOL_VIOLATION', `the receipt of ${receipt.kind} carries no ${kind} Event`)
  const p = event.payload
  return {
    leaseId: p.executionLease.leaseId,
    sessionEpoch: p.executionLease.sessionEpoch ?? previous?.sessionEpoch ?? 1,
    issuedAtMs: Date.parse(p.executionLease.issuedAt),
    renewedAtMs: nowMs,
    expiresAtMs: Date.parse(p.executionLeaseExpiresAt),
    ...(event.sequence === undefined ? {} : { sequence: event.sequence }),
  }
}
