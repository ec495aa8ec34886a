/**
 * An ahead-of-time compiler from JSON Schema Draft 2020-12 (the keyword subset the
 * MissionWeaveProtocol 0.1 schemas use) to JavaScript validator functions.
 *
 * Every schema compiles to one function `v_*(v, p?, x?): boolean` with an optional collector:
 * - without `x` it answers whether `v` is valid and stops at the first failure (the hot path:
 *   most documents are valid, and a hostile one is rejected as soon as anything is wrong);
 * - with a bounded collector `x` it reports every issue under the instance path `p` and returns
 *   true (`x.add(path, keyword, message, schemaPath)` throws once the bound is reached, which ends
 *   the walk: hostile input can never produce an unbounded error list).
 *
 * A schema only ever asked for a verdict (the branches of `anyOf`, `oneOf`, `not`, `if` and
 * `propertyNames`) compiles to a check-only `v_*(v)`.
 *
 * Schemas with the same content (the same assertions, `$ref`s resolved) share one function
 * wherever they occur, so a payload part used by forty payloads is emitted once. Issues carry the
 * schema path of the location being validated, so a function whose schema occurs at several
 * paths takes that path as a fourth parameter `s`; one used at a single path writes it as a
 * literal.
 *
 * Unknown keywords are a compile error, not silently ignored: a validator that skipped a keyword
 * would accept documents the normative schema rejects.
 *
 * The parts live beside this module: the options and output types in `types.ts`, the keyword
 * vocabulary and what a schema's keywords say on their own in `keywords.ts`, and schema identity
 * (which schemas share a function) in `identity.ts`.
 * @module
 */
import { SchemaIdentity } from './identity.js'
import {
  ANNOTATIONS,
  ARRAY_KEYWORDS,
  HANDLED,
  NUMBER_KEYWORDS,
  OBJECT_KEYWORDS,
  STRING_KEYWORDS,
  child,
  declared,
  guarded,
  implied,
  isLeaf,
  isPrimitive,
  isPureRef,
  notImplied,
  notMessage,
  str,
  typeTest,
  type Obj,
} from './keywords.js'
import { escapePointerToken, type Location, type SchemaNode, type SchemaRegistry } from './registry.js'
import type { CompiledConstant, CompiledModule, CompilerOptions, FunctionMode } from './types.js'

export { assertsNothing } from './keywords.js'
export type { CompiledConstant, CompiledFunction, CompiledModule, CompilerOptions, FormatImport, FunctionMode, Placement } from './types.js'

/** A generated function while the compiler works on it. */
interface FunctionState {
  readonly name: string
  /** The first occurrence of its schema: its code, name, module and default schema path. */
  readonly loc: Location
  readonly module: string
  readonly schemaPath: 'fixed' | 'parameter'
  readonly uses: number
  /** Raised from `check` to `collect` when a collecting caller appears; the body is then rebuilt. */
  mode: FunctionMode
  body: string
}

/** The function whose body is being written: how it reports, and where its schema paths start. */
interface Scope {
  readonly fn: FunctionState
  readonly collecting: boolean
}

/** Compiles schema locations into validator functions grouped by module. */
export class ValidatorCompiler {
  readonly #registry: SchemaRegistry
  readonly #options: CompilerOptions
  readonly #modules = new Map<
    string,
    { readonly name: string; readonly imports: Map<string, Set<string>>; readonly constants: CompiledConstant[]; readonly functions: FunctionState[]; readonly exported: Set<string> }
  >()
  readonly #functions = new Map<string, FunctionState>() // content key -> function
  readonly #names = new Set<string>()
  readonly #pending: FunctionState[] = []
  readonly #regexps = new Map<string, string>() // `${module}\0${pattern}` -> const name
  readonly #sets = new Map<string, string>()
  readonly #identity: SchemaIdentity
  #tmp = 0
  #label = 0

  /** The registry must hold every schema resource before the first {@link entry}. */
  constructor(registry: SchemaRegistry, options: CompilerOptions) {
    this.#registry = registry
    this.#options = options
    this.#identity = new SchemaIdentity(registry)
  }

