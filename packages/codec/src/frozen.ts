/**
 * Frozen JSON: deep-frozen values inside the JCS data model (§6.4 stage 5, §17.4), and the RFC 8785
 * text of such a value written without a second canonicalization.
 *
 * A protocol document that is accepted is immutable (§4.6), and whoever keeps one (an Authority's
 * log, a Worker's inbox) shares one frozen object with every reader instead of copying it. The
 * helpers here freeze and check in the same walk, so a value that is frozen by them is known to
 * have a canonical form, and the walk notes how that form can be written (see {@link JcsForm}).
 * @module
 */
import { loneSurrogateIndex } from './bytes.js'
import { canonicalizeOrThrow, MAX_JCS_DEPTH } from './jcs.js'

/**
 * Freezes `value` and every object and array it holds, in place, and returns it. No checks and no
 * copy: for tables a program builds itself (generated transition tables, issued claims). A value
 * that may come from outside takes {@link frozenJson}.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member)
    Object.freeze(value)
  }
  return value
}

/**
 * How the RFC 8785 text of a value frozen by {@link freezeMembers} (or copied by
 * {@link frozenJson}) can be written; {@link canonicalBytes} takes it.
 * - `sorted`: every object's members are in canonical order and none is named like an array
 *   index, so `JSON.stringify` writes exactly the RFC 8785 text (the same escapes and number form;
 *   the values were checked by the walk);
 * - `unsorted`: some object's members are out of order; a sorted copy is written the same way;
 * - `index`: some member is named like an array index ("0", "17"), which JavaScript iterates first
 *   whatever the order of insertion: only a canonicalization places it right.
 */
export type JcsForm = 'sorted' | 'unsorted' | 'index'

/** Thrown inside the walks to abandon them; never escapes this module. */
const OUTSIDE_JCS = Symbol('outside-jcs')

// What the walk in progress met (see {@link formOfWalk}). The walks are synchronous and never
// nest, so one pair serves every call; each walk resets it before it starts.
let sawUnsorted = false
let sawIndexName = false

/**
 * A deep-frozen copy of a JSON value, members sorted as RFC 8785 sorts them, `-0` as `0`, an own
 * `__proto__` member kept as data.
 * @throws {@link ProtocolError} `PROTOCOL_VIOLATION` (the reason and path of
 * {@link canonicalizeOrThrow}) when the value is outside the JCS data model: a non-finite number, an
 * unpaired surrogate, `undefined`, a non-plain object, a cycle or nesting beyond {@link MAX_JCS_DEPTH}.
 * @example
 * ```ts
 * const copy = frozenJson(JSON.parse('{"b":1,"a":-0}')) // { a: 0, b: 1 }, frozen, keys sorted
 * ```
 */
export function frozenJson(value: unknown): unknown {
  try {
    return copyFrozen(value, 0)
  } catch (thrown) {
    if (thrown !== OUTSIDE_JCS) throw thrown
    canonicalizeOrThrow(value)
    throw new Error('frozenJson: a value the copy refused has a canonical form')
  }
}

/**
 * Deep-freezes every member of `record` in place, after the checks of {@link frozenJson}, and
 * returns how the record's RFC 8785 text can be written. `record` itself stays open (its owner adds
 * members, such as a signature, before freezing it). A `-0` becomes `0`; an object someone else
 * froze is kept, or copied frozen when it holds a `-0`. Objects are shared, not copied: whatever
 * else holds them sees them frozen.
 * @throws {@link ProtocolError} `PROTOCOL_VIOLATION` as {@link frozenJson} does; members walked
 * before the failure stay frozen.
 */
export function freezeMembers(record: Record<string, unknown>): JcsForm {
  sawUnsorted = false
  sawIndexName = false
  let previous = ''
  try {
    requirePlain(record)
    // `for in` walks the own members of a plain object in the order of Object.keys, without allocating their list.
    for (const name in record) {
      if (!wellFormed(name)) throw OUTSIDE_JCS
      noteMemberName(name, previous)
      previous = name
      const value = record[name]
      const sealed = freezeInPlace(value, 1)
      if (sealed !== value || isNegativeZero(value)) setMember(record, name, sealed)
    }
  } catch (thrown) {
    if (thrown !== OUTSIDE_JCS) throw thrown
    canonicalizeOrThrow(record)
    throw new Error('freezeMembers: a value the walk refused has a canonical form')
  }
  return formOfWalk()
}

/**
 * The {@link JcsForm} of a record whose members {@link freezeMembers} froze, found by walking it
 * again (for a caller that did not keep the form), leaving out the members named in `omit`.
 */
export function jcsFormOf(record: Readonly<Record<string, unknown>>, omit: readonly string[] = []): JcsForm {
  sawUnsorted = false
  sawIndexName = false
  let previous = ''
  for (const name in record) {
    if (omit.includes(name)) continue
    noteMemberName(name, previous)
    previous = name
    scanForm(record[name])
  }
  return formOfWalk()
}

const utf8 = new TextEncoder()

/**
 * The RFC 8785 bytes of a value inside the JCS data model (frozen by {@link freezeMembers} or
 * {@link frozenJson}, or otherwise checked), written as `form` allows: `JSON.stringify` of the value
 * or of a sorted copy, or the codec's canonicalization. Equal to {@link canonicalizeOrThrow} of the
 * value for the form its walk found.
 */
export function canonicalBytes(value: unknown, form: JcsForm): Uint8Array {
  if (form === 'sorted') return utf8.encode(JSON.stringify(value))
  if (form === 'unsorted') return utf8.encode(JSON.stringify(sortedCopy(value)))
  return canonicalizeOrThrow(value)
}

