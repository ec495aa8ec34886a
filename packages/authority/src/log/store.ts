/**
 * Where the Authority keeps what it accepted: the per-Group Event logs, the Organization log and
 * the receipt of every accepted Command (for idempotent retries, §15.1). The in-memory store is
 * the default; durable stores (SQLite, PostgreSQL) implement the same {@link AuthorityStore}.
 *
 * Two views of a Group's Events are kept apart here. The **retained history** is everything ever
 * accepted, in acceptance order ({@link AuthorityStore.allEvents}): §7.4 requires an active Group
 * to keep its complete Event history, and the state is its fold. The **online log** is what replay
 * serves ({@link AuthorityStore.groupEvents}); compaction behind a signed Group Snapshot
 * ({@link AuthorityStore.compact}) takes its oldest Events off it, and a replay from below answers
 * `CURSOR_TOO_OLD` with a reference to that snapshot (§16).
 *
 * A store may also keep a **state checkpoint** ({@link StateCheckpoint}): an image of the whole
 * Authority state at a position of the retained history, signed by the Authority, from which a
 * restart resumes instead of folding everything (`checkpoint.ts`).
 * @module
 */
import type { Receipt } from '@weft/client'
import type { Event, GroupSnapshot } from '@weft/spec'
import type { LogHead } from './log-head.js'
import { actorKey } from '../model.js'

/** The receipt of an accepted Command as stored; a retry answers it with `duplicate: true`. */
export type StoredReceipt = Omit<Receipt, 'duplicate'>

/**
 * What a store keeps when a Group's online log is compacted behind a signed Group Snapshot (§7.4,
 * §16). It is written once per compaction by the Authority, after it verified the snapshot, and
 * read back by replay (the `CURSOR_TOO_OLD` reference), by subscribers restoring, and by a restart
 * (which verifies it again, see `restore.ts`).
 */
export interface SnapshotRecord {
  readonly groupId: string
  /** The snapshot's sequence S: Events 1..S are off the online log; replay starts after S. */
  readonly throughSequence: number
  /** The Signed Group Snapshot at S, exactly as the Organization service signed it. */
  readonly snapshot: GroupSnapshot
  /** The content hash of the signed snapshot (`snapshotArtifactHash`), the reference `CURSOR_TOO_OLD` hands out. */
  readonly snapshotHash: string
  /**
   * The state image a subscriber restores: the RFC 8785 text of the Group's snapshot content at S
   * (`snapshotImage` of `snapshots.ts`), whose SHA-256 is the snapshot's signed `stateHash`.
   */
  readonly image: string
  /** When the Authority compacted, on its clock. */
  readonly compactedAt: string
}

/** A compacted Group's snapshot as a checkpoint names it: the record the store held when the image was made. */
export interface CheckpointSnapshotRef {
  readonly groupId: string
  readonly throughSequence: number
  /** The record's `snapshotHash`: the content hash of the signed Group Snapshot. */
  readonly snapshotHash: string
}

/**
 * What the Authority signs about a state image (`checkpoint.ts`): where in the retained history the
 * image stands, its hash, and the snapshot records of the compacted Groups at that point.
 */
export interface CheckpointManifest {
  /** The checkpoint profile, `weft-authority-checkpoint/1`; also the domain-separation tag of the signature. */
  readonly format: string
  /** The image format, e.g. `weft-state-image/1` (`checkpoint-image.ts`). */
  readonly imageFormat: string
  /** The Authority whose state it is; its key signs the manifest. */
  readonly authority: { readonly type: 'service'; readonly id: string }
  /** P: the image is the fold of the first P Events of the retained history ({@link AuthorityStore.allEvents} order). */
  readonly position: number
  /** The Event ID of the P-th Event, so a history that is not the one the image folds is noticed. */
  readonly lastEventId: string
  /** `sha256:` of the image bytes. */
  readonly imageHash: string
  readonly imageBytes: number
  /** The snapshot record of every compacted Group at P, in Group ID order. */
  readonly snapshots: readonly CheckpointSnapshotRef[]
  /** When the Authority made it, on its clock. */
  readonly createdAt: string
  /**
   * The head of every chain of the log at P, when the store keeps the chain (`log-proof.ts`): what
   * the proof of the log on open checks the Events up to P against, instead of their signatures.
   */
  readonly logHeads?: readonly LogHead[]
  /** Ed25519 by the Authority's key over the profile tag and the RFC 8785 text of every other member. */
  readonly signature: { readonly algorithm: 'Ed25519'; readonly keyId: string; readonly value: string }
}