  /**
   * Requests the function validating a location (with an optional collector) and returns its
   * name; the module that owns it exports it.
   */
  entry(base: string, pointer = ''): { name: string; module: string } {
    const loc = this.#registry.locate(base, pointer)
    // Called without `s`, a shared function reports the paths of its first location; a location
    // whose schema first occurs at another path gets a function of its own.
    const occurrences = this.#identity.survey().get(this.#identity.keyOf(loc))
    const elsewhere = occurrences !== undefined && occurrences.pointers.size > 1 && occurrences.first.pointer !== loc.pointer
    const fn = this.#fn(loc, 'collect', elsewhere ? `${base}#${pointer}` : undefined)
    this.#modules.get(fn.module)!.exported.add(fn.name)
    this.#drain()
    return { name: fn.name, module: fn.module }
  }

  /** All modules compiled so far, by name. */
  modules(): ReadonlyMap<string, CompiledModule> {
    this.#drain()
    const out = new Map<string, CompiledModule>()
    for (const [name, mod] of this.#modules) {
      const functions = mod.functions.map(({ name, mode, schemaPath, loc, uses, body }) => ({
        name,
        mode,
        ...(schemaPath === 'parameter' && mode === 'collect' ? { schemaPathDefault: `#${loc.pointer}` } : {}),
        location: `${loc.base}#${loc.pointer}`,
        uses,
        body,
      }))
      out.set(name, { ...mod, functions })
    }
    return out
  }

