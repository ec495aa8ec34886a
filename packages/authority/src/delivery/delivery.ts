/**
 * Event delivery of a Group Authority (§8, §16, §17.2, §17.3), in process: per-Group
 * subscriptions that replay from a position and then go live without a gap, durable ACK Cursors
 * (kept by a `cursors.ts` store), paged replay, attention filters on live delivery
 * (`attention.ts`), and bounded per-Group buffers with `BACKPRESSURE`. The WebSocket binding
 * frames what this module does; it decides nothing itself.
 *
 * Who may read a Group: a member whose Membership there is `active` or `provisional`, or a
 * service listed in {@link DeliveryOptions.controlPlane} (§8: Organization services are authorized
 * by Organization policy, not by a Membership). Anyone else gets `GROUP_NOT_FOUND`, worded alike
 * whether the Group is absent or only hidden (§17.2).
 *
 * A Membership's `visibilityStartSequence` is the last sequence it cannot see: Events with a
 * sequence above it are visible, so `0` means the whole history (§8 late joiners).
 *
 * A position below a Group's compaction point (`Authority.compact`) answers `CURSOR_TOO_OLD`
 * with the signed snapshot reference in its details (§16): at subscribe and replay time, or, for
 * a subscription still catching up when the log is compacted under it, through `onError`, which
 * ends that Group. The subscriber fetches the snapshot and its state image
 * ({@link Delivery.snapshot}), verifies both (`verifySnapshotImage`) and subscribes again after
 * the snapshot sequence.
 * @module
 */
import { ProtocolError, UsageError } from '@weft/codec'
import { type AttentionFilter, type Event, type GroupAcknowledgement, type GroupSubscription, payloadOf } from '@weft/spec'
import { cursorTooOld } from '../log/compaction.js'
import { actorKey, type ActorRef, type GroupState } from '../model.js'
import type { Authority } from '../commit/pipeline.js'
import type { RestorePoint } from '../log/snapshots.js'
import { cardActive } from '../ingress/standing.js'
import { concernsOwnMembership, endsLater, passesAttention } from './attention.js'
import { createMemoryCursorStore, type CursorStore } from './cursors.js'

const CARD_REGISTERED = 'ext.missionweaveprotocol.registry.agent_card_registered'

/** Options of {@link createDelivery}. */
export interface DeliveryOptions {
  /** Live Events one subscription may hold undelivered for one Group before that Group is backpressured. Default 1000. */
  readonly maxBufferedPerGroup?: number
  /** The most Events one replay page (and one read of the log during catch-up) holds. Default 500. */
  readonly pageSize?: number
  /** The `retryAfterMs` guidance a `BACKPRESSURE` error carries. Default 1000. */
  readonly retryAfterMs?: number
  /** Where ACK Cursors are kept. Default: {@link createMemoryCursorStore}. */
  readonly cursorStore?: CursorStore
  /** Service Principal IDs that read every Group by Organization policy (§8); usually the Authority's `policy.controlPlane`. Default none. */
  readonly controlPlane?: readonly string[]
}

/**
 * One Group of {@link Delivery.subscribe}: the wire {@link GroupSubscription}, except that
 * `afterSequence` may be left out to resume after the subscriber's ACK Cursor.
 */
export type DeliveryGroup = Omit<GroupSubscription, 'afterSequence'> & {
  readonly afterSequence?: number
}

/** What a subscription calls. */
export interface SubscriptionHandlers {
  /**
   * Receives each Event, per Group in sequence order. `subscription` is the handle being built,
   * so the first replayed Events can already pause their Group. If it throws, the Event counts as
   * not delivered and its Group pauses; {@link Subscription.resume} retries it.
   */
  onEvent(event: Event, subscription: Subscription): void
  /**
   * Told when a Group stops flowing: `BACKPRESSURE` (its buffer filled; {@link Subscription.resume}
   * continues from the log), `GROUP_NOT_FOUND` (the subscriber lost access; the Group is ended),
   * `AUTH_FORBIDDEN` (an Agent Card that stops the subscribing Agent was registered, §6.1; every
   * Group of the Agent is ended) or
   * `CURSOR_TOO_OLD` (the log was compacted past the position still to be read; the Group is ended
   * and the details carry the snapshot reference to restore from, §16).
   */
  onError?(error: ProtocolError, groupId: string): void
}

