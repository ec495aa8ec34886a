/**
 * An ahead-of-time compiler from JSON Schema Draft 2020-12 (the keyword subset the
 * MissionWeaveProtocol 0.1 schemas use) to JavaScript validator functions.
 *
 * Every schema location compiles to up to two functions:
 * - a *check* function `c_*(v): boolean` that stops at the first failure (the hot path: most
 *   documents are valid, and a hostile one is rejected as soon as anything is wrong), and
 * - a *collect* function `e_*(v, p, x): void` that reports issues into a bounded collector `x`
 *   (`x.add(path, keyword, message, schemaPath)` throws once the bound is reached, which ends the
 *   walk: hostile input can never produce an unbounded error list).
 *
 * Unknown keywords are a compile error, not silently ignored: a validator that skipped a keyword
 * would accept documents the normative schema rejects.
 * @module
 */
import { escapePointerToken, type Location, type SchemaNode, type SchemaRegistry } from './registry.js'

/** Where the code for a schema resource goes, and how its functions are named. */
export interface Placement {
  /** The generated module (file stem, e.g. `common`) that owns the resource's functions. */
  readonly module: string
  /** A prefix making function names unique inside the module (e.g. `common`). */
  readonly prefix: string
}

/** A function a format keyword compiles to: `name(text): boolean` imported from `from`. */
export interface FormatImport {
  readonly name: string
  readonly from: string
  /**
   * Patterns every string accepted by the format matches, and patterns none of them matches.
   * The check path skips a `pattern` (or a `not: { pattern }`) the format already decides once the
   * format has passed; the collect path still reports each keyword. Each claim must be proven by a
   * test of the format implementation.
   */
  readonly implies?: { readonly patterns?: readonly string[]; readonly excludes?: readonly string[] }
}

/** Options of {@link ValidatorCompiler}. */
export interface CompilerOptions {
  /** Places each schema resource (by base URI) into a module. */
  readonly place: (base: string) => Placement
  /** Implementations of the `format` values in use; an unknown format is a compile error. */
  readonly formats: Readonly<Record<string, FormatImport>>
  /** The module runtime helpers are imported from, relative to generated modules. */
  readonly runtime: string
}

/** One generated function. */
export interface CompiledFunction {
  readonly name: string
  readonly kind: 'check' | 'collect'
  /** Absolute location `base#pointer` it validates, for its TSDoc. */
  readonly location: string
  readonly body: string
}

/** What the compiler produced for one module. */
export interface CompiledModule {
  readonly name: string
  /** Named imports by source module. */
  readonly imports: Map<string, Set<string>>
  /** Module-level constants (regular expressions, sets), in creation order. */
  readonly constants: string[]
  readonly functions: CompiledFunction[]
  /** Names other modules import from this one. */
  readonly exported: Set<string>
}

const ANNOTATIONS = new Set(['$schema', '$id', '$comment', 'title', 'description', 'examples', 'default', '$defs', 'deprecated', 'readOnly', 'writeOnly'])

/**
 * Whether a schema asserts nothing about an instance: `true`, or an object holding only `$defs`
 * and annotations, as the definitions-only `common.schema.json` does (§21). Its root accepts every
 * JSON value, so a validator of it narrows to `unknown`.
 */
export function assertsNothing(node: SchemaNode): boolean {
  return node === true || (typeof node === 'object' && Object.keys(node).every((keyword) => ANNOTATIONS.has(keyword)))
}

const HANDLED = new Set([
  '$ref', 'type', 'const', 'enum', 'minLength', 'maxLength', 'pattern', 'format', 'minimum', 'maximum',
  'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'required', 'properties', 'additionalProperties',
  'propertyNames', 'minProperties', 'maxProperties', 'dependentRequired', 'items', 'minItems', 'maxItems',
  'uniqueItems', 'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else',
])
const OBJECT_KEYWORDS = ['required', 'properties', 'additionalProperties', 'propertyNames', 'minProperties', 'maxProperties', 'dependentRequired']
const ARRAY_KEYWORDS = ['items', 'minItems', 'maxItems', 'uniqueItems']
const STRING_KEYWORDS = ['minLength', 'maxLength', 'pattern', 'format']
const NUMBER_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']

