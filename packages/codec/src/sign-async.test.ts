import { describe, expect, it } from 'vitest'
import { decodeBase64url, encodeBase64url, importPublicKey, isVerifiedPublicKey, keyPairFromSeed, sign, signAsync, UsageError, verifyEd25519, webCryptoKeyPair } from './index.js'

const seed = new Uint8Array(32).map((_, i) => i + 1)
const doc = { kind: 'x', issuedAt: '2026-07-15T00:00:00Z' }

describe('signAsync and webCryptoKeyPair', () => {
  it('signs the same bytes as sign, through a non-extractable WebCrypto key', async () => {
    const pair = keyPairFromSeed(seed)
    const web = await webCryptoKeyPair(seed, pair.publicKey)
    expect(web.publicKey).toEqual(pair.publicKey)
    const viaSync = sign('command', doc, { keyId: 'k', pair })
    const viaWeb = await signAsync('command', doc, { keyId: 'k', pair: web })
    // Ed25519 is deterministic (RFC 8032): both paths produce the same signature.
    expect(viaWeb).toEqual(viaSync)
    const key = importPublicKey(pair.publicKey)
    if (!isVerifiedPublicKey(key)) throw new Error('key')
    expect(verifyEd25519(key, new TextEncoder().encode('{"issuedAt":"2026-07-15T00:00:00Z","kind":"x"}'), decodeBase64url(viaWeb.signature.value)!)).toBe(true)
  })

  it('accepts a synchronous key too', async () => {
    const pair = keyPairFromSeed(seed)
    expect(await signAsync('command', doc, { keyId: 'k', pair })).toEqual(sign('command', doc, { keyId: 'k', pair }))
  })

  it('refuses a seed that does not belong to the public key, and bad lengths', async () => {
    const other = keyPairFromSeed(new Uint8Array(32).fill(9)).publicKey
    await expect(webCryptoKeyPair(seed, other)).rejects.toThrow(/does not belong/)
    await expect(webCryptoKeyPair(seed.subarray(1), other)).rejects.toBeInstanceOf(UsageError)
    await expect(webCryptoKeyPair(seed, new Uint8Array(32))).rejects.toThrow(/§6.4/)
  })

  it('checks the document before signing, as sign does', () => {
    expect(() => signAsync('command', { kind: 'x', issuedAt: '2026-07-15T00:00:00+00:00' }, { keyId: 'k', pair: keyPairFromSeed(seed) })).toThrow(/uppercase Z/)
    expect(encodeBase64url(new Uint8Array([1]))).toBe('AQ')
  })
})
