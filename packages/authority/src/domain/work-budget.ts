/**
 * Budgets of WorkItems (§4.11, §9.1, §12): allocation that narrows downward (a WorkItem within its
 * Mission or parent WorkItem, the WorkItems of a Delegation Grant within its ceilings) and the
 * six-dimensional usage ledger that `resource_usage_record` charges against the WorkItem and its
 * whole WorkItem/Mission ancestry.
 *
 * Budgets are compared in whole units of the usage dimensions: money in millionths of the currency
 * (`financialMicrounits`), so sums never drift.
 *
 * The ledger lives here, keyed by the state objects (a `WeakMap` per record and per Group), because
 * `WorkItemRecord` has no field for it; the reducer of
 * `ext.missionweaveprotocol.core.resource_usage_recorded` is its only writer, so it is a fold of the
 * log like the rest of the state.
 * @module
 */
import { USAGE_DIMENSIONS, type ResourceBudget, type UsageDelta, type UsageDimension } from '@weft/spec'
import { reject } from '../handler.js'
import type { GroupState, WorkItemRecord } from '../model.js'

/** A value per usage dimension. */
export type Usage = Record<UsageDimension, number>

/** Limits per usage dimension; an absent dimension is unlimited. */
export type Limits = Partial<Usage>

/** The Resource Budget member holding each dimension's limit (§12). */
const LIMIT_KEY = {
  financialMicrounits: 'financialLimit',
  modelTokens: 'modelTokenLimit',
  toolCalls: 'toolCallLimit',
  computeSeconds: 'computeSecondsLimit',
  wallClockSeconds: 'wallClockSecondsLimit',
  externalActions: 'externalSideEffectLimit',
} as const satisfies Record<UsageDimension, keyof ResourceBudget>

const MICRO = 1_000_000

/** A zero usage vector. */
export function zeroUsage(): Usage {
  return { financialMicrounits: 0, modelTokens: 0, toolCalls: 0, computeSeconds: 0, wallClockSeconds: 0, externalActions: 0 }
}

/** The limits of `budget`, money in microunits. */
export function limitsOf(budget: ResourceBudget): Limits {
  const limits: Limits = {}
  for (const d of USAGE_DIMENSIONS) {
    const value = budget[LIMIT_KEY[d]]
    if (value !== undefined) limits[d] = d === 'financialMicrounits' ? Math.round(value * MICRO) : value
  }
  return limits
}

/** `usage` as a Resource Budget in `currency` (all six limits). */
export function usageAsBudget(usage: Usage, currency: string | undefined): ResourceBudget {
  return {
    ...(currency === undefined ? {} : { currency, financialLimit: usage.financialMicrounits / MICRO }),
    modelTokenLimit: usage.modelTokens,
    toolCallLimit: usage.toolCalls,
    computeSecondsLimit: usage.computeSeconds,
    wallClockSecondsLimit: usage.wallClockSeconds,
    externalSideEffectLimit: usage.externalActions,
  }
}

/**
 * Checks that `requested` fits into `ceiling` next to what is already allocated from it (§4.11:
 * budgets narrow downward; §9.1: cumulative budgets within every Grant ceiling).
 * @param scope - Names the ceiling in messages (`Mission`, `parent WorkItem …`, `Delegation Grant …`).
 * @throws ProtocolError `INVALID_COMMAND` for another currency, `WORK_CONTRACT_INCOMPLETE` when
 * `requested` leaves unlimited a dimension the ceiling limits, `BUDGET_EXCEEDED` when a dimension
 * would go over.
 */
export function requireAllocation(ceiling: ResourceBudget, scope: string, allocated: Iterable<ResourceBudget>, requested: ResourceBudget): void {
  if (ceiling.currency !== undefined && requested.currency !== undefined && requested.currency !== ceiling.currency) {
    reject('INVALID_COMMAND', `budget currency ${requested.currency} differs from the ${scope} currency ${ceiling.currency}`)
  }
  const limits = limitsOf(ceiling)
  const want = limitsOf(requested)
  const used = zeroUsage()
  for (const budget of allocated) {
    const l = limitsOf(budget)
    for (const d of USAGE_DIMENSIONS) used[d] += l[d] ?? 0
  }
  for (const d of USAGE_DIMENSIONS) {
    const limit = limits[d]
    if (limit === undefined) continue
    const asked = want[d]
    if (asked === undefined) reject('WORK_CONTRACT_INCOMPLETE', `the budget must limit ${LIMIT_KEY[d]}, which the ${scope} limits`, { missing: LIMIT_KEY[d] })
    if (used[d] + asked > limit) {
      reject('BUDGET_EXCEEDED', `${LIMIT_KEY[d]} would exceed the ${scope} budget`, { dimension: LIMIT_KEY[d], limit, allocated: used[d], requested: asked })
    }
  }
}

