/**
 * Strict JSON parsing: stage 1 of the Signed Document Verification Profile (§6.4) and the
 * duplicate-member rule of §17.4.
 *
 * Exactly one JSON value (RFC 8259) encoded as UTF-8, with no byte-order mark, nothing but
 * whitespace after the value, and no object that names a member twice once escapes are decoded.
 * Two things are deliberately *not* stage-1 failures: a number outside the finite binary64 range
 * parses to ±Infinity, and an escaped unpaired surrogate (`"\ud800"`) parses to that lone code
 * unit. Both are I-JSON data-model violations that §6.4 classifies at stage 5, so they are carried
 * through to `canonicalize` (`jcs.ts`), which rejects them.
 *
 * Speed comes from letting V8's `JSON.parse` do the parsing and checking. A duplicate name
 * collapses two members into one key, so a cheap upper bound on the member names in the text is
 * compared with the own keys of the parsed objects (a walk that also measures nesting): equal
 * counts prove there is no duplicate. Only when something may be wrong does a slower exact
 * validator walk the text to find the first failure and its byte offset.
 *
 * Decoding and UTF-8 validation come from the platform module (`#platform`): Node's simdutf
 * (`isUtf8`, `isAscii`) or, in a browser, a fatal `TextDecoder`. Both refuse exactly the same
 * bytes, and the offset of the first bad sequence is computed here, so results, offsets and
 * messages are the same everywhere.
 * @module
 */
import { textForJson, utf8ByteLength, utf8Decode } from '#platform'
import { loneSurrogateIndex } from './bytes.js'
import { ProtocolError, UsageError } from './errors.js'

/** A JSON value as parsed: objects are plain objects whose own keys are exactly the member names. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [name: string]: JsonValue }

/** Limits of {@link parseStrictJson}. */
export interface StrictJsonOptions {
  /** Largest accepted input in UTF-8 bytes; default {@link DEFAULT_MAX_JSON_BYTES} (1 MiB). */
  readonly maxBytes?: number
  /**
   * Deepest accepted nesting of arrays and objects; default {@link DEFAULT_MAX_JSON_DEPTH} (256).
   * A scalar has depth 0, `[]` depth 1, `[{}]` depth 2.
   */
  readonly maxDepth?: number
}

/** Default {@link StrictJsonOptions.maxBytes}: 1 MiB. */
export const DEFAULT_MAX_JSON_BYTES = 1024 * 1024

/** Default {@link StrictJsonOptions.maxDepth}: 256 levels of arrays and objects. */
export const DEFAULT_MAX_JSON_DEPTH = 256

/**
 * Why the input is not strict JSON (all are §6.4 stage-1 failures, wire code `PROTOCOL_VIOLATION`):
 * - `invalid-utf8`: the bytes are not well-formed UTF-8 (for string input: an unpaired surrogate
 *   in the text itself, which no UTF-8 can encode);
 * - `byte-order-mark`: the input starts with U+FEFF;
 * - `syntax`: not RFC 8259 JSON;
 * - `trailing-data`: something other than whitespace follows the one value;
 * - `duplicate-member`: an object names a member twice after escapes are decoded (§17.4);
 * - `too-large`, `too-deep`: over {@link StrictJsonOptions.maxBytes} or
 *   {@link StrictJsonOptions.maxDepth}.
 */
export type StrictJsonFailure = 'invalid-utf8' | 'byte-order-mark' | 'syntax' | 'trailing-data' | 'duplicate-member' | 'too-large' | 'too-deep'

/**
 * Outcome of {@link parseStrictJson}. On failure, `offset` is a byte offset into the UTF-8 input
 * (for string input, into its UTF-8 encoding) where the failure starts; `message` says what was
 * wrong for a human reader.
 */
export type StrictJsonResult = { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly reason: StrictJsonFailure; readonly offset: number; readonly message: string }

/**
 * Parses exactly one strict JSON value (§6.4 stage 1, §17.4). Checks run in this order, and the
 * first failing one is reported: size, byte-order mark, UTF-8, then JSON syntax, depth, duplicate
 * member names and trailing data in text order (the earliest in the text wins).
 *
 * @param input - UTF-8 bytes, or text already decoded (checked as if it were its UTF-8 encoding).
 * @throws {@link UsageError} for an input that is neither a string nor a `Uint8Array`, or an
 * option that is not a non-negative integer. Nothing else is thrown.
 *
 * @example
 * ```ts
 * parseStrictJson('{"a":1,"\\u0061":2}')
 * // { ok: false, reason: 'duplicate-member', offset: 7, message: 'duplicate member name "a" at byte 7' }
 * parseStrictJson(new TextEncoder().encode('[1e400]')) // { ok: true, value: [Infinity] }: stage 5 rejects it
 * ```
 */
