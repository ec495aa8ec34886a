/**
 * What the validator compiler is given and what it produces: where each schema resource's code
 * goes, the `format` implementations, and the compiled modules, constants and functions that the
 * validators emitter writes out.
 *
 * Types only, apart from the compiler, so that an emitter can describe its placement and formats
 * without importing the compiler itself.
 * @module
 */

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
   * Without a collector a `pattern` (or a `not: { pattern }`) the format already decides is
   * skipped once the format has passed; with one, each keyword is still reported. Each claim must
   * be proven by a test of the format implementation.
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

/**
 * What a generated function can do: `collect` functions take `(v, p?, x?)` (and `s` when
 * {@link CompiledFunction.schemaPath} is a parameter) and report into the optional collector;
 * `check` functions take `(v)` and only answer.
 */
export type FunctionMode = 'check' | 'collect'

/** One generated function. */
export interface CompiledFunction {
  readonly name: string
  /** What it takes and does, see {@link FunctionMode}. */
  readonly mode: FunctionMode
  /**
   * Set when its schema occurs at several schema paths: callers pass the path of the location
   * they validate as `s`, which defaults to this one (the path of `location`). Unset, the path is
   * written into the body.
   */
  readonly schemaPathDefault?: string
  /** Absolute location `base#pointer` of the first occurrence of its schema, for its TSDoc. */
  readonly location: string
  /** How many schema locations and `$ref`s name its schema (more than one for a shared part). */
  readonly uses: number
  readonly body: string
}

/** A module-level constant: a compiled regular expression or a set of allowed strings. */
export interface CompiledConstant {
  readonly name: string
  /** The expression it is bound to, e.g. `new RegExp("^a$", 'u')`. */
  readonly initializer: string
}

/** What the compiler produced for one module. */
export interface CompiledModule {
  readonly name: string
  /** Named imports by source module. */
  readonly imports: Map<string, Set<string>>
  /** Module-level constants (regular expressions, sets), in creation order. */
  readonly constants: CompiledConstant[]
  readonly functions: CompiledFunction[]
  /** Names other modules import from this one, and entry points. */
  readonly exported: Set<string>
}
