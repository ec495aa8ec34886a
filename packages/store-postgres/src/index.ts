/**
 * @weft/store-postgres: a MissionWeaveProtocol 0.1 Group Authority whose Event log lives in
 * PostgreSQL, shared by several Authority processes. {@link createPostgresAuthority} runs each
 * Command under a database lock on the log as committed by every process, and hears the other
 * processes' commits as they happen; the laws of the log (contiguous Group sequences, one receipt
 * per transaction, immutable Events, Cursors that only move forward) are constraints of the
 * database, not only of this code. ACK Cursors, Artifact bytes and Group log compactions live in
 * the same schema.
 *
 * @example
 * ```ts
 * import { createPostgresAuthority } from '@weft/store-postgres'
 *
 * const authority = await createPostgresAuthority({ url: 'postgres://localhost/weft', registry, keys })
 * const receipt = await authority.submit(signedCommandText)
 * const delivery = createDelivery(authority, { cursorStore: authority.cursorStore })
 * ```
 * @packageDocumentation
 */
export { createPostgresAuthority } from './authority.js'
export type { PostgresAuthority, PostgresAuthorityOptions, PostgresLogEntry } from './authority.js'
export type { PostgresCursorStore } from './cursors.js'
export { readPostgresLog, provePostgresLog } from './log.js'
// The log as an AsyncAuthorityStore of @weft/authority: the asynchronous face of the store seam.
export { createPostgresAuthorityStore } from './store.js'
export type { PostgresAuthorityStore, PostgresAuthorityStoreOptions } from './store.js'
export type { PostgresLogSource, PostgresLogProofOptions } from './log.js'

// Library-author surface: the tables, for hosts that create schemas ahead of time.
export { ensureSchema, hasLog, logSchema, sharedSchema, schemaIdentifier } from './schema.js'
export type { Queryable } from './schema.js'
