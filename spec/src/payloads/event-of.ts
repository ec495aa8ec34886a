/**
 * Events read with their catalogued payload types. An accepted Event's payload has the payload
 * type of its kind (§15.2, {@link EventPayload}); these helpers tie the kind a reader tests to the
 * payload type it reads, so no reader spells a kind and casts its payload separately.
 * @module
 */
import type { Event } from '../documents/index.js'
import type { EventKind } from '../catalog/index.js'
import type { EventPayload } from './events.js'

/** An Event whose `kind` is `K` and whose `payload` has the payload type of `K`. */
export type EventOf<K extends EventKind> = Omit<Event, 'kind' | 'payload'> & {
  readonly kind: K
  readonly payload: EventPayload<K>
}

/**
 * Whether `event` is of `kind`; its payload then reads as `EventPayload<K>`.
 * @example
 * ```ts
 * if (isEventOf(event, 'work.started')) event.payload.workItemId
 * ```
 */
export function isEventOf<K extends EventKind>(event: Event, kind: K): event is Event & EventOf<K> {
  return event.kind === kind
}

/**
 * The payload of `event` when it is of `kind`, else `undefined`.
 * @example
 * ```ts
 * payloadOf(event, 'work.offer.accepted')?.assigneeId
 * ```
 */
export function payloadOf<K extends EventKind>(event: Event | undefined, kind: K): EventPayload<K> | undefined {
  return event?.kind === kind ? (event.payload as EventPayload<K>) : undefined
}

/** Any catalogued Event, discriminated by `kind`: a `switch (event.kind)` narrows its payload. */
export type CatalogEvent = { [K in EventKind]: EventOf<K> }[EventKind]

/**
 * `event` read as a {@link CatalogEvent}, for a `switch` over its kind. Only for Events the
 * Authority accepted (their payloads were validated against their kind's schema, §15.2); a kind
 * outside the catalog matches no `case`.
 */
export function catalogued(event: Event): CatalogEvent {
  return event as unknown as CatalogEvent
}
