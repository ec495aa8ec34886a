// Registry.fromEvidence and resolve: valid evidence, every fault of invalid evidence, and the
// Registry fixtures of the cryptography bundle. Later revisions (withKeyBinding, withAgentCard,
// createLiveRegistry) are in registry-revisions.test.ts.
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { bundleForTests, readBundleJson } from '@weft/spec/bundle'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { binding, evidence, keyOf } from '../test/fixtures-registry.js'
import { keyPairFromSeed, subgroupCheckCount, verifyEd25519 } from './ed25519.js'
import { Registry, type RegistryBinding, type RegistryEvidence, type RegistryFault, type RegistryProblem, type ValidityStatusRecord } from './registry.js'

const b64 = (s: string) => Uint8Array.from(Buffer.from(s, 'base64url'))

/** The fault of a registry whose evidence is invalid, checked through resolve() of a valid key. */
function faultOf(registry: Registry, someKeyId = 'urn:example:key:1'): RegistryFault | 'valid' {
  if (registry.valid) return 'valid'
  const res = registry.resolve(someKeyId)
  expect(res.ok).toBe(false)
  expect(registry.organizationId).toBeUndefined()
  const fault = registry.problem!.fault
  expect(!res.ok && res.reason.startsWith(`${fault} at `)).toBe(true)
  return fault
}

describe('Registry: valid evidence', () => {
  it('resolves every binding with its Principal, key and effective interval', () => {
    const registry = Registry.fromEvidence(
      evidence(
        binding(1),
        binding(2, {
          validityHistory: [
            { sequence: 1, recordedAt: '2026-02-01T00:00:00Z', validUntil: '2027-01-01T00:00:00Z' },
            { sequence: 2, recordedAt: '2026-03-01T00:00:00Z', revokedAt: '2026-06-01T00:00:00Z' },
            { sequence: 5, recordedAt: '2026-04-01T00:00:00Z', validUntil: '2026-12-01T00:00:00+01:00' },
          ],
        }),
      ),
    )
    expect(registry.valid).toBe(true)
    expect(registry.organizationId).toBe('urn:example:org')
    const one = registry.resolve('urn:example:key:1')
    expect(one.ok && one.key.principal).toEqual({ type: 'agent', id: 'urn:example:agent:1' })
    expect(one.ok && 'validUntil' in one.key).toBe(false)
    const two = registry.resolve('urn:example:key:2')
    if (!two.ok) throw new Error(two.reason)
    expect(two.key.organizationId).toBe('urn:example:org')
    expect(two.key.validFrom.text).toBe('2026-01-01T00:00:00Z')
    expect(two.key.validUntil?.text).toBe('2026-12-01T00:00:00+01:00') // the earliest, moved earlier
    expect(two.key.revokedAt?.text).toBe('2026-06-01T00:00:00Z')
    expect(Buffer.from(two.key.publicKey.bytes).toString('base64url')).toBe(keyOf(2))
  })

  it('fails an unknown key ID, and matches key IDs exactly', () => {
    const registry = Registry.fromEvidence(evidence(binding(1)))
    expect(registry.resolve('urn:example:key:9')).toEqual({ ok: false, reason: 'unknown-key' })
    expect(registry.resolve('URN:example:key:1')).toEqual({ ok: false, reason: 'unknown-key' })
    expect(registry.resolve('urn:example:key:1\n')).toEqual({ ok: false, reason: 'unknown-key' })
  })

  it('treats an identical repeated declaration as the same binding and merges retained history', () => {
    const first = binding(1, { validityHistory: [{ sequence: 1, recordedAt: '2026-02-01T00:00:00Z', validUntil: '2026-09-01T00:00:00Z' }] })
    const later = binding(1, {
      validityHistory: [
        { sequence: 1, recordedAt: '2026-02-01T00:00:00Z', validUntil: '2026-09-01T00:00:00Z' },
        { sequence: 2, recordedAt: '2026-03-01T00:00:00Z', revokedAt: '2026-04-01T00:00:00Z' },
      ],
    })
    expect(Registry.fromEvidence(evidence(first, first)).valid).toBe(true)
    const merged = Registry.fromEvidence(evidence(first, later)).resolve('urn:example:key:1')
    expect(merged.ok && merged.key.revokedAt?.text).toBe('2026-04-01T00:00:00Z')
    // The same instant in another spelling is the same validFrom.
    expect(Registry.fromEvidence(evidence(first, { ...first, validFrom: '2026-01-01T01:00:00+01:00' })).valid).toBe(true)
  })

  it('validates each key point once, at construction, and never on resolve', () => {
    const before = subgroupCheckCount()
    const registry = Registry.fromEvidence(evidence(binding(1), binding(2), binding(1)))
    expect(subgroupCheckCount()).toBe(before + 2) // the repeated declaration reuses its check
    for (let i = 0; i < 100; i++) registry.resolve('urn:example:key:1')
    expect(subgroupCheckCount()).toBe(before + 2)
  })
})

