/**
 * The online log of a Group Authority and its compaction behind a signed Group Snapshot (§7.4,
 * §16): paged reads that never cut silently, `CURSOR_TOO_OLD` with the snapshot reference for a
 * position the online log no longer holds, and the compaction step that verifies a snapshot and
 * takes the Events it covers off the online log.
 *
 * **What compaction keeps.** §7.4 requires an active Group to keep its complete Event history, so
 * compaction never deletes: the compacted Events stay in the store's retained history, which every
 * fold (start-up, `replayState`) reads in acceptance order, and the state stays the fold of the
 * log. What moves is what replay serves. Besides the signed snapshot, the store keeps the snapshot's
 * state image (`snapshotImage`: the canonical content whose SHA-256 is the signed `stateHash`), the
 * one thing a subscriber restores from (§16: it verifies hash and signature, then resumes after the
 * snapshot sequence). The Group Snapshot document has no member for memberships, Messages or
 * leases and admits none (`additionalProperties: false`), which is why the Authority restores
 * itself from its retained history, checked against the snapshot, rather than from the document.
 *
 * The retained history below the compaction point stays readable in process (`history`), and a
 * snapshot can be built at any sequence of the log (`buildSnapshot`): below the head, the Group's
 * state there is a fold of the retained history up to that Event.
 *
 * Reads go through the redaction view of `../delivery/redaction.ts`, so a redacted Message is served as its
 * tombstone on every path.
 *
 * Folding the retained history is what a restart costs; a store that keeps state checkpoints gets
 * one after every compaction (`Authority.compact`, `checkpoint.ts`), so a restart resumes past it.
 * @module
 */
import { frozenJson, parseStrictJson, ProtocolError, UsageError, type KeyResolver, type SigningKey } from '@weft/codec'
import type { Event, GroupSnapshot } from '@weft/spec'
import type { EventReducers } from '../gen/reducers.js'
import { emptyState, type AuthorityState, type GroupState } from '../model.js'
import { createRedactionView } from '../delivery/redaction.js'
import { buildGroupSnapshot, snapshotArtifactHash, snapshotImage, verifyGroupSnapshot, type SnapshotOptions, type UnsignedGroupSnapshot } from './snapshots.js'
import type { AuthorityStore, SnapshotRecord } from './store.js'
import { applyEvents } from '../commit/transact.js'

/** One page of a Group's online log (`Authority.eventPage`) or of its retained history (`Authority.history`). */
export interface EventPage {
  /** The Events after the requested position, in sequence order, at most the limit asked for. */
  readonly events: readonly Event[]
  /** Where the next page starts: pass it as `afterSequence`. */
  readonly nextAfterSequence: number
  /** `true` when Events after {@link nextAfterSequence} exist: the page was cut, not the history. */
  readonly hasMore: boolean
  /** The Group's head when the page was read. */
  readonly head: number
}

/** What the online log of an Authority reads and writes. */
export interface OnlineLogOptions {
  readonly store: AuthorityStore
  /** The Authority's live state (read only here). */
  readonly state: AuthorityState
  readonly reducers: EventReducers
  /** Resolves the keys of snapshot signatures (§6.4), e.g. the Organization Registry. */
  readonly registry: KeyResolver
  /** The Authority's Event signing key, which signs served tombstones. */
  readonly signingKey: SigningKey
  /** The Authority clock as a timestamp text. */
  readonly now: () => string
}

