/**
 * The fast paths behind `time.ts`: a cached RFC 3339 formatter, a day-cached instant reader and a
 * UUID writer that reuses its character codes. Each sits behind the same {@link TimeCodec}
 * interface as a plain reference built on `Date` and naive string building; `time.ts` is built on
 * the fast one and `time.test.ts` proves the two equal (fast-check differential tests), so a speed-up
 * can never change an answer.
 *
 * Why caches at all: the Authority formats several instants per Command (now, lease and offer
 * expiries), reads several more (expiries, deadlines, `issuedAt`), and mints one or more IDs per
 * Command; nearly all of those instants fall on one of a few UTC days.
 *
 * Browser-safe: plain ECMAScript, no `node:` module. Module-level caches are only read and written
 * within one synchronous call, so interleaved callers cannot see each other's half-written state.
 * @internal
 * @module
 */
import { parseTimestamp } from './timestamp.js'

/** The operations that have a fast and a plain path; both implementations answer identically. */
export interface TimeCodec {
  /** `new Date(ms).toISOString()`, throwing `RangeError` where it does. */
  readonly formatInstant: (ms: number) => string
  /** Exactly `Date.parse(text)`: epoch milliseconds, or `NaN`. */
  readonly parseInstant: (text: string) => number
  /** A `urn:uuid:` version 4 URN of the first 16 bytes of `bytes` (RFC 9562 §5.4); assumes 16 or more. */
  readonly urnUuidOf: (bytes: Uint8Array) => string
  /**
   * A §2 timestamp as epoch milliseconds, every fraction digit past the millisecond kept as a
   * fraction (so two instants compare as their texts do, §2). Given a text known to be a §2
   * timestamp (a schema checked it, or {@link formatInstant} wrote it): the fast path reads other
   * texts as `Date.parse` does, not as the plain one.
   */
  readonly timestampMs: (text: string) => number
}

// --- the plain reference -----------------------------------------------------------------------

/** A §2 timestamp as epoch milliseconds (fraction digits past the millisecond kept), `NaN` for any other text. */
export function timestampMs(text: string): number {
  const t = parseTimestamp(text)
  if (t === undefined) return Number.NaN
  return t.seconds * 1000 + (t.fraction === '' ? 0 : Number(`0.${t.fraction}`) * 1000)
}

const hexByte = (byte: number): string => byte.toString(16).padStart(2, '0')

