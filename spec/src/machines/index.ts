/**
 * `@weft/spec/machines`: the WorkItem (§10.2) and Mission (§7.1) statecharts in XState v5, and
 * their transition tables as plain rows. The machines are built from the rows, so the two agree
 * by construction; `test/machines.test.ts` checks every state × event pair all the same.
 *
 * A subpath of its own keeps the main entry of `@weft/spec` free of XState.
 * @module
 */
export {
  INITIAL_WORK_ITEM_STATE,
  TERMINAL_WORK_ITEM_STATES,
  WORK_ITEM_GUARDS,
  WORK_ITEM_INTERNAL_EVENTS,
  WORK_ITEM_TRANSITIONS,
  workItemMachine,
  type WorkItemEventType,
  type WorkItemGuard,
  type WorkItemInternalEvent,
  type WorkItemMachineEvent,
  type WorkItemTransition,
} from './work-item.js'
export {
  INITIAL_MISSION_STATE,
  MISSION_GUARDS,
  MISSION_INTERNAL_EVENTS,
  MISSION_TRANSITIONS,
  TERMINAL_MISSION_STATES,
  missionMachine,
  type MissionEventType,
  type MissionGuard,
  type MissionInternalEvent,
  type MissionMachineEvent,
  type MissionTransition,
} from './mission.js'
// For library authors: the row vocabulary and the builder the machines use.
export {
  NO_AGGREGATE,
  guardFlag,
  statesFromRows,
  type AnyTransitionRow,
  type BuiltStateNode,
  type BuiltTransition,
  type InternalEventType,
  type MachineEvent,
  type NoAggregate,
  type TransitionRow,
} from './table.js'