export function parseStrictJson(input: Uint8Array | string, options: StrictJsonOptions = {}): StrictJsonResult {
  const maxBytes = limit(options.maxBytes, DEFAULT_MAX_JSON_BYTES, 'maxBytes')
  const maxDepth = limit(options.maxDepth, DEFAULT_MAX_JSON_DEPTH, 'maxDepth')
  if (typeof input === 'string') return parseString(input, maxBytes, maxDepth)
  if (input instanceof Uint8Array) return parseBytes(input, maxBytes, maxDepth)
  throw new UsageError('parseStrictJson: input must be a Uint8Array or a string')
}

/**
 * {@link parseStrictJson} for callers that only want the wire outcome.
 * @throws {@link ProtocolError} `PROTOCOL_VIOLATION` with `details: { reason, offset }` when the
 * input is not strict JSON (§6.4 stage 1).
 */
export function parseStrictJsonOrThrow(input: Uint8Array | string, options?: StrictJsonOptions): JsonValue {
  const result = parseStrictJson(input, options)
  if (result.ok) return result.value
  throw new ProtocolError('PROTOCOL_VIOLATION', result.message, { details: { reason: result.reason, offset: result.offset } })
}

function limit(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 0) throw new UsageError(`parseStrictJson: ${name} must be a non-negative integer`)
  return value
}

function failure(reason: StrictJsonFailure, offset: number, message: string): StrictJsonResult {
  return { ok: false, reason, offset, message }
}

/** The same words for text and bytes (a refusal must not depend on the input's form), without the size: text over the limit is not counted. */
function tooLarge(maxBytes: number): StrictJsonResult {
  return failure('too-large', maxBytes, `input is larger than the limit of ${maxBytes} bytes`)
}

const BOM_MESSAGE = 'input starts with a byte-order mark (U+FEFF), which protocol JSON does not allow'

function parseBytes(bytes: Uint8Array, maxBytes: number, maxDepth: number): StrictJsonResult {
  const n = bytes.byteLength
  if (n > maxBytes) return tooLarge(maxBytes)
  if (n >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return failure('byte-order-mark', 0, BOM_MESSAGE)
  const text = textForJson(bytes)
  if (text === undefined) {
    const at = Math.max(0, invalidUtf8Offset(bytes))
    return failure('invalid-utf8', at, `input is not valid UTF-8 at byte ${at}`)
  }
  const value = fastParse(text, maxDepth)
  if (value !== undefined) return { ok: true, value }
  // The exact validator works on the faithful decoding (the platform may have handed JSON.parse
  // an ASCII rewrite of the same value).
  return exactParse(utf8Decode(bytes), maxDepth)
}

function parseString(text: string, maxBytes: number, maxDepth: number): StrictJsonResult {
  // Every code unit takes 1 to 3 UTF-8 bytes, so the exact count is only needed in between.
  // Longer than the limit in code units is over it in bytes: refused without counting (megabytes take milliseconds).
  if (text.length > maxBytes) return tooLarge(maxBytes)
  if (text.length * 3 > maxBytes) {
    const size = utf8ByteLength(text)
    if (size > maxBytes) return tooLarge(maxBytes)
  }
  if (text.charCodeAt(0) === 0xfeff) return failure('byte-order-mark', 0, BOM_MESSAGE)
  const bad = loneSurrogateIndex(text)
  if (bad >= 0) {
    const at = byteOffset(text, bad)
    return failure('invalid-utf8', at, `text has an unpaired surrogate (no UTF-8 encoding) at byte ${at}`)
  }
  const value = fastParse(text, maxDepth)
  if (value !== undefined) return { ok: true, value }
  return exactParse(text, maxDepth)
}

/** UTF-8 length of `text` before UTF-16 index `index`. */
function byteOffset(text: string, index: number): number {
  return utf8ByteLength(text.slice(0, index))
}

/**
 * The fast path: `JSON.parse` checks syntax and trailing data and builds the value; a count of
 * member names in the text, compared with the keys of the parsed objects, rules out duplicates.
 * Returns `undefined` whenever the input might be bad, leaving the verdict (and the offset) to
 * {@link exactParse}.
 */
function fastParse(text: string, maxDepth: number): JsonValue | undefined {
  let value: JsonValue
  try {
    // JSON.parse keeps "__proto__" as an ordinary own data property (CreateDataProperty), so it
    // is counted and compared like any other name. V8 parses nesting iteratively, and the input
    // is bounded by maxBytes, so deep input cannot exhaust the stack here.
    value = JSON.parse(text) as JsonValue
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return value
  try {
    return countKeys(value, 1, maxDepth) === nameColons(text) ? value : undefined
  } catch {
    // nesting deeper than the call stack allows (maxDepth set very high): the iterative
    // validator decides
    return undefined
  }
}

/**
 * An upper bound on the member names in valid JSON text: the colons whose previous non-whitespace
 * character is a quote. Every name separator is one (it follows the name's closing quote), so
 * none is missed; a colon inside a string counts only after an escaped or opening quote (`"\":"`,
 * `": "`), which is rare. So if this equals the number of parsed keys, no name collapsed into
 * another: there was no duplicate. If it is larger for either reason, the exact validator decides.
 */
function nameColons(text: string): number {
  let names = 0
  for (let i = text.indexOf(':'); i >= 0; i = text.indexOf(':', i + 1)) {
    let k = i - 1
    let c = text.charCodeAt(k)
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(--k)
    if (c === 0x22) names++
  }
  return names
}

/**
 * Total number of own keys of the objects in `value`, a container at nesting `depth`; -1 when
 * the nesting exceeds `maxDepth` (which also bounds the recursion).
 */
function countKeys(value: JsonValue[] | { [name: string]: JsonValue }, depth: number, maxDepth: number): number {
  if (depth > maxDepth) return -1
  let n = 0
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i]
      if (typeof item === 'object' && item !== null) {
        const m = countKeys(item, depth + 1, maxDepth)
        if (m < 0) return -1
        n += m
      }
    }
  } else {
    // Own keys only: counting inherited enumerable keys (a polluted Object.prototype) could make
    // the totals agree despite a duplicate.
    const keys = Object.keys(value)
    n = keys.length
    for (let i = 0; i < keys.length; i++) {
      const item = value[keys[i]!]
      if (typeof item === 'object' && item !== null) {
        const m = countKeys(item, depth + 1, maxDepth)
        if (m < 0) return -1
        n += m
      }
    }
  }
  return n
}