/** Options of {@link Delivery.subscribe}. */
export interface SubscribeOptions {
  /**
   * Start with every Group paused: nothing is read from the log or handed out until
   * {@link Subscription.resume}, while live Events queue up to the buffer bound. For a subscriber
   * that cannot take Events yet (a WebSocket whose peer is not reading, §17.3).
   */
  readonly paused?: boolean
}

/** Where one Group of a subscription stands. */
export type ChannelStatus = 'live' | 'paused' | 'backpressured' | 'ended'

/** A subscription to one or more Groups; each Group flows, pauses and ends on its own (§8, §17.3). */
export interface Subscription {
  /** The subscribed Group IDs, in subscription order. */
  readonly groupIds: readonly string[]
  /** Stops handing out Events of `groupId`; live Events queue up to the buffer bound. */
  pause(groupId: string): void
  /** Resumes `groupId` after a pause, a throwing handler or `BACKPRESSURE`, continuing from the log where the buffer was dropped. */
  resume(groupId: string): void
  /** Where `groupId` stands. */
  status(groupId: string): ChannelStatus
  /** The highest sequence of `groupId` this subscription has handed out or passed over. */
  position(groupId: string): number
  /** Ends every Group of the subscription; nothing is delivered afterwards. */
  close(): void
}

/** One page of {@link Delivery.replay}. */
export interface ReplayPage {
  /** The visible Events after the requested position, in sequence order, at most one page. */
  readonly events: readonly Event[]
  /** Where the next page starts: pass it as `afterSequence`. */
  readonly nextAfterSequence: number
  /** `true` when Events after {@link nextAfterSequence} exist: the page was cut, not the history. */
  readonly hasMore: boolean
  /** The Group's head when the page was read. */
  readonly head: number
}

/**
 * What delivery reads of an Authority: the Group state (for §8 visibility), the online log and its
 * compaction point, the commit stream and, when given, the Authority state whose Agent Cards stop a
 * revoked or deprecated Agent's reading (§6.1). An {@link Authority} is one; so is any Authority that
 * keeps its log elsewhere (the PostgreSQL one of `@weft/store-postgres`), which is why delivery
 * asks for these members only.
 */
export type DeliverySource = Pick<Authority, 'group' | 'eventPage' | 'snapshot' | 'onCommit'> & Partial<Pick<Authority, 'state'>>

/** Delivery of one Authority's Events to subscribers. */
export interface Delivery {
  /**
   * Subscribes `subscriber` to `groups`: each replays from its `afterSequence` (default: the ACK
   * Cursor) up to the head, then continues live with every later Event, none lost or repeated.
   * All Groups are checked before any is subscribed; with `options.paused` none is read before
   * {@link Subscription.resume}.
   * @throws ProtocolError `GROUP_NOT_FOUND` for a Group the subscriber may not read, `AUTH_FORBIDDEN` for an Agent whose
   * registered card is not active (every reading method), `INVALID_COMMAND` for a position beyond the head or a repeated Group,
   * `CURSOR_TOO_OLD` (details: the snapshot reference) for a position below the Group's compaction point.
   */
  subscribe(subscriber: ActorRef, groups: readonly DeliveryGroup[], handlers: SubscriptionHandlers, options?: SubscribeOptions): Subscription
  /**
   * One page of the visible history of `groupId` after `afterSequence` (default: the ACK Cursor).
   * Attention filters never apply here (§17.2). `limit` is capped by the page size.
   * @throws ProtocolError `GROUP_NOT_FOUND`, `INVALID_COMMAND` for a position beyond the head or a bad limit, or
   * `CURSOR_TOO_OLD` for a position below the Group's compaction point.
   */
  replay(subscriber: ActorRef, groupId: string, afterSequence?: number, limit?: number): ReplayPage
  /**
   * Records ACK Cursors (§16). A Cursor lower than the stored one is ignored; all acknowledgements
   * are checked before any is stored.
   * @returns The Cursor of each acknowledged Group after the call.
   * @throws ProtocolError `GROUP_NOT_FOUND`, or `INVALID_COMMAND` for a sequence beyond the head.
   */
  ack(subscriber: ActorRef, acks: readonly GroupAcknowledgement[]): readonly GroupAcknowledgement[]
  /**
   * The subscriber's ACK Cursor in `groupId`, 0 when it never acknowledged.
   * @throws ProtocolError `GROUP_NOT_FOUND`.
   */
  cursor(subscriber: ActorRef, groupId: string): number
  /**
   * What a subscriber told `CURSOR_TOO_OLD` restores (§16): the Group's latest Signed Group Snapshot
   * and its state image, or `undefined` when the Group's log was never compacted. Verify it with
   * `verifySnapshotImage`, then subscribe after its sequence.
   * @throws ProtocolError `GROUP_NOT_FOUND`.
   */
  snapshot(subscriber: ActorRef, groupId: string): RestorePoint | undefined
  /** Detaches from the Authority and ends every subscription. */
  close(): void
}