/** The reading and compaction side of an Authority's log (§7.4, §16): the `Authority` members `createPipeline` takes from {@link createOnlineLog}. */
export interface OnlineLog {
  /**
   * Every Event of a Group's online log after `afterSequence` (default 0), in sequence order. A
   * Message that was redacted is served as its signed tombstone (`../delivery/redaction.ts`, §7.4).
   * @throws ProtocolError `CURSOR_TOO_OLD` (with the snapshot reference in `details`) when the log
   * was compacted past `afterSequence` (§16): nothing is left out silently.
   */
  events(groupId: string, afterSequence?: number): readonly Event[]
  /**
   * At most `limit` Events of a Group's online log after `afterSequence`, served as {@link OnlineLog.events}
   * serves them, with where the next page starts and whether there is one (§16: no silent cut).
   * @throws ProtocolError `CURSOR_TOO_OLD` as for {@link OnlineLog.events}; UsageError when `limit` is not a positive integer.
   */
  eventPage(groupId: string, afterSequence: number, limit: number): EventPage
  /**
   * At most `limit` Events of a Group's retained history after `afterSequence`, compacted ones
   * included (§7.4: an active Group keeps its complete history), served as {@link OnlineLog.events} serves
   * them. Unlike {@link OnlineLog.eventPage} it never answers `CURSOR_TOO_OLD`; it reads the store by
   * position where the store has `groupHistory`, else its whole retained history from the start.
   * An in-process operator read (audit, building snapshots): it checks no caller's Membership.
   * @throws UsageError when `afterSequence` is not a non-negative integer or `limit` not a positive one.
   */
  history(groupId: string, afterSequence: number, limit: number): EventPage
  /**
   * The unsigned Group Snapshot at sequence `through`, 1 to the head (§7.4, §16): the Group's state
   * at `through` (the live state at the head, otherwise a fold of the retained history up to that
   * Event), its Event IDs 1..`through` and their Policy Log. An Organization service signs it
   * (`signGroupSnapshot`) and passes it to {@link OnlineLog.compact}.
   * @throws ProtocolError `GROUP_NOT_FOUND` for an unknown Group; UsageError when `through` is not a sequence of its log.
   */
  buildSnapshot(groupId: string, through: number, options: SnapshotOptions): UnsignedGroupSnapshot
  /** The Group's latest compaction: the signed snapshot, its reference hash and state image; `undefined` before any. */
  snapshot(groupId: string): SnapshotRecord | undefined
  /**
   * Compacts a Group's online log behind a Signed Group Snapshot made by an Organization service
   * (§7.4, §16): after checking it like a restore would (signature, Event IDs, Policy Log, state
   * hash at its sequence), Events up to its sequence leave the online log; the store retains them
   * and the state does not change. Replays from below then answer `CURSOR_TOO_OLD`.
   * @returns The stored record.
   * When the store keeps state checkpoints, a `checkpoint` follows; should it fail, the
   * compaction stands and `onWarning` hears why.
   * @throws ProtocolError `GROUP_NOT_FOUND`, `AUTH_INVALID_SIGNATURE` or `INVALID_COMMAND` for a snapshot
   * that does not verify or does not advance the compaction point; UsageError when the store cannot compact.
   */
  compact(groupId: string, snapshot: GroupSnapshot | string): SnapshotRecord
}

/** The online log over `options.store`. */
export function createOnlineLog(options: OnlineLogOptions): OnlineLog {
  const { store, state } = options
  const served = createRedactionView(options.signingKey)
  const snapshot = (groupId: string): SnapshotRecord | undefined => store.snapshot?.(groupId)
  /** The position itself, once it is known to be on the online log. */
  const online = (groupId: string, afterSequence: number): number => {
    const record = snapshot(groupId)
    if (record !== undefined && afterSequence < record.throughSequence) throw cursorTooOld(record, afterSequence)
    return afterSequence
  }
  return {
    events: (groupId, afterSequence = 0) => served(state.groups.get(groupId), store.groupEvents(groupId, online(groupId, afterSequence))),
    eventPage(groupId, afterSequence, limit) {
      requireLimit('eventPage', limit)
      const group = state.groups.get(groupId)
      return pageOf(group, afterSequence, served(group, store.groupEvents(groupId, online(groupId, afterSequence), limit)))
    },
    history(groupId, afterSequence, limit) {
      requireLimit('history', limit)
      if (!Number.isSafeInteger(afterSequence) || afterSequence < 0) throw new UsageError(`history: afterSequence must be a non-negative integer, got ${String(afterSequence)}`)
      const group = state.groups.get(groupId)
      return pageOf(group, afterSequence, served(group, retainedEvents(store, groupId, afterSequence, limit)))
    },
    buildSnapshot: (groupId, through, snapshotOptions) => buildSnapshotAt(options, groupId, through, snapshotOptions),
    snapshot,
    compact: (groupId, signed) => compactGroup(options, groupId, signed),
  }
}

