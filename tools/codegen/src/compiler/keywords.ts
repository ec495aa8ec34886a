/**
 * The JSON Schema Draft 2020-12 keywords the validator compiler knows, and what can be read from
 * a schema's keywords alone, before any code is written for it.
 *
 * The MissionWeaveProtocol 0.1 schemas use a closed subset of the draft (§21); naming it here
 * lets the compiler refuse any other keyword rather than skip it, since a validator that skipped a
 * keyword would accept documents the normative schema rejects. The facts below (a leaf, a `not`
 * a format already decides, whether `undefined` passes) choose between forms of generated code;
 * none of them writes code for a schema itself.
 * @module
 */
import { escapePointerToken, type Location, type SchemaNode, type SchemaRegistry } from './registry.js'
import type { FormatImport } from './types.js'

/** Keywords that assert nothing: annotations, and `$defs`, whose schemas are reached by `$ref` only. */
export const ANNOTATIONS = new Set(['$schema', '$id', '$comment', 'title', 'description', 'examples', 'default', '$defs', 'deprecated', 'readOnly', 'writeOnly'])

/**
 * Whether a schema asserts nothing about an instance: `true`, or an object holding only `$defs`
 * and annotations, as the definitions-only `common.schema.json` does (§21). Its root accepts every
 * JSON value, so a validator of it narrows to `unknown`.
 */
export function assertsNothing(node: SchemaNode): boolean {
  return node === true || (typeof node === 'object' && Object.keys(node).every((keyword) => ANNOTATIONS.has(keyword)))
}

/** The assertion and applicator keywords the compiler implements; any other keyword is a compile error. */
export const HANDLED = new Set([
  '$ref',
  'type',
  'const',
  'enum',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'required',
  'properties',
  'additionalProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'dependentRequired',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
])
/** The keywords that apply only to an object. */
export const OBJECT_KEYWORDS = ['required', 'properties', 'additionalProperties', 'propertyNames', 'minProperties', 'maxProperties', 'dependentRequired']
/** The keywords that apply only to an array. */
export const ARRAY_KEYWORDS = ['items', 'minItems', 'maxItems', 'uniqueItems']
/** The keywords that apply only to a string. */
export const STRING_KEYWORDS = ['minLength', 'maxLength', 'pattern', 'format']
/** The keywords that apply only to a number. */
export const NUMBER_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']
/** Keywords holding one subschema, a map of them, or a list of them. */
export const SUBSCHEMA = new Set(['items', 'additionalProperties', 'propertyNames', 'not', 'if', 'then', 'else'])
/** Keywords holding a list of subschemas. */
export const SUBSCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf'])
/** Keywords of a leaf ({@link isLeaf}): a schema validated in a few lines. */
export const LEAF_KEYWORDS = new Set(['type', 'const', 'enum', 'not', ...STRING_KEYWORDS, ...NUMBER_KEYWORDS])
/** Keywords whose code is large enough that a schema holding one alone is worth sharing. */
export const APPLICATORS = new Set(['properties', 'items', 'additionalProperties', 'propertyNames', 'allOf', 'anyOf', 'oneOf', 'not', 'if'])

/** A schema object, read keyword by keyword. */
export type Obj = { readonly [keyword: string]: unknown }

/** A value as a JavaScript literal in generated code. */
export const str = (value: unknown): string => JSON.stringify(value)
/** The JSON Pointer of a schema below `pointer`. */
export const child = (pointer: string, ...tokens: (string | number)[]): string => pointer + tokens.map((t) => '/' + escapePointerToken(String(t))).join('')

/** The JavaScript test that the value in `v` has the JSON Schema type `type`. */
export function typeTest(type: string, v: string): string {
  switch (type) {
    case 'object':
      return `(typeof ${v} === 'object' && ${v} !== null && !Array.isArray(${v}))`
    case 'array':
      return `Array.isArray(${v})`
    case 'string':
      return `typeof ${v} === 'string'`
    case 'integer':
      return `Number.isInteger(${v})`
    case 'number':
      return `(typeof ${v} === 'number' && Number.isFinite(${v}))`
    case 'boolean':
      return `typeof ${v} === 'boolean'`
    case 'null':
      return `${v} === null`
    default:
      throw new Error(`unknown JSON Schema type: ${type}`)
  }
}

/** Whether a `const` or `enum` value is compared with `===` rather than deep equality. */
export function isPrimitive(value: unknown): value is string | number | boolean | null {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value)
}

/** A schema that is a `$ref` and annotations only: its validator is the target's. */
export function isPureRef(node: SchemaNode): node is Obj & { $ref: string } {
  return typeof node === 'object' && typeof node['$ref'] === 'string' && Object.keys(node).every((k) => k === '$ref' || ANNOTATIONS.has(k))
}

