import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { ProtocolError, sha256Tagged, UsageError } from '@weft/codec'
import { createMemoryBlobStore, resolveArtifact } from './blobs.js'

const text = (s: string): Uint8Array => new TextEncoder().encode(s)

/** A store over a backing map the test can reach, to play a faulty disk. */
function faultyStore() {
  const backing = new Map<string, Uint8Array>()
  return { store: createMemoryBlobStore({ backing }), backing }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.unreachable('expected a rejection'),
    (error: unknown) => error,
  )
}

describe('memory blob store (§13.1)', () => {
  it('addresses bytes by their sha256 content hash and returns them unchanged', async () => {
    const store = createMemoryBlobStore()
    const bytes = text('hello, weft')
    const hash = await store.put(bytes, 'text/plain')
    expect(hash).toBe(sha256Tagged(bytes))
    expect(await store.has(hash)).toBe(true)
    expect(await store.get(hash)).toEqual(bytes)
    expect(await store.put(text('hello, weft'))).toBe(hash)
  })

  it('keeps its own copy: changing the caller buffers changes nothing stored', async () => {
    const store = createMemoryBlobStore()
    const bytes = text('immutable')
    const hash = await store.put(bytes)
    bytes[0] = 0
    const read = await store.get(hash)
    read[1] = 0
    expect(await store.get(hash)).toEqual(text('immutable'))
  })

  it('re-hashes on every read, so bytes corrupted after a good read are caught on the next', async () => {
    const { store, backing } = faultyStore()
    const hash = await store.put(text('report v1'))
    expect(await store.get(hash)).toEqual(text('report v1'))
    backing.get(hash)![3]! ^= 0x01
    const error = await rejection(store.get(hash))
    expect(error).toBeInstanceOf(ProtocolError)
    expect((error as ProtocolError).code).toBe('PROTOCOL_VIOLATION')
    // Putting the true bytes again repairs the copy.
    expect(await store.put(text('report v1'))).toBe(hash)
    expect(await store.get(hash)).toEqual(text('report v1'))
  })

  it('rejects an unknown hash with INVALID_COMMAND and a malformed one as local misuse', async () => {
    const store = createMemoryBlobStore()
    const unknown = sha256Tagged(text('never stored'))
    expect(await store.has(unknown)).toBe(false)
    expect(((await rejection(store.get(unknown))) as ProtocolError).code).toBe('INVALID_COMMAND')
    expect(await rejection(store.get('md5:abc'))).toBeInstanceOf(UsageError)
  })

  it('property: get(put(b)) is b, and any single-byte corruption is detected', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 512 }), fc.nat(), fc.integer({ min: 1, max: 255 }), async (bytes, at, flip) => {
        const { store, backing } = faultyStore()
        const hash = await store.put(bytes)
        expect(await store.get(hash)).toEqual(bytes)
        const stored = backing.get(hash)!
        stored[at % stored.length]! ^= flip
        const error = await rejection(store.get(hash))
        expect((error as ProtocolError).code).toBe('PROTOCOL_VIOLATION')
      }),
    )
  })
})

describe('resolveArtifact (§13.1)', () => {
  it('fetches by content hash, never by URI, and checks the declared size', async () => {
    const store = createMemoryBlobStore()
    const bytes = text('{"ok":true}')
    const contentHash = await store.put(bytes, 'application/json')
    const manifest = { contentHash, sizeBytes: bytes.byteLength, uri: 'https://moved.invalid/elsewhere' }
    expect(await resolveArtifact(store, manifest)).toEqual(bytes)
  })

  it('rejects content whose size differs from the manifest', async () => {
    const store = createMemoryBlobStore()
    const bytes = text('twelve bytes')
    const contentHash = await store.put(bytes)
    const error = await rejection(resolveArtifact(store, { contentHash, sizeBytes: bytes.byteLength + 1 }))
    expect(error).toBeInstanceOf(ProtocolError)
    expect((error as ProtocolError).code).toBe('PROTOCOL_VIOLATION')
    expect((error as ProtocolError).details).toMatchObject({ actualBytes: bytes.byteLength })
  })

  it('rejects content the store holds under the hash but no longer matches it', async () => {
    const { store, backing } = faultyStore()
    const bytes = text('payload')
    const contentHash = await store.put(bytes)
    backing.set(contentHash, text('PAYLOAD'))
    expect(((await rejection(resolveArtifact(store, { contentHash, sizeBytes: bytes.byteLength }))) as ProtocolError).code).toBe('PROTOCOL_VIOLATION')
  })
})