// --- exact validator ------------------------------------------------------------------------

/** A located failure inside the exact validator (caught in exactParse; never escapes). */
class Located {
  constructor(
    readonly reason: StrictJsonFailure,
    readonly index: number,
    readonly what: string,
  ) {}
}

/**
 * The slow path: validates `text` (the faithful decoding of the input) against RFC 8259 with an
 * explicit stack (no recursion, so no depth can overflow it), stops at the first failure in text
 * order, and reports its byte offset. When it finds nothing wrong the fast path was merely
 * cautious, and the value is parsed here.
 */
function exactParse(text: string, maxDepth: number): StrictJsonResult {
  const found = locate(text, maxDepth)
  if (found === undefined) {
    try {
      return { ok: true, value: JSON.parse(text) as JsonValue }
    } catch {
      // not reached: the validator accepts exactly what JSON.parse accepts
      return failure('syntax', 0, 'input could not be parsed')
    }
  }
  const at = byteOffset(text, found.index)
  return failure(found.reason, at, `${found.what} at byte ${at}`)
}

function describe(text: string, i: number): string {
  if (i >= text.length) return 'end of input'
  return JSON.stringify(String.fromCodePoint(text.codePointAt(i)!))
}

function syntax(text: string, i: number, expected: string): Located {
  return new Located('syntax', i, `invalid JSON: expected ${expected}, found ${describe(text, i)}`)
}

function skipWhitespace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i)
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i
    i++
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
}

/** Index after the string token starting at the quote at `i`. */
function stringEnd(text: string, i: number): number {
  let j = i + 1
  for (;;) {
    const c = text.charCodeAt(j)
    if (c === 0x22) return j + 1
    if (Number.isNaN(c)) throw syntax(text, j, 'the end of the string')
    if (c < 0x20) throw new Located('syntax', j, 'invalid JSON: unescaped control character in a string')
    if (c === 0x5c) {
      const e = text.charCodeAt(j + 1)
      if (e === 0x75 /* u */) {
        for (let k = j + 2; k < j + 6; k++) if (!isHex(text.charCodeAt(k))) throw syntax(text, k, 'a hexadecimal digit')
        j += 6
      } else if (e === 0x22 || e === 0x5c || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
        j += 2
      } else {
        throw new Located('syntax', j, `invalid JSON: invalid escape \\${j + 1 < text.length ? text[j + 1] : ''}`)
      }
    } else {
      j++
    }
  }
}

