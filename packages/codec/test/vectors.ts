/**
 * Builds the {@link Corpus} that the platform tests run on both platforms: every signed-document
 * evaluation of the protocol's cryptography bundle (with its Registry fixture), every public key
 * and signature those contain, the signing seeds with their signing bytes, and the strict-encoding
 * cases of `src/ed25519.test.ts` (torsion points, boundary encodings, torsion-carrying `R` whose
 * cofactored equation holds, mutated signatures, random encodings from a fixed seed). Node-only
 * (it reads the bundle from disk); the runner, `corpus-run.ts`, is portable.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ED25519_TORSION_SUBGROUP, ed25519 } from '@noble/curves/ed25519.js'
import { readBundleJson } from '@weft/spec/bundle'
import type { DocumentKind } from '../src/index.js'
import { toHex, type Corpus } from './corpus-run.js'

const Point = ed25519.Point
const L = (1n << 252n) + 27742317777372353535851937790883648493n
const P = (1n << 255n) - 19n
const TORSION = ED25519_TORSION_SUBGROUP.map((h) => Point.fromHex(h))

const le32 = (n: bigint): Uint8Array => Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse())
const fromLe = (b: Uint8Array): bigint => BigInt('0x' + (Buffer.from(b).reverse().toString('hex') || '0'))
const b64 = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'base64url'))
const cat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]))

/** A deterministic byte stream (SHA-256 in counter mode), so every run checks the same "random" cases. */
function stream(label: string): (n: number) => Uint8Array {
  let counter = 0
  return (n) => {
    const out: number[] = []
    while (out.length < n) out.push(...createHash('sha256').update(`${label}/${counter++}`).digest())
    return Uint8Array.from(out.slice(0, n))
  }
}

/** A signature `(Renc, S)` over `message` whose `R` carries the torsion component `t` (cofactored verification accepts it). */
function signWithTorsion(seed: Uint8Array, message: Uint8Array, t: (typeof TORSION)[number], nonce: bigint): Uint8Array {
  const { scalar, pointBytes } = ed25519.utils.getExtendedPublicKey(seed)
  const R = (nonce === 0n ? Point.ZERO : Point.BASE.multiply(nonce)).add(t)
  const rEnc = R.toBytes()
  const k = fromLe(createHash('sha512').update(rEnc).update(pointBytes).update(message).digest()) % L
  return cat(rEnc, le32((nonce + k * scalar) % L))
}

interface Evaluation {
  profileId: DocumentKind
  document: string
  registry: string
  signingKey?: string
  fault: { id: string } | null
  expect: { stage: string; verified?: { signingBytes: string; signature: string } }
}

/** The evaluations of the manifest that verify a signed document, with a readable id each. */
export function signedEvaluations(bundle: string): (Evaluation & { id: string })[] {
  const manifest = readBundleJson<{ cases: { id: string; evaluations: Evaluation[] }[] }>(bundle, 'cryptography/manifest.json')
  return manifest.cases.flatMap((c) => c.evaluations.filter((e) => 'document' in e).map((e) => ({ ...e, id: `${c.id} ${e.profileId} ${e.fault?.id ?? 'valid'}` })))
}

