/**
 * The WorkItem dependency graph of one Mission (§10.4): an evolving directed acyclic graph. Every
 * edge set that is about to be stored is checked here, so the graph in state is always acyclic.
 * @module
 */
import { reject } from '../commit/handler.js'

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