/** The form the last walk found. */
function formOfWalk(): JcsForm {
  return sawIndexName ? 'index' : sawUnsorted ? 'unsorted' : 'sorted'
}

/**
 * `value` deep-frozen in place after the checks of {@link copyFrozen}; returns `value`, or what
 * replaces it: `0` for `-0`, and a frozen copy of an object someone else froze with a `-0` inside.
 * Throws {@link OUTSIDE_JCS}.
 */
function freezeInPlace(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return jcsScalar(value)
  if (depth >= MAX_JCS_DEPTH) throw OUTSIDE_JCS
  if (Array.isArray(value)) {
    const n = value.length
    for (let i = 0; i < n; i++) {
      const member: unknown = value[i]
      const sealed = freezeInPlace(member, depth + 1)
      if (sealed === member && !isNegativeZero(member)) continue
      if (Object.isFrozen(value)) return copyFrozen(value, depth)
      value[i] = sealed
    }
    return Object.freeze(value)
  }
  requirePlain(value)
  const record = value as Record<string, unknown>
  let previous = ''
  for (const name in record) {
    if (!wellFormed(name)) throw OUTSIDE_JCS
    noteMemberName(name, previous)
    previous = name
    const member = record[name]
    const sealed = freezeInPlace(member, depth + 1)
    if (sealed === member && !isNegativeZero(member)) continue
    if (Object.isFrozen(record)) return copyFrozen(record, depth)
    setMember(record, name, sealed)
  }
  return Object.freeze(record)
}

/** The walk of {@link frozenJson}; throws {@link OUTSIDE_JCS}. */
function copyFrozen(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return jcsScalar(value)
  if (depth >= MAX_JCS_DEPTH) throw OUTSIDE_JCS
  if (Array.isArray(value)) {
    const n = value.length
    const out = new Array<unknown>(n)
    for (let i = 0; i < n; i++) out[i] = copyFrozen(value[i], depth + 1)
    return Object.freeze(out)
  }
  requirePlain(value)
  const record = value as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const name of sortKeys(Object.keys(record))) {
    if (!wellFormed(name)) throw OUTSIDE_JCS
    if (isIndexLike(name)) sawIndexName = true
    setMember(out, name, copyFrozen(record[name], depth + 1))
  }
  return Object.freeze(out)
}

/** Notes in the walk's flags what a frozen value's objects hold. */
function scanForm(value: unknown): void {
  if (typeof value !== 'object' || value === null) return
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) scanForm(value[i])
    return
  }
  const record = value as Record<string, unknown>
  let previous = ''
  for (const name in record) {
    noteMemberName(name, previous)
    previous = name
    scanForm(record[name])
  }
}

/** Notes what the name of an object's member, after `previous`, says of the object's {@link JcsForm}. */
function noteMemberName(name: string, previous: string): void {
  if (name < previous) sawUnsorted = true
  if (isIndexLike(name)) sawIndexName = true
}

/** Whether a member name may be one JavaScript orders as an array index: it starts with a digit. */
function isIndexLike(name: string): boolean {
  const first = name.charCodeAt(0)
  return first >= 0x30 && first <= 0x39
}

/** A JSON scalar checked against the JCS data model, `-0` as `0` (RFC 8785 writes it so); throws {@link OUTSIDE_JCS} for anything else. */
function jcsScalar(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
      if (!wellFormed(value)) throw OUTSIDE_JCS
      return value
    case 'number':
      if (!Number.isFinite(value)) throw OUTSIDE_JCS
      return value === 0 ? 0 : value
    case 'boolean':
      return value
    default:
      if (value === null) return null
      throw OUTSIDE_JCS
  }
}

/** Throws {@link OUTSIDE_JCS} unless `value` is a plain object (the test of `canonicalize`: its prototype is Object.prototype, null, or one whose prototype is null). */
function requirePlain(value: object): void {
  const proto = Object.getPrototypeOf(value) as object | null
  if (proto !== Object.prototype && !(proto === null || Object.getPrototypeOf(proto) === null)) throw OUTSIDE_JCS
}

/** A copy of a checked value (no array-index names) with every object's members sorted, for `JSON.stringify`. */
function sortedCopy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map(sortedCopy)
  const record = value as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const name of sortKeys(Object.keys(record))) setMember(out, name, sortedCopy(record[name]))
  return out
}

/** `record[name] = value`, an own "__proto__" member as data (as JSON.parse makes it), not the prototype setter. */
function setMember(record: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__') Object.defineProperty(record, name, { value, enumerable: true, writable: true, configurable: true })
  else record[name] = value
}

/** `-0`, which `===` cannot tell from `0`. */
function isNegativeZero(value: unknown): boolean {
  return value === 0 && 1 / value < 0
}

/** A string without unpaired surrogates. */
function wellFormed(text: string): boolean {
  return loneSurrogateIndex(text) < 0
}

/**
 * `keys` sorted in place by UTF-16 code units, as RFC 8785 orders members. Protocol objects have a
 * handful of members, often in order already, where an insertion sort beats the generic
 * `Array.prototype.sort`; long member lists take the library sort.
 */
function sortKeys(keys: string[]): string[] {
  const n = keys.length
  if (n > 24) return keys.sort()
  for (let i = 1; i < n; i++) {
    const key = keys[i]!
    let j = i - 1
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!
      j--
    }
    keys[j + 1] = key
  }
  return keys
}