/** The whole corpus (see the module comment). */
export function buildCorpus(bundle: string): Corpus {
  const read = (path: string): Uint8Array => Uint8Array.from(readFileSync(join(bundle, path)))
  const evaluations = signedEvaluations(bundle)
  const publicKeys: { id: string; key: string }[] = []
  const signatures: { id: string; signature: string }[] = []
  const verifications: { id: string; key: string; message: string; signature: string }[] = []
  const seeds = new Map<string, { id: string; seed: string; messages: string[] }>()
  const json: { id: string; bytes: string }[] = []
  const base64url = new Set<string>()

  // Every key of every Registry fixture, as spelled (the decoder and the point rules both count).
  const registryPaths = [...new Set(evaluations.map((e) => e.registry))]
  for (const path of registryPaths) {
    const evidence = readBundleJson<{ bindings?: { keyId?: string; publicKey?: unknown }[] }>(bundle, path)
    for (const [i, binding] of (evidence.bindings ?? []).entries()) {
      if (typeof binding.publicKey !== 'string') continue
      base64url.add(binding.publicKey)
      publicKeys.push({ id: `${path} #${i}`, key: toHex(b64(binding.publicKey)) })
    }
  }

  for (const e of evaluations) {
    const document = read(e.document)
    json.push({ id: e.id, bytes: toHex(document) })
    let parsed: { signature?: { value?: unknown } } | undefined
    try {
      parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(document)) as typeof parsed
    } catch {
      parsed = undefined // a parse-stage vector
    }
    const value = parsed?.signature?.value
    if (typeof value === 'string') {
      base64url.add(value)
      signatures.push({ id: e.id, signature: toHex(b64(value)) })
    }
    if (e.expect.verified !== undefined && e.signingKey !== undefined) {
      const fixture = readBundleJson<{ seed: string; publicKey: string }>(bundle, e.signingKey)
      const message = read(e.expect.verified.signingBytes)
      const signature = b64(e.expect.verified.signature)
      const entry = seeds.get(e.signingKey) ?? { id: e.signingKey, seed: toHex(b64(fixture.seed)), messages: [] }
      entry.messages.push(toHex(message))
      seeds.set(e.signingKey, entry)
      const key = toHex(b64(fixture.publicKey))
      verifications.push({ id: `${e.id}: the vector's signature`, key, message: toHex(message), signature: toHex(signature) })
      verifications.push({ id: `${e.id}: another message`, key, message: toHex(cat(message, new Uint8Array([0x20]))), signature: toHex(signature) })
      // Mutations: flip one bit in R, in S (possibly S >= L), and in the top bit of S.
      for (const [label, index, mask] of [
        ['R bit', 3, 0x10],
        ['S bit', 40, 0x01],
        ['S top', 63, 0x80],
        ['R sign', 31, 0x80],
      ] as const) {
        const mutated = signature.slice()
        mutated[index]! ^= mask
        verifications.push({ id: `${e.id}: ${label} flipped`, key, message: toHex(message), signature: toHex(mutated) })
      }
      // S + L: the same signature unreduced, which §6.4 rejects although the equation would hold mod L.
      const unreduced = fromLe(signature.subarray(32)) + L
      if (unreduced < 1n << 256n) verifications.push({ id: `${e.id}: S + L`, key, message: toHex(message), signature: toHex(cat(signature.subarray(0, 32), le32(unreduced))) })
    }
  }

  // The strict-encoding cases of src/ed25519.test.ts, for keys and for R.
  const special: [string, Uint8Array][] = [
    ['wrong length 31', new Uint8Array(31)],
    ['wrong length 33', new Uint8Array(33)],
    ['y = p', le32(P)],
    ['y = p + 1', le32(P + 1n)],
    ['y = 2^255 - 1', le32((1n << 255n) - 1n)],
    ['identity', le32(1n)],
    ['identity, sign bit', le32(1n | (1n << 255n))],
    ['(0, -1)', le32(P - 1n)],
    ['(0, -1), sign bit', le32(P - 1n + (1n << 255n))],
    ['y = 2 (off curve)', le32(2n)],
    ['y = 0', le32(0n)],
    ['base point', Point.BASE.toBytes()],
    ['base point + torsion 1', Point.BASE.add(TORSION[1]!).toBytes()],
    ['[7]B + torsion 3', Point.BASE.multiply(7n).add(TORSION[3]!).toBytes()],
    ...TORSION.map((t, i): [string, Uint8Array] => [`torsion ${i}`, t.toBytes()]),
  ]
  const random = stream('weft codec platform corpus')
  for (let i = 0; i < 48; i++) special.push([`random bytes ${i}`, random(32)])
  for (let i = 0; i < 24; i++) {
    const s = (fromLe(random(32)) % (L - 1n)) + 1n
    special.push([
      `random point ${i} + torsion ${i % 8}`,
      Point.BASE.multiply(s)
        .add(TORSION[i % 8]!)
        .toBytes(),
    ])
  }
  const someS = le32(12345n)
  for (const [label, enc] of special) {
    publicKeys.push({ id: label, key: toHex(enc) })
    if (enc.length === 32) signatures.push({ id: `R = ${label}`, signature: toHex(cat(enc, someS)) })
  }
  signatures.push({ id: 'S = L', signature: toHex(cat(Point.BASE.toBytes(), le32(L))) })
  signatures.push({ id: 'S = L - 1', signature: toHex(cat(Point.BASE.toBytes(), le32(L - 1n))) })
  signatures.push({ id: 'S = 2^256 - 1', signature: toHex(cat(Point.BASE.toBytes(), le32((1n << 256n) - 1n))) })
  signatures.push({ id: '63 bytes', signature: toHex(new Uint8Array(63)) })

  // Torsion-carrying R with a holding cofactored equation: cofactorless verification (both
  // platforms) must reject every one; an identity R must pass stage 3 and fail the equation.
  const seed = b64(readBundleJson<{ seed: string }>(bundle, 'cryptography/keys/signing-coordinator.json').seed)
  const publicKey = ed25519.getPublicKey(seed)
  const message = new TextEncoder().encode('weft')
  for (const [i, t] of TORSION.entries()) {
    for (const nonce of [0n, 1234567n]) {
      const signature = signWithTorsion(seed, message, t, nonce)
      signatures.push({ id: `torsion R ${i} nonce ${nonce}`, signature: toHex(signature) })
      verifications.push({ id: `torsion R ${i} nonce ${nonce}`, key: toHex(publicKey), message: toHex(message), signature: toHex(signature) })
    }
  }
  verifications.push({ id: 'identity R, S = 12345', key: toHex(publicKey), message: toHex(message), signature: toHex(cat(le32(1n), someS)) })
  verifications.push({ id: 'zero S with identity R', key: toHex(publicKey), message: toHex(message), signature: toHex(cat(le32(1n), le32(0n))) })
  verifications.push({ id: 'bad key (small order)', key: toHex(TORSION[2]!.toBytes()), message: toHex(message), signature: toHex(ed25519.sign(message, seed)) })
  seeds.set('RFC 8032 test 1 and random', { id: 'random', seed: toHex(random(32)), messages: [toHex(new Uint8Array(0)), toHex(random(1000))] })

  // Strict-JSON cases beyond the vectors: the failures of §6.4 stage 1 with their offsets, and a
  // document in the size band where the Node platform rewrites non-ASCII text as escapes.
  const text = (s: string): Uint8Array => new TextEncoder().encode(s)
  const extra: [string, Uint8Array][] = [
    ['overlong', Uint8Array.from([0x5b, 0x22, 0xc0, 0xaf, 0x22, 0x5d])],
    ['surrogate bytes', Uint8Array.from([0x5b, 0x22, 0x61, 0xed, 0xa0, 0x80, 0x22, 0x5d])],
    ['above U+10FFFF', Uint8Array.from([0x22, 0xf4, 0x90, 0x80, 0x80, 0x22])],
    ['truncated at the end', Uint8Array.from([0x22, 0xe2, 0x82])],
    ['lone continuation', Uint8Array.from([0x7b, 0x7d, 0x80])],
    ['BOM', text('\ufeff{}')],
    ['BOM inside', text('["\ufeff"]')],
    ['duplicate after escapes', text('{"é":1,"\\u00e9":2}')],
    ['trailing data', text('{"a":"ü"} x')],
    ['syntax after non-ASCII', text('["ü\u{1f600}", tru]')],
    ['deep', text('['.repeat(300) + ']'.repeat(300))],
    ['colon in string', text('{"a": "b: c", "d":"\\": e"}')],
  ]
  const items = Array.from({ length: 900 }, (_, i) => ({ id: i, title: i % 3 ? `Révision ${i} — contrôle` : `plain ${i}`, emoji: '\u{1f600}', n: i / 7 }))
  const large = text(JSON.stringify({ items }))
  if (large.length < 64 * 1024 || large.length > 112 * 1024) throw new Error(`the large JSON case is ${large.length} bytes, outside the rewrite band`)
  extra.push(['large non-ASCII', large])
  const largeBad = large.slice()
  largeBad[largeBad.length - 2] = 0x2c // `,}`: a syntax error at the very end, after all the non-ASCII text
  extra.push(['large non-ASCII, syntax error at the end', largeBad])
  for (const [id, bytes] of extra) json.push({ id, bytes: toHex(bytes) })

  for (const s of ['', 'AA', 'AQ', 'AR', 'AQI', 'AQJ', 'AQI=', 'A', 'AAAAA', '+/8', '-_8', 'a b', 'AQID', 'é', '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo']) base64url.add(s)

  return {
    evaluations: evaluations.map((e) => ({ id: e.id, kind: e.profileId, document: toHex(read(e.document)), registry: toHex(read(e.registry)) })),
    publicKeys,
    signatures,
    verifications,
    seeds: [...seeds.values()],
    json,
    base64url: [...base64url],
  }
}

/** The stage the manifest expects for each evaluation id (for checks against the official answers). */
export function expectedStages(bundle: string): Map<string, string> {
  return new Map(signedEvaluations(bundle).map((e) => [e.id, e.expect.stage]))
}
