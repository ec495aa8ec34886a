/**
 * `weft-codegen [--check] [--root DIR]`: regenerates every generated file, or with `--check`
 * verifies that the committed ones are current and prints the drift.
 * @module
 */
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { IncompleteCatalogError } from './catalog-check.js'
import { checkOutputs, driftReport, generate, writeOutputs, type GeneratedOutput } from './codegen.js'

const HELP = `usage: weft-codegen [--check] [--root DIR]

Regenerates packages/*/src/gen/ and packages/validators/schemas/ from @weft/spec.
  --check     write nothing; exit 1 and print a diff when committed output is stale
  --root DIR  the repository root (default: the current directory)

Runs from the TypeScript sources of @weft/spec and @weft/codegen; nothing needs to be built.
Exits 1 without writing anything when a catalogued kind lacks what generation needs
(a payload schema, issuer types, emitted Events, ...), one line per gap.
`

function version(root: string, pkg: string): string {
  return (JSON.parse(readFileSync(join(root, pkg, 'package.json'), 'utf8')) as { version: string }).version
}

/** Where the command line writes (stdout and stderr by default). */
export interface Output {
  write(text: string): unknown
}

/** Runs the command line and returns the exit code. */
export function main(argv: readonly string[], out: Output = process.stdout, err: Output = process.stderr): number {
  let check = false
  let root = process.cwd()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--check') check = true
    else if (arg === '--root' && argv[i + 1] !== undefined) root = resolve(argv[++i]!)
    else if (arg === '--help' || arg === '-h') {
      out.write(HELP)
      return 0
    } else {
      err.write(`weft-codegen: unknown argument ${JSON.stringify(arg)}\n${HELP}`)
      return 2
    }
  }
  const started = performance.now()
  let outputs: GeneratedOutput[]
  try {
    outputs = generate({ codegenVersion: version(root, 'tools/codegen'), specVersion: version(root, 'spec') })
  } catch (error) {
    if (!(error instanceof IncompleteCatalogError)) throw error
    // Nothing was emitted, so nothing is written: the tree keeps its last complete generation.
    for (const problem of error.problems) err.write(`weft-codegen: ${problem}\n`)
    return 1
  }
  if (check) {
    const drift = checkOutputs(root, outputs)
    if (drift.length === 0) {
      out.write(`weft-codegen: ${outputs.length} generated files are current\n`)
      return 0
    }
    err.write(driftReport(drift))
    err.write(`weft-codegen: ${drift.length} of ${outputs.length} generated files drifted; run \`npm run generate\` and commit\n`)
    return 1
  }
  const { written, removed } = writeOutputs(root, outputs)
  out.write(`weft-codegen: ${outputs.length} files, ${written} written, ${removed} removed in ${Math.round(performance.now() - started)} ms\n`)
  return 0
}
