/**
 * @weft/store-sqlite: embedded durable stores for MissionWeaveProtocol 0.1 on SQLite
 * (better-sqlite3, WAL). {@link openSqliteAuthorityStore} keeps a Group Authority's Event log,
 * receipts, ACK Cursors and Artifact blobs in one file; {@link openSqliteWorkerStore} keeps a
 * Worker's local state. The laws of the log (contiguous Group sequences, immutable Events) are
 * constraints of the database, not only of this code.
 *
 * @example
 * ```ts
 * import { createAuthority } from '@weft/authority'
 * import { openSqliteAuthorityStore } from '@weft/store-sqlite'
 *
 * const store = openSqliteAuthorityStore('authority.db')
 * const authority = createAuthority({ registry, keys, store }) // state = fold(stored log)
 * ```
 * @packageDocumentation
 */
export { openSqliteAuthorityStore } from './authority-store.js'
export type { SqliteAuthorityStore, SqliteAuthorityStoreOptions } from './authority-store.js'
export { openSqliteWorkerStore } from './worker-store.js'
export type { SqliteOptions, Synchronous } from './database.js'

// Library-author surface: the blob table over a connection of your own.
export { createSqliteBlobStore, BLOB_SCHEMA } from './blobs.js'
