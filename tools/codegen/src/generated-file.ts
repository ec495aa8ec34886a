/**
 * A small facade over ts-morph for writing one generated TypeScript file: a fixed preamble,
 * imports by symbol, exported declarations with TSDoc. Emitters read like the file they produce.
 * @module
 */
import { IndentationText, Project, QuoteKind, StructureKind, VariableDeclarationKind, type ImportDeclarationStructure, type StatementStructures } from 'ts-morph'

let sharedProject: Project | undefined
function project(): Project {
  sharedProject ??= new Project({
    useInMemoryFileSystem: true,
    skipAddingFilesFromTsConfig: true,
    manipulationSettings: { indentationText: IndentationText.TwoSpaces, quoteKind: QuoteKind.Single, useTrailingCommas: true },
  })
  return sharedProject
}

/** Re-indents generated statement text by brace depth (two spaces), one statement per line. */
export function indent(code: string, depth = 0): string {
  let level = depth
  const lines: string[] = []
  for (const raw of code.split('\n')) {
    const line = raw.trim()
    if (!line) continue
    // braces inside string literals (messages, patterns) do not nest code
    const bare = line.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    const leadingClose = bare.startsWith('}')
    if (leadingClose) level = Math.max(depth, level - 1)
    lines.push('  '.repeat(level) + line)
    const opens = (bare.match(/{/g) ?? []).length
    const closes = (bare.match(/}/g) ?? []).length - (leadingClose ? 1 : 0)
    level = Math.max(depth, level + opens - closes)
  }
  return lines.join('\n')
}

/** Puts one blank line before each top-level declaration (and its TSDoc) that lacks one. */
function separate(text: string): string {
  const lines = text.split('\n')
  const out: string[] = []
  for (const line of lines) {
    const previous = out[out.length - 1]
    const topLevel = /^(\/\*\*|export |function |const |type |interface )/.test(line)
    const afterDoc = previous !== undefined && /^( \*|\/\*\*.*\*\/$)/.test(previous)
    const constRun = line.startsWith('const ') && previous?.startsWith('const ')
    if (topLevel && previous !== undefined && previous !== '' && !afterDoc && !constRun) out.push('')
    out.push(line)
  }
  return out.join('\n')
}

/** A parameter of a {@link FunctionSpec}. */
export interface ParameterSpec {
  readonly name: string
  readonly type: string
  /** Printed `name?: type`. */
  readonly optional?: boolean
  /** The default value, printed `name: type = initializer`. */
  readonly initializer?: string
}

/** A function to declare in a generated file. */
export interface FunctionSpec {
  readonly name: string
  readonly exported: boolean
  readonly parameters: readonly ParameterSpec[]
  readonly returnType: string
  /** Statements, one per line; re-indented by {@link indent}. */
  readonly body: string
  readonly doc?: string
}

/** One member of a {@link RecordSpec}: `key: { name: value, ... },` on one line, with TSDoc. */
export interface RecordMember {
  /** The member name; quoted unless it is an identifier. */
  readonly key: string
  /** The member's object literal: property names to expressions, printed in this order. */
  readonly value: Readonly<Record<string, string>>
  /** One line of TSDoc above the member. */
  readonly doc?: string
}

/** A constant object literal of one-line members, such as a table of generated functions. */
export interface RecordSpec {
  readonly name: string
  readonly exported: boolean
  /** One line of TSDoc above the declaration. */
  readonly doc: string
  /** One line each, in this order. */
  readonly members: readonly RecordMember[]
  /** What follows the literal, e.g. `as const`. */
  readonly suffix: string
}

const propertyName = (key: string): string => (/^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key))

/**
 * One generated file, built up declaratively and printed once. Declarations are collected as
 * ts-morph structures and written in a single call: inserting them one by one re-splices the
 * file text each time, which is quadratic in the size of a large generated module.
 */
export class GeneratedFile {
  readonly path: string
  readonly #preamble: string
  readonly #imports: ImportDeclarationStructure[] = []
  readonly #statements: (string | StatementStructures)[] = []

  constructor(path: string, preamble: string) {
    this.path = path
    this.#preamble = preamble
  }

  /** `import { names } from from` (type-only when `typeOnly`). */
  importNamed(from: string, names: Iterable<string>, typeOnly = false): this {
    const sorted = [...new Set(names)].sort()
    if (sorted.length) {
      this.#imports.push({ kind: StructureKind.ImportDeclaration, moduleSpecifier: from, namedImports: sorted, isTypeOnly: typeOnly })
    }
    return this
  }

  /** `const name = initializer` (exported when asked), with optional TSDoc. */
  constant(name: string, initializer: string, options: { exported?: boolean; doc?: string; type?: string } = {}): this {
    this.#statements.push({
      kind: StructureKind.VariableStatement,
      declarationKind: VariableDeclarationKind.Const,
      isExported: options.exported ?? false,
      declarations: [{ name, initializer, ...(options.type ? { type: options.type } : {}) }],
      ...(options.doc ? { docs: [options.doc] } : {}),
    })
    return this
  }

  /** A function declaration; an empty body prints as `{}` on two lines, with no blank line inside. */
  fn(spec: FunctionSpec): this {
    const body = indent(spec.body)
    this.#statements.push({
      kind: StructureKind.Function,
      name: spec.name,
      isExported: spec.exported,
      parameters: spec.parameters.map((p) => ({
        name: p.name,
        type: p.type,
        ...(p.optional ? { hasQuestionToken: true } : {}),
        ...(p.initializer === undefined ? {} : { initializer: p.initializer }),
      })),
      returnType: spec.returnType,
      ...(body === '' ? {} : { statements: body }),
      ...(spec.doc ? { docs: [spec.doc] } : {}),
    })
    return this
  }

  /** `const name = { key: { ... }, ... } suffix`, one member a line, each with its TSDoc. */
  record(spec: RecordSpec): this {
    const members = spec.members.map((member) => {
      const value = Object.entries(member.value).map(([name, expression]) => `${propertyName(name)}: ${expression}`)
      return `${member.doc ? `  /** ${member.doc} */\n` : ''}  ${propertyName(member.key)}: { ${value.join(', ')} },`
    })
    // Printed as text: ts-morph would indent an initializer spanning lines as a continuation.
    const head = `${spec.exported ? 'export ' : ''}const ${spec.name} = {`
    return this.statements(`/** ${spec.doc} */\n${head}\n${members.join('\n')}\n} ${spec.suffix}`)
  }

  /** Raw statements (already formatted). */
  statements(text: string): this {
    this.#statements.push(text)
    return this
  }

  /** The file's text: preamble, then imports and declarations in the order they were added. */
  print(): string {
    const file = project().createSourceFile(`/gen/${this.path}`, '', { overwrite: true })
    file.addStatements([...this.#imports, ...this.#statements])
    const text = separate(file.getFullText())
    project().removeSourceFile(file)
    return `${this.#preamble}\n${text.trimStart()}`.replace(/\n*$/, '\n')
  }
}
