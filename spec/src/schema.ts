/**
 * Small helpers over TypeBox that keep the emitted JSON Schema shaped exactly like the normative
 * MissionWeaveProtocol 0.1 schemas (§21), so that the equivalence test can compare them key by key.
 *
 * TypeBox's own `Type.Literal` adds a `type` member beside `const`, and `Type.Ref` loses the
 * static type; these helpers emit the normative spelling while keeping a precise static type.
 * @module
 */
import Type, { type Static, type TSchema, type TUnsafe } from 'typebox'

/** The `$id` prefix shared by every MissionWeaveProtocol 0.1 schema (schemas/README.md). */
export const SCHEMA_BASE = 'https://missionweaveprotocol.dev/schemas/0.1/'

/** The JSON Schema dialect every normative schema declares (§21). */
export const SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema'

/**
 * A `$ref` to another definition that keeps the target's static type.
 * @param target - The reference as the normative schema spells it, e.g.
 *   `common.schema.json#/$defs/id` or `#/$defs/coreCommandKind`.
 */
export function ref<T extends TSchema>(target: string, _definition?: T): TUnsafe<Static<T>> {
  return Type.Unsafe<Static<T>>({ $ref: target })
}

/** `{ "const": value }` exactly, with the literal as its static type. */
export function constant<const V extends string | number | boolean | null>(value: V): TUnsafe<V> {
  return Type.Unsafe<V>({ const: value })
}

/** `{ "enum": [...] }` exactly, with the union of the literals as its static type. */
export function oneOfValues<const V extends readonly (string | number | boolean | null)[]>(values: V): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ enum: [...values] })
}

/** Any JSON value (`{}`), typed `unknown`. */
export function anyValue(): TUnsafe<unknown> {
  return Type.Unsafe<unknown>({})
}

/** An object with no declared members (`{ "type": "object" }`), typed as a string-keyed record. */
export function freeObject(): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({ type: 'object' })
}

/**
 * One of the 22 normative documents (§21): its file name, `$id`, title and TypeBox schema.
 * The schema value carries its own `$defs` where the normative file has local definitions.
 */
export interface DocumentDefinition<T extends TSchema = TSchema> {
  /** Short name used for generated modules and validator exports, e.g. `workItem`. */
  readonly name: string
  /** Normative file name, e.g. `work-item.schema.json`. */
  readonly file: string
  /** Title carried into the emitted schema (an annotation). */
  readonly title: string
  /** The TypeBox schema of the document (for `common`, an object holding only `$defs`). */
  readonly schema: T
  /** The exported static type of the document, e.g. `WorkItem` (generators import it by name). */
  readonly typeName: string
}

/**
 * Builds a {@link DocumentDefinition}. `typeName` defaults to the name in PascalCase; pass it when
 * the type is named otherwise (the Protocol Error is `WireError`, not to shadow `Error`).
 */
export function document<T extends TSchema>(name: string, file: string, title: string, schema: T, typeName?: string): DocumentDefinition<T> {
  return { name, file, title, schema, typeName: typeName ?? name[0]!.toUpperCase() + name.slice(1) }
}

/** The full `$id` of a document definition. */
export function documentId(definition: Pick<DocumentDefinition, 'file'>): string {
  return SCHEMA_BASE + definition.file
}

/**
 * The emitted JSON Schema of a document: dialect, `$id` and title (§21) followed by the plain JSON
 * form of its TypeBox schema (for `common`, that is its `$defs`). The result holds no TypeBox
 * internals and can be written to disk or compared with {@link compareSchemas}.
 * @example
 * ```ts
 * const json = toJsonSchema(workItemDocument)
 * json.$id // 'https://missionweaveprotocol.dev/schemas/0.1/work-item.schema.json'
 * ```
 */
export function toJsonSchema(def: DocumentDefinition): Record<string, unknown> {
  return {
    $schema: SCHEMA_DIALECT,
    $id: documentId(def),
    title: def.title,
    ...(JSON.parse(JSON.stringify(def.schema)) as Record<string, unknown>),
  }
}

/** Keywords that only annotate a schema; the comparison skips them wherever a schema stands. */
const ANNOTATION_KEYWORDS: ReadonlySet<string> = new Set(['$id', '$schema', 'title', 'description', '$comment'])

/** Keywords whose value is a map from names (property or definition names) to schemas. */
const SCHEMA_MAP_KEYWORDS: ReadonlySet<string> = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])

/** Keywords whose value is a single schema. */
const SCHEMA_KEYWORDS: ReadonlySet<string> = new Set([
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'propertyNames',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
])