/** Index after the number token starting at `i`. */
function numberEnd(text: string, i: number): number {
  let j = i
  if (text.charCodeAt(j) === 0x2d) j++
  const first = text.charCodeAt(j)
  if (first === 0x30) {
    j++
    if (isDigit(text.charCodeAt(j))) throw new Located('syntax', j, 'invalid JSON: a number has a leading zero')
  } else if (isDigit(first)) {
    while (isDigit(text.charCodeAt(j))) j++
  } else {
    throw syntax(text, j, 'a digit')
  }
  if (text.charCodeAt(j) === 0x2e) {
    j++
    if (!isDigit(text.charCodeAt(j))) throw syntax(text, j, 'a digit after the decimal point')
    while (isDigit(text.charCodeAt(j))) j++
  }
  const e = text.charCodeAt(j)
  if (e === 0x65 || e === 0x45) {
    j++
    const sign = text.charCodeAt(j)
    if (sign === 0x2b || sign === 0x2d) j++
    if (!isDigit(text.charCodeAt(j))) throw syntax(text, j, 'a digit in the exponent')
    while (isDigit(text.charCodeAt(j))) j++
  }
  return j
}

/**
 * Reads a member name at `i` into `names` and returns the index of its value. A name seen before
 * in the same object (compared after unescaping, §17.4) is reported at its opening quote.
 */
function memberName(text: string, i: number, names: Set<string>): number {
  if (text.charCodeAt(i) !== 0x22) throw syntax(text, i, 'a member name')
  const end = stringEnd(text, i)
  const name = JSON.parse(text.slice(i, end)) as string
  if (names.has(name)) {
    const shown = name.length > 64 ? `${JSON.stringify(name.slice(0, 64))}...` : JSON.stringify(name)
    throw new Located('duplicate-member', i, `duplicate member name ${shown}`)
  }
  names.add(name)
  const colon = skipWhitespace(text, end)
  if (text.charCodeAt(colon) !== 0x3a) throw syntax(text, colon, "':'")
  return skipWhitespace(text, colon + 1)
}

/** The first failure in `text`, or `undefined` when it is strict JSON within `maxDepth`. */
function locate(text: string, maxDepth: number): Located | undefined {
  try {
    // One entry per open non-empty container: the member names of an object, or undefined for
    // an array.
    const open: (Set<string> | undefined)[] = []
    let i = skipWhitespace(text, 0)
    for (;;) {
      // A value starts at i.
      const c = text.charCodeAt(i)
      if (c === 0x7b || c === 0x5b) {
        if (open.length >= maxDepth) return new Located('too-deep', i, `nesting deeper than ${maxDepth} levels`)
        const object = c === 0x7b
        const next = skipWhitespace(text, i + 1)
        if (text.charCodeAt(next) === (object ? 0x7d : 0x5d)) {
          i = next + 1
        } else {
          const names = object ? new Set<string>() : undefined
          open.push(names)
          i = names ? memberName(text, next, names) : next
          continue
        }
      } else if (c === 0x22) {
        i = stringEnd(text, i)
      } else if (c === 0x2d || isDigit(c)) {
        i = numberEnd(text, i)
      } else if (text.startsWith('true', i)) {
        i += 4
      } else if (text.startsWith('false', i)) {
        i += 5
      } else if (text.startsWith('null', i)) {
        i += 4
      } else {
        throw syntax(text, i, 'a value')
      }
      // A value ended at i: close containers until one continues.
      for (;;) {
        i = skipWhitespace(text, i)
        if (open.length === 0) {
          return i < text.length ? new Located('trailing-data', i, 'unexpected data after the JSON value') : undefined
        }
        const names = open[open.length - 1]
        const d = text.charCodeAt(i)
        if (d === 0x2c) {
          i = skipWhitespace(text, i + 1)
          if (names) i = memberName(text, i, names)
          break
        }
        if (d !== (names ? 0x7d : 0x5d)) throw syntax(text, i, names ? "',' or '}'" : "',' or ']'")
        open.pop()
        i++
      }
    }
  } catch (e) {
    if (e instanceof Located) return e
    throw e
  }
}

/**
 * Offset of the first byte that starts an ill-formed UTF-8 sequence (Unicode Table 3-7: no
 * overlongs, no surrogates, nothing above U+10FFFF, no truncated sequence), or -1.
 */
function invalidUtf8Offset(bytes: Uint8Array): number {
  const n = bytes.length
  let i = 0
  while (i < n) {
    const b = bytes[i]!
    if (b < 0x80) {
      i++
      continue
    }
    let need: number
    let lo = 0x80
    let hi = 0xbf
    if (b >= 0xc2 && b <= 0xdf) need = 1
    else if (b === 0xe0) (need = 2), (lo = 0xa0)
    else if ((b >= 0xe1 && b <= 0xec) || b === 0xee || b === 0xef) need = 2
    else if (b === 0xed) (need = 2), (hi = 0x9f)
    else if (b === 0xf0) (need = 3), (lo = 0x90)
    else if (b >= 0xf1 && b <= 0xf3) need = 3
    else if (b === 0xf4) (need = 3), (hi = 0x8f)
    else return i
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k]
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i
    }
    i += need + 1
  }
  return -1
}