  #module(name: string) {
    let mod = this.#modules.get(name)
    if (!mod) {
      mod = { name, imports: new Map(), constants: [], functions: [], exported: new Set() }
      this.#modules.set(name, mod)
    }
    return mod
  }

  // ------------------------------------------------------------------ functions

  /**
   * The function validating the schema at `loc`, scheduling its compilation on first use and its
   * recompilation when a collecting caller first asks for a check-only one.
   */
  #fn(loc: Location, mode: FunctionMode, own?: string): FunctionState {
    const content = this.#identity.keyOf(loc)
    const twin = own === undefined && mode === 'check' && isLeaf(loc.node)
    const key = own !== undefined ? `own:${own}` : twin ? `check:${content}` : content
    let fn = this.#functions.get(key)
    if (fn === undefined) {
      const occurrences = own === undefined ? this.#identity.survey().get(content) : undefined
      const first = occurrences?.first ?? loc
      const { module, prefix } = this.#options.place(first.base)
      const slug = first.pointer
        .split('/')
        .filter(Boolean)
        .map((t) => t.replace(/^\$/, '').replace(/[^A-Za-z0-9]+/g, '_'))
        .join('_')
      const name = `${twin ? 'c' : 'v'}_${prefix}${slug ? '_' + slug : ''}`
      if (this.#names.has(name)) throw new Error(`two schemas would share the function name ${name}`)
      this.#names.add(name)
      fn = {
        name,
        loc: first,
        module,
        schemaPath: (occurrences?.pointers.size ?? 1) > 1 ? 'parameter' : 'fixed',
        uses: occurrences?.count ?? 1,
        mode,
        body: '',
      }
      this.#functions.set(key, fn)
      this.#module(module).functions.push(fn)
      this.#pending.push(fn)
    } else if (mode === 'collect' && fn.mode === 'check') {
      fn.mode = 'collect'
      this.#pending.push(fn)
    }
    return fn
  }

  /** The name code in `fromModule` calls `fn` by, importing it from its module if need be. */
  #use(fn: FunctionState, fromModule: string): string {
    if (fn.module !== fromModule) {
      this.#module(fn.module).exported.add(fn.name)
      this.#import(fromModule, `./${fn.module}.js`, fn.name)
    }
    return fn.name
  }

  #import(module: string, from: string, name: string): void {
    const mod = this.#module(module)
    let names = mod.imports.get(from)
    if (!names) mod.imports.set(from, (names = new Set()))
    names.add(name)
  }

  #drain(): void {
    for (let fn = this.#pending.shift(); fn; fn = this.#pending.shift()) {
      this.#tmp = 0
      this.#label = 0
      const scope: Scope = { fn, collecting: fn.mode === 'collect' }
      fn.body = `${this.#emit(fn.loc, 'v', 'p', scope)}return true\n`
    }
  }

  #regexp(module: string, pattern: string): string {
    const key = `${module}\0${pattern}`
    let name = this.#regexps.get(key)
    if (!name) {
      name = `re${this.#module(module).constants.length}`
      // Validate the pattern now: a bad pattern must fail generation, not import.
      new RegExp(pattern, 'u')
      this.#module(module).constants.push({ name, initializer: `new RegExp(${str(pattern)}, 'u')` })
      this.#regexps.set(key, name)
    }
    return name
  }

  #set(module: string, values: readonly unknown[]): string {
    const key = `${module}\0${str(values)}`
    let name = this.#sets.get(key)
    if (!name) {
      name = `set${this.#module(module).constants.length}`
      this.#module(module).constants.push({ name, initializer: `new Set(${str(values)})` })
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
    return '(' + values.map((x) => (isPrimitive(x) ? `${v} === ${str(x)}` : `${this.#runtime(module, 'equal')}(${v}, ${str(x)})`)).join(' || ') + ')'
  }

  // ------------------------------------------------------------- calls and paths

  /** The expression of the schema path `pointer` inside the function being written. */
  #schemaPath(scope: Scope, pointer: string): string {
    if (scope.fn.schemaPath === 'fixed') return str(`#${pointer}`)
    const root = scope.fn.loc.pointer
    if (!pointer.startsWith(root)) throw new Error(`schema path ${pointer} is outside ${root}`)
    const rest = pointer.slice(root.length)
    return rest ? `s + ${str(rest)}` : 's'
  }

  /**
   * A call validating `v` against the schema at `target`: with the instance path `p` and the
   * collector when the caller collects (both computed only when there is a collector), else with
   * the value alone. `schemaPath` is the path the target's issues start from.
   */
  #call(scope: Scope, target: Location, v: string, p: string, schemaPath: string): string {
    const fn = this.#fn(target, scope.collecting ? 'collect' : 'check')
    const name = this.#use(fn, scope.fn.module)
    if (!scope.collecting) return `${name}(${v})`
    // A leaf is answered by its check-only twin; the collector walks it only when that says no.
    const leaf = isLeaf(target.node)
    const guard = (arg: string): string => (leaf || arg === 'p' || arg === 's' || arg.startsWith('"') ? arg : `x && ${arg}`)
    const args = [v, guard(p), 'x']
    if (fn.schemaPath === 'parameter') args.push(guard(schemaPath))
    else if (schemaPath !== 's' && schemaPath !== str(`#${fn.loc.pointer}`)) throw new Error(`${name} reports under #${fn.loc.pointer}, not ${schemaPath}`)
    if (!leaf) return `${name}(${args.join(', ')})`
    const check = this.#use(this.#fn(target, 'check'), scope.fn.module)
    return `(${check}(${v}) || x !== undefined && ${name}(${args.join(', ')}))`
  }

  /** A call validating a subschema, when it is a `$ref` or a shared part; otherwise undefined. */
  #callFor(scope: Scope, loc: Location, v: string, p: string): string | undefined {
    const node = loc.node
    if (isPureRef(node)) {
      const target = this.#registry.resolve(loc.base, node.$ref)
      return this.#call(scope, target, v, p, str(`#${target.pointer}`))
    }
    return this.#identity.shared(loc) ? this.#call(scope, loc, v, p, this.#schemaPath(scope, loc.pointer)) : undefined
  }

  /** Statements validating a subschema in place, or by a call when it is shared. */
  #inline(scope: Scope, loc: Location, v: string, p: string): string {
    const call = this.#callFor(scope, loc, v, p)
    return call === undefined ? this.#emit(loc, v, p, scope) : `if (!${call}) return false\n`
  }

  /** The check-only function of a branch (`anyOf`, `oneOf`, `not`, `if`, `propertyNames`). */
  #branch(scope: Scope, loc: Location): string {
    let target = loc
    for (let hops = 0; isPureRef(target.node); hops++) {
      if (hops > 32) throw new Error(`$ref cycle at ${loc.base}#${loc.pointer}`)
      target = this.#registry.resolve(target.base, target.node.$ref)
    }
    return this.#use(this.#fn(target, 'check'), scope.fn.module)
  }

  /**
   * `if (cond)` the value fails: without a collector the function returns false; with one the
   * issue is reported and the walk goes on.
   */
  #report(scope: Scope, cond: string, p: string, keyword: string, message: string, schemaPath: string): string {
    if (!scope.collecting) return `if (${cond}) return false\n`
    return `if (${cond}) { if (!x) return false; x.add(${p}, ${str(keyword)}, ${str(message)}, ${schemaPath}) }\n`
  }

  /** An issue reported only to a collector: its check is implied by one already made. */
  #note(scope: Scope, cond: () => string, p: string, keyword: string, message: string, schemaPath: string): string {
    return scope.collecting ? `if (x && ${cond()}) x.add(${p}, ${str(keyword)}, ${str(message)}, ${schemaPath})\n` : ''
  }

  // ------------------------------------------------------------------- keywords

  /**
   * Statements validating `v` against the schema at `loc`, with the instance path in the
   * expression `p`. When collecting, a failed type precondition leaves a labelled block, so no
   * later keyword runs on a value of the wrong type.
   */
  #emit(loc: Location, v: string, p: string, scope: Scope): string {
    const node = loc.node
    const module = scope.fn.module
    if (node === true) return ''
    if (node === false) {
      if (!scope.collecting) return 'return false\n'
      return `if (!x) return false\nx.add(${p}, "false", "no value is allowed here", ${this.#schemaPath(scope, loc.pointer)})\n`
    }
    this.#validate(node, loc)
    const s = node as Obj
    const label = `L${++this.#label}`
    const at = (keyword: string): string => this.#schemaPath(scope, child(loc.pointer, keyword))
    const report = (cond: string, keyword: string, message: string): string => this.#report(scope, cond, p, keyword, message, at(keyword))
    let out = ''
    if (typeof s['$ref'] === 'string') {
      const target = this.#registry.resolve(loc.base, s['$ref'])
      out += `if (!${this.#call(scope, target, v, p, str(`#${target.pointer}`))}) return false\n`
    }
    const types = s['type'] === undefined ? undefined : ([] as string[]).concat(s['type'] as string | string[])
    if (types) {
      const test = `!(${types.map((t) => typeTest(t, v)).join(' || ')})`
      out += scope.collecting ? `if (${test}) { if (!x) return false; x.add(${p}, "type", ${str(`must be ${types.join(' or ')}`)}, ${at('type')}); break ${label} }\n` : `if (${test}) return false\n`
    }
    if ('const' in s) out += report(`!${this.#oneOf(module, [s['const']], v)}`, 'const', `must be ${str(s['const'])}`)
    if (Array.isArray(s['enum'])) {
      const listed = s['enum'].length <= 8 ? `: ${s['enum'].map((e) => str(e)).join(', ')}` : ` (${s['enum'].length} values)`
      out += report(`!${this.#oneOf(module, s['enum'], v)}`, 'enum', `must be one of the allowed values${listed}`)
    }
    out += guarded(types, 'string', STRING_KEYWORDS, s, v, this.#string(s, loc, v, p, scope, report))
    let numCode = ''
    for (const [kw, op, words] of [
      ['minimum', '<', 'at least'],
      ['maximum', '>', 'at most'],
      ['exclusiveMinimum', '<=', 'more than'],
      ['exclusiveMaximum', '>=', 'less than'],
    ] as const) {
      if (typeof s[kw] === 'number') numCode += report(`${v} ${op} ${s[kw]}`, kw, `must be ${words} ${s[kw]}`)
    }
    if (typeof s['multipleOf'] === 'number') numCode += report(`!Number.isInteger(${v} / ${s['multipleOf']})`, 'multipleOf', `must be a multiple of ${s['multipleOf']}`)
    out += guarded(types, 'number', NUMBER_KEYWORDS, s, v, numCode)
    out += guarded(types, 'object', OBJECT_KEYWORDS, s, v, this.#object(s, loc, v, p, scope, report))
    out += guarded(types, 'array', ARRAY_KEYWORDS, s, v, this.#array(s, loc, v, p, scope, report))
    if (Array.isArray(s['allOf'])) {
      s['allOf'].forEach((_, i) => (out += this.#inline(scope, this.#sub(loc, 'allOf', i), v, p)))
    }
    if (Array.isArray(s['anyOf'])) {
      const calls = s['anyOf'].map((_, i) => `${this.#branch(scope, this.#sub(loc, 'anyOf', i))}(${v})`)
      out += report(`!(${calls.join(' || ')})`, 'anyOf', `must match at least one of ${calls.length} alternatives`)
    }
    if (Array.isArray(s['oneOf'])) {
      const calls = s['oneOf'].map((_, i) => `(${this.#branch(scope, this.#sub(loc, 'oneOf', i))}(${v}) ? 1 : 0)`)
      out += report(`${calls.join(' + ')} !== 1`, 'oneOf', `must match exactly one of ${calls.length} alternatives`)
    }
    if ('not' in s) {
      const excluded = (): string => `${this.#branch(scope, this.#sub(loc, 'not'))}(${v})`
      out += notImplied(this.#options.formats, s) ? this.#note(scope, excluded, p, 'not', notMessage(s['not']), at('not')) : report(excluded(), 'not', notMessage(s['not']))
    }
    if ('if' in s && ('then' in s || 'else' in s)) {
      const cond = `${this.#branch(scope, this.#sub(loc, 'if'))}(${v})`
      const then = 'then' in s ? this.#inline(scope, this.#sub(loc, 'then'), v, p) : ''
      const otherwise = 'else' in s ? this.#inline(scope, this.#sub(loc, 'else'), v, p) : ''
      out += `if (${cond}) {\n${then}}${otherwise ? ` else {\n${otherwise}}` : ''}\n`
    }
    return out.includes(`break ${label} `) ? `${label}: {\n${out}}\n` : out
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

  #string(s: Obj, loc: Location, v: string, p: string, scope: Scope, report: (cond: string, keyword: string, message: string) => string): string {
    const module = scope.fn.module
    let out = ''
    const { min, max } = this.#lengthTests(s, v, module)
    if (max) out += report(`!${max}`, 'maxLength', `must have at most ${s['maxLength']} characters`)
    if (min) out += report(`!${min}`, 'minLength', `must have at least ${s['minLength']} characters`)
    const format = this.#formatCall(s, v, module)
    if (format) out += report(`!${format}`, 'format', `must be a valid ${s['format']} (§2)`)
    const pattern = s['pattern']
    if (typeof pattern === 'string') {
      const message = `must match the pattern ${pattern}`
      const fails = (): string => `!${this.#regexp(module, pattern)}.test(${v})`
      out += implied(this.#options.formats, s, 'patterns', pattern)
        ? this.#note(scope, fails, p, 'pattern', message, this.#schemaPath(scope, child(loc.pointer, 'pattern')))
        : report(fails(), 'pattern', message)
    }
    return out
  }

  /**
   * Object keywords in the order their issues are reported: `required`, `dependentRequired`, each
   * declared property, then one pass over the members for `propertyNames`,
   * `additionalProperties` and the member count. Each declared member is read once.
   */
  #object(s: Obj, loc: Location, v: string, p: string, scope: Scope, report: (cond: string, keyword: string, message: string) => string): string {
    const module = scope.fn.module
    const required = (s['required'] as string[] | undefined) ?? []
    const dependent = Object.entries((s['dependentRequired'] as Record<string, string[]> | undefined) ?? {})
    const names = Object.keys((s['properties'] as Record<string, SchemaNode> | undefined) ?? {})
    const members = names.map((name) => {
      // members are read by name, which would find an inherited `toString` on any object
      if (name in Object.prototype) throw new Error(`member name ${str(name)} at ${loc.base}#${loc.pointer} is also a member of every object`)
      const sub = this.#sub(loc, 'properties', name)
      const x = this.#var()
      const path = `${p} + ${str('/' + escapePointerToken(name))}`
      const call = this.#callFor(scope, sub, x, path)
      return { name, sub, x, call, code: call === undefined ? this.#emit(sub, x, path, scope) : '' }
    })
    const additional = s['additionalProperties']
    const needsCount = typeof s['minProperties'] === 'number' || typeof s['maxProperties'] === 'number'
    // A closed object is checked by counting: when its members number as many as its declared
    // members present, none is unknown (see below).
    const counted = additional === false && names.length > 0 && !('propertyNames' in s) && !needsCount
    const tested = new Set([...required, ...dependent.flatMap(([k, deps]) => [k, ...deps])])
    const read = new Map(members.filter((m) => counted || m.call !== undefined || m.code || tested.has(m.name)).map((m) => [m.name, m.x]))
    const member = (name: string): string => read.get(name) ?? `${v}[${str(name)}]`
    let out = ''
    for (const [name, x] of read) out += `const ${x} = ${v}[${str(name)}]\n`
    if (scope.collecting) {
      for (const name of required) out += report(`${member(name)} === undefined`, 'required', `must have required property '${name}'`)
      for (const [k, deps] of dependent) {
        for (const d of deps) out += report(`${member(k)} !== undefined && ${member(d)} === undefined`, 'dependentRequired', `must have property '${d}' when '${k}' is present`)
      }
    } else {
      // one test per keyword: without a collector the first failure is all that matters
      if (required.length) out += `if (${required.map((k) => `${member(k)} === undefined`).join(' || ')}) return false\n`
      for (const [k, deps] of dependent) {
        if (deps.length) out += `if (${member(k)} !== undefined && (${deps.map((d) => `${member(d)} === undefined`).join(' || ')})) return false\n`
      }
    }
    let checks = ''
    for (const m of members) {
      if (m.call !== undefined) checks += `if (${m.x} !== undefined && !${m.call}) return false\n`
      else if (m.code) checks += `if (${m.x} !== undefined) {\n${m.code}}\n`
    }
    if (counted) {
      const { early, late } = this.#closed(members, loc, v, p, scope)
      return out + early + checks + late
    }
    out += checks
    if ((additional !== undefined && additional !== true) || 'propertyNames' in s || needsCount) {
      const k = this.#var()
      const count = needsCount ? this.#var() : undefined
      const keyPath = scope.collecting ? `${p} + '/' + ${this.#runtime(module, 'pointerToken')}(${k})` : p
      const at = (keyword: string): string => this.#schemaPath(scope, child(loc.pointer, keyword))
      let loop = ''
      if (count) loop += `${count}++\n`
      if ('propertyNames' in s) {
        const allowed = `${this.#branch(scope, this.#sub(loc, 'propertyNames'))}(${k})`
        loop += this.#report(scope, `!${allowed}`, keyPath, 'propertyNames', 'member name is not allowed here', at('propertyNames'))
      }
      // One switch sorts the members: a declared one is done (its value is validated above),
      // any other is unknown (see #closed for members set to undefined).
      const next = additional === undefined || typeof additional === 'boolean' ? 'break' : 'continue'
      const { rejecting, accepting, cases } = declared(this.#registry, members)
      let sorted = ''
      if (rejecting.length) sorted += ` ${cases(rejecting)} if (${v}[${k}] === undefined${scope.collecting ? ' && !x' : ''}) return false; ${next};`
      if (accepting.length && additional !== undefined && additional !== true) sorted += ` ${cases(accepting)} ${next};`
      if (additional === false) {
        sorted += ` default: ${scope.collecting ? `if (!x) return false; x.add(${keyPath}, "additionalProperties", "unknown member is not allowed", ${at('additionalProperties')})` : 'return false'}`
      }
      if (sorted) loop += names.length ? `switch (${k}) {${sorted} }\n` : `${sorted.replace(/^ default: /, '')}\n`
      if (additional !== undefined && typeof additional !== 'boolean') {
        const x = this.#var()
        const code = this.#inline(scope, this.#sub(loc, 'additionalProperties'), x, keyPath)
        if (code) loop += `const ${x} = ${v}[${k}]\n${code}`
      }
      out += `${count ? `let ${count} = 0\n` : ''}for (const ${k} in ${v}) {\n${loop}}\n`
      if (count && typeof s['minProperties'] === 'number') out += report(`${count} < ${s['minProperties']}`, 'minProperties', `must have at least ${s['minProperties']} members`)
      if (count && typeof s['maxProperties'] === 'number') out += report(`${count} > ${s['maxProperties']}`, 'maxProperties', `must have at most ${s['maxProperties']} members`)
    }
    return out
  }

  /**
   * The unknown-member test of a closed object (`additionalProperties: false`, declared
   * members, no `propertyNames` or member count). Without a collector it comes before the
   * members' values, so a stray member fails fast, and it counts the members first: as many as
   * the declared ones present (the values read before) means none is unknown or set to undefined,
   * so sorting each member by name is needed only when the counts differ. With a collector the
   * unknown members are reported after the issues of the declared ones.
   */
  #closed(members: readonly { readonly name: string; readonly sub: Location; readonly x: string }[], loc: Location, v: string, p: string, scope: Scope): { early: string; late: string } {
    const k = this.#var()
    const n = this.#var()
    const { rejecting, accepting, cases } = declared(this.#registry, members)
    let known = ''
    if (rejecting.length) known += ` ${cases(rejecting)} if (${v}[${k}] === undefined) return false; break;`
    if (accepting.length) known += ` ${cases(accepting)} break;`
    const present = members.map((m) => `(${m.x} === undefined ? 0 : 1)`).join(' + ')
    const early = `let ${n} = 0\nfor (const ${k} in ${v}) ${n}++\nif (${n} !== ${present}) for (const ${k} in ${v}) switch (${k}) {${known} default: return false }\n`
    if (!scope.collecting) return { early, late: '' }
    const keyPath = `${p} + '/' + ${this.#runtime(scope.fn.module, 'pointerToken')}(${k})`
    const unknown = `x.add(${keyPath}, "additionalProperties", "unknown member is not allowed", ${this.#schemaPath(scope, child(loc.pointer, 'additionalProperties'))})`
    return { early: `if (!x) {\n${early}}\n`, late: `if (x) for (const ${k} in ${v}) switch (${k}) { ${cases(members)} break; default: ${unknown} }\n` }
  }

  #array(s: Obj, loc: Location, v: string, p: string, scope: Scope, report: (cond: string, keyword: string, message: string) => string): string {
    let out = ''
    if (typeof s['minItems'] === 'number') out += report(`${v}.length < ${s['minItems']}`, 'minItems', `must have at least ${s['minItems']} items`)
    if (typeof s['maxItems'] === 'number') out += report(`${v}.length > ${s['maxItems']}`, 'maxItems', `must have at most ${s['maxItems']} items`)
    if ('items' in s) {
      const i = this.#var()
      const x = this.#var()
      const code = this.#inline(scope, this.#sub(loc, 'items'), x, `${p} + '/' + ${i}`)
      if (code) out += `for (let ${i} = 0; ${i} < ${v}.length; ${i}++) {\nconst ${x} = ${v}[${i}]\n${code}}\n`
    }
    if (s['uniqueItems'] === true) out += report(`!${this.#runtime(scope.fn.module, 'unique')}(${v})`, 'uniqueItems', 'must not contain duplicate items')
    return out
  }
}
