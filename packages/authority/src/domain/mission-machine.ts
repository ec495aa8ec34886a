/**
 * The Mission state machine as the Mission handlers ask it (§7.1, §14), and the WorkItem rows the
 * Mission's events reach (§10.2): which state a flattened transition row leads to once the guards
 * are evaluated. The rows are `MISSION_TRANSITIONS` / `WORK_ITEM_TRANSITIONS` of
 * `@weft/spec/machines`, as the generator flattened them; no state list is written here by hand.
 * @module
 */
import type { Mission } from '@weft/spec'
import type { MissionEventType, WorkItemEventType } from '@weft/spec/machines'
import { MISSION_STATES_WITH_EVENT, MISSION_TRANSITION_LOOKUP, WORK_ITEM_TRANSITION_LOOKUP, transitionTargets, type TransitionLookup } from '../gen/transitions.js'
import { reject } from '../commit/handler.js'
import type { WorkItemRecord } from '../model.js'

/** Guard flags a caller has evaluated for the rows it asks about; an absent guard does not hold. */
export type GuardFlags = Readonly<Record<string, boolean>>

/**
 * The state a flattened transition table leads to from `from` on `event`, or `undefined` when no
 * row applies: the first row whose guard holds in `flags`, the unguarded fallback last.
 */
export function transitionTarget(table: TransitionLookup, from: string, event: string, flags: GuardFlags = {}): string | undefined {
  return transitionTargets(table, from, event).find((row) => row.guard === undefined || flags[row.guard] === true)?.to
}

/** The Mission state after `event` from `from` (`'none'` before the Mission exists), or `INVALID_STATE_TRANSITION`. */
export function requireMissionTransition(from: Mission['state'] | 'none', event: MissionEventType, flags: GuardFlags = {}): string {
  return (
    transitionTarget(MISSION_TRANSITION_LOOKUP, from, event, flags) ??
    reject('INVALID_STATE_TRANSITION', `mission is ${from}; ${event} is not permitted`, { state: from, allowedFrom: MISSION_STATES_WITH_EVENT[event] ?? [] })
  )
}

/** Whether the Mission machine has a row from `state` on `event` whose guard holds. */
export function missionAllows(state: Mission['state'], event: MissionEventType, flags: GuardFlags = {}): boolean {
  return transitionTarget(MISSION_TRANSITION_LOOKUP, state, event, flags) !== undefined
}

/** The WorkItem state after `event`, or `undefined` when the §10.2 rows do not allow it. */
export function workItemTarget(record: WorkItemRecord, event: WorkItemEventType, flags: GuardFlags = {}): string | undefined {
  return transitionTarget(WORK_ITEM_TRANSITION_LOOKUP, record.doc.state, event, flags)
}
