/**
 * The Authority's two injected effects besides the store: time and randomness (ARCHITECTURE,
 * "Time, randomness, stores"). Tests and the simulator pass a virtual clock and a seeded source, so
 * a run is reproducible Event for Event.
 * @module
 */
import { randomFillSync } from 'node:crypto'

/** A source of the current instant, in epoch milliseconds. */
export interface Clock {
  now(): number
}

/** `n` random bytes; the Authority draws identifiers from it. */
export type RandomSource = (n: number) => Uint8Array

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() }

/** How many bytes {@link systemRandom} draws from `node:crypto` at a time. */
const POOL_BYTES = 4096
let pool = new Uint8Array(0)
let pooled = 0

/**
 * `node:crypto` random bytes, drawn a pool at a time: one `randomBytes` call costs microseconds
 * (more than the rest of minting an ID), and the Authority mints one or more IDs per Command.
 * Each caller gets its own copy; the pool itself is never handed out.
 */
export const systemRandom: RandomSource = (n) => {
  if (n > POOL_BYTES / 8) return randomFillSync(new Uint8Array(n))
  if (pooled + n > pool.length) {
    pool = randomFillSync(new Uint8Array(POOL_BYTES))
    pooled = 0
  }
  const bytes = pool.slice(pooled, pooled + n)
  pooled += n
  return bytes
}

const DAY_MS = 86_400_000
/** The UTC day {@link timestampOf} formatted last, as its first millisecond; its `YYYY-MM-DDT` text is in {@link stampCodes}. */
let dayStart = Number.NaN
/**
 * The character codes of the last text {@link timestampOf} wrote (`YYYY-MM-DDTHH:MM:SS.sssZ`): the
 * day's part stays for the day, the time's digits are overwritten. Making the string from codes
 * allocates one flat string; a template of padded parts allocates a rope of a dozen pieces, which
 * its first reader flattens into a second copy.
 */
const stampCodes: number[] = Array.from('0000-00-00T00:00:00.000Z', (c) => c.charCodeAt(0))
/** The instant {@link timestampOf} formatted last, and its text: `now` is asked for several times per Command. */
let lastStampMs = Number.NaN
let lastStamp = ''

/** Writes `n` (below 10^width) as `width` decimal digits into {@link stampCodes} at `at`. */
function writeDigits(at: number, width: number, n: number): void {
  for (let i = at + width - 1; i >= at; i--) {
    stampCodes[i] = 0x30 + (n % 10)
    n = Math.floor(n / 10)
  }
}

/** An instant as RFC 3339 UTC text with millisecond precision and the uppercase `Z` that §6.4 asks of signed times. */
export function timestampOf(ms: number): string {
  if (ms === lastStampMs) return lastStamp
  // The same text as `toISOString`, which only runs once per UTC day: the Authority formats
  // several instants per Command (now, lease and offer expiries), nearly always on the same day.
  if (!Number.isSafeInteger(ms)) return new Date(ms).toISOString()
  let inDay = ms - dayStart
  if (!(inDay >= 0 && inDay < DAY_MS)) {
    const text = new Date(ms).toISOString()
    if (text.length !== 24) return text
    dayStart = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS)
    for (let i = 0; i < 24; i++) stampCodes[i] = text.charCodeAt(i)
    inDay = ms - dayStart
  }
  const seconds = Math.floor(inDay / 1000)
  writeDigits(11, 2, Math.floor(seconds / 3600))
  writeDigits(14, 2, Math.floor(seconds / 60) % 60)
  writeDigits(17, 2, seconds % 60)
  writeDigits(20, 3, inDay % 1000)
  lastStampMs = ms
  const c = stampCodes
  // The codes as arguments, not through `apply`, which would copy them into an argument list first.
  lastStamp = String.fromCharCode(c[0]!, c[1]!, c[2]!, c[3]!, c[4]!, c[5]!, c[6]!, c[7]!, c[8]!, c[9]!, c[10]!, c[11]!, c[12]!, c[13]!, c[14]!, c[15]!, c[16]!, c[17]!, c[18]!, c[19]!, c[20]!, c[21]!, c[22]!, c[23]!)
  return lastStamp
}

const HEX_DIGITS = '0123456789abcdef'
/** The text of every ID: the prefix, then 32 hex digits in the 8-4-4-4-12 groups; the digits are overwritten. */
const UUID_TEMPLATE = 'urn:uuid:00000000-0000-0000-0000-000000000000'

/**
 * A generator of `urn:uuid:` identifiers (RFC 9562 version 4) drawn from `random`. Event IDs and
 * every other ID the Authority mints come from it, so a seeded source yields the same IDs.
 */
export function uuidSource(random: RandomSource): () => string {
  // One reused array of character codes per source: an ID is minted for every Event and receipt,
  // so building it allocates only the string itself.
  const codes = Array.from(UUID_TEMPLATE, (c) => c.charCodeAt(0))
  return () => {
    const b = random(16)
    if (b.length < 16) throw new Error('uuidSource: the random source returned fewer than 16 bytes')
    let at = 'urn:uuid:'.length
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) at++ // the '-' of the template stays
      // Version 4 in the high nibble of byte 6, the RFC 9562 variant (10xx) in byte 8.
      const v = i === 6 ? (b[6]! & 0x0f) | 0x40 : i === 8 ? (b[8]! & 0x3f) | 0x80 : b[i]!
      codes[at++] = HEX_DIGITS.charCodeAt(v >> 4)
      codes[at++] = HEX_DIGITS.charCodeAt(v & 0x0f)
    }
    return String.fromCharCode.apply(null, codes)
  }
}
