// The README's WebCrypto signing example of @weft/codec, run by the release check
// (tools/release-check). Node 20 has WebCrypto Ed25519 too, so the page's path runs here as well,
// and the test below proves it signs exactly the bytes `sign` makes.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'

// Setup: a deterministic key and a Command to sign (the README's imports are hoisted).
const seed = new Uint8Array(createHash('sha256').update('weft example: ada').digest())
const { publicKey } = keyPairFromSeed(seed)
const expected = sign('command', unsignedCommandOf(), { keyId: 'urn:weft:key:ada', pair: keyPairFromSeed(seed) })
const unsignedCommand = unsignedCommandOf()

// --- The README block, verbatim ---
import { signAsync, webCryptoKeyPair } from '@weft/codec'

const pair = await webCryptoKeyPair(seed, publicKey) // needs a secure context (https or localhost)
seed.fill(0)
const signed = await signAsync('command', unsignedCommand, { keyId: 'urn:weft:key:ada', pair })
// --- end of the README block ---

import { keyPairFromSeed, sign } from '@weft/codec'

assert.deepEqual(signed, expected, 'signAsync through WebCrypto signs the same bytes as sign')
assert.ok(seed.every((b) => b === 0), 'the seed was wiped; the key lives on in WebCrypto only')
console.log('webCryptoKeyPair + signAsync: the signature equals the synchronous one')

function unsignedCommandOf() {
  return {
    protocolVersion: '0.1',
    actionId: 'urn:uuid:3c1d9e2f-7a4b-4c8d-9e0f-1a2b3c4d5e6f',
    actor: { type: 'human', id: 'urn:weft:human:ada' },
    groupId: 'urn:weft:group:docs',
    membershipEpoch: 1,
    kind: 'work.cancel',
    correlationId: 'urn:uuid:8f7e6d5c-4b3a-4291-8807-f6e5d4c3b2a1',
    issuedAt: '2026-07-01T12:00:00Z',
    payload: { workItemId: 'urn:weft:work:draft', reason: 'superseded' },
  } as const
}