/** One Group of one subscription. */
interface Channel {
  readonly subscriber: ActorRef
  readonly groupId: string
  readonly filter: AttentionFilter | undefined
  readonly handlers: SubscriptionHandlers
  subscription: Subscription | undefined
  /** Highest sequence handed out or passed over. */
  through: number
  /** Events up to here come from the log unfiltered: the replay requested at subscribe time. */
  readonly replayUntil: number
  /** Events up to here come from the log, live ones filtered: the replay plus what a dropped buffer held. */
  catchUpUntil: number
  /** Live Events above {@link catchUpUntil} that passed the filter, not yet handed out. */
  queue: Event[]
  /** A page of the log being read during catch-up, and the index of the next Event in it. */
  page: readonly Event[]
  pageAt: number
  paused: boolean
  status: 'open' | 'backpressured' | 'ended'
  draining: boolean
}

/** The next Event of a channel and where it comes from. */
interface Next {
  readonly event: Event
  readonly fromLog: boolean
}

/** A subscriber's access to a Group: the Group and the last sequence it may not see. */
interface Access {
  readonly group: GroupState
  readonly start: number
}

const DEFAULTS = {
  maxBufferedPerGroup: 1000,
  pageSize: 500,
  retryAfterMs: 1000,
} as const

/**
 * Creates the delivery of `authority`'s Events. It listens to every committed transaction from
 * now on ({@link Authority.onCommit}) and reads earlier Events from the log.
 *
 * @example
 * ```ts
 * const delivery = createDelivery(authority, { controlPlane: ['urn:example:control-plane'] })
 * const subscription = delivery.subscribe(worker, [{ groupId, afterSequence: 0, attention: { workItemIds: [mine] } }], {
 *   onEvent: (event) => inbox.push(event),
 *   onError: (error, groupId) => console.warn(groupId, error.code, error.details),
 * })
 * delivery.ack(worker, [{ groupId, sequence: inbox.contiguousCursor(groupId) }])
 * subscription.close()
 * ```
 * @throws UsageError on bad options.
 */