/** Per-record usage: the record's own charges and those of its whole subtree (itself included). */
interface ItemUsage {
  readonly own: Usage
  readonly subtree: Usage
}

const itemUsage = new WeakMap<WorkItemRecord, ItemUsage>()
const missionUsage = new WeakMap<GroupState, Usage>()

/** What has been charged to `record` itself and to its subtree (§12). */
export function usageOf(record: WorkItemRecord): ItemUsage {
  let usage = itemUsage.get(record)
  if (usage === undefined) {
    usage = { own: zeroUsage(), subtree: zeroUsage() }
    itemUsage.set(record, usage)
  }
  return usage
}

/** What has been charged to the Mission of `group` (every WorkItem together). */
export function missionUsageOf(group: GroupState): Usage {
  let usage = missionUsage.get(group)
  if (usage === undefined) {
    usage = zeroUsage()
    missionUsage.set(group, usage)
  }
  return usage
}

/** `record`, its parent WorkItem, that one's parent, and so on. */
export function ancestry(group: GroupState, record: WorkItemRecord): WorkItemRecord[] {
  const chain = [record]
  for (let id = record.parentWorkItemId; id !== undefined; ) {
    const parent = group.workItems.get(id)
    if (parent === undefined) break
    chain.push(parent)
    id = parent.parentWorkItemId
  }
  return chain
}

function deltaOf(delta: UsageDelta): Usage {
  const usage = zeroUsage()
  for (const d of USAGE_DIMENSIONS) usage[d] = delta[d] ?? 0
  return usage
}

/** The outcome of a charge that fits: the WorkItem's cumulative usage and what is left of its budget. */
export interface UsageCharge {
  readonly cumulativeUsage: Usage
  readonly remainingBudget: Limits
}

/**
 * Checks that `delta` fits the budget of `record`, of every ancestor WorkItem and of the Mission
 * (§12: one atomic transition over the complete ancestry) and returns what the Event reports.
 * Cumulative usage counts the WorkItem and its descendants, which its budget covers.
 * @throws ProtocolError `INVALID_COMMAND` for an all-zero delta, `BUDGET_EXCEEDED` when any one
 * dimension of any budget in the ancestry would go over.
 */
export function requireUsageFits(group: GroupState, record: WorkItemRecord, delta: UsageDelta): UsageCharge {
  const add = deltaOf(delta)
  if (USAGE_DIMENSIONS.every((d) => add[d] === 0)) reject('INVALID_COMMAND', 'a usage delta must be nonzero')
  const scopes: { readonly name: string; readonly budget: ResourceBudget; readonly used: Usage }[] = ancestry(group, record).map((r) => ({
    name: `WorkItem ${r.doc.workItemId}`,
    budget: r.doc.contract.budget,
    used: usageOf(r).subtree,
  }))
  scopes.push({ name: `Mission ${group.missionId}`, budget: group.mission.budget, used: missionUsageOf(group) })
  for (const scope of scopes) {
    const limits = limitsOf(scope.budget)
    for (const d of USAGE_DIMENSIONS) {
      const limit = limits[d]
      if (limit !== undefined && scope.used[d] + add[d] > limit) {
        reject('BUDGET_EXCEEDED', `${d} would exceed the budget of ${scope.name}`, { scope: scope.name, dimension: d, limit, used: scope.used[d], delta: add[d] })
      }
    }
  }
  const cumulativeUsage = zeroUsage()
  const current = usageOf(record).subtree
  for (const d of USAGE_DIMENSIONS) cumulativeUsage[d] = current[d] + add[d]
  const remainingBudget: Limits = {}
  const limits = limitsOf(record.doc.contract.budget)
  for (const d of USAGE_DIMENSIONS) {
    const limit = limits[d]
    if (limit !== undefined) remainingBudget[d] = limit - cumulativeUsage[d]
  }
  return { cumulativeUsage, remainingBudget }
}

/** Books `delta` to `record`, its ancestry and the Mission (the reducer side of {@link requireUsageFits}). */
export function recordUsage(group: GroupState, record: WorkItemRecord, delta: UsageDelta): void {
  const add = deltaOf(delta)
  const own = usageOf(record).own
  const totals = [...ancestry(group, record).map((r) => usageOf(r).subtree), missionUsageOf(group)]
  for (const d of USAGE_DIMENSIONS) {
    own[d] += add[d]
    for (const t of totals) t[d] += add[d]
  }
}

/**
 * What `record` keeps reserved once it ended (§12): only what it consumed, so the rest of its
 * budget returns to its Mission or parent WorkItem.
 */
export function releasedReservation(group: GroupState, record: WorkItemRecord): ResourceBudget {
  return usageAsBudget(usageOf(record).own, record.doc.contract.budget.currency ?? group.mission.budget.currency)
}
