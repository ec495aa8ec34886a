/**
 * Strict pure Ed25519 for the Signed Document Verification Profile (§6.4): exact encoding checks
 * of public keys (stage 4) and signatures (stage 3), verification (stage 6) and signing.
 *
 * ## Platforms
 *
 * The rules live here; the arithmetic comes from the platform module (`#platform`). On Node,
 * signing and the signature equation run in `node:crypto` (OpenSSL), and the subgroup test on
 * OpenSSL's X25519 ladder (see `platform/node.ts`). In a browser, `@noble/curves` does the point
 * arithmetic and the synchronous equation, and WebCrypto (`crypto.subtle`) the asynchronous one
 * (see `platform/browser.ts`). Both evaluate the *cofactorless* equation and give the same answer
 * for every input; the tests compare them vector by vector, in Node and in Chromium.
 *
 * ## Where the time goes, and why it is safe to spend it only once
 *
 * Neither OpenSSL nor WebCrypto does the strict point validation §6.4 asks for: they neither
 * reject a public key outside the prime-order subgroup nor report *why* an `R` is unacceptable.
 * This module adds those checks.
 *
 * - A public key is checked once, by {@link importPublicKey}, which returns a
 *   {@link VerifiedPublicKey} holding the platform's ready key. Every later
 *   {@link verifyEd25519} with it costs one verification plus a few byte comparisons.
 * - {@link checkSignatureEncoding} is the exact stage-3 classifier. Stage 3 precedes key
 *   resolution and the equation, so a mixed-order `R` must be reported as a stage-3 fault even
 *   though the equation would reject it too; the check therefore always decides `[L]R = I`.
 * - {@link verifyEd25519} does not repeat the point checks on `R`. The cofactorless equation is
 *   evaluated by computing `R' = [S]B - [k]A` and comparing the canonical encoding of `R'` byte
 *   for byte with `Renc`. With `A` proven prime-order, `[S]B - [k]A` lies in the prime-order
 *   subgroup, so an accepted `Renc` is the canonical encoding of a prime-order point (or of the
 *   identity): every stage-3 rule on `R` is implied by acceptance. `S < L` and the byte-level `R`
 *   rules are still checked here because they are nearly free (and the browser's equation needs
 *   `S < L` as a precondition).
 * @module
 */
import { platformPublicKey, primeOrderTest, seedKeyPair, verifyWith, verifyWithAsync, type PlatformPublicKey } from '#platform'
import { UsageError } from './errors.js'

/** The result of a strict §6.4 encoding check: success, or a stable kebab-case reason. */
export type KeyCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string }

/**
 * Why a public key fails the strict §6.4 point rules (stage 4). The names follow the fault
 * names of the protocol's cryptography vectors where one exists.
 */
export type PublicKeyFault =
  | 'public-key-wrong-length'
  | 'public-key-noncanonical'
  | 'public-key-negative-zero'
  | 'public-key-off-curve'
  | 'public-key-identity'
  | 'public-key-small-order'
  | 'public-key-mixed-order'

/** Why a signature fails the strict §6.4 encoding rules for `Renc` and `Senc` (stage 3). */
export type SignatureFault =
  | 'signature-wrong-length'
  | 'signature-s-out-of-range'
  | 'signature-r-noncanonical'
  | 'signature-r-negative-zero'
  | 'signature-r-off-curve'
  | 'signature-r-small-order'
  | 'signature-r-mixed-order'

/** The prime order L of the base point (§6.4). */
const L = (1n << 252n) + 27742317777372353535851937790883648493n
/** L as 32 little-endian bytes, for the byte-wise `S < L` comparison. */
const L_BYTES = littleEndian32(L)

let subgroupChecks = 0

/**
 * How many prime-order-subgroup tests (`[L]P = I`, §6.4) this module has run since it was
 * loaded. A diagnostic for tests and benchmarks: it shows that a {@link VerifiedPublicKey} is
 * checked once and then reused, and that {@link verifyEd25519} itself runs none.
 */
