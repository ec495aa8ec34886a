/**
 * Fault seams between a Worker and the Authority, as the simulator injects them: an
 * {@link EventFeed} that loses, repeats and reorders deliveries and reconnects from the last ACK,
 * and a {@link Transport} whose link can go down. Both wrap the real seams of `@weft/client`, so
 * the Worker under test is the unmodified reference Worker.
 * @module
 */
import { ProtocolError } from '@weft/codec'
import type { EventFeed, FeedGroup, FeedHandlers, FeedSubscription, Receipt, Transport } from '@weft/client'
import type { Event } from '@weft/spec'
import type { Prng } from './prng.js'

/** Per-delivery probabilities of each delivery fault (§16: at-least-once, reordered around reconnects). */
export interface DeliveryFaultRates {
  /** The Event never reaches the subscriber until a reconnect replays it. */
  readonly drop: number
  /** The Event is delivered now and once more later. */
  readonly duplicate: number
  /** The Event is held back and delivered after the ones that follow it. */
  readonly reorder: number
}

/** What a {@link FaultyFeed} did so far. */
export interface DeliveryTally {
  dropped: number
  duplicated: number
  reordered: number
  reconnects: number
}

/** An {@link EventFeed} with delivery faults, driven step by step by the simulator. */
export interface FaultyFeed extends EventFeed {
  /** Delivers what was held back or repeated since the last flush; returns how many Events it delivered. */
  flush(): number
  /**
   * Drops every live subscription and subscribes again after the last ACKed sequence of each of
   * its Groups (§16: `SUBSCRIBE.afterSequence`), as a client does after a lost connection.
   * Deliveries still held back are lost with the connection.
   */
  reconnect(): void
  /** Events lost since the last reconnect; a subscriber with a gap waits for the replay. */
  lost(): number
  readonly tally: DeliveryTally
}

interface Wrapped {
  readonly groups: readonly FeedGroup[]
  readonly handlers: FeedHandlers
  inner: FeedSubscription[]
  closed: boolean
}

/**
 * Wraps `inner` with delivery faults drawn from `prng` at the given rates. Per-Group order holds
 * on the inner feed; the wrapper breaks it exactly as §16 allows a network to.
 * @example
 * ```ts
 * const feed = faultyFeed(deliveryFeed(delivery, agent), createPrng(seed, 'feed:w1'), { drop: 0.02, duplicate: 0.05, reorder: 0.05 })
 * const worker = createWorker({ ...options, feed })
 * feed.flush() // after each step
 * ```
 */
export function faultyFeed(inner: EventFeed, prng: Prng, rates: DeliveryFaultRates): FaultyFeed {
  const acked = new Map<string, number>()
  const subscriptions: Wrapped[] = []
  let pending: { readonly to: Wrapped; readonly event: Event }[] = []
  let lostSinceReconnect = 0
  const tally: DeliveryTally = { dropped: 0, duplicated: 0, reordered: 0, reconnects: 0 }

  function deliver(to: Wrapped, event: Event): void {
    if (to.closed) return
    const r = prng.next()
    if (r < rates.drop) {
      tally.dropped++
      lostSinceReconnect++
    } else if (r < rates.drop + rates.duplicate) {
      tally.duplicated++
      to.handlers.onEvent(event)
      pending.push({ to, event })
    } else if (r < rates.drop + rates.duplicate + rates.reorder) {
      tally.reordered++
      pending.push({ to, event })
    } else {
      to.handlers.onEvent(event)
    }
  }

  function open(to: Wrapped, groups: readonly FeedGroup[]): FeedSubscription {
    return inner.subscribe(groups, {
      onEvent: (event) => deliver(to, event),
      ...(to.handlers.onStart === undefined ? {} : { onStart: to.handlers.onStart }),
      ...(to.handlers.onError === undefined ? {} : { onError: to.handlers.onError }),
    })
  }

  return {
    subscribe(groups, handlers) {
      const to: Wrapped = { groups: [...groups], handlers, inner: [], closed: false }
      to.inner.push(open(to, groups))
      subscriptions.push(to)
      return {
        close() {
          to.closed = true
          for (const s of to.inner.splice(0)) s.close()
        },
      }
    },
    ack(groupId, sequence) {
      if (sequence > (acked.get(groupId) ?? 0)) acked.set(groupId, sequence)
      return inner.ack(groupId, sequence)
    },
    flush() {
      const due = pending
      pending = []
      for (const { to, event } of due) if (!to.closed) to.handlers.onEvent(event)
      return due.length
    },
    reconnect() {
      tally.reconnects++
      lostSinceReconnect = 0
      pending = []
      for (const to of subscriptions) {
        if (to.closed) continue
        for (const s of to.inner.splice(0)) s.close()
        // One Group at a time: a Group the subscriber may no longer read must not take the others down.
        for (const g of to.groups) {
          const resume: FeedGroup = { ...g, afterSequence: Math.max(g.afterSequence, acked.get(g.groupId) ?? 0) }
          try {
            to.inner.push(open(to, [resume]))
          } catch (error) {
            if (!(error instanceof ProtocolError)) throw error
            to.handlers.onError?.(error, g.groupId)
          }
        }
      }
    },
    lost: () => lostSinceReconnect,
    tally,
  }
}

