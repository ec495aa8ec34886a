/**
 * The delivery side of one server connection (§16, §17.2, §17.3): one channel per subscribed Group,
 * each with its own delivery subscription and its window of unacknowledged Events. A Group pauses
 * alone, when its window is full (until the Agent's `ACK`s catch up) or when its next Event finds
 * the socket full (until the socket drains); the other Groups of the connection keep flowing.
 * @module
 */
import { ProtocolError } from '@weft/codec'
import type { AckFrame, Event, SubscribeFrame } from '@weft/spec'
import type { Subscription } from '../delivery/delivery.js'
import { sessionOf } from './lifecycle.js'
import { eventFrame, type ConnectionLink } from './link.js'
import type { Outbox } from './outbox.js'

/** The subscribed Groups of one connection. */
export interface Channels {
  /** The Groups subscribed now. */
  readonly groupIds: string[]
  /** Answers a `SUBSCRIBE`: each Group (re)starts from the position it names. */
  subscribe(frame: SubscribeFrame): void
  /** Answers an `ACK`: the delivery's cursors move, and windows that emptied enough resume. */
  ack(frame: AckFrame): void
  /** The socket drained: paused Groups flow again, the longest waiting first, until it fills again. */
  unblock(): void
  /** The connection ended: every subscription closes. */
  close(): void
}

/** One subscribed Group of the connection, with its unacknowledged window (§17.3). */
interface Channel {
  readonly groupId: string
  subscription: Subscription | undefined
  /** Sequences sent in `EVENT` frames and not yet covered by an `ACK`, oldest first. */
  readonly unacked: number[]
  /** Paused by this connection because the window is full. */
  paused: boolean
}

/**
 * Thrown from a delivery handler for an Event that finds the socket full: the delivery keeps the
 * Event and pauses its Group (see `SubscriptionHandlers.onEvent`) until the socket drains.
 */
const SOCKET_FULL = new Error('the socket is full')

/** The channels of the connection `link`, whose Event frames go through `outbox`. */
export function createChannels(link: ConnectionLink, outbox: Outbox): Channels {
  const { ctx } = link
  const channels = new Map<string, Channel>()
  /** Groups paused because their next Event found the socket full, in the order they should flow again. */
  const blocked = new Set<Channel>()
  const actor = () => sessionOf(link.lifecycle())!.actor

  const subscribe = (frame: SubscribeFrame): void => {
    // Each Group gets its own delivery subscription: one refused Group does not hold back the
    // others, and each pauses and resumes alone (§17.3).
    for (const group of frame.groups) {
      // A SUBSCRIBE of a Group replaces its subscription: the replay still to come restarts from
      // the new position, and nothing of the old one is written (its Events were never queued here).
      const replaced = channels.get(group.groupId)
      replaced?.subscription?.close()
      if (replaced !== undefined) blocked.delete(replaced)
      const channel: Channel = { groupId: group.groupId, subscription: undefined, unacked: [], paused: false }
      channels.set(group.groupId, channel)
      try {
        // §17.3: behind a full socket the replay is not even read from the log until it drains.
        const full = !outbox.writable
        channel.subscription = ctx.delivery.subscribe(
          actor(),
          [group],
          { onEvent: (event, subscription) => deliver(channel, event, subscription), onError: (error) => channelError(channel, error) },
          { paused: full },
        )
        if (full) {
          blocked.add(channel)
          outbox.wait()
        }
      } catch (thrown) {
        if (channels.get(group.groupId) === channel) channels.delete(group.groupId)
        // §17.2: GROUP_NOT_FOUND reads the same for an absent and a hidden Group.
        link.sendError(ProtocolError.from(thrown), { relatedFrameId: frame.frameId, groupId: group.groupId })
      }
    }
  }

  const deliver = (channel: Channel, event: Event, subscription: Subscription): void => {
    if (link.lifecycle().phase !== 'open' || channels.get(channel.groupId) !== channel) return subscription.close()
    // §17.3: an Event is written only while the socket drains; otherwise it stays in the delivery,
    // which pauses the Group with the Event undelivered until `unblock` resumes it.
    if (!outbox.writable) {
      outbox.wait()
      blocked.add(channel)
      throw SOCKET_FULL
    }
    outbox.event(eventFrame(link.nextFrameId(), event))
    channel.unacked.push(event.sequence ?? 0)
    if (channel.paused || channel.unacked.length < ctx.maxUnackedPerGroup) return
    // §17.3: bounded buffering per Group. This Group pauses until the Agent's ACKs catch up;
    // other Groups of the connection keep flowing.
    channel.paused = true
    subscription.pause(channel.groupId)
    const details = { retryAfterMs: ctx.retryAfterMs, afterSequence: event.sequence ?? 0, unacknowledged: channel.unacked.length, resumesAfterAck: true }
    link.sendError(new ProtocolError('BACKPRESSURE', 'Too many unacknowledged Events in this Group; it resumes once they are acknowledged.', { details }), { groupId: channel.groupId })
  }

  const channelError = (channel: Channel, error: ProtocolError): void => {
    if (channels.get(channel.groupId) !== channel) return
    // The delivery's own buffer filled while the Group was paused here: the Agent knows of a full
    // window, and a full socket is not its to know; the delivery reads the dropped Events back from the log.
    if (error.code === 'BACKPRESSURE' && (channel.paused || blocked.has(channel))) return
    if (error.code === 'GROUP_NOT_FOUND') {
      channels.delete(channel.groupId)
      blocked.delete(channel)
    }
    link.sendError(error, { groupId: channel.groupId })
  }

  const ack = (frame: AckFrame): void => {
    try {
      ctx.delivery.ack(actor(), frame.acknowledgements)
    } catch (thrown) {
      const only = frame.acknowledgements.length === 1 ? frame.acknowledgements[0]!.groupId : undefined
      return link.sendError(ProtocolError.from(thrown), { relatedFrameId: frame.frameId, groupId: only })
    }
    for (const { groupId, sequence } of frame.acknowledgements) {
      const channel = channels.get(groupId)
      if (channel === undefined) continue
      let covered = 0
      while (covered < channel.unacked.length && channel.unacked[covered]! <= sequence) covered++
      channel.unacked.splice(0, covered)
      // Resume at half the window, so a Group does not flap between paused and live on every ACK.
      // The window counts only Events written to this socket: an ACK of sequences never written
      // (beyond them, up to the head) releases nothing more, and a full socket still holds the Group.
      if (channel.paused && channel.unacked.length <= ctx.maxUnackedPerGroup / 2) {
        channel.paused = false
        if (!blocked.has(channel)) channel.subscription?.resume(groupId)
      }
    }
  }

  const unblock = (): void => {
    for (const channel of [...blocked]) {
      if (!outbox.writable) return
      blocked.delete(channel)
      if (!channel.paused && channels.get(channel.groupId) === channel) channel.subscription?.resume(channel.groupId)
    }
  }

  const close = (): void => {
    for (const channel of channels.values()) channel.subscription?.close()
    channels.clear()
    blocked.clear()
  }

  return {
    get groupIds() {
      return [...channels.keys()]
    },
    subscribe,
    ack,
    unblock,
    close,
  }
}
