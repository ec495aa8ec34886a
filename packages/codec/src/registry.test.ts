import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { bundleForTests, readBundleJson } from '@weft/spec/bundle'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { keyPairFromSeed, subgroupCheckCount, verifyEd25519 } from './ed25519.js'
import { UsageError } from './errors.js'
import {
  createLiveRegistry,
  Registry,
  type KeyResolver,
  type RegistryBinding,
  type RegistryEvidence,
  type RegistryFault,
  type RegistryProblem,
  type RegistryUpdate,
  type ValidityStatusRecord,
} from './registry.js'
import { createVerifier, sign } from './signed.js'

const b64 = (s: string) => Uint8Array.from(Buffer.from(s, 'base64url'))
const keyOf = (n: number) => Buffer.from(keyPairFromSeed(new Uint8Array(32).fill(n)).publicKey).toString('base64url')

function binding(n: number, overrides: Partial<RegistryBinding> = {}): RegistryBinding {
  return {
    keyId: `urn:example:key:${n}`,
    principal: { type: 'agent', id: `urn:example:agent:${n}` },
    algorithm: 'Ed25519',
    publicKey: keyOf(n),
    validFrom: '2026-01-01T00:00:00Z',
    validityHistory: [],
    ...overrides,
  }
}

function evidence(...bindings: RegistryBinding[]): RegistryEvidence {
  return { organizationId: 'urn:example:org', bindings }
}

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

