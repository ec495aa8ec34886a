import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ED25519_TORSION_SUBGROUP, ed25519 } from '@noble/curves/ed25519.js'
import { bundleForTests, readBundleJson } from '@weft/spec/bundle'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  checkPublicKeyEncoding,
  checkSignatureEncoding,
  importPublicKey,
  isVerifiedPublicKey,
  keyPairFromSeed,
  precheckSignatureEncoding,
  subgroupCheckCount,
  verifyEd25519,
  verifyEd25519Async,
  type VerifiedPublicKey,
} from './ed25519.js'
import { UsageError } from './errors.js'

const Point = ed25519.Point
const L = (1n << 252n) + 27742317777372353535851937790883648493n
const hex = (s: string) => Uint8Array.from(Buffer.from(s, 'hex'))
const b64 = (s: string) => Uint8Array.from(Buffer.from(s, 'base64url'))
const le32 = (n: bigint) => Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse())
const fromLe = (b: Uint8Array) => BigInt('0x' + Buffer.from(b).reverse().toString('hex'))
const TORSION = ED25519_TORSION_SUBGROUP.map((h) => Point.fromHex(h))

function imported(bytes: Uint8Array): VerifiedPublicKey {
  const key = importPublicKey(bytes)
  if (!isVerifiedPublicKey(key)) throw new Error(`import failed: ${key.reason}`)
  return key
}

function reasonOf(check: { ok: boolean; reason?: string }): string {
  return check.ok ? 'ok' : check.reason!
}

/** What the strict rules say about a 32-byte encoding, computed the slow way with noble. */
function reference(enc: Uint8Array): string {
  const y = fromLe(enc) & ((1n << 255n) - 1n)
  if (y >= (1n << 255n) - 19n) return 'noncanonical'
  let point
  try {
    point = Point.fromBytes(enc, false)
  } catch {
    // noble's strict decoding also refuses x = 0 with the sign bit set
    return y === 1n || y === (1n << 255n) - 20n ? 'negative-zero' : 'off-curve'
  }
  if (point.is0()) return 'identity'
  if (point.isSmallOrder()) return 'small-order'
  return point.isTorsionFree() ? 'ok' : 'mixed-order'
}

// RFC 8032 §7.1, TEST 1 (empty message).
const RFC8032_1 = {
  seed: hex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60'),
  publicKey: hex('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a'),
  signature: hex('e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b'),
}

describe('RFC 8032 test vector 1', () => {
  it('derives the public key and the exact signature, and verifies it', () => {
    const pair = keyPairFromSeed(RFC8032_1.seed)
    expect(pair.publicKey).toEqual(RFC8032_1.publicKey)
    const signature = pair.sign(new Uint8Array(0))
    expect(signature).toEqual(RFC8032_1.signature)
    expect(checkSignatureEncoding(signature)).toEqual({ ok: true })
    const key = imported(RFC8032_1.publicKey)
    expect(key.bytes).toEqual(RFC8032_1.publicKey)
    expect(verifyEd25519(key, new Uint8Array(0), signature)).toBe(true)
    expect(verifyEd25519(key, new Uint8Array([0]), signature)).toBe(false)
  })

  it('refuses a seed that is not 32 bytes', () => {
    expect(() => keyPairFromSeed(new Uint8Array(31))).toThrow(UsageError)
  })
})