/** The reference: `Date` and naive string building, obviously right and slow. */
export const plainTime: TimeCodec = {
  formatInstant: (ms) => new Date(ms).toISOString(),
  parseInstant: (text) => Date.parse(text),
  timestampMs,
  urnUuidOf(bytes) {
    const b = Uint8Array.from(bytes.subarray(0, 16))
    // RFC 9562 §5.4: version 4 in the high nibble of byte 6, variant 10xx in byte 8.
    b[6] = (b[6]! & 0x0f) | 0x40
    b[8] = (b[8]! & 0x3f) | 0x80
    const h = Array.from(b, hexByte).join('')
    return `urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
  },
}

// --- formatting ---------------------------------------------------------------------------------

const DAY_MS = 86_400_000
/** The UTC day {@link formatCached} wrote last, as its first millisecond; its `YYYY-MM-DDT` text is in {@link stampCodes}. */
let dayStart = Number.NaN
/**
 * The character codes of the last text {@link formatCached} wrote (`YYYY-MM-DDTHH:MM:SS.sssZ`): the
 * day's part stays for the day, the time's digits are overwritten. Making the string from codes
 * allocates one flat string; a template of padded parts allocates a rope of a dozen pieces, which
 * its first reader flattens into a second copy.
 */
const stampCodes: number[] = Array.from('0000-00-00T00:00:00.000Z', (c) => c.charCodeAt(0))
/** The instant {@link formatCached} wrote last, and its text: the same `now` is formatted several times per Command. */
let lastStampMs = Number.NaN
let lastStamp = ''

/** Writes `n` (below 10^width) as `width` decimal digits into {@link stampCodes} at `at`. */
function writeDigits(at: number, width: number, n: number): void {
  for (let i = at + width - 1; i >= at; i--) {
    stampCodes[i] = 0x30 + (n % 10)
    n = Math.floor(n / 10)
  }
}

/** `toISOString`'s text, which is asked of `Date` once per UTC day; the time of day is written from its digits. */
export function formatCached(ms: number): string {
  if (ms === lastStampMs) return lastStamp
  // Fractions, NaN and instants past ±2^53 go to Date, which also throws where it must.
  if (!Number.isSafeInteger(ms)) return new Date(ms).toISOString()
  let inDay = ms - dayStart
  if (!(inDay >= 0 && inDay < DAY_MS)) {
    const text = new Date(ms).toISOString()
    // Years outside 0000–9999 take the six-digit extended form; those are not cached.
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
  lastStamp = String.fromCharCode(
    c[0]!,
    c[1]!,
    c[2]!,
    c[3]!,
    c[4]!,
    c[5]!,
    c[6]!,
    c[7]!,
    c[8]!,
    c[9]!,
    c[10]!,
    c[11]!,
    c[12]!,
    c[13]!,
    c[14]!,
    c[15]!,
    c[16]!,
    c[17]!,
    c[18]!,
    c[19]!,
    c[20]!,
    c[21]!,
    c[22]!,
    c[23]!,
  )
  return lastStamp
}

// --- parsing ------------------------------------------------------------------------------------

/**
 * How many UTC days are remembered: the Authority's clock, the expiries a lease or an offer reaches
 * into the next days, the deadlines of Missions and WorkItems.
 */
const DAYS = 8

/** The remembered days, as `yyyymmdd` numbers of their `YYYY-MM-DDT` text, and their first milliseconds. */
const dayKeys = new Array<number>(DAYS).fill(-1)
const dayStarts = new Array<number>(DAYS).fill(0)
let nextSlot = 0

/** The text {@link parseCached} read last, and what it read. */
let lastText = ''
let lastMs = Number.NaN

/**
 * `Date.parse`, with a text in the `toISOString` form (or that form without the fraction) on one
 * of the last few UTC days read taken from its digits.
 */
export function parseCached(text: string): number {
  // The same instant is often read twice in a row (a lease's expiry, by its liveness and its deadline).
  if (text === lastText) return lastMs
  const ms = readInstant(text)
  lastText = text
  lastMs = ms
  return ms
}

/** {@link parseCached} without its memory of the last text. */
function readInstant(text: string): number {
  const inDay = isoTimeOfDay(text)
  const key = inDay >= 0 ? dayKeyOf(text) : -1
  if (key >= 0) {
    for (let i = 0; i < DAYS; i++) if (dayKeys[i] === key) return dayStarts[i]! + inDay
  }
  const ms = Date.parse(text)
  // The day is remembered from a text whose time of day the digits give, so its start is exact.
  if (key >= 0 && Number.isSafeInteger(ms)) {
    dayKeys[nextSlot] = key
    dayStarts[nextSlot] = ms - inDay
    nextSlot = (nextSlot + 1) % DAYS
  }
  return ms
}

/** `yyyymmdd` of a text starting `YYYY-MM-DDT`, or -1. */
function dayKeyOf(text: string): number {
  if (text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d || text.charCodeAt(10) !== 0x54) return -1
  const century = twoDigits(text, 0)
  const year = twoDigits(text, 2)
  const month = twoDigits(text, 5)
  const date = twoDigits(text, 8)
  if ((century | year | month | date) < 0) return -1
  return ((century * 100 + year) * 100 + month) * 100 + date
}

/**
 * The milliseconds into its day of a text in the `toISOString` form (`....-..-..THH:MM:SS.sssZ`) or
 * that form without the fraction (`....-..-..THH:MM:SSZ`), or -1 for another form, a non-digit, or
 * a time `Date.parse` does not read within the day (a leap second, 24:00).
 */
export function isoTimeOfDay(text: string): number {
  const length = text.length
  let millis = 0
  if (length === 24) {
    if (text.charCodeAt(23) !== 0x5a || text.charCodeAt(19) !== 0x2e) return -1
    millis = twoDigits(text, 20) * 10 + digit(text, 22)
  } else if (length !== 20 || text.charCodeAt(19) !== 0x5a) {
    return -1
  }
  if (text.charCodeAt(13) !== 0x3a || text.charCodeAt(16) !== 0x3a) return -1
  const hours = twoDigits(text, 11)
  const minutes = twoDigits(text, 14)
  const seconds = twoDigits(text, 17)
  if ((hours | minutes | seconds | millis) < 0 || hours >= 24 || minutes >= 60 || seconds >= 60) return -1
  return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis
}

/** The decimal digit at `at`, or a large negative number when there is none. */
function digit(text: string, at: number): number {
  const d = text.charCodeAt(at) - 0x30
  return d >= 0 && d <= 9 ? d : -1000
}

/** The two-digit number at `at`, negative when a digit is missing. */
function twoDigits(text: string, at: number): number {
  return digit(text, at) * 10 + digit(text, at + 1)
}

// --- UUIDs --------------------------------------------------------------------------------------

const HEX_DIGITS = '0123456789abcdef'
/**
 * The text of every ID: the prefix, then 32 hex digits in the 8-4-4-4-12 groups. The digits are
 * overwritten on each ID, so minting one allocates only the string itself (an ID is minted for
 * every Event and receipt).
 */
const uuidCodes: number[] = Array.from('urn:uuid:00000000-0000-0000-0000-000000000000', (c) => c.charCodeAt(0))

/** Writes the URN of `b` into {@link uuidCodes} and makes the string. */
export function urnUuidCached(b: Uint8Array): string {
  let at = 'urn:uuid:'.length
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) at++ // the '-' of the template stays
    // RFC 9562 §5.4: version 4 in the high nibble of byte 6, the variant (10xx) in byte 8.
    const v = i === 6 ? (b[6]! & 0x0f) | 0x40 : i === 8 ? (b[8]! & 0x3f) | 0x80 : b[i]!
    uuidCodes[at++] = HEX_DIGITS.charCodeAt(v >> 4)
    uuidCodes[at++] = HEX_DIGITS.charCodeAt(v & 0x0f)
  }
  return String.fromCharCode.apply(null, uuidCodes)
}

// --- §2 timestamps as milliseconds -------------------------------------------------------------

/** {@link timestampMs}'s value of each millisecond fraction `.000`–`.999`, float rounding included. */
const FRACTION_MS: readonly number[] = Array.from({ length: 1000 }, (_, i) => {
  const digits = String(i).padStart(3, '0').replace(/0+$/, '')
  return digits === '' ? 0 : Number(`0.${digits}`) * 1000
})

/**
 * {@link timestampMs} of a text known to be a §2 timestamp, to the last bit. Its common form,
 * `YYYY-MM-DDTHH:MM:SS.sssZ` (what `toISOString` writes), is exactly the ECMAScript date-time
 * string format, read by {@link parseCached}; the fraction is then added as {@link timestampMs} adds it.
 */
export function knownTimestampMsCached(text: string): number {
  if (text.length !== 24 || text.charCodeAt(23) !== 0x5a || text.charCodeAt(19) !== 0x2e) return timestampMs(text)
  const ms = parseCached(text)
  const fraction = ((ms % 1000) + 1000) % 1000
  return ms - fraction + FRACTION_MS[fraction]!
}

/** The fast paths, answering exactly as {@link plainTime} does (`timestampMs` on §2 timestamps). */
export const fastTime: TimeCodec = {
  formatInstant: formatCached,
  parseInstant: parseCached,
  timestampMs: knownTimestampMsCached,
  urnUuidOf: urnUuidCached,
}
