import { ed25519 } from '@noble/curves/ed25519.js'
import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { encodeBase64url, sha256Tagged } from './bytes.js'
import { keyPairFromSeed, type Ed25519KeyPair } from './ed25519.js'
import { ProtocolError, UsageError } from './errors.js'
import { canonicalize } from './jcs.js'
import { Registry, type KeyResolver } from './registry.js'
import {
  DOCUMENT_KINDS,
  GENERIC_WIRE_MESSAGES,
  SIGNED_PROFILES,
  STAGES,
  createVerifier,
  expectedSignerOf,
  sign,
  signingHash,
  signingInput,
  verify,
  verifyAsync,
  verifyOrThrow,
  type DocumentKind,
  type SchemaCheck,
  type VerifyResult,
} from './signed.js'

// Unit tests run with a permissive injected schema check: the codec cannot see the normative
// schemas (they are @weft/validators'), and the real check is exercised by the conformance suite.
const anySchema: SchemaCheck = () => true
const options = { validate: anySchema }

const ORG = 'urn:weft:test:organization:acme'
const T0 = '2026-07-15T00:00:00Z'

function pair(n: number): Ed25519KeyPair {
  return keyPairFromSeed(new Uint8Array(32).fill(n))
}

const principals = {
  coordinator: { type: 'agent', id: 'urn:weft:test:agent:coordinator' },
  developer: { type: 'agent', id: 'urn:weft:test:agent:developer' },
  owner: { type: 'human', id: 'urn:weft:test:human:owner' },
  authority: { type: 'service', id: 'urn:weft:test:service:group-authority' },
  registryService: { type: 'service', id: 'urn:weft:test:service:registry' },
} as const

type Name = keyof typeof principals

const keys = Object.fromEntries((Object.keys(principals) as Name[]).map((name, i) => [name, { keyId: `urn:weft:test:key:${name}`, pair: pair(i + 1) }])) as Record<
  Name,
  { keyId: string; pair: Ed25519KeyPair }
>

function binding(name: Name, extra: { validFrom?: string; validityHistory?: unknown[] } = {}) {
  return {
    keyId: keys[name].keyId,
    principal: principals[name],
    algorithm: 'Ed25519',
    publicKey: encodeBase64url(keys[name].pair.publicKey),
    validFrom: extra.validFrom ?? '2026-07-01T00:00:00Z',
    validityHistory: extra.validityHistory ?? [],
  }
}

const registry = Registry.fromEvidence({ organizationId: ORG, bindings: (Object.keys(principals) as Name[]).map((n) => binding(n)) })

/** A minimal document of each kind: its protected time and its expected-signer field. */
const documents: Record<DocumentKind, { doc: Record<string, unknown>; signer: Name }> = {
  'agent-card': { doc: { agentId: principals.developer.id, organizationId: ORG, issuedAt: T0 }, signer: 'registryService' },
  approval: { doc: { approvalId: 'urn:weft:test:approval:1', approver: principals.owner, decision: 'approved', occurredAt: T0 }, signer: 'owner' },
  artifact: { doc: { artifactId: 'urn:weft:test:artifact:1', producer: { agentId: principals.developer.id, agentCardVersion: 1 }, createdAt: T0 }, signer: 'developer' },
  command: {
    doc: { actionId: 'urn:uuid:1', actor: principals.coordinator, kind: 'mission.submit', issuedAt: T0, payload: { signature: 'nested', n: [1, 2.5, -3] } },
    signer: 'coordinator',
  },
  'context-package': { doc: { contextPackageId: 'urn:weft:test:ctx:1', generatedBy: principals.coordinator, generatedAt: T0 }, signer: 'coordinator' },
  event: { doc: { eventId: 'urn:uuid:2', acceptedBy: principals.authority, occurredAt: T0, payload: {} }, signer: 'authority' },
  evidence: { doc: { evidenceId: 'urn:weft:test:evidence:1', generatedBy: principals.developer, createdAt: T0 }, signer: 'developer' },
  'extension-profile': { doc: { profileId: 'urn:weft:test:ext:1', approvedBy: principals.owner, approvedAt: T0 }, signer: 'owner' },
  'group-snapshot': { doc: { snapshotId: 'urn:weft:test:snap:1', createdBy: principals.authority, createdAt: T0 }, signer: 'authority' },
}

