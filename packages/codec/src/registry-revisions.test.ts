// The next revisions of a Registry: Registry.withKeyBinding, Registry.withAgentCard and
// createLiveRegistry. Reading evidence (Registry.fromEvidence, resolve) is in registry.test.ts.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { binding, evidence, keyOf } from '../test/fixtures-registry.js'
import { keyPairFromSeed, subgroupCheckCount } from './ed25519.js'
import { UsageError } from './errors.js'
import { createLiveRegistry, type KeyResolver, Registry, type RegistryBinding, type RegistryUpdate } from './registry.js'
import { createVerifier, sign } from './signed.js'

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
