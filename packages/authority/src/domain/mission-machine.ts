/**
 * The Mission state machine as the Mission handlers ask it (§7.1, §14): which state a flattened
 * transition row leads to once the guards are evaluated. The rows are `MISSION_TRANSITIONS` of
 * `@weft/spec/machines`, as the generator flattened them; no state list is written here by hand.
 * The WorkItem machine is asked through `./work-machine.ts`.
 * @module
 */
import type { Mission } from '@weft/spec'
import type { MissionEventType, MissionGuard } from '@weft/spec/machines'
import { MISSION_STATES_WITH_EVENT, MISSION_TRANSITION_LOOKUP, transitionTargets } from '../gen/transitions.js'
import { reject } from '../commit/handler.js'

/** The Mission guard flags a handler evaluated; a guard absent here does not hold. */
export type MissionGuardFlags = { readonly [G in MissionGuard]?: boolean }

/** The state the Mission rows lead to from `from` on `event`: the first row whose guard holds in `flags`, the unguarded fallback last. */
function missionTarget(from: string, event: MissionEventType, flags: MissionGuardFlags): string | undefined {
  return transitionTargets(MISSION_TRANSITION_LOOKUP, from, event).find((row) => row.guard === undefined || flags[row.guard as MissionGuard] === true)?.to
}

/** The Mission state after `event` from `from` (`'none'` before the Mission exists), or `INVALID_STATE_TRANSITION`. */
export function requireMissionTransition(from: Mission['state'] | 'none', event: MissionEventType, flags: MissionGuardFlags = {}): string {
  return missionTarget(from, event, flags) ?? reject('INVALID_STATE_TRANSITION', `mission is ${from}; ${event} is not permitted`, { state: from, allowedFrom: MISSION_STATES_WITH_EVENT[event] ?? [] })
}

/** Whether the Mission machine has a row from `state` on `event` whose guard holds. */
export function missionAllows(state: Mission['state'], event: MissionEventType, flags: MissionGuardFlags = {}): boolean {
  return missionTarget(state, event, flags) !== undefined
}
