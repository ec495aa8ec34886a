/**
 * Artifact bytes in the Authority's SQLite file, addressed by their `sha256:` content hash
 * (§13.1): never in the Event log, which carries only the signed manifests.
 * @module
 */
import { checkedCopy, type BlobStore } from '@weft/authority'
import { isSha256, ProtocolError, sha256Tagged, UsageError } from '@weft/codec'
import type { Db } from './database.js'

/** The table {@link createSqliteBlobStore} keeps; part of the Authority store's schema. */
export const BLOB_SCHEMA = `
CREATE TABLE blobs (
  hash       TEXT PRIMARY KEY CHECK (hash GLOB 'sha256:*' AND length(hash) = 71),
  media_type TEXT,
  bytes      BLOB NOT NULL
) WITHOUT ROWID;
`

/**
 * A {@link BlobStore} over the `blobs` table of `db`. `put` hashes the bytes itself, so a row's key
 * is always the hash of what was put; `get` hashes them again on the way out, so a fault in the file
 * surfaces as `PROTOCOL_VIOLATION` instead of as different content.
 */
export function createSqliteBlobStore(db: Db): BlobStore {
  const read = db.prepare('SELECT bytes FROM blobs WHERE hash = ?').pluck()
  const exists = db.prepare('SELECT 1 FROM blobs WHERE hash = ?').pluck()
  const write = db.prepare('INSERT INTO blobs (hash, media_type, bytes) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET bytes = excluded.bytes, media_type = coalesce(excluded.media_type, media_type)')

  const stored = (hash: string): Uint8Array | undefined => {
    const buffer = read.get(hash) as Buffer | undefined
    return buffer === undefined ? undefined : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
  }

  return {
    async put(bytes, mediaType) {
      if (!(bytes instanceof Uint8Array)) throw new UsageError('blob store: put takes a Uint8Array')
      const hash = sha256Tagged(bytes)
      const existing = stored(hash)
      // Content addressing makes a re-put a no-op, and lets it repair a copy that no longer matches.
      if (existing === undefined || sha256Tagged(existing) !== hash) write.run(hash, mediaType ?? null, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
      return hash
    },
    async get(hash) {
      if (!isSha256(hash)) throw new UsageError(`blob store: ${JSON.stringify(hash)} is not a sha256: content hash`)
      const bytes = stored(hash)
      if (bytes === undefined) throw new ProtocolError('INVALID_COMMAND', `no content stored under ${hash}`)
      return checkedCopy(hash, bytes)
    },
    async has(hash) {
      return typeof hash === 'string' && exists.get(hash) !== undefined
    },
  }
}