/** The state of one actor's connection to the Group service. */
export interface SimLink {
  up: boolean
  /** Set: the next submission reaches the Authority, which accepts or refuses it, but the connection drops before the answer. */
  loseNextReply?: boolean
  /** Set: the network delivers the next submission twice; the sender gets the second answer. */
  duplicateNext?: boolean
  /** Submissions that failed because the link was down. */
  refused: number
  /** Duplicated submissions whose two answers differed (§19: a repeated Action ID must get the first answer again). */
  diverged?: number
}

/** What an answer says, for comparing two: the Events' IDs of a receipt, or a refusal's code. */
async function answerOf(answer: Promise<Receipt>): Promise<{ readonly answer: Promise<Receipt>; readonly said: string }> {
  try {
    const receipt = await answer
    return { answer, said: `receipt ${receipt.events.map((e) => e.eventId).join(' ')}` }
  } catch (error) {
    return { answer, said: `refusal ${ProtocolError.from(error).code}` }
  }
}

/** Submits one Command twice, as a network that repeats a request does; answers with the second, counting a difference in `link.diverged`. */
async function duplicated(inner: Transport, link: SimLink, command: Readonly<Record<string, unknown>>, bytes: string): Promise<Receipt> {
  const first = await answerOf(inner.submit(command, bytes))
  const second = await answerOf(inner.submit(command, bytes))
  if (first.said !== second.said) link.diverged = (link.diverged ?? 0) + 1
  return second.answer
}

/**
 * `inner` behind `link`: while the link is down, every submission fails with a plain `Error`,
 * as an unreachable socket does, never a `ProtocolError` (§11.5 tells the two apart). With
 * `loseNextReply`, the next submission is applied and then fails the same way, the link down from
 * then on: the sender cannot tell whether its Command was accepted (§19: it retries unchanged).
 * With `duplicateNext`, the next submission reaches the Authority twice.
 */
export function linkedTransport(inner: Transport, link: SimLink): Transport {
  return {
    submit(command, bytes) {
      if (!link.up) {
        link.refused++
        return Promise.reject(new Error('ECONNRESET: the Group service is unreachable (simulated)'))
      }
      if (link.duplicateNext === true) {
        link.duplicateNext = false
        return duplicated(inner, link, command, bytes)
      }
      if (link.loseNextReply !== true) return inner.submit(command, bytes)
      link.loseNextReply = false
      link.up = false
      const lost = (): Promise<never> => Promise.reject(new Error('ECONNRESET: the connection dropped before the answer (simulated)'))
      return inner.submit(command, bytes).then(lost, lost)
    },
  }
}