describe('public keys (§6.4 stage 4)', () => {
  it('rejects every 8-torsion point: the identity as such, the others as small-order', () => {
    for (const t of TORSION) {
      expect(reasonOf(checkPublicKeyEncoding(t.toBytes()))).toBe(t.is0() ? 'public-key-identity' : 'public-key-small-order')
    }
  })

  it('rejects each strict-decoding fault with its own reason', () => {
    const cases: [string, Uint8Array][] = [
      ['public-key-wrong-length', new Uint8Array(31)],
      ['public-key-wrong-length', new Uint8Array(33)],
      ['public-key-noncanonical', le32((1n << 255n) - 19n)], // y = p
      ['public-key-noncanonical', le32((1n << 255n) - 18n)], // y = p + 1 (the identity, spelled again)
      ['public-key-negative-zero', le32(1n | (1n << 255n))],
      ['public-key-negative-zero', le32((1n << 255n) - 20n + (1n << 255n))], // (0, -1) with the sign bit
      ['public-key-off-curve', le32(2n)],
      ['public-key-identity', le32(1n)],
      ['public-key-small-order', le32((1n << 255n) - 20n)], // (0, -1)
      ['public-key-mixed-order', Point.BASE.add(TORSION[1]!).toBytes()],
    ]
    for (const [reason, bytes] of cases) {
      expect(reasonOf(checkPublicKeyEncoding(bytes)), reason).toBe(reason)
      expect(importPublicKey(bytes)).toEqual({ ok: false, reason })
    }
    expect(checkPublicKeyEncoding(Point.BASE.toBytes())).toEqual({ ok: true })
  })

  it('agrees with a slow reference classification on random encodings and points', () => {
    const encodings = fc.oneof(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.tuple(fc.bigInt({ min: 1n, max: L - 1n }), fc.integer({ min: 0, max: 7 })).map(([s, t]) => Point.BASE.multiply(s).add(TORSION[t]!).toBytes()),
    )
    fc.assert(
      fc.property(encodings, (enc) => {
        const expected = reference(enc)
        const got = reasonOf(checkPublicKeyEncoding(enc))
        expect(got).toBe(expected === 'ok' ? 'ok' : `public-key-${expected}`)
      }),
      { numRuns: 150 },
    )
  })

  it('runs the subgroup check once per imported key, never per verification', () => {
    const pair = keyPairFromSeed(randomBytes(32))
    const before = subgroupCheckCount()
    const key = imported(pair.publicKey)
    expect(subgroupCheckCount()).toBe(before + 1)
    const message = randomBytes(100)
    const signature = pair.sign(message)
    for (let i = 0; i < 200; i++) expect(verifyEd25519(key, message, signature)).toBe(true)
    expect(subgroupCheckCount()).toBe(before + 1)
  })

  it('verifies only with keys that importPublicKey made', () => {
    const forged = { bytes: RFC8032_1.publicKey }
    expect(isVerifiedPublicKey(forged)).toBe(false)
    expect(() => verifyEd25519(forged, new Uint8Array(0), RFC8032_1.signature)).toThrow(UsageError)
  })

  it('hands out copies of the key bytes', () => {
    const key = imported(RFC8032_1.publicKey)
    key.bytes.fill(0)
    expect(key.bytes).toEqual(RFC8032_1.publicKey)
  })
})

/** A signature `(Renc, S)` over `message` whose `R` carries the torsion component `t`. */
function signWithTorsion(seed: Uint8Array, message: Uint8Array, t: (typeof TORSION)[number], withNonce: boolean) {
  const { scalar, pointBytes } = ed25519.utils.getExtendedPublicKey(seed)
  const r = withNonce ? (fromLe(randomBytes(32)) % (L - 1n)) + 1n : 0n
  const R = (r === 0n ? Point.ZERO : Point.BASE.multiply(r)).add(t)
  const Renc = R.toBytes()
  const k = fromLe(createHash('sha512').update(Renc).update(pointBytes).update(message).digest()) % L
  const S = (r + k * scalar) % L
  return Uint8Array.from([...Renc, ...le32(S)])
}