function signed(kind: DocumentKind, patch: Record<string, unknown> = {}, signer?: Name): Record<string, unknown> {
  const { doc, signer: own } = documents[kind]
  return sign(kind, { ...doc, ...patch }, keys[signer ?? own]) as Record<string, unknown>
}

/** The encoding of the smallest y with no curve point (found with @noble/curves, not hard-coded). */
function offCurveEncoding(): Buffer {
  for (let y = 2; ; y++) {
    const enc = Buffer.alloc(32)
    enc[0] = y
    try {
      ed25519.Point.fromHex(enc.toString('hex'))
    } catch {
      return enc
    }
  }
}

const bytesOf = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value))

function expectFailure(result: VerifyResult, stage: string, reason?: string): void {
  if (result.ok) throw new Error(`expected a ${stage} failure, got complete`)
  expect(result.stage).toBe(stage)
  if (reason !== undefined) expect(result.reason).toBe(reason)
  const code = result.error.code
  expect(code).toBe(stage === 'parse' || stage === 'canonicalization' ? 'PROTOCOL_VIOLATION' : stage === 'schema' ? 'SCHEMA_VALIDATION_FAILED' : 'AUTH_INVALID_SIGNATURE')
  // One generic message per code; the reason never reaches the wire.
  expect(result.error.message).toBe(GENERIC_WIRE_MESSAGES[code as keyof typeof GENERIC_WIRE_MESSAGES])
  const wire = JSON.stringify(result.error.toWire(T0))
  expect(wire).not.toContain(result.reason)
  expect(result.error.cause).toMatchObject({ stage, reason: result.reason })
}

describe('profiles (§6.4 table)', () => {
  it('has the nine kinds with their protected time and signer rule', () => {
    expect(Object.keys(SIGNED_PROFILES)).toEqual([...DOCUMENT_KINDS])
    const table = Object.fromEntries(
      Object.values(SIGNED_PROFILES).map((p) => [
        p.kind,
        [p.protectedTimePointer, p.expectedSigner.rule, 'pointer' in p.expectedSigner ? p.expectedSigner.pointer : 'idPointer' in p.expectedSigner ? p.expectedSigner.idPointer : ''],
      ]),
    )
    expect(table).toEqual({
      'agent-card': ['/issuedAt', 'service-principal', ''],
      approval: ['/occurredAt', 'principal-object', '/approver'],
      artifact: ['/createdAt', 'agent-id', '/producer/agentId'],
      command: ['/issuedAt', 'principal-object', '/actor'],
      'context-package': ['/generatedAt', 'principal-object', '/generatedBy'],
      event: ['/occurredAt', 'principal-object', '/acceptedBy'],
      evidence: ['/createdAt', 'principal-object', '/generatedBy'],
      'extension-profile': ['/approvedAt', 'principal-object', '/approvedBy'],
      'group-snapshot': ['/createdAt', 'principal-object', '/createdBy'],
    })
    expect(STAGES).toEqual(['parse', 'schema', 'signature-envelope', 'key-resolution', 'canonicalization', 'signature'])
  })

  it('derives the expected signer from the document', () => {
    expect(expectedSignerOf('artifact', documents.artifact.doc)).toEqual({ exact: { type: 'agent', id: principals.developer.id } })
    expect(expectedSignerOf('agent-card', documents['agent-card'].doc)).toEqual({ anyService: true })
    expect(expectedSignerOf('command', { actor: { type: 'robot', id: 'x' } })).toBeUndefined()
  })
})

