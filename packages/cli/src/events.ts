/**
 * Events with their catalogued payload types. An accepted Event's payload has the contract
 * payload type of its kind (`EventPayload` of `@weft/spec`, spec/src/payloads/events.ts); these
 * helpers tie the kind tested to the payload type read, so neither is spelled twice.
 * @module
 */
import type { Event, EventKind, EventPayload } from '@weft/spec'

/** An Event whose `kind` is `K` and whose `payload` has the contract payload type of `K`. */
export type EventOf<K extends EventKind> = Omit<Event, 'kind' | 'payload'> & {
  readonly kind: K
  readonly payload: EventPayload<K>
}

/** Whether `event` is of `kind`; its payload then reads as `EventPayload<K>`. */
export function isEventOf<K extends EventKind>(event: Event, kind: K): event is Event & EventOf<K> {
  return event.kind === kind
}

/** The payload of `event` when it is of `kind`, else `undefined`. */
export function payloadOf<K extends EventKind>(event: Event | undefined, kind: K): EventPayload<K> | undefined {
  return event?.kind === kind ? (event.payload as EventPayload<K>) : undefined
}

/** Any catalogued Event, discriminated by `kind`: a `switch (event.kind)` narrows its payload. */
export type CatalogEvent = { [K in EventKind]: EventOf<K> }[EventKind]

/**
 * `event` read as a {@link CatalogEvent}, for a `switch` over its kind. The Authority accepted it,
 * so its payload has its kind's type (§15.2); a kind outside the catalog matches no `case`.
 */
export function catalogued(event: Event): CatalogEvent {
  return event as unknown as CatalogEvent
}
