/**
 * @weft/spec: MissionWeaveProtocol 0.1 as data, the single source of truth of Weft.
 *
 * - TypeBox schemas (and static types) of the 22 normative documents (§21);
 * - typed payload schemas of every Command and Event kind (the envelopes leave `payload` open);
 * - catalogs of Command kinds, Event kinds and error codes (§15, §19).
 * @packageDocumentation
 */
export * from './documents/index.js'
export * from './catalog/index.js'
export * from './payloads/index.js'

// Library-author surface: helpers for writing schemas in the normative shape.
export { SCHEMA_BASE, SCHEMA_DIALECT, anyValue, compareSchemas, constant, document, documentId, freeObject, oneOfValues, ref, toJsonSchema } from './schema.js'
export type { DocumentDefinition } from './schema.js'