export function subgroupCheckCount(): number {
  return subgroupChecks
}

/** `n` (below 2^256) as 32 little-endian bytes. */
function littleEndian32(n: bigint): Uint8Array {
  const out = new Uint8Array(32)
  for (let i = 0; i < 32; i++, n >>= 8n) out[i] = Number(n & 0xffn)
  return out
}

/** Is the y field of `enc` (sign bit ignored) at least p? Only 19 values in [p, 2^255) are. */
function yNotCanonical(enc: Uint8Array): boolean {
  if ((enc[31]! & 0x7f) !== 0x7f) return false
  for (let i = 30; i >= 1; i--) if (enc[i] !== 0xff) return false
  return enc[0]! >= 0xed
}

/** Is the y field exactly 1 (the identity when x = 0) or p - 1 (the order-2 point (0, -1))? */
function yIsOneOrMinusOne(enc: Uint8Array): 1 | -1 | 0 {
  const top = enc[31]! & 0x7f
  if (top === 0) {
    if (enc[0] !== 1) return 0
    for (let i = 1; i <= 30; i++) if (enc[i] !== 0) return 0
    return 1
  }
  if (top === 0x7f && enc[0] === 0xec) {
    for (let i = 1; i <= 30; i++) if (enc[i] !== 0xff) return 0
    return -1
  }
  return 0
}

/** Is the little-endian scalar `s` (32 bytes) below L? Compared byte-wise, never reduced. */
function scalarBelowL(sig: Uint8Array, offset: number): boolean {
  for (let i = 31; i >= 0; i--) {
    const a = sig[offset + i]!
    const b = L_BYTES[i]!
    if (a !== b) return a < b
  }
  return false // equal to L
}

type PointClass = 'prime-order' | 'identity' | 'noncanonical' | 'negative-zero' | 'off-curve' | 'small-order' | 'mixed-order'

/** Classifies a 32-byte point encoding under the strict RFC 8032 decoding of §6.4. */
function classifyPoint(enc: Uint8Array): PointClass {
  if (yNotCanonical(enc)) return 'noncanonical'
  const special = yIsOneOrMinusOne(enc)
  if (special !== 0) {
    // y = ±1 forces x = 0, whose only canonical sign bit is 0.
    if (enc[31]! & 0x80) return 'negative-zero'
    return special === 1 ? 'identity' : 'small-order'
  }
  // The subgroup test proper (`[L]P = I`), by the platform's arithmetic.
  subgroupChecks++
  return primeOrderTest(enc)
}

const PUBLIC_KEY_FAULT: Record<Exclude<PointClass, 'prime-order'>, PublicKeyFault> = {
  identity: 'public-key-identity',
  noncanonical: 'public-key-noncanonical',
  'negative-zero': 'public-key-negative-zero',
  'off-curve': 'public-key-off-curve',
  'small-order': 'public-key-small-order',
  'mixed-order': 'public-key-mixed-order',
}

const OK: KeyCheck = Object.freeze({ ok: true })

function failure(reason: string): { readonly ok: false; readonly reason: string } {
  return Object.freeze({ ok: false, reason })
}

/**
 * The strict public-key rules of §6.4 (stage 4): exactly 32 bytes, a canonical RFC 8032
 * encoding (`y < p`, no negative zero), a point on the curve, not the identity, and in the
 * prime-order subgroup (`[L]A = I`). Small-order and mixed-order keys are rejected by
 * arithmetic, not by a blacklist.
 */
export function checkPublicKeyEncoding(key: Uint8Array): KeyCheck {
  if (!(key instanceof Uint8Array) || key.length !== 32) return failure('public-key-wrong-length')
  const cls = classifyPoint(key)
  return cls === 'prime-order' ? OK : failure(PUBLIC_KEY_FAULT[cls])
}

