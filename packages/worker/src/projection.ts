/**
 * The Worker's projection (§11.1): one view per Group, folded from that Group's accepted Events in
 * sequence order by the generated {@link applyWorkerEvent} over {@link workerReducers}. The inbox
 * hands it only the next contiguous Event of a Group; the Scheduler reads what changed and what is
 * ready to run.
 * @module
 */
import { UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import type { GroupView, TrackedWork, WorkerView } from './seams.js'
import { applyWorkerEvent } from './gen/reducers.js'
import { emptyView, openGroup, workerReducers } from './reducers.js'

/** The per-Group view of one Worker, advanced one contiguous Event at a time. */
export interface Projection {
  /** The folded state; read it, never write it (only the reducers do). */
  readonly view: WorkerView
  /**
   * Folds `event`, which must be the next Event of its Group (`sequence` = the Group's head + 1).
   * @throws UsageError for an Organization-scoped Event (no Group order, §15.2) or a sequence that
   * does not continue the Group; the view is unchanged then.
   */
  apply(event: Event): void
  /**
   * Starts an untouched Group after `sequence`, the subscriber's visibility start (§8): its first
   * folded Event is then `sequence + 1`.
   * @throws UsageError when the Group already has folded Events.
   */
  startAfter(groupId: string, sequence: number): void
  /** The records changed since the last call (each once), and forgets them: what the Scheduler re-syncs. */
  drainChanges(): readonly TrackedWork[]
  /** The record of a WorkItem in any Group, or `undefined`. */
  work(workItemId: string): TrackedWork | undefined
  /** The view of a Group, or `undefined` before its first Event. */
  group(groupId: string): GroupView | undefined
  /**
   * WorkItems this Worker may start now as far as the log says (§10.4, §11.1): owned by the Worker,
   * `queued`, with a known contract and every declared dependency `verified`. Lease and start-by
   * times are not judged here; the runtime holds the clock. In one Group when `groupId` is given.
   */
  readyForMe(groupId?: string): TrackedWork[]
}

/**
 * Creates an empty projection for the Worker whose Agent ID is `self`.
 * @example
 * ```ts
 * const projection = createProjection('urn:agent:worker-1')
 * for (const event of groupLog) projection.apply(event)
 * for (const item of projection.readyForMe()) scheduler.enqueue(toSchedulerItem(item))
 * ```
 */
export function createProjection(self: string): Projection {
  const view = emptyView(self)

  function work(workItemId: string): TrackedWork | undefined {
    // WorkItem IDs are unique across Groups; a Worker reads few Groups, so a lookup per Group is cheap.
    for (const group of view.groups.values()) {
      const found = group.work.get(workItemId)
      if (found !== undefined) return found
    }
    return undefined
  }

  function ready(group: GroupView, out: TrackedWork[]): void {
    for (const id of group.queuedForMe ?? group.work.keys()) {
      const item = group.work.get(id)
      if (item === undefined || item.state !== 'queued' || item.owner !== self || item.contract === undefined) continue
      // §10.4: eligible only when every declared dependency is satisfied (verified, in this Group).
      if (item.dependencyIds.every((dep) => group.verified.has(dep))) out.push(item)
    }
  }

  return {
    view,
    apply(event) {
      const { groupId, sequence } = event
      if (groupId === undefined || sequence === undefined) {
        throw new UsageError(`${event.kind} has no Group order (§15.2); only Group Events are folded into the projection`)
      }
      const head = view.groups.get(groupId)?.head ?? 0
      if (sequence !== head + 1) {
        throw new UsageError(`Event ${event.eventId} of Group ${groupId} has sequence ${sequence}; the projection expects ${head + 1}`)
      }
      const group = openGroup(view, groupId)
      applyWorkerEvent(workerReducers, view, event)
      group.head = sequence
    },
    startAfter(groupId, sequence) {
      if ((view.groups.get(groupId)?.head ?? 0) !== 0) throw new UsageError(`the projection of Group ${groupId} has already folded Events`)
      openGroup(view, groupId).head = sequence
    },
    drainChanges() {
      const changed: TrackedWork[] = []
      for (const id of view.changed) {
        const item = work(id)
        if (item !== undefined) changed.push(item)
      }
      view.changed.clear()
      return changed
    },
    work,
    group: (groupId) => view.groups.get(groupId),
    readyForMe(groupId) {
      const out: TrackedWork[] = []
      if (groupId === undefined) for (const group of view.groups.values()) ready(group, out)
      else {
        const group = view.groups.get(groupId)
        if (group !== undefined) ready(group, out)
      }
      return out
    },
  }
}
