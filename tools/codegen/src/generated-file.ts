/**
 * A small facade over ts-morph for writing one generated TypeScript file: a fixed preamble,
 * imports by symbol, exported declarations with TSDoc. Emitters read like the file they produce.
 * @module
 */
import { IndentationText, Project, QuoteKind, StructureKind, VariableDeclarationKind, type SourceFile } from 'ts-morph'

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

/** A function to declare in a generated file. */
export interface FunctionSpec {
  readonly name: string
  readonly exported: boolean
  readonly parameters: readonly { name: string; type: string }[]
  readonly returnType: string
  /** Statements, one per line; re-indented by {@link indent}. */
  readonly body: string
  readonly doc?: string
}

/** One generated file, built up declaratively and printed once. */
export class GeneratedFile {
  readonly path: string
  readonly #preamble: string
  readonly #file: SourceFile

  constructor(path: string, preamble: string) {
    this.path = path
    this.#preamble = preamble
    this.#file = project().createSourceFile(`/gen/${path}`, '', { overwrite: true })
  }

  /** `import { names } from from` (type-only when `typeOnly`). */
  importNamed(from: string, names: Iterable<string>, typeOnly = false): this {
    const sorted = [...new Set(names)].sort()
    if (sorted.length) this.#file.addImportDeclaration({ moduleSpecifier: from, namedImports: sorted, isTypeOnly: typeOnly })
    return this
  }

  /** `const name = initializer` (exported when asked), with optional TSDoc. */
  constant(name: string, initializer: string, options: { exported?: boolean; doc?: string; type?: string } = {}): this {
    this.#file.addVariableStatement({
      declarationKind: VariableDeclarationKind.Const,
      isExported: options.exported ?? false,
      declarations: [{ name, initializer, ...(options.type ? { type: options.type } : {}) }],
      ...(options.doc ? { docs: [options.doc] } : {}),
    })
    return this
  }

  /** A function declaration. */
  fn(spec: FunctionSpec): this {
    this.#file.addFunction({
      kind: StructureKind.Function,
      name: spec.name,
      isExported: spec.exported,
      parameters: spec.parameters.map((p) => ({ name: p.name, type: p.type })),
      returnType: spec.returnType,
      statements: indent(spec.body),
      ...(spec.doc ? { docs: [spec.doc] } : {}),
    })
    return this
  }

  /** Raw statements (already formatted). */
  statements(text: string): this {
    this.#file.addStatements(text)
    return this
  }

  /** The file's text: preamble, then the declarations. */
  print(): string {
    return `${this.#preamble}\n${this.#file.getFullText().trimStart()}`.replace(/\n*$/, '\n')
  }
}
