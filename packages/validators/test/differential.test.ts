/**
 * Differential tests: the generated validators against Ajv on the normative schema files.
 *
 * Invariant: for any document, `validators[x].check(doc)` equals Ajv's verdict on the schema file
 * of `x`, and `errors(doc)` is empty exactly when `check(doc)` is true. Documents are the
 * manifest's valid vectors, mutated: members dropped, unknown members added, values retyped,
 * strings made tricky (§2 format edges: trailing line feeds, non-ASCII, `-00:00`, leap seconds,
 * year 0000, Feb 30, relative URIs, length bounds in code points), numbers pushed past integer
 * and safe-integer limits, array items duplicated, enum values swapped, and members taken from
 * the vectors of other schemas.
 *
 * Two passes per schema: every single mutation of every valid vector, exhaustively (deterministic,
 * all disagreements listed), then fast-check chains of one to four random mutations. A schema file
 * no vector names (the definitions-only `common.schema.json`) is judged instead on every vector of
 * the manifest and on random JSON values.
 * `WEFT_FUZZ_RUNS` sets the runs per schema (default 2000), `WEFT_FUZZ_SEED` the seed (fixed by
 * default, so a run is reproducible); `npm run fuzz` runs 10000 per schema.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { bundleForTests, readBundleJson } from '@weft/spec/bundle'
import { validatorForFile, validators } from '@weft/validators'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { referenceValidators } from './ajv-reference.js'

const DEFAULT_SEED = 20_260_731
const RUNS = positiveInteger(process.env['WEFT_FUZZ_RUNS'], 2000, 'WEFT_FUZZ_RUNS')
const SEED = integer(process.env['WEFT_FUZZ_SEED'], DEFAULT_SEED, 'WEFT_FUZZ_SEED')

function integer(text: string | undefined, fallback: number, name: string): number {
  if (text === undefined || text.trim() === '') return fallback
  const n = Number(text)
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got ${JSON.stringify(text)}`)
  return n
}

function positiveInteger(text: string | undefined, fallback: number, name: string): number {
  const n = integer(text, fallback, name)
  if (n < 1) throw new Error(`${name} must be at least 1, got ${n}`)
  return n
}

const dir = bundleForTests()

interface Vector {
  readonly name: string
  readonly file: string
  readonly valid: boolean
  readonly instance: unknown
}

// ---------------------------------------------------------------------------------------------
// Corpus drawn from the bundle: seeds, donor members, enum values, length bounds.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T

/** Sets an own data member, even one named `__proto__` (plain assignment would set the prototype). */
function setMember(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}

/** The name a value goes by: its member name, or `<member>[]` for the items of a named array. */
function childName(parentName: string, key: string | number): string {
  return typeof key === 'number' ? `${parentName}[]` : key
}

interface Corpus {
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

const STRING_TRANSFORMS: readonly (readonly [string, TransformTarget, StringTransform])[] = [
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

const NUMBERS: readonly number[] = [-1, 0, -0, 1, 1.5, 0.5, -1.5, 2, 100, 2 ** 53, 2 ** 53 - 1, 2 ** 53 + 2, -(2 ** 53), 1e308, 1e-7, 4294967296]

const OTHER_TYPES: readonly Json[] = [null, true, false, 0, 1, -1, 1.5, '', 'x', '1', 'true', 'null', [], {}, [null], [''], { a: 1 }, ['x', 'x']]

const UNKNOWN_KEYS: readonly string[] = [
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

type Op =
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

interface Mutation {
  /** Which of the locations the change applies to (taken modulo their number). */
  readonly at: number
  readonly change: Op
}

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ op: 'drop' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('addUnknown' as const),
      key: fc.constantFrom(...UNKNOWN_KEYS),
      value: fc.constantFrom(...OTHER_TYPES),
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('retype' as const), value: fc.constantFrom(...OTHER_TYPES) }) },
  {
    weight: 8,
    arbitrary: fc.record({
      op: fc.constant('string' as const),
      transform: fc.nat({ max: STRING_TRANSFORMS.length - 1 }),
      bound: fc.nat(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('randomString' as const),
      value: fc.oneof(
        fc.string(),
        fc.string({ unit: 'binary', maxLength: 20 }),
        fc.webUrl(),
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('number' as const),
      value: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...NUMBERS) }, { weight: 1, arbitrary: fc.integer() }, { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) }),
      anywhere: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('duplicate' as const), item: fc.nat(), reorder: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('enum' as const), own: fc.boolean(), pick: fc.nat() }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('transplantValue' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('transplantMember' as const), pick: fc.nat() }) },
)