/** A state checkpoint as a store keeps it: the signed manifest and the image bytes it vouches for. */
export interface StateCheckpoint {
  readonly manifest: CheckpointManifest
  readonly image: Uint8Array
}

/**
 * The persistence seam of a Group Authority. One call to {@link appendTransaction} is one accepted
 * Command: its Events and its receipt become visible together or not at all.
 *
 * **Compaction** ({@link compact}, {@link snapshot}) is optional: a store without the two methods
 * is never compacted (the Authority's `compact` refuses with a `UsageError`). A store that has them
 * must keep these rules:
 *
 * - `compact(groupId, S, record)` takes the Group's Events with sequence ≤ S off the online log
 *   and stores `record` as the Group's current snapshot, atomically. S is above any earlier
 *   compaction point of the Group and at most its head; the store may refuse (throw) otherwise,
 *   changing nothing.
 * - After it, {@link groupEvents} never returns an Event at or below S, whatever `afterSequence`
 *   asks for, and a later {@link appendTransaction} still continues the Group's sequence from its
 *   head (never from the number of online Events).
 * - {@link allEvents} is unchanged by compaction: it still yields the compacted Events, in their
 *   acceptance order among every other Group's (§7.4: the history is retained, only served from
 *   elsewhere). A durable store may move them to colder storage but must stream them back here,
 *   because a restart folds that history and checks each snapshot against it.
 * - {@link snapshot} returns the latest record of the Group, or `undefined` before any compaction.
 *
 * **State checkpoints** ({@link eventsAfter}, {@link checkpoint}, {@link saveCheckpoint}) are
 * optional too, all three or none: a store without them is always restored by folding its whole
 * retained history. A store that has them must keep these rules:
 *
 * - A position P counts Events of the retained history in {@link allEvents} order: P = 0 is before
 *   the first Event, P = n right after the n-th. `eventsAfter(P)` yields exactly what `allEvents()`
 *   yields without its first P Events, compacted ones included, and nothing for P at or beyond the
 *   end. Positions never move: appends and compaction only add after the end.
 * - `saveCheckpoint(c)` keeps `c` (manifest and image bytes, exactly) as the store's one checkpoint,
 *   replacing any earlier one, atomically. The store may refuse (throw, changing nothing) a
 *   checkpoint whose `manifest.position` is not between 1 and the number of retained Events.
 * - {@link checkpoint} returns the last checkpoint saved, or `undefined` before any. The store
 *   does not interpret or verify it: the Authority checks the signature, the image hash, the Event
 *   at the position and the snapshot records before it uses one.
 */
export interface AuthorityStore {
  /**
   * Appends one transaction atomically: all of `events` (in order) and the receipt, or nothing.
   * Group Events must continue their Group's sequence without a gap (§15.2); a store refuses
   * (throws) a transaction that would leave a gap or reuse a receipt key, appending nothing.
   */
  appendTransaction(events: readonly Event[], receipt: StoredReceipt): void
  /**
   * The online Events of one Group with a sequence above `afterSequence` (default 0), at most
   * `limit`, in sequence order. Events at or below the Group's compaction point are never returned.
   */
  groupEvents(groupId: string, afterSequence?: number, limit?: number): readonly Event[]
  /** The Organization-scoped Events (no Group, §15.2), in acceptance order. */
  organizationEvents(): readonly Event[]
  /** The receipt of the Command `(actor, actionId)`, keyed by `actorKey` of `model.ts`; `undefined` when none was accepted. */
  receipt(actorKey: string, actionId: string): StoredReceipt | undefined
  /** Every stored Event in acceptance order across Groups, compacted ones included: what a fold replays. */
  allEvents(): Iterable<Event>
  /**
   * The retained Events of one Group with a sequence above `afterSequence`, at most `limit`, in
   * sequence order, compacted ones included: {@link allEvents} of that Group, read by position.
   * Optional; without it the Authority's `history` reads {@link allEvents} from the start.
   */
  groupHistory?(groupId: string, afterSequence: number, limit: number): readonly Event[]
  /** Takes Events 1..`throughSequence` of `groupId` off the online log behind `record` (see the rules above). */
  compact?(groupId: string, throughSequence: number, record: SnapshotRecord): void
  /** The Group's latest {@link SnapshotRecord}, or `undefined` when its online log was never compacted. */
  snapshot?(groupId: string): SnapshotRecord | undefined
  /** The retained history after position `position`, in acceptance order (see the rules above). */
  eventsAfter?(position: number): Iterable<Event>
  /** The checkpoint last saved, or `undefined` (see the rules above). */
  checkpoint?(): StateCheckpoint | undefined
  /** Keeps `checkpoint` as the store's one checkpoint, replacing any earlier one (see the rules above). */
  saveCheckpoint?(checkpoint: StateCheckpoint): void
  /**
   * The head of every chain the store keeps beside its log (`log-proof.ts`), at its end. Optional: a
   * store with it has each checkpoint sign the heads, so the proof of its log starts from there.
   */
  logHeads?(): readonly LogHead[]
}

