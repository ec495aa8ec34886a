/**
 * The WorkItem dependency graph of one Mission (§10.4): an evolving directed acyclic graph. Every
 * edge set that is about to be stored is checked here, so the graph in state is always acyclic.
 * Also the index of the parent and child tree of WorkItems, which budgets walk (§4.11, §12).
 * @module
 */
import { reject } from '../commit/handler.js'
import type { GroupState, WorkItemRecord } from '../model.js'

/** A node of the graph: the WorkItems it depends on. */
export interface DependencyNode {
  readonly dependencyIds: readonly string[]
}

/**
 * A dependency path `dependencyId -> ... -> workItemId` when giving `workItemId` the dependencies
 * `dependencyIds` would close a cycle, else `undefined`. The search is iterative and visits each
 * WorkItem once.
 */
export function cycleThrough(nodes: ReadonlyMap<string, DependencyNode>, workItemId: string, dependencyIds: readonly string[]): string[] | undefined {
  const parent = new Map<string, string | undefined>()
  const stack: string[] = []
  for (const id of dependencyIds) {
    if (parent.has(id)) continue
    parent.set(id, undefined)
    stack.push(id)
  }
  while (stack.length > 0) {
    const id = stack.pop() as string
    if (id === workItemId) {
      const path: string[] = []
      for (let at: string | undefined = id; at !== undefined; at = parent.get(at)) path.unshift(at)
      return [workItemId, ...path]
    }
    for (const next of nodes.get(id)?.dependencyIds ?? []) {
      if (parent.has(next)) continue
      parent.set(next, id)
      stack.push(next)
    }
  }
  return undefined
}

/**
 * Checks that `workItemId` may depend on `dependencyIds`: each one names an existing WorkItem other
 * than itself, and the graph stays acyclic (§10.4).
 * @throws ProtocolError `INVALID_COMMAND` naming the offending dependency or the cycle.
 */
export function requireAcyclicDependencies(nodes: ReadonlyMap<string, DependencyNode>, workItemId: string, dependencyIds: readonly string[]): void {
  if (dependencyIds.includes(workItemId)) reject('INVALID_COMMAND', `WorkItem ${workItemId} cannot depend on itself`, { dependencyId: workItemId })
  const unknown = dependencyIds.filter((id) => !nodes.has(id))
  if (unknown.length > 0) reject('INVALID_COMMAND', `unknown dependency WorkItem ${unknown.join(', ')}`, { unknownDependencyIds: unknown })
  const cycle = cycleThrough(nodes, workItemId, dependencyIds)
  if (cycle !== undefined) reject('INVALID_COMMAND', `dependency cycle ${cycle.join(' -> ')}`, { cycle })
}

/** The tree of parent and child WorkItems (§4.11: budgets and deadlines narrow down it), indexed per Group. */
interface ChildIndex {
  /** Child records by parent WorkItem ID; `''` holds the Mission's top-level WorkItems. */
  readonly children: Map<string, Set<WorkItemRecord>>
  readonly linked: WeakSet<WorkItemRecord>
  count: number
}

// Keyed by the WorkItem map, which a copy of the GroupState shares and a fresh fold replaces.
const childIndexes = new WeakMap<ReadonlyMap<string, WorkItemRecord>, ChildIndex>()

function link(index: ChildIndex, record: WorkItemRecord): void {
  if (index.linked.has(record)) return
  const key = record.parentWorkItemId ?? ''
  let set = index.children.get(key)
  if (set === undefined) index.children.set(key, (set = new Set()))
  set.add(record)
  index.linked.add(record)
  index.count++
}

/** The index of `workItems`, first catching up with records stored without {@link linkChild} (hand-seeded state). */
function childIndexOf(workItems: ReadonlyMap<string, WorkItemRecord>): ChildIndex {
  let index = childIndexes.get(workItems)
  if (index === undefined) childIndexes.set(workItems, (index = { children: new Map(), linked: new WeakSet(), count: 0 }))
  if (index.count !== workItems.size) for (const record of workItems.values()) link(index, record)
  return index
}

/**
 * Registers a record just stored in `group.workItems` under its parent (the `work.authorized`
 * reducer calls it), so {@link childrenOf} never scans the Group.
 */
export function linkChild(group: GroupState, record: WorkItemRecord): void {
  const index = childIndexes.get(group.workItems)
  if (index !== undefined) link(index, record)
  childIndexOf(group.workItems)
}

/**
 * The child WorkItems of `parentId` in `group`, in authorization order; with `undefined`, the
 * Mission's top-level WorkItems. Costs the same however many WorkItems the Group holds.
 */
export function childrenOf(group: GroupState, parentId: string | undefined): ReadonlySet<WorkItemRecord> {
  return childIndexOf(group.workItems).children.get(parentId ?? '') ?? EMPTY
}

const EMPTY: ReadonlySet<WorkItemRecord> = new Set()
