/**
 * The content-addressed blob store behind Artifacts (§13.1). Artifact bytes never enter the Group
 * Event log; the log carries only the signed manifest, whose `contentHash` is the bytes' identity.
 * A store is addressed by that hash alone, and every read re-hashes what it returns, so a storage
 * fault or tampering surfaces as an error instead of as silently different content.
 * @module
 */
import { isSha256, ProtocolError, sha256Tagged, UsageError } from '@weft/codec'
import type { Artifact } from '@weft/spec'

/**
 * Where Artifact bytes live, keyed by their `sha256:` content hash (§2, §13.1). Implementations
 * must check the hash of the bytes on every {@link BlobStore.get}, whatever their backing medium.
 */
export interface BlobStore {
  /**
   * Stores `bytes` and returns their content hash (`sha256:` + 64 hex digits). Storing the same
   * bytes again is a no-op that returns the same hash. `mediaType` is an advisory hint a store may
   * keep for serving the bytes; it is never part of their identity.
   */
  put(bytes: Uint8Array, mediaType?: string): Promise<string>
  /**
   * The bytes stored under `hash`, after checking they still hash to it.
   * @throws ProtocolError `PROTOCOL_VIOLATION` when the stored bytes no longer match `hash`;
   * `INVALID_COMMAND` when nothing is stored under it.
   */
  get(hash: string): Promise<Uint8Array>
  /** Whether bytes are stored under `hash` (without reading or checking them). */
  has(hash: string): Promise<boolean>
}

/** Options of {@link createMemoryBlobStore}. */
export interface MemoryBlobStoreOptions {
  /**
   * The map that holds the bytes, by content hash. Defaults to a private map. Passing one lets
   * several stores share storage, or a test reach the stored buffers to simulate a storage fault
   * (the store itself never trusts it: every read is re-hashed).
   */
  readonly backing?: Map<string, Uint8Array>
}

function requireHash(hash: string): void {
  if (!isSha256(hash)) throw new UsageError(`blob store: ${JSON.stringify(hash)} is not a sha256: content hash`)
}

/**
 * A {@link BlobStore} in process memory: the zero set-up default for tests, the simulator and
 * single-process demos. Bytes are copied in and out, so callers cannot alter stored content.
 * @example
 * ```ts
 * const blobs = createMemoryBlobStore()
 * const contentHash = await blobs.put(new TextEncoder().encode('hello'), 'text/plain')
 * const bytes = await blobs.get(contentHash) // re-hashed on the way out
 * ```
 */
export function createMemoryBlobStore(options: MemoryBlobStoreOptions = {}): BlobStore {
  const blobs = options.backing ?? new Map<string, Uint8Array>()
  return {
    async put(bytes) {
      const hash = sha256Tagged(bytes)
      const existing = blobs.get(hash)
      // Content addressing makes a re-put idempotent, and lets it repair a corrupted copy.
      if (existing === undefined || sha256Tagged(existing) !== hash) blobs.set(hash, bytes.slice())
      return hash
    },
    async get(hash) {
      requireHash(hash)
      const stored = blobs.get(hash)
      if (stored === undefined) throw new ProtocolError('INVALID_COMMAND', `no content stored under ${hash}`)
      return checkedCopy(hash, stored)
    },
    async has(hash) {
      return blobs.has(hash)
    },
  }
}

/**
 * A copy of `bytes` after checking they hash to `hash` (§13.1: the content hash is verified on
 * retrieval). Store implementations call it on every read.
 * @throws ProtocolError `PROTOCOL_VIOLATION` on a mismatch.
 */
export function checkedCopy(hash: string, bytes: Uint8Array): Uint8Array {
  const actual = sha256Tagged(bytes)
  if (actual !== hash) throw new ProtocolError('PROTOCOL_VIOLATION', 'stored content does not match its content hash', { details: { contentHash: hash } })
  return bytes.slice()
}

/**
 * Fetches the bytes of a published Artifact by its manifest: by `contentHash`, never by `uri`
 * (§13.1: a retrieval URI may change and is not identity), checking the hash (in the store) and
 * the declared `sizeBytes`.
 * @throws ProtocolError `PROTOCOL_VIOLATION` when the bytes do not match the manifest's hash or
 * size; `INVALID_COMMAND` when the store has no bytes under the hash.
 */
export async function resolveArtifact(store: BlobStore, manifest: Pick<Artifact, 'contentHash' | 'sizeBytes'>): Promise<Uint8Array> {
  const bytes = await store.get(manifest.contentHash)
  if (bytes.byteLength !== manifest.sizeBytes) {
    throw new ProtocolError('PROTOCOL_VIOLATION', 'artifact content size differs from its manifest', {
      details: { contentHash: manifest.contentHash, sizeBytes: manifest.sizeBytes, actualBytes: bytes.byteLength },
    })
  }
  return bytes
}
