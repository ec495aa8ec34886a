/**
 * The browser platform of @weft/codec: the same exports as `node.ts`, built only on web APIs that
 * every current browser (and Node, which lets the tests load this module directly) has:
 * `TextDecoder`, `crypto.subtle`, plus `@noble/hashes` and `@noble/curves` for what WebCrypto
 * cannot do synchronously or does not do at all. `package.json` maps the subpath import
 * `#platform` here under the `browser` condition, which bundlers (esbuild, Vite, webpack, Rollup's
 * node-resolve with `browser: true`) set when they build for the web.
 *
 * The protocol rules live in the shared modules; this one supplies the arithmetic. Where it
 * differs from Node is speed (pure-JS BigInt arithmetic instead of OpenSSL), never the answer:
 * `platform.test.ts` and `test/browser.test.ts` (real Chromium) compare both on every vector.
 *
 * Tree shaking: nothing at the top level touches `@noble/curves`, so a bundle that only parses
 * JSON (`@weft/codec/json`) does not carry the curve code.
 * @internal
 * @module
 */
import { ed25519 } from '@noble/curves/ed25519.js'
import { sha256 as nobleSha256, sha512 } from '@noble/hashes/sha2.js'
import type { PrimeOrderTest, SeedKeyPair } from './types.js'

/** Which platform module this is (`'node'` or `'browser'`), for tests and diagnostics. */
export const PLATFORM = 'browser'

// --- bytes (§2) -------------------------------------------------------------------------------

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/** Unpadded base64url of `bytes` (RFC 4648 §5): no `=`, and the unused low bits of a partial group are zero. */
export function base64urlEncode(bytes: Uint8Array): string {
  let out = ''
  const n = bytes.length
  let i = 0
  for (; i + 3 <= n; i += 3) {
    const v = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out += ALPHABET[v >> 18]! + ALPHABET[(v >> 12) & 63]! + ALPHABET[(v >> 6) & 63]! + ALPHABET[v & 63]!
  }
  if (n - i === 1) {
    const v = bytes[i]!
    out += ALPHABET[v >> 2]! + ALPHABET[(v & 3) << 4]!
  } else if (n - i === 2) {
    const v = (bytes[i]! << 8) | bytes[i + 1]!
    out += ALPHABET[v >> 10]! + ALPHABET[(v >> 4) & 63]! + ALPHABET[(v & 15) << 2]!
  }
  return out
}

/** The 6-bit value of each base64url character; -1 for every other code unit. */
const SEXTET = /* @__PURE__ */ (() => {
  const table = new Int8Array(128).fill(-1)
  for (let i = 0; i < 64; i++) table[ALPHABET.charCodeAt(i)] = i
  return table
})()

function sextet(text: string, i: number): number {
  const c = text.charCodeAt(i)
  const v = c < 128 ? SEXTET[c]! : -1
  if (v < 0) throw new RangeError('not base64url')
  return v
}

/**
 * The bytes of `text`, which the caller has already proven canonical unpadded base64url (§2).
 * The decoder is strict anyway (a character outside the alphabet or a 4n+1 length throws), so a
 * broken precondition fails loudly instead of decoding to something.
 */
export function base64urlDecodeCanonical(text: string): Uint8Array {
  const n = text.length
  if (n % 4 === 1) throw new RangeError('not base64url')
  const out = new Uint8Array(Math.floor((n * 3) / 4))
  let o = 0
  let i = 0
  for (; i + 4 <= n; i += 4) {
    const v = (sextet(text, i) << 18) | (sextet(text, i + 1) << 12) | (sextet(text, i + 2) << 6) | sextet(text, i + 3)
    out[o++] = v >> 16
    out[o++] = (v >> 8) & 0xff
    out[o++] = v & 0xff
  }
  if (n - i === 2) {
    out[o++] = (sextet(text, i) << 2) | (sextet(text, i + 1) >> 4)
  } else if (n - i === 3) {
    const v = (sextet(text, i) << 12) | (sextet(text, i + 1) << 6) | sextet(text, i + 2)
    out[o++] = v >> 10
    out[o++] = (v >> 2) & 0xff
  }
  return out
}

