/**
 * The shared half of the differential tests: the generated validators against Ajv on the
 * normative schema files. `differential-exhaustive.test.ts` runs the deterministic pass and
 * `differential.test.ts` the random one; both judge documents with {@link loadDifferential}.
 *
 * Invariant: for any document, `validators[x].check(doc)` equals Ajv's verdict on the schema file
 * of `x`, and `errors(doc)` is empty exactly when `check(doc)` is true. Documents are the
 * manifest's valid vectors, mutated: members dropped, unknown members added, values retyped,
 * strings made tricky (§2 format edges: trailing line feeds, non-ASCII, `-00:00`, leap seconds,
 * year 0000, Feb 30, relative URIs, length bounds in code points), numbers pushed past integer
 * and safe-integer limits, array items duplicated, enum values swapped, and members taken from
 * the vectors of other schemas.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { readBundleJson } from '@weft/spec/bundle'
import { validatorForFile } from '@weft/validators'
import { referenceValidators } from './ajv-reference.js'

interface Vector {
  readonly name: string
  readonly file: string
  readonly valid: boolean
  readonly instance: unknown
}

// ---------------------------------------------------------------------------------------------
// Corpus drawn from the bundle: seeds, donor members, enum values, length bounds.

/** A JSON value, as the mutations write them. */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** A deep copy through JSON, so a mutation never touches a seed. */
export const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T

/** Sets an own data member, even one named `__proto__` (plain assignment would set the prototype). */
function setMember(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}

/** The name a value goes by: its member name, or `<member>[]` for the items of a named array. */
function childName(parentName: string, key: string | number): string {
  return typeof key === 'number' ? `${parentName}[]` : key
}

/** What the mutations draw on, gathered from the bundle's vectors and schemas. */
export interface Corpus {
  /** Valid vectors by schema file. */
  readonly seeds: Map<string, unknown[]>
  /** Every value of every vector, by {@link childName}. */
  readonly valuesByName: Map<string, unknown[]>
  /** Every `[name, value]` member of every vector. */
  readonly members: (readonly [string, unknown])[]
  /** `enum`/`const` strings of the schemas, by the property they sit under. */
  readonly enumsByName: Map<string, string[]>
  /** Every `enum`/`const` string of the schemas. */
  readonly enumStrings: string[]
  /** Every `minLength`/`maxLength` of the schemas. */
  readonly lengthBounds: number[]
}

function addTo<V>(map: Map<string, V[]>, key: string, value: V, seen: Set<string>): void {
  const marker = `${key}\u0000${JSON.stringify(value)}`
  if (seen.has(marker)) return
  seen.add(marker)
  const list = map.get(key)
  if (list === undefined) map.set(key, [value])
  else list.push(value)
}

