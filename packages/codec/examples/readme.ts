// The README's example of @weft/codec, run by the release check (tools/release-check).
// It imports @weft/validators/signed as the README does: @weft/codec cannot depend on it (the arrow
// is codec <- validators), but every consumer that verifies documents installs both.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { GENERIC_WIRE_MESSAGES, ProtocolError, encodeBase64url, signingHash, subgroupCheckCount, utf8Encode, type RegistryEvidence } from '@weft/codec'

// Setup. The README's imports are hoisted, so `sign` and `keyPairFromSeed` are usable here.
// Two deterministic keys, registered for a human and an Agent of one Organization.
const seed = createHash('sha256').update('weft example: ada').digest()
const reviewer = keyPairFromSeed(createHash('sha256').update('weft example: reviewer').digest())
const evidence: RegistryEvidence = {
  organizationId: 'urn:weft:org:example',
  bindings: [
    {
      keyId: 'urn:weft:key:ada',
      principal: { type: 'human', id: 'urn:weft:human:ada' },
      algorithm: 'Ed25519',
      publicKey: encodeBase64url(keyPairFromSeed(seed).publicKey),
      validFrom: '2026-01-01T00:00:00Z',
      validityHistory: [],
    },
    {
      keyId: 'urn:weft:key:reviewer',
      principal: { type: 'agent', id: 'urn:weft:agent:reviewer' },
      algorithm: 'Ed25519',
      publicKey: encodeBase64url(reviewer.publicKey),
      validFrom: '2026-01-01T00:00:00Z',
      validityHistory: [{ sequence: 1, recordedAt: '2026-06-01T00:00:00Z', validUntil: '2027-01-01T00:00:00Z' }],
    },
  ],
}
const unsignedCommand = {
  protocolVersion: '0.1',
  actionId: 'urn:uuid:3c1d9e2f-7a4b-4c8d-9e0f-1a2b3c4d5e6f',
  actor: { type: 'human', id: 'urn:weft:human:ada' },
  groupId: 'urn:weft:group:docs',
  membershipEpoch: 1,
  kind: 'work.cancel',
  correlationId: 'urn:uuid:8f7e6d5c-4b3a-4291-8807-f6e5d4c3b2a1',
  issuedAt: '2026-07-15T09:30:00Z',
  payload: { workItemId: 'urn:uuid:2b0c7d1e-4f3a-4e8b-9c6d-1a2b3c4d5e6f', reason: 'Superseded by a newer WorkItem.' },
}
const frameBytes = utf8Encode(JSON.stringify(sign('command', unsignedCommand, { keyId: 'urn:weft:key:ada', pair: keyPairFromSeed(seed) })))
const bytes = frameBytes
// The same frame with one payload character changed after signing.
const tampered = utf8Encode(new TextDecoder().decode(frameBytes).replace('Superseded', 'Supplanted'))
const frames = [frameBytes, tampered, utf8Encode('{"a":1,"a":2}')]

// Record what the README block prints, so the checks below can hold it to its comments.
const printed: unknown[][] = []
const print = console.log
console.log = (...args: unknown[]) => {
  printed.push(args)
  print(...args)
}
const checksBefore = subgroupCheckCount()

import { Registry, sign, keyPairFromSeed, parseStrictJsonOrThrow } from '@weft/codec'
import { signedVerifier } from '@weft/validators/signed' // binds the schema check (arrows: codec <- validators)

const registry = Registry.fromEvidence(evidence) // validated once; every key's point checks run once
const result = signedVerifier.verify('command', frameBytes, registry)
if (result.ok) console.log(result.verified.signingHash, result.verified.key.principal)
else console.log(result.error.code, result.stage, result.reason) // wire: code + generic message; stage/reason: audit only

const pair = keyPairFromSeed(seed)
const signed = sign('command', unsignedCommand, { keyId: 'urn:weft:key:ada', pair })
const value = parseStrictJsonOrThrow(bytes) // PROTOCOL_VIOLATION on duplicates, BOM, bad UTF-8, trailing data
const checksAfter = subgroupCheckCount()

