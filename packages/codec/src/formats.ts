/**
 * The protocol's own format rules (§2), shared by every Weft package that validates text:
 * absolute RFC 3986 URI identifiers, the RFC 3339 timestamp profile, `sha256:` hashes,
 * canonical unpadded base64url, and the duration form. One implementation, used by the generated validators, the codec
 * and the Ajv reference in tests alike.
 * @module
 */
import { UsageError } from './errors.js'

// Character classes of RFC 3986 §2, as bit flags over ASCII.
const UNRESERVED = 1 // ALPHA DIGIT - . _ ~
const SUB_DELIM = 2 // ! $ & ' ( ) * + , ; =
const HEX = 4
const SCHEME_TAIL = 8 // ALPHA DIGIT + - .
const ALPHA = 16
const DIGIT = 32

const classes = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c)
  let f = 0
  const isAlpha = /[A-Za-z]/.test(ch)
  const isDigit = /[0-9]/.test(ch)
  if (isAlpha || isDigit || '-._~'.includes(ch)) f |= UNRESERVED
  if ("!$&'()*+,;=".includes(ch)) f |= SUB_DELIM
  if (isDigit || /[A-Fa-f]/.test(ch)) f |= HEX
  if (isAlpha || isDigit || '+-.'.includes(ch)) f |= SCHEME_TAIL
  if (isAlpha) f |= ALPHA
  if (isDigit) f |= DIGIT
  classes[c] = f
}

function cls(s: string, i: number): number {
  const c = s.charCodeAt(i)
  return c < 128 ? classes[c]! : 0
}

/** Index after a `pct-encoded` triplet at `i`, or -1. */
function pct(s: string, i: number, end: number): number {
  return i + 2 < end && cls(s, i + 1) & HEX && cls(s, i + 2) & HEX ? i + 3 : -1
}

/**
 * Scans characters allowed in a path, query or fragment (`pchar` plus `extra`) from `i` and
 * returns the index of the first other character (or -1 on a bad percent escape).
 */
function scanChars(s: string, i: number, end: number, allowSlash: boolean, allowQuestion: boolean): number {
  while (i < end) {
    const c = s.charCodeAt(i)
    if (c === 0x25 /* % */) {
      i = pct(s, i, end)
      if (i < 0) return -1
      continue
    }
    if (c < 128 && (classes[c]! & (UNRESERVED | SUB_DELIM) || c === 0x3a /* : */ || c === 0x40) /* @ */) {
      i++
    } else if (allowSlash && c === 0x2f) {
      i++
    } else if (allowQuestion && c === 0x3f) {
      i++
    } else {
      return i
    }
  }
  return i
}

function isIPv4(s: string, start: number, end: number): boolean {
  let parts = 0
  let i = start
  while (parts < 4) {
    const from = i
    while (i < end && cls(s, i) & DIGIT) i++
    const len = i - from
    if (len === 0 || len > 3) return false
    if (len > 1 && s.charCodeAt(from) === 0x30) return false // dec-octet has no leading zero
    if (Number(s.slice(from, i)) > 255) return false
    parts++
    if (parts < 4) {
      if (s.charCodeAt(i) !== 0x2e) return false
      i++
    }
  }
  return i === end
}

function isIPv6(s: string, start: number, end: number): boolean {
  // RFC 3986 §3.2.2 IPv6address: up to eight h16 groups, one "::" elision, optional IPv4 tail.
  let groups = 0
  let elided = false
  let i = start
  if (s.startsWith('::', i)) {
    elided = true
    i += 2
    if (i === end) return true
  }
  while (i < end) {
    const from = i
    while (i < end && cls(s, i) & HEX && i - from < 5) i++
    const len = i - from
    if (i < end && s.charCodeAt(i) === 0x2e) {
      // the last 32 bits as dotted IPv4
      if (!isIPv4(s, from, end)) return false
      groups += 2
      i = end
      break
    }
    if (len === 0 || len > 4) return false
    groups++
    if (i === end) break
    if (s.charCodeAt(i) !== 0x3a) return false
    i++
    if (s.charCodeAt(i) === 0x3a) {
      if (elided) return false
      elided = true
      i++
      if (i === end) break
    } else if (i === end) {
      return false // a trailing single colon
    }
  }
  return elided ? groups <= 7 : groups === 8
}