function buildCorpus(vectors: readonly Vector[], schemas: readonly unknown[]): Corpus {
  const seeds = new Map<string, unknown[]>()
  for (const v of vectors) if (v.valid) addTo(seeds, v.file, v.instance, new Set())

  const valuesByName = new Map<string, unknown[]>()
  const members: (readonly [string, unknown])[] = []
  const seen = new Set<string>()
  const seenMembers = new Set<string>()
  const walk = (value: unknown, name: string): void => {
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        addTo(valuesByName, childName(name, i), item, seen)
        walk(item, childName(name, i))
      })
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        addTo(valuesByName, key, item, seen)
        const marker = `${key}\u0000${JSON.stringify(item)}`
        if (!seenMembers.has(marker)) {
          seenMembers.add(marker)
          members.push([key, item])
        }
        walk(item, key)
      }
    }
  }
  for (const v of vectors) walk(v.instance, '')

  const enumsByName = new Map<string, string[]>()
  const enumSeen = new Set<string>()
  const enumStrings = new Set<string>()
  const lengthBounds = new Set<number>()
  const collectEnums = (schema: unknown, name: string | undefined): void => {
    if (Array.isArray(schema)) {
      for (const s of schema) collectEnums(s, name)
      return
    }
    if (typeof schema !== 'object' || schema === null) return
    const s = schema as Record<string, unknown>
    const strings = [...(Array.isArray(s['enum']) ? s['enum'] : []), ...('const' in s ? [s['const']] : [])].filter((x): x is string => typeof x === 'string')
    for (const x of strings) {
      enumStrings.add(x)
      if (name !== undefined) addTo(enumsByName, name, x, enumSeen)
    }
    for (const keyword of ['minLength', 'maxLength'] as const) {
      const bound = s[keyword]
      if (typeof bound === 'number') lengthBounds.add(bound)
    }
    for (const [keyword, sub] of Object.entries(s)) {
      if ((keyword === 'properties' || keyword === '$defs') && typeof sub === 'object' && sub !== null) {
        for (const [prop, propSchema] of Object.entries(sub)) collectEnums(propSchema, keyword === 'properties' ? prop : undefined)
      } else if (keyword === 'items') {
        collectEnums(sub, name === undefined ? undefined : `${name}[]`)
      } else if (keyword !== 'enum' && keyword !== 'const') {
        collectEnums(sub, name)
      }
    }
  }
  for (const schema of schemas) collectEnums(schema, undefined)

  return {
    seeds,
    valuesByName,
    members,
    enumsByName,
    enumStrings: [...enumStrings],
    lengthBounds: [...lengthBounds].sort((a, b) => a - b),
  }
}

// ---------------------------------------------------------------------------------------------
// Mutations: plain data (so fast-check can print and shrink them), applied to a clone of a seed.

/** A string transform; `bound` is a length bound of the schemas, for the length transforms. */
type StringTransform = (s: string, bound: number) => string

const ASTRAL = '\u{1F600}'
/**
 * What a transform is aimed at: any string, strings that look like timestamps or URIs (so those
 * edits land on `date-time` and `uri` values), or a length bound of the schemas.
 */
type TransformTarget = 'any' | 'timestamp' | 'uri' | 'length'

