/**
 * The Authority's two injected effects besides the store: time and randomness (ARCHITECTURE,
 * "Time, randomness, stores"). Tests and the simulator pass a virtual clock and a seeded source, so
 * a run is reproducible Event for Event.
 * @module
 */
import { randomBytes } from 'node:crypto'

/** A source of the current instant, in epoch milliseconds. */
export interface Clock {
  now(): number
}

/** `n` random bytes; the Authority draws identifiers from it. */
export type RandomSource = (n: number) => Uint8Array

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() }

/** `node:crypto` random bytes. */
export const systemRandom: RandomSource = (n) => randomBytes(n)

/** An instant as RFC 3339 UTC text with millisecond precision and the uppercase `Z` that §6.4 asks of signed times. */
export function timestampOf(ms: number): string {
  return new Date(ms).toISOString()
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

/**
 * A generator of `urn:uuid:` identifiers (RFC 9562 version 4) drawn from `random`. Event IDs and
 * every other ID the Authority mints come from it, so a seeded source yields the same IDs.
 */
export function uuidSource(random: RandomSource): () => string {
  return () => {
    const b = random(16)
    if (b.length < 16) throw new Error('uuidSource: the random source returned fewer than 16 bytes')
    // Version 4 in the high nibble of byte 6, the RFC 9562 variant (10xx) in byte 8.
    const byte = (i: number): string => HEX[i === 6 ? (b[6]! & 0x0f) | 0x40 : i === 8 ? (b[8]! & 0x3f) | 0x80 : b[i]!]!
    let hex = ''
    for (let i = 0; i < 16; i++) hex += (i === 4 || i === 6 || i === 8 || i === 10 ? '-' : '') + byte(i)
    return `urn:uuid:${hex}`
  }
}
