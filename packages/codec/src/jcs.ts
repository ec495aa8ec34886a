/**
 * RFC 8785 JSON Canonicalization Scheme: stage 5 of the Signed Document Verification Profile
 * (§6.4), and the bytes behind every hash, content-derived identifier and signature (§17.4).
 *
 * The canonical form is ECMAScript's own JSON serialization with object members sorted, so the
 * engine does the delicate parts: `Number.prototype.toString` is the RFC 8785 number form
 * (shortest round-trip, `1e+21`, `1e-7`, `-0` as `0`) and `JSON.stringify` of a well-formed string
 * is the RFC 8785 string form (only `\"` `\\` `\b` `\f` `\n` `\r` `\t` and lower-case `\u00xx`
 * for other controls; everything else literal). What this module adds is the order (members
 * sorted by UTF-16 code units, which is what `Array.prototype.sort` does with no comparator) and
 * the I-JSON data model of §2: values outside finite binary64 and strings with an unpaired
 * surrogate are rejected before any byte is produced.
 * @module
 */
import { loneSurrogateIndex } from './bytes.js'
import { ProtocolError } from './errors.js'

/**
 * Deepest nesting of arrays and objects {@link canonicalize} serializes (well above the stage-1
 * default of 256). Deeper input, including any cyclic structure, is an `unsupported-value`: the
 * serializer recurses, and failing closed beats overflowing the stack.
 */
export const MAX_JCS_DEPTH = 1024

/**
 * Why a value has no canonical form:
 * - `non-finite-number`: `NaN` or ±Infinity, e.g. a parsed `1e400` (§2: outside finite binary64);
 * - `lone-surrogate`: a string or member name with an unpaired UTF-16 surrogate (§2, I-JSON);
 * - `unsupported-value`: not a JSON value at all (`undefined`, a function, a bigint, a symbol, an
 *   object other than a plain object or array, a cycle, or nesting beyond {@link MAX_JCS_DEPTH}).
 */
export type JcsFailure = 'non-finite-number' | 'lone-surrogate' | 'unsupported-value'

/**
 * Outcome of {@link canonicalize}. On failure `path` is an RFC 6901 JSON Pointer to the first
 * offending value in canonical order (`''` is the value itself; a bad member name points at its
 * member).
 */
export type JcsResult = { readonly ok: true; readonly bytes: Uint8Array } | { readonly ok: false; readonly reason: JcsFailure; readonly path: string }

/** Thrown inside the serializer to abandon it; never escapes this module. */
const ABANDON = Symbol('jcs-abandon')

const encoder = new TextEncoder()

/**
 * The RFC 8785 canonical UTF-8 bytes of a JSON value (§6.4 stage 5, §17.4), or the first reason
 * it has none. Never throws.
 *
 * @example
 * ```ts
 * canonicalize({ b: [1e21, 1e-7, -0], a: 'é' })
 * // ok, bytes of {"a":"é","b":[1e+21,1e-7,0]}
 * canonicalize({ x: { y: Infinity } }) // { ok: false, reason: 'non-finite-number', path: '/x/y' }
 * ```
 */
export function canonicalize(value: unknown): JcsResult {
  let text: string
  try {
    text = serialize(value, 0)
  } catch {
    // Something is wrong somewhere: a second, slower walk finds what and where. (A RangeError
    // from a caller that was already near the end of the stack lands here too.)
    return locate(value)
  }
  return { ok: true, bytes: encoder.encode(text) }
}

/**
 * {@link canonicalize} for callers that only want the wire outcome.
 * @throws {@link ProtocolError} `PROTOCOL_VIOLATION` with `details: { reason, path }` when the
 * value is outside the JCS data model (§6.4 stage 5).
 */
export function canonicalizeOrThrow(value: unknown): Uint8Array {
  const result = canonicalize(value)
  if (result.ok) return result.bytes
  const where = result.path === '' ? 'the root' : JSON.stringify(result.path)
  const what =
    result.reason === 'non-finite-number' ? 'a number outside the finite binary64 range' : result.reason === 'lone-surrogate' ? 'a string with an unpaired surrogate' : 'a value that is not JSON'
  throw new ProtocolError('PROTOCOL_VIOLATION', `no canonical JSON form: ${what} at ${where}`, {
    details: { reason: result.reason, path: result.path },
  })
}

