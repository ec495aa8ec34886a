/**
 * The derived indexes of the Authority state (`model.ts`): per Group, the WorkItems by parent with
 * their reservations (§4.11, §12) and the IDs of the accepted Evidence (§7.3); for the
 * Authority, the child Groups of each parent WorkItem (§14). The reducers keep them in step with the
 * members they derive from; a state checkpoint does not carry them, so a state read from one gets
 * them here.
 * @module
 */
import { emptyGroupIndexes, type AuthorityState } from '../model.js'
import { reindexAcceptedEvidence } from './evidence.js'
import { reindexChildGroups } from './work-budget.js'
import { reindexWorkItems } from './work-index.js'

/**
 * Gives `state` and each of its Groups fresh derived indexes built from their members, as a fold of
 * the log would have left them (a state read from a checkpoint image has none).
 */
export function indexState(state: AuthorityState): void {
  Object.assign(state, { childGroupIndex: { byParent: new Map(), count: 0 } })
  reindexChildGroups(state)
  for (const group of state.groups.values()) {
    Object.assign(group, emptyGroupIndexes())
    reindexWorkItems(group)
    reindexAcceptedEvidence(group)
  }
}
