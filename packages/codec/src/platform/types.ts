/**
 * The types both platform modules (`node.ts`, `browser.ts`) share. Types only: nothing here
 * exists at run time, so importing it never pulls one platform into the other.
 * @internal
 * @module
 */

/**
 * Where a point encoding stands in the strict §6.4 decoding, once the byte-level rules passed
 * (`y < p`, and `y ≠ ±1`, whose points the caller classifies itself): a point of the prime-order
 * subgroup, no curve point at all, a non-identity point of the 8-torsion, or a point with both a
 * prime-order and a torsion component.
 */
export type PrimeOrderClass = 'prime-order' | 'off-curve' | 'small-order' | 'mixed-order'

/** Classifies a 32-byte point encoding that passed the byte-level rules (see {@link PrimeOrderClass}). */
export type PrimeOrderTest = (encoding: Uint8Array) => PrimeOrderClass

/** A platform signing key made from an RFC 8032 seed: its public key and a pure-Ed25519 signer. */
export interface SeedKeyPair {
  /** The 32-byte public key. */
  readonly publicKey: Uint8Array
  /** Signs `message` with pure Ed25519 (RFC 8032 §5.1.6); returns 64 bytes. */
  readonly sign: (message: Uint8Array) => Uint8Array
}

/**
 * What a platform module exports, `Key` being its own ready form of a verified public key (an
 * OpenSSL key object on Node, a decoded point and a WebCrypto key in a browser). The shared
 * modules import these names from `#platform`; the platform tests hold both modules to this shape.
 */
export interface Platform<Key> {
  /** Which module this is. */
  readonly PLATFORM: 'node' | 'browser'
  /** Unpadded base64url (RFC 4648 §5) with zero pad bits. */
  readonly base64urlEncode: (bytes: Uint8Array) => string
  /** Decodes text already proven canonical base64url (§2). */
  readonly base64urlDecodeCanonical: (text: string) => Uint8Array
  /** SHA-256, 32 bytes. */
  readonly sha256: (bytes: Uint8Array) => Uint8Array
  /** SHA-256 as 64 lower-case hex digits. */
  readonly sha256Hex: (bytes: Uint8Array) => string
  /** UTF-8 length of a string (an unpaired surrogate counts 3). */
  readonly utf8ByteLength: (text: string) => number
  /** Text for `JSON.parse` of UTF-8 bytes, or `undefined` when they are not well-formed UTF-8. */
  readonly textForJson: (bytes: Uint8Array) => string | undefined
  /** Faithful decoding of well-formed UTF-8 (a BOM kept). */
  readonly utf8Decode: (bytes: Uint8Array) => string
  /** The subgroup test of §6.4 on an encoding that passed the byte-level rules. */
  readonly primeOrderTest: PrimeOrderTest
  /** The ready key of a public key that passed every stage-4 rule. */
  readonly platformPublicKey: (bytes: Uint8Array) => Key
  /** The cofactorless equation; the byte-level signature checks already ran. */
  readonly verifyWith: (key: Key, message: Uint8Array, signature: Uint8Array) => boolean
  /** The same, off the calling thread. */
  readonly verifyWithAsync: (key: Key, message: Uint8Array, signature: Uint8Array) => Promise<boolean>
  /** A signing key from a 32-byte RFC 8032 seed. */
  readonly seedKeyPair: (seed: Uint8Array) => SeedKeyPair
}