describe('signatures (§6.4 stage 3 and stage 6)', () => {
  const pair = keyPairFromSeed(RFC8032_1.seed)
  const key = imported(pair.publicKey)
  const message = new TextEncoder().encode('weft')
  const good = pair.sign(message)

  it('rejects S + L (no reduction) and S = L, and does not verify them', () => {
    const S = fromLe(good.subarray(32))
    for (const bad of [S + L, L]) {
      const sig = Uint8Array.from([...good.subarray(0, 32), ...le32(bad)])
      expect(checkSignatureEncoding(sig)).toEqual({ ok: false, reason: 'signature-s-out-of-range' })
      expect(verifyEd25519(key, message, sig)).toBe(false)
    }
    const edge = Uint8Array.from([...good.subarray(0, 32), ...le32(L - 1n)])
    expect(checkSignatureEncoding(edge)).toEqual({ ok: true })
  })

  it('gives the same answers on the threadpool (verifyEd25519Async)', async () => {
    const S = fromLe(good.subarray(32))
    const tampered = Uint8Array.from(good, (b, i) => (i === 5 ? b ^ 1 : b))
    const cases = [good, tampered, good.subarray(0, 63), Uint8Array.from([...good.subarray(0, 32), ...le32(S + L)])]
    const expected = cases.map((sig) => verifyEd25519(key, message, sig))
    expect(expected).toEqual([true, false, false, false])
    expect(await Promise.all(cases.map((sig) => verifyEd25519Async(key, message, sig)))).toEqual(expected)
    expect(await verifyEd25519Async(key, new TextEncoder().encode('other'), good)).toBe(false)
    expect(() => verifyEd25519Async({ bytes: pair.publicKey }, message, good)).toThrow(UsageError)
  })

  it('permits the identity R in the encoding check (the equation decides)', () => {
    const sig = Uint8Array.from([...le32(1n), ...le32(12345n)])
    expect(checkSignatureEncoding(sig)).toEqual({ ok: true })
    expect(precheckSignatureEncoding(sig)).toEqual({ ok: true })
    expect(verifyEd25519(key, message, sig)).toBe(false)
  })

  it('classifies every R fault', () => {
    const S = good.subarray(32)
    const cases: [string, Uint8Array][] = [
      ['signature-r-noncanonical', le32((1n << 255n) - 19n)], // y = p
      ['signature-r-negative-zero', le32(1n | (1n << 255n))],
      ['signature-r-off-curve', le32(2n)],
      ['signature-r-small-order', TORSION[1]!.toBytes()],
      ['signature-r-small-order', le32((1n << 255n) - 20n)],
      ['signature-r-mixed-order', Point.BASE.multiply(7n).add(TORSION[3]!).toBytes()],
    ]
    for (const [reason, r] of cases) {
      expect(checkSignatureEncoding(Uint8Array.from([...r, ...S])), reason).toEqual({ ok: false, reason })
    }
    expect(checkSignatureEncoding(good.subarray(0, 63))).toEqual({ ok: false, reason: 'signature-wrong-length' })
  })

  it('rejects R with a torsion component although the cofactored equation holds', () => {
    for (const [i, t] of TORSION.entries()) {
      if (t.is0()) continue
      for (const withNonce of [true, false]) {
        const sig = signWithTorsion(RFC8032_1.seed, message, t, withNonce)
        // ZIP-215 verification is cofactored: it accepts these signatures.
        expect(ed25519.verify(sig, message, pair.publicKey, { zip215: true }), `torsion ${i}`).toBe(true)
        expect(reasonOf(checkSignatureEncoding(sig))).toBe(withNonce ? 'signature-r-mixed-order' : 'signature-r-small-order')
        expect(verifyEd25519(key, message, sig)).toBe(false)
      }
    }
  })

  it('never verifies a randomly mutated signature', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 64, maxLength: 64 }), (mask) => {
        fc.pre(mask.some((b) => b !== 0))
        const mutated = good.map((b, i) => b ^ mask[i]!)
        expect(verifyEd25519(key, message, mutated)).toBe(false)
      }),
      { numRuns: 500 },
    )
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 63 }), fc.integer({ min: 1, max: 255 }), (index, flip) => {
        const mutated = good.slice()
        mutated[index]! ^= flip
        expect(verifyEd25519(key, message, mutated)).toBe(false)
      }),
      { numRuns: 500 },
    )
  })

  it('agrees with a slow reference classification of random R', () => {
    const S = good.subarray(32)
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (r) => {
        const expected = reference(r)
        const got = reasonOf(checkSignatureEncoding(Uint8Array.from([...r, ...S])))
        expect(got).toBe(expected === 'ok' || expected === 'identity' ? 'ok' : `signature-r-${expected}`)
      }),
      { numRuns: 100 },
    )
  })
})

const dir = bundleForTests()

