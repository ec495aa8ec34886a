/**
 * Schema identity for the validator compiler: which schemas have the same content, and where
 * each one occurs across every resource of the registry.
 *
 * Schemas with the same content compile to one shared function wherever they occur (a payload
 * part used by forty payloads is emitted once), so the compiler needs a content key that ignores
 * annotations and makes `$ref`s absolute, and one count of occurrences taken over the whole
 * registry before the first function is named: a function's name, module and schema-path
 * parameter all follow from its schema's first occurrence.
 * @module
 */
import { ANNOTATIONS, APPLICATORS, SUBSCHEMA, SUBSCHEMA_LISTS, child, isPureRef, str, type Obj } from './keywords.js'
import { resolveUri, type Location, type SchemaNode, type SchemaRegistry } from './registry.js'

/** How often a schema occurs (locations and `$ref`s naming it) and at which schema paths. */
export interface Occurrences {
  count: number
  readonly pointers: Set<string>
  /** The first location, in registration order with `$defs` before the rest of a schema. */
  readonly first: Location
}

/** The content keys of the registry's schemas and where each occurs; {@link ValidatorCompiler} asks it which schemas share a function. */
export class SchemaIdentity {
  readonly #registry: SchemaRegistry
  readonly #keys = new WeakMap<object, string>()
  #occurrences: Map<string, Occurrences> | undefined

  /** The registry must hold every schema resource before the first {@link survey}. */
  constructor(registry: SchemaRegistry) {
    this.#registry = registry
  }

  /**
   * The content of a schema as a string: two schemas with the same key compile to the same code.
   * `$ref`s are made absolute and annotations dropped; a resource root is told apart from inner
   * schemas, so an entry point is never a shared part.
   */
  key(base: string, node: SchemaNode, root = false): string {
    if (typeof node === 'boolean') return String(node)
    let key = this.#keys.get(node)
    if (key === undefined) {
      const parts: string[] = []
      for (const [keyword, value] of Object.entries(node)) {
        if (ANNOTATIONS.has(keyword)) continue
        let text: string
        if (keyword === '$ref') text = str(resolveUri(base, value as string).replace(/#$/, ''))
        else if (keyword === 'properties') {
          text = `{${Object.entries(value as Record<string, SchemaNode>)
            .map(([name, sub]) => `${str(name)}:${this.key(base, sub)}`)
            .join(',')}}`
        } else if (SUBSCHEMA.has(keyword)) text = this.key(base, value as SchemaNode)
        else if (SUBSCHEMA_LISTS.has(keyword) && Array.isArray(value)) text = `[${value.map((sub: SchemaNode) => this.key(base, sub)).join(',')}]`
        else text = str(value)
        parts.push(`${str(keyword)}:${text}`)
      }
      key = `{${parts.join(',')}}`
      this.#keys.set(node, key)
    }
    return root ? `root:${key}` : key
  }

  /** The content key of the schema at `loc` (see {@link key}). */
  keyOf(loc: Location): string {
    return this.key(loc.base, loc.node, loc.pointer === '')
  }

  /** Where every schema of the registry occurs; counted once, before the first function. */
  survey(): Map<string, Occurrences> {
    if (this.#occurrences) return this.#occurrences
    const found = new Map<string, Occurrences>()
    const note = (loc: Location): void => {
      const key = this.keyOf(loc)
      const seen = found.get(key)
      if (seen) {
        seen.count++
        seen.pointers.add(loc.pointer)
      } else found.set(key, { count: 1, pointers: new Set([loc.pointer]), first: loc })
    }
    const visit = (base: string, pointer: string, node: SchemaNode): void => {
      note({ base, pointer, node })
      if (typeof node !== 'object') return
      const s = node as Obj
      if (typeof s['$ref'] === 'string') note(this.#registry.resolve(base, s['$ref']))
      // `$defs` first: a schema that is also a definition is named after the definition
      const defs = (s['$defs'] ?? {}) as Record<string, SchemaNode>
      for (const [name, sub] of Object.entries(defs)) visit(base, child(pointer, '$defs', name), sub)
      for (const [keyword, value] of Object.entries(s)) {
        if (keyword === 'properties') {
          for (const [name, sub] of Object.entries(value as Record<string, SchemaNode>)) visit(base, child(pointer, 'properties', name), sub)
        } else if (SUBSCHEMA.has(keyword)) visit(base, child(pointer, keyword), value as SchemaNode)
        else if (SUBSCHEMA_LISTS.has(keyword) && Array.isArray(value)) value.forEach((sub: SchemaNode, i) => visit(base, child(pointer, keyword, i), sub))
      }
    }
    for (const [base, schema] of this.#registry.resources()) visit(base, '', schema)
    this.#occurrences = found
    return found
  }

  /** Whether a schema met inside another is validated by a call to its shared function. */
  shared(loc: Location): boolean {
    const node = loc.node
    if (typeof node !== 'object' || isPureRef(node)) return false
    if ((this.survey().get(this.keyOf(loc))?.count ?? 0) < 2) return false
    // a schema of one plain keyword compiles to one line: a call would save nothing
    const keywords = Object.keys(node).filter((k) => !ANNOTATIONS.has(k))
    return keywords.length >= 2 || keywords.some((k) => APPLICATORS.has(k))
  }
}
