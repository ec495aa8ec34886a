/**
 * Resolution of `$ref` across the schemas being compiled: every schema is registered under an
 * absolute base URI, and a reference is resolved against the base of the schema it appears in
 * (RFC 3986 §5.2 for the URI, RFC 6901 for the fragment pointer).
 * @module
 */

/** A JSON Schema node as it appears in JSON (a boolean schema or an object). */
export type SchemaNode = boolean | { readonly [keyword: string]: unknown }

/** A resolved location: the schema it lives in, the absolute URI and the node. */
export interface Location {
  /** The base URI of the schema resource the node belongs to (no fragment). */
  readonly base: string
  /** The JSON pointer of the node inside that resource (`''` for the root). */
  readonly pointer: string
  /** The node itself. */
  readonly node: SchemaNode
}

/** Escapes one reference token of a JSON pointer (RFC 6901). */
export function escapePointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1')
}

function unescapePointerToken(token: string): string {
  return decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~')
}

/** Resolves a possibly relative reference against an absolute base (no dot segments needed here). */
export function resolveUri(base: string, reference: string): string {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(reference)) return reference
  const baseNoFragment = base.split('#')[0]!
  if (reference.startsWith('#')) return baseNoFragment + reference
  if (reference.startsWith('/')) {
    const origin = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*)/.exec(baseNoFragment)
    return (origin ? origin[1]! : '') + reference
  }
  return baseNoFragment.slice(0, baseNoFragment.lastIndexOf('/') + 1) + reference
}

/** Schemas by base URI, with `$ref` resolution. */
export class SchemaRegistry {
  readonly #resources = new Map<string, SchemaNode>()

  /** Registers a schema resource under `base` (its `$id`, or a synthetic URI for payloads). */
  add(base: string, schema: SchemaNode): void {
    if (this.#resources.has(base)) throw new Error(`schema already registered: ${base}`)
    this.#resources.set(base, schema)
  }

  /** Whether a resource is registered. */
  has(base: string): boolean {
    return this.#resources.has(base)
  }

  /** Every registered resource as `[base, schema]`, in registration order. */
  resources(): IterableIterator<[string, SchemaNode]> {
    return this.#resources.entries()
  }

  /** The node at `base#pointer`. */
  locate(base: string, pointer: string): Location {
    const resource = this.#resources.get(base)
    if (resource === undefined) throw new Error(`unresolvable $ref: no schema registered as ${base}`)
    let node: unknown = resource
    if (pointer !== '') {
      if (!pointer.startsWith('/')) throw new Error(`unsupported $ref fragment (not a JSON pointer): #${pointer}`)
      for (const raw of pointer.slice(1).split('/')) {
        const token = unescapePointerToken(raw)
        if (typeof node !== 'object' || node === null || !Object.hasOwn(node, token)) {
          throw new Error(`unresolvable $ref: ${base}#${pointer}`)
        }
        node = (node as Record<string, unknown>)[token]
      }
    }
    if (typeof node !== 'boolean' && (typeof node !== 'object' || node === null || Array.isArray(node))) {
      throw new Error(`$ref target is not a schema: ${base}#${pointer}`)
    }
    return { base, pointer, node: node as SchemaNode }
  }

  /** Resolves `$ref` as written in a schema whose resource base is `base`. */
  resolve(base: string, reference: string): Location {
    const absolute = resolveUri(base, reference)
    const hash = absolute.indexOf('#')
    const target = hash < 0 ? absolute : absolute.slice(0, hash)
    const fragment = hash < 0 ? '' : absolute.slice(hash + 1)
    return this.locate(target, fragment)
  }
}