const mutationsArbitrary: fc.Arbitrary<Mutation[]> = fc.array(fc.record({ at: fc.nat(), change: opArbitrary }), {
  minLength: 1,
  maxLength: 4,
})

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
function candidates(holder: { root: unknown }, change: Op): Location[] {
  const all = locations(holder)
  const fit = all.filter((l) => applicable(change, l))
  if (fit.length > 0 || change.op !== 'string') return fit
  return all.filter((l) => typeof read(l) === 'string')
}

/** The donor values and enum values a location can take (for `transplantValue` and `enum`). */
function donorValues(corpus: Corpus, l: Location): readonly unknown[] {
  const own = corpus.valuesByName.get(l.name) ?? []
  return own.length > 0 ? own : corpus.members.map((m) => m[1])
}
function enumValues(corpus: Corpus, l: Location, own: boolean): readonly string[] {
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

/**
 * Every single mutation of a document: each applicable location with each change of a closed
 * list (every string transform at every length bound, every number, every other-typed value,
 * every unknown key, every enum value and donor value of the location's name). Random changes
 * (`randomString`, arbitrary numbers) are left to the fuzzer; members from other vectors are
 * sampled (`memberStride`) since there are hundreds.
 */
function singleMutations(corpus: Corpus, doc: unknown, memberStride: number): Mutation[] {
  const out: Mutation[] = []
  const holder = { root: doc }
  const changes: Op[] = [
    { op: 'drop' },
    ...UNKNOWN_KEYS.map((key): Op => ({ op: 'addUnknown', key, value: 1 })),
    ...OTHER_TYPES.map((value): Op => ({ op: 'retype', value })),
    ...STRING_TRANSFORMS.flatMap(([, target], transform): Op[] =>
      target === 'length' ? corpus.lengthBounds.map((_, bound): Op => ({ op: 'string', transform, bound })) : [{ op: 'string', transform, bound: 0 }],
    ),
    ...NUMBERS.map((value): Op => ({ op: 'number', value, anywhere: false })),
    { op: 'duplicate', item: 0, reorder: false },
    { op: 'duplicate', item: 0, reorder: true },
  ]
  for (const change of changes) {
    candidates(holder, change).forEach((_, at) => out.push({ at, change }))
  }
  for (const [at, l] of candidates(holder, { op: 'enum', own: true, pick: 0 }).entries()) {
    enumValues(corpus, l, true).forEach((_, p) => out.push({ at, change: { op: 'enum', own: true, pick: p } }))
  }
  for (const [at, l] of candidates(holder, { op: 'transplantValue', pick: 0 }).entries()) {
    donorValues(corpus, l).forEach((_, p) => out.push({ at, change: { op: 'transplantValue', pick: p } }))
  }
  candidates(holder, { op: 'transplantMember', pick: 0 }).forEach((_, at) => {
    for (let p = at % memberStride; p < corpus.members.length; p += memberStride) {
      out.push({ at, change: { op: 'transplantMember', pick: p } })
    }
  })
  return out
}

/** The same members in reverse order: equal as JSON data, so `uniqueItems` must still see a duplicate. */
function reversedMembers(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).reverse()) setMember(out, key, value[key])
  return out
}

/** A clone of `seed` with the mutations applied in order, and what each did. */
function mutate(corpus: Corpus, seed: unknown, mutations: readonly Mutation[]): { doc: unknown; log: string[] } {
  const holder = { root: clone(seed) }
  const log = mutations.map((m) => apply(corpus, holder, m))
  return { doc: holder.root, log }
}

// ---------------------------------------------------------------------------------------------
// Reporting a disagreement

