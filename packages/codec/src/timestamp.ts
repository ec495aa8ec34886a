/**
 * Protocol timestamps (§2): the lexical text is kept beside the parsed instant, and instants are
 * compared exactly, every fractional digit included (no truncation to milliseconds, no rounding).
 * @module
 */
import { isProtocolTimestamp } from './formats.js'

/**
 * A timestamp within the §2 profile. `text` is exactly what was received (it is what gets hashed
 * and signed); `seconds` and `fraction` are the instant in UTC.
 */
export interface ProtocolTimestamp {
  /** The serialized text, never rewritten. */
  readonly text: string
  /** Whole seconds since 1970-01-01T00:00:00Z (negative before; safe integers for years 1–9999). */
  readonly seconds: number
  /** Fractional-second digits with trailing zeros removed (`''` for none): `.5000` and `.5` are equal. */
  readonly fraction: string
  /** Whether the text ends in an uppercase `Z` (required of protected signed times, §6.4). */
  readonly utcZ: boolean
}

/** Days from 1970-01-01 to the given proleptic Gregorian date. */
function daysFromEpoch(year: number, month: number, day: number): number {
  // Count from 0000-03-01 so the leap day is the last of the counted year.
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const mp = (month + 9) % 12
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

/**
 * Parses a §2 timestamp, or returns `undefined` when the text is outside the profile (invalid
 * date, leap second, year 0000, `-00:00`, ...).
 */
export function parseTimestamp(text: string): ProtocolTimestamp | undefined {
  if (!isProtocolTimestamp(text)) return undefined
  const year = Number(text.slice(0, 4))
  const month = Number(text.slice(5, 7))
  const day = Number(text.slice(8, 10))
  const hour = Number(text.slice(11, 13))
  const minute = Number(text.slice(14, 16))
  const second = Number(text.slice(17, 19))
  let i = 19
  let fraction = ''
  if (text.charCodeAt(i) === 0x2e) {
    let j = i + 1
    while (j < text.length && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++
    fraction = text.slice(i + 1, j).replace(/0+$/, '')
    i = j
  }
  let offsetSeconds = 0
  const zone = text[i]
  if (zone === '+' || zone === '-') {
    const sign = zone === '+' ? 1 : -1
    offsetSeconds = sign * (Number(text.slice(i + 1, i + 3)) * 3600 + Number(text.slice(i + 4, i + 6)) * 60)
  }
  const seconds = daysFromEpoch(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds
  return { text, seconds, fraction, utcZ: zone === 'Z' }
}

/** Orders two instants exactly: negative, zero or positive like `a - b`. */
export function compareTimestamps(a: ProtocolTimestamp, b: ProtocolTimestamp): number {
  if (a.seconds !== b.seconds) return a.seconds < b.seconds ? -1 : 1
  // Same second: compare the fractional digits as decimals of equal length.
  const n = Math.max(a.fraction.length, b.fraction.length)
  const fa = a.fraction.padEnd(n, '0')
  const fb = b.fraction.padEnd(n, '0')
  return fa === fb ? 0 : fa < fb ? -1 : 1
}

/**
 * Whether instant `t` lies in the half-open key-validity interval of §6.4:
 * `validFrom <= t`, and `t < validUntil` and `t < revokedAt` where those are present.
 */
export function withinInterval(
  t: ProtocolTimestamp,
  interval: { readonly validFrom: ProtocolTimestamp; readonly validUntil?: ProtocolTimestamp | undefined; readonly revokedAt?: ProtocolTimestamp | undefined },
): boolean {
  if (compareTimestamps(interval.validFrom, t) > 0) return false
  if (interval.validUntil && compareTimestamps(t, interval.validUntil) >= 0) return false
  if (interval.revokedAt && compareTimestamps(t, interval.revokedAt) >= 0) return false
  return true
}
