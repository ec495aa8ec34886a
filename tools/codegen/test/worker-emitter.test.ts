import { readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { EVENT_CATALOG, EVENT_KINDS } from '@weft/spec'
import { GENERATED_DIRS, generate, preamble } from '../src/index.js'
import { workerCase, workerReducerDoc } from '../src/emitters/worker.js'

const root = join(import.meta.dirname, '..', '..', '..')
const version = (pkg: string): string => (JSON.parse(readFileSync(join(root, pkg, 'package.json'), 'utf8')) as { version: string }).version
const options = { codegenVersion: version('tools/codegen'), specVersion: version('spec') }
const OUT = 'packages/worker/src/gen'
const byPath = new Map(generate(options).map((o) => [o.path, o.content]))
const text = (name: string): string => byPath.get(`${OUT}/${name}`) ?? ''
const lines = (name: string): string[] => text(name).split('\n')

/** The TSDoc block right above line `index`, as its text lines. */
function docAbove(all: readonly string[], index: number): string[] {
  let start = index - 1
  while (start > 0 && !all[start]!.trim().startsWith('/**')) start--
  return all.slice(start, index).map((l) => l.trim().replace(/^\/?\*+\/?\s?/, ''))
}

describe('worker emitter (in memory)', () => {
  it('owns packages/worker/src/gen and writes reducers.ts and index.ts, each opening with the preamble', () => {
    expect(GENERATED_DIRS).toContain(OUT)
    const files = [...byPath.keys()].filter((p) => p.startsWith(`${OUT}/`)).map((p) => basename(p))
    expect(files.sort()).toEqual(['index.ts', 'reducers.ts'])
    for (const file of files) expect(lines(file)[0]).toBe(preamble(options))
  })

  describe('reducers.ts', () => {
    const all = lines('reducers.ts')
    const members = all.map((l, i) => ({ l, i })).filter(({ l }) => l.startsWith('  readonly '))

    it('gives WorkerEventReducers exactly one member per catalog Event kind, in catalog order', () => {
      expect(all).toContain('export interface WorkerEventReducers {')
      expect(members.map(({ l }) => l)).toEqual(EVENT_KINDS.map((k) => `  readonly '${k}': WorkerReducerFor<'${k}'>`))
      expect(new Set(members.map(({ l }) => l)).size).toBe(EVENT_CATALOG.length)
    })

    it('documents each member with the catalog summary, its scope, aggregate and section', () => {
      for (const [n, entry] of EVENT_CATALOG.entries()) {
        const doc = docAbove(all, members[n]!.i).join('\n')
        expect(doc).toContain(`\`${entry.kind}\` (EVENT_CATALOG): ${entry.summary}`)
        expect(doc).toContain(`advances the ${entry.aggregate} aggregate`)
        expect(doc).toContain(`@see PROTOCOL.md ${entry.section}`)
        expect(doc.includes('outside every Group order'), entry.kind).toBe(entry.scope === 'organization')
        expect(doc.trim()).toBe(workerReducerDoc(entry).join('\n'))
      }
    })

    it('applies with one case per Event kind, each calling that kind’s reducer with the narrowed Event', () => {
      const cases = all.filter((l) => l.trimStart().startsWith('case ')).map((l) => l.trim())
      expect(cases).toEqual(EVENT_KINDS.map(workerCase))
      expect(cases[0]).toBe("case 'mission.created': return reducers['mission.created'](view, event as WorkerEventOf<'mission.created'>)")
      expect(all).toContain('export function applyWorkerEvent(reducers: WorkerEventReducers, view: WorkerView, event: Event): void {')
    })

    it('tolerates unknown extension kinds in the default branch, with a compile-time check that only ext. kinds reach it', () => {
      const body = text('reducers.ts').slice(text('reducers.ts').indexOf('default: {'))
      expect(body).toContain('§18')
      expect(body).toContain('event.kind satisfies ExtensionKind')
      // Nothing is thrown: an unknown kind is not an error for a reader.
      expect(body).not.toContain('throw')
    })

    it('imports only types, from the spec and the hand-written worker modules', () => {
      const imports = all.filter((l) => l.startsWith('import '))
      expect(imports).toEqual([
        "import type { Event, ExtensionKind } from '@weft/spec';",
        "import type { WorkerView } from '../seams.js';",
        "import type { WorkerEventOf, WorkerReducerFor } from '../reducer-types.js';",
      ])
    })
  })

  it('re-exports applyWorkerEvent and WorkerEventReducers from index.ts', () => {
    expect(lines('index.ts')).toContain("export { applyWorkerEvent, type WorkerEventReducers } from './reducers.js'")
  })
})