function isIPLiteral(s: string, start: number, end: number): boolean {
  // "[" ( IPv6address / IPvFuture ) "]", brackets excluded from [start, end)
  const c = s.charCodeAt(start)
  if (c === 0x76 || c === 0x56 /* v V */) {
    let i = start + 1
    const hexFrom = i
    while (i < end && cls(s, i) & HEX) i++
    if (i === hexFrom || s.charCodeAt(i) !== 0x2e) return false
    i++
    if (i === end) return false
    for (; i < end; i++) {
      if (!(cls(s, i) & (UNRESERVED | SUB_DELIM)) && s.charCodeAt(i) !== 0x3a) return false
    }
    return true
  }
  return isIPv6(s, start, end)
}

/** Validates `authority` in [start, end). */
function isAuthority(s: string, start: number, end: number): boolean {
  let i = start
  const at = s.indexOf('@', start)
  if (at >= 0 && at < end) {
    // userinfo = *( unreserved / pct-encoded / sub-delims / ":" )
    while (i < at) {
      const c = s.charCodeAt(i)
      if (c === 0x25) {
        i = pct(s, i, at)
        if (i < 0) return false
      } else if (cls(s, i) & (UNRESERVED | SUB_DELIM) || c === 0x3a) i++
      else return false
    }
    i = at + 1
  }
  let hostEnd: number
  if (s.charCodeAt(i) === 0x5b /* [ */) {
    const close = s.indexOf(']', i)
    if (close < 0 || close >= end || !isIPLiteral(s, i + 1, close)) return false
    hostEnd = close + 1
  } else {
    // reg-name (which also spells every IPv4address)
    while (i < end) {
      const c = s.charCodeAt(i)
      if (c === 0x25) {
        i = pct(s, i, end)
        if (i < 0) return false
      } else if (cls(s, i) & (UNRESERVED | SUB_DELIM)) i++
      else break
    }
    hostEnd = i
  }
  if (hostEnd === end) return true
  if (s.charCodeAt(hostEnd) !== 0x3a) return false
  for (let j = hostEnd + 1; j < end; j++) if (!(cls(s, j) & DIGIT)) return false
  return true
}