/** The string edits, each with its name (for reports) and what it is aimed at. */
export const STRING_TRANSFORMS: readonly (readonly [string, TransformTarget, StringTransform])[] = [
  ['trailing LF', 'any', (s) => `${s}\n`],
  ['trailing CRLF', 'any', (s) => `${s}\r\n`],
  ['trailing space', 'any', (s) => `${s} `],
  ['leading space', 'any', (s) => ` ${s}`],
  ['inner space', 'any', (s) => `${s.slice(0, 1)} ${s.slice(1)}`],
  ['trailing tab', 'any', (s) => `${s}\t`],
  ['trailing NUL', 'any', (s) => `${s}\u0000`],
  ['trailing U+2028', 'any', (s) => `${s}\u2028`],
  ['trailing NBSP', 'any', (s) => `${s}\u00a0`],
  ['non-ASCII letter', 'any', (s) => `${s}\u00e9`],
  ['non-ASCII inside', 'any', (s) => `${s.slice(0, Math.ceil(s.length / 2))}\u00e9${s.slice(Math.ceil(s.length / 2))}`],
  ['astral character', 'any', (s) => `${s}${ASTRAL}`],
  ['lone surrogate', 'any', (s) => `${s}\ud800`],
  ['upper case', 'any', (s) => s.toUpperCase()],
  ['lower case', 'any', (s) => s.toLowerCase()],
  ['empty', 'any', () => ''],
  ['first character', 'any', (s) => s.slice(0, 1)],
  ['without last character', 'any', (s) => s.slice(0, -1)],
  // §2 timestamp profile edges
  ['offset -00:00', 'timestamp', (s) => s.replace(/(?:[Zz]|[+-]\d{2}:\d{2})$/, '-00:00')],
  ['offset +00:00', 'timestamp', (s) => s.replace(/(?:[Zz]|[+-]\d{2}:\d{2})$/, '+00:00')],
  ['offset +23:59', 'timestamp', (s) => s.replace(/(?:[Zz]|[+-]\d{2}:\d{2})$/, '+23:59')],
  ['offset +24:00', 'timestamp', (s) => s.replace(/(?:[Zz]|[+-]\d{2}:\d{2})$/, '+24:00')],
  ['offset without colon', 'timestamp', (s) => s.replace(/(?:[Zz]|[+-]\d{2}:\d{2})$/, '+0100')],
  ['lower-case z and t', 'timestamp', (s) => s.replace(/Z$/, 'z').replace('T', 't')],
  ['space separator', 'timestamp', (s) => s.replace('T', ' ')],
  ['leap second', 'timestamp', (s) => s.replace(/T\d{2}:\d{2}:\d{2}/, 'T23:59:60')],
  ['hour 24', 'timestamp', (s) => s.replace(/T\d{2}/, 'T24')],
  ['year 0000', 'timestamp', (s) => s.replace(/^\d{4}-/, '0000-')],
  ['year 0001', 'timestamp', (s) => s.replace(/^\d{4}-/, '0001-')],
  ['Feb 30', 'timestamp', (s) => s.replace(/^(\d{4})-\d{2}-\d{2}/, '$1-02-30')],
  ['Feb 29 of 2023', 'timestamp', (s) => s.replace(/^\d{4}-\d{2}-\d{2}/, '2023-02-29')],
  ['Feb 29 of 2000', 'timestamp', (s) => s.replace(/^\d{4}-\d{2}-\d{2}/, '2000-02-29')],
  ['Feb 29 of 1900', 'timestamp', (s) => s.replace(/^\d{4}-\d{2}-\d{2}/, '1900-02-29')],
  ['month 13', 'timestamp', (s) => s.replace(/^(\d{4})-\d{2}/, '$1-13')],
  ['empty fraction', 'timestamp', (s) => s.replace(/(:\d{2})(?=[Zz+-])/, '$1.')],
  ['long fraction', 'timestamp', (s) => s.replace(/(:\d{2})(?=[Zz+-])/, '$1.123456789012345678')],
  ['comma fraction', 'timestamp', (s) => s.replace(/(:\d{2})(?=[Zz+-])/, '$1,5')],
  ['date only', 'timestamp', (s) => s.slice(0, 10)],
  // RFC 3986 absolute-URI edges
  ['scheme stripped (relative reference)', 'uri', (s) => s.replace(/^[A-Za-z][A-Za-z0-9+.-]*:/, '')],
  ['network-path reference', 'uri', (s) => `//${s.replace(/^[A-Za-z][A-Za-z0-9+.-]*:(?:\/\/)?/, '')}`],
  ['scheme starting with a digit', 'uri', (s) => `1${s}`],
  ['empty scheme', 'uri', (s) => s.replace(/^[A-Za-z][A-Za-z0-9+.-]*:/, ':')],
  ['second fragment', 'uri', (s) => `${s}#a#b`],
  ['bare percent', 'uri', (s) => `${s}%`],
  ['bad percent escape', 'uri', (s) => `${s}%zz`],
  ['percent escape', 'uri', (s) => `${s}%41`],
  ['open bracket', 'uri', (s) => `${s}[`],
  ['query and fragment', 'uri', (s) => `${s}?q=1#f`],
  ['bad IPv6 authority', 'uri', () => 'http://[::1::2]/x'],
  ['port with letters', 'uri', () => 'http://host:8a/x'],
  ['userinfo', 'uri', () => 'http://user:pw@host/x'],
  ['IRI host', 'uri', () => 'http://\u00e9xample.org/'],
  ['empty hier-part', 'uri', () => 'urn:'],
  // §2 length rules count code points
  ['ASCII at bound', 'length', (s, n) => s.slice(0, n).padEnd(n, 'a')],
  ['ASCII above bound', 'length', (s, n) => s.slice(0, n).padEnd(n + 1, 'a')],
  ['ASCII below bound', 'length', (s, n) => s.slice(0, Math.max(0, n - 1)).padEnd(Math.max(0, n - 1), 'a')],
  ['astral at bound', 'length', (_s, n) => ASTRAL.repeat(n)],
  ['astral above bound', 'length', (_s, n) => ASTRAL.repeat(n + 1)],
  ['astral half bound', 'length', (_s, n) => ASTRAL.repeat(Math.ceil(n / 2) + 1)],
  [
    'kept prefix, astral tail at bound',
    'length',
    (s, n) => {
      const head = [...s].slice(0, n)
      return head.join('') + ASTRAL.repeat(Math.max(0, n - head.length))
    },
  ],
]