describe('sign and verify round trip', () => {
  it.each(DOCUMENT_KINDS)('%s', (kind) => {
    const document = signed(kind)
    const sig = document['signature'] as { algorithm: string; keyId: string; createdAt: string; value: string }
    expect(sig.algorithm).toBe('Ed25519')
    expect(sig.createdAt).toBe(T0)
    expect(Object.keys(document).at(-1)).toBe('signature')
    const result = verify(kind, bytesOf(document), registry, options)
    if (!result.ok) throw new Error(`${result.stage}/${result.reason} ${result.detail ?? ''}`)
    const v = result.verified
    expect(v.kind).toBe(kind)
    expect(v.key.keyId).toBe(keys[documents[kind].signer].keyId)
    expect(v.key.principal).toEqual(principals[documents[kind].signer])
    expect(v.key.organizationId).toBe(ORG)
    expect(v.protectedTime.text).toBe(T0)
    expect(v.signatureValue).toBe(sig.value)
    const { signature: _s, ...unsigned } = document
    const jcs = canonicalize(unsigned)
    expect(jcs.ok && Buffer.from(v.signingBytes).equals(Buffer.from(jcs.bytes))).toBe(true)
    expect(v.signingHash).toBe(sha256Tagged(v.signingBytes))
    expect(signingHash(document)).toBe(v.signingHash)
    // Text input verifies the same way as bytes.
    expect(verify(kind, JSON.stringify(document), registry, options).ok).toBe(true)
  })

  it('replaces an existing signature and keeps nested signature members covered', () => {
    const once = signed('command')
    const twice = sign('command', once, keys.coordinator)
    expect(twice.signature).toEqual(once['signature'])
    const input = signingInput(once)
    expect(input.ok && new TextDecoder().decode(input.bytes)).toContain('"signature":"nested"')
    expect(input.ok && new TextDecoder().decode(input.bytes)).not.toContain('"algorithm"')
  })

  it('accepts a lowercase t with an uppercase Z and compares fractional seconds exactly', () => {
    const t = '2026-07-15t00:00:00.0000001Z'
    expect(verify('command', bytesOf(signed('command', { issuedAt: t })), registry, options).ok).toBe(true)
  })

  it('refuses to sign what could never verify', () => {
    expect(() => sign('command', { ...documents.command.doc, issuedAt: '2026-07-15T00:00:00+00:00' }, keys.coordinator)).toThrow(UsageError)
    expect(() => sign('command', { actor: principals.coordinator }, keys.coordinator)).toThrow(UsageError)
    expect(() => sign('nonsense' as DocumentKind, {}, keys.coordinator)).toThrow(UsageError)
    expect(() => sign('command', { ...documents.command.doc, x: Number.NaN }, keys.coordinator)).toThrow(ProtocolError)
  })

  it('binds the schema check once with createVerifier, and verifyOrThrow throws the wire error', () => {
    const verifier = createVerifier({ validate: anySchema })
    expect(verifier.verify('event', bytesOf(signed('event')), registry).ok).toBe(true)
    expect(() => verifier.verifyOrThrow('event', '{', registry)).toThrow(ProtocolError)
    expect(verifyOrThrow('event', bytesOf(signed('event')), registry, options).kind).toBe('event')
    expect(() => createVerifier({} as never)).toThrow(UsageError)
    expect(() => verify('nonsense' as DocumentKind, '{}', registry, options)).toThrow(UsageError)
  })
})