export function createDelivery(authority: DeliverySource, options: DeliveryOptions = {}): Delivery {
  const maxBuffered = positiveOption(options, 'maxBufferedPerGroup')
  const pageSize = positiveOption(options, 'pageSize')
  const retryAfterMs = positiveOption(options, 'retryAfterMs')
  const cursors = options.cursorStore ?? createMemoryCursorStore()
  const controlPlane = new Set(options.controlPlane ?? [])
  const byGroup = new Map<string, Set<Channel>>()

  /** The visibility start of the subscriber in the Group, or `undefined` when it may not read it. */
  function visibility(subscriber: ActorRef, groupId: string): Access | undefined {
    const group = authority.group(groupId)
    if (group === undefined) return undefined
    // §8: Organization services are authorized by policy and see the whole Group.
    if (subscriber.type === 'service') return controlPlane.has(subscriber.id) ? { group, start: 0 } : undefined
    const id = group.membershipByMember.get(actorKey(subscriber))
    const membership = id === undefined ? undefined : group.memberships.get(id)
    if (membership === undefined || membership.state === 'ended') return undefined
    return { group, start: membership.visibilityStartSequence }
  }

  /** §6.1: why an Agent whose registered card is no longer active may read nothing, or `undefined`. */
  function stopped(subscriber: ActorRef): ProtocolError | undefined {
    if (subscriber.type !== 'agent' || authority.state === undefined) return undefined
    const agent = authority.state.org.agents.get(subscriber.id)
    return agent === undefined || cardActive(agent) ? undefined : new ProtocolError('AUTH_FORBIDDEN', `The Agent Card is ${agent.card.status}.`)
  }

  function readable(subscriber: ActorRef, groupId: string): Access {
    const refusal = stopped(subscriber)
    if (refusal !== undefined) throw refusal
    // §17.2: the same answer for an absent Group and a hidden one, so nothing leaks about which it is.
    return visibility(subscriber, groupId) ?? fail('GROUP_NOT_FOUND', 'group not found')
  }

  /** §6.1: a card that stops its Agent ends every subscription of that Agent, each Group told why. */
  function endStoppedAgent(agentId: string): void {
    const refusal = stopped({ type: 'agent', id: agentId })
    if (refusal === undefined) return
    for (const channels of byGroup.values()) {
      for (const channel of [...channels]) if (channel.subscriber.type === 'agent' && channel.subscriber.id === agentId) end(channel, refusal)
    }
  }

  function position(subscriber: ActorRef, groupId: string, afterSequence: number | undefined, head: number, what: string): number {
    const at = afterSequence ?? cursors.get(subscriber, groupId) ?? 0
    if (!Number.isSafeInteger(at) || at < 0) fail('INVALID_COMMAND', `${what} must be a non-negative integer`)
    if (at > head) fail('INVALID_COMMAND', `${what} ${at} is beyond the head of the group`)
    return at
  }

  /** Where a replay of the Group starts, once it is known to be on the online log (§16). */
  function online(groupId: string, from: number): number {
    const record = authority.snapshot(groupId)
    if (record !== undefined && from < record.throughSequence) throw cursorTooOld(record, from)
    return from
  }

  function onCommit(events: readonly Event[]): void {
    const touched = new Set<Channel>()
    for (let i = 0; i < events.length; i++) {
      const event = events[i] as Event
      const card = payloadOf(event, CARD_REGISTERED)?.card
      if (card !== undefined) endStoppedAgent(card.agentId)
      if (event.groupId === undefined) continue
      for (const channel of byGroup.get(event.groupId) ?? []) {
        enqueue(channel, event, events, i)
        touched.add(channel)
      }
    }
    // §16: every Event of the transaction is queued before any is handed out, so a handler that
    // submits a Command from inside onEvent still sees this transaction's Events first.
    for (const channel of touched) drain(channel)
  }

  function enqueue(channel: Channel, event: Event, transaction: readonly Event[], at: number): void {
    const sequence = event.sequence ?? 0
    if (channel.status === 'ended' || sequence <= channel.catchUpUntil) return
    const access = visibility(channel.subscriber, channel.groupId)
    // The state is read after the whole transaction: a Membership ended by one of its later Events
    // still covered the Events before that one, which the member receives up to its own ending.
    if (access === undefined && !endsLater(channel.subscriber, transaction, at)) {
      // After the ending Event: not for this subscriber, which drain ends once the ending is handed out.
      if (endsLater(channel.subscriber, transaction, 0)) return
      return end(channel, true)
    }
    if (channel.status === 'backpressured') {
      // The buffer was dropped: the log holds everything, read back on resume.
      channel.catchUpUntil = sequence
      return
    }
    if (access !== undefined && !passesAttention(channel.filter, channel.subscriber, event, access.group)) return
    if (channel.queue.length >= maxBuffered) {
      // §17.3: pause this Group only and say when to try again; other Groups keep flowing.
      channel.status = 'backpressured'
      channel.queue = []
      channel.catchUpUntil = sequence
      const details = {
        groupId: channel.groupId,
        retryAfterMs,
        afterSequence: channel.through,
      }
      channel.handlers.onError?.(new ProtocolError('BACKPRESSURE', 'delivery buffer of the group is full', { details }), channel.groupId)
      return
    }
    channel.queue.push(event)
  }

  /** The next Event of the channel, from the log while catching up, then from the live queue. */
  function candidate(channel: Channel): Next | undefined {
    if (channel.through < channel.catchUpUntil) {
      let event = channel.page[channel.pageAt]
      if (event?.sequence !== channel.through + 1) {
        channel.page = readPage(channel)
        channel.pageAt = 0
        event = channel.page[0]
      }
      if (event !== undefined) return { event, fromLog: true }
      channel.catchUpUntil = channel.through
    }
    if (channel.page.length > 0) channel.page = []
    const event = channel.queue[0]
    return event === undefined ? undefined : { event, fromLog: false }
  }

  /**
   * The next page of the log after what the channel handed out. §16: when the log was compacted
   * past that point meanwhile, the Group ends with `CURSOR_TOO_OLD` and nothing more is read.
   */
  function readPage(channel: Channel): readonly Event[] {
    try {
      return authority.eventPage(channel.groupId, channel.through, pageSize).events
    } catch (error) {
      if (!(error instanceof ProtocolError) || error.code !== 'CURSOR_TOO_OLD') throw error
      end(channel, error)
      return []
    }
  }

  /** The next Event to hand out and the subscriber's access, passing over what it may not or did not ask to see. */
  function peek(channel: Channel): { next: Next; access: Access | undefined } | undefined {
    for (;;) {
      const next = candidate(channel)
      if (next === undefined) return undefined
      const access = visibility(channel.subscriber, channel.groupId)
      const sequence = next.event.sequence ?? 0
      // §8: a late joiner never receives history before its visibility start.
      const hidden = access !== undefined && sequence <= access.start
      // §17.2: filters apply to live Events only, never to the replay asked for at subscribe time.
      const filtered = next.fromLog && access !== undefined && sequence > channel.replayUntil && !passesAttention(channel.filter, channel.subscriber, next.event, access.group)
      if (!hidden && !filtered) return { next, access }
      advance(channel, next)
    }
  }

  function drain(channel: Channel): void {
    if (channel.draining) return
    channel.draining = true
    try {
      while (channel.status === 'open' && !channel.paused) {
        const peeked = peek(channel)
        if (peeked === undefined) break
        const { next, access } = peeked
        const ownMembership = concernsOwnMembership(channel.subscriber, next.event)
        // Authorization is checked at every delivery, not only at subscribe time (§17.2); queued
        // Events before the one ending the subscriber's Membership were committed while it held it.
        if (access === undefined && !ownMembership && (next.fromLog || !endsLater(channel.subscriber, channel.queue, 0))) return end(channel, true)
        if (!hand(channel, next.event)) break
        advance(channel, next)
        // §8: the Event ending the subscriber's own Membership is its last one from this Group.
        if (ownMembership && visibility(channel.subscriber, channel.groupId) === undefined) return end(channel, true)
      }
    } finally {
      channel.draining = false
    }
  }

  function advance(channel: Channel, next: Next): void {
    channel.through = next.event.sequence ?? channel.through
    if (next.fromLog) channel.pageAt += 1
    else channel.queue.shift()
  }

  /** Hands one Event to the subscriber; a throwing handler pauses the Group with the Event undelivered. */
  function hand(channel: Channel, event: Event): boolean {
    try {
      channel.handlers.onEvent(event, channel.subscription!)
      return true
    } catch {
      channel.paused = true
      return false
    }
  }

  /** Ends one Group of a subscription; `notify` tells the subscriber why (`true`: it lost access). */
  function end(channel: Channel, notify: boolean | ProtocolError): void {
    if (channel.status === 'ended') return
    channel.status = 'ended'
    channel.queue = []
    channel.page = []
    byGroup.get(channel.groupId)?.delete(channel)
    if (notify === false) return
    channel.handlers.onError?.(notify === true ? new ProtocolError('GROUP_NOT_FOUND', 'group not found') : notify, channel.groupId)
  }

  const detach = authority.onCommit(onCommit)

  return {
    subscribe(subscriber, groups, handlers, options = {}) {
      if (groups.length === 0) fail('INVALID_COMMAND', 'a subscription names at least one group')
      if (new Set(groups.map((g) => g.groupId)).size !== groups.length) fail('INVALID_COMMAND', 'a subscription names each group once')
      // Check every Group first: a refused subscription registers nothing.
      const planned = groups.map((g) => {
        const { group, start } = readable(subscriber, g.groupId)
        const after = position(subscriber, g.groupId, g.afterSequence, group.head, 'afterSequence')
        return { g, head: group.head, through: online(g.groupId, Math.max(after, start)) }
      })
      const channels = new Map<string, Channel>()
      for (const { g, head, through } of planned) {
        // Registered before the replay, with the head recorded now: Events committed from here on
        // queue up behind the replay, so the switch to live has no gap and no repeat (§16).
        const channel: Channel = {
          subscriber: { type: subscriber.type, id: subscriber.id },
          groupId: g.groupId,
          filter: g.attention,
          handlers,
          subscription: undefined,
          through,
          replayUntil: head,
          catchUpUntil: head,
          queue: [],
          page: [],
          pageAt: 0,
          paused: options.paused === true,
          status: 'open',
          draining: false,
        }
        channels.set(g.groupId, channel)
        let set = byGroup.get(g.groupId)
        if (set === undefined) byGroup.set(g.groupId, (set = new Set()))
        set.add(channel)
      }
      const channelOf = (groupId: string): Channel => channels.get(groupId) ?? usage(`the subscription does not include group ${groupId}`)
      const subscription: Subscription = Object.freeze({
        groupIds: Object.freeze([...channels.keys()]),
        pause(groupId: string) {
          channelOf(groupId).paused = true
        },
        resume(groupId: string) {
          const channel = channelOf(groupId)
          channel.paused = false
          if (channel.status === 'backpressured') channel.status = 'open'
          drain(channel)
        },
        status(groupId: string): ChannelStatus {
          const channel = channelOf(groupId)
          if (channel.status === 'open') return channel.paused ? 'paused' : 'live'
          return channel.status
        },
        position: (groupId: string) => channelOf(groupId).through,
        close() {
          for (const channel of channels.values()) end(channel, false)
        },
      })
      for (const channel of channels.values()) channel.subscription = subscription
      for (const channel of channels.values()) drain(channel)
      return subscription
    },

    replay(subscriber, groupId, afterSequence, limit = pageSize) {
      const { group, start } = readable(subscriber, groupId)
      if (!Number.isSafeInteger(limit) || limit < 1) fail('INVALID_COMMAND', 'limit must be a positive integer')
      const from = Math.max(position(subscriber, groupId, afterSequence, group.head, 'afterSequence'), start)
      const { events, nextAfterSequence, hasMore, head } = authority.eventPage(groupId, online(groupId, from), Math.min(limit, pageSize))
      return { events, nextAfterSequence, hasMore, head }
    },

    ack(subscriber, acks) {
      const checked = acks.map(({ groupId, sequence }) => {
        const { group } = readable(subscriber, groupId)
        return {
          groupId,
          sequence: position(subscriber, groupId, sequence, group.head, 'acknowledged sequence'),
        }
      })
      return checked.map(({ groupId, sequence }) => {
        const current = cursors.get(subscriber, groupId) ?? 0
        // §16: a Cursor only moves forward; an older ACK (a reordered or repeated frame) changes nothing.
        if (sequence > current) cursors.set(subscriber, groupId, sequence)
        return { groupId, sequence: Math.max(sequence, current) }
      })
    },

    cursor(subscriber, groupId) {
      readable(subscriber, groupId)
      return cursors.get(subscriber, groupId) ?? 0
    },

    snapshot(subscriber, groupId) {
      readable(subscriber, groupId)
      const record = authority.snapshot(groupId)
      return record === undefined ? undefined : { snapshot: record.snapshot, image: record.image }
    },

    close() {
      detach()
      for (const set of byGroup.values()) for (const channel of [...set]) end(channel, false)
    },
  }
}

function fail(code: 'GROUP_NOT_FOUND' | 'INVALID_COMMAND', message: string): never {
  throw new ProtocolError(code, message)
}

function usage(message: string): never {
  throw new UsageError(message)
}

function positiveOption(options: DeliveryOptions, name: keyof typeof DEFAULTS): number {
  const value = options[name] ?? DEFAULTS[name]
  if (!Number.isSafeInteger(value) || value < 1) throw new UsageError(`${name} must be a positive integer, got ${String(value)}`)
  return value
}
