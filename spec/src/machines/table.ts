/**
 * The shape shared by the WorkItem (§10.2) and Mission (§7.1) transition tables, and the one
 * function that turns a table into XState state-node configuration, so the rows stay the single
 * source of truth of each machine.
 * @module
 */
import type { EventKind } from '../catalog/events.js'
import type { SectionRef } from '../catalog/shared.js'

/**
 * The pseudo-state before an aggregate exists. Creation rows start here; it is not a state of the
 * machines, which start in the state creation leads to (§7.1, §10.2).
 */
export const NO_AGGREGATE = 'none'

/** The pseudo-state {@link NO_AGGREGATE}. */
export type NoAggregate = typeof NO_AGGREGATE

/**
 * A machine event no Command drives: a deadline passing (`timer.`) or a change propagated from
 * the Mission, a child Mission or the parent Mission (`system.`). Each name is documented, with
 * its section, where the table that uses it is defined.
 */
export type InternalEventType = `timer.${string}` | `system.${string}`

/**
 * One row of a transition table.
 * @typeParam S - The aggregate's states (the schema enum).
 * @typeParam E - The machine event types the table uses.
 * @typeParam G - The guard names the table uses.
 */
export interface TransitionRow<S extends string, E extends string, G extends string> {
  /** The state the row applies in; {@link NO_AGGREGATE} for a row that creates the aggregate. */
  readonly from: S | NoAggregate
  /** A catalogued Command kind, or a `timer.` / `system.` event ({@link InternalEventType}). */
  readonly event: E
  /** The state after the transition ({@link NO_AGGREGATE} only where nothing is created). */
  readonly to: S | NoAggregate
  /**
   * The condition under which the row applies. Rows of one (from, event) pair are tried in table
   * order, guarded rows first; an unguarded row is the fallback.
   */
  readonly guard?: G
  /** The Event kinds the transition may append, in order; empty when the protocol appends none. */
  readonly emits: readonly EventKind[]
  /** Where PROTOCOL.md defines the row. */
  readonly section: SectionRef
}

/** Any row of either table. */
export type AnyTransitionRow = TransitionRow<string, string, string>

/** A machine event: its type, and for each guard a flag saying whether it holds (see {@link guardFlag}). */
export type MachineEvent<E extends string, G extends string> = { readonly type: E } & { readonly [K in G]?: boolean }

/**
 * The placeholder implementation of a guard named `name`: it holds when the event carries
 * `name: true`. The real checks (leases, clocks, policies) belong to the Group Authority, which
 * evaluates them and passes the answer on the event.
 */
export function guardFlag<G extends string>(name: G): (args: { readonly event: { readonly [K in G]?: boolean } }) => boolean {
  return ({ event }) => event[name] === true
}

/** A transition of the state-node config built by {@link statesFromRows}. */
export interface BuiltTransition {
  readonly target: string
  readonly guard?: string
}

/** A state node built by {@link statesFromRows}. */
export interface BuiltStateNode {
  readonly type?: 'final'
  readonly on?: Readonly<Record<string, readonly BuiltTransition[]>>
  readonly meta: { readonly section: SectionRef }
}

/**
 * Builds the `states` of an XState machine from a table. Creation rows (from
 * {@link NO_AGGREGATE}) are not machine transitions and are skipped; final states get
 * `type: 'final'` and must have no outgoing rows.
 * @param states - Every state of the aggregate, in schema order.
 * @param finals - The terminal states.
 * @param rows - The table.
 * @param section - The section cited in each state's `meta`.
 * @throws Error when a terminal state has an outgoing row, or a row names an unknown state.
 */
export function statesFromRows(states: readonly string[], finals: readonly string[], rows: readonly AnyTransitionRow[], section: SectionRef): Record<string, BuiltStateNode> {
  const known = new Set(states)
  const result: Record<string, BuiltStateNode> = {}
  for (const state of states) {
    const outgoing = rows.filter((row) => row.from === state)
    if (finals.includes(state)) {
      if (outgoing.length) throw new Error(`terminal state ${state} has outgoing rows`)
      result[state] = { type: 'final', meta: { section } }
      continue
    }
    const on: Record<string, BuiltTransition[]> = {}
    // Guarded rows first, so an unguarded row of the same (from, event) is the fallback.
    const ordered = [...outgoing.filter((row) => row.guard !== undefined), ...outgoing.filter((row) => row.guard === undefined)]
    for (const row of ordered) {
      if (!known.has(row.to)) throw new Error(`row ${row.from} --${row.event}--> ${row.to}: unknown target`)
      ;(on[row.event] ??= []).push(row.guard === undefined ? { target: row.to } : { target: row.to, guard: row.guard })
    }
    result[state] = { on, meta: { section } }
  }
  return result
}
