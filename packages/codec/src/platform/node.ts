/**
 * The Node platform of @weft/codec: the primitives that run on Node's built-ins (`node:crypto`'s
 * OpenSSL, `node:buffer`'s simdutf). `package.json` maps the subpath import `#platform` here for
 * every resolver that does not ask for the `browser` condition; `browser.ts` implements the same
 * exports with web APIs and `@noble/*`. The shared modules (`bytes.ts`, `json.ts`, `ed25519.ts`)
 * keep every protocol rule; this module only does the heavy lifting, so the two platforms cannot
 * disagree on a rule, only on speed. `platform.test.ts` proves they agree on every vector.
 *
 * Nothing here may change without `node bench/run.mjs codec`: this is the benchmarked path.
 * @internal
 * @module
 */
import { isAscii, isUtf8 } from 'node:buffer'
import { createHash, createPrivateKey, createPublicKey, diffieHellman, sign as nodeSign, verify as nodeVerify, type KeyObject } from 'node:crypto'
import { createRequire } from 'node:module'
import type { PrimeOrderTest, SeedKeyPair } from './types.js'

/** Which platform module this is (`'node'` or `'browser'`), for tests and diagnostics. */
export const PLATFORM = 'node'

// --- bytes (§2) -------------------------------------------------------------------------------

/** A `Buffer` viewing the same memory as `bytes` (no copy), for Node's fast codecs. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/**
 * A plain `Uint8Array` owning exactly its bytes. Small Buffers are slices of a shared pool; handing
 * one out would expose unrelated pool memory through `.buffer`, so those are copied.
 */
function own(buffer: Buffer): Uint8Array {
  if (buffer.byteOffset === 0 && buffer.buffer.byteLength === buffer.byteLength) {
    return new Uint8Array(buffer.buffer, 0, buffer.byteLength)
  }
  return new Uint8Array(buffer)
}

/** Unpadded base64url of `bytes` (RFC 4648 §5); Node's encoder never pads and leaves zero pad bits. */
export function base64urlEncode(bytes: Uint8Array): string {
  return asBuffer(bytes).toString('base64url')
}

/**
 * The bytes of `text`, which the caller has already proven canonical unpadded base64url (§2).
 * Node's decoder skips unknown characters and ignores pad bits, so it must never see anything else.
 */
export function base64urlDecodeCanonical(text: string): Uint8Array {
  return own(Buffer.from(text, 'base64url'))
}

/** SHA-256 of `bytes` (32 bytes), by OpenSSL. */
export function sha256(bytes: Uint8Array): Uint8Array {
  return own(createHash('sha256').update(bytes).digest())
}

/** SHA-256 of `bytes` as 64 lower-case hexadecimal digits (the §2 content-hash digits). */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

/**
 * The UTF-8 length of `text`. An unpaired surrogate counts 3 bytes (it would be written as
 * U+FFFD); the strict-JSON caller reports those separately, so only the count matters.
 */
export function utf8ByteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8')
}

// --- strict JSON text (§6.4 stage 1) ----------------------------------------------------------

/** Strings larger than this go to V8's large-object space, which is slow to allocate and free. */
const LARGE_STRING_BYTES = 128 * 1024

/**
 * The text to hand to `JSON.parse` for UTF-8 `bytes`, or `undefined` when the bytes are not
 * well-formed UTF-8. isUtf8 (simdutf) validates far faster than a fatal TextDecoder; the exact
 * offset of a bad sequence is the caller's job, only once the input is known to be bad.
 *
 * All-ASCII input becomes a one-byte string at memory speed. Other input is decoded (exactly: it
 * is valid UTF-8), usually into a two-byte string, except in the size band where that string
 * would need V8's large-object space (over 128 KiB) while an ASCII rewrite would not: there the
 * rewrite is several times faster (see {@link asciiJson}). The text always parses to the same
 * value as the bytes, but only {@link utf8Decode} is faithful character for character, which is
 * what the caller's exact validator (and its offsets) needs.
 */
export function textForJson(bytes: Uint8Array): string | undefined {
  const n = bytes.byteLength
  const buffer = asBuffer(bytes)
  if (!isUtf8(buffer)) return undefined
  if (isAscii(buffer)) return buffer.toString('latin1')
  if (n > LARGE_STRING_BYTES / 2 && n < LARGE_STRING_BYTES - LARGE_STRING_BYTES / 8) {
    const ascii = asciiJson(buffer)
    if (ascii !== undefined) return ascii
  }
  return buffer.toString('utf8')
}

