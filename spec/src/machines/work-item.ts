/**
 * The WorkItem state machine (§10.2) as a table of rows and as an XState v5 machine built from it.
 *
 * The table holds every row of §10.2, plus the transitions §11.3–§11.5 add for leases and the
 * state gates of the Commands that target a WorkItem without moving its lifecycle (lease renewal,
 * usage recording, dependency addition). Fencing (Session, Membership, Coordinator and Ownership
 * Epochs, the current Execution Lease ID, `expectedRevision`) is checked by the authority before
 * the machine is asked; guards hold only the conditions the rows themselves depend on.
 *
 * Events no Command drives:
 * - `timer.offer_expired` (§10.2): an offer's expiry passed. It invalidates acceptance and changes
 *   nothing else; no Event is appended.
 * - `timer.ownership_lease_expired` (§11.3, §11.5): a queued owner's start-by deadline or a blocked
 *   owner's bounded blocked lease passed. The state stays; the owner is no longer live, which opens
 *   `work.offer` (reassignment) and sends `work.unblock` to `open`.
 * - `timer.execution_lease_expired` (§11.3, §11.5): an Execution Lease timed out. The state stays
 *   `active`; the owner is no longer live, so the Coordinator may reassign with `work.offer`.
 * - `system.child_mission_approved` (§10.2, §14): the linked child Mission was approved.
 * - `system.child_mission_failed` (§10.2, §14): the linked child Mission failed.
 * - `system.mission_failed` / `system.mission_cancelled` (§10.2, §7.1): the WorkItem's own Mission
 *   reached `failed` / `cancelled`, which propagates to its unfinished WorkItems.
 * @module
 */
import { setup } from 'xstate'
import type { CommandKind } from '../catalog/commands.js'
import type { EventKind } from '../catalog/events.js'
import type { SectionRef } from '../catalog/shared.js'
import { WORK_ITEM_STATES, type WorkItemState } from '../documents/work-item.js'
import { guardFlag, statesFromRows, type MachineEvent, type TransitionRow } from './table.js'

/**
 * The guards of the WorkItem machine. Each placeholder holds when the event carries the flag of
 * the same name set to `true` ({@link guardFlag}); the authority computes the flag.
 */
export const WORK_ITEM_GUARDS = {
  /**
   * §10.2, §10.3, §11.5: nobody holds a live ownership (or Execution) lease, so the WorkItem may be
   * (re-)offered; an expired owner is fenced first. Only rows from owned states carry it: `open`,
   * `offered` and `failed` never have an owner.
   */
  noLiveOwner: guardFlag('noLiveOwner'),
  /** §10.2, §10.3: the offer is unexpired, still pending, and names the accepting Worker. */
  offerValid: guardFlag('offerValid'),
  /** §10.2, §12: the Work Contract or policy requires an Execution Approval before start. */
  executionApprovalRequired: guardFlag('executionApprovalRequired'),
  /**
   * §10.2, §11.3, §12: the start gate is open: the issuer is the owner under a live ownership lease
   * within its start-by deadline, and any required Execution Approval was granted.
   */
  startAllowed: guardFlag('startAllowed'),
  /** §10.2, §11.4: the blocked owner's bounded blocked lease is still live. */
  ownershipLive: guardFlag('ownershipLive'),
  /**
   * §10.2, §13.2: the Coordinator's review Evidence covers every acceptance criterion of the Work
   * Contract and the submission was made under the current Ownership Epoch (§11.5).
   */
  acceptanceCriteriaMet: guardFlag('acceptanceCriteriaMet'),
  /**
   * §10.2, §14: the parent completion policy declares the linked child Mission indispensable with no
   * alternative, so its failure fails the parent WorkItem.
   */
  childIndispensable: guardFlag('childIndispensable'),
} as const

/** A guard name of the WorkItem machine. */
export type WorkItemGuard = keyof typeof WORK_ITEM_GUARDS

/** The WorkItem machine's events no Command drives (documented in the module comment). */
export const WORK_ITEM_INTERNAL_EVENTS = [
  'timer.offer_expired',
  'timer.ownership_lease_expired',
  'timer.execution_lease_expired',
  'system.child_mission_approved',
  'system.child_mission_failed',
  'system.mission_failed',
  'system.mission_cancelled',
] as const