describe('each stage classifies its failures', () => {
  const command = signed('command')
  const text = JSON.stringify(command)

  it('1 parse: invalid UTF-8, BOM, trailing data, duplicate member', () => {
    const bytes = bytesOf(command)
    const invalid = Uint8Array.from([...bytes.subarray(0, 10), 0xff, ...bytes.subarray(10)])
    expectFailure(verify('command', invalid, registry, options), 'parse', 'json-invalid-utf8')
    expectFailure(verify('command', Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes]), registry, options), 'parse', 'json-byte-order-mark')
    expectFailure(verify('command', `${text} {}`, registry, options), 'parse', 'json-trailing-data')
    expectFailure(verify('command', text.replace('{', '{"kind":"x",'), registry, options), 'parse', 'json-duplicate-member')
    expectFailure(verify('command', text.replace('{', '{"k\\u0069nd":"x",'), registry, options), 'parse', 'json-duplicate-member')
  })

  it('2 schema: the injected check, then the envelope this module relies on', () => {
    const validate = vi.fn<SchemaCheck>(() => false)
    expectFailure(verify('command', text, registry, { validate }), 'schema', 'schema-invalid')
    expect(validate).toHaveBeenCalledWith('command', command)
    expectFailure(
      verify('command', text, registry, {
        validate: () => {
          throw new Error('boom')
        },
      }),
      'schema',
      'schema-check-threw',
    )
    const envelope = command['signature'] as Record<string, unknown>
    expectFailure(verify('command', JSON.stringify({ ...command, signature: { ...envelope, algorithm: 'Ed448' } }), registry, options), 'schema', 'unsupported-algorithm')
    const { signature: _s, ...unsigned } = command
    expectFailure(verify('command', JSON.stringify(unsigned), registry, options), 'schema', 'signature-envelope-missing')
    expectFailure(verify('command', JSON.stringify({ ...command, issuedAt: '2026-07-15T00:00:60Z' }), registry, options), 'schema', 'protected-time-outside-timestamp-profile')
    expectFailure(verify('command', JSON.stringify({ ...command, issuedAt: '0000-07-15T00:00:00Z' }), registry, options), 'schema', 'protected-time-outside-timestamp-profile')
    expectFailure(verify('command', JSON.stringify({ ...command, actor: 'nobody' }), registry, options), 'schema', 'expected-signer-field-malformed')
    expectFailure(verify('command', '[]', registry, options), 'schema', 'not-an-object')
  })

  it('3 signature envelope: UTC Z, byte equality, canonical base64url, length, strict R and S', () => {
    const envelope = command['signature'] as Record<string, string>
    const withSig = (patch: Record<string, string>, doc: Record<string, unknown> = command) => JSON.stringify({ ...doc, signature: { ...envelope, ...patch } })
    expectFailure(verify('command', withSig({ createdAt: '2026-07-15T00:00:00.0Z' }), registry, options), 'signature-envelope', 'created-at-mismatch')
    expectFailure(verify('command', withSig({ createdAt: '2026-07-15t00:00:00Z' }), registry, options), 'signature-envelope', 'created-at-mismatch')
    const offset = '2026-07-15T00:00:00+00:00'
    expectFailure(verify('command', withSig({ createdAt: offset }, { ...command, issuedAt: offset }), registry, options), 'signature-envelope', 'protected-time-not-utc-z')
    const lowerZ = '2026-07-15T00:00:00z'
    expectFailure(verify('command', withSig({ createdAt: lowerZ }, { ...command, issuedAt: lowerZ }), registry, options), 'signature-envelope', 'protected-time-not-utc-z')
    const value = envelope['value']!
    expectFailure(verify('command', withSig({ value: `${value}=` }), registry, options), 'signature-envelope', 'signature-not-canonical-base64url')
    // 86 characters carry 64 bytes and 4 unused bits: make them nonzero.
    const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(value.at(-1)!)
    const padBits = value.slice(0, -1) + 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[last | 1]
    expectFailure(verify('command', withSig({ value: padBits }), registry, options), 'signature-envelope', 'signature-not-canonical-base64url')
    expectFailure(verify('command', withSig({ value: encodeBase64url(new Uint8Array(63)) }), registry, options), 'signature-envelope', 'signature-wrong-length')
    // S = L (not reduced) and an off-curve R.
    const sig = Buffer.from(value, 'base64url')
    const L = Buffer.from('edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010', 'hex')
    const sEqualsL = Buffer.concat([sig.subarray(0, 32), L])
    expectFailure(verify('command', withSig({ value: encodeBase64url(sEqualsL) }), registry, options), 'signature-envelope', 'signature-encoding-invalid')
    const offCurve = Buffer.concat([offCurveEncoding(), sig.subarray(32)])
    expectFailure(verify('command', withSig({ value: encodeBase64url(offCurve) }), registry, options), 'signature-envelope', 'signature-encoding-invalid')
  })

  it('4 key resolution: unknown key, other Principal, not a service, interval at the protected time', () => {
    expectFailure(verify('command', JSON.stringify(signed('command', {}, 'owner')), registry, options), 'key-resolution', 'key-bound-to-other-principal')
    const unknown = sign('command', documents.command.doc, { keyId: 'urn:weft:test:key:nobody', pair: pair(99) })
    expectFailure(verify('command', JSON.stringify(unknown), registry, options), 'key-resolution', 'key-unresolved')
    expectFailure(verify('agent-card', JSON.stringify(signed('agent-card', {}, 'developer')), registry, options), 'key-resolution', 'agent-card-signer-not-service')
    const bounded = Registry.fromEvidence({
      organizationId: ORG,
      bindings: [
        binding('coordinator', {
          validFrom: '2026-07-15T00:00:00.5Z',
          validityHistory: [
            { sequence: 1, recordedAt: '2026-07-20T00:00:00Z', validUntil: '2026-07-16T00:00:00Z' },
            { sequence: 2, recordedAt: '2026-07-21T00:00:00Z', revokedAt: '2026-07-15T12:00:00+02:00' },
          ],
        }),
      ],
    })
    const at = (t: string) => verify('command', JSON.stringify(signed('command', { issuedAt: t })), bounded, options)
    expectFailure(at('2026-07-15T00:00:00.4999Z'), 'key-resolution', 'key-not-valid-at-protected-time')
    expect(at('2026-07-15T00:00:00.5Z').ok).toBe(true)
    expect(at('2026-07-15T09:59:59.999999999Z').ok).toBe(true)
    // revokedAt 12:00+02:00 is 10:00Z: equality is already outside (half-open interval).
    expectFailure(at('2026-07-15T10:00:00Z'), 'key-resolution', 'key-not-valid-at-protected-time')
    const invalidEvidence = Registry.fromEvidence({ organizationId: 'relative', bindings: [binding('coordinator')] })
    expectFailure(verify('command', text, invalidEvidence, options), 'key-resolution', 'key-unresolved')
    const throwing: KeyResolver = {
      resolve: () => {
        throw new Error('down')
      },
    }
    expectFailure(verify('command', text, throwing, options), 'key-resolution', 'resolver-threw')
  })

  it('5 canonicalization: numbers outside binary64 and lone surrogates', () => {
    const big = text.replace('"n":[1,2.5,-3]', '"n":[1e400,2.5,-3]')
    expect(big).not.toBe(text)
    expectFailure(verify('command', big, registry, options), 'canonicalization', 'jcs-non-finite-number')
    const lone = text.replace('"nested"', '"\\ud800"')
    expectFailure(verify('command', lone, registry, options), 'canonicalization', 'jcs-lone-surrogate')
  })

  it('6 signature: tampered content, including a nested signature member', () => {
    expectFailure(verify('command', text.replace('"mission.submit"', '"mission.cancel"'), registry, options), 'signature', 'signature-mismatch')
    expectFailure(verify('command', text.replace('"nested"', '"tampered"'), registry, options), 'signature', 'signature-mismatch')
    // The same signature on another kind's profile fails: another document, another signer rule.
    const other = { ...signed('evidence'), signature: command['signature'] }
    expect(verify('evidence', JSON.stringify(other), registry, options).ok).toBe(false)
  })

  it('stops at the first failing stage', () => {
    const validate = vi.fn<SchemaCheck>(() => true)
    const resolve = vi.fn<KeyResolver['resolve']>((id) => registry.resolve(id))
    verify('command', `${text}x`, { resolve }, { validate })
    expect(validate).not.toHaveBeenCalled()
    // A stage-3 fault and a stage-4 fault together: stage 3 is reported and the resolver is never asked.
    const both = JSON.stringify({ ...signed('command', {}, 'owner'), issuedAt: '2026-07-15T00:00:00.000Z' })
    expectFailure(verify('command', both, { resolve }, { validate }), 'signature-envelope', 'created-at-mismatch')
    expect(resolve).not.toHaveBeenCalled()
    // A subgroup fault of R (evaluated lazily by default) still beats a stage-4 fault, and with
    // strictStageOrder the resolver is not even asked.
    const wrongSigner = signed('command', {}, 'owner')
    const envelope = wrongSigner['signature'] as Record<string, string>
    const badR = JSON.stringify({ ...wrongSigner, signature: { ...envelope, value: encodeBase64url(Buffer.concat([offCurveEncoding(), Buffer.from(envelope['value']!, 'base64url').subarray(32)])) } })
    expectFailure(verify('command', badR, { resolve }, { validate }), 'signature-envelope', 'signature-encoding-invalid')
    resolve.mockClear()
    expectFailure(verify('command', badR, { resolve }, { validate, strictStageOrder: true }), 'signature-envelope', 'signature-encoding-invalid')
    expect(resolve).not.toHaveBeenCalled()
    // Stage 4 and stage 5 together: stage 4.
    const unknownAndBig = sign('command', documents.command.doc, { keyId: 'urn:weft:test:key:nobody', pair: pair(99) })
    expectFailure(verify('command', JSON.stringify(unknownAndBig).replace('2.5', '1e400'), registry, options), 'key-resolution')
  })
})

