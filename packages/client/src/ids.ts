/**
 * Identifiers and times the client mints for a Command envelope: `urn:uuid:` Action and
 * correlation IDs (§15.1) and RFC 3339 UTC issue times (§2, §6.4).
 * @module
 */
import { UsageError } from '@weft/codec/errors'

/** A source of random bytes: returns `size` fresh bytes. Inject a seeded one for reproducible tests. */
export type RandomSource = (size: number) => Uint8Array

/** A clock in milliseconds since the Unix epoch, like `Date.now`. */
export type Clock = () => number

/** `getRandomValues` fills at most 65536 bytes per call (WebCrypto's quota). */
const QUOTA = 65_536

/**
 * The default {@link RandomSource}: the platform CSPRNG through WebCrypto's
 * `globalThis.crypto.getRandomValues`, the same function in Node (>= 20) and in browsers, so the
 * client needs no `node:crypto` and bundles for a web page as is. IDs and nonces must be
 * unpredictable (§6.3 challenges, §15.1 Action IDs), hence no `Math.random` fallback.
 * @throws UsageError when the platform has no WebCrypto.
 */
export const systemRandom: RandomSource = (size) => {
  const crypto = (globalThis as { crypto?: { getRandomValues?: <T extends ArrayBufferView>(array: T) => T } }).crypto
  if (typeof crypto?.getRandomValues !== 'function') throw new UsageError('systemRandom: globalThis.crypto.getRandomValues is not available; pass a random source')
  const bytes = new Uint8Array(size)
  for (let at = 0; at < size; at += QUOTA) crypto.getRandomValues(bytes.subarray(at, Math.min(size, at + QUOTA)))
  return bytes
}

const hex = (byte: number): string => byte.toString(16).padStart(2, '0')

/**
 * A new random (version 4) UUID as a `urn:uuid:` URI, the form of every ID the client mints.
 * @throws UsageError when `random` returns fewer than 16 bytes.
 * @example
 * ```ts
 * newUrnUuid(systemRandom) // 'urn:uuid:3b241101-e2bb-4255-8caf-4136c566a962'
 * ```
 */
export function newUrnUuid(random: RandomSource): string {
  const bytes = Uint8Array.from(random(16))
  if (bytes.length < 16) throw new UsageError(`random source returned ${bytes.length} bytes, a UUID needs 16`)
  // RFC 9562 §5.4: version 4 in the high nibble of byte 6, variant 10xx in byte 8.
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const h = Array.from(bytes.subarray(0, 16), hex).join('')
  return `urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/**
 * The instant `ms` as an RFC 3339 UTC timestamp ending in uppercase `Z`, the only form a signed
 * time may take (§6.4).
 * @throws UsageError when the clock reading is not a finite time.
 */
export function timestampOf(ms: number): string {
  if (!Number.isFinite(ms)) throw new UsageError(`clock returned ${String(ms)}, expected milliseconds since the epoch`)
  return new Date(ms).toISOString()
}
