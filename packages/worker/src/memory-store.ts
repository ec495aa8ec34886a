/**
 * The default {@link WorkerStore}: everything in process memory, lost with the process. It keeps
 * the contract a durable store keeps (atomic contiguous appends, a ledger that refuses a second
 * record of one side effect, stored values as JSON), so code tested on it behaves the same on
 * `@weft/store-sqlite`.
 * @module
 */
import { UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import type { BufferedCommand, WorkerStore } from './seams.js'

/** One Group's local log: `events[i]` has sequence `base + i + 1`, so the cursor is `base` plus the length (§16). */
interface GroupLog {
  /** `events[i]` has sequence `base + i + 1`; `base` is the visibility start (§8), usually 0. */
  base: number
  events: Event[]
  acked: number
}

/** A fresh copy of a value kept as JSON text (as a durable store writes it), so no caller shares what the store holds. */
function fromJson(text: string | undefined): unknown {
  return text === undefined ? undefined : JSON.parse(text)
}

/**
 * Checks that `events` continue the log whose cursor is `cursor` in `groupId` exactly: same Group,
 * sequences `cursor + 1`, `cursor + 2`, ... (§16: the Cursor never passes a gap).
 * @throws UsageError naming the first Event that does not.
 */
export function checkContinuation(groupId: string, cursor: number, events: readonly Event[]): void {
  for (const [i, event] of events.entries()) {
    const expected = cursor + 1 + i
    if (event.groupId !== groupId || event.sequence !== expected) {
      throw new UsageError(`cannot append Event ${event.eventId} (Group ${String(event.groupId)}, sequence ${String(event.sequence)}): Group ${groupId} continues at sequence ${expected}`)
    }
  }
}

/**
 * Creates an empty in-memory {@link WorkerStore}. Events are kept by reference: they are immutable
 * accepted facts (§15.2) and must not be altered after they are appended. Side-effect results and
 * checkpoints are kept as JSON text and read back as fresh copies.
 * @example
 * ```ts
 * const store = createMemoryWorkerStore()
 * const inbox = createInbox({ store, projection: createProjection(self) })
 * ```
 */
export function createMemoryWorkerStore(): WorkerStore {
  const logs = new Map<string, GroupLog>()
  const sideEffects = new Map<string, string | undefined>()
  const checkpoints = new Map<string, { ownershipEpoch: number; state: string | undefined }>()
  const buffer = new Map<number, BufferedCommand>()
  let lastSeq = 0
  let closed = false

  function open(): void {
    if (closed) throw new UsageError('the worker store is closed')
  }
  function logOf(groupId: string): GroupLog {
    let log = logs.get(groupId)
    if (log === undefined) logs.set(groupId, (log = { base: 0, events: [], acked: 0 }))
    return log
  }

  return {
    appendEvents(groupId, events) {
      open()
      const log = logs.get(groupId)
      checkContinuation(groupId, log === undefined ? 0 : log.base + log.events.length, events)
      if (events.length === 0) return
      const stored = logOf(groupId).events
      for (const event of events) stored.push(event)
    },
    cursor(groupId) {
      open()
      const log = logs.get(groupId)
      return log === undefined ? 0 : log.base + log.events.length
    },
    startAfter(groupId, sequence) {
      open()
      if (!Number.isSafeInteger(sequence) || sequence < 0) throw new UsageError(`a log start must be a non-negative integer, not ${String(sequence)}`)
      const log = logOf(groupId)
      if (log.base !== 0 || log.events.length > 0) throw new UsageError(`the log of Group ${groupId} has already started`)
      log.base = sequence
    },
    groups() {
      open()
      return [...logs.keys()]
    },
    events(groupId, afterSequence = 0, limit = Number.POSITIVE_INFINITY) {
      open()
      const log = logs.get(groupId)
      const events = log?.events ?? []
      const from = Math.max(0, afterSequence - (log?.base ?? 0))
      return events.slice(from, limit === Number.POSITIVE_INFINITY ? undefined : from + Math.max(0, limit))
    },
    acked(groupId) {
      open()
      return logs.get(groupId)?.acked ?? 0
    },
    setAcked(groupId, sequence) {
      open()
      const log = logOf(groupId)
      log.acked = Math.max(log.acked, sequence)
    },
    sideEffect(key) {
      open()
      return sideEffects.has(key) ? { result: fromJson(sideEffects.get(key)) } : undefined
    },
    recordSideEffect(key, result) {
      open()
      // §16: a side effect that already ran is never recorded (or run) a second time.
      if (sideEffects.has(key)) throw new UsageError(`side effect ${key} is already recorded`)
      sideEffects.set(key, JSON.stringify(result))
    },
    putCheckpoint(workItemId, ownershipEpoch, state) {
      open()
      checkpoints.set(workItemId, { ownershipEpoch, state: JSON.stringify(state) })
    },
    checkpoint(workItemId) {
      open()
      const kept = checkpoints.get(workItemId)
      return kept === undefined ? undefined : { ownershipEpoch: kept.ownershipEpoch, state: fromJson(kept.state) }
    },
    bufferCommand(entry) {
      open()
      const buffered: BufferedCommand = { ...entry, seq: ++lastSeq }
      buffer.set(buffered.seq, buffered)
      return buffered
    },
    buffered() {
      open()
      // Map order is insertion order, which is ascending `seq`.
      return [...buffer.values()]
    },
    dropBuffered(seqs) {
      open()
      for (const seq of seqs) buffer.delete(seq)
    },
    clearProjectionLog() {
      open()
      // ACKs record what the Authority was told; they stay, with the Group, like side effects do.
      for (const [groupId, log] of logs) {
        if (log.acked === 0) logs.delete(groupId)
        else {
          log.events = []
          log.base = 0
        }
      }
    },
    close() {
      closed = true
    },
  }
}