/**
 * The byte-level subset of the stage-3 signature rules (§6.4): length 64, `S < L` without
 * reduction, `Renc` with `y < p`, no negative zero, and not the order-2 point `(0, -1)`. It
 * decides no subgroup membership, so it cannot classify every fault; it is what
 * {@link verifyEd25519} checks before the equation, where acceptance implies the rest (see the
 * module comment). A caller that defers the full {@link checkSignatureEncoding} must still run
 * it before reporting any failure of a later stage, so that a stage-3 fault is reported as such.
 */
export function precheckSignatureEncoding(signature: Uint8Array): KeyCheck {
  const reason = byteLevelSignatureFault(signature)
  return reason === undefined ? OK : failure(reason)
}

function byteLevelSignatureFault(signature: Uint8Array): SignatureFault | undefined {
  if (!(signature instanceof Uint8Array) || signature.length !== 64) return 'signature-wrong-length'
  if (!scalarBelowL(signature, 32)) return 'signature-s-out-of-range'
  if (yNotCanonical(signature)) return 'signature-r-noncanonical'
  const special = yIsOneOrMinusOne(signature)
  if (special !== 0 && signature[31]! & 0x80) return 'signature-r-negative-zero'
  if (special === -1) return 'signature-r-small-order'
  return undefined
}

/**
 * The exact stage-3 signature encoding rules of §6.4: a 64-byte `Renc || Senc`, `Renc` a
 * canonical point encoding on the curve with `[L]R = I` (the identity itself is permitted;
 * non-identity small-order and mixed-order `R` fail), and `Senc` an unsigned little-endian
 * `S` with `0 <= S < L`, never reduced modulo L.
 */
export function checkSignatureEncoding(signature: Uint8Array): KeyCheck {
  const early = byteLevelSignatureFault(signature)
  if (early !== undefined) return failure(early)
  const r = signature.subarray(0, 32)
  const cls = classifyPoint(r)
  switch (cls) {
    case 'prime-order':
    case 'identity':
      return OK
    case 'noncanonical':
      return failure('signature-r-noncanonical')
    case 'negative-zero':
      return failure('signature-r-negative-zero')
    case 'off-curve':
      return failure('signature-r-off-curve')
    case 'small-order':
      return failure('signature-r-small-order')
    case 'mixed-order':
      return failure('signature-r-mixed-order')
  }
}

/**
 * An Ed25519 public key that passed {@link checkPublicKeyEncoding} (§6.4). Only
 * {@link importPublicKey} makes one; it keeps the platform's key ready (an OpenSSL key object on
 * Node, the decoded point and, once used asynchronously, a WebCrypto key in a browser), so
 * verifying with it repeats no point check.
 */
export interface VerifiedPublicKey {
  /** The 32-byte encoding (a copy on every read). */
  readonly bytes: Uint8Array
}

class StrictPublicKey implements VerifiedPublicKey {
  readonly #bytes: Uint8Array
  readonly #ready: PlatformPublicKey

  constructor(bytes: Uint8Array, ready: PlatformPublicKey) {
    this.#bytes = bytes
    this.#ready = ready
    Object.freeze(this)
  }

  get bytes(): Uint8Array {
    return this.#bytes.slice()
  }

  /** The platform key of a key made by importPublicKey; `undefined` for anything else (a forged look-alike included). */
  static readyKeyOf(key: unknown): PlatformPublicKey | undefined {
    return typeof key === 'object' && key !== null && #ready in key ? (key as StrictPublicKey).#ready : undefined
  }
}

/**
 * Is `value` a {@link VerifiedPublicKey} made by {@link importPublicKey}, i.e. a key that passed
 * the strict §6.4 point rules? Also narrows the result of {@link importPublicKey}.
 */
export function isVerifiedPublicKey(value: unknown): value is VerifiedPublicKey {
  return StrictPublicKey.readyKeyOf(value) !== undefined
}

