// The README's first two examples of @weft/authority, run by the release check (tools/release-check).
import assert from 'node:assert/strict'

// Keep what the README's lines print, so the checks below can hold them to their comments.
const printed: unknown[][] = []
const print = console.log.bind(console)
console.log = (...values: unknown[]) => {
  printed.push(values)
  print(...values)
}

import { encodeBase64url, keyPairFromSeed, ProtocolError, Registry, sign } from '@weft/codec'
import { createAuthority } from '@weft/authority'

const authorityKey = { keyId: 'urn:example:key:authority', pair: keyPairFromSeed(new Uint8Array(32).fill(8)) }
const ownerKey = { keyId: 'urn:example:key:owner', pair: keyPairFromSeed(new Uint8Array(32).fill(1)) }
const binding = (keyId: string, principal: { type: string; id: string }, publicKey: Uint8Array) =>
  ({ keyId, principal, algorithm: 'Ed25519', publicKey: encodeBase64url(publicKey), validFrom: '2026-01-01T00:00:00Z', validityHistory: [] })
const registry = Registry.fromEvidence({
  organizationId: 'urn:example:org',
  bindings: [
    binding(authorityKey.keyId, { type: 'service', id: 'urn:example:authority' }, authorityKey.pair.publicKey),
    binding(ownerKey.keyId, { type: 'human', id: 'urn:example:owner' }, ownerKey.pair.publicKey),
  ],
})

const authority = createAuthority({
  registry,
  keys: { authority: { type: 'service', id: 'urn:example:authority' }, signingKey: authorityKey },
})

// Any signed Command: built by hand here, usually by @weft/client over authority.connect().
const command = sign('command', {
  protocolVersion: '0.1',
  actionId: 'urn:example:action:1',
  actor: { type: 'human', id: 'urn:example:owner' },
  kind: 'mission.cancel',
  groupId: 'urn:example:group:1',
  membershipEpoch: 1,
  correlationId: 'urn:example:correlation:1',
  issuedAt: new Date().toISOString(),
  payload: { reason: 'Not needed any more.' },
}, ownerKey)

try {
  const receipt = await authority.submit(JSON.stringify(command))
  console.log(receipt.events.map((e) => `${e.sequence} ${e.kind}`))
} catch (error) {
  if (error instanceof ProtocolError) console.log(error.code) // GROUP_NOT_FOUND: no such Group yet
}
console.log(authority.audit()) // the refusal, with the check that refused it

// Continuing the first example: a simulator's Authority, its handlers' payloads checked in debug runs.
const simulated = createAuthority({
  registry,
  keys: { authority: { type: 'service', id: 'urn:example:authority' }, signingKey: authorityKey },
  deferEventSignatures: true,
  checkEventPayloads: process.env['DEBUG'] === '1',
})
try {
  simulated.submitTrusted(command) // the Command object; returns the receipt
} catch (error) {
  if (error instanceof ProtocolError) console.log(error.code) // GROUP_NOT_FOUND, as above
}

// Both Authorities refused the Command, for the reason the comments give, appended nothing, and
// kept the refusal with the check that refused it.
assert.deepEqual(printed, [['GROUP_NOT_FOUND'], [authority.audit()], ['GROUP_NOT_FOUND']])
const [refusal, ...others] = authority.audit()
assert.equal(others.length, 0)
assert.deepEqual([refusal?.code, refusal?.stage, refusal?.kind, refusal?.actionId], ['GROUP_NOT_FOUND', 'group', 'mission.cancel', 'urn:example:action:1'])
assert.deepEqual(simulated.audit().map((entry) => entry.code), ['GROUP_NOT_FOUND'])
assert.equal(authority.state.groups.size + simulated.state.groups.size, 0)
