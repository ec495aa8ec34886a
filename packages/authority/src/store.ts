/**
 * Where the Authority keeps what it accepted: the per-Group Event logs, the Organization log and
 * the receipt of every accepted Command (for idempotent retries, §15.1). The in-memory store is
 * the default; durable stores (SQLite, PostgreSQL) implement the same {@link AuthorityStore}.
 * @module
 */
import type { Receipt } from '@weft/client'
import type { Event } from '@weft/spec'
import { actorKey } from './model.js'

/** The receipt of an accepted Command as stored; a retry answers it with `duplicate: true`. */
export type StoredReceipt = Omit<Receipt, 'duplicate'>

/**
 * The persistence seam of a Group Authority. One call to {@link appendTransaction} is one accepted
 * Command: its Events and its receipt become visible together or not at all.
 */
export interface AuthorityStore {
  /**
   * Appends one transaction atomically: all of `events` (in order) and the receipt, or nothing.
   * Group Events must continue their Group's sequence without a gap (§15.2); a store refuses
   * (throws) a transaction that would leave a gap or reuse a receipt key, appending nothing.
   */
  appendTransaction(events: readonly Event[], receipt: StoredReceipt): void
  /** The Events of one Group with a sequence above `afterSequence` (default 0), at most `limit`, in sequence order. */
  groupEvents(groupId: string, afterSequence?: number, limit?: number): readonly Event[]
  /** The Organization-scoped Events (no Group, §15.2), in acceptance order. */
  organizationEvents(): readonly Event[]
  /** The receipt of the Command `(actor, actionId)`, keyed by `actorKey` of `model.ts`; `undefined` when none was accepted. */
  receipt(actorKey: string, actionId: string): StoredReceipt | undefined
  /** Every stored Event in acceptance order across Groups: what a fold replays. */
  allEvents(): Iterable<Event>
}

/**
 * An {@link AuthorityStore} in memory. Each Group's log is an array where sequence `n` sits at
 * index `n - 1`, so an append and a lookup by position cost the same however long the history.
 */
export function createMemoryStore(): AuthorityStore {
  const groups = new Map<string, Event[]>()
  const organization: Event[] = []
  const all: Event[] = []
  const receipts = new Map<string, Map<string, StoredReceipt>>()

  return {
    appendTransaction(events, receipt) {
      const actor = actorKey(receipt.actor)
      if (receipts.get(actor)?.has(receipt.actionId)) throw new Error(`store: a receipt for ${actor} ${receipt.actionId} already exists`)
      // Check the whole transaction before touching anything, so a refusal leaves no trace.
      const heads = new Map<string, number>()
      for (const event of events) {
        if (event.groupId === undefined) continue
        const head = heads.get(event.groupId) ?? groups.get(event.groupId)?.length ?? 0
        if (event.sequence !== head + 1) throw new Error(`store: ${event.kind} has sequence ${String(event.sequence)} in Group ${event.groupId}, expected ${head + 1}`)
        heads.set(event.groupId, head + 1)
      }
      for (const event of events) {
        all.push(event)
        if (event.groupId === undefined) {
          organization.push(event)
          continue
        }
        let log = groups.get(event.groupId)
        if (log === undefined) groups.set(event.groupId, (log = []))
        log.push(event)
      }
      let byAction = receipts.get(actor)
      if (byAction === undefined) receipts.set(actor, (byAction = new Map()))
      byAction.set(receipt.actionId, receipt)
    },
    groupEvents(groupId, afterSequence = 0, limit = Number.POSITIVE_INFINITY) {
      const log = groups.get(groupId)
      if (log === undefined) return []
      const start = Math.max(0, Math.floor(afterSequence))
      return log.slice(start, limit === Number.POSITIVE_INFINITY ? undefined : start + Math.max(0, Math.floor(limit)))
    },
    organizationEvents: () => organization.slice(),
    receipt: (actorKey, actionId) => receipts.get(actorKey)?.get(actionId),
    allEvents: () => all.values(),
  }
}
