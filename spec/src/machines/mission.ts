/**
 * The Mission lifecycle (§7.1) as a table of rows and as an XState v5 machine built from it.
 *
 * The table holds every row of §7.1 (creation rows start at `none`) and the state gates of the
 * Coordinator-lease Commands of §7.2, which keep the state but are refused once the Mission is
 * terminal. Fencing (epochs, `expectedRevision`) is checked by the authority before the machine.
 *
 * Events no Command drives:
 * - `system.parent_mission_cancelled` (§7.1, §14): the parent Mission was cancelled, and the
 *   cancellation propagates to this child Mission.
 * - `system.child_mission_failed` (§7.1, §14): a child Mission of this Mission failed; under the
 *   guard `childIndispensable` the failure propagates and this Mission fails.
 * @module
 */
import { setup } from 'xstate'
import type { CommandKind } from '../catalog/commands.js'
import type { SectionRef } from '../catalog/shared.js'
import { MISSION_STATES, type MissionState } from '../documents/mission.js'
import { guardFlag, statesFromRows, type MachineEvent, type TransitionRow } from './table.js'

/**
 * The guards of the Mission machine. Each placeholder holds when the event carries the flag of the
 * same name set to `true` ({@link guardFlag}); the authority computes the flag.
 */
export const MISSION_GUARDS = {
  /**
   * §7.1, §14: the parent completion policy declares the failed child Mission indispensable with no
   * alternative, so its failure fails this Mission. Otherwise the failure only blocks or fails the
   * parent WorkItem (see the WorkItem machine) and the Mission goes on.
   */
  childIndispensable: guardFlag('childIndispensable'),
} as const

/** A guard name of the Mission machine. */
export type MissionGuard = keyof typeof MISSION_GUARDS

/** The Mission machine's events no Command drives (documented in the module comment). */
export const MISSION_INTERNAL_EVENTS = ['system.parent_mission_cancelled', 'system.child_mission_failed'] as const

/** An event of {@link MISSION_INTERNAL_EVENTS}. */
export type MissionInternalEvent = (typeof MISSION_INTERNAL_EVENTS)[number]

/** The `type` of a Mission machine event: a Command kind or an internal event. */
export type MissionEventType = CommandKind | MissionInternalEvent

/** An event of the Mission machine, with the flags its guards read. */
export type MissionMachineEvent = MachineEvent<MissionEventType, MissionGuard>

/** A row of {@link MISSION_TRANSITIONS}. */
export type MissionTransition = TransitionRow<MissionState, MissionEventType, MissionGuard>

/** `approved`, `cancelled` and `failed` are terminal; an approved Mission is never reopened (§7.1). */
export const TERMINAL_MISSION_STATES = ['approved', 'cancelled', 'failed'] as const satisfies readonly MissionState[]

/** The state every creation Command leads to, and the machine's initial state (§7.1). */
export const INITIAL_MISSION_STATE = 'active' satisfies MissionState

const nonTerminal = ['active', 'awaiting_approval'] as const satisfies readonly MissionState[]

/** One row per state of `from`, the rest alike. */
function fromEach(from: readonly MissionState[], row: Omit<MissionTransition, 'from' | 'to'> & { readonly to: MissionState | 'same' }): MissionTransition[] {
  return from.map((state) => ({ ...row, from: state, to: row.to === 'same' ? state : row.to }))
}

const s71: SectionRef = '§7.1'

/**
 * The Mission transition table: every row of §7.1, then the §7.2 Coordinator-lease gates. The
 * machine {@link missionMachine} is built from these rows.
 */
export const MISSION_TRANSITIONS: readonly MissionTransition[] = [
  { from: 'none', event: 'mission.create', to: 'active', emits: ['mission.created'], section: s71 },
  // §7.1: linked to an approved Mission; the link is checked by the authority on the other Mission.
  { from: 'none', event: 'mission.create_follow_up', to: 'active', emits: ['mission.follow_up.created'], section: s71 },
  // §14: the child's genesis Event in its new Group; the parent WorkItem's row is in the WorkItem table.
  { from: 'none', event: 'mission.create_child', to: 'active', emits: ['mission.created'], section: '§14' },
  { from: 'active', event: 'mission.submit_for_approval', to: 'awaiting_approval', emits: ['mission.submitted_for_approval'], section: s71 },
  { from: 'awaiting_approval', event: 'mission.request_changes', to: 'active', emits: ['mission.changes_requested'], section: s71 },
  // §7.3, §14: approving a child also verifies the parent WorkItem (`system.child_mission_approved` there).
  { from: 'awaiting_approval', event: 'mission.approve', to: 'approved', emits: ['mission.approved'], section: s71 },
  // §7.1, §10.2: unfinished WorkItems follow (`system.mission_cancelled` there).
  ...fromEach(nonTerminal, { event: 'mission.cancel', to: 'cancelled', emits: ['mission.cancelled'], section: s71 }),
  ...fromEach(nonTerminal, { event: 'system.parent_mission_cancelled', to: 'cancelled', emits: ['mission.cancelled'], section: s71 }),
  // §7.1, §10.2: unfinished WorkItems follow (`system.mission_failed` there).
  ...fromEach(nonTerminal, { event: 'mission.terminate', to: 'failed', emits: ['mission.terminated'], section: s71 }),
  ...fromEach(nonTerminal, {
    event: 'system.child_mission_failed',
    to: 'failed',
    guard: 'childIndispensable',
    emits: ['mission.terminated'],
    section: s71,
  }),
  // §7.2: a Coordinator is appointed or renews its lease while the Mission is open.
  ...fromEach(nonTerminal, {
    event: 'mission.assign_coordinator',
    to: 'same',
    emits: ['mission.coordinator.assigned', 'membership.changed', 'membership.ended'],
    section: '§7.2',
  }),
  ...fromEach(nonTerminal, { event: 'mission.renew_coordinator', to: 'same', emits: ['mission.coordinator.renewed'], section: '§7.2' }),
]

/**
 * The Mission machine (§7.1), built from {@link MISSION_TRANSITIONS}. It starts in `active`;
 * `approved`, `cancelled` and `failed` are final.
 * @example
 * ```ts
 * import { initialTransition, transition } from 'xstate'
 * const [start] = initialTransition(missionMachine)
 * const [next] = transition(missionMachine, start, { type: 'mission.submit_for_approval' })
 * next.value // 'awaiting_approval'
 * ```
 */
export const missionMachine = setup({
  types: {} as { events: MissionMachineEvent },
  guards: MISSION_GUARDS,
}).createMachine({
  id: 'mission',
  initial: INITIAL_MISSION_STATE,
  states: statesFromRows(MISSION_STATES, TERMINAL_MISSION_STATES, MISSION_TRANSITIONS, s71) as never,
})