/** A page size is a positive integer; anything else is the caller's mistake, not a protocol error. */
function requireLimit(method: string, limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new UsageError(`${method}: limit must be a positive integer, got ${String(limit)}`)
}

/** A page of `events` read after `afterSequence`, with where the next one starts (§16: no silent cut). */
function pageOf(group: GroupState | undefined, afterSequence: number, events: readonly Event[]): EventPage {
  const head = group?.head ?? 0
  const nextAfterSequence = events.at(-1)?.sequence ?? afterSequence
  return { events, nextAfterSequence, hasMore: nextAfterSequence < head, head }
}

/**
 * At most `limit` of the Group's retained Events after `afterSequence`, compacted ones included
 * (§7.4): the store's indexed `groupHistory` where it has one, else its retained history filtered,
 * which holds each Group's Events in sequence order because it is in acceptance order.
 */
function retainedEvents(store: AuthorityStore, groupId: string, afterSequence: number, limit: number): readonly Event[] {
  if (store.groupHistory !== undefined) return store.groupHistory(groupId, afterSequence, limit)
  const events: Event[] = []
  for (const event of store.allEvents()) {
    if (event.groupId !== groupId || (event.sequence ?? 0) <= afterSequence) continue
    if (events.push(event) === limit) break
  }
  return events
}

/**
 * `CURSOR_TOO_OLD` (§16) for a replay from `afterSequence`, below the compaction point of
 * `record`. The details are the signed snapshot reference a recipient restores from: its ID, Group,
 * sequence, the hash of the signed document and its `stateHash`, and the first online sequence.
 */
export function cursorTooOld(record: SnapshotRecord, afterSequence: number): ProtocolError {
  const details = {
    groupId: record.groupId,
    afterSequence,
    snapshotId: record.snapshot.snapshotId,
    throughSequence: record.throughSequence,
    snapshotHash: record.snapshotHash,
    stateHash: record.snapshot.stateHash,
    oldestSequence: record.throughSequence + 1,
  }
  // error.schema.json names the reference `snapshotArtifactHash`; `details` keeps the rest of it.
  return new ProtocolError('CURSOR_TOO_OLD', `the online log of the group starts after sequence ${record.throughSequence}; restore snapshot ${record.snapshot.snapshotId} and resume after it`, {
    snapshotArtifactHash: record.snapshotHash,
    details,
  })
}

/**
 * The unsigned Group Snapshot of `groupId` at `through` (§7.4, §16), for an Organization service
 * to sign with `signGroupSnapshot` and hand to `compact`: `buildGroupSnapshot` over the Group's
 * retained Events 1..`through` and its state at `through` (the live state at the head, otherwise a
 * fold of the retained history up to that Event: the state is the fold of the log).
 * @throws ProtocolError `GROUP_NOT_FOUND` for an unknown Group; UsageError when `through` is not a
 * sequence of the Group's log (1 to its head).
 */
export function buildSnapshotAt(options: OnlineLogOptions, groupId: string, through: number, snapshotOptions: SnapshotOptions): UnsignedGroupSnapshot {
  const live = options.state.groups.get(groupId) ?? invalid('GROUP_NOT_FOUND', 'group not found')
  if (!withinLog(through, live)) throw new UsageError(`buildSnapshot: ${String(through)} is not a sequence of Group ${groupId} (1 to ${live.head})`)
  const { segment, group } = historyThrough(options, groupId, through, live)
  return buildGroupSnapshot(group, segment, snapshotOptions)
}

/** Whether `through` is a sequence of the Group's log: 1 to its head. */
function withinLog(through: unknown, live: GroupState): through is number {
  return typeof through === 'number' && Number.isSafeInteger(through) && through >= 1 && through <= live.head
}

