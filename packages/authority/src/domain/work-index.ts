/**
 * The WorkItems of a Group by parent (`GroupState.workItemIndex`): the tree that budgets and
 * deadlines narrow down (§4.11) and what the children of each parent reserve together (§12), so a
 * budget check costs the same however many WorkItems the Group holds. The `work.authorized` reducer
 * files each new record ({@link indexWorkItem}); {@link setReservation} is the only writer of a
 * record's `reservedBudget`. A record stored by hand, or a state read from a checkpoint, leaves the
 * count out of step, and the index is rebuilt from the records before its next use.
 * @module
 */
import { USAGE_DIMENSIONS, type ResourceBudget } from '@weft/spec'
import type { GroupState, Usage, WorkItemIndex, WorkItemRecord } from '../model.js'
import { limitOf, zeroUsage } from './budget-limits.js'

/** The key of a record's parent in the index: its parent WorkItem ID, `''` for the Mission. */
function parentKeyOf(record: WorkItemRecord): string {
  return record.parentWorkItemId ?? ''
}

function addReservation(index: WorkItemIndex, parentKey: string, budget: ResourceBudget, sign: 1 | -1): void {
  let sum = index.reserved.get(parentKey)
  if (sum === undefined) index.reserved.set(parentKey, (sum = zeroUsage()))
  for (const d of USAGE_DIMENSIONS) sum[d] += sign * (limitOf(budget, d) ?? 0)
}

function file(index: WorkItemIndex, record: WorkItemRecord): void {
  const key = parentKeyOf(record)
  const children = index.children.get(key)
  if (children === undefined) index.children.set(key, [record])
  else children.push(record)
  addReservation(index, key, record.reservedBudget, 1)
}

/** Rebuilds `group.workItemIndex` from the records of `group.workItems`, in their order. */
export function reindexWorkItems(group: GroupState): void {
  const index = group.workItemIndex
  index.children.clear()
  index.reserved.clear()
  for (const record of group.workItems.values()) file(index, record)
  index.count = group.workItems.size
}

/** `group.workItemIndex`, rebuilt first when it does not count every record. */
function indexOf(group: GroupState): WorkItemIndex {
  const index = group.workItemIndex
  if (index.count !== group.workItems.size) reindexWorkItems(group)
  return index
}

/** Files a record just stored in `group.workItems` under its parent, with its reservation (the `work.authorized` reducer). */
export function indexWorkItem(group: GroupState, record: WorkItemRecord): void {
  const index = group.workItemIndex
  if (index.count !== group.workItems.size - 1) reindexWorkItems(group)
  else {
    file(index, record)
    index.count++
  }
}

/**
 * The child WorkItems of `parentId` in `group`, in authorization order; with `undefined`, the
 * Mission's top-level WorkItems.
 */
export function childrenOf(group: GroupState, parentId: string | undefined): readonly WorkItemRecord[] {
  return indexOf(group).children.get(parentId ?? '') ?? NO_CHILDREN
}

const NO_CHILDREN: readonly WorkItemRecord[] = Object.freeze([])

/** What the children of `parentId` (the Mission's top-level WorkItems when `undefined`) reserve together, if any child does. */
export function reservedBy(group: GroupState, parentId: string | undefined): Readonly<Usage> | undefined {
  return indexOf(group).reserved.get(parentId ?? '')
}

/**
 * Sets the reservation of `record`, a WorkItem of `group`, to `next`, moving its parent's sum with
 * it (§12). The only writer of `WorkItemRecord.reservedBudget`.
 */
export function setReservation(group: GroupState, record: WorkItemRecord, next: ResourceBudget): void {
  const index = indexOf(group)
  const parentKey = parentKeyOf(record)
  addReservation(index, parentKey, record.reservedBudget, -1)
  record.reservedBudget = next
  addReservation(index, parentKey, next, 1)
}
