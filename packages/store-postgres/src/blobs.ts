/**
 * Artifact bytes in the shared database, addressed by their `sha256:` content hash (§13.1): never
 * in the Event log, which carries only the signed manifests. Every process of the Organization
 * reads what any of them stored.
 * @module
 */
import { checkedCopy, type BlobStore } from '@weft/authority'
import { isSha256, ProtocolError, sha256Tagged, UsageError } from '@weft/codec'
import type pg from 'pg'

/**
 * A {@link BlobStore} over the `blobs` table of schema `s` (a quoted identifier). `put` hashes the
 * bytes itself, so a row's key is always the hash of what was put; `get` hashes them again on the
 * way out, so a fault in the database surfaces as `PROTOCOL_VIOLATION` instead of as different
 * content. A database failure rejects with `INTERNAL_ERROR` (retryable).
 */
export function createPostgresBlobStore(pool: pg.Pool, s: string): BlobStore {
  const sql = {
    // Content addressing makes a re-put a no-op, and lets it repair a copy that no longer matches its key.
    put: `INSERT INTO ${s}.blobs AS b (hash, media_type, bytes) VALUES ($1, $2, $3)
      ON CONFLICT (hash) DO UPDATE SET bytes = EXCLUDED.bytes, media_type = coalesce(EXCLUDED.media_type, b.media_type)
      WHERE 'sha256:' || encode(sha256(b.bytes), 'hex') <> EXCLUDED.hash`,
    get: `SELECT bytes FROM ${s}.blobs WHERE hash = $1`,
    has: `SELECT 1 FROM ${s}.blobs WHERE hash = $1`,
  }
  const query = async <R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<R[]> => {
    try {
      return (await pool.query<R>(text, values)).rows
    } catch (cause) {
      throw new ProtocolError('INTERNAL_ERROR', 'the blob store could not be reached', { retryable: true, cause })
    }
  }
  return {
    async put(bytes, mediaType) {
      if (!(bytes instanceof Uint8Array)) throw new UsageError('blob store: put takes a Uint8Array')
      const hash = sha256Tagged(bytes)
      await query(sql.put, [hash, mediaType ?? null, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)])
      return hash
    },
    async get(hash) {
      if (!isSha256(hash)) throw new UsageError(`blob store: ${JSON.stringify(hash)} is not a sha256: content hash`)
      const [row] = await query<{ bytes: Buffer }>(sql.get, [hash])
      if (row === undefined) throw new ProtocolError('INVALID_COMMAND', `no content stored under ${hash}`)
      return checkedCopy(hash, new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength))
    },
    async has(hash) {
      if (typeof hash !== 'string' || !isSha256(hash)) return false
      return (await query(sql.has, [hash])).length > 0
    },
  }
}