type Obj = { readonly [keyword: string]: unknown }

const str = (value: unknown): string => JSON.stringify(value)
const child = (pointer: string, ...tokens: (string | number)[]): string =>
  pointer + tokens.map((t) => '/' + escapePointerToken(String(t))).join('')

function typeTest(type: string, v: string): string {
  switch (type) {
    case 'object': return `(typeof ${v} === 'object' && ${v} !== null && !Array.isArray(${v}))`
    case 'array': return `Array.isArray(${v})`
    case 'string': return `typeof ${v} === 'string'`
    case 'integer': return `Number.isInteger(${v})`
    case 'number': return `(typeof ${v} === 'number' && Number.isFinite(${v}))`
    case 'boolean': return `typeof ${v} === 'boolean'`
    case 'null': return `${v} === null`
    default: throw new Error(`unknown JSON Schema type: ${type}`)
  }
}

function isPrimitive(value: unknown): value is string | number | boolean | null {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value)
}

/** Compiles schema locations into validator functions grouped by module. */
export class ValidatorCompiler {
  readonly #registry: SchemaRegistry
  readonly #options: CompilerOptions
  readonly #modules = new Map<string, CompiledModule>()
  readonly #names = new Map<string, string>() // `${kind}:${base}#${pointer}` -> function name
  readonly #pending: { kind: 'check' | 'collect'; loc: Location; name: string }[] = []
  readonly #regexps = new Map<string, string>() // `${module}\0${pattern}` -> const name
  readonly #sets = new Map<string, string>()
  #tmp = 0
  #label = 0

  constructor(registry: SchemaRegistry, options: CompilerOptions) {
    this.#registry = registry
    this.#options = options
  }

  /**
   * Requests the check and collect functions of a location and returns their names; the module
   * that owns the location exports them.
   */
  entry(base: string, pointer = ''): { check: string; collect: string; module: string } {
    const loc = this.#registry.locate(base, pointer)
    const placement = this.#options.place(base)
    const check = this.#fn('check', loc)
    const collect = this.#fn('collect', loc)
    const mod = this.#module(placement.module)
    mod.exported.add(check)
    mod.exported.add(collect)
    this.#drain()
    return { check, collect, module: placement.module }
  }

  /** All modules compiled so far, by name. */
  modules(): ReadonlyMap<string, CompiledModule> {
    this.#drain()
    return this.#modules
  }

