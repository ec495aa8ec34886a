/**
 * Restoring a Group Authority from its store (§7.4, §16): the state every Authority starts from.
 * It is the fold of the store's retained history in acceptance order, as always; for a Group whose
 * online log was compacted, the fold also proves the stored snapshot before going past it. When
 * the Group reaches the snapshot sequence S, the snapshot must pass the six §6.4 stages, list
 * exactly the Event IDs and Policy Log of the Group's Events 1..S, and carry the `stateHash` of
 * the state just folded; the stored state image must be that state's canonical content and the
 * stored reference the hash of the signed document. Only then does the fold resume after S.
 *
 * A store whose snapshot fails any of these was tampered with or damaged, and no Authority is
 * started over it.
 *
 * A store that keeps a state checkpoint (`checkpoint.ts`) is restored from it instead when the
 * caller names the Authority whose signature it must carry: the verified image at its position,
 * then the fold of the Events after it. Only an authentic checkpoint this build cannot use sends the
 * restore back to the full fold.
 * @module
 */
import { UsageError, type KeyResolver } from '@weft/codec'
import type { Event } from '@weft/spec'
import { emitWarning, resumeFromCheckpoint, type AuthorityWarning } from './checkpoint.js'
import type { EventReducers } from '../gen/reducers.js'
import { emptyState, type ActorRef, type AuthorityState, type GroupState } from '../model.js'
import { snapshotArtifactHash, snapshotImage, verifyGroupSnapshot } from './snapshots.js'
import type { AuthorityStore, SnapshotRecord } from './store.js'
import { applyEvents, storedEvent } from '../commit/transact.js'

/** A compacted Group whose snapshot the fold has not reached yet, with the Group's Events so far. */
interface PendingCheck {
  readonly record: SnapshotRecord
  readonly segment: Event[]
}

/** Options of {@link restoreState}. */
export interface RestoreOptions {
  /**
   * The Authority restoring: a stored state checkpoint is used only with this option, and only
   * when a key the Registry binds to this Principal signed it. Without it the whole retained
   * history is folded.
   */
  readonly authority?: ActorRef
  /** Told when an authentic checkpoint is not used and the whole history is folded instead. Default: `process.emitWarning`. */
  readonly onWarning?: (warning: AuthorityWarning) => void
}

/**
 * The state of an Authority over `store`: the fold of its retained history with `reducers`, each
 * compacted Group's snapshot verified against `registry` at its sequence (see the module notes),
 * or, given `options.authority` and a store that keeps one, the stored state checkpoint verified
 * and resumed from (`checkpoint.ts`). Each reducer receives a deep-frozen Event, as on acceptance:
 * the stored object itself when the store hands back the frozen Events the Authority accepted (the
 * memory store does), a frozen copy of anything else (a durable store's parsed rows).
 * @throws UsageError naming the Group and the failed check when a stored snapshot does not verify,
 * or when the retained history does not reach a snapshot's sequence; naming the failed check when
 * a stored checkpoint does not verify (signature, image hash, position, snapshot records).
 */
export function restoreState(store: AuthorityStore, reducers: EventReducers, registry: KeyResolver, options: RestoreOptions = {}): AuthorityState {
  if (options.authority !== undefined) {
    const resumed = resumeFromCheckpoint(store, reducers, registry, { authority: options.authority, onWarning: options.onWarning ?? emitWarning })
    if (resumed !== undefined) return resumed
  }
  return foldHistory(store, reducers, registry)
}

/** The fold of the whole retained history, each compacted Group's snapshot verified at its sequence. */
function foldHistory(store: AuthorityStore, reducers: EventReducers, registry: KeyResolver): AuthorityState {
  const state = emptyState()
  const snapshotOf = store.snapshot?.bind(store)
  const pending = new Map<string, PendingCheck>()
  const seen = new Set<string>()
  for (const stored of store.allEvents()) {
    const event = storedEvent(stored)
    applyEvents(state, [event], reducers)
    const groupId = event.groupId
    if (snapshotOf === undefined || groupId === undefined) continue
    if (!seen.has(groupId)) {
      seen.add(groupId)
      const record = snapshotOf(groupId)
      if (record !== undefined) pending.set(groupId, { record, segment: [] })
    }
    const check = pending.get(groupId)
    if (check === undefined) continue
    check.segment.push(event)
    if (event.sequence !== check.record.throughSequence) continue
    requireRecord(check, state.groups.get(groupId)!, registry)
    pending.delete(groupId)
  }
  for (const { record } of pending.values()) throw new UsageError(`restore: the retained history of Group ${record.groupId} does not reach its snapshot sequence ${record.throughSequence}`)
  return state
}

/** Checks a stored snapshot record against the Group's retained Events 1..S and its state at S. */
function requireRecord(check: PendingCheck, group: GroupState, registry: KeyResolver): void {
  const refusal = recordRefusal(check, group, registry)
  if (refusal !== undefined) throw new UsageError(`restore: the snapshot ${check.record.snapshot.snapshotId} of Group ${check.record.groupId} does not verify: ${refusal}`)
}

function recordRefusal({ record, segment }: PendingCheck, group: GroupState, registry: KeyResolver): string | undefined {
  const verdict = verifyGroupSnapshot(record.snapshot, { registry, events: segment, group })
  if (!verdict.ok) return verdict.reason
  if (record.throughSequence !== verdict.snapshot.throughSequence) return 'the record and its snapshot name different sequences'
  if (record.snapshotHash !== snapshotArtifactHash(verdict.snapshot)) return 'the stored reference is not the hash of the signed snapshot'
  if (record.image !== snapshotImage(group)) return 'the stored state image is not the Group state at the snapshot sequence'
  return undefined
}
