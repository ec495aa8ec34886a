/**
 * The WorkItem state machine as the handlers ask it (§10.2): which rows leave a state on a Command,
 * and which target applies once the guards are evaluated. The rows are those of
 * `WORK_ITEM_TRANSITIONS` (`@weft/spec/machines`), flattened by the generator; no state list is
 * written here by hand.
 * @module
 */
import type { WorkItemState } from '@weft/spec'
import type { WorkItemEventType, WorkItemGuard } from '@weft/spec/machines'
import { WORK_ITEM_TRANSITION_LOOKUP, transitionTargets, type TransitionTarget } from '../gen/transitions.js'
import { reject } from '../commit/handler.js'
import type { WorkItemRecord } from '../model.js'

/** The state of a WorkItem for the machine: `none` before it exists (§10.2 creation rows). */
export type WorkItemMachineState = WorkItemState | 'none'

/** The guard flags a handler computed; a guard absent here does not hold. */
export type GuardFlags = { readonly [G in WorkItemGuard]?: boolean }

const NO_FLAGS: GuardFlags = Object.freeze({})

/** The machine state of a record, `none` when there is no record. */
export function machineStateOf(record: WorkItemRecord | undefined): WorkItemMachineState {
  return record === undefined ? 'none' : record.doc.state
}

/** The table's rows by state, then by event: every WorkItem Command asks, often twice. */
const rowCache = new Map<WorkItemMachineState, Map<WorkItemEventType, readonly TransitionTarget[]>>()

function rowsOf(from: WorkItemMachineState, event: WorkItemEventType): readonly TransitionTarget[] {
  let byEvent = rowCache.get(from)
  if (byEvent === undefined) rowCache.set(from, (byEvent = new Map()))
  let rows = byEvent.get(event)
  if (rows === undefined) byEvent.set(event, (rows = transitionTargets(WORK_ITEM_TRANSITION_LOOKUP, from, event)))
  return rows
}

/**
 * The rows leaving `from` on `event`, guarded ones first.
 * @throws ProtocolError `INVALID_STATE_TRANSITION` when the table has none (§10.2: transitions the
 * table does not permit are rejected).
 */
export function requireRows(from: WorkItemMachineState, event: WorkItemEventType): readonly TransitionTarget[] {
  const rows = rowsOf(from, event)
  if (rows.length === 0) reject('INVALID_STATE_TRANSITION', `${event} is not permitted from WorkItem state ${from}`, { state: from, event })
  return rows
}

/** Whether some row from `from` on `event` is guarded by `guard`. */
export function hasGuard(from: WorkItemMachineState, event: WorkItemEventType, guard: WorkItemGuard): boolean {
  return rowsOf(from, event).some((row) => row.guard === guard)
}

/**
 * The target state of the first row from `from` on `event` whose guard holds in `flags` (an
 * unguarded row always holds), or `undefined` when none does: a question, where {@link nextState}
 * is a check. A Mission's Events ask it of the WorkItems they reach (§10.2, §14).
 */
export function targetOf(from: WorkItemMachineState, event: WorkItemEventType, flags: GuardFlags = NO_FLAGS): WorkItemMachineState | undefined {
  for (const row of rowsOf(from, event)) if (row.guard === undefined || flags[row.guard as WorkItemGuard] === true) return row.to as WorkItemMachineState
  return undefined
}

/**
 * {@link targetOf}, as a check.
 * @throws ProtocolError `INVALID_STATE_TRANSITION` when no row applies.
 */
export function nextState(from: WorkItemMachineState, event: WorkItemEventType, flags: GuardFlags = NO_FLAGS): WorkItemMachineState {
  const rows = requireRows(from, event)
  const to = targetOf(from, event, flags)
  if (to === undefined) {
    const guards = rows.map((r) => r.guard).filter((g) => g !== undefined)
    reject('INVALID_STATE_TRANSITION', `${event} from ${from} needs ${guards.join(' or ')}`, { state: from, event, guards })
  }
  return to
}