/**
 * Checks a raw 32-byte Ed25519 public key against the strict rules of §6.4 and, when it passes,
 * returns a {@link VerifiedPublicKey} to verify with any number of times. The checks, including
 * the subgroup test, run here and only here.
 *
 * @example
 * ```ts
 * const key = importPublicKey(bytes)
 * if (!isVerifiedPublicKey(key)) return reject(key.reason)
 * verifyEd25519(key, signingBytes, signature)
 * ```
 */
export function importPublicKey(key: Uint8Array): VerifiedPublicKey | { readonly ok: false; readonly reason: string } {
  const check = checkPublicKeyEncoding(key)
  if (!check.ok) return check
  const bytes = Uint8Array.from(key)
  return new StrictPublicKey(bytes, platformPublicKey(bytes))
}

/**
 * Verifies a pure Ed25519 signature (RFC 8032, not Ed25519ctx or Ed25519ph) over `message`:
 * stage 6 of §6.4. Returns `false` for any signature that is not 64 bytes, has `S >= L`, or does
 * not satisfy the cofactorless equation; because `key` is prime-order, acceptance also implies
 * every stage-3 rule on `R` (see the module comment). Synchronous on every platform: OpenSSL on
 * Node, `@noble/curves` in a browser.
 * @throws {@link UsageError} when `key` was not made by {@link importPublicKey}.
 */
export function verifyEd25519(key: VerifiedPublicKey, message: Uint8Array, signature: Uint8Array): boolean {
  const ready = StrictPublicKey.readyKeyOf(key)
  if (ready === undefined) throw new UsageError('verifyEd25519: the key was not made by importPublicKey')
  if (byteLevelSignatureFault(signature) !== undefined) return false
  return verifyWith(ready, message, signature)
}

/**
 * {@link verifyEd25519} with the equation evaluated off the calling thread: on the libuv
 * threadpool on Node (`node:crypto`'s callback form), by WebCrypto (`crypto.subtle.verify`, the
 * key imported once per {@link VerifiedPublicKey}) in a browser. The calling thread goes on with
 * other work, and on Node several checks run on several cores at once. Same answers as
 * {@link verifyEd25519}; the byte-level checks run before it returns.
 * @throws {@link UsageError} when `key` was not made by {@link importPublicKey}.
 */
export function verifyEd25519Async(key: VerifiedPublicKey, message: Uint8Array, signature: Uint8Array): Promise<boolean> {
  const ready = StrictPublicKey.readyKeyOf(key)
  if (ready === undefined) throw new UsageError('verifyEd25519Async: the key was not made by importPublicKey')
  if (byteLevelSignatureFault(signature) !== undefined) return Promise.resolve(false)
  return verifyWithAsync(ready, message, signature)
}

/** An Ed25519 signing key (§6.4): its public key and a pure-Ed25519 signing function. */
export interface Ed25519KeyPair {
  /** The 32-byte public key (a copy on every read). */
  readonly publicKey: Uint8Array
  /** Signs `message` with pure Ed25519 (deterministic, RFC 8032 §5.1.6); returns 64 bytes. */
  sign(message: Uint8Array): Uint8Array
}

/**
 * An Ed25519 key pair from a 32-byte RFC 8032 seed (the private key of RFC 8032 §5.1.5), for the
 * signature envelope of §6.4. It signs synchronously: through `node:crypto` on Node, with
 * `@noble/curves` in a browser (the same deterministic bytes). The seed is kept in script memory;
 * in a browser, {@link webCryptoKeyPair} keeps it in a non-extractable WebCrypto key instead.
 * @throws {@link UsageError} when `seed` is not 32 bytes.
 */
export function keyPairFromSeed(seed: Uint8Array): Ed25519KeyPair {
  if (!(seed instanceof Uint8Array) || seed.length !== 32) throw new UsageError('keyPairFromSeed: the seed must be 32 bytes')
  const pair = seedKeyPair(seed)
  const publicKey = pair.publicKey
  const signWith = pair.sign
  return Object.freeze({
    get publicKey(): Uint8Array {
      return publicKey.slice()
    },
    sign(message: Uint8Array): Uint8Array {
      return signWith(message)
    },
  })
}