describe('property: lazy and strict stage order give the same result', () => {
  // Small-order points (RFC 8032 encodings of the 8-torsion) and a mixed-order one, beside random bytes.
  const torsion = [
    '0100000000000000000000000000000000000000000000000000000000000000',
    'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
    '0000000000000000000000000000000000000000000000000000000000000080',
    'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
    '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
    'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  ].map((h) => Buffer.from(h, 'hex'))
  const base = signed('command')
  const envelope = base['signature'] as Record<string, string>
  const original = Buffer.from(envelope['value']!, 'base64url')
  const variants: Record<string, unknown>[] = [base, signed('command', {}, 'owner'), { ...base, kind: 'tampered' }]
  const rOf = fc.oneof(
    fc.uint8Array({ minLength: 32, maxLength: 32 }),
    fc.constantFrom(...torsion),
    fc.tuple(fc.constantFrom(...torsion), fc.nat({ max: 31 }), fc.integer({ min: 1, max: 255 })).map(([t, i, d]) => Uint8Array.from(t, (b, j) => (j === i ? b ^ d : b))),
    fc.constant(original.subarray(0, 32)),
  )

  it('for any R over valid, wrongly signed and tampered documents', () => {
    fc.assert(
      fc.property(rOf, fc.nat({ max: variants.length - 1 }), (r, which) => {
        const doc = variants[which]!
        const sig = doc['signature'] as Record<string, string>
        const value = encodeBase64url(Buffer.concat([r, Buffer.from(sig['value']!, 'base64url').subarray(32)]))
        const text = JSON.stringify({ ...doc, signature: { ...sig, value } })
        const summary = (x: VerifyResult) => (x.ok ? 'complete' : `${x.stage}/${x.reason}/${x.detail ?? ''}`)
        expect(summary(verify('command', text, registry, options))).toBe(summary(verify('command', text, registry, { ...options, strictStageOrder: true })))
      }),
      { numRuns: 300 },
    )
  })
})

describe('property: any single-byte mutation of signed bytes is rejected', () => {
  // Compact JSON with no exponent or escape, so no byte change can leave the value intact.
  const document = signed('command', { payload: { signature: 'nested', n: [1, 25, 3] } })
  const original = bytesOf(document)

  it('flips, replaces or drops one byte and never verifies', () => {
    expect(verify('command', original, registry, options).ok).toBe(true)
    fc.assert(
      fc.property(fc.nat({ max: original.length - 1 }), fc.integer({ min: 1, max: 255 }), fc.boolean(), (index, delta, drop) => {
        const mutated = drop ? Uint8Array.from([...original.subarray(0, index), ...original.subarray(index + 1)]) : Uint8Array.from(original, (b, i) => (i === index ? (b + delta) & 0xff : b))
        expect(verify('command', mutated, registry, options).ok).toBe(false)
      }),
      { numRuns: 400 },
    )
  })
})

describe('verifyAsync: stage 6 on the threadpool, the same results as verify', () => {
  const command = signed('command')
  const text = JSON.stringify(command)
  const envelope = command['signature'] as Record<string, string>
  const summary = (x: VerifyResult) => (x.ok ? `complete ${x.verified.signingHash} ${x.verified.key.keyId}` : `${x.stage}/${x.reason}/${x.detail ?? ''}`)
  // One input failing at each stage, a lazily found stage-3 fault behind a stage-6 one, and passes.
  const offCurveR = encodeBase64url(Buffer.concat([offCurveEncoding(), Buffer.from(envelope['value']!, 'base64url').subarray(32)]))
  const inputs: [string, string | Uint8Array][] = [
    ['complete', text],
    ['complete as bytes', bytesOf(command)],
    ['parse', `${text} {}`],
    ['schema', '[]'],
    ['signature envelope', JSON.stringify({ ...command, signature: { ...envelope, createdAt: '2026-07-15T00:00:00.0Z' } })],
    ['key resolution', JSON.stringify(signed('command', {}, 'owner'))],
    ['canonicalization', text.replace('"n":[1,2.5,-3]', '"n":[1e400,2.5,-3]')],
    ['signature', text.replace('"nested"', '"tampered"')],
    ['deferred stage 3', JSON.stringify({ ...command, kind: 'tampered', signature: { ...envelope, value: offCurveR } })],
  ]

  it.each(inputs)('%s', async (_name, input) => {
    const sync = verify('command', input, registry, options)
    const pending = verifyAsync('command', input, registry, options)
    expect(pending).toBeInstanceOf(Promise)
    expect(summary(await pending)).toBe(summary(sync))
  })

  it('resolves several verifications in flight, each to its own result', async () => {
    const many = Array.from({ length: 24 }, (_, i) => (i % 3 === 2 ? text.replace('"nested"', `"tampered ${i}"`) : text))
    const results = await Promise.all(many.map((input) => verifyAsync('command', input, registry, options)))
    expect(results.map((r) => r.ok)).toEqual(many.map((_, i) => i % 3 !== 2))
  })

  it('runs stages 1-5 before it returns: the schema check and the resolver are called synchronously', () => {
    const validate = vi.fn<SchemaCheck>(() => true)
    const resolve = vi.fn<KeyResolver['resolve']>((id) => registry.resolve(id))
    const pending = verifyAsync('command', text, { resolve }, { validate })
    expect(validate).toHaveBeenCalledOnce()
    expect(resolve).toHaveBeenCalledOnce()
    return pending
  })

  it('is bound by createVerifier', async () => {
    const verifier = createVerifier(options)
    expect((await verifier.verifyAsync('command', text, registry)).ok).toBe(true)
    expect(summary(await verifier.verifyAsync('command', text.replace('"nested"', '"x"'), registry))).toBe('signature/signature-mismatch/')
  })
})