/** Numbers at the integer, sign and safe-integer edges. */
export const NUMBERS: readonly number[] = [-1, 0, -0, 1, 1.5, 0.5, -1.5, 2, 100, 2 ** 53, 2 ** 53 - 1, 2 ** 53 + 2, -(2 ** 53), 1e308, 1e-7, 4294967296]

/** Values of every JSON type, to put where another type belongs. */
export const OTHER_TYPES: readonly Json[] = [null, true, false, 0, 1, -1, 1.5, '', 'x', '1', 'true', 'null', [], {}, [null], [''], { a: 1 }, ['x', 'x']]

/** Member names no schema declares, some of them easy to confuse with declared ones or with `Object.prototype`. */
export const UNKNOWN_KEYS: readonly string[] = [
  'unknown',
  'x',
  '',
  ' ',
  'kind ',
  'Kind',
  'id\n',
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'extensions',
  'ext.vendor.thing.x',
  '$schema',
  '$id',
]

/** One change, as plain data (so fast-check can print and shrink it). */
export type Op =
  | { readonly op: 'drop' }
  | { readonly op: 'addUnknown'; readonly key: string; readonly value: Json }
  | { readonly op: 'retype'; readonly value: Json }
  | { readonly op: 'string'; readonly transform: number; readonly bound: number }
  | { readonly op: 'randomString'; readonly value: string }
  | { readonly op: 'number'; readonly value: number; readonly anywhere: boolean }
  | { readonly op: 'duplicate'; readonly item: number; readonly reorder: boolean }
  | { readonly op: 'enum'; readonly own: boolean; readonly pick: number }
  | { readonly op: 'transplantValue'; readonly pick: number }
  | { readonly op: 'transplantMember'; readonly pick: number }

/** A change and the location it applies to. */
export interface Mutation {
  /** Which of the locations the change applies to (taken modulo their number). */
  readonly at: number
  readonly change: Op
}

/** A place in the document: the holder object or array, the key in it, and the value's name. */
interface Location {
  readonly parent: Record<string, unknown> | unknown[]
  readonly key: string | number
  readonly name: string
  /** JSON Pointer of the value, for reports. */
  readonly pointer: string
  readonly root: boolean
}