/**
 * An Ed25519 key pair that signs asynchronously, such as one held by WebCrypto
 * ({@link webCryptoKeyPair}): the private key can stay non-extractable, out of reach of the
 * page's script. Pass it to `signAsync`.
 */
export interface AsyncEd25519KeyPair {
  /** The 32-byte public key (a copy on every read). */
  readonly publicKey: Uint8Array
  /** Signs `message` with pure Ed25519 (RFC 8032 §5.1.6); resolves to 64 bytes. */
  sign(message: Uint8Array): Promise<Uint8Array>
}

/** The WebCrypto of the platform: `globalThis.crypto.subtle` in browsers and in Node >= 20. */
type Subtle = typeof globalThis.crypto.subtle
function subtleCrypto(caller: string): Subtle {
  const subtle = (globalThis as { crypto?: { subtle?: Subtle } }).crypto?.subtle
  if (subtle === undefined) throw new UsageError(`${caller}: WebCrypto (globalThis.crypto.subtle) is not available; in a browser it needs a secure context (https or localhost)`)
  return subtle
}

/** Unpadded base64url for a JWK member (RFC 7518 §2), without Node's Buffer. */
function jwkBase64url(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/**
 * An {@link AsyncEd25519KeyPair} held by WebCrypto, from a 32-byte RFC 8032 seed and its public
 * key. The private key is imported non-extractable: once this resolves, script can sign with it
 * but never read it back (wipe `seed` afterwards). The pair is checked before it is returned: the
 * public key must pass the strict §6.4 rules and verify a signature made with the seed, so a seed
 * and public key that do not belong together are refused rather than producing signatures no
 * Registry accepts. Works wherever `globalThis.crypto.subtle` implements Ed25519 (Chromium,
 * Firefox, Safari 17+, Node >= 20).
 * @throws UsageError (as a rejection) when the seed or public key is malformed, WebCrypto is missing, or the two do not match.
 */
export async function webCryptoKeyPair(seed: Uint8Array, publicKey: Uint8Array): Promise<AsyncEd25519KeyPair> {
  if (!(seed instanceof Uint8Array) || seed.length !== 32) throw new UsageError('webCryptoKeyPair: the seed must be 32 bytes')
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) throw new UsageError('webCryptoKeyPair: the public key must be 32 bytes')
  const subtle = subtleCrypto('webCryptoKeyPair')
  const strict = importPublicKey(publicKey)
  if (!isVerifiedPublicKey(strict)) throw new UsageError(`webCryptoKeyPair: the public key fails the §6.4 rules (${strict.reason})`)
  const algorithm = { name: 'Ed25519' }
  let privateKey: Awaited<ReturnType<Subtle['importKey']>>
  try {
    privateKey = await subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', d: jwkBase64url(seed), x: jwkBase64url(publicKey) }, algorithm, false, ['sign'])
  } catch (thrown) {
    // Node checks that `x` belongs to `d` at import; browsers may not (see below).
    throw new UsageError(`webCryptoKeyPair: the seed does not belong to the public key, or WebCrypto has no Ed25519 (${thrown instanceof Error ? thrown.message : String(thrown)})`)
  }
  const signWith = async (message: Uint8Array): Promise<Uint8Array> => new Uint8Array(await subtle.sign(algorithm, privateKey, message as Uint8Array<ArrayBuffer>))
  // Some engines import a JWK whose `x` does not match `d` and sign with `d` regardless: prove the pair.
  const probe = new Uint8Array([0x77, 0x65, 0x66, 0x74])
  if (!verifyEd25519(strict, probe, await signWith(probe))) throw new UsageError('webCryptoKeyPair: the seed does not belong to the public key')
  const bytes = Uint8Array.from(publicKey)
  return Object.freeze({
    get publicKey(): Uint8Array {
      return bytes.slice()
    },
    sign: signWith,
  })
}
