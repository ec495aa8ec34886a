/**
 * The budget ledger of one Mission or WorkItem (§12), as an operator reads it: per usage dimension
 * the limit and where the bound comes from, and what is reserved, used and left. It is read from
 * the same fold tables and paths the charges are checked against ({@link budgetLevels}), so it
 * agrees with every `resource_usage_recorded` Event.
 * @module
 */
import { USAGE_DIMENSIONS, type ResourceBudget, type UsageDimension } from '@weft/spec'
import type { AuthorityState, GroupState, WorkItemRecord } from '../model.js'
import { heldByChildren, inheritanceOf, missionUsageOf, pathOf, usageOf, type Usage } from './work-budget.js'
import { limitOf } from './budget-limits.js'

/** A budget on a ledger path (§12, §14): a Mission's or a WorkItem's. */
export interface BudgetRef {
  readonly scope: 'mission' | 'workItem'
  readonly groupId: string
  readonly missionId: string
  /** The WorkItem, for a WorkItem's budget. */
  readonly workItemId?: string
}

/**
 * Where a dimension's bound comes from: `own` when the budget lists the limit itself; `inherited`
 * when it leaves the dimension out and a budget above lists it (§12: every charge is checked
 * against the complete ancestry); `unlimited` when no budget on the path lists it.
 */
export type BudgetLimitSource = 'own' | 'inherited' | 'unlimited'

/** One dimension of a {@link BudgetLedger}, in ledger units: whole units, money in microunits of the currency. */
export interface BudgetLedgerEntry {
  /** The limit this budget lists; `null` when it lists none (`inherited` or `unlimited`). */
  readonly limit: number | null
  readonly source: BudgetLimitSource
  /** For `inherited`: the nearest budget above that lists the dimension, across child Mission links (§14). */
  readonly inheritedFrom?: BudgetRef
  /**
   * What the budget's direct children hold from it: a child WorkItem or running child Mission that
   * lists the dimension its limit, one that inherits it what it consumed; an ended child what it
   * and its subtree consumed or still hold. A new child's listed limit comes out of the rest.
   */
  readonly reserved: number
  /** What was charged to the budget: to the WorkItem and everything below it, or to the whole Mission, child Missions included. */
  readonly used: number
  /**
   * What can still be charged to this budget: the least that it and every budget above it that
   * lists the dimension has left (§12: the authoritative remaining budget, as the usage Events and
   * capability tokens count it); `null` when `unlimited`.
   */
  readonly remaining: number | null
}

/** The six-dimensional ledger of one Mission's or WorkItem's budget (§12). */
export interface BudgetLedger extends BudgetRef {
  /** The currency of money amounts: the budget's, else the nearest above that names one; absent when none does. */
  readonly currency?: string
  readonly dimensions: Readonly<Record<UsageDimension, BudgetLedgerEntry>>
}

/** One budget of a path, with what has been charged to it. */
interface Level {
  readonly ref: BudgetRef
  readonly budget: ResourceBudget
  readonly used: Readonly<Usage>
}

/** The budgets from `record` (from `group`'s Mission when `undefined`) up to the root Mission, nearest first. */
function levelsOf(state: AuthorityState, group: GroupState, record: WorkItemRecord | undefined): Level[] {
  return pathOf(group, record, state).flatMap(({ group: g, items }): Level[] => [
    ...items.map((r) => ({ ref: { scope: 'workItem' as const, groupId: g.groupId, missionId: g.missionId, workItemId: r.doc.workItemId }, budget: r.doc.contract.budget, used: usageOf(r).subtree })),
    { ref: { scope: 'mission', groupId: g.groupId, missionId: g.missionId }, budget: g.mission.budget, used: missionUsageOf(g) },
  ])
}

/**
 * The budget ledger of Group `groupId`'s Mission, or of its WorkItem `workItemId` (§12): see
 * `Authority.budgetLedger`, which answers with this over the Authority's state. `state` may be any
 * fold of the log, such as `restoreState`'s or `replayState()`'s.
 * @returns `undefined` for an unknown Group or WorkItem.
 */
export function budgetLedgerOf(state: AuthorityState, groupId: string, workItemId?: string): BudgetLedger | undefined {
  const group = state.groups.get(groupId)
  const record = workItemId === undefined ? undefined : group?.workItems.get(workItemId)
  if (group === undefined || (workItemId !== undefined && record === undefined)) return undefined
  const [self, ...above] = levelsOf(state, group, record) as [Level, ...Level[]]
  const reserved = heldByChildren(group, record, state)
  const { remaining, currency } = inheritanceOf(group, record, state)
  const dimensions = {} as Record<UsageDimension, BudgetLedgerEntry>
  for (const d of USAGE_DIMENSIONS) {
    const limit = limitOf(self.budget, d)
    const from = limit === undefined ? above.find((level) => limitOf(level.budget, d) !== undefined) : undefined
    const source: BudgetLimitSource = limit !== undefined ? 'own' : from !== undefined ? 'inherited' : 'unlimited'
    dimensions[d] = {
      limit: limit ?? null,
      source,
      ...(from === undefined ? {} : { inheritedFrom: from.ref }),
      reserved: reserved[d],
      used: self.used[d],
      remaining: remaining[d] ?? null,
    }
  }
  return { ...self.ref, ...(currency === undefined ? {} : { currency }), dimensions }
}