/**
 * Whether a schema only tests a value's own type, bounds, pattern, format or members of a list.
 * Its check-only code is a few lines that V8 inlines into the caller, where the same code with
 * its reports would be too large to: such a schema gets a check-only twin `c_*` beside `v_*`.
 */
export function isLeaf(node: SchemaNode): boolean {
  return typeof node === 'object' && Object.keys(node).every((k) => ANNOTATIONS.has(k) || LEAF_KEYWORDS.has(k))
}

/** `not: { pattern }` on a string node whose format excludes that pattern. */
export function notImplied(formats: Readonly<Record<string, FormatImport>>, s: Obj): boolean {
  const not = s['not']
  if (typeof not !== 'object' || not === null || Object.keys(not).length !== 1) return false
  const pattern = (not as Obj)['pattern']
  const types = s['type']
  return typeof pattern === 'string' && types === 'string' && implied(formats, s, 'excludes', pattern)
}

/** Whether the node's format (checked first) already decides `pattern` (see {@link FormatImport.implies}). */
export function implied(formats: Readonly<Record<string, FormatImport>>, s: Obj, relation: 'patterns' | 'excludes', pattern: string): boolean {
  if (typeof s['format'] !== 'string') return false
  return formats[s['format']]?.implies?.[relation]?.includes(pattern) ?? false
}

/** Wraps type-specific statements in a type test unless `type` already guarantees the type. */
export function guarded(types: string[] | undefined, family: string, keywords: string[], s: Obj, v: string, code: string): string {
  if (!code || !keywords.some((k) => k in s)) return code
  const implied = family === 'number' ? ['number', 'integer'] : [family]
  if (types && types.length === 1 && implied.includes(types[0]!)) return code
  const test = family === 'number' ? `typeof ${v} === 'number'` : typeTest(family, v)
  return `if (${test}) {\n${code}}\n`
}

/** The message of a failed `not`, naming what the excluded schema forbids when it is a pattern or required members. */
export function notMessage(not: unknown): string {
  if (typeof not === 'object' && not !== null) {
    const n = not as Obj
    if (typeof n['pattern'] === 'string' && Object.keys(n).length === 1) return `must not contain characters matching ${n['pattern']}`
    if (Array.isArray(n['required']) && Object.keys(n).length === 1) return `must not have ${n['required'].map((r) => `'${r}'`).join(', ')}`
    if (Array.isArray(n['anyOf']) && n['anyOf'].every((a) => typeof a === 'object' && a !== null && Array.isArray((a as Obj)['required']))) {
      const members = n['anyOf'].flatMap((a) => (a as { required: string[] }).required)
      return `must not have any of ${members.map((r) => `'${r}'`).join(', ')}`
    }
  }
  return 'must not match the excluded schema'
}

/**
 * The declared members whose schema rejects `undefined` and those whose schema accepts it, and
 * how to name them as `case` labels. A declared member set to `undefined` (possible in a
 * JavaScript object, never in JSON) is invalid without a collector when its schema rejects
 * undefined, as when each member met was validated by name, and is not an issue with one.
 */
export function declared<M extends { readonly name: string; readonly sub: Location }>(registry: SchemaRegistry, members: readonly M[]) {
  return {
    rejecting: members.filter((m) => !acceptsUndefined(registry, m.sub)),
    accepting: members.filter((m) => acceptsUndefined(registry, m.sub)),
    cases: (list: readonly M[]): string => list.map((m) => `case ${str(m.name)}:`).join(' '),
  }
}

/**
 * Whether the JavaScript value `undefined` passes the schema at `loc` (it fails every `type`,
 * `const` and `enum`, and skips the keywords of one type), decided here once for the members
 * of an object schema.
 */
export function acceptsUndefined(registry: SchemaRegistry, loc: Location, depth = 0): boolean {
  const node = loc.node
  if (typeof node === 'boolean') return node
  if (depth > 32) throw new Error(`$ref cycle at ${loc.base}#${loc.pointer}`)
  if (node['type'] !== undefined || 'const' in node || Array.isArray(node['enum'])) return false
  const accepts = (...tokens: (string | number)[]): boolean => acceptsUndefined(registry, registry.locate(loc.base, child(loc.pointer, ...tokens)), depth + 1)
  const list = (keyword: string): boolean[] => (Array.isArray(node[keyword]) ? node[keyword].map((_, i) => accepts(keyword, i)) : [])
  if (typeof node['$ref'] === 'string' && !acceptsUndefined(registry, registry.resolve(loc.base, node['$ref']), depth + 1)) return false
  if (list('allOf').includes(false)) return false
  if (Array.isArray(node['anyOf']) && !list('anyOf').includes(true)) return false
  if (Array.isArray(node['oneOf']) && list('oneOf').filter(Boolean).length !== 1) return false
  if ('not' in node && accepts('not')) return false
  if ('if' in node) {
    const branch = accepts('if') ? 'then' : 'else'
    if (branch in node && !accepts(branch)) return false
  }
  return true
}
