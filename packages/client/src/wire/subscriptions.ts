/**
 * The receiving half of a WebSocket connection (§16, §17.2, §17.3): the {@link EventFeed} of
 * `connectWebSocket`. It keeps every subscribed Group's position across reconnects, resubscribes
 * from it on each new session, drops Events it already handed out (the duplicates §16 allows
 * around a disconnect) and carries ACK Cursors to the server.
 * @module
 */
import { UsageError, type ProtocolError } from '@weft/codec'
import type { AttentionFilter, Event, GroupAcknowledgement, GroupSubscription, WebSocketFrame } from '@weft/spec'
import type { EventFeed, FeedGroup, FeedHandlers, FeedSubscription } from '../feed.js'

/** What the feed needs from the connection. */
export interface FeedLink {
  /**
   * Sends the frame `build(frameId)` when a session is open and returns its frame ID; returns
   * `undefined` (sending nothing) otherwise: the feed repeats its state on the next session.
   */
  send(build: (frameId: string) => WebSocketFrame): string | undefined
  /** The current time as a protocol timestamp. */
  now(): string
  /** A new subscription ID. */
  newId(): string
}

/** The feed plus the hooks the connection drives. */
export interface WireFeed {
  readonly feed: EventFeed
  /** Hands a subscription `EVENT` to its Group's handler unless it is a duplicate; returns whether it was new. */
  deliver(event: Event): boolean
  /** Routes an `ERROR` about a `SUBSCRIBE`, an `ACK` or a Group to the handlers concerned; returns whether any was. */
  fail(error: ProtocolError): boolean
  /** A new session is open: subscribe every live Group again from its position and repeat the ACK Cursors. */
  opened(): void
  /** The socket closed: frames sent on it will get no answer. */
  closed(): void
  /** Where each live Group stands: the highest sequence handed to its handler (or the subscribed position). */
  positions(): ReadonlyMap<string, number>
}

interface Entry {
  readonly subscriptionId: string
  readonly handlers: FeedHandlers
  readonly groups: Map<string, GroupEntry>
}

interface GroupEntry {
  readonly groupId: string
  readonly attention: AttentionFilter | undefined
  readonly entry: Entry
  /** The highest sequence handed to the handler, or the position subscribed from. */
  position: number
}