describe('Registry.withKeyBinding: the next revision, checked like fromEvidence', () => {
  const verifier = createVerifier({ validate: () => true }) // the codec cannot see the schemas; signed.test.ts covers stage 2
  const T = '2026-07-15T00:00:00Z'
  const signedBy = (n: number) =>
    JSON.stringify(
      sign(
        'evidence',
        { evidenceId: 'urn:example:evidence:1', generatedBy: { type: 'agent', id: `urn:example:agent:${n}` }, createdAt: T },
        { keyId: `urn:example:key:${n}`, pair: keyPairFromSeed(new Uint8Array(32).fill(n)) },
      ),
    )

  it('binds a key a document then verifies with, leaving the earlier revision as it was', () => {
    const base = Registry.fromEvidence(evidence(binding(1)))
    const next = base.withKeyBinding(binding(2))
    if (!next.ok) throw new Error(next.problem.detail)
    expect(verifier.verify('evidence', signedBy(2), next.registry).ok).toBe(true)
    expect(verifier.verify('evidence', signedBy(1), next.registry).ok).toBe(true)
    const before = verifier.verify('evidence', signedBy(2), base)
    expect(!before.ok && [before.stage, before.detail]).toEqual(['key-resolution', 'unknown-key'])
  })

  it('checks only the added key: a repeated declaration costs no point check, a new key one', () => {
    const base = Registry.fromEvidence(evidence(binding(1)))
    const before = subgroupCheckCount()
    const again = base.withKeyBinding(binding(1, { validityHistory: [{ sequence: 1, recordedAt: '2026-02-01T00:00:00Z', revokedAt: '2026-03-01T00:00:00Z' }] }))
    expect(subgroupCheckCount()).toBe(before)
    expect(again.ok && again.registry.resolve('urn:example:key:1')).toMatchObject({ ok: true, key: { revokedAt: { text: '2026-03-01T00:00:00Z' } } })
    base.withKeyBinding(binding(2))
    expect(subgroupCheckCount()).toBe(before + 1)
  })

  it('adds nothing to invalid evidence: the addition is refused with the evidence problem', () => {
    const invalid = Registry.fromEvidence({ ...evidence(binding(1)), organizationId: 'relative' })
    expect(invalid.withKeyBinding(binding(2))).toEqual({ ok: false, problem: invalid.problem })
    expect(invalid.toEvidence()).toBeUndefined()
    expect(Registry.fromEvidence(evidence()).withKeyBinding('binding')).toMatchObject({ ok: false, problem: { fault: 'evidence-malformed', path: '$.bindings[0]' } })
  })

  // A small pool, so that generated sequences collide: rebinding, aliases, reuse, repeated
  // declarations with conflicting or later-moving histories, a non-prime-order key.
  const poolBinding = fc
    .record({
      key: fc.integer({ min: 1, max: 3 }),
      agent: fc.integer({ min: 1, max: 2 }),
      material: fc.constantFrom(1, 2, 3, 'identity'),
      validFrom: fc.constantFrom('2026-01-01T00:00:00Z', '2026-01-01T01:00:00+01:00', '2025-01-01T00:00:00Z'),
      history: fc.array(
        fc.record({
          sequence: fc.integer({ min: 1, max: 3 }),
          recordedAt: fc.constantFrom('2026-02-01T00:00:00Z', '2026-02-02T00:00:00Z'),
          validUntil: fc.option(fc.constantFrom('2026-05-01T00:00:00Z', '2026-06-01T00:00:00Z'), { nil: undefined }),
          revokedAt: fc.option(fc.constantFrom('2026-04-01T00:00:00Z', '2026-04-02T00:00:00Z'), { nil: undefined }),
        }),
        { maxLength: 2 },
      ),
    })
    .map(({ key, agent, material, validFrom, history }) =>
      binding(key, {
        principal: { type: 'agent', id: `urn:example:agent:${agent}` },
        publicKey: typeof material === 'number' ? keyOf(material) : 'AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        validFrom,
        validityHistory: [...new Map(history.map((r) => [r.sequence, r])).values()]
          .sort((a, b) => a.sequence - b.sequence)
          .map(({ validUntil, revokedAt, ...r }) => ({ ...r, ...(validUntil && { validUntil }), ...(revokedAt && { revokedAt }) })),
      }),
    )

  /** What a Registry answers for every key ID of the pool. */
  const answers = (registry: Registry) =>
    [1, 2, 3].map((n) => {
      const res = registry.resolve(`urn:example:key:${n}`)
      if (!res.ok) return res.reason
      const { principal, publicKey, validFrom, validUntil, revokedAt } = res.key
      return [principal.id, Buffer.from(publicKey.bytes).toString('base64url'), validFrom.seconds, validUntil?.text, revokedAt?.text]
    })

  it('property: adding bindings one by one answers exactly what rebuilding from all of them does', () => {
    fc.assert(
      fc.property(fc.array(poolBinding, { maxLength: 6 }), (bindings) => {
        let registry = Registry.fromEvidence(evidence())
        let accepted: RegistryBinding[] = []
        for (const b of bindings) {
          const rebuilt = Registry.fromEvidence(evidence(...accepted, b))
          const next = registry.withKeyBinding(b)
          expect(next.ok ? undefined : next.problem).toEqual(rebuilt.problem)
          if (!next.ok) continue
          accepted = [...accepted, b]
          registry = next.registry
          expect(answers(registry)).toEqual(answers(rebuilt))
        }
        // The evidence of the last revision rebuilds it.
        expect(answers(Registry.fromEvidence(registry.toEvidence()))).toEqual(answers(registry))
      }),
      { numRuns: 300 },
    )
  })
})