function locations(holder: { root: unknown }): Location[] {
  const out: Location[] = [{ parent: holder as Record<string, unknown>, key: 'root', name: '', pointer: '', root: true }]
  const walk = (value: unknown, name: string, pointer: string): void => {
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        out.push({ parent: value, key: i, name: childName(name, i), pointer: `${pointer}/${i}`, root: false })
        walk(item, childName(name, i), `${pointer}/${i}`)
      })
    } else if (typeof value === 'object' && value !== null) {
      for (const key of Object.keys(value)) {
        const at = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`
        out.push({ parent: value as Record<string, unknown>, key, name: key, pointer: at, root: false })
        walk((value as Record<string, unknown>)[key], key, at)
      }
    }
  }
  walk(holder.root, '', '')
  return out
}

const read = (l: Location): unknown => (l.parent as Record<string | number, unknown>)[l.key]
function write(l: Location, value: unknown): void {
  if (Array.isArray(l.parent)) l.parent[l.key as number] = value
  else setMember(l.parent, l.key as string, value)
}
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const pick = <T>(list: readonly T[], n: number): T | undefined => (list.length === 0 ? undefined : list[n % list.length])

const LOOKS_LIKE_TIMESTAMP = /^\d{4}-\d{2}-\d{2}[Tt]/
const LOOKS_LIKE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:/

function applicable(change: Op, l: Location): boolean {
  const v = read(l)
  switch (change.op) {
    case 'drop':
    case 'transplantValue':
      return !l.root
    case 'addUnknown':
    case 'transplantMember':
      return isObject(v)
    case 'retype':
      return true
    case 'string': {
      if (typeof v !== 'string') return false
      const target = STRING_TRANSFORMS[change.transform]?.[1]
      if (target === 'timestamp') return LOOKS_LIKE_TIMESTAMP.test(v)
      if (target === 'uri') return LOOKS_LIKE_URI.test(v)
      return true
    }
    case 'randomString':
    case 'enum':
      return typeof v === 'string'
    case 'number':
      return change.anywhere ? !l.root : typeof v === 'number'
    case 'duplicate':
      return Array.isArray(v) && v.length > 0
  }
}

/** The locations a change can apply to; a targeted string transform falls back to any string. */
export function candidates(holder: { root: unknown }, change: Op): Location[] {
  const all = locations(holder)
  const fit = all.filter((l) => applicable(change, l))
  if (fit.length > 0 || change.op !== 'string') return fit
  return all.filter((l) => typeof read(l) === 'string')
}

/** The donor values a location can take (for `transplantValue`): those of its name, else every member value. */
export function donorValues(corpus: Corpus, l: Location): readonly unknown[] {
  const own = corpus.valuesByName.get(l.name) ?? []
  return own.length > 0 ? own : corpus.members.map((m) => m[1])
}

/** The `enum`/`const` strings a location can take: its own name's when `own` and there are any, else all of them. */
export function enumValues(corpus: Corpus, l: Location, own: boolean): readonly string[] {
  const list = own ? (corpus.enumsByName.get(l.name) ?? []) : []
  return list.length > 0 ? list : corpus.enumStrings
}

/** Applies one mutation in place; returns what it did, for reports. */
function apply(corpus: Corpus, holder: { root: unknown }, mutation: Mutation): string {
  const l = pick(candidates(holder, mutation.change), mutation.at)
  if (l === undefined) return `${mutation.change.op}: no place`
  applyAt(corpus, l, mutation.change)
  const { change } = mutation
  const what =
    change.op === 'string'
      ? `string "${STRING_TRANSFORMS[change.transform]?.[0] ?? '?'}"${STRING_TRANSFORMS[change.transform]?.[1] === 'length' ? ` (bound ${pick(corpus.lengthBounds, change.bound) ?? 1})` : ''}`
      : change.op === 'addUnknown' || change.op === 'transplantMember'
        ? `${change.op} ${JSON.stringify(change.op === 'addUnknown' ? change.key : pick(corpus.members, change.pick)?.[0])}`
        : change.op
  return `${what} at ${l.pointer === '' ? '/' : l.pointer}`
}

function applyAt(corpus: Corpus, l: Location, change: Op): void {
  const v = read(l)
  switch (change.op) {
    case 'drop':
      if (Array.isArray(l.parent)) l.parent.splice(l.key as number, 1)
      else delete l.parent[l.key as string]
      return
    case 'addUnknown':
      setMember(v as Record<string, unknown>, change.key, clone(change.value))
      return
    case 'retype':
      write(l, clone(change.value))
      return
    case 'string': {
      const [, , transform] = STRING_TRANSFORMS[change.transform] ?? STRING_TRANSFORMS[0]!
      write(l, transform(v as string, pick(corpus.lengthBounds, change.bound) ?? 1))
      return
    }
    case 'randomString':
      write(l, change.value)
      return
    case 'number':
      write(l, change.value)
      return
    case 'duplicate': {
      const items = v as unknown[]
      const item = clone(items[change.item % items.length])
      items.push(change.reorder && isObject(item) ? reversedMembers(item) : item)
      return
    }
    case 'enum': {
      const value = pick(enumValues(corpus, l, change.own), change.pick)
      if (value !== undefined) write(l, value)
      return
    }
    case 'transplantValue': {
      const value = pick(donorValues(corpus, l), change.pick)
      if (value !== undefined) write(l, clone(value))
      return
    }
    case 'transplantMember': {
      const member = pick(corpus.members, change.pick)
      if (member !== undefined) setMember(v as Record<string, unknown>, member[0], clone(member[1]))
      return
    }
  }
}

/** The same members in reverse order: equal as JSON data, so `uniqueItems` must still see a duplicate. */
function reversedMembers(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).reverse()) setMember(out, key, value[key])
  return out
}

/** A clone of `seed` with the mutations applied in order, and what each did. */
export function mutate(corpus: Corpus, seed: unknown, mutations: readonly Mutation[]): { doc: unknown; log: string[] } {
  const holder = { root: clone(seed) }
  const log = mutations.map((m) => apply(corpus, holder, m))
  return { doc: holder.root, log }
}

// ---------------------------------------------------------------------------------------------
// Reporting a disagreement

/** JSON of a document with long strings abbreviated, so a report stays readable. */
export function show(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, v: unknown) => (typeof v === 'string' && v.length > 120 ? `<${[...v].length} code points: ${JSON.stringify(v.slice(0, 40)).slice(1, -1)}…${JSON.stringify(v.slice(-12)).slice(1, -1)}>` : v),
    2,
  )
}

// ---------------------------------------------------------------------------------------------
// The judge

/**
 * Reads the bundle at `bundleDir` once per test file: the manifest's vectors, the schemas, Ajv's
 * validators (a fast one for verdicts, an `allErrors` one for reports), the {@link Corpus}, the
 * schema files some vector seeds, and `disagreement`, which says why Weft and Ajv differ on a
 * document (or why `errors()` contradicts `check()`), or gives undefined.
 */
export function loadDifferential(bundleDir: string) {
  const manifest = readBundleJson<{ name: string; schema: string; instance: string; valid: boolean }[]>(bundleDir, 'conformance/manifest.json')
  const vectors: Vector[] = manifest.map((v) => ({
    name: v.name,
    file: v.schema.slice(v.schema.lastIndexOf('/') + 1),
    valid: v.valid,
    instance: readBundleJson(bundleDir, v.instance),
  }))
  const schemaDir = join(bundleDir, 'schemas')
  const schemas = readdirSync(schemaDir)
    .filter((f) => f.endsWith('.schema.json'))
    .map((f) => JSON.parse(readFileSync(join(schemaDir, f), 'utf8')) as unknown)
  const reference = referenceValidators(bundleDir)
  const diagnostics = referenceValidators(bundleDir, { allErrors: true })
  const corpus = buildCorpus(vectors, schemas)
  const files = [...corpus.seeds.keys()].sort()

  /** Why Weft and Ajv disagree on `doc` (or `errors()` contradicts `check()`), or undefined. */
  function disagreement(file: string, doc: unknown): { weft: boolean; ajv: boolean; report: string } | undefined {
    const weft = validatorForFile(file)
    const ajv = reference.get(file)
    if (weft === undefined || ajv === undefined) throw new Error(`no validator for ${file}`)
    const ajvVerdict = ajv(doc) === true
    const weftVerdict = weft.check(doc)
    const issues = weft.errors(doc)
    if (weftVerdict === ajvVerdict && (issues.length === 0) === weftVerdict) return undefined
    const full = diagnostics.get(file)
    full?.(doc)
    const ajvErrors = (full?.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.keyword}: ${e.message ?? ''} (${e.schemaPath})`)
    const weftErrors = issues.slice(0, 5).map((i) => `${i.path || '/'} ${i.keyword}: ${i.message} (${i.schemaPath})`)
    return {
      weft: weftVerdict,
      ajv: ajvVerdict,
      report: [
        `Weft check() = ${weftVerdict}, Ajv = ${ajvVerdict}, Weft errors() = ${issues.length} issue(s)`,
        `  Ajv errors: ${ajvErrors.join(' | ') || '(none)'}`,
        `  Weft errors: ${weftErrors.join(' | ') || '(none)'}`,
      ].join('\n'),
    }
  }

  return { vectors, reference, corpus, files, disagreement }
}