/** Creates the feed state of one connection over `link`. */
export function createWireFeed(link: FeedLink): WireFeed {
  const groups = new Map<string, GroupEntry>()
  const entries = new Set<Entry>()
  /** The latest ACK Cursor the subscriber reported per Group (§16: they only move forward). */
  const acks = new Map<string, number>()
  /** `SUBSCRIBE` and `ACK` frames sent on the current socket, and the Groups each concerns. */
  const sent = new Map<string, readonly string[]>()

  const subscribeFrame = (entry: Entry): void => {
    const list: GroupSubscription[] = [...entry.groups.values()].map((g) => ({ groupId: g.groupId, afterSequence: g.position, ...(g.attention === undefined ? {} : { attention: g.attention }) }))
    if (list.length === 0) return
    const frameId = link.send((id) => ({ protocolVersion: '0.1', frameId: id, frameType: 'SUBSCRIBE', subscriptionId: entry.subscriptionId, groups: list }))
    if (frameId !== undefined)
      sent.set(
        frameId,
        list.map((g) => g.groupId),
      )
  }

  const ackFrame = (groupIds: readonly string[]): void => {
    const acknowledgements: GroupAcknowledgement[] = groupIds.map((groupId) => ({ groupId, sequence: acks.get(groupId) ?? 0 }))
    if (acknowledgements.length === 0) return
    const frameId = link.send((id) => ({ protocolVersion: '0.1', frameId: id, frameType: 'ACK', acknowledgements, sentAt: link.now() }))
    if (frameId !== undefined) sent.set(frameId, groupIds)
  }

  const end = (g: GroupEntry): void => {
    if (groups.get(g.groupId) === g) groups.delete(g.groupId)
    g.entry.groups.delete(g.groupId)
    if (g.entry.groups.size === 0) entries.delete(g.entry)
  }

  const feed: EventFeed = {
    subscribe(requested: readonly FeedGroup[], handlers: FeedHandlers): FeedSubscription {
      checkSubscription(requested, handlers, groups)
      const entry: Entry = { subscriptionId: link.newId(), handlers, groups: new Map() }
      for (const r of requested) {
        const g: GroupEntry = { groupId: r.groupId, attention: r.attention, entry, position: r.afterSequence }
        entry.groups.set(r.groupId, g)
        groups.set(r.groupId, g)
      }
      entries.add(entry)
      subscribeFrame(entry)
      return {
        close() {
          // §17 has no unsubscribe frame: the Groups are dropped here and not subscribed again; the
          // server stops on its own once their unacknowledged window fills.
          for (const g of [...entry.groups.values()]) end(g)
          entries.delete(entry)
        },
      }
    },
    ack(groupId: string, sequence: number) {
      if (typeof groupId !== 'string') throw new UsageError('ack: groupId must be a string')
      if (!Number.isSafeInteger(sequence) || sequence < 0) throw new UsageError(`ack: sequence must be a non-negative integer, got ${String(sequence)}`)
      if (sequence <= (acks.get(groupId) ?? -1)) return
      acks.set(groupId, sequence)
      ackFrame([groupId])
    },
  }

  return {
    feed,
    deliver(event) {
      const g = event.groupId === undefined ? undefined : groups.get(event.groupId)
      const sequence = event.sequence
      if (g === undefined || sequence === undefined) return false
      // §16: at-least-once delivery may repeat Events around a reconnect; each is handed out once.
      if (sequence <= g.position) return false
      g.position = sequence
      try {
        g.entry.handlers.onEvent(event)
      } catch {
        // The handler's failure is its own: the Event counts as handed out, and a subscriber that
        // needs it again resubscribes from its durable Cursor.
      }
      return true
    },
    fail(error) {
      const related = error.relatedFrameId === undefined ? undefined : sent.get(error.relatedFrameId)
      const concerned = related === undefined ? (error.groupId === undefined ? [] : [error.groupId]) : error.groupId !== undefined && related.includes(error.groupId) ? [error.groupId] : related
      let handled = false
      for (const groupId of concerned) {
        const g = groups.get(groupId)
        if (g === undefined) continue
        handled = true
        // GROUP_NOT_FOUND: access is gone (§17.2), so the Group is not subscribed again.
        if (error.code === 'GROUP_NOT_FOUND') end(g)
        g.entry.handlers.onError?.(error, groupId)
      }
      return handled || related !== undefined
    },
    opened() {
      sent.clear()
      for (const entry of entries) subscribeFrame(entry)
      ackFrame([...acks.keys()])
    },
    closed() {
      sent.clear()
    },
    positions: () => new Map([...groups].map(([id, g]) => [id, g.position])),
  }
}

function checkSubscription(requested: readonly FeedGroup[], handlers: FeedHandlers, live: ReadonlyMap<string, GroupEntry>): void {
  if (!Array.isArray(requested) || requested.length === 0) throw new UsageError('subscribe: name at least one group')
  if (typeof handlers?.onEvent !== 'function') throw new UsageError('subscribe: handlers.onEvent must be a function')
  const seen = new Set<string>()
  for (const r of requested) {
    if (typeof r?.groupId !== 'string') throw new UsageError('subscribe: every group needs a groupId')
    if (!Number.isSafeInteger(r.afterSequence) || r.afterSequence < 0) throw new UsageError(`subscribe: afterSequence of ${r.groupId} must be a non-negative integer`)
    // One connection carries one position per Group (§17.2); two subscriptions would fight over it.
    if (seen.has(r.groupId) || live.has(r.groupId)) throw new UsageError(`subscribe: group ${r.groupId} is already subscribed on this connection`)
    seen.add(r.groupId)
  }
}
