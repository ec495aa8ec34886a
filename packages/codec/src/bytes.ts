/**
 * Byte-level encodings of the protocol (§2): canonical unpadded base64url, `sha256:` content
 * hashes and UTF-8. The platform module (`#platform`: Node's `Buffer` and `node:crypto`, or web
 * APIs and `@noble/hashes` in a browser) does the work; this module adds the strictness the
 * protocol asks for on top of it, identically on both.
 * @module
 */
import { base64urlDecodeCanonical, base64urlEncode, sha256 as platformSha256, sha256Hex } from '#platform'
import { UsageError } from './errors.js'
import { isCanonicalBase64url } from './formats.js'

/**
 * Encodes bytes as canonical unpadded base64url (§2, RFC 4648 §5): the URL-safe alphabet, no `=`
 * padding, zero unused pad bits. The output always satisfies {@link isCanonicalBase64url}.
 */
export function encodeBase64url(bytes: Uint8Array): string {
  return base64urlEncode(bytes)
}

/**
 * Decodes canonical unpadded base64url (§2), or returns `undefined` for any other spelling:
 * characters outside the URL-safe alphabet (including `+`, `/`, whitespace), `=` padding, a length
 * of 4n+1, or nonzero unused pad bits. §2 requires rejecting a noncanonical spelling even when
 * it decodes to the expected bytes, so no lenient decoding happens here.
 *
 * @example
 * ```ts
 * decodeBase64url('AQI')  // Uint8Array [1, 2]
 * decodeBase64url('AQJ')  // undefined: the unused low bits of `J` are not zero
 * decodeBase64url('AQI=') // undefined: padding
 * ```
 */
export function decodeBase64url(text: string): Uint8Array | undefined {
  // Node's own decoder skips unknown characters and ignores pad bits, so the platform decoder
  // may only see text that already passed the canonical check.
  if (typeof text !== 'string' || !isCanonicalBase64url(text)) return undefined
  return base64urlDecodeCanonical(text)
}

/** SHA-256 of `bytes` (32 bytes). */
export function sha256(bytes: Uint8Array): Uint8Array {
  return platformSha256(bytes)
}

/**
 * The protocol's content-hash spelling of SHA-256 (§2): `sha256:` followed by 64 lower-case
 * hexadecimal digits.
 */
export function sha256Tagged(bytes: Uint8Array): string {
  return 'sha256:' + sha256Hex(bytes)
}

/**
 * Index of the first unpaired UTF-16 surrogate in `text`, or -1 when the text is well formed
 * (every code unit belongs to a Unicode scalar value and so has a UTF-8 encoding).
 */
export function loneSurrogateIndex(text: string): number {
  if (isWellFormed(text)) return -1
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0xd800 || c > 0xdfff) continue
    if (c <= 0xdbff) {
      const d = text.charCodeAt(i + 1) // NaN past the end
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++
        continue
      }
    }
    return i
  }
  return -1
}

// String.prototype.isWellFormed (ES2024) is native in every Node the package supports (>= 20.19);
// the fallback keeps the module loadable elsewhere. In a `u` regex a surrogate pair is one code
// point, so only unpaired surrogates match.
const nativeWellFormed = (String.prototype as { isWellFormed?: () => boolean }).isWellFormed
const LONE_SURROGATE = /\p{Surrogate}/u

/** Whether `text` has no unpaired surrogate. */
function isWellFormed(text: string): boolean {
  return nativeWellFormed ? nativeWellFormed.call(text) : !LONE_SURROGATE.test(text)
}

const encoder = new TextEncoder()

/**
 * UTF-8 encoding of `text`. Unlike `TextEncoder`, which silently substitutes U+FFFD for an
 * unpaired surrogate, this refuses text that has no exact UTF-8 form: bytes that get hashed or
 * signed must mean what the text meant.
 * @throws {@link UsageError} when `text` contains an unpaired surrogate.
 */
export function utf8Encode(text: string): Uint8Array {
  const bad = loneSurrogateIndex(text)
  if (bad >= 0) throw new UsageError(`utf8Encode: unpaired surrogate at index ${bad}; the text has no UTF-8 encoding`)
  return encoder.encode(text)
}
