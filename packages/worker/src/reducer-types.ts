/**
 * The types the generated `WorkerEventReducers` interface (src/gen/reducers.ts) is written in: an
 * Event narrowed to one kind with its typed payload, and the reducer of that kind.
 * @module
 */
import type { Event, EventKind, EventPayload } from '@weft/spec'
import type { WorkerView } from './seams.js'

/**
 * An Event whose `kind` is `K` and whose `payload` has the contract payload type of `K`
 * (spec/src/payloads/events.ts). The envelope is otherwise the normative one (§15.2).
 */
export type WorkerEventOf<K extends EventKind> = Omit<Event, 'kind' | 'payload'> & {
  readonly kind: K
  readonly payload: EventPayload<K>
}

/**
 * The Worker's reducer of one Event kind: advances the projection by one accepted Event. Live
 * delivery and replay from the local store run the same reducers, so the projection is a fold of
 * the Group log (§11.1: queues rebuildable by replay). A reducer derives every change from the
 * Event alone, never from the clock, and does not throw for a well-formed Event.
 */
export type WorkerReducerFor<K extends EventKind> = (view: WorkerView, event: WorkerEventOf<K>) => void
