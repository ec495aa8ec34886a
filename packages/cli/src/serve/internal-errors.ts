/**
 * `INTERNAL_ERROR` as `weft serve` answers it (§19: the Authority failed without accepting the
 * transition). The peer learns only the code and a generic message; the operator must learn why,
 * so every one answered is also logged, once, on one JSON line with its cause. Commands are logged
 * where the server logs every submission (`loggedAuthority`, `log.ts`); the delivery the WebSocket
 * binding serves from (SUBSCRIBE replays, ACKs, snapshots, §16) is wrapped here.
 * @module
 */
import type { ActorRef, Delivery, Subscription } from '@weft/authority'
import { ProtocolError } from '@weft/codec'
import type { ServeLog } from './log.js'

/** Whether `thrown` reaches the wire as `INTERNAL_ERROR` (anything but a `ProtocolError` does, see `ProtocolError.from`). */
export function isInternal(thrown: unknown): boolean {
  return ProtocolError.from(thrown).code === 'INTERNAL_ERROR'
}

/**
 * The cause of an `INTERNAL_ERROR` in one line: the innermost error's name and message (a
 * `ProtocolError` wrapping a failure says only the generic meaning of its code).
 */
export function causeText(thrown: unknown): string {
  let error = thrown
  while (error instanceof ProtocolError && error.cause !== undefined) error = error.cause
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  return text.replaceAll('\n', ' ').slice(0, 2000)
}

/**
 * `delivery` with every `INTERNAL_ERROR` it throws, or hands a subscriber through `onError`,
 * logged (`level: 'error'`, `msg: 'internal error'`, the operation, the Agent and Group, and the
 * cause) before it goes on to the WebSocket binding unchanged.
 */
export function loggedDelivery(delivery: Delivery, log: ServeLog): Delivery {
  const report = (operation: string, subscriber: ActorRef, groupIds: readonly string[], thrown: unknown): void => {
    const where = groupIds.length === 1 ? { groupId: groupIds[0] } : { groupIds }
    log({ level: 'error', msg: 'internal error', operation, agentId: subscriber.id, ...where, cause: causeText(thrown) })
  }
  /** Runs `run`, reporting a throw that becomes `INTERNAL_ERROR`, and rethrows it. */
  const guarded = <R>(operation: string, subscriber: ActorRef, groupIds: readonly string[], run: () => R): R => {
    try {
      return run()
    } catch (thrown) {
      if (isInternal(thrown)) report(operation, subscriber, groupIds, thrown)
      throw thrown
    }
  }
  return {
    subscribe(subscriber, groups, handlers, options) {
      const groupIds = groups.map((g) => g.groupId)
      const onError = (error: ProtocolError, groupId: string): void => {
        if (error.code === 'INTERNAL_ERROR') report('deliver', subscriber, [groupId], error)
        handlers.onError?.(error, groupId)
      }
      const inner: Subscription = guarded('subscribe', subscriber, groupIds, () => delivery.subscribe(subscriber, groups, { ...handlers, onError }, options))
      // Resuming reads the next page of the log (§17.3), which may fail as a replay does.
      return {
        groupIds: inner.groupIds,
        pause: (groupId) => guarded('pause', subscriber, [groupId], () => inner.pause(groupId)),
        resume: (groupId) => guarded('resume', subscriber, [groupId], () => inner.resume(groupId)),
        status: (groupId) => inner.status(groupId),
        position: (groupId) => inner.position(groupId),
        close: () => inner.close(),
      }
    },
    replay: (subscriber, groupId, afterSequence, limit) => guarded('replay', subscriber, [groupId], () => delivery.replay(subscriber, groupId, afterSequence, limit)),
    ack: (subscriber, acks) =>
      guarded(
        'ack',
        subscriber,
        acks.map((a) => a.groupId),
        () => delivery.ack(subscriber, acks),
      ),
    cursor: (subscriber, groupId) => delivery.cursor(subscriber, groupId),
    snapshot: (subscriber, groupId) => guarded('snapshot', subscriber, [groupId], () => delivery.snapshot(subscriber, groupId)),
    close: () => delivery.close(),
  }
}
