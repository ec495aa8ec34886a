/**
 * Helpers the generated validators call. Kept small and allocation-free on the hot path.
 * @module
 */

/** One validation problem: where in the instance, which keyword, and why. */
export interface ValidationIssue {
  /** JSON Pointer (RFC 6901) of the offending value in the instance; `''` is the root. */
  readonly path: string
  /** The JSON Schema keyword that failed (`required`, `pattern`, `format`, ...). */
  readonly keyword: string
  /** A short English explanation. */
  readonly message: string
  /** JSON Pointer of the keyword in the schema, e.g. `#/properties/kind/anyOf`. */
  readonly schemaPath: string
}

/** Thrown by a full {@link Collector} to end the walk; never escapes the validator. */
export const COLLECTOR_FULL: unique symbol = Symbol('collector full')

/**
 * Receives issues from generated collect functions; stops the walk by throwing
 * {@link COLLECTOR_FULL} once `max` issues are held, so hostile input cannot make the list (or
 * the time spent building it) unbounded.
 */
export class Collector {
  readonly issues: ValidationIssue[] = []
  readonly max: number

  constructor(max: number) {
    this.max = max
  }

  /** Records an issue; throws {@link COLLECTOR_FULL} when the bound is reached. */
  add(path: string, keyword: string, message: string, schemaPath: string): void {
    this.issues.push({ path, keyword, message, schemaPath })
    if (this.issues.length >= this.max) throw COLLECTOR_FULL
  }
}

/** Number of Unicode code points in `s` (JSON Schema string lengths count code points). */
export function codePoints(s: string): number {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    // a high surrogate followed by a low surrogate is one code point
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) i++
    }
    n++
  }
  return n
}

/** Escapes a member name as one JSON Pointer token. */
export function pointerToken(name: string): string {
  return name.indexOf('~') < 0 && name.indexOf('/') < 0 ? name : name.replace(/~/g, '~0').replace(/\//g, '~1')
}

/** JSON data-model equality (`const`, `enum`, `uniqueItems`): member order does not matter. */
export function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!equal(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !equal((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false
  }
  return true
}

/**
 * Whether all items differ (`uniqueItems`). Primitive items, the usual case, are checked with a
 * pairwise scan for short arrays and a Set for long ones; structured items fall back to
 * {@link equal} pairs, bucketed by a cheap shape key so a long hostile array stays near-linear.
 */
export function unique(items: readonly unknown[]): boolean {
  const n = items.length
  if (n < 2) return true
  let primitive = true
  for (let i = 0; i < n; i++) {
    const t = items[i]
    if (typeof t === 'object' && t !== null) {
      primitive = false
      break
    }
  }
  if (primitive) {
    if (n <= 16) {
      for (let i = 1; i < n; i++) for (let j = 0; j < i; j++) if (items[i] === items[j]) return false
      return true
    }
    return new Set(items).size === n
  }
  const buckets = new Map<string, unknown[]>()
  for (const item of items) {
    const key = shapeKey(item)
    const bucket = buckets.get(key)
    if (bucket === undefined) buckets.set(key, [item])
    else {
      for (const other of bucket) if (equal(item, other)) return false
      bucket.push(item)
    }
  }
  return true
}

function shapeKey(value: unknown): string {
  if (typeof value !== 'object' || value === null) return typeof value + ':' + String(value)
  if (Array.isArray(value)) return 'a' + value.length
  return 'o' + Object.keys(value).sort().join(',')
}