const SIMPLE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:(?!\/\/)[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/

/**
 * Is `s` an absolute RFC 3986 URI (`scheme ":" hier-part [ "?" query ] [ "#" fragment ]`),
 * consuming the whole string? §2: identifiers are URIs, not IRIs, so any non-ASCII character,
 * whitespace, control character or trailing line terminator makes the value invalid.
 */
export function isAbsoluteUri(s: string): boolean {
  // Fast path for the common identifier shape (`urn:...`, `tag:...`): a scheme, then only path
  // characters with no authority, percent escape, query or fragment. Anything else is parsed.
  if (SIMPLE_URI.test(s)) return true
  const end = s.length
  if (end === 0 || !(cls(s, 0) & ALPHA)) return false
  let i = 1
  while (i < end && cls(s, i) & SCHEME_TAIL) i++
  if (i === end || s.charCodeAt(i) !== 0x3a) return false
  i++
  if (s.startsWith('//', i)) {
    const from = i + 2
    let to = from
    while (to < end) {
      const c = s.charCodeAt(to)
      if (c === 0x2f || c === 0x3f || c === 0x23) break
      to++
    }
    if (!isAuthority(s, from, to)) return false
    i = to
  }
  // path-abempty / path-absolute / path-rootless / path-empty: pchar and "/"
  i = scanChars(s, i, end, true, false)
  if (i < 0) return false
  if (i < end && s.charCodeAt(i) === 0x3f) {
    i = scanChars(s, i + 1, end, true, true)
    if (i < 0) return false
  }
  if (i < end && s.charCodeAt(i) === 0x23) {
    i = scanChars(s, i + 1, end, true, true)
    if (i < 0) return false
  }
  return i === end
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

function twoDigits(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48
  const b = s.charCodeAt(i + 1) - 48
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1
}

/**
 * Is `s` an RFC 3339 `date-time` within the protocol's timestamp profile (§2)? Year 0001–9999,
 * a valid Gregorian date, seconds 00–59 (no leap second), optional fraction of one or more digits,
 * `T`/`Z` in either case, a numeric offset up to ±23:59 but never `-00:00`.
 */
export function isProtocolTimestamp(s: string): boolean {
  // YYYY-MM-DDTHH:MM:SS = 19 characters, then [.f+] then Z or ±HH:MM
  const n = s.length
  if (n < 20) return false
  const y1 = twoDigits(s, 0)
  const y2 = twoDigits(s, 2)
  if (y1 < 0 || y2 < 0) return false
  const year = y1 * 100 + y2
  if (year === 0) return false
  if (s.charCodeAt(4) !== 0x2d || s.charCodeAt(7) !== 0x2d) return false
  const month = twoDigits(s, 5)
  const day = twoDigits(s, 8)
  if (month < 1 || month > 12 || day < 1) return false
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  if (day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!)) return false
  const t = s.charCodeAt(10)
  if (t !== 0x54 && t !== 0x74) return false
  const hour = twoDigits(s, 11)
  const minute = twoDigits(s, 14)
  const second = twoDigits(s, 17)
  if (s.charCodeAt(13) !== 0x3a || s.charCodeAt(16) !== 0x3a) return false
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return false
  let i = 19
  if (s.charCodeAt(i) === 0x2e) {
    i++
    const from = i
    while (i < n && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++
    if (i === from) return false
  }
  if (i === n) return false
  const z = s.charCodeAt(i)
  if (z === 0x5a || z === 0x7a) return i + 1 === n
  if (z !== 0x2b && z !== 0x2d) return false
  if (n !== i + 6 || s.charCodeAt(i + 3) !== 0x3a) return false
  const oh = twoDigits(s, i + 1)
  const om = twoDigits(s, i + 4)
  if (oh < 0 || oh > 23 || om < 0 || om > 59) return false
  // §2: the unknown-local-offset spelling -00:00 is not permitted
  return !(z === 0x2d && oh === 0 && om === 0)
}

/** Is `s` a v0.1 content hash: `sha256:` followed by 64 lower-case hexadecimal digits (§2)? */
export function isSha256(s: string): boolean {
  if (s.length !== 71 || !s.startsWith('sha256:')) return false
  for (let i = 7; i < 71; i++) {
    const c = s.charCodeAt(i)
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false
  }
  return true
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
const B64_VALUE = new Int8Array(128).fill(-1)
for (let i = 0; i < 64; i++) B64_VALUE[B64URL.charCodeAt(i)] = i

/**
 * Is `s` canonical unpadded base64url (§2, RFC 4648 §5)? The URL-safe alphabet, no `=`, a length
 * that encodes whole bytes, and zero unused pad bits: a noncanonical spelling of the same bytes
 * is rejected.
 */
export function isCanonicalBase64url(s: string): boolean {
  const n = s.length
  if (n % 4 === 1) return false
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c >= 128 || B64_VALUE[c]! < 0) return false
  }
  if (n === 0) return true
  const last = B64_VALUE[s.charCodeAt(n - 1)]!
  // 2 trailing chars carry 8 bits (4 unused), 3 carry 16 bits (2 unused)
  if (n % 4 === 2) return (last & 0x0f) === 0
  if (n % 4 === 3) return (last & 0x03) === 0
  return true
}

/** §2 `duration`: ISO 8601 restricted to days, hours, minutes and (fractional) seconds, at least one of them. */
const PROTOCOL_DURATION = /^P(?!$)(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/

/**
 * Milliseconds of a §2 duration (e.g. `PT5M`, `P1DT2H`, `PT0.5S`), rounded to the millisecond.
 * Retry policies state their `maxDelay` this way (§11.4), and Workers and Authorities must read it alike.
 * @throws UsageError when `text` is not such a duration.
 */
export function durationMs(text: string): number {
  const m = PROTOCOL_DURATION.exec(text)
  if (m === null) throw new UsageError(`${JSON.stringify(text)} is not an ISO 8601 duration of days, hours, minutes and seconds`)
  const [, d = '0', h = '0', min = '0', sec = '0'] = m
  return Math.round(((Number(d) * 24 + Number(h)) * 60 + Number(min)) * 60_000 + Number(sec) * 1000)
}