/** SHA-256 of `bytes` (32 bytes), synchronous (`@noble/hashes`): WebCrypto's digest is async only. */
export function sha256(bytes: Uint8Array): Uint8Array {
  return nobleSha256(bytes)
}

const HEX = /* @__PURE__ */ Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

/** SHA-256 of `bytes` as 64 lower-case hexadecimal digits (the §2 content-hash digits). */
export function sha256Hex(bytes: Uint8Array): string {
  const digest = nobleSha256(bytes)
  let out = ''
  for (let i = 0; i < digest.length; i++) out += HEX[digest[i]!]!
  return out
}

/**
 * The UTF-8 length of `text`, counted per code unit without encoding it. An unpaired surrogate
 * counts 3 bytes, as Node's `Buffer.byteLength` counts it (the U+FFFD it would be written as).
 */
export function utf8ByteLength(text: string): number {
  let n = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4
      i++
    } else n += 3
  }
  return n
}

// --- strict JSON text (§6.4 stage 1) ----------------------------------------------------------

// `ignoreBOM: true` keeps a leading U+FEFF in the text instead of silently dropping it: the
// decoding must be faithful (the strict-JSON caller rejects a BOM itself, before decoding).
let fatalDecoder: InstanceType<typeof TextDecoder> | undefined
let lenientDecoder: InstanceType<typeof TextDecoder> | undefined

/**
 * The text to hand to `JSON.parse` for UTF-8 `bytes`, or `undefined` when the bytes are not
 * well-formed UTF-8: a fatal `TextDecoder` refuses exactly the ill-formed sequences of the
 * Unicode standard (no overlongs, surrogates, values above U+10FFFF or truncated sequences), as
 * Node's `isUtf8` does. The exact offset is the caller's job, once the input is known to be bad.
 */
export function textForJson(bytes: Uint8Array): string | undefined {
  fatalDecoder ??= new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  try {
    return fatalDecoder.decode(bytes)
  } catch {
    return undefined
  }
}

/** The exact decoding of bytes already known to be well-formed UTF-8 (a BOM is kept, not eaten). */
export function utf8Decode(bytes: Uint8Array): string {
  lenientDecoder ??= new TextDecoder('utf-8', { ignoreBOM: true })
  return lenientDecoder.decode(bytes)
}

// --- Ed25519 (§6.4) ---------------------------------------------------------------------------
//
// `@noble/curves` decides point membership by arithmetic: `[L]P = I` (about 1 ms per point in
// pure JS; each key is tested once, when imported). Verification checks the cofactorless
// equation itself, exactly as OpenSSL does on Node (`[S]B - [k]A` encoded and compared byte for
// byte with `Renc`), rather than noble's `verify`, which is cofactored and would accept an `R`
// with a torsion component that §6.4 rejects. The asynchronous verification hands the equation
// to WebCrypto (`crypto.subtle`), whose engines (BoringSSL in Chromium, NSS in Firefox,
// CoreCrypto in Safari) evaluate the same cofactorless equation off the main thread.

/** The prime order L of the base point (§6.4). */
const L = (1n << 252n) + 27742317777372353535851937790883648493n

/** The little-endian integer of `bytes`. */
function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!)
  return n
}

/**
 * Where a 32-byte point encoding stands under the strict decoding of §6.4. Precondition (the
 * caller's byte-level checks): `y < p`, `y ≠ ±1`. `fromBytes(enc, false)` is noble's strict
 * RFC 8032 decoding: it throws when `y` has no `x` on the curve.
 */
export const primeOrderTest: PrimeOrderTest = (enc) => {
  let point
  try {
    point = ed25519.Point.fromBytes(enc, false)
  } catch {
    return 'off-curve'
  }
  if (point.isSmallOrder()) return 'small-order'
  return point.isTorsionFree() ? 'prime-order' : 'mixed-order'
}

type EdwardsPoint = ReturnType<typeof ed25519.Point.fromBytes>
type WebCryptoKey = Awaited<ReturnType<SubtleCrypto['importKey']>>
type SubtleCrypto = typeof globalThis.crypto.subtle