/** Keywords whose value is an array of schemas (order kept: it is meaningful for `prefixItems`). */
const SCHEMA_ARRAY_KEYWORDS: ReadonlySet<string> = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems'])

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function pointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1')
}

function where(pointer: string): string {
  return pointer === '' ? '(root)' : pointer
}

function show(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value)
}

/** JSON data equality: member order of objects does not count, array order does. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((item, index) => jsonEqual(item, b[index]))
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a)
    if (keys.length !== Object.keys(b).length) return false
    return keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]))
  }
  return false
}

function compareSchemaAt(ours: unknown, normative: unknown, pointer: string, out: string[]): void {
  if (!isPlainObject(ours) || !isPlainObject(normative)) {
    // Boolean schemas, or a shape mismatch: compare as data.
    if (!jsonEqual(ours, normative)) out.push(`${where(pointer)}: ours is ${show(ours)}, normative is ${show(normative)}`)
    return
  }
  const keys = new Set([...Object.keys(normative), ...Object.keys(ours)])
  for (const key of keys) {
    if (ANNOTATION_KEYWORDS.has(key)) continue
    const path = `${pointer}/${pointerToken(key)}`
    const hasOurs = Object.hasOwn(ours, key)
    const hasNormative = Object.hasOwn(normative, key)
    if (!hasOurs) {
      out.push(`${path}: missing (normative has ${show(normative[key])})`)
      continue
    }
    if (!hasNormative) {
      out.push(`${path}: unexpected (ours has ${show(ours[key])})`)
      continue
    }
    compareKeyword(key, ours[key], normative[key], path, out)
  }
}

function compareKeyword(key: string, ours: unknown, normative: unknown, path: string, out: string[]): void {
  if (key === 'required' && Array.isArray(ours) && Array.isArray(normative)) {
    // `required` is a set: order carries no meaning, and TypeBox orders it by declaration.
    const ourSet = new Set(ours)
    const normativeSet = new Set(normative)
    for (const name of normativeSet) if (!ourSet.has(name)) out.push(`${path}: lacks ${show(name)}`)
    for (const name of ourSet) if (!normativeSet.has(name)) out.push(`${path}: has extra ${show(name)}`)
    return
  }
  if (SCHEMA_MAP_KEYWORDS.has(key) && isPlainObject(ours) && isPlainObject(normative)) {
    // Member names here are data (a property may be called `title`), so nothing is skipped.
    const names = new Set([...Object.keys(normative), ...Object.keys(ours)])
    for (const name of names) {
      const at = `${path}/${pointerToken(name)}`
      if (!Object.hasOwn(ours, name)) out.push(`${at}: missing (normative has ${show(normative[name])})`)
      else if (!Object.hasOwn(normative, name)) out.push(`${at}: unexpected (ours has ${show(ours[name])})`)
      else compareSchemaAt(ours[name], normative[name], at, out)
    }
    return
  }
  if (SCHEMA_KEYWORDS.has(key)) {
    compareSchemaAt(ours, normative, path, out)
    return
  }
  if (SCHEMA_ARRAY_KEYWORDS.has(key) && Array.isArray(ours) && Array.isArray(normative)) {
    if (ours.length !== normative.length) {
      out.push(`${path}: ours has ${ours.length} subschemas, normative has ${normative.length}`)
    }
    const shared = Math.min(ours.length, normative.length)
    for (let index = 0; index < shared; index++) compareSchemaAt(ours[index], normative[index], `${path}/${index}`, out)
    return
  }
  // Every other keyword (`type`, `const`, `enum`, `pattern`, bounds, `$ref`, ...) is plain data;
  // `enum` order counts.
  if (!jsonEqual(ours, normative)) out.push(`${path}: ours is ${show(ours)}, normative is ${show(normative)}`)
}

/**
 * Lists every difference between an emitted schema (usually {@link toJsonSchema}) and a normative
 * schema file, each as `JSON-pointer: what differs`. An empty list means equivalent.
 *
 * Follows the comparison rules of the equivalence test: annotations (`$id`, `$schema`, `title`,
 * `description`, `$comment`) are skipped wherever a schema stands, `required` is compared as a set,
 * and everything else (keyword presence, `enum` order, `$ref` spelling, nested subschemas) must
 * match exactly. Property and definition names are never treated as annotations.
 * @param ours - The schema Weft emits.
 * @param normative - The schema of the protocol bundle (§21).
 * @example
 * ```ts
 * compareSchemas({ type: 'string', pattern: 'a' }, { type: 'string', pattern: 'b' })
 * // ['/pattern: ours is "a", normative is "b"']
 * ```
 */
export function compareSchemas(ours: unknown, normative: unknown): string[] {
  const out: string[] = []
  compareSchemaAt(ours, normative, '', out)
  return out
}
