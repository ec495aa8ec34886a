/**
 * The Worker's per-Group Event inbox (§11.1, §16): it drops duplicates, holds Events that arrive
 * ahead of a gap, and moves each Group's Cursor only over contiguous sequences. Every contiguous
 * run is appended to the local store in one atomic call before the projection folds it, so what
 * the projection shows is always durable and a restart rebuilds it from the store by replay.
 * @module
 */
import { Buffer } from 'node:buffer'
import { ProtocolError, UsageError, canonicalizeOrThrow } from '@weft/codec'
import type { Event } from '@weft/spec'
import type { WorkerStore } from './seams.js'
import type { Projection } from './projection.js'

/** What became of one received Event. */
export type InboxOutcome =
  /** It is now stored and folded, with every held Event it made contiguous. */
  | 'applied'
  /** A repeat of an Event stored or held already (§16: delivery is at-least-once). */
  | 'duplicate'
  /**
   * It waits behind a gap, or was dropped because the Group's hold is full; either way replay
   * from the Cursor delivers it again.
   */
  | 'buffered'

/** The tally of a {@link Inbox.receiveMany} call. */
export interface InboxTally {
  /** Events stored and folded during the call, including ones held from earlier calls. */
  readonly applied: number
  /** Received Events dropped as duplicates. */
  readonly duplicate: number
  /** Received Events left waiting behind a gap (or dropped beyond the hold's bound). */
  readonly buffered: number
}

/** Options of {@link createInbox}. */
export interface InboxOptions {
  /** Where the contiguous log and Cursor of each Group are kept. The inbox must be its only appender. */
  readonly store: WorkerStore
  /** The projection the stored Events are folded into; its Group heads must match the store's Cursors (see {@link Inbox.rebuild}). */
  readonly projection: Projection
  /** Called with each contiguous run after it is stored and folded, e.g. to ACK the new Cursor (§16). */
  readonly onApplied?: (events: readonly Event[]) => void
  /**
   * The most Events held ahead of a gap per Group. Beyond it the Events farthest from the Cursor are
   * dropped (replay delivers them again), so a hostile or broken feed cannot grow memory without
   * bound. Default {@link DEFAULT_MAX_HELD_PER_GROUP}.
   */
  readonly maxHeldPerGroup?: number
}

/** The default bound of Events held ahead of a gap per Group. */
export const DEFAULT_MAX_HELD_PER_GROUP = 10_000

/** Replay from the store reads the log in pages of this many Events. */
const REBUILD_PAGE = 4096

/** A per-Group Event inbox feeding a {@link Projection} through a {@link WorkerStore}. */
export interface Inbox {
  /**
   * Takes one Group Event from the feed, in any order and any number of times.
   * @throws ProtocolError `PROTOCOL_VIOLATION` when it contradicts an Event already stored or held
   * (another Event at its sequence, or its Event ID at another sequence); UsageError for an
   * Organization-scoped Event, which has no Group order (§15.2).
   */
  receive(event: Event): InboxOutcome
  /** Takes many Events; each Group's contiguous run is stored with one append. Throws as {@link receive} does, after storing what came before. */
  receiveMany(events: Iterable<Event>): InboxTally
  /** The durable Cursor of `groupId` (§16): the highest contiguous sequence stored and folded. */
  cursor(groupId: string): number
  /**
   * Tells the inbox that the feed's history of `groupId` starts after `sequence` (§8 visibility
   * start of a late joiner): an empty log starts there, and held Events that now continue it are
   * stored and folded. Ignored when the log already reaches `sequence`.
   * @returns the number of Events folded.
   * @throws UsageError when the log holds Events but stops before `sequence` (a real gap).
   */
  startAfter(groupId: string, sequence: number): number
  /** How many Events of `groupId` are held ahead of a gap. */
  pending(groupId: string): number
  /**
   * Folds every stored Event the projection has not seen yet, Group by Group in sequence order:
   * what a restart does with a fresh projection (§11.1: queues rebuildable by replay).
   * @returns the number of Events folded.
   */
  rebuild(): number
}