  #module(name: string): CompiledModule {
    let mod = this.#modules.get(name)
    if (!mod) {
      mod = { name, imports: new Map(), constants: [], functions: [], exported: new Set() }
      this.#modules.set(name, mod)
    }
    return mod
  }

  /** The name of the function validating `loc`, scheduling its compilation on first use. */
  #fn(kind: 'check' | 'collect', loc: Location): string {
    const key = `${kind}:${loc.base}#${loc.pointer}`
    let name = this.#names.get(key)
    if (name === undefined) {
      const { prefix } = this.#options.place(loc.base)
      const slug = loc.pointer
        .split('/')
        .filter(Boolean)
        .map((t) => t.replace(/^\$/, '').replace(/[^A-Za-z0-9]+/g, '_'))
        .join('_')
      name = `${kind === 'check' ? 'c' : 'e'}_${prefix}${slug ? '_' + slug : ''}`
      this.#names.set(key, name)
      this.#pending.push({ kind, loc, name })
    }
    return name
  }

  /** A reference from code in `fromModule` to the function validating `loc`. */
  #call(kind: 'check' | 'collect', loc: Location, fromModule: string): string {
    const name = this.#fn(kind, loc)
    const owner = this.#options.place(loc.base).module
    if (owner !== fromModule) {
      this.#module(owner).exported.add(name)
      this.#import(fromModule, `./${owner}.js`, name)
    }
    return name
  }

  #import(module: string, from: string, name: string): void {
    const mod = this.#module(module)
    let names = mod.imports.get(from)
    if (!names) mod.imports.set(from, (names = new Set()))
    names.add(name)
  }

  #drain(): void {
    for (let job = this.#pending.shift(); job; job = this.#pending.shift()) {
      const module = this.#options.place(job.loc.base).module
      this.#tmp = 0
      this.#label = 0
      const body =
        job.kind === 'check'
          ? `${this.#check(job.loc, 'v', module)}return true\n`
          : this.#collect(job.loc, 'v', 'p', module)
      this.#module(module).functions.push({
        name: job.name,
        kind: job.kind,
        location: `${job.loc.base}#${job.loc.pointer}`,
        body,
      })
    }
  }

  #regexp(module: string, pattern: string): string {
    const key = `${module}\0${pattern}`
    let name = this.#regexps.get(key)
    if (!name) {
      name = `re${this.#module(module).constants.length}`
      // Validate the pattern now: a bad pattern must fail generation, not import.
      new RegExp(pattern, 'u')
      this.#module(module).constants.push(`const ${name} = new RegExp(${str(pattern)}, 'u')`)
      this.#regexps.set(key, name)
    }
    return name
  }

  #set(module: string, values: readonly unknown[]): string {
    const key = `${module}\0${str(values)}`
    let name = this.#sets.get(key)
    if (!name) {
      name = `set${this.#module(module).constants.length}`
      this.#module(module).constants.push(`const ${name} = new Set(${str(values)})`)
      this.#sets.set(key, name)
    }
    return name
  }

  #runtime(module: string, name: string): string {
    this.#import(module, this.#options.runtime, name)
    return name
  }

  #var(): string {
    return `v${++this.#tmp}`
  }

  #sub(loc: Location, ...tokens: (string | number)[]): Location {
    return this.#registry.locate(loc.base, child(loc.pointer, ...tokens))
  }

  #validate(node: Obj, loc: Location): void {
    for (const keyword of Object.keys(node)) {
      if (!HANDLED.has(keyword) && !ANNOTATIONS.has(keyword)) {
        throw new Error(`unsupported keyword "${keyword}" at ${loc.base}#${loc.pointer}`)
      }
    }
  }

  /** The boolean expression for an `enum`/`const` membership test. */
  #oneOf(module: string, values: readonly unknown[], v: string): string {
    if (values.every((x) => typeof x === 'string') && values.length > 6) {
      return `(typeof ${v} === 'string' && ${this.#set(module, values)}.has(${v}))`
    }
    return (
      '(' +
      values
        .map((x) => (isPrimitive(x) ? `${v} === ${str(x)}` : `${this.#runtime(module, 'equal')}(${v}, ${str(x)})`))
        .join(' || ') +
      ')'
    )
  }

  // ---------------------------------------------------------------- check mode

  /** Statements that `return false` when `v` fails the schema at `loc`. */
  #check(loc: Location, v: string, module: string): string {
    const node = loc.node
    if (node === true) return ''
    if (node === false) return 'return false\n'
    this.#validate(node, loc)
    const s = node as Obj
    let out = ''
    if (typeof s['$ref'] === 'string') {
      const target = this.#registry.resolve(loc.base, s['$ref'])
      out += `if (!${this.#call('check', target, module)}(${v})) return false\n`
    }
    const types = s['type'] === undefined ? undefined : ([] as string[]).concat(s['type'] as string | string[])
    if (types) out += `if (!(${types.map((t) => typeTest(t, v)).join(' || ')})) return false\n`
    if ('const' in s) out += `if (!${this.#oneOf(module, [s['const']], v)}) return false\n`
    if (Array.isArray(s['enum'])) out += `if (!${this.#oneOf(module, s['enum'], v)}) return false\n`
    out += this.#guarded(types, 'string', STRING_KEYWORDS, s, v, this.#checkString(s, v, module))
    out += this.#guarded(types, 'number', NUMBER_KEYWORDS, s, v, this.#checkNumber(s, v))
    out += this.#guarded(types, 'object', OBJECT_KEYWORDS, s, v, this.#checkObject(s, loc, v, module))
    out += this.#guarded(types, 'array', ARRAY_KEYWORDS, s, v, this.#checkArray(s, loc, v, module))
    if (Array.isArray(s['allOf'])) {
      s['allOf'].forEach((_, i) => (out += this.#block(this.#check(this.#sub(loc, 'allOf', i), v, module))))
    }
    if (Array.isArray(s['anyOf'])) {
      const calls = s['anyOf'].map((_, i) => `${this.#call('check', this.#sub(loc, 'anyOf', i), module)}(${v})`)
      out += `if (!(${calls.join(' || ')})) return false\n`
    }
    if (Array.isArray(s['oneOf'])) {
      const calls = s['oneOf'].map((_, i) => `(${this.#call('check', this.#sub(loc, 'oneOf', i), module)}(${v}) ? 1 : 0)`)
      out += `if (${calls.join(' + ')} !== 1) return false\n`
    }
    if ('not' in s && !this.#notImplied(s)) out += `if (${this.#call('check', this.#sub(loc, 'not'), module)}(${v})) return false\n`
    if ('if' in s && ('then' in s || 'else' in s)) {
      const cond = `${this.#call('check', this.#sub(loc, 'if'), module)}(${v})`
      const then = 'then' in s ? this.#check(this.#sub(loc, 'then'), v, module) : ''
      const otherwise = 'else' in s ? this.#check(this.#sub(loc, 'else'), v, module) : ''
      out += `if (${cond}) {\n${then}}${otherwise ? ` else {\n${otherwise}}` : ''}\n`
    }
    return out
  }

  /** `not: { pattern }` on a string node whose format excludes that pattern. */
  #notImplied(s: Obj): boolean {
    const not = s['not']
    if (typeof not !== 'object' || not === null || Object.keys(not).length !== 1) return false
    const pattern = (not as Obj)['pattern']
    const types = s['type']
    return typeof pattern === 'string' && types === 'string' && this.#implied(s, 'excludes', pattern)
  }

  /** Wraps type-specific statements in a type test unless `type` already guarantees the type. */
  #guarded(types: string[] | undefined, family: string, keywords: string[], s: Obj, v: string, code: string): string {
    if (!code || !keywords.some((k) => k in s)) return code
    const implied = family === 'number' ? ['number', 'integer'] : [family]
    if (types && types.length === 1 && implied.includes(types[0]!)) return code
    const test = family === 'number' ? `typeof ${v} === 'number'` : typeTest(family, v)
    return `if (${test}) {\n${code}}\n`
  }

  #block(code: string): string {
    return code ? `{\n${code}}\n` : ''
  }

  #lengthTests(s: Obj, v: string, module: string): { min?: string; max?: string } {
    // JSON Schema counts Unicode code points; UTF-16 length bounds them from both sides, so the
    // exact count is computed only when the cheap bound cannot decide.
    const result: { min?: string; max?: string } = {}
    if (typeof s['maxLength'] === 'number') {
      const n = s['maxLength']
      result.max = `(${v}.length <= ${n} || ${this.#runtime(module, 'codePoints')}(${v}) <= ${n})`
    }
    if (typeof s['minLength'] === 'number') {
      const n = s['minLength']
      result.min = n <= 0 ? 'true' : `(${v}.length >= ${2 * n} || (${v}.length >= ${n} && ${this.#runtime(module, 'codePoints')}(${v}) >= ${n}))`
    }
    return result
  }

  #formatCall(s: Obj, v: string, module: string): string | undefined {
    if (typeof s['format'] !== 'string') return undefined
    const format = this.#options.formats[s['format']]
    if (!format) throw new Error(`unsupported format "${s['format']}"`)
    this.#import(module, format.from, format.name)
    return `${format.name}(${v})`
  }

  #checkString(s: Obj, v: string, module: string): string {
    let out = ''
    const { min, max } = this.#lengthTests(s, v, module)
    if (max) out += `if (!${max}) return false\n`
    if (min) out += `if (!${min}) return false\n`
    const format = this.#formatCall(s, v, module)
    if (format) out += `if (!${format}) return false\n`
    if (typeof s['pattern'] === 'string' && !this.#implied(s, 'patterns', s['pattern'])) {
      out += `if (!${this.#regexp(module, s['pattern'])}.test(${v})) return false\n`
    }
    return out
  }

  /** Whether the node's format (checked first) already decides `pattern` (see {@link FormatImport.implies}). */
  #implied(s: Obj, relation: 'patterns' | 'excludes', pattern: string): boolean {
    if (typeof s['format'] !== 'string') return false
    return this.#options.formats[s['format']]?.implies?.[relation]?.includes(pattern) ?? false
  }

  #checkNumber(s: Obj, v: string): string {
    let out = ''
    if (typeof s['minimum'] === 'number') out += `if (${v} < ${s['minimum']}) return false\n`
    if (typeof s['maximum'] === 'number') out += `if (${v} > ${s['maximum']}) return false\n`
    if (typeof s['exclusiveMinimum'] === 'number') out += `if (${v} <= ${s['exclusiveMinimum']}) return false\n`
    if (typeof s['exclusiveMaximum'] === 'number') out += `if (${v} >= ${s['exclusiveMaximum']}) return false\n`
    if (typeof s['multipleOf'] === 'number') out += `if (!Number.isInteger(${v} / ${s['multipleOf']})) return false\n`
    return out
  }

  #checkObject(s: Obj, loc: Location, v: string, module: string): string {
    let out = ''
    const required = (s['required'] as string[] | undefined) ?? []
    if (required.length) out += `if (${required.map((k) => `${v}[${str(k)}] === undefined`).join(' || ')}) return false\n`
    if (s['dependentRequired']) {
      for (const [k, deps] of Object.entries(s['dependentRequired'] as Record<string, string[]>)) {
        if (deps.length) out += `if (${v}[${str(k)}] !== undefined && (${deps.map((d) => `${v}[${str(d)}] === undefined`).join(' || ')})) return false\n`
      }
    }
    const properties = (s['properties'] as Record<string, SchemaNode> | undefined) ?? {}
    const names = Object.keys(properties)
    const additional = s['additionalProperties']
    const needsCount = typeof s['minProperties'] === 'number' || typeof s['maxProperties'] === 'number'
    const k = this.#var()
    const count = needsCount ? this.#var() : undefined
    if (additional === false || (additional !== undefined && additional !== true) || 'propertyNames' in s || needsCount) {
      // One pass over the members: each known member is validated where it is met, any other
      // member against additionalProperties.
      let loop = ''
      if ('propertyNames' in s) loop += `if (!${this.#call('check', this.#sub(loc, 'propertyNames'), module)}(${k})) return false\n`
      if (count) loop += `${count}++\n`
      const vk = this.#var()
      let cases = ''
      for (const name of names) {
        const code = this.#check(this.#sub(loc, 'properties', name), vk, module)
        cases += `case ${str(name)}: {\n${code ? `const ${vk} = ${v}[${k}]\n${code}` : ''}break\n}\n`
      }
      let fallback = ''
      if (additional === false) fallback = 'return false\n'
      else if (additional !== undefined && additional !== true) {
        const code = this.#check(this.#sub(loc, 'additionalProperties'), vk, module)
        fallback = code ? `const ${vk} = ${v}[${k}]\n${code}` : ''
      }
      loop += names.length ? `switch (${k}) {\n${cases}default: {\n${fallback}}\n}\n` : fallback
      out += `${count ? `let ${count} = 0\n` : ''}for (const ${k} in ${v}) {\n${loop}}\n`
      if (count && typeof s['minProperties'] === 'number') out += `if (${count} < ${s['minProperties']}) return false\n`
      if (count && typeof s['maxProperties'] === 'number') out += `if (${count} > ${s['maxProperties']}) return false\n`
    } else {
      for (const name of names) {
        const x = this.#var()
        const code = this.#check(this.#sub(loc, 'properties', name), x, module)
        if (code) out += `{\nconst ${x} = ${v}[${str(name)}]\nif (${x} !== undefined) {\n${code}}\n}\n`
      }
    }
    return out
  }

  #checkArray(s: Obj, loc: Location, v: string, module: string): string {
    let out = ''
    if (typeof s['minItems'] === 'number') out += `if (${v}.length < ${s['minItems']}) return false\n`
    if (typeof s['maxItems'] === 'number') out += `if (${v}.length > ${s['maxItems']}) return false\n`
    if ('items' in s) {
      const i = this.#var()
      const x = this.#var()
      const code = this.#check(this.#sub(loc, 'items'), x, module)
      if (code) out += `for (let ${i} = 0; ${i} < ${v}.length; ${i}++) {\nconst ${x} = ${v}[${i}]\n${code}}\n`
    }
    if (s['uniqueItems'] === true) out += `if (!${this.#runtime(module, 'unique')}(${v})) return false\n`
    return out
  }

  // -------------------------------------------------------------- collect mode

  /**
   * Statements reporting every issue of `v` against `loc` into collector `x`, with the instance
   * path in the expression `p`. Wrapped in a labelled block: a failed type precondition leaves
   * the block, so no later keyword runs on a value of the wrong type.
   */
  #collect(loc: Location, v: string, p: string, module: string): string {
    const node = loc.node
    const sp = `#${loc.pointer}`
    if (node === true) return ''
    if (node === false) return `x.add(${p}, 'false', 'no value is allowed here', ${str(sp)})\n`
    this.#validate(node, loc)
    const s = node as Obj
    const label = `L${++this.#label}`
    const add = (keyword: string, message: string, extra = ''): string =>
      `x.add(${p}, ${str(keyword)}, ${message}, ${str(child(loc.pointer, keyword).replace(/^/, '#'))}${extra})`
    let out = ''
    if (typeof s['$ref'] === 'string') {
      const target = this.#registry.resolve(loc.base, s['$ref'])
      out += `${this.#call('collect', target, module)}(${v}, ${p}, x)\n`
    }
    const types = s['type'] === undefined ? undefined : ([] as string[]).concat(s['type'] as string | string[])
    if (types) {
      out += `if (!(${types.map((t) => typeTest(t, v)).join(' || ')})) { ${add('type', str(`must be ${types.join(' or ')}`))}; break ${label} }\n`
    }
    if ('const' in s) out += `if (!${this.#oneOf(module, [s['const']], v)}) ${add('const', str(`must be ${str(s['const'])}`))}\n`
    if (Array.isArray(s['enum'])) {
      const listed = s['enum'].length <= 8 ? `: ${s['enum'].map((e) => str(e)).join(', ')}` : ` (${s['enum'].length} values)`
      out += `if (!${this.#oneOf(module, s['enum'], v)}) ${add('enum', str(`must be one of the allowed values${listed}`))}\n`
    }
    // string
    let strCode = ''
    const { min, max } = this.#lengthTests(s, v, module)
    if (max) strCode += `if (!${max}) ${add('maxLength', str(`must have at most ${s['maxLength']} characters`))}\n`
    if (min) strCode += `if (!${min}) ${add('minLength', str(`must have at least ${s['minLength']} characters`))}\n`
    const format = this.#formatCall(s, v, module)
    if (format) strCode += `if (!${format}) ${add('format', str(`must be a valid ${s['format']} (§2)`))}\n`
    if (typeof s['pattern'] === 'string') {
      strCode += `if (!${this.#regexp(module, s['pattern'])}.test(${v})) ${add('pattern', str(`must match the pattern ${s['pattern']}`))}\n`
    }
    out += this.#guarded(types, 'string', STRING_KEYWORDS, s, v, strCode)
    // number
    let numCode = ''
    for (const [kw, op, words] of [
      ['minimum', '<', 'at least'], ['maximum', '>', 'at most'],
      ['exclusiveMinimum', '<=', 'more than'], ['exclusiveMaximum', '>=', 'less than'],
    ] as const) {
      if (typeof s[kw] === 'number') numCode += `if (${v} ${op} ${s[kw]}) ${add(kw, str(`must be ${words} ${s[kw]}`))}\n`
    }
    if (typeof s['multipleOf'] === 'number') numCode += `if (!Number.isInteger(${v} / ${s['multipleOf']})) ${add('multipleOf', str(`must be a multiple of ${s['multipleOf']}`))}\n`
    out += this.#guarded(types, 'number', NUMBER_KEYWORDS, s, v, numCode)
    out += this.#guarded(types, 'object', OBJECT_KEYWORDS, s, v, this.#collectObject(s, loc, v, p, module, add))
    out += this.#guarded(types, 'array', ARRAY_KEYWORDS, s, v, this.#collectArray(s, loc, v, p, module, add))
    if (Array.isArray(s['allOf'])) {
      s['allOf'].forEach((_, i) => (out += this.#collect(this.#sub(loc, 'allOf', i), v, p, module)))
    }
    if (Array.isArray(s['anyOf'])) {
      const calls = s['anyOf'].map((_, i) => `${this.#call('check', this.#sub(loc, 'anyOf', i), module)}(${v})`)
      out += `if (!(${calls.join(' || ')})) ${add('anyOf', str(`must match at least one of ${calls.length} alternatives`))}\n`
    }
    if (Array.isArray(s['oneOf'])) {
      const calls = s['oneOf'].map((_, i) => `(${this.#call('check', this.#sub(loc, 'oneOf', i), module)}(${v}) ? 1 : 0)`)
      out += `if (${calls.join(' + ')} !== 1) ${add('oneOf', str(`must match exactly one of ${calls.length} alternatives`))}\n`
    }
    if ('not' in s) {
      out += `if (${this.#call('check', this.#sub(loc, 'not'), module)}(${v})) ${add('not', str(this.#notMessage(s['not'])))}\n`
    }
    if ('if' in s && ('then' in s || 'else' in s)) {
      const cond = `${this.#call('check', this.#sub(loc, 'if'), module)}(${v})`
      const then = 'then' in s ? this.#collect(this.#sub(loc, 'then'), v, p, module) : ''
      const otherwise = 'else' in s ? this.#collect(this.#sub(loc, 'else'), v, p, module) : ''
      out += `if (${cond}) {\n${then}}${otherwise ? ` else {\n${otherwise}}` : ''}\n`
    }
    return out.includes(`break ${label} `) ? `${label}: {\n${out}}\n` : out
  }

  #notMessage(not: unknown): string {
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

  #collectObject(s: Obj, loc: Location, v: string, p: string, module: string, add: (kw: string, msg: string, extra?: string) => string): string {
    let out = ''
    const required = (s['required'] as string[] | undefined) ?? []
    for (const name of required) {
      out += `if (${v}[${str(name)}] === undefined) ${add('required', str(`must have required property '${name}'`))}\n`
    }
    if (s['dependentRequired']) {
      for (const [k, deps] of Object.entries(s['dependentRequired'] as Record<string, string[]>)) {
        for (const d of deps) out += `if (${v}[${str(k)}] !== undefined && ${v}[${str(d)}] === undefined) ${add('dependentRequired', str(`must have property '${d}' when '${k}' is present`))}\n`
      }
    }
    const properties = (s['properties'] as Record<string, SchemaNode> | undefined) ?? {}
    const names = Object.keys(properties)
    for (const name of names) {
      const x = this.#var()
      const code = this.#collect(this.#sub(loc, 'properties', name), x, `${p} + ${str('/' + escapePointerToken(name))}`, module)
      if (code) out += `{\nconst ${x} = ${v}[${str(name)}]\nif (${x} !== undefined) {\n${code}}\n}\n`
    }
    const additional = s['additionalProperties']
    const needsCount = typeof s['minProperties'] === 'number' || typeof s['maxProperties'] === 'number'
    if ((additional !== undefined && additional !== true) || 'propertyNames' in s || needsCount) {
      const k = this.#var()
      const count = needsCount ? this.#var() : undefined
      const keyPath = `${p} + '/' + ${this.#runtime(module, 'pointerToken')}(${k})`
      let loop = ''
      if (count) loop += `${count}++\n`
      if ('propertyNames' in s) {
        loop += `if (!${this.#call('check', this.#sub(loc, 'propertyNames'), module)}(${k})) x.add(${keyPath}, 'propertyNames', 'member name is not allowed here', ${str(`#${child(loc.pointer, 'propertyNames')}`)})\n`
      }
      if (additional === false) {
        const known = names.length ? `${this.#oneOf(module, names, k)}` : 'false'
        loop += `if (!${known}) x.add(${keyPath}, 'additionalProperties', 'unknown member is not allowed', ${str(`#${child(loc.pointer, 'additionalProperties')}`)})\n`
      } else if (additional !== undefined && additional !== true) {
        const x = this.#var()
        const code = this.#collect(this.#sub(loc, 'additionalProperties'), x, keyPath, module)
        if (code) {
          const known = names.length ? `if (${this.#oneOf(module, names, k)}) continue\n` : ''
          loop += `${known}const ${x} = ${v}[${k}]\n${code}`
        }
      }
      out += `${count ? `let ${count} = 0\n` : ''}for (const ${k} in ${v}) {\n${loop}}\n`
      if (count && typeof s['minProperties'] === 'number') out += `if (${count} < ${s['minProperties']}) ${add('minProperties', str(`must have at least ${s['minProperties']} members`))}\n`
      if (count && typeof s['maxProperties'] === 'number') out += `if (${count} > ${s['maxProperties']}) ${add('maxProperties', str(`must have at most ${s['maxProperties']} members`))}\n`
    }
    return out
  }

  #collectArray(s: Obj, loc: Location, v: string, p: string, module: string, add: (kw: string, msg: string) => string): string {
    let out = ''
    if (typeof s['minItems'] === 'number') out += `if (${v}.length < ${s['minItems']}) ${add('minItems', str(`must have at least ${s['minItems']} items`))}\n`
    if (typeof s['maxItems'] === 'number') out += `if (${v}.length > ${s['maxItems']}) ${add('maxItems', str(`must have at most ${s['maxItems']} items`))}\n`
    if ('items' in s) {
      const i = this.#var()
      const x = this.#var()
      const code = this.#collect(this.#sub(loc, 'items'), x, `${p} + '/' + ${i}`, module)
      if (code) out += `for (let ${i} = 0; ${i} < ${v}.length; ${i}++) {\nconst ${x} = ${v}[${i}]\n${code}}\n`
    }
    if (s['uniqueItems'] === true) out += `if (!${this.#runtime(module, 'unique')}(${v})) ${add('uniqueItems', str('must not contain duplicate items'))}\n`
    return out
  }
}