/** The exact decoding of bytes already known to be well-formed UTF-8 (a BOM is kept, not eaten). */
export function utf8Decode(bytes: Uint8Array): string {
  return asBuffer(bytes).toString('utf8')
}

/**
 * Rewrites valid non-ASCII UTF-8 JSON as ASCII JSON text of the same value: each run of non-ASCII
 * characters becomes `\uXXXX` escapes. Inside strings an escape and the raw character mean the
 * same thing; outside strings both are syntax errors. The point is speed: V8 decodes UTF-8 into
 * a two-byte string slowly, and past 64 Ki characters that string lands in large-object space.
 * Here the bytes become a one-byte string at memory speed (latin1), and `replace` rewrites the
 * non-ASCII runs into one flat one-byte string.
 *
 * Returns `undefined` where the rewrite could change meaning: a raw character right after a
 * backslash, where the escape would turn the invalid `\é` into the valid `\\u00e9`.
 */
function asciiJson(bytes: Buffer): string | undefined {
  const latin1 = bytes.toString('latin1')
  let changesMeaning = false
  const ascii = latin1.replace(NON_ASCII_RUN, (run: string, at: number) => {
    if (latin1.charCodeAt(at - 1) === 0x5c) changesMeaning = true
    // Valid UTF-8 has no ASCII byte inside a multi-byte sequence, so a maximal run of bytes
    // >= 0x80 is a whole number of characters.
    return escapeAll(Buffer.from(run, 'latin1').toString('utf8'))
  })
  return changesMeaning ? undefined : ascii
}

const NON_ASCII_RUN = /[\x80-\xff]+/g
const HEX_DIGITS = '0123456789abcdef'

/** `\uXXXX` for every UTF-16 code unit of `text`. */
function escapeAll(text: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    out += '\\u' + HEX_DIGITS[c >> 12]! + HEX_DIGITS[(c >> 8) & 15]! + HEX_DIGITS[(c >> 4) & 15]! + HEX_DIGITS[c & 15]!
  }
  return out
}

// --- Ed25519 (§6.4) ---------------------------------------------------------------------------
//
// Signing and the signature equation run in OpenSSL. OpenSSL does not do the strict point
// validation of §6.4, so `ed25519.ts` proves every key prime-order first (with
// `primeOrderTest` below) and checks the byte-level signature rules; see its module comment for
// why acceptance by OpenSSL's cofactorless equation then implies every stage-3 rule on R.
//
// The subgroup test: `[L]P = I` by double-and-add over BigInt (`@noble/curves` `isTorsionFree`)
// costs about 1 ms per point. Instead OpenSSL's X25519 ladder computes `u([5L-1]P)`, where
// `u = (1+y)/(1-y)` is the Montgomery coordinate of `P`. The scalar `5L-1` is a multiple of 8 with
// bit 254 set and below 2^255, so X25519's clamping leaves it unchanged. Writing `P = Q + T` with
// `Q` in the prime-order subgroup and `T` in the 8-torsion, `[5L-1]P = -Q` (8 divides `5L-1`, and
// `5L-1 = -1 mod L`), so the ladder returns `u(Q)`. That equals `u(P)` exactly when `P = ±Q`, i.e.
// when `T = I`. A `u` on the quadratic twist (a `y` with no curve point) never passes: the twist
// has order `4L'` for a prime `L'` that divides neither `5L-2` nor `5L`. About 0.1 ms per point.
// Only when the test fails is the failure classified with `@noble/curves`.

/** The field prime p = 2^255 - 19. */
const P = (1n << 255n) - 19n
/** The prime order L of the base point (§6.4). */
const L = (1n << 252n) + 27742317777372353535851937790883648493n

function modP(a: bigint): bigint {
  const r = a % P
  return r < 0n ? r + P : r
}

/** Inverse modulo p by the extended Euclidean algorithm (`a` is never 0 mod p here). */
function invP(a: bigint): bigint {
  let t = 0n
  let nextT = 1n
  let r = P
  let nextR = modP(a)
  while (nextR !== 0n) {
    const q = r / nextR
    ;[t, nextT] = [nextT, t - q * nextT]
    ;[r, nextR] = [nextR, r - q * nextR]
  }
  return modP(t)
}