/** One Group's inbox state. */
interface GroupInbox {
  /** The durable Cursor, mirrored from the store. */
  cursor: number
  /** Contiguous Events accepted in the current call, not yet stored. */
  run: Event[]
  /** Events ahead of a gap, by sequence. */
  readonly held: Map<number, Event>
  /** Sequence of each held Event, by Event ID. */
  readonly heldIds: Map<string, number>
  /** The highest held sequence; 0 when nothing is held. */
  farthest: number
}

/** Whether two Events with one sequence are the same fact, byte for byte in canonical form. */
function sameEvent(a: Event, b: Event): boolean {
  if (a === b) return true
  return a.eventId === b.eventId && Buffer.from(canonicalizeOrThrow(a)).equals(canonicalizeOrThrow(b))
}

function conflict(groupId: string, sequence: number, event: Event, why: string): ProtocolError {
  // §15.2: one sequence, one immutable fact. A second body there means a forked or forged log.
  return new ProtocolError('PROTOCOL_VIOLATION', `Event ${event.eventId} at sequence ${sequence} of Group ${groupId} ${why}`, {
    groupId,
    retryable: false,
    details: { eventId: event.eventId, sequence },
  })
}

/**
 * Creates an inbox. Its Cursors start at the store's; call {@link Inbox.rebuild} first when the
 * store already holds Events the projection has not folded.
 * @example
 * ```ts
 * const store = createMemoryWorkerStore()
 * const projection = createProjection(self)
 * const inbox = createInbox({ store, projection, onApplied: (run) => feed.ack(run[0]!.groupId!, run.at(-1)!.sequence!) })
 * inbox.rebuild()
 * feed.subscribe(groups.map((groupId) => ({ groupId, afterSequence: inbox.cursor(groupId) })), { onEvent: (e) => inbox.receive(e) })
 * ```
 */
