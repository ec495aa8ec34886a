/**
 * Budgets (§4 invariant 11, §9.1, §12, §14): allocation that narrows downward, reservations that
 * ended work gives back, and the six-dimensional usage ledger that
 * `ext.missionweaveprotocol.core.resource_usage_record` charges against a WorkItem and its complete
 * ancestry.
 *
 * **Ancestry.** The budgets a charge to a WorkItem draws on are, nearest first: the WorkItem's,
 * its parent WorkItems', its Mission's and, when that Mission is a child Mission (§14), the parent
 * WorkItem's in the parent Group with that one's ancestry and Mission, up to a root Mission
 * ({@link budgetLevels}). A charge must fit every level in every dimension, or it is refused whole
 * with `BUDGET_EXCEEDED` and nothing is appended in any Group.
 *
 * **One Event, a fold across Groups.** The protocol has no transaction spanning Groups (§4
 * invariant 7), so an accepted charge is exactly one
 * `ext.missionweaveprotocol.core.resource_usage_recorded` Event, in the charged WorkItem's Group.
 * Its reducer books the delta on every level of the path, following `AuthorityState.childLinks`
 * into the parent Groups: what a parent Group sees of a child Mission is the sum of the usage
 * recorded in the child Group, and a replay of the logs in acceptance order rebuilds it. The parent
 * Group's log gets no Event for it.
 *
 * **Inherited dimensions.** A Resource Budget may list any non-empty subset of the six limits
 * (§10.1: budgets "as applicable"). A dimension a WorkItem or child Mission leaves out is inherited:
 * it has no limit of its own, and since every charge is checked against the complete ancestry it is
 * bounded by what the nearest budget above that lists it has left. Narrowing (§4 invariant 11) is
 * therefore checked only for listed limits ({@link requireAllocation}).
 *
 * **Reservations.** An unfinished WorkItem reserves its contract budget from its parent WorkItem
 * or Mission, in the dimensions it lists (an inherited one reserves nothing of its own); a
 * verified, cancelled or failed one keeps only what it and its descendants consumed plus what its
 * unfinished descendants still reserve ({@link settleReservations}), so replacement work is not
 * starved. `work.offer` is the only way out of `failed` (§10.2), and it reserves the whole budget
 * again.
 *
 * **Exhaustion** (§12: exhaustion pauses affected work and requires explicit escalation). A level
 * is exhausted once charges brought one of its dimensions to its limit; every WorkItem below it is
 * then paused: `work.start` and further charges are refused with `BUDGET_EXCEEDED`
 * ({@link requireNotExhausted}). A zero limit nothing was charged against forbids its dimension and
 * pauses nothing. Escalation raises the exhausted budget with the Commands of 0.1:
 * - a WorkItem's: `work.offer` carrying a corrected contract with the larger budget, by the current
 *   Coordinator (or a Grant delegate, or the MissionOwner's emergency override), within what the
 *   parent WorkItem or Mission has left; the offer rows apply, so a paused owner first checkpoints
 *   or blocks and the offer follows once its ownership lapsed, fencing it (§10.2);
 * - a child Mission's: its MissionOwner, the parent Coordinator, cancels it (`mission.cancel`) and
 *   promotes the parent WorkItem again (`mission.create_child`) with a larger budget within what the
 *   parent WorkItem has left;
 * - a root Mission's: no 0.1 Command raises it; its work stays paused until the MissionOwner ends
 *   the Mission or continues in a follow-up Mission (`mission.create_follow_up`).
 *
 * Amounts are whole units of the usage dimensions, money in millionths of the currency
 * (`financialMicrounits`), so sums never drift.
 *
 * The ledger is state: `WorkItemRecord.usage` and `GroupState.missionUsage`, absent until the first
 * charge. The reducers are its only writers ({@link recordUsage}), so it is a fold of the logs like
 * the rest of the state; readers of an absent ledger get a frozen zero and create nothing.
 * @module
 */
