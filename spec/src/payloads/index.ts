/**
 * Typed payloads of every catalogued Command and Event kind (ARCHITECTURE, "Payload contract").
 * {@link CommandPayloads} and {@link EventPayloads} map each kind to its TypeBox schema;
 * {@link CommandPayload} and {@link EventPayload} give the static types.
 * @module
 */
export * from './commands.js'
export * from './events.js'
// Reading an Event's payload by its kind without a cast.
export * from './event-of.js'
// For library authors: the shared parts the payload schemas are built from.
export * from './parts.js'
// The §11.5 bounded offline execution binding, written by Workers and judged by Authorities.
export * from './offline-binding.js'