/**
 * The asynchronous face of the store seam: the core members of {@link AuthorityStore} (one
 * transaction appended atomically, the Group and Organization logs, receipts, the retained
 * history), each answering later. A store that must wait for its answers, such as a network
 * database, implements this face; `@weft/store-postgres` does. The rules of {@link AuthorityStore}
 * hold unchanged: {@link appendTransaction} refuses (rejects) a sequence gap, a fork or a reused
 * receipt key and then has appended nothing (§15.1, §15.2), and every Event handed out is
 * immutable (§4.6).
 *
 * The in-process pipeline (`createAuthority`) drives only the synchronous {@link AuthorityStore}:
 * a Command is decided, appended and folded in one turn of the event loop, so no other Command
 * interleaves between the handler's decision and the append (§15.3) and nothing is ever
 * half-applied; a memory or SQLite store answers at once and keeps that throughput. A store with
 * this face is driven instead by an Authority host that serializes submits itself and appends
 * through it once the pipeline decided, as `createPostgresAuthority` does under its database lock
 * on the log, with its in-memory Authority as the cache the pipeline runs on.
 *
 * There are no compaction or checkpoint members here: a host that needs them keeps them beside
 * the log (the PostgreSQL host keeps compactions in a table of its own and no checkpoint).
 */
export interface AsyncAuthorityStore {
  /** Appends one transaction atomically, as {@link AuthorityStore.appendTransaction}; rejects, appending nothing, where that throws. */
  appendTransaction(events: readonly Event[], receipt: StoredReceipt): Promise<void>
  /** The online Events of one Group, as {@link AuthorityStore.groupEvents}. */
  groupEvents(groupId: string, afterSequence?: number, limit?: number): Promise<readonly Event[]>
  /** The Organization-scoped Events (no Group, §15.2), in acceptance order. */
  organizationEvents(): Promise<readonly Event[]>
  /** The receipt of the Command `(actor, actionId)`, keyed by `actorKey`; `undefined` when none was accepted. */
  receipt(actorKey: string, actionId: string): Promise<StoredReceipt | undefined>
  /**
   * Every stored Event in acceptance order across Groups, compacted ones included. An async
   * iterable rather than a promised array: the retained history of a long-lived log is larger
   * than one answer should hold, so a store streams it (in pages, for a database) and `for await`
   * reads it as it comes.
   */
  allEvents(): AsyncIterable<Event>
}

/** A store of either face: `for await` and `await` read both, so code written for this type (a contract suite, a copy tool) serves every store. */
export type AnyAuthorityStore = AuthorityStore | AsyncAuthorityStore

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * Keep a state checkpoint (the `eventsAfter` / `checkpoint` / `saveCheckpoint` members), so a new
   * Authority over this store object resumes from it. Default `false`: a memory store outlives its
   * Authority only in tests and in-process restarts, and an image costs about as much memory as
   * the state (48 MB for a 100,000-Message Group).
   */
  readonly checkpoints?: boolean
}

/** One Group's Events in memory: sequence `n` sits at index `n - 1`; the online log starts after `offset`. */
interface OnlineLog {
  readonly groupId: string
  /** The compaction point: how many of the Group's first Events are off the online log. */
  offset: number
  /** Every Event of the Group, compacted ones included (§7.4: the history is retained). */
  readonly events: Event[]
  record?: SnapshotRecord
}