import { USAGE_DIMENSIONS, type ResourceBudget, type UsageDelta, type UsageDimension, type WorkItemState } from '@weft/spec'
import { TERMINAL_MISSION_STATES, TERMINAL_WORK_ITEM_STATES } from '@weft/spec/machines'
import { reject } from '../commit/handler.js'
import type { AuthorityState, ChildGroupIndex, GroupState, Usage, UsageLedger, WorkItemRecord } from '../model.js'
import { childrenOf, setReservation } from './work-index.js'
import { LIMIT_KEY, limitOf, MICRO, zeroUsage } from './budget-limits.js'

export type { Usage } from '../model.js'
export { limitOf } from './budget-limits.js'

/** Limits per usage dimension; an absent dimension is unlimited. */
export type Limits = Partial<Usage>

/** The limits of `budget`, money in microunits. */
export function limitsOf(budget: ResourceBudget): Limits {
  const limits: Limits = {}
  for (const d of USAGE_DIMENSIONS) {
    const value = limitOf(budget, d)
    if (value !== undefined) limits[d] = value
  }
  return limits
}

/** `usage` as a Resource Budget in `currency` (all six limits). */
export function usageAsBudget(usage: Usage, currency: string | undefined): ResourceBudget {
  // Two literals rather than a spread of a conditional one: this runs whenever work ends.
  if (currency === undefined) {
    return {
      modelTokenLimit: usage.modelTokens,
      toolCallLimit: usage.toolCalls,
      computeSecondsLimit: usage.computeSeconds,
      wallClockSecondsLimit: usage.wallClockSeconds,
      externalSideEffectLimit: usage.externalActions,
    }
  }
  return {
    currency,
    financialLimit: usage.financialMicrounits / MICRO,
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
 *
 * Only the limits `requested` lists are checked: a dimension it leaves out is inherited (§12: every
 * charge is checked against the complete ancestry, so it cannot exceed the ceiling) and reserves
 * nothing here. A listed limit in a dimension the ceiling itself inherits must fit what the
 * ceiling's ancestry has left.
 * @param scope - Names the ceiling in messages (`Mission`, `parent WorkItem …`, `Delegation Grant …`).
 * @param inherited - What the ceiling inherits ({@link inheritanceOf}): its remaining budget, read for
 * the dimensions the ceiling does not list, and its currency when it names none. Absent: neither is
 * checked.
 * @throws ProtocolError `INVALID_COMMAND` for another currency, `BUDGET_EXCEEDED` when a listed
 * dimension would go over.
 */
export function requireAllocation(ceiling: ResourceBudget, scope: string, allocated: Iterable<ResourceBudget>, requested: ResourceBudget, inherited?: Inheritance): void {
  const currency = ceiling.currency ?? inherited?.currency
  if (currency !== undefined && requested.currency !== undefined && requested.currency !== currency) {
    reject('INVALID_COMMAND', `budget currency ${requested.currency} differs from the ${scope} currency ${currency}`)
  }
  const used = zeroUsage()
  for (const budget of allocated) for (const d of USAGE_DIMENSIONS) used[d] += limitOf(budget, d) ?? 0
  for (const d of USAGE_DIMENSIONS) {
    const asked = limitOf(requested, d)
    if (asked === undefined) continue
    const limit = limitOf(ceiling, d)
    if (limit === undefined) {
      const left = inherited?.remaining[d]
      if (left !== undefined && asked > left) {
        reject('BUDGET_EXCEEDED', `${LIMIT_KEY[d]} would exceed what the ${scope} inherits`, { dimension: LIMIT_KEY[d], limit: left, requested: asked, inherited: true })
      }
      continue
    }
    if (used[d] + asked > limit) {
      reject('BUDGET_EXCEEDED', `${LIMIT_KEY[d]} would exceed the ${scope} budget`, { dimension: LIMIT_KEY[d], limit, allocated: used[d], requested: asked })
    }
  }
}

/** What an uncharged ledger reads as: frozen, so a reader cannot charge it by mistake. */
const NO_USAGE: Readonly<Usage> = Object.freeze(zeroUsage())
const NO_ITEM_USAGE: UsageLedger = Object.freeze({ own: NO_USAGE as Usage, subtree: NO_USAGE as Usage })

/** What has been charged to `record` itself and to its subtree, child Missions included (§12, §14); read only. */
export function usageOf(record: WorkItemRecord): UsageLedger {
  return record.usage ?? NO_ITEM_USAGE
}

/** What has been charged to the Mission of `group`: every WorkItem together, child Missions included; read only. */
export function missionUsageOf(group: GroupState): Usage {
  return group.missionUsage ?? (NO_USAGE as Usage)
}

/** The ledger of `record` for the reducers to charge, made on the first charge. */
function chargedUsageOf(record: WorkItemRecord): UsageLedger {
  let usage = record.usage
  if (usage === undefined) record.usage = usage = { own: zeroUsage(), subtree: zeroUsage() }
  return usage
}

/** The Mission ledger of `group` for the reducers to charge, made on the first charge. */
function chargedMissionUsageOf(group: GroupState): Usage {
  let usage = group.missionUsage
  if (usage === undefined) group.missionUsage = usage = zeroUsage()
  return usage
}

/** `record`, its parent WorkItem, that one's parent, and so on, within `group`. */
export function ancestry(group: GroupState, record: WorkItemRecord): WorkItemRecord[] {
  const chain = [record]
  for (let id = record.parentWorkItemId; id !== undefined; ) {
    const parent = group.workItems.get(id)
    // A corrupt parent link that loops back would otherwise spin forever.
    if (parent === undefined || chain.includes(parent)) break
    chain.push(parent)
    id = parent.parentWorkItemId
  }
  return chain
}

/** One Group's stretch of a budget path: WorkItems nearest first, then the Group's Mission. */
export interface PathSegment {
  readonly group: GroupState
  readonly items: readonly WorkItemRecord[]
}

/**
 * The Group segments from `record` (from `group`'s Mission when `undefined`) up to the root Mission
 * (§14). `state` carries the walk from a child Mission's Group to its parent WorkItem; without it,
 * or when the Authority does not serve the parent Group, the path ends at `group`'s Mission.
 */
export function pathOf(group: GroupState, record: WorkItemRecord | undefined, state: AuthorityState | undefined): PathSegment[] {
  const path: PathSegment[] = []
  let at: { group: GroupState; record: WorkItemRecord | undefined } | undefined = { group, record }
  // A path has a segment per Mission level (a handful), so a scan finds a repeated Group soon enough.
  while (at !== undefined && !path.some((segment) => segment.group.groupId === at!.group.groupId)) {
    path.push({ group: at.group, items: at.record === undefined ? [] : ancestry(at.group, at.record) })
    at = parentOf(state, at.group)
  }
  return path
}

/** The parent Group and WorkItem of a child Mission's Group, when the Authority serves them (§14). */
function parentOf(state: AuthorityState | undefined, child: GroupState): { group: GroupState; record: WorkItemRecord } | undefined {
  const link = state?.childLinks.get(child.groupId)
  const group = link === undefined ? undefined : state?.groups.get(link.parentGroupId)
  const record = link === undefined ? undefined : group?.workItems.get(link.parentWorkItemId)
  return group === undefined || record === undefined ? undefined : { group, record }
}

/** One budget on a charge's path, with the ledger of what has been charged against it so far. */
export interface BudgetLevel {
  /** `WorkItem <id>` or `Mission <id>`, as error details name it. */
  readonly scope: string
  readonly groupId: string
  readonly budget: ResourceBudget
  /** The live ledger of the level (read-only outside the reducers). */
  readonly used: Readonly<Usage>
}

/**
 * Every budget a charge to `record` draws on, nearest first: the WorkItem, its parent WorkItems, its
 * Mission and, through a child Mission's link (§14), the parent WorkItem and its ancestry and Mission
 * in the parent Group, up to the root. With `record` `undefined`, the path starts at `group`'s Mission.
 * @param state - The Authority state whose child links lead into parent Groups; without it the path
 * ends at `group`'s Mission.
 */
export function budgetLevels(group: GroupState, record: WorkItemRecord | undefined, state?: AuthorityState): BudgetLevel[] {
  const levels: BudgetLevel[] = []
  for (const { group: g, items } of pathOf(group, record, state)) {
    for (const r of items) levels.push({ scope: `WorkItem ${r.doc.workItemId}`, groupId: g.groupId, budget: r.doc.contract.budget, used: usageOf(r).subtree })
    levels.push({ scope: `Mission ${g.missionId}`, groupId: g.groupId, budget: g.mission.budget, used: missionUsageOf(g) })
  }
  return levels
}

/** The first exhausted level of `levels` and the dimension used up: charges reached a positive limit. */
/** The first dimension `used` exhausted under `budget`: charges reached a positive limit. */
function exhaustedDimension(budget: ResourceBudget, used: Readonly<Usage>): UsageDimension | undefined {
  for (const d of USAGE_DIMENSIONS) {
    // A zero limit forbids the dimension; only a limit that charges reached pauses work (so a
    // dimension nothing was charged to needs no limit read).
    if (!(used[d] > 0)) continue
    const limit = limitOf(budget, d)
    if (limit !== undefined && used[d] >= limit) return d
  }
  return undefined
}

function refuseExhausted(workItemId: string, level: Pick<BudgetLevel, 'scope' | 'budget' | 'used'>, dimension: UsageDimension): never {
  reject('BUDGET_EXCEEDED', `WorkItem ${workItemId} is paused: ${dimension} of ${level.scope} is exhausted and needs escalation`, {
    scope: level.scope,
    dimension,
    limit: limitOf(level.budget, dimension),
    used: level.used[dimension],
    exhausted: true,
  })
}

function requireLevelsLive(levels: readonly BudgetLevel[], workItemId: string): void {
  for (const level of levels) {
    const dimension = exhaustedDimension(level.budget, level.used)
    if (dimension !== undefined) refuseExhausted(workItemId, level, dimension)
  }
}

/**
 * Checks that no budget on `record`'s path is exhausted (§12: exhaustion pauses the affected work
 * until an escalation raises the budget).
 * @param state - As for {@link budgetLevels}.
 * @throws ProtocolError `BUDGET_EXCEEDED` with `details.exhausted: true`, naming the level and dimension.
 */
export function requireNotExhausted(group: GroupState, record: WorkItemRecord, state?: AuthorityState): void {
  // The levels of {@link budgetLevels}, nearest first, walked without building them: every
  // `work.start` passes here, and a level is only named when it refuses.
  const workItemId = record.doc.workItemId
  for (const segment of pathOf(group, record, state)) {
    for (const r of segment.items) {
      const used = usageOf(r).subtree
      const dimension = exhaustedDimension(r.doc.contract.budget, used)
      if (dimension !== undefined) refuseExhausted(workItemId, { scope: `WorkItem ${r.doc.workItemId}`, budget: r.doc.contract.budget, used }, dimension)
    }
    const { mission } = segment.group
    const used = missionUsageOf(segment.group)
    const dimension = exhaustedDimension(mission.budget, used)
    if (dimension !== undefined) refuseExhausted(workItemId, { scope: `Mission ${segment.group.missionId}`, budget: mission.budget, used }, dimension)
  }
}

function deltaOf(delta: Partial<Usage>): Usage {
  const usage = zeroUsage()
  for (const d of USAGE_DIMENSIONS) usage[d] = delta[d] ?? 0
  return usage
}

/** The outcome of a charge that fits: the WorkItem's cumulative usage and what it may still spend. */
export interface UsageCharge {
  readonly cumulativeUsage: Usage
  readonly remainingBudget: Limits
}

/**
 * What can still be charged to `record` (to `group`'s Mission when `undefined`) per dimension: the
 * least that any level of its path has left (§12: the authoritative remaining budget). A dimension
 * the record inherits is bounded by the levels above it; an absent dimension is limited nowhere.
 * @param state - As for {@link budgetLevels}.
 */
export function remainingBudget(group: GroupState, record: WorkItemRecord | undefined, state?: AuthorityState): Limits {
  return leftOver(budgetLevels(group, record, state), zeroUsage())
}

/** What a budget inherits from its ancestry (§12). */
export interface Inheritance {
  /** What can still be charged to it ({@link remainingBudget}). */
  readonly remaining: Limits
  /** The currency its money is counted in: its own, else the nearest one named above it. */
  readonly currency: string | undefined
}

/**
 * What the budget of `record` (of `group`'s Mission when `undefined`) inherits: its remaining
 * budget and its currency (§12: a dimension or currency a budget leaves out comes from its ancestry).
 * @param state - As for {@link budgetLevels}.
 * @param below - A WorkItem below `record` whose budget is being checked again (a corrected
 * contract): what it consumed already counts as left, since its new limit covers it.
 */
export function inheritanceOf(group: GroupState, record: WorkItemRecord | undefined, state?: AuthorityState, below?: WorkItemRecord): Inheritance {
  const levels = budgetLevels(group, record, state)
  const credit = zeroUsage()
  if (below !== undefined) for (const d of USAGE_DIMENSIONS) credit[d] = -usageOf(below).subtree[d]
  return { remaining: leftOver(levels, credit), currency: levels.find((level) => level.budget.currency !== undefined)?.budget.currency }
}

function leftOver(levels: readonly BudgetLevel[], add: Usage): Limits {
  const left: Limits = {}
  for (const level of levels) {
    for (const d of USAGE_DIMENSIONS) {
      const limit = limitOf(level.budget, d)
      if (limit === undefined) continue
      const rest = Math.max(0, limit - level.used[d] - add[d])
      left[d] = Math.min(left[d] ?? rest, rest)
    }
  }
  return left
}

/**
 * Checks that `delta` may be charged to `record` (§12: one atomic transition over the complete
 * ancestry) and returns what the Event reports: the WorkItem's cumulative usage (its subtree, which
 * its budget covers) and the least that any level has left afterwards (for a dimension the
 * WorkItem inherits, what its ancestry has left).
 * @param state - As for {@link budgetLevels}; the pipeline's handlers always pass it.
 * @throws ProtocolError `INVALID_COMMAND` for an all-zero delta; `BUDGET_EXCEEDED` when a level is
 * exhausted (`details.exhausted`) or when any one dimension of any level would go over.
 */
export function requireUsageFits(group: GroupState, record: WorkItemRecord, delta: UsageDelta, state?: AuthorityState): UsageCharge {
  const add = deltaOf(delta)
  if (USAGE_DIMENSIONS.every((d) => add[d] === 0)) reject('INVALID_COMMAND', 'a usage delta must be nonzero')
  const levels = budgetLevels(group, record, state)
  requireLevelsLive(levels, record.doc.workItemId)
  for (const level of levels) {
    for (const d of USAGE_DIMENSIONS) {
      const limit = limitOf(level.budget, d)
      if (limit !== undefined && level.used[d] + add[d] > limit) {
        reject('BUDGET_EXCEEDED', `${d} would exceed the budget of ${level.scope}`, { scope: level.scope, dimension: d, limit, used: level.used[d], delta: add[d] })
      }
    }
  }
  const current = usageOf(record).subtree
  const cumulativeUsage = zeroUsage()
  for (const d of USAGE_DIMENSIONS) cumulativeUsage[d] = current[d] + add[d]
  return { cumulativeUsage, remainingBudget: leftOver(levels, add) }
}

/**
 * Books `delta` on `record` and on every level of its path, across Groups (the reducer side of
 * {@link requireUsageFits}), then settles the reservations of the ended WorkItems on the path.
 * @param state - As for {@link budgetLevels}; reducers always pass it.
 */
export function recordUsage(group: GroupState, record: WorkItemRecord, delta: UsageDelta, state?: AuthorityState): void {
  const add = deltaOf(delta)
  const own = chargedUsageOf(record).own
  // The levels of {@link budgetLevels}: every WorkItem's subtree ledger and every Mission's on the path.
  const totals: Usage[] = []
  for (const { group: g, items } of pathOf(group, record, state)) {
    for (const r of items) totals.push(chargedUsageOf(r).subtree)
    totals.push(chargedMissionUsageOf(g))
  }
  for (const d of USAGE_DIMENSIONS) {
    own[d] += add[d]
    for (const t of totals) t[d] += add[d]
  }
  settleReservations(group, record, state)
}

/** WorkItem states that hold no reservation beyond what was consumed (§12); `failed` until it is offered again (§10.2). */
const RELEASING_STATES: readonly WorkItemState[] = [...TERMINAL_WORK_ITEM_STATES, 'failed']

/** Whether `record` gave back the unconsumed part of its reservation (§12). */
export function releasesReservation(record: WorkItemRecord): boolean {
  return RELEASING_STATES.includes(record.doc.state)
}

/** Per dimension, `limit` where `budget` limits it and `used` where it does not. */
function heldOf(budget: ResourceBudget, used: Readonly<Usage>): Usage {
  const held = zeroUsage()
  for (const d of USAGE_DIMENSIONS) held[d] = limitOf(budget, d) ?? used[d]
  return held
}

/**
 * What is committed from `record`'s budget (§12, §14): its own usage and what its children hold
 * ({@link heldByChildren}). The unused rest is what a new child WorkItem or child Mission may still get.
 * @param state - Finds the child Missions; without it they are not counted.
 */
export function committedUnder(group: GroupState, record: WorkItemRecord, state?: AuthorityState): Usage {
  const total = heldByChildren(group, record, state)
  const own = usageOf(record).own
  for (const d of USAGE_DIMENSIONS) total[d] += own[d]
  return total
}

/**
 * What the direct children of `record` (the top-level WorkItems of `group`'s Mission when
 * `undefined`) hold from its budget (§12, §14): a child WorkItem its reservation, or what it
 * consumed in a dimension it inherits; a child Mission its whole budget while it runs (what it
 * consumed in an inherited dimension), its usage once it ended.
 * @param state - Finds the child Missions; without it they are not counted.
 */
export function heldByChildren(group: GroupState, record: WorkItemRecord | undefined, state?: AuthorityState): Usage {
  const total = zeroUsage()
  const add = (part: Readonly<Usage>): void => {
    for (const d of USAGE_DIMENSIONS) total[d] += part[d]
  }
  const id = record?.doc.workItemId
  // The parent -> children indexes keep this independent of how many WorkItems and child Missions there are.
  for (const child of childrenOf(group, id)) add(heldOf(child.reservedBudget, usageOf(child).subtree))
  if (state !== undefined && id !== undefined) {
    for (const childGroupId of childGroupsOf(state, group.groupId, id)) {
      const child = state.groups.get(childGroupId)
      if (child === undefined) continue
      const ended = (TERMINAL_MISSION_STATES as readonly string[]).includes(child.mission.state)
      add(ended ? missionUsageOf(child) : heldOf(child.mission.budget, missionUsageOf(child)))
    }
  }
  return total
}

type ChildLink = AuthorityState['childLinks'] extends Map<string, infer L> ? L : never

function childGroupKey(parentGroupId: string, parentWorkItemId: string): string {
  return `${parentGroupId} ${parentWorkItemId}`
}

function fileChildGroup(index: ChildGroupIndex, childGroupId: string, link: ChildLink): void {
  const key = childGroupKey(link.parentGroupId, link.parentWorkItemId)
  const children = index.byParent.get(key)
  if (children === undefined) index.byParent.set(key, [childGroupId])
  else children.push(childGroupId)
}

/** Rebuilds `state.childGroupIndex` from `state.childLinks` (a state read from a checkpoint, or links stored by hand). */
export function reindexChildGroups(state: AuthorityState): void {
  const index = state.childGroupIndex
  index.byParent.clear()
  for (const [childGroupId, link] of state.childLinks) fileChildGroup(index, childGroupId, link)
  index.count = state.childLinks.size
}

/**
 * Links child Group `childGroupId` to its parent WorkItem (§14) in `state.childLinks` and in
 * `state.childGroupIndex` (the reducer of a child Mission's creation calls it).
 */
export function linkChildGroup(state: AuthorityState, childGroupId: string, link: ChildLink): void {
  const links = state.childLinks
  const known = links.has(childGroupId)
  links.set(childGroupId, link)
  const index = state.childGroupIndex
  if (known || index.count !== links.size - 1) reindexChildGroups(state)
  else {
    fileChildGroup(index, childGroupId, link)
    index.count++
  }
}

/** The child Groups ever linked to WorkItem `workItemId` of Group `groupId`, in link order. */
function childGroupsOf(state: AuthorityState, groupId: string, workItemId: string): readonly string[] {
  if (state.childLinks.size === 0) return []
  const index = state.childGroupIndex
  if (index.count !== state.childLinks.size) reindexChildGroups(state)
  return index.byParent.get(childGroupKey(groupId, workItemId)) ?? []
}

/**
 * ISO 4217's "no currency": the label of amounts no budget names a currency for, so that turning
 * usage into a Resource Budget ({@link usageAsBudget}) never drops its money.
 */
export const NO_CURRENCY = 'XXX'

/** The currency `record`'s amounts are counted in: its contract's, else its Mission's (§12: an unnamed currency is inherited). */
function currencyOf(group: GroupState, record: WorkItemRecord): string {
  return record.doc.contract.budget.currency ?? group.mission.budget.currency ?? NO_CURRENCY
}

/** {@link committedUnder} as a Resource Budget, for {@link requireAllocation}. */
export function committedBudget(group: GroupState, record: WorkItemRecord, state?: AuthorityState): ResourceBudget {
  return usageAsBudget(committedUnder(group, record, state), currencyOf(group, record))
}

/**
 * What an ended `record` keeps reserved (§12): what is {@link committedUnder} it, never more than
 * its own budget (its charges cannot exceed that, and its parent allocated no more).
 */
function keptReservation(group: GroupState, record: WorkItemRecord, state: AuthorityState | undefined): ResourceBudget {
  const kept = committedUnder(group, record, state)
  const budget = record.doc.contract.budget
  for (const d of USAGE_DIMENSIONS) kept[d] = Math.min(kept[d], limitOf(budget, d) ?? kept[d])
  return usageAsBudget(kept, currencyOf(group, record))
}

/**
 * Brings `reservedBudget` up to date on `record` and every WorkItem above it (§12): an unfinished
 * WorkItem reserves its contract budget; a verified, cancelled or failed one only what is still
 * committed under it, so the rest returns to its parent WorkItem or Mission. The reducers call it
 * after every change to a state, a contract or the ledger under a WorkItem.
 * @param state - As for {@link budgetLevels}.
 */
export function settleReservations(group: GroupState, record: WorkItemRecord, state?: AuthorityState): void {
  for (const segment of pathOf(group, record, state)) {
    for (const r of segment.items) {
      const next = releasesReservation(r) ? keptReservation(segment.group, r, state) : r.doc.contract.budget
      // An unchanged reservation is left alone: a write moves the parent's reservation index twice for nothing.
      if (r.reservedBudget !== next) setReservation(segment.group, r, next)
    }
  }
}

/** Settles the reservations above a child Mission's Group once its Mission changed state (§14). */
export function settleParentOf(state: AuthorityState, child: GroupState): void {
  const parent = parentOf(state, child)
  if (parent !== undefined) settleReservations(parent.group, parent.record, state)
}