/** An event of {@link WORK_ITEM_INTERNAL_EVENTS}. */
export type WorkItemInternalEvent = (typeof WORK_ITEM_INTERNAL_EVENTS)[number]

/** The `type` of a WorkItem machine event: a Command kind or an internal event. */
export type WorkItemEventType = CommandKind | WorkItemInternalEvent

/** An event of the WorkItem machine, with the flags its guards read. */
export type WorkItemMachineEvent = MachineEvent<WorkItemEventType, WorkItemGuard>

/** A row of {@link WORK_ITEM_TRANSITIONS}. */
export type WorkItemTransition = TransitionRow<WorkItemState, WorkItemEventType, WorkItemGuard>

/** `verified` and `cancelled` are terminal for a WorkItem revision (§10.2). */
export const TERMINAL_WORK_ITEM_STATES = ['verified', 'cancelled'] as const satisfies readonly WorkItemState[]

/** The state `work.authorize` creates a WorkItem in, and the machine's initial state (§10.2). */
export const INITIAL_WORK_ITEM_STATE = 'open' satisfies WorkItemState

const unfinished = ['open', 'offered', 'queued', 'active', 'blocked', 'submitted'] as const satisfies readonly WorkItemState[]
const promotable = ['open', 'offered', 'queued', 'active', 'blocked'] as const satisfies readonly WorkItemState[]

/** One row per state of `from`, the rest alike. */
function fromEach(from: readonly WorkItemState[], row: Omit<WorkItemTransition, 'from' | 'to'> & { readonly to: WorkItemState | 'same' }): WorkItemTransition[] {
  return from.map((state) => ({ ...row, from: state, to: row.to === 'same' ? state : row.to }))
}

const offered = ['work.contract.revised', 'work.offer.created'] as const satisfies readonly EventKind[]
const s102: SectionRef = '§10.2'

/**
 * The WorkItem transition table: every row of §10.2 (creation rows start at `none`), then the
 * lease transitions of §11.3–§11.5 and the state gates of the remaining WorkItem Commands. The
 * machine {@link workItemMachine} is built from these rows.
 */