describe('Registry: invalid evidence fails closed for every key', () => {
  const cases: [string, unknown, RegistryFault][] = [
    ['not an object', 'registry', 'evidence-malformed'],
    ['bindings missing', { organizationId: 'urn:example:org' }, 'evidence-malformed'],
    ['unknown top-level member', { ...evidence(binding(1)), revision: 3 }, 'evidence-malformed'],
    ['unknown binding member', evidence(binding(1), { ...binding(2), status: 'revoked' } as RegistryBinding), 'evidence-malformed'],
    ['unknown record member', evidence(binding(1, { validityHistory: [{ sequence: 1, recordedAt: '2026-02-01T00:00:00Z', note: 'x' } as ValidityStatusRecord] })), 'evidence-malformed'],
    ['relative organizationId', { ...evidence(binding(1)), organizationId: 'organizations/acme' }, 'organization-id-not-absolute-uri'],
    ['unrelated key ID with a trailing line feed', evidence(binding(1), binding(2, { keyId: 'urn:example:key:2\n' })), 'key-id-not-absolute-uri'],
    ['unrelated Principal ID with a bad escape', evidence(binding(1), binding(2, { principal: { type: 'human', id: 'urn:example:%GG' } })), 'principal-id-not-absolute-uri'],
    ['IRI-only Principal ID', evidence(binding(1, { principal: { type: 'service', id: 'https://例え.テスト/s' } })), 'principal-id-not-absolute-uri'],
    ['bad Principal type', evidence(binding(1, { principal: { type: 'robot', id: 'urn:example:agent:1' } as never })), 'principal-type-invalid'],
    ['unsupported algorithm', evidence(binding(1), binding(2, { algorithm: 'Ed448' })), 'algorithm-unsupported'],
    ['lowercase algorithm', evidence(binding(1, { algorithm: 'ed25519' })), 'algorithm-unsupported'],
    ['padded public key', evidence(binding(1, { publicKey: keyOf(1) + '=' })), 'public-key-not-canonical-base64url'],
    [
      'standard-alphabet public key',
      evidence(
        binding(1, {
          publicKey:
            Buffer.from(b64(keyOf(1)))
              .toString('base64')
              .replace(/=+$/, '') + '+',
        }),
      ),
      'public-key-not-canonical-base64url',
    ],
    ['identity public key', evidence(binding(1, { publicKey: 'AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })), 'public-key-identity'],
    ['validFrom leap second', evidence(binding(1, { validFrom: '2026-06-30T23:59:60Z' })), 'valid-from-invalid'],
    ['validFrom -00:00', evidence(binding(1, { validFrom: '2026-06-30T23:59:00-00:00' })), 'valid-from-invalid'],
    ['recordedAt year 0000', evidence(binding(1, { validityHistory: [{ sequence: 1, recordedAt: '0000-01-01T00:00:00Z' }] })), 'history-timestamp-invalid'],
    ['validUntil trailing space', evidence(binding(1, { validityHistory: [{ sequence: 1, recordedAt: '2026-02-01T00:00:00Z', validUntil: '2026-03-01T00:00:00Z ' }] })), 'history-timestamp-invalid'],
    ['sequence 0', evidence(binding(1, { validityHistory: [{ sequence: 0, recordedAt: '2026-02-01T00:00:00Z' }] })), 'history-sequence-invalid'],
    ['fractional sequence', evidence(binding(1, { validityHistory: [{ sequence: 1.5, recordedAt: '2026-02-01T00:00:00Z' }] })), 'history-sequence-invalid'],
    [
      'repeated sequence',
      evidence(
        binding(1, {
          validityHistory: [
            { sequence: 1, recordedAt: '2026-02-01T00:00:00Z' },
            { sequence: 1, recordedAt: '2026-02-01T00:00:00Z' },
          ],
        }),
      ),
      'history-sequence-not-increasing',
    ],
    [
      'validUntil moved later',
      evidence(
        binding(1, {
          validityHistory: [
            { sequence: 1, recordedAt: '2026-02-01T00:00:00Z', validUntil: '2026-05-01T00:00:00Z' },
            { sequence: 2, recordedAt: '2026-03-01T00:00:00Z', validUntil: '2026-05-01T00:00:00.000001Z' },
          ],
        }),
      ),
      'history-boundary-moved-later',
    ],
    [
      'revokedAt moved later (offset spelling hides it lexically)',
      evidence(
        binding(1, {
          validityHistory: [
            { sequence: 1, recordedAt: '2026-02-01T00:00:00Z', revokedAt: '2026-05-01T00:00:00Z' },
            { sequence: 2, recordedAt: '2026-03-01T00:00:00Z', revokedAt: '2026-05-01T00:00:00-01:00' },
          ],
        }),
      ),
      'history-boundary-moved-later',
    ],
    ['key ID under another Principal', evidence(binding(1), binding(1, { principal: { type: 'agent', id: 'urn:example:agent:other' } })), 'key-id-rebound'],
    ['key ID with another public key', evidence(binding(1), binding(1, { publicKey: keyOf(2) })), 'key-id-rebound'],
    ['repeated declaration with another validFrom', evidence(binding(1), binding(1, { validFrom: '2025-01-01T00:00:00Z' })), 'valid-from-changed'],
    [
      'repeated declaration with a conflicting record',
      evidence(
        binding(1, { validityHistory: [{ sequence: 1, recordedAt: '2026-02-01T00:00:00Z', validUntil: '2026-05-01T00:00:00Z' }] }),
        binding(1, { validityHistory: [{ sequence: 1, recordedAt: '2026-02-01T00:00:00Z', validUntil: '2026-04-01T00:00:00Z' }] }),
      ),
      'history-conflict',
    ],
    [
      'merged history moving a boundary later',
      evidence(
        binding(1, { validityHistory: [{ sequence: 1, recordedAt: '2026-02-01T00:00:00Z', validUntil: '2026-05-01T00:00:00Z' }] }),
        binding(1, { validityHistory: [{ sequence: 2, recordedAt: '2026-03-01T00:00:00Z', validUntil: '2026-06-01T00:00:00Z' }] }),
      ),
      'history-boundary-moved-later',
    ],
    ['key ID alias', evidence(binding(1), binding(1, { keyId: 'urn:example:key:alias' })), 'key-id-alias'],
    ['public key under another Principal', evidence(binding(1), binding(2, { publicKey: keyOf(1) })), 'public-key-reused'],
  ]

  it.each(cases)('%s', (_name, input, fault) => {
    const registry = Registry.fromEvidence(input)
    expect(faultOf(registry)).toBe(fault)
    // A valid, unrelated binding does not resolve either.
    expect(registry.resolve('urn:example:key:1').ok).toBe(false)
  })

  it('withKeyBinding refuses each case as fromEvidence does, with the same problem', () => {
    for (const [name, input, fault] of cases) {
      if (typeof input !== 'object' || input === null || !Array.isArray((input as RegistryEvidence).bindings)) continue
      const all = (input as RegistryEvidence).bindings
      let registry = Registry.fromEvidence({ ...input, bindings: [] })
      let refused: RegistryProblem | undefined
      for (const b of all) {
        const next = registry.withKeyBinding(b)
        if (!next.ok) {
          refused = next.problem
          break
        }
        registry = next.registry
      }
      expect(refused, name).toEqual(Registry.fromEvidence(input).problem)
      expect(refused?.fault, name).toBe(fault)
    }
  })

  it('never throws, whatever it is given', () => {
    fc.assert(
      fc.property(fc.anything(), (input) => {
        const registry = Registry.fromEvidence(input)
        const res = registry.resolve('urn:example:key:1')
        expect(res.ok).toBe(false)
      }),
      { numRuns: 300 },
    )
    const hostile = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('boom')
        },
      },
    )
    expect(faultOf(Registry.fromEvidence(hostile))).toBe('evidence-unreadable')
  })

  it('is a snapshot: later mutation of the evidence changes nothing', () => {
    const input = evidence(binding(1)) as unknown as { bindings: RegistryBinding[] }
    const registry = Registry.fromEvidence(input)
    ;(input.bindings[0] as { keyId: string }).keyId = 'urn:example:key:changed'
    expect(registry.resolve('urn:example:key:1').ok).toBe(true)
  })
})

const dir = bundleForTests()

/**
 * How each Registry fixture must classify. `valid` fixtures are sound evidence whose vectors fail
 * (if at all) on the document: expected signer, or the interval at the protected time.
 */
const FIXTURES: Record<string, RegistryFault | 'valid'> = {
  'registry-valid.json': 'valid',
  'registry-key-not-yet-valid.json': 'valid',
  'registry-revoked-at-equality.json': 'valid',
  'registry-valid-until-equality.json': 'valid',
  'registry-wrong-principal.json': 'valid',
  'registry-timestamp-casing-and-offset-bounds.json': 'valid',
  'registry-timestamp-fractional-precision.json': 'valid',
  'registry-key-alias.json': 'key-id-alias',
  'registry-organization-id-relative-reference.json': 'organization-id-not-absolute-uri',
  'registry-public-key-cross-principal-reuse.json': 'public-key-reused',
  'registry-public-key-rebinding.json': 'key-id-rebound',
  'registry-public-key-identity.json': 'public-key-identity',
  'registry-public-key-mixed-order.json': 'public-key-mixed-order',
  'registry-public-key-negative-zero.json': 'public-key-negative-zero',
  'registry-public-key-noncanonical.json': 'public-key-noncanonical',
  'registry-public-key-y-equals-p.json': 'public-key-noncanonical',
  'registry-public-key-small-order.json': 'public-key-small-order',
  'registry-public-key-off-curve.json': 'public-key-off-curve',
  'registry-public-key-wrong-length.json': 'public-key-wrong-length',
  'registry-public-key-padded.json': 'public-key-not-canonical-base64url',
  'registry-public-key-nonzero-unused-pad-bits.json': 'public-key-not-canonical-base64url',
  'registry-selected-service-principal-id-iri-only.json': 'principal-id-not-absolute-uri',
  'registry-unrelated-key-id-trailing-line-feed.json': 'key-id-not-absolute-uri',
  'registry-unrelated-principal-id-malformed-percent.json': 'principal-id-not-absolute-uri',
}

interface Evaluation {
  document: string
  registry: string
  signingKey?: string
  fault: { id: string } | null
  expect: { stage: string; verified?: { keyId: string; principal: { type: string; id: string }; signingBytes: string; signature: string } }
}

describe.skipIf(!dir)('Registry fixtures of the cryptography bundle', () => {
  const bundle = dir!
  const load = (file: string) => Registry.fromEvidence(readBundleJson(bundle, `cryptography/keys/${file}`))
  const evaluations = () => readBundleJson<{ cases: { evaluations: Evaluation[] }[] }>(bundle, 'cryptography/manifest.json').cases.flatMap((c) => c.evaluations.filter((e) => 'registry' in e))

  it('covers every Registry fixture of the bundle', () => {
    const files = readdirSync(join(bundle, 'cryptography/keys')).filter((f) => f.startsWith('registry-'))
    expect(files.sort()).toEqual(Object.keys(FIXTURES).sort())
  })

  it.each(Object.entries(FIXTURES))('%s: %s', (file, expected) => {
    const registry = load(file)
    expect(faultOf(registry, 'urn:missionweaveprotocol:key:crypto-vector-rfc8032-1')).toBe(expected)
    const raw = readBundleJson<RegistryEvidence>(bundle, `cryptography/keys/${file}`)
    for (const b of raw.bindings) {
      const res = registry.resolve(b.keyId)
      expect(res.ok, b.keyId).toBe(expected === 'valid')
      if (res.ok) {
        expect(res.key.principal).toEqual(b.principal)
        expect(Buffer.from(res.key.publicKey.bytes).toString('base64url')).toBe(b.publicKey)
        expect(res.key.organizationId).toBe(raw.organizationId)
      }
    }
  })

  it('agrees with the manifest: complete evaluations resolve their key; key-resolution faults of invalid evidence fail', () => {
    for (const e of evaluations()) {
      const file = e.registry.split('/').pop()!
      const expected = FIXTURES[file]
      if (e.expect.stage === 'complete') {
        expect(expected, file).toBe('valid')
        const v = e.expect.verified!
        const res = load(file).resolve(v.keyId)
        if (!res.ok) throw new Error(`${file}: ${res.reason}`)
        expect(res.key.principal).toEqual(v.principal)
        const message = readFileSync(join(bundle, v.signingBytes))
        expect(verifyEd25519(res.key.publicKey, message, b64(v.signature))).toBe(true)
      } else if (expected !== 'valid') {
        // Invalid evidence may only appear where the vector expects a stage-4 failure.
        expect(e.expect.stage, `${file} in ${e.document}`).toBe('key-resolution')
      }
    }
  })

  it('keeps the exact text and instants of the boundary fixtures', () => {
    const key = 'urn:missionweaveprotocol:key:crypto-vector-rfc8032-1'
    const get = (file: string) => {
      const res = load(file).resolve(key)
      if (!res.ok) throw new Error(res.reason)
      return res.key
    }
    const revoked = get('registry-revoked-at-equality.json')
    expect(revoked.revokedAt?.text).toBe('2026-07-15T08:00:00+08:00')
    expect(revoked.validUntil?.text).toBe('2026-07-16T00:00:00Z')
    expect(get('registry-valid-until-equality.json').validUntil?.text).toBe('2026-07-15T08:00:00+08:00')
    expect(get('registry-timestamp-fractional-precision.json').validUntil?.fraction).toBe('1234560000000000002')
    const casing = get('registry-timestamp-casing-and-offset-bounds.json')
    expect(casing.validFrom.text).toBe('2026-07-14T00:01:00-23:59')
    expect(casing.validUntil?.text).toBe('2026-07-15T23:59:01+23:59')
  })

  it('test signing keys match the keys the valid Registry binds', () => {
    const registry = load('registry-valid.json')
    for (const file of readdirSync(join(bundle, 'cryptography/keys')).filter((f) => f.startsWith('signing-'))) {
      const fixture = readBundleJson<{ keyId: string; seed: string; publicKey: string }>(bundle, `cryptography/keys/${file}`)
      const res = registry.resolve(fixture.keyId)
      if (!res.ok) throw new Error(`${file}: ${res.reason}`)
      expect(res.key.publicKey.bytes).toEqual(keyPairFromSeed(b64(fixture.seed)).publicKey)
    }
  })
})
