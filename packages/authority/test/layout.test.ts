/**
 * The module layout of `src/`: no import cycle between its modules, type-only imports included.
 * A cycle of types alone costs nothing at run time, but it ties the modules on it into one unit
 * that can be read, tested and moved only together; the shared shapes belong in a leaf module
 * instead (as `domain/ledgers.ts`, `domain/budget-limits.ts` and `log/log-head.ts` are).
 *
 * Every `import … from`, `export … from`, side-effect `import '…'` and `import('…')` type of each
 * source file (tests and the generated `src/gen/` excluded) is read as text; relative specifiers
 * resolve to the `.ts` file they name. The strongly connected components of that graph must all be
 * single modules. When one is not, the test names its modules and one cycle through them.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SRC = fileURLToPath(new URL('../src/', import.meta.url))

/** Cycles kept on purpose, each as its sorted module list with the reason; none today. */
const ALLOWED_CYCLES: readonly { readonly modules: readonly string[]; readonly why: string }[] = []

const SPECIFIERS = [
  /^\s*(?:import|export)\s+(?:type\s+)?(?:\{[^}]*\}|\*(?:\s+as\s+\w+)?|\w+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+\w+))?)\s+from\s+['"]([^'"]+)['"]/gm,
  /^\s*import\s+['"]([^'"]+)['"]/gm,
  /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
]

/** The source modules under `dir`, relative to {@link SRC}, without tests and generated code. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return relative(SRC, path) === 'gen' ? [] : sourceFiles(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [relative(SRC, path)] : []
  })
}

/** The module graph: each module and the modules of `src/` it imports. */
function moduleGraph(): Map<string, string[]> {
  const files = sourceFiles(SRC)
  const known = new Set(files)
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const text = readFileSync(join(SRC, file), 'utf8')
    const deps = new Set<string>()
    for (const pattern of SPECIFIERS) {
      for (const [, specifier] of text.matchAll(pattern)) {
        if (specifier === undefined || !specifier.startsWith('.')) continue
        const target = relative(SRC, resolve(SRC, dirname(file), specifier)).replace(/\.js$/, '.ts')
        if (known.has(target)) deps.add(target)
      }
    }
    graph.set(file, [...deps])
  }
  return graph
}

/** The strongly connected components with more than one module, or a module importing itself (Tarjan). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (v: string): void => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    let w: string | undefined
    do {
      w = stack.pop()!
      onStack.delete(w)
      component.push(w)
    } while (w !== v)
    if (component.length > 1 || graph.get(v)?.includes(v) === true) found.push(component.sort())
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found
}

/** One cycle through `component`, starting and ending at its first module (breadth-first, so a shortest one). */
function cycleThrough(graph: ReadonlyMap<string, readonly string[]>, component: readonly string[]): string[] {
  const start = component[0]!
  const inside = new Set(component)
  const from = new Map<string, string>()
  const queue = [start]
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!
    for (const w of graph.get(v) ?? []) {
      if (!inside.has(w)) continue
      if (w === start) {
        const path = [v]
        for (let at = from.get(v); at !== undefined; at = from.get(at)) path.unshift(at)
        // Every predecessor chain ends at `start`, the one module with no predecessor recorded.
        return [...path, start]
      }
      if (!from.has(w) && w !== start) {
        from.set(w, v)
        queue.push(w)
      }
    }
  }
  return [...component]
}

describe('the module layout of src/', () => {
  it('finds the cycles of a graph, and one path around each', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'd.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ])
    const found = cycles(graph)
    expect(found).toEqual([['a.ts', 'b.ts', 'c.ts'], ['e.ts']])
    expect(cycleThrough(graph, found[0]!)).toEqual(['a.ts', 'b.ts', 'c.ts', 'a.ts'])
  })

  it('reads the imports of every source module, type-only ones included', () => {
    const graph = moduleGraph()
    expect(graph.size).toBeGreaterThan(50)
    // `model.ts` takes only types from the ledger leaf; a parser that missed `import type` would see nothing here.
    expect(graph.get('model.ts')).toContain('domain/ledgers.ts')
    expect(graph.get('index.ts')?.length).toBeGreaterThan(20)
  })

  it('has no import cycle between its modules', () => {
    const graph = moduleGraph()
    const allowed = new Set(ALLOWED_CYCLES.map((c) => [...c.modules].sort().join(' ')))
    const unexpected = cycles(graph).filter((component) => !allowed.has(component.join(' ')))
    const report = unexpected.map((component) => `${component.length} modules: ${cycleThrough(graph, component).join(' -> ')}`)
    expect(report, `import cycles in src/ (move the shared declarations to a leaf module):\n${report.join('\n')}`).toEqual([])
  })
})
