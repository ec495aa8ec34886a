/**
 * @weft/store-postgres: a MissionWeaveProtocol 0.1 Group Authority whose Event log lives in
 * PostgreSQL, shared by several Authority processes. {@link createPostgresAuthority} runs each
 * Command under a database lock on the log as committed by every process; the laws of the log
 * (contiguous Group sequences, one receipt per transaction, immutable Events) are constraints of
 * the database, not only of this code.
 *
 * @example
 * ```ts
 * import { createPostgresAuthority } from '@weft/store-postgres'
 *
 * const authority = await createPostgresAuthority({ url: 'postgres://localhost/weft', registry, keys })
 * const receipt = await authority.submit(signedCommandText)
 * ```
 * @packageDocumentation
 */
export { createPostgresAuthority } from './authority.js'
export type { PostgresAuthority, PostgresAuthorityOptions } from './authority.js'

// Library-author surface: the log tables, for hosts that create schemas ahead of time.
export { ensureSchema, logSchema, schemaIdentifier } from './schema.js'