describe('Registry.withAgentCard: a new Agent Card version and its keys (§6.1, §6.4)', () => {
  const verifier = createVerifier({ validate: () => true })
  const ORG = 'urn:example:org'
  const AGENT = 'urn:example:agent:9'
  const pairOf = (n: number) => keyPairFromSeed(new Uint8Array(32).fill(n))
  const issuer = { keyId: 'urn:example:key:issuer', pair: pairOf(20) }
  const base = Registry.fromEvidence(
    evidence(binding(20, { keyId: issuer.keyId, principal: { type: 'service', id: 'urn:example:service:registry' } }), binding(21, { principal: { type: 'human', id: 'urn:example:human:owner' } })),
  )
  const cardKey = (n: number, extra: Record<string, string> = {}): Record<string, string> => ({
    keyId: `urn:example:key:${n}`,
    algorithm: 'Ed25519',
    publicKey: keyOf(n),
    validFrom: '2026-01-01T00:00:00Z',
    ...extra,
  })
  const card = (cardVersion: number, publicKeys: unknown[] = [cardKey(9)], patch: Record<string, unknown> = {}, by = issuer) =>
    sign('agent-card', { agentId: AGENT, organizationId: ORG, cardVersion, publicKeys, issuedAt: `2026-07-0${cardVersion}T00:00:00Z`, ...patch }, by)
  const byAgent = (n: number) =>
    JSON.stringify(
      sign('evidence', { evidenceId: 'urn:example:evidence:1', generatedBy: { type: 'agent', id: AGENT }, createdAt: '2026-07-15T00:00:00Z' }, { keyId: `urn:example:key:${n}`, pair: pairOf(n) }),
    )
  const added = (update: RegistryUpdate): Registry => {
    if (!update.ok) throw new Error(`${update.problem.fault} at ${update.problem.path}: ${update.problem.detail}`)
    return update.registry
  }
  const faultAt = (update: RegistryUpdate) => (update.ok ? 'accepted' : `${update.problem.fault} at ${update.problem.path}`)

  it('binds the card’s keys to its Agent, so documents the Agent signs verify; the card is kept', () => {
    for (const given of [card(1), JSON.stringify(card(1)), new TextEncoder().encode(JSON.stringify(card(1)))]) {
      const registry = added(base.withAgentCard(given, { verifier }))
      expect(verifier.verify('evidence', byAgent(9), registry).ok).toBe(true)
      expect(registry.agentCard(AGENT)).toMatchObject({ agentId: AGENT, cardVersion: 1 })
      expect(Object.isFrozen(registry.agentCard(AGENT)?.publicKeys[0])).toBe(true)
    }
    expect(verifier.verify('evidence', byAgent(9), base).ok).toBe(false)
    expect(base.agentCard(AGENT)).toBeUndefined()
  })

  it('registers only higher versions; a later version adds its new keys and keeps the earlier ones', () => {
    const one = added(base.withAgentCard(card(2), { verifier }))
    expect(faultAt(one.withAgentCard(card(2), { verifier }))).toBe('agent-card-version-not-above at $.cardVersion')
    expect(faultAt(one.withAgentCard(card(1), { verifier }))).toBe('agent-card-version-not-above at $.cardVersion')
    const three = added(one.withAgentCard(card(3, [cardKey(9), cardKey(10)]), { verifier }))
    expect([three.agentCard(AGENT)?.cardVersion, verifier.verify('evidence', byAgent(10), three).ok, verifier.verify('evidence', byAgent(9), three).ok]).toEqual([3, true, true])
  })

  it('refuses a card that fails §6.4, names another Organization, or whose issuer policy refuses', () => {
    const byHuman = { keyId: 'urn:example:key:21', pair: pairOf(21) }
    const unverified = base.withAgentCard(card(1, undefined, {}, byHuman), { verifier })
    expect(unverified).toMatchObject({ ok: false, problem: { fault: 'agent-card-unverified', path: '$', detail: 'key-resolution: agent-card-signer-not-service' } })
    expect(faultAt(base.withAgentCard({ ...card(1), cardVersion: 2 }, { verifier }))).toBe('agent-card-unverified at $')
    expect(faultAt(base.withAgentCard('{"a":1,"a":2}', { verifier }))).toBe('agent-card-unverified at $')
    expect(faultAt(base.withAgentCard(card(1, undefined, { organizationId: 'urn:example:other-org' }), { verifier }))).toBe('agent-card-organization-mismatch at $.organizationId')
    expect(faultAt(base.withAgentCard(card(1), { verifier, isIssuer: (p) => p.id === 'urn:example:service:other' }))).toBe('agent-card-issuer-unauthorized at $.signature.keyId')
    const throwing = () => {
      throw new Error('policy down')
    }
    expect(faultAt(base.withAgentCard(card(1), { verifier, isIssuer: throwing }))).toBe('agent-card-issuer-unauthorized at $.signature.keyId')
    expect(faultAt(base.withAgentCard(card(1), { verifier, isIssuer: (p) => p.id === 'urn:example:service:registry' }))).toBe('accepted')
    expect(faultAt(base.withAgentCard(card(1, undefined, { cardVersion: 0 }), { verifier }))).toBe('evidence-malformed at $.cardVersion')
    expect(faultAt(base.withAgentCard(card(1, undefined, { agentId: 'agents/9' }), { verifier }))).toBe('principal-id-not-absolute-uri at $.agentId')
    expect(() => base.withAgentCard(card(1), {} as never)).toThrow(UsageError)
  })

  it('checks each card key like an added binding, all or nothing', () => {
    const keys: [string, unknown[], string][] = [
      ['a key ID bound to the owner', [cardKey(9, { keyId: 'urn:example:key:21' })], 'key-id-rebound at $.publicKeys[0].principal'],
      ['the owner’s public key', [cardKey(9, { publicKey: keyOf(21) })], 'public-key-reused at $.publicKeys[0].publicKey'],
      ['a non-prime-order key', [cardKey(9), cardKey(10, { publicKey: 'AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })], 'public-key-identity at $.publicKeys[1].publicKey'],
      ['one key ID twice with two keys', [cardKey(9), cardKey(10, { keyId: 'urn:example:key:9' })], 'key-id-rebound at $.publicKeys[1].publicKey'],
      ['a key under two key IDs', [cardKey(9), cardKey(9, { keyId: 'urn:example:key:alias' })], 'key-id-alias at $.publicKeys[1].keyId'],
      ['an unknown member', [{ ...cardKey(9), status: 'active' }], 'evidence-malformed at $.publicKeys[0].status'],
      ['a malformed boundary', [cardKey(9, { revokedAt: '2026-07-01' })], 'history-timestamp-invalid at $.publicKeys[0].revokedAt'],
    ]
    for (const [name, publicKeys, expected] of keys) {
      const update = base.withAgentCard(card(1, publicKeys), { verifier })
      expect(faultAt(update), name).toBe(expected)
    }
    // The same faults fromEvidence gives for the same bindings declared as evidence.
    const asEvidence = (publicKeys: Record<string, string>[]) =>
      Registry.fromEvidence(evidence(...base.toEvidence()!.bindings, ...publicKeys.map((k) => ({ ...k, principal: { type: 'agent', id: AGENT }, validityHistory: [] }) as unknown as RegistryBinding)))
        .problem?.fault
    expect(asEvidence([cardKey(9, { keyId: 'urn:example:key:21' })])).toBe('key-id-rebound')
    expect(asEvidence([cardKey(9, { publicKey: keyOf(21) })])).toBe('public-key-reused')
    expect(asEvidence([cardKey(9), cardKey(9, { keyId: 'urn:example:key:alias' })])).toBe('key-id-alias')
    // Nothing of a refused card is bound.
    expect(base.resolve('urn:example:key:9')).toEqual({ ok: false, reason: 'unknown-key' })
  })

  it('records the boundaries a card states: earlier ones take effect, a later one is refused (§6.4)', () => {
    const one = added(base.withAgentCard(card(1, [cardKey(9, { validUntil: '2027-01-01T00:00:00Z' })]), { verifier }))
    const two = added(one.withAgentCard(card(2, [cardKey(9, { validUntil: '2027-01-01T00:00:00Z', revokedAt: '2026-07-10T00:00:00Z' })]), { verifier }))
    const key = (r: Registry) => {
      const res = r.resolve('urn:example:key:9')
      return res.ok ? [res.key.validUntil?.text, res.key.revokedAt?.text] : res.reason
    }
    expect([key(one), key(two)]).toEqual([
      ['2027-01-01T00:00:00Z', undefined],
      ['2027-01-01T00:00:00Z', '2026-07-10T00:00:00Z'],
    ])
    // One status record per change, recorded at the card's issuedAt; repeating a boundary adds none.
    expect(two.toEvidence()?.bindings.find((b) => b.keyId === 'urn:example:key:9')?.validityHistory).toEqual([
      { sequence: 1, recordedAt: '2026-07-01T00:00:00Z', validUntil: '2027-01-01T00:00:00Z' },
      { sequence: 2, recordedAt: '2026-07-02T00:00:00Z', revokedAt: '2026-07-10T00:00:00Z' },
    ])
    expect(faultAt(two.withAgentCard(card(3, [cardKey(9, { revokedAt: '2026-07-11T00:00:00Z' })]), { verifier }))).toMatch(/^history-boundary-moved-later at /)
    expect(faultAt(two.withAgentCard(card(3, [cardKey(9, { validFrom: '2026-02-01T00:00:00Z' })]), { verifier }))).toBe('valid-from-changed at $.publicKeys[0].validFrom')
    // A card that leaves a boundary out changes nothing: boundaries are never cleared.
    expect(key(added(two.withAgentCard(card(3), { verifier })))).toEqual(key(two))
    // The evidence of the revision rebuilds the same keys.
    expect(key(Registry.fromEvidence(two.toEvidence()))).toEqual(key(two))
  })
})

describe('createLiveRegistry: one KeyResolver over the current revision', () => {
  const verifier = createVerifier({ validate: () => true })
  const document = JSON.stringify(
    sign(
      'evidence',
      { evidenceId: 'urn:example:evidence:1', generatedBy: { type: 'agent', id: 'urn:example:agent:2' }, createdAt: '2026-07-15T00:00:00Z' },
      { keyId: 'urn:example:key:2', pair: keyPairFromSeed(new Uint8Array(32).fill(2)) },
    ),
  )

  it('sees a key as soon as it is added, and keeps the revision when an addition is refused', () => {
    const live = createLiveRegistry(Registry.fromEvidence(evidence(binding(1))))
    const resolver: KeyResolver = live
    expect(verifier.verify('evidence', document, resolver).ok).toBe(false)
    const first = live.current
    expect(live.addKeyBinding(binding(2, { publicKey: keyOf(1) }))).toMatchObject({ ok: false, problem: { fault: 'public-key-reused' } })
    expect(live.current).toBe(first)
    const update = live.addKeyBinding(binding(2))
    expect(update.ok && live.current).toBe(update.ok && update.registry)
    expect(verifier.verify('evidence', document, resolver).ok).toBe(true)
    expect(first.resolve('urn:example:key:2').ok).toBe(false) // the earlier revision is unchanged
  })

  it('adopts an Agent Card and refuses a non-Registry', () => {
    const issuer = { keyId: 'urn:example:key:5', pair: keyPairFromSeed(new Uint8Array(32).fill(5)) }
    const live = createLiveRegistry(Registry.fromEvidence(evidence(binding(5, { principal: { type: 'service', id: 'urn:example:service:registry' } }))))
    const card = sign(
      'agent-card',
      {
        agentId: 'urn:example:agent:2',
        organizationId: 'urn:example:org',
        cardVersion: 1,
        publicKeys: [{ keyId: 'urn:example:key:2', algorithm: 'Ed25519', publicKey: keyOf(2), validFrom: '2026-01-01T00:00:00Z' }],
        issuedAt: '2026-07-01T00:00:00Z',
      },
      issuer,
    )
    expect(live.addAgentCard(card, { verifier }).ok).toBe(true)
    expect(verifier.verify('evidence', document, live).ok).toBe(true)
    expect(live.current.agentCard('urn:example:agent:2')?.cardVersion).toBe(1)
    expect(() => createLiveRegistry({ resolve: () => ({ ok: false, reason: 'x' }) } as never)).toThrow(UsageError)
  })
})