/** No unpaired surrogate (native `isWellFormed` underneath, so cheap for the common case). */
function wellFormed(text: string): boolean {
  return loneSurrogateIndex(text) < 0
}

/**
 * A plain object: made by `{}`, `JSON.parse` or `Object.create(null)`, possibly in another realm
 * (whose `Object.prototype` is also a prototype-less root). Class instances, boxed primitives,
 * `Date`, `Map` and the like have a longer chain and are not JSON objects.
 */
function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as object | null
  return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null
}

// Characters RFC 8785 §3.2.2.2 escapes in a well-formed string.
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/

/**
 * A well-formed string as an RFC 8785 string literal. JSON.stringify escapes exactly the RFC 8785
 * set (with lower-case hex); most protocol strings need no escape at all, and a regex test plus
 * concatenation is cheaper than a call into JSON.stringify.
 */
function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : '"' + text + '"'
}

/** The fast serializer: one string, built depth first; throws ABANDON on anything unsupported. */
function serialize(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      if (!wellFormed(value)) throw ABANDON
      return quote(value)
    case 'number':
      // String(-0) is "0", and for every finite double String() is the RFC 8785 §3.2.2.3 form.
      if (!Number.isFinite(value)) throw ABANDON
      return String(value)
    case 'boolean':
      return value ? 'true' : 'false'
    case 'object': {
      if (value === null) return 'null'
      if (depth >= MAX_JCS_DEPTH) throw ABANDON
      if (Array.isArray(value)) {
        const n = value.length
        if (n === 0) return '[]'
        let out = '[' + serialize(value[0], depth + 1)
        for (let i = 1; i < n; i++) out += ',' + serialize(value[i], depth + 1)
        return out + ']'
      }
      if (!isPlainObject(value)) throw ABANDON
      // RFC 8785 §3.2.3: sort by UTF-16 code units, which is the default sort order.
      const keys = Object.keys(value).sort()
      const record = value as Record<string, unknown>
      let out = '{'
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!
        if (!wellFormed(key)) throw ABANDON
        // An own "__proto__" (as JSON.parse makes it) is read as data: own properties shadow
        // the inherited accessor.
        out += (i === 0 ? '' : ',') + quote(key) + ':' + serialize(record[key], depth + 1)
      }
      return out + '}'
    }
    default:
      throw ABANDON
  }
}

/** RFC 6901 reference token for a member name. */
function token(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1')
}

/**
 * The slow walk after the serializer gave up: same order as {@link serialize}, but tracking the
 * JSON Pointer and the open containers (to name a cycle precisely).
 */
function locate(root: unknown): JcsResult {
  const open = new Set<object>()
  const visit = (value: unknown, path: string, depth: number): JcsResult | undefined => {
    switch (typeof value) {
      case 'string':
        return wellFormed(value) ? undefined : { ok: false, reason: 'lone-surrogate', path }
      case 'number':
        return Number.isFinite(value) ? undefined : { ok: false, reason: 'non-finite-number', path }
      case 'boolean':
        return undefined
      case 'object': {
        if (value === null) return undefined
        if (open.has(value) || depth >= MAX_JCS_DEPTH) return { ok: false, reason: 'unsupported-value', path }
        if (!Array.isArray(value) && !isPlainObject(value)) return { ok: false, reason: 'unsupported-value', path }
        open.add(value)
        let found: JcsResult | undefined
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length && !found; i++) found = visit(value[i], `${path}/${i}`, depth + 1)
        } else {
          const record = value as Record<string, unknown>
          for (const key of Object.keys(record).sort()) {
            const member = `${path}/${token(key)}`
            found = wellFormed(key) ? visit(record[key], member, depth + 1) : { ok: false, reason: 'lone-surrogate', path: member }
            if (found) break
          }
        }
        open.delete(value)
        return found
      }
      default:
        return { ok: false, reason: 'unsupported-value', path }
    }
  }
  try {
    return visit(root, '', 0) ?? { ok: false, reason: 'unsupported-value', path: '' }
  } catch {
    // Only a stack exhausted before canonicalize was even called gets here.
    return { ok: false, reason: 'unsupported-value', path: '' }
  }
}