/**
 * What a verified public key keeps ready in the browser: its bytes and decoded point for the
 * synchronous equation, and (once the first asynchronous verification asked for it) WebCrypto's
 * key, or `null` when this WebCrypto cannot import Ed25519 keys.
 */
export interface PlatformPublicKey {
  readonly bytes: Uint8Array
  readonly point: EdwardsPoint
  webKey: Promise<WebCryptoKey | null> | undefined
}

/** The ready key for a public key that already passed every §6.4 stage-4 rule. */
export function platformPublicKey(bytes: Uint8Array): PlatformPublicKey {
  return { bytes: Uint8Array.from(bytes), point: ed25519.Point.fromBytes(bytes, false), webKey: undefined }
}

/**
 * Pure Ed25519 verification by the cofactorless equation: `R' = [S]B - [k]A` with
 * `k = SHA-512(Renc || A || M) mod L`, accepted exactly when the canonical encoding of `R'` equals
 * `Renc` byte for byte. The caller has checked the length and `S < L`. With `A` prime-order,
 * `R'` is in the prime-order subgroup, so acceptance implies every stage-3 rule on `R` (the same
 * argument as for OpenSSL, in `ed25519.ts`).
 */
export function verifyWith(key: PlatformPublicKey, message: Uint8Array, signature: Uint8Array): boolean {
  const rEnc = signature.subarray(0, 32)
  const s = littleEndian(signature.subarray(32, 64))
  const hash = sha512.create().update(rEnc).update(key.bytes).update(message).digest()
  const k = littleEndian(hash) % L
  // Public data only (signature, key, message), so the variable-time multiplications are fine.
  const expected = ed25519.Point.BASE.multiplyUnsafe(s).subtract(key.point.multiplyUnsafe(k)).toBytes()
  let diff = 0
  for (let i = 0; i < 32; i++) diff |= expected[i]! ^ rEnc[i]!
  return diff === 0
}

function subtle(): SubtleCrypto | undefined {
  return (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle
}

/**
 * The key imported into WebCrypto once per verified key (raw, verify only), or `null` where
 * WebCrypto is missing (an insecure context) or has no Ed25519 (Chromium before 137, Safari
 * before 17): then the asynchronous path falls back to {@link verifyWith}, with the same answers.
 */
function webKeyOf(key: PlatformPublicKey): Promise<WebCryptoKey | null> {
  if (key.webKey === undefined) {
    const webCrypto = subtle()
    key.webKey =
      webCrypto === undefined
        ? Promise.resolve(null)
        : webCrypto.importKey('raw', key.bytes as Uint8Array<ArrayBuffer>, { name: 'Ed25519' }, false, ['verify']).then(
            (k) => k,
            () => null,
          )
  }
  return key.webKey
}

/**
 * {@link verifyWith} evaluated by WebCrypto (`crypto.subtle.verify`), off the calling thread in
 * browsers; the byte-level checks already ran. Without a WebCrypto Ed25519 (or when the engine
 * throws instead of answering) it computes the equation here, so the answer never depends on
 * which engine ran it.
 */
export async function verifyWithAsync(key: PlatformPublicKey, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  const webKey = await webKeyOf(key)
  if (webKey === null) return verifyWith(key, message, signature)
  try {
    return await subtle()!.verify({ name: 'Ed25519' }, webKey, signature as Uint8Array<ArrayBuffer>, message as Uint8Array<ArrayBuffer>)
  } catch {
    // An engine that refuses the operation (not the signature: a refusal is `false`, not an
    // error) must not turn a valid signature into an invalid one; the equation here decides.
    return verifyWith(key, message, signature)
  }
}

/**
 * A signing key from a 32-byte RFC 8032 seed (the caller checked the length), signing
 * synchronously with `@noble/curves` (deterministic RFC 8032 §5.1.6, so the same bytes as
 * OpenSSL). The seed stays in script memory; `webCryptoKeyPair` keeps it out of reach instead.
 */
export function seedKeyPair(seed: Uint8Array): SeedKeyPair {
  const secret = Uint8Array.from(seed)
  return {
    publicKey: ed25519.getPublicKey(secret),
    sign: (message) => ed25519.sign(message, secret),
  }
}