function littleEndian32(n: bigint): Buffer {
  return Buffer.from(n.toString(16).padStart(64, '0'), 'hex').reverse()
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

/** The y coordinate of a point encoding: little-endian, sign bit (bit 255) cleared. */
function yOf(enc: Uint8Array): bigint {
  let hex = '0x' + HEX[enc[31]! & 0x7f]!
  for (let i = 30; i >= 0; i--) hex += HEX[enc[i]!]!
  return BigInt(hex)
}

type NobleEd25519 = typeof import('@noble/curves/ed25519.js')
let noble: NobleEd25519 | undefined
/**
 * @noble/curves, loaded on first use. Only the rare path needs it (naming the fault of a point
 * that already failed the fast test), and importing it costs ~50 ms, which every process that
 * merely validates documents would otherwise pay at start. Node >= 20.19 loads ESM through
 * `require` synchronously.
 */
function nobleCurve(): NobleEd25519['ed25519'] {
  noble ??= createRequire(import.meta.url)('@noble/curves/ed25519.js') as NobleEd25519
  return noble.ed25519
}

// DER wrappers that turn raw key bytes into the encodings node:crypto imports (RFC 8410).
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')
const X25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex')

/**
 * The X25519 private key whose scalar is `5L - 1` (see above). X25519 clamps a scalar by clearing
 * bits 0-2 and 255 and setting bit 254; this one already has that shape, so OpenSSL multiplies by
 * exactly `5L - 1`.
 */
let probeKey: KeyObject | undefined
function subgroupProbeKey(): KeyObject {
  probeKey ??= createPrivateKey({ key: Buffer.concat([X25519_PKCS8_PREFIX, littleEndian32(5n * L - 1n)]), format: 'der', type: 'pkcs8' })
  return probeKey
}

/**
 * The fast prime-order test. True exactly when the encoding decodes to a curve point in the
 * prime-order subgroup; `undefined` when OpenSSL refused the computation, which happens for
 * small-order inputs (see below).
 */
function inPrimeOrderSubgroup(y: bigint): boolean | undefined {
  // The birational map to Montgomery form, u = (1 + y) / (1 - y) mod p.
  const u = modP((1n + y) * invP(1n - y))
  const uBytes = littleEndian32(u)
  try {
    // A JWK import is several times faster than decoding a DER SubjectPublicKeyInfo.
    const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: uBytes.toString('base64url') }, format: 'jwk' })
    return diffieHellman({ privateKey: subgroupProbeKey(), publicKey }).equals(uBytes)
  } catch {
    // OpenSSL refuses an all-zero shared secret, which is what a small-order input yields.
    return undefined
  }
}

/**
 * Where a 32-byte point encoding stands under the strict decoding of §6.4. Precondition (the
 * caller's byte-level checks): `y < p`, `y ≠ ±1`. Runs the X25519 test above and falls back to
 * `@noble/curves` only to name a failure.
 */
export const primeOrderTest: PrimeOrderTest = (enc) => {
  const prime = inPrimeOrderSubgroup(yOf(enc))
  if (prime === true) return 'prime-order'
  // The rare path, reached only by invalid points: say which rule failed. A definite `false`
  // already ruled out a prime-order point, so no [L]P multiplication is needed here.
  let point
  try {
    point = nobleCurve().Point.fromBytes(enc, false)
  } catch {
    return 'off-curve'
  }
  if (point.isSmallOrder()) return 'small-order'
  // OpenSSL refused a point that is not small-order: not expected, so decide the slow way
  // rather than trust the refusal.
  if (prime === undefined && point.isTorsionFree()) return 'prime-order'
  return 'mixed-order'
}

/** What a verified public key keeps ready on this platform: OpenSSL's key object. */
export type PlatformPublicKey = KeyObject

/** The ready key for a public key that already passed every §6.4 stage-4 rule. */
export function platformPublicKey(bytes: Uint8Array): PlatformPublicKey {
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(bytes).toString('base64url') }, format: 'jwk' })
}

/**
 * OpenSSL's pure Ed25519 verification: the cofactorless equation, `[S]B - [k]A` encoded and
 * compared byte for byte with `Renc`. The caller has run the byte-level checks.
 */
export function verifyWith(key: PlatformPublicKey, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    return nodeVerify(null, message, key, signature)
  } catch {
    return false
  }
}

/** {@link verifyWith} on the libuv threadpool (`node:crypto`'s callback form). */
export function verifyWithAsync(key: PlatformPublicKey, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      nodeVerify(null, message, key, signature, (error, valid) => resolve(error === null && valid))
    } catch {
      resolve(false)
    }
  })
}

/** An OpenSSL signing key from a 32-byte RFC 8032 seed (the caller checked the length). */
export function seedKeyPair(seed: Uint8Array): SeedKeyPair {
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' })
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' })
  return {
    publicKey: Uint8Array.from(Buffer.from(String(jwk.x), 'base64url')),
    sign: (message) => Uint8Array.from(nodeSign(null, message, privateKey)),
  }
}
