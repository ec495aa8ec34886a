/**
 * Artifact bytes by content hash (§13.1): stored outside the log, addressed by `sha256:`, checked
 * on every read, kept across a reopen.
 */
import { resolveArtifact } from '@weft/authority'
import { ProtocolError, sha256Tagged, UsageError, utf8Encode } from '@weft/codec'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { openSqliteAuthorityStore } from '../src/index.js'
import { tempFiles } from './files.js'

const files = tempFiles('blobs')
/** The test's main file. */
const file = (): string => files.path('authority.db')

const hello = utf8Encode('hello, artifact')

describe('the SQLite blob store', () => {
  it('puts, has and gets bytes by their sha256 hash, across a reopen', async () => {
    const store = openSqliteAuthorityStore(file())
    const hash = await store.blobStore.put(hello, 'text/plain')
    expect(hash).toBe(sha256Tagged(hello))
    expect(await store.blobStore.put(hello)).toBe(hash)
    store.close()

    const reopened = openSqliteAuthorityStore(file())
    expect(await reopened.blobStore.has(hash)).toBe(true)
    const bytes = await reopened.blobStore.get(hash)
    expect(bytes).toEqual(hello)
    expect(bytes.constructor).toBe(Uint8Array)
    expect(await resolveArtifact(reopened.blobStore, { contentHash: hash, sizeBytes: hello.byteLength })).toEqual(hello)
    reopened.close()
  })

  it('hands out copies: changing what get returned or what put took changes nothing stored', async () => {
    const store = openSqliteAuthorityStore(':memory:')
    const input = hello.slice()
    const hash = await store.blobStore.put(input)
    input[0] = 0
    const out = await store.blobStore.get(hash)
    out[1] = 0
    expect(await store.blobStore.get(hash)).toEqual(hello)
    store.close()
  })

  it('refuses a malformed hash (UsageError) and answers an unknown one INVALID_COMMAND', async () => {
    const store = openSqliteAuthorityStore(':memory:')
    await expect(store.blobStore.get('md5:abc')).rejects.toBeInstanceOf(UsageError)
    await expect(store.blobStore.get(`sha256:${'A'.repeat(64)}`)).rejects.toBeInstanceOf(UsageError)
    await expect(store.blobStore.get(`sha256:${'0'.repeat(64)}`)).rejects.toMatchObject({ code: 'INVALID_COMMAND' })
    expect(await store.blobStore.has(`sha256:${'0'.repeat(64)}`)).toBe(false)
    expect(await store.blobStore.has('not a hash')).toBe(false)
    store.close()
  })

  it('refuses a row whose key is not a content hash, even from raw SQL', () => {
    openSqliteAuthorityStore(file()).close()
    const db = new Database(file())
    expect(() => db.prepare('INSERT INTO blobs (hash, bytes) VALUES (?, ?)').run('md5:abc', Buffer.from('x'))).toThrow(/CHECK/)
    db.close()
  })

  it('answers bytes that no longer match their hash PROTOCOL_VIOLATION, and a re-put repairs them', async () => {
    const store = openSqliteAuthorityStore(file())
    const hash = await store.blobStore.put(hello)
    const db = new Database(file())
    db.prepare('UPDATE blobs SET bytes = ? WHERE hash = ?').run(Buffer.from('tampered'), hash)
    db.close()
    const error = await store.blobStore.get(hash).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ProtocolError)
    expect(error).toMatchObject({ code: 'PROTOCOL_VIOLATION' })
    await store.blobStore.put(hello)
    expect(await store.blobStore.get(hash)).toEqual(hello)
    store.close()
  })
})
