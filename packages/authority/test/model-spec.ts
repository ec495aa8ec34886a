/**
 * The reference model of the model-based test (`model-property.test.ts`, `model-scripted.test.ts`): per WorkItem, a snapshot of the
 * XState WorkItem machine of `@weft/spec/machines` plus the few facts its guards depend on (offers,
 * owner and Ownership Epoch, ownership and Execution Lease deadlines), kept by hand from what the
 * protocol says a Command does. It predicts, for a Command, whether the Authority must accept it
 * (and into which state) or refuse it (and with which §19 codes), without reading the Authority.
 */
import type { ErrorCode } from '@weft/codec'
import type { WorkItemState } from '@weft/spec'
import { WORK_ITEM_GUARDS, WORK_ITEM_TRANSITIONS, workItemMachine, type WorkItemEventType, type WorkItemGuard } from '@weft/spec/machines'
import { transition } from 'xstate'

/** A snapshot of the WorkItem machine. */
export type MachineSnapshot = ReturnType<typeof workItemMachine.resolveState>

/** Guard flags for one machine event; an absent flag does not hold. */
export type Flags = { readonly [G in WorkItemGuard]?: boolean }

/** One offer as the model tracks it (§10.3). */
export interface ModelOffer {
  readonly agentId: string
  status: 'pending' | 'withdrawn' | 'accepted' | 'lost_race'
  readonly expiresMs: number
}

/** What the model knows of one WorkItem. */
export interface ItemModel {
  readonly id: string
  snapshot: MachineSnapshot
  /** The aggregate revision (§15.2): one more per accepted WorkItem Event. */
  revision: number
  /** Every offer ever made, oldest first; a new round withdraws the pending ones. */
  offers: ModelOffer[]
  /** The owner of the current Ownership Epoch, as the WorkItem document names it. */
  owner?: { readonly agentId: string; readonly epoch: number }
  /** The highest Ownership Epoch ever issued (§4.5). */
  lastEpoch: number
  /** When the ownership (or blocked) lease ends; absent when there is none. */
  ownershipUntilMs?: number
  /** The current Execution Lease; present only while `active`. */
  exec?: { readonly leaseId: string; readonly holder: string; untilMs: number }
  /** Every Execution Lease ID ever issued for the item, oldest first. */
  readonly execIds: string[]
  /** The Ownership Epoch of the latest submission. */
  submittedEpoch?: number
}

/** The whole model: virtual time, Session Epochs and the WorkItems. */
export interface Model {
  nowMs: number
  readonly sessions: Map<string, number>
  readonly items: ItemModel[]
  /** Commands run so far in this run. */
  steps: number
}

/** A fresh item in `open`, as `work.authorize` leaves it at revision 1. */
export function openItem(id: string): ItemModel {
  return { id, snapshot: workItemMachine.resolveState({ value: 'open', context: {} }), revision: 1, offers: [], lastEpoch: 0, execIds: [] }
}

/** The machine state of an item. */
export function stateOf(item: ItemModel): WorkItemState {
  return item.snapshot.value as WorkItemState
}

const EVERY_GUARD: Flags = Object.fromEntries(Object.keys(WORK_ITEM_GUARDS).map((guard) => [guard, true]))

/**
 * What the machine says about `type` on `item` with `flags`: the next state when a row is enabled;
 * otherwise `INVALID_STATE_TRANSITION` when no row leaves the state on that event at all, or
 * `guardFaults` (why the guard does not hold) when rows exist but their guards fail.
 */
export function machineStep(
  item: ItemModel,
  type: WorkItemEventType,
  flags: Flags,
  guardFaults: readonly ErrorCode[] = ['INVALID_STATE_TRANSITION'],
): { readonly next?: MachineSnapshot; readonly faults: readonly ErrorCode[] } {
  if (!item.snapshot.can({ type, ...flags })) return { faults: item.snapshot.can({ type, ...EVERY_GUARD }) ? guardFaults : ['INVALID_STATE_TRANSITION'] }
  const [next] = transition(workItemMachine, item.snapshot, { type, ...flags })
  return { next, faults: [] }
}

/** The Event kinds the rows from `from` on `type` into `to` may append (§10.2 table). */
export function rowEmits(from: WorkItemState, type: WorkItemEventType, to: WorkItemState): ReadonlySet<string> {
  return new Set(WORK_ITEM_TRANSITIONS.filter((row) => row.from === from && row.event === type && row.to === to).flatMap((row) => row.emits))
}

/** §10.2 `noLiveOwner` / `ownershipLive`: whether an owner still holds a live lease at `nowMs`. */
export function ownerLive(item: ItemModel, nowMs: number): boolean {
  if (item.owner === undefined) return false
  switch (stateOf(item)) {
    case 'active':
      return item.exec !== undefined && nowMs < item.exec.untilMs
    case 'queued':
    case 'blocked':
      return ownershipLive(item, nowMs)
    default:
      return false
  }
}

/** Whether the ownership (or blocked) lease is live at `nowMs`. */
export function ownershipLive(item: ItemModel, nowMs: number): boolean {
  return item.ownershipUntilMs !== undefined && nowMs < item.ownershipUntilMs
}

/** Why `agentId` may not accept the item's offer now (§10.3); empty when the offer is valid. */
export function offerFaults(item: ItemModel, agentId: string, nowMs: number): ErrorCode[] {
  const offer = item.offers.findLast((o) => o.agentId === agentId)
  if (offer === undefined) return ['AUTH_FORBIDDEN']
  if (offer.status === 'lost_race') return ['WORK_ALREADY_OWNED']
  if (offer.status === 'accepted') return ['INVALID_STATE_TRANSITION']
  if (offer.status === 'withdrawn' || nowMs >= offer.expiresMs) return ['WORK_OFFER_EXPIRED']
  return item.owner === undefined ? [] : ['WORK_ALREADY_OWNED']
}

/** Why `agentId` may not act as the owner of `epoch` (§4.5, §11.3). */
export function ownerFaults(item: ItemModel, agentId: string, epoch: number): ErrorCode[] {
  if (item.owner?.epoch !== epoch) return ['WORK_STALE_OWNERSHIP']
  return item.owner.agentId === agentId ? [] : ['AUTH_FORBIDDEN']
}

/**
 * Why an owner Command under (`epoch`, `leaseId`) by `agentId` is not the current execution
 * (§11.3): a fenced epoch, another actor, a WorkItem not `active`, an older or unknown Lease ID, or
 * an expired Execution Lease.
 */
export function executionFaults(item: ItemModel, agentId: string, epoch: number, leaseId: string, nowMs: number): ErrorCode[] {
  const faults = ownerFaults(item, agentId, epoch)
  if (stateOf(item) !== 'active') faults.push('INVALID_STATE_TRANSITION')
  if (item.exec === undefined || item.exec.leaseId !== leaseId || nowMs >= item.exec.untilMs) faults.push('WORK_LEASE_EXPIRED')
  return faults
}

/** Settles every pending offer with `status(offer)`. */
export function settleOffers(item: ItemModel, status: (offer: ModelOffer) => ModelOffer['status']): void {
  for (const offer of item.offers) if (offer.status === 'pending') offer.status = status(offer)
}

/** The item leaves execution (verified, failed, cancelled): leases end, pending offers are withdrawn. */
export function endItem(item: ItemModel): void {
  delete item.exec
  delete item.ownershipUntilMs
  settleOffers(item, () => 'withdrawn')
}
