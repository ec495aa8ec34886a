// The README's example of a growing Registry (the list item on `Registry`), run by the release
// check (tools/release-check). It imports @weft/validators/signed as the README does: the stage-2
// schema check lives there (arrows: codec <- validators).
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { createLiveRegistry, encodeBase64url, keyPairFromSeed, Registry, sign, utf8Encode, type RegistryBinding, type RegistryEvidence } from '@weft/codec'
import { signedVerifier } from '@weft/validators/signed'

// Setup: an Organization whose Registry binds its Agent Card issuer (a service) and Ada (a human).
const keyOf = (name: string) => keyPairFromSeed(createHash('sha256').update(`weft example: ${name}`).digest())
const issuer = { keyId: 'urn:weft:key:registry-service', pair: keyOf('registry service') }
const ada = keyOf('ada')
const grace = keyOf('grace')
const lin = { keyId: 'urn:weft:key:lin', pair: keyOf('lin') }
const evidence: RegistryEvidence = {
  organizationId: 'urn:weft:org:example',
  bindings: [
    {
      keyId: issuer.keyId,
      principal: { type: 'service', id: 'urn:weft:service:registry' },
      algorithm: 'Ed25519',
      publicKey: encodeBase64url(issuer.pair.publicKey),
      validFrom: '2026-01-01T00:00:00Z',
      validityHistory: [],
    },
    {
      keyId: 'urn:weft:key:ada',
      principal: { type: 'human', id: 'urn:weft:human:ada' },
      algorithm: 'Ed25519',
      publicKey: encodeBase64url(ada.publicKey),
      validFrom: '2026-01-01T00:00:00Z',
      validityHistory: [],
    },
  ],
}
// A new Principal's key binding: Grace, a human who joins later.
const binding: RegistryBinding = {
  keyId: 'urn:weft:key:grace',
  principal: { type: 'human', id: 'urn:weft:human:grace' },
  algorithm: 'Ed25519',
  publicKey: encodeBase64url(grace.publicKey),
  validFrom: '2026-07-01T00:00:00Z',
  validityHistory: [],
}
// The first Agent Card of the Agent Lin (§6.1), issued and signed by the Organization's service.
const agentCard = sign(
  'agent-card',
  {
    agentId: 'urn:weft:agent:lin',
    organizationId: 'urn:weft:org:example',
    cardVersion: 1,
    displayName: 'Lin',
    owner: { type: 'human', id: 'urn:weft:human:ada' },
    status: 'active',
    protocolVersions: ['0.1'],
    endpoints: [{ transport: 'wss', uri: 'wss://agents.example.invalid/lin' }],
    publicKeys: [{ keyId: lin.keyId, algorithm: 'Ed25519', publicKey: encodeBase64url(lin.pair.publicKey), validFrom: '2026-07-01T00:00:00Z' }],
    capabilities: [
      {
        id: 'weft.example.review',
        version: '1.0.0',
        inputSchema: 'urn:weft:schema:review-input',
        inputSchemaHash: `sha256:${'a'.repeat(64)}`,
        outputSchema: 'urn:weft:schema:review-output',
        outputSchemaHash: `sha256:${'b'.repeat(64)}`,
        constraints: {},
        verifiedEvidence: ['urn:weft:evidence:lin-review'],
      },
    ],
    maxConcurrency: 2,
    issuedAt: '2026-07-01T00:00:00Z',
  },
  issuer,
)
// A Command Lin signs with the key its card declares.
const agentFrame = utf8Encode(
  JSON.stringify(
    sign(
      'command',
      {
        protocolVersion: '0.1',
        actionId: 'urn:uuid:5d2f1c3e-7a4b-4c8d-9e0f-1a2b3c4d5e6f',
        actor: { type: 'agent', id: 'urn:weft:agent:lin' },
        sessionEpoch: 1,
        membershipEpoch: 1,
        groupId: 'urn:weft:group:docs',
        kind: 'work.unblock',
        correlationId: 'urn:uuid:9e8d7c6b-5a4f-4321-8765-43210fedcba9',
        issuedAt: '2026-07-15T09:30:00Z',
        payload: { workItemId: 'urn:uuid:2b0c7d1e-4f3a-4e8b-9c6d-1a2b3c4d5e6f' },
      },
      lin,
    ),
  ),
)

// Record what the README block prints, so the checks below can hold it to its comments.
const printed: unknown[][] = []
const print = console.log
console.log = (...args: unknown[]) => {
  printed.push(args)
  print(...args)
}

  const live = createLiveRegistry(Registry.fromEvidence(evidence)) // a KeyResolver over the current revision
  const added = live.addKeyBinding(binding) // fromEvidence's rules; only the new key's point is checked
  if (!added.ok) console.log(added.problem.fault, added.problem.path) // e.g. public-key-reused $.bindings[2].publicKey; nothing changed
  const registered = live.addAgentCard(agentCard, { verifier: signedVerifier }) // verified (§6.4), cardVersion above the last
  const accepted = signedVerifier.verify('command', agentFrame, live) // the card's keys resolve from now on

console.log = print

// Both additions passed; nothing was printed, and the live Registry moved to the latest revision.
assert.ok(added.ok && registered.ok)
assert.equal(printed.length, 0)
assert.equal(live.current, registered.registry)
assert.equal(live.current.agentCard('urn:weft:agent:lin')?.cardVersion, 1)
assert.equal(live.resolve('urn:weft:key:grace').ok, true)

// The Agent's Command verifies through the live Registry, and would not have before its card.
assert.ok(accepted.ok)
assert.deepEqual(accepted.verified.key.principal, { type: 'agent', id: 'urn:weft:agent:lin' })
const before = signedVerifier.verify('command', agentFrame, Registry.fromEvidence(evidence))
assert.ok(!before.ok && before.stage === 'key-resolution')

// The refusal the comment names: Grace's binding with Ada's public key, as the third binding.
const other = createLiveRegistry(Registry.fromEvidence(evidence))
const first = other.current
const reused = other.addKeyBinding({ ...binding, publicKey: encodeBase64url(ada.publicKey) })
assert.ok(!reused.ok)
assert.deepEqual([reused.problem.fault, reused.problem.path], ['public-key-reused', '$.bindings[2].publicKey'])
assert.equal(other.current, first) // nothing changed
assert.deepEqual(reused.problem, Registry.fromEvidence({ ...evidence, bindings: [...evidence.bindings, { ...binding, publicKey: encodeBase64url(ada.publicKey) }] }).problem)

// A card version is registered once: the same card again is refused.
const again = live.addAgentCard(agentCard, { verifier: signedVerifier })
assert.ok(!again.ok && again.problem.fault === 'agent-card-version-not-above')