export function createInbox(options: InboxOptions): Inbox {
  const { store, projection, onApplied } = options
  const maxHeld = options.maxHeldPerGroup ?? DEFAULT_MAX_HELD_PER_GROUP
  if (!Number.isSafeInteger(maxHeld) || maxHeld < 1) throw new UsageError(`maxHeldPerGroup must be a positive integer, not ${String(maxHeld)}`)
  const groups = new Map<string, GroupInbox>()

  function stateOf(groupId: string): GroupInbox {
    let state = groups.get(groupId)
    if (state === undefined) {
      state = { cursor: store.cursor(groupId), run: [], held: new Map(), heldIds: new Map(), farthest: 0 }
      groups.set(groupId, state)
    }
    return state
  }

  function forget(state: GroupInbox, sequence: number, event: Event): void {
    state.held.delete(sequence)
    state.heldIds.delete(event.eventId)
  }

  /** Drops the held Event farthest from the Cursor (§16: replay brings it back). */
  function dropFarthest(state: GroupInbox): void {
    const event = state.held.get(state.farthest)
    if (event !== undefined) forget(state, state.farthest, event)
    // A rare path (a gap wider than the bound): one pass over the bounded hold finds the next farthest.
    let farthest = 0
    for (const sequence of state.held.keys()) if (sequence > farthest) farthest = sequence
    state.farthest = farthest
  }

  /** Moves the held Events that continue the run into it. */
  function pull(state: GroupInbox): void {
    let next: Event | undefined
    while ((next = state.held.get(state.cursor + state.run.length + 1)) !== undefined) {
      forget(state, next.sequence as number, next)
      state.run.push(next)
    }
    if (state.held.size === 0) state.farthest = 0
  }

  /** Accepts `event` into its Group's run or hold, or recognizes it as a duplicate. */
  function take(event: Event): { readonly state: GroupInbox; readonly duplicate: boolean } {
    const { groupId, sequence } = event
    if (groupId === undefined || sequence === undefined) {
      throw new UsageError(`${event.kind} has no Group order (§15.2); a Group inbox takes Group Events only`)
    }
    const state = stateOf(groupId)
    // A failed append or a rebuild can leave the next Events in the hold; any delivery moves them on.
    pull(state)
    const head = state.cursor + state.run.length
    if (sequence <= head) {
      const known = sequence <= state.cursor ? store.events(groupId, sequence - 1, 1)[0] : state.run[sequence - state.cursor - 1]
      if (known !== undefined && !sameEvent(known, event)) throw conflict(groupId, sequence, event, 'differs from the Event stored there')
      return { state, duplicate: true }
    }
    const held = state.held.get(sequence)
    if (held !== undefined) {
      if (!sameEvent(held, event)) throw conflict(groupId, sequence, event, 'differs from the Event held there')
      return { state, duplicate: true }
    }
    const other = state.heldIds.get(event.eventId)
    if (other !== undefined) throw conflict(groupId, sequence, event, `was already received at sequence ${other}`)
    if (sequence > head + 1) {
      state.held.set(sequence, event)
      state.heldIds.set(event.eventId, sequence)
      if (sequence > state.farthest) state.farthest = sequence
      if (state.held.size > maxHeld) dropFarthest(state)
      return { state, duplicate: false }
    }
    // The next Event: it and whatever it makes contiguous join the run.
    state.run.push(event)
    pull(state)
    return { state, duplicate: false }
  }

  /** Stores a Group's run in one atomic append, then folds it and reports it. */
  function commit(state: GroupInbox, groupId: string): number {
    const run = state.run
    if (run.length === 0) return 0
    state.run = []
    try {
      store.appendEvents(groupId, run)
    } catch (error) {
      // Nothing was stored: the run waits in the hold for the next attempt.
      for (const event of run) {
        state.held.set(event.sequence as number, event)
        state.heldIds.set(event.eventId, event.sequence as number)
        state.farthest = Math.max(state.farthest, event.sequence as number)
      }
      throw error
    }
    state.cursor += run.length
    for (const event of run) projection.apply(event)
    onApplied?.(run)
    return run.length
  }

  function receiveMany(events: Iterable<Event>): InboxTally {
    const touched = new Map<string, GroupInbox>()
    const accepted: { readonly state: GroupInbox; readonly sequence: number }[] = []
    let duplicate = 0
    let applied = 0
    try {
      for (const event of events) {
        const { state, duplicate: dup } = take(event)
        if (dup) duplicate++
        else accepted.push({ state, sequence: event.sequence as number })
        if (state.run.length > 0) touched.set(event.groupId as string, state)
      }
    } finally {
      // What was accepted before a violation is still stored and folded.
      for (const [groupId, state] of touched) applied += commit(state, groupId)
    }
    const buffered = accepted.filter(({ state, sequence }) => sequence > state.cursor).length
    return { applied, duplicate, buffered }
  }

  return {
    receive(event) {
      const { state, duplicate } = take(event)
      const before = state.cursor
      commit(state, event.groupId as string)
      const sequence = event.sequence as number
      if (sequence > before && sequence <= state.cursor) return 'applied'
      return duplicate ? 'duplicate' : 'buffered'
    },
    receiveMany,
    cursor: (groupId) => stateOf(groupId).cursor,
    pending: (groupId) => groups.get(groupId)?.held.size ?? 0,
    startAfter(groupId, sequence) {
      const state = stateOf(groupId)
      if (sequence <= state.cursor) return 0
      if (state.cursor !== 0) throw new UsageError(`Group ${groupId} is stored through ${state.cursor}; it cannot restart after ${sequence}`)
      store.startAfter(groupId, sequence)
      projection.startAfter(groupId, sequence)
      state.cursor = sequence
      for (const [held, event] of state.held) if (held <= sequence) forget(state, held, event)
      pull(state)
      return commit(state, groupId)
    },
    rebuild() {
      let folded = 0
      for (const groupId of store.groups()) {
        if ((projection.group(groupId)?.head ?? 0) === 0) {
          // §8: a late joiner's stored log begins after its visibility start; so does its projection.
          const first = store.events(groupId, 0, 1)[0]
          const base = first === undefined ? store.cursor(groupId) : (first.sequence as number) - 1
          if (base > 0) projection.startAfter(groupId, base)
        }
        for (let after = projection.group(groupId)?.head ?? 0; ; ) {
          const page = store.events(groupId, after, REBUILD_PAGE)
          for (const event of page) projection.apply(event)
          folded += page.length
          if (page.length < REBUILD_PAGE) break
          after = page.at(-1)?.sequence as number
        }
        const state = stateOf(groupId)
        state.cursor = store.cursor(groupId)
        // Held Events the store already covers are settled; those that now continue it are stored.
        for (const [sequence, event] of state.held) if (sequence <= state.cursor) forget(state, sequence, event)
        pull(state)
        folded += commit(state, groupId)
      }
      return folded
    },
  }
}