export const WORK_ITEM_TRANSITIONS: readonly WorkItemTransition[] = [
  // §10.2: a proposal is not a WorkItem yet; it stays outside the machine.
  { from: 'none', event: 'work.propose', to: 'none', emits: ['work.proposed'], section: s102 },
  // §10.2: "none or open Work Proposal" are both `none` here: no WorkItem exists before authorization.
  { from: 'none', event: 'work.authorize', to: 'open', emits: ['work.authorized'], section: s102 },
  // §10.2: an offer creates, replaces or extends; §10.1: it may carry a corrected contract.
  ...fromEach(['open', 'offered'], { event: 'work.offer', to: 'offered', emits: offered, section: s102 }),
  ...fromEach(['queued', 'active', 'blocked'], { event: 'work.offer', to: 'offered', guard: 'noLiveOwner', emits: offered, section: s102 }),
  // §10.2: `failed` may leave only through a new offer.
  { from: 'failed', event: 'work.offer', to: 'offered', emits: offered, section: s102 },
  // §10.3: the first valid acceptance wins a new Ownership Epoch; §8: the Membership activates.
  { from: 'offered', event: 'work.accept_offer', to: 'queued', guard: 'offerValid', emits: ['work.offer.accepted', 'membership.changed'], section: s102 },
  { from: 'offered', event: 'timer.offer_expired', to: 'offered', emits: [], section: s102 },
  { from: 'queued', event: 'approval.grant_execution', to: 'queued', guard: 'executionApprovalRequired', emits: ['approval.execution.granted'], section: s102 },
  { from: 'queued', event: 'work.start', to: 'active', guard: 'startAllowed', emits: ['work.started'], section: s102 },
  // §11.5: a checkpoint buffered offline first charges its usage delta.
  {
    from: 'active',
    event: 'work.checkpoint',
    to: 'queued',
    emits: ['ext.missionweaveprotocol.core.resource_usage_recorded', 'work.checkpointed'],
    section: s102,
  },
  { from: 'active', event: 'work.block', to: 'blocked', emits: ['work.blocked'], section: s102 },
  { from: 'blocked', event: 'work.unblock', to: 'queued', guard: 'ownershipLive', emits: ['work.unblocked'], section: s102 },
  // §10.2: without a live owner the unblocked WorkItem is re-offered from `open`.
  { from: 'blocked', event: 'work.unblock', to: 'open', emits: ['work.unblocked'], section: s102 },
  { from: 'active', event: 'work.submit', to: 'submitted', emits: ['work.submitted'], section: s102 },
  { from: 'submitted', event: 'work.accept_result', to: 'verified', guard: 'acceptanceCriteriaMet', emits: ['work.result.accepted'], section: s102 },
  ...fromEach(unfinished, { event: 'work.fail', to: 'failed', emits: ['work.failed'], section: s102 }),
  ...fromEach(unfinished, { event: 'work.cancel', to: 'cancelled', emits: ['work.cancelled'], section: s102 }),
  // §14: ownership is fenced while the child runs; `mission.created` opens the child's own Group.
  ...fromEach(promotable, { event: 'mission.create_child', to: 'blocked', emits: ['mission.child.created', 'mission.created'], section: '§14' }),
  // §14: the approved child result becomes the parent WorkItem's Evidence.
  { from: 'blocked', event: 'system.child_mission_approved', to: 'verified', emits: ['work.result.accepted'], section: '§14' },
  { from: 'blocked', event: 'system.child_mission_failed', to: 'failed', guard: 'childIndispensable', emits: ['work.failed'], section: '§14' },
  // §14: a dispensable child's failure leaves the parent blocked for the Coordinator to replan; the
  // failure Evidence is the child Group's `mission.terminated`, nothing is appended here.
  { from: 'blocked', event: 'system.child_mission_failed', to: 'blocked', emits: [], section: '§14' },
  ...fromEach(unfinished, { event: 'system.mission_failed', to: 'failed', emits: ['work.failed'], section: s102 }),
  ...fromEach(unfinished, { event: 'system.mission_cancelled', to: 'cancelled', emits: ['work.cancelled'], section: s102 }),
  // §11.3: a replacement Session revokes the Agent's Execution Leases and requeues its WorkItems.
  {
    from: 'active',
    event: 'ext.missionweaveprotocol.identity.session_open',
    to: 'queued',
    emits: ['ext.missionweaveprotocol.core.work_execution_lease_revoked'],
    section: '§11.3',
  },
  { from: 'active', event: 'ext.missionweaveprotocol.core.work_execution_lease_renew', to: 'active', emits: ['work.progressed'], section: '§11.3' },
  // §11.3: usage is charged against the current Execution Lease, which exists only while `active` (§12 ledger).
  {
    from: 'active',
    event: 'ext.missionweaveprotocol.core.resource_usage_record',
    to: 'active',
    emits: ['ext.missionweaveprotocol.core.resource_usage_recorded'],
    section: '§11.3',
  },
  { from: 'active', event: 'timer.execution_lease_expired', to: 'active', emits: [], section: '§11.3' },
  ...fromEach(['queued', 'blocked'], { event: 'timer.ownership_lease_expired', to: 'same', emits: [], section: '§11.5' }),
  // §10.4, §10.1: a dependency revises the contract; only where no offer or owner holds a commitment to it.
  ...fromEach(['open', 'failed'], { event: 'ext.missionweaveprotocol.core.work_dependency_add', to: 'same', emits: ['work.contract.revised'], section: '§10.4' }),
]

/**
 * The WorkItem machine (§10.2), built from {@link WORK_ITEM_TRANSITIONS}. It starts in `open`
 * (the state `work.authorize` creates); `verified` and `cancelled` are final.
 * @example
 * ```ts
 * import { transition } from 'xstate'
 * const start = workItemMachine.resolveState({ value: 'offered', context: {} })
 * const [next] = transition(workItemMachine, start, { type: 'work.accept_offer', offerValid: true })
 * next.value // 'queued'
 * ```
 */
export const workItemMachine = setup({
  types: {} as { events: WorkItemMachineEvent },
  guards: WORK_ITEM_GUARDS,
}).createMachine({
  id: 'workItem',
  initial: INITIAL_WORK_ITEM_STATE,
  // The config is computed from the rows; XState checks targets and guard names when it builds.
  states: statesFromRows(WORK_ITEM_STATES, TERMINAL_WORK_ITEM_STATES, WORK_ITEM_TRANSITIONS, s102) as never,
})
