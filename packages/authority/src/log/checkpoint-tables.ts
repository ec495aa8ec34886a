/**
 * Fold tables: the parts of the Authority state that live beside {@link AuthorityState} rather
 * than in it. Some reducers keep what the model has no member for (budget ledgers, retry ledgers,
 * closed leases, rate windows, ...) in a `WeakMap` keyed by the Group or WorkItem record it belongs
 * to. Such a table is as much a fold of the log as the state itself, so a state checkpoint
 * (`checkpoint.ts`) must carry it, and it can only do so for tables it knows: a reducer module
 * creates each such table with {@link foldTable}, which names and registers it.
 *
 * An index that rebuilds itself from the state whenever it is missing or out of step (the
 * reservation sums, the child index of WorkItems) is not a fold table and stays a plain `WeakMap`;
 * `checkpoint.test.ts` lists every `WeakMap` of the package and fails on one that is neither.
 * @module
 */
import type { GroupState, WorkItemRecord } from '../model.js'

/** The state objects a fold table is keyed by. */
export interface FoldTableKeys {
  /** A Group's {@link GroupState}, as `AuthorityState.groups` holds it. */
  readonly group: GroupState
  /** A WorkItem's {@link WorkItemRecord}, as `GroupState.workItems` holds it. */
  readonly workItem: WorkItemRecord
}

/** What a fold table is keyed by: `'group'` or `'workItem'`. */
export type FoldTableKey = keyof FoldTableKeys

/** One registered fold table. */
export interface FoldTable {
  readonly name: string
  readonly keyedBy: FoldTableKey
  readonly table: WeakMap<object, unknown>
}

const registered = new Map<string, FoldTable>()

/**
 * A new, registered fold table: a `WeakMap` from the `keyedBy` state objects to what a reducer
 * keeps for them. `name` is stable across builds (a checkpoint records the names it carries, and a
 * build that registers other names does not read it).
 * @throws Error when `name` is registered twice: two modules claiming one table is a programming
 * error, caught at import.
 * @example
 * ```ts
 * const ledgers = foldTable<WorkItemRecord, RetryLedger>('retry.ledgers', 'workItem')
 * ```
 */
export function foldTable<K extends FoldTableKeys[FoldTableKey], V>(name: string, keyedBy: FoldTableKey): WeakMap<K, V> {
  if (registered.has(name)) throw new Error(`foldTable: ${name} is registered twice`)
  const table = new WeakMap<K, V>()
  registered.set(name, Object.freeze({ name, keyedBy, table: table as unknown as WeakMap<object, unknown> }))
  return table
}

/** Every registered fold table, in name order (the order a checkpoint writes them in). */
export function foldTables(): readonly FoldTable[] {
  return [...registered.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}