/** JSON of a document with long strings abbreviated, so a report stays readable. */
function show(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, v: unknown) => (typeof v === 'string' && v.length > 120 ? `<${[...v].length} code points: ${JSON.stringify(v.slice(0, 40)).slice(1, -1)}…${JSON.stringify(v.slice(-12)).slice(1, -1)}>` : v),
    2,
  )
}

// ---------------------------------------------------------------------------------------------

describe.skipIf(!dir)('generated validators agree with Ajv on the normative schemas', () => {
  const bundleDir = dir ?? ''
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

  it('has a Weft validator for every schema file, and Ajv compiles all 22 files', () => {
    expect(reference.size).toBe(22)
    for (const file of reference.keys()) {
      const v = validatorForFile(file)
      expect(v, file).toBeDefined()
      expect(Object.values(validators)).toContain(v)
    }
  })

  it.each(vectors.map((v) => [v.name, v] as const))('manifest vector: %s', (_name, v) => {
    // The reference must itself get the manifest right, or the differential proves nothing.
    expect(reference.get(v.file)?.(v.instance), 'Ajv verdict vs manifest').toBe(v.valid)
    expect(disagreement(v.file, v.instance)?.report).toBeUndefined()
  })

  it.each(files)(
    '%s: every single mutation of every valid vector gets the same verdict',
    (file) => {
      const found: string[] = []
      let total = 0
      let accepted = 0
      for (const [index, seed] of (corpus.seeds.get(file) ?? []).entries()) {
        for (const mutation of singleMutations(corpus, clone(seed), 7)) {
          const { doc, log } = mutate(corpus, seed, [mutation])
          total++
          const d = disagreement(file, doc)
          if (d === undefined) {
            if (validatorForFile(file)?.check(doc) === true) accepted++
            continue
          }
          found.push(`seed #${index}, ${log.join('; ')}: ${d.report}\n  document: ${show(doc)}`)
        }
      }
      expect(found.length === 0 ? [] : [`${found.length} of ${total} documents disagree; first ones:`, ...found.slice(0, 10)]).toEqual([])
      // Both sides of the schema must be reached, or agreement would be trivial.
      expect(accepted, 'documents accepted').toBeGreaterThan(0)
      expect(total - accepted, 'documents rejected').toBeGreaterThan(0)
    },
    120_000,
  )

  it.each(files)(
    `%s: random mutation chains get the same verdict (${RUNS} runs, seed ${SEED})`,
    (file) => {
      const seeds = corpus.seeds.get(file) ?? []
      const property = fc.property(fc.nat({ max: seeds.length - 1 }), mutationsArbitrary, (seedIndex, mutations) => {
        const { doc, log } = mutate(corpus, seeds[seedIndex], mutations)
        const d = disagreement(file, doc)
        if (d !== undefined) {
          throw new Error(`${file}, seed vector #${seedIndex}, ${log.join('; ')}:\n${d.report}\n  document: ${show(doc)}`)
        }
      })
      try {
        fc.assert(property, { numRuns: RUNS, seed: SEED })
      } catch (error) {
        const message = `differential test of ${file} failed; reproduce with WEFT_FUZZ_SEED=${SEED} WEFT_FUZZ_RUNS=${RUNS}`
        console.error(message)
        throw new Error(`${message}\n${(error as Error).message}`, { cause: error })
      }
    },
    Math.max(60_000, RUNS * 60),
  )

  // Schema files no manifest vector names, such as the definitions-only common.schema.json (§21):
  // no seed to mutate, so both sides judge every vector of the manifest and random JSON values.
  const unseeded = [...reference.keys()].filter((file) => !corpus.seeds.has(file)).sort()

  it('fuzzes the schema files no vector names: common.schema.json', () => {
    expect(unseeded).toEqual(['common.schema.json'])
  })

  it.each(unseeded)(`%s: every vector and random JSON values get the same verdict (${RUNS} runs, seed ${SEED})`, (file) => {
    for (const v of vectors) expect(disagreement(file, v.instance)?.report, v.name).toBeUndefined()
    const property = fc.property(fc.jsonValue(), (doc) => {
      const d = disagreement(file, doc)
      if (d !== undefined) throw new Error(`${file}:\n${d.report}\n  document: ${show(doc)}`)
    })
    fc.assert(property, { numRuns: RUNS, seed: SEED })
  })
})