interface Evaluation {
  profileId: string
  document: string
  registry: string
  signingKey?: string
  fault: { id: string } | null
  expect: { stage: string; verified?: { keyId: string; signingBytes: string; signature: string } }
}
interface Manifest {
  cases: { id: string; kind: string; evaluations: Evaluation[] }[]
}

describe.skipIf(!dir)('protocol cryptography vectors', () => {
  const bundle = dir!
  const read = (path: string) => readFileSync(join(bundle, path))
  const evaluations = () => readBundleJson<Manifest>(bundle, 'cryptography/manifest.json').cases.flatMap((c) => c.evaluations.filter((e) => 'document' in e))

  it('every test signing key derives its public key and passes the strict checks', () => {
    const files = ['coordinator', 'developer-one', 'group-authority', 'mission-owner', 'organization-registry', 'security-owner', 'test-reviewer']
    for (const name of files) {
      const fixture = readBundleJson<{ seed: string; publicKey: string }>(bundle, `cryptography/keys/signing-${name}.json`)
      const pair = keyPairFromSeed(b64(fixture.seed))
      expect(Buffer.from(pair.publicKey).toString('base64url'), name).toBe(fixture.publicKey)
      const key = imported(pair.publicKey)
      const sig = pair.sign(new Uint8Array([1, 2, 3]))
      expect(verifyEd25519(key, new Uint8Array([1, 2, 3]), sig)).toBe(true)
    }
    // The coordinator key is RFC 8032 test 1.
    const coordinator = readBundleJson<{ seed: string }>(bundle, 'cryptography/keys/signing-coordinator.json')
    expect(b64(coordinator.seed)).toEqual(RFC8032_1.seed)
  })

  it('reproduces and verifies the signature of every accepted evaluation', () => {
    const accepted = evaluations().filter((e) => e.expect.stage === 'complete')
    expect(accepted.length).toBe(11)
    for (const e of accepted) {
      const verified = e.expect.verified!
      const seed = b64(readBundleJson<{ seed: string }>(bundle, e.signingKey!).seed)
      const pair = keyPairFromSeed(seed)
      const message = read(verified.signingBytes)
      const signature = b64(verified.signature)
      expect(pair.sign(message), e.document).toEqual(signature)
      expect(checkSignatureEncoding(signature)).toEqual({ ok: true })
      expect(verifyEd25519(imported(pair.publicKey), message, signature)).toBe(true)
    }
  })

  it('rejects each signature-envelope encoding fault with the matching reason', () => {
    const faults = evaluations().filter((e) => e.expect.stage === 'signature-envelope' && e.fault!.id.startsWith('signature-') && e.fault!.id !== 'signature-nonzero-unused-pad-bits')
    expect(faults.map((e) => e.fault!.id).sort()).toEqual([
      'signature-r-mixed-order',
      'signature-r-negative-zero',
      'signature-r-noncanonical',
      'signature-r-off-curve',
      'signature-r-small-order',
      'signature-r-y-equals-p',
      'signature-s-out-of-range',
      'signature-wrong-length',
    ])
    for (const e of faults) {
      const doc = JSON.parse(read(e.document).toString('utf8')) as { signature: { value: string } }
      const expected = e.fault!.id === 'signature-r-y-equals-p' ? 'signature-r-noncanonical' : e.fault!.id
      expect(checkSignatureEncoding(b64(doc.signature.value)), e.fault!.id).toEqual({ ok: false, reason: expected })
    }
  })

  it('passes the identity-R forgery through stage 3 and rejects it at the equation', () => {
    const e = evaluations().find((x) => x.fault?.id === 'identity-r-equation-mismatch')!
    const doc = JSON.parse(read(e.document).toString('utf8')) as { signature: { value: string } }
    const sig = b64(doc.signature.value)
    expect(sig.subarray(0, 32)).toEqual(le32(1n))
    expect(checkSignatureEncoding(sig)).toEqual({ ok: true })
    const { signature: _omit, ...unsigned } = doc as Record<string, unknown>
    // Whatever the exact signing bytes, no message makes this pair verify under a prime-order key.
    expect(verifyEd25519(imported(RFC8032_1.publicKey), Buffer.from(JSON.stringify(unsigned)), sig)).toBe(false)
  })
})