// The README's second block, from the list item on `verifyAsync` (hence its indentation).
  const results = await Promise.all(frames.map((bytes) => signedVerifier.verifyAsync('command', bytes, registry)))

console.log = print

// Valid evidence; one subgroup test per registered key, none for a verification that succeeds.
assert.equal(registry.valid, true)
assert.equal(registry.organizationId, 'urn:weft:org:example')
assert.equal(checksAfter - checksBefore, evidence.bindings.length)
const beforeAgain = subgroupCheckCount()
assert.ok(signedVerifier.verify('command', frameBytes, registry).ok)
assert.equal(subgroupCheckCount(), beforeAgain)

// The frame verified: its signing hash and Ada's Principal were printed.
assert.ok(result.ok)
assert.match(result.verified.signingHash, /^sha256:[0-9a-f]{64}$/)
assert.equal(result.verified.signingHash, signingHash(unsignedCommand))
assert.deepEqual(printed[0], [result.verified.signingHash, { type: 'human', id: 'urn:weft:human:ada' }])
assert.equal(printed.length, 1)

// The other branch: the wire sees only the code and its generic message; stage and reason stay here.
const rejected = signedVerifier.verify('command', tampered, registry)
assert.ok(!rejected.ok)
assert.equal(rejected.error.code, 'AUTH_INVALID_SIGNATURE')
assert.equal(rejected.stage, 'signature')
assert.equal(rejected.reason, 'signature-mismatch')
assert.equal(rejected.error.message, GENERIC_WIRE_MESSAGES.AUTH_INVALID_SIGNATURE)
const wire = JSON.stringify(rejected.error.toWire('2026-07-15T09:30:01Z'))
assert.ok(!wire.includes('signature-mismatch') && !wire.includes('"stage"'))
// A key that another Principal holds fails at stage 4, with the same wire answer.
const impostor = utf8Encode(JSON.stringify(sign('command', unsignedCommand, { keyId: 'urn:weft:key:reviewer', pair: reviewer })))
const stage4 = signedVerifier.verify('command', impostor, registry)
assert.ok(!stage4.ok && stage4.stage === 'key-resolution' && stage4.error.code === 'AUTH_INVALID_SIGNATURE')
assert.equal(stage4.error.message, rejected.error.message)

// Signing is deterministic: the same key and Command give the frame verified above.
assert.deepEqual(JSON.parse(new TextDecoder().decode(frameBytes)), signed)
assert.equal(signed.signature.keyId, 'urn:weft:key:ada')
assert.equal(signed.signature.createdAt, unsignedCommand.issuedAt)
assert.deepEqual(pair.publicKey, keyPairFromSeed(seed).publicKey)

// Strict parsing: the frame parses to the signed Command; each fault named in the comment throws.
assert.deepEqual(value, signed)
const violation = (e: unknown) => e instanceof ProtocolError && e.code === 'PROTOCOL_VIOLATION'
assert.throws(() => parseStrictJsonOrThrow('{"a":1,"\\u0061":2}'), violation) // duplicate after unescaping
assert.throws(() => parseStrictJsonOrThrow(Uint8Array.of(0xef, 0xbb, 0xbf, 0x7b, 0x7d)), violation) // BOM, then {}
assert.throws(() => parseStrictJsonOrThrow(Uint8Array.of(0x22, 0xc3, 0x28, 0x22)), violation) // invalid UTF-8 in a string
assert.throws(() => parseStrictJsonOrThrow('{} {}'), violation) // trailing data

// verifyAsync resolves to what verify returns, frame by frame.
const summary = (r: (typeof results)[number]) => (r.ok ? ['ok', r.verified.signingHash] : [r.stage, r.reason, r.error.code])
assert.deepEqual(results.map(summary), frames.map((f) => summary(signedVerifier.verify('command', f, registry))))
assert.deepEqual(results.map((r) => r.ok), [true, false, false])
assert.equal(results[2]!.ok ? undefined : results[2]!.error.code, 'PROTOCOL_VIOLATION')