/**
 * An {@link AuthorityStore} in memory, compaction included, state checkpoints on request. Each
 * Group's Events are an array where sequence `n` sits at index `n - 1`, so an append and a lookup
 * by position cost the same however long the history; the online log is the part after the
 * compaction point. The retained history is one array across Groups.
 * @example
 * ```ts
 * const store = createMemoryStore({ checkpoints: true })
 * const first = createAuthority({ registry, keys, store })
 * // ... Commands, then
 * first.checkpoint()
 * const second = createAuthority({ registry, keys, store }) // resumes from the checkpoint
 * ```
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): AuthorityStore {
  const groups = new Map<string, OnlineLog>()
  const organization: Event[] = []
  const all: Event[] = []
  const receipts = new Map<string, Map<string, StoredReceipt>>()

  let kept: StateCheckpoint | undefined

  const store: AuthorityStore = {
    appendTransaction(events, receipt) {
      const actor = actorKey(receipt.actor)
      let byAction = receipts.get(actor)
      if (byAction?.has(receipt.actionId)) throw new Error(`store: a receipt for ${actor} ${receipt.actionId} already exists`)
      // Check the whole transaction before touching anything, so a refusal leaves no trace. Almost
      // every transaction writes one Group, whose head is kept in two locals; the heads of any
      // other Groups it writes go to a map made only then.
      let group: string | undefined
      let head = 0
      let others: Map<string, number> | undefined
      // Indexed loops: the frozen Event arrays are walked on every Command, and `for of` makes an
      // iterator result per Event wherever the loop is not optimized away.
      for (let i = 0; i < events.length; i++) {
        const event = events[i]!
        const groupId = event.groupId
        if (groupId === undefined) continue
        if (groupId !== group) {
          if (group !== undefined) (others ??= new Map()).set(group, head)
          head = others?.get(groupId) ?? headOf(groups.get(groupId))
          group = groupId
        }
        if (event.sequence !== head + 1) throw new Error(`store: ${event.kind} has sequence ${String(event.sequence)} in Group ${groupId}, expected ${head + 1}`)
        head++
      }
      let log: OnlineLog | undefined
      for (let i = 0; i < events.length; i++) {
        const event = events[i]!
        all.push(event)
        const groupId = event.groupId
        if (groupId === undefined) {
          organization.push(event)
          continue
        }
        if (log === undefined || log.groupId !== groupId) {
          log = groups.get(groupId)
          if (log === undefined) groups.set(groupId, (log = { groupId, offset: 0, events: [] }))
        }
        log.events.push(event)
      }
      if (byAction === undefined) receipts.set(actor, (byAction = new Map()))
      byAction.set(receipt.actionId, receipt)
    },
    groupEvents(groupId, afterSequence = 0, limit = Number.POSITIVE_INFINITY) {
      const log = groups.get(groupId)
      return log === undefined ? [] : window(log.events, Math.max(log.offset, Math.floor(afterSequence) || 0), limit)
    },
    groupHistory(groupId, afterSequence, limit) {
      const log = groups.get(groupId)
      return log === undefined ? [] : window(log.events, Math.max(0, Math.floor(afterSequence) || 0), limit)
    },
    organizationEvents: () => organization.slice(),
    receipt: (actorKey, actionId) => receipts.get(actorKey)?.get(actionId),
    allEvents: () => all.values(),
    compact(groupId, throughSequence, record) {
      const log = groups.get(groupId)
      if (log === undefined || !Number.isSafeInteger(throughSequence) || throughSequence <= log.offset || throughSequence > headOf(log)) {
        throw new Error(`store: cannot compact Group ${groupId} through ${throughSequence}`)
      }
      if (record.groupId !== groupId || record.throughSequence !== throughSequence) throw new Error(`store: the snapshot record is not of Group ${groupId} at ${throughSequence}`)
      log.offset = throughSequence
      log.record = record
    },
    snapshot: (groupId) => groups.get(groupId)?.record,
  }
  if (options.checkpoints !== true) return store
  return {
    ...store,
    *eventsAfter(position) {
      for (let i = Math.max(0, Math.floor(position)) || 0; i < all.length; i++) yield all[i]!
    },
    checkpoint: () => kept,
    saveCheckpoint(checkpoint) {
      const { position } = checkpoint.manifest
      if (!Number.isSafeInteger(position) || position < 1 || position > all.length)
        throw new Error(`store: a checkpoint at position ${String(position)} is outside the retained history (${all.length} Events)`)
      // A copy of the bytes: what was saved is what a restart reads, whatever the caller does with its buffer.
      kept = Object.freeze({ manifest: checkpoint.manifest, image: checkpoint.image.slice() })
    },
  }
}

function headOf(log: OnlineLog | undefined): number {
  return log === undefined ? 0 : log.events.length
}

/** At most `limit` of a Group's `events` (sequence `n` at index `n - 1`) after sequence `start`. */
function window(events: readonly Event[], start: number, limit: number): Event[] {
  return events.slice(start, limit === Number.POSITIVE_INFINITY ? undefined : start + Math.max(0, Math.floor(limit)))
}