/**
 * Compacts `groupId`'s online log behind a Signed Group Snapshot at sequence S (§7.4, §16). The
 * Group need not be archived, and the snapshot may lag the head. It is checked as a restore would
 * check it: the six §6.4 stages, its Event IDs and Policy Log against the Group's retained Events
 * 1..S, and its `stateHash` against the Group's state at S (the live state when S is the head,
 * otherwise a fold of the retained history up to S). Then the store takes Events 1..S off the
 * online log and keeps the snapshot with its state image.
 * @returns The stored {@link SnapshotRecord}.
 * @throws UsageError when the store cannot compact. ProtocolError `GROUP_NOT_FOUND` for an unknown
 * Group; `PROTOCOL_VIOLATION` for snapshot text that is not strict JSON; `AUTH_INVALID_SIGNATURE`
 * when the snapshot fails §6.4; `INVALID_COMMAND` when it is of
 * another Group, beyond the head, not past the current compaction point, or does not match the
 * log or the state. Nothing changes when it throws.
 */
export function compactGroup(options: OnlineLogOptions, groupId: string, signed: GroupSnapshot | string): SnapshotRecord {
  const { store, state } = options
  if (store.compact === undefined || store.snapshot === undefined) throw new UsageError('compact: the store keeps no snapshots (it lacks compact and snapshot)')
  const live = state.groups.get(groupId) ?? invalid('GROUP_NOT_FOUND', 'group not found')
  const claimed = claimedSnapshot(signed)
  const through = claimed.throughSequence
  if (claimed.groupId !== groupId) invalid('INVALID_COMMAND', `the snapshot is of Group ${String(claimed.groupId)}, not ${groupId}`)
  if (!withinLog(through, live)) invalid('INVALID_COMMAND', `the snapshot sequence ${String(through)} is not within the Group log (head ${live.head})`)
  const previous = store.snapshot(groupId)
  if (previous !== undefined && through <= previous.throughSequence) invalid('INVALID_COMMAND', `the online log already starts after sequence ${previous.throughSequence}`)
  const { segment, group } = historyThrough(options, groupId, through, live)
  const verdict = verifyGroupSnapshot(signed, { registry: options.registry, events: segment, group })
  if (!verdict.ok) invalid(verdict.stage === 'signature' ? 'AUTH_INVALID_SIGNATURE' : 'INVALID_COMMAND', `the snapshot does not verify: ${verdict.reason}`)
  const record: SnapshotRecord = Object.freeze({
    groupId,
    throughSequence: through,
    snapshot: frozenJson(verdict.snapshot) as GroupSnapshot,
    snapshotHash: snapshotArtifactHash(verdict.snapshot),
    image: snapshotImage(group),
    compactedAt: options.now(),
  })
  store.compact(groupId, through, record)
  return record
}

/**
 * The Group's retained Events 1..`through` and its state at `through`: the live state when that is
 * the head, else a fold of the retained history stopped right after the Group's Event `through`.
 */
function historyThrough(options: OnlineLogOptions, groupId: string, through: number, live: GroupState): { segment: Event[]; group: GroupState } {
  const segment: Event[] = []
  const folding = through === live.head ? undefined : emptyState()
  for (const event of options.store.allEvents()) {
    if (folding !== undefined) applyEvents(folding, [frozenJson(event) as Event], options.reducers)
    if (event.groupId !== groupId) continue
    segment.push(event)
    if (event.sequence === through) break
  }
  return { segment, group: folding?.groups.get(groupId) ?? live }
}

/** The snapshot's members as claimed, before verification; §17.4: its text must be strict JSON. */
function claimedSnapshot(signed: GroupSnapshot | string): Partial<GroupSnapshot> {
  if (typeof signed !== 'string') return signed
  const parsed = parseStrictJson(signed)
  if (!parsed.ok) invalid('PROTOCOL_VIOLATION', 'the snapshot is not strict JSON')
  return typeof parsed.value === 'object' && parsed.value !== null ? (parsed.value as Partial<GroupSnapshot>) : {}
}

function invalid(code: 'GROUP_NOT_FOUND' | 'INVALID_COMMAND' | 'AUTH_INVALID_SIGNATURE' | 'PROTOCOL_VIOLATION', message: string): never {
  throw new ProtocolError(code, message)
}
