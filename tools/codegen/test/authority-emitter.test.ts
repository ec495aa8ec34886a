import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { COMMAND_CATALOG, COMMAND_KINDS, EVENT_CATALOG, EVENT_KINDS } from '@weft/spec'
import { MISSION_TRANSITIONS, WORK_ITEM_TRANSITIONS, type AnyTransitionRow } from '@weft/spec/machines'
import { GENERATED_DIRS, generate, preamble, transitionLookup } from '../src/index.js'

const root = join(import.meta.dirname, '..', '..', '..')
const version = (pkg: string): string => (JSON.parse(readFileSync(join(root, pkg, 'package.json'), 'utf8')) as { version: string }).version
const options = { codegenVersion: version('tools/codegen'), specVersion: version('spec') }
const OUT = 'packages/authority/src/gen'
const byPath = new Map(generate(options).map((o) => [o.path, o.content]))
const text = (name: string): string => byPath.get(`${OUT}/${name}`) ?? ''
const lines = (name: string): string[] => text(name).split('\n')

// The rules and transitions modules import only each other and @weft/codec at run time, so they run from a
// scratch folder below the workspace's node_modules, where @weft/codec resolves.
const scratchRoot = join(root, 'node_modules', '.cache')
mkdirSync(scratchRoot, { recursive: true })
const scratch = mkdtempSync(join(scratchRoot, 'weft-authority-gen-'))
for (const name of ['rules.ts', 'transitions.ts']) writeFileSync(join(scratch, name), text(name))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
const load = async <T>(entry: string): Promise<T> => (await import(pathToFileURL(join(scratch, entry)).href)) as T

/** The TSDoc block right above line `index`, as its text lines. */
function docAbove(all: readonly string[], index: number): string[] {
  const end = index - 1
  let start = end
  while (start > 0 && !all[start]!.trim().startsWith('/**')) start--
  return all.slice(start, end + 1).map((l) => l.trim().replace(/^\/?\*+\/?\s?/, ''))
}

interface Target {
  to: string
  guard?: string
  emits: string[]
  section: string
}
type Lookup = Record<string, Target[]>
interface Transitions {
  WORK_ITEM_TRANSITION_LOOKUP: Lookup
  MISSION_TRANSITION_LOOKUP: Lookup
  WORK_ITEM_STATES_WITH_EVENT: Record<string, string[]>
  MISSION_STATES_WITH_EVENT: Record<string, string[]>
  transitionTargets(table: Lookup, from: string, event: string): readonly Target[]
}

describe('authority emitter (in memory)', () => {
  it('owns packages/authority/src/gen and writes its four modules, each opening with the preamble', () => {
    expect(GENERATED_DIRS).toContain(OUT)
    const files = [...byPath.keys()].filter((p) => p.startsWith(`${OUT}/`)).map((p) => basename(p))
    expect(files.sort()).toEqual(['handlers.ts', 'index.ts', 'reducers.ts', 'transitions.ts'])
    for (const file of files) expect(lines(file)[0]).toBe(preamble(options))
  })

  describe('handlers.ts', () => {
    const all = lines('handlers.ts')
    const members = all.map((l, i) => ({ l, i })).filter(({ l }) => l.startsWith('  readonly '))

    it('gives CommandHandlers exactly one member per catalog Command kind, in catalog order', () => {
      expect(members.map(({ l }) => /^ {2}readonly '([^']+)': HandlerFor<'([^']+)'>$/.exec(l)?.slice(1))).toEqual(COMMAND_KINDS.map((k) => [k, k]))
      expect(new Set(members.map(({ l }) => l)).size).toBe(COMMAND_KINDS.length)
    })

    it('documents each member with the catalog facts and its section', () => {
      for (const entry of COMMAND_CATALOG) {
        const member = members.find(({ l }) => l.includes(`'${entry.kind}':`))!
        const doc = docAbove(all, member.i).join('\n')
        expect(doc).toContain(entry.summary)
        expect(doc).toContain(`Issuer types: ${entry.issuerTypes.join(', ')}`)
        expect(doc).toContain(`@see PROTOCOL.md ${entry.section}`)
        for (const kind of entry.emits) expect(doc).toContain(`\`${kind}\``)
        expect(doc.includes('reserved to the current Coordinator'), entry.kind).toBe(entry.coordinatorOnly)
        expect(doc.includes('Compare-and-set (§15.3)'), entry.kind).toBe('requiresExpectedRevision' in entry)
      }
    })

    it('dispatches with one case per kind calling that kind’s handler, and an exhaustive default', () => {
      const cases = all.filter((l) => l.trimStart().startsWith('case '))
      expect(cases.map((l) => l.trim())).toEqual(COMMAND_KINDS.map((k) => `case '${k}': return handlers['${k}'](command, ctx)`))
      expect(all).toContain('export function dispatchCommand(handlers: CommandHandlers, command: AnyCommand, ctx: HandlerContext): readonly AnyEventDraft[] {')
      expect(all.map((l) => l.trim())).toContain('const unhandled: never = command')
      expect(text('handlers.ts')).toMatch(/throw new ProtocolError\('INVALID_COMMAND', /)
      expect(all).toContain("import { ProtocolError } from '@weft/codec/errors';")
    })
  })

  describe('reducers.ts', () => {
    const all = lines('reducers.ts')

    it('gives EventReducers one member per catalog Event kind with scope, aggregate and section', () => {
      const members = all.map((l, i) => ({ l, i })).filter(({ l }) => l.startsWith('  readonly '))
      expect(members.map(({ l }) => l)).toEqual(EVENT_KINDS.map((k) => `  readonly '${k}': ReducerFor<'${k}'>`))
      for (const [n, entry] of EVENT_CATALOG.entries()) {
        const doc = docAbove(all, members[n]!.i).join('\n')
        expect(doc).toContain(entry.summary)
        expect(doc).toContain(`Scope: ${entry.scope}; aggregate: ${entry.aggregate}.`)
        expect(doc).toContain(`@see PROTOCOL.md ${entry.section}`)
      }
    })

    it('applies with one case per Event kind and an exhaustive default', () => {
      const cases = all.filter((l) => l.trimStart().startsWith('case ')).map((l) => l.trim())
      expect(cases).toEqual(EVENT_KINDS.map((k) => `case '${k}': return reducers['${k}'](state, event)`))
      expect(all).toContain('export function applyEvent(reducers: EventReducers, state: AuthorityState, event: AnyEvent): void {')
      expect(all).toContain('export type AnyEvent = { [K in EventKind]: EventOf<K> }[EventKind]')
      expect(all.map((l) => l.trim())).toContain('const unhandled: never = event')
    })
  })

  describe('the catalog', () => {
    it('is not copied: no generated module holds the facts of an entry, which the Authority reads from @weft/spec', () => {
      for (const file of ['handlers.ts', 'reducers.ts', 'transitions.ts', 'index.ts']) {
        const code = lines(file).filter((l) => !l.trim().startsWith('*') && !l.trim().startsWith('/**'))
        expect(code.join('\n'), file).not.toMatch(/issuerTypes|requiredEpochs|coordinatorOnly|COMMAND_RULES|EVENT_RULES/)
      }
    })
  })

  describe('transitions.ts', () => {
    const machines = [
      { name: 'WORK_ITEM', rows: WORK_ITEM_TRANSITIONS },
      { name: 'MISSION', rows: MISSION_TRANSITIONS },
    ] as const
    const loadTransitions = (): Promise<Transitions> => load<Transitions>('transitions.ts')
    const targetOf = (row: AnyTransitionRow): Target => ({ to: row.to, ...(row.guard ? { guard: row.guard } : {}), emits: [...row.emits], section: row.section })

    for (const m of machines) {
      it(`holds every row of ${m.name}_TRANSITIONS once under its from|event key`, async () => {
        const t = await loadTransitions()
        const lookup = t[`${m.name}_TRANSITION_LOOKUP`]
        for (const row of m.rows) {
          expect(lookup[`${row.from}|${row.event}`], `${row.from} ${row.event} ${row.to}`).toContainEqual(targetOf(row))
        }
        expect(Object.values(lookup).flat()).toHaveLength(m.rows.length)
      })

      it(`orders guarded ${m.name} targets before the unguarded fallback, keeping table order within each`, async () => {
        const lookup = (await loadTransitions())[`${m.name}_TRANSITION_LOOKUP`]
        for (const [key, targets] of Object.entries(lookup)) {
          const rows = m.rows.filter((r) => `${r.from}|${r.event}` === key)
          expect(targets, key).toEqual([...rows.filter((r) => r.guard), ...rows.filter((r) => !r.guard)].map(targetOf))
        }
      })

      it(`lists, per ${m.name} event, exactly the states it has a row from`, async () => {
        const states = (await loadTransitions())[`${m.name}_STATES_WITH_EVENT`]
        const events = [...new Set(m.rows.map((r) => r.event))]
        expect(Object.keys(states).sort()).toEqual(events.sort())
        for (const event of events) expect(states[event]).toEqual([...new Set(m.rows.filter((r) => r.event === event).map((r) => r.from))])
      })
    }

    it('puts a guarded row before an unguarded one listed earlier in the table', () => {
      const rows: AnyTransitionRow[] = [
        { from: 'a', event: 'go', to: 'fallback', emits: [], section: '§1' },
        { from: 'a', event: 'go', to: 'guarded', guard: 'ready', emits: ['work.started'], section: '§2' },
        { from: 'b', event: 'go', to: 'a', emits: [], section: '§3' },
      ]
      expect(transitionLookup(rows)).toEqual([
        [
          'a|go',
          [
            { to: 'guarded', guard: 'ready', emits: ['work.started'], section: '§2' },
            { to: 'fallback', emits: [], section: '§1' },
          ],
        ],
        ['b|go', [{ to: 'a', emits: [], section: '§3' }]],
      ])
    })

    it('looks targets up, guarded first, and answers [] where the machine has no row', async () => {
      const t = await loadTransitions()
      expect(t.transitionTargets(t.WORK_ITEM_TRANSITION_LOOKUP, 'blocked', 'work.unblock')).toEqual([
        { to: 'queued', guard: 'ownershipLive', emits: ['work.unblocked'], section: '§10.2' },
        { to: 'open', emits: ['work.unblocked'], section: '§10.2' },
      ])
      expect(t.transitionTargets(t.WORK_ITEM_TRANSITION_LOOKUP, 'verified', 'work.start')).toEqual([])
      expect(t.transitionTargets(t.MISSION_TRANSITION_LOOKUP, 'approved', 'mission.cancel')).toEqual([])
      expect(t.WORK_ITEM_STATES_WITH_EVENT['work.start']).toEqual(['queued'])
      expect(Object.isFrozen(t.WORK_ITEM_TRANSITION_LOOKUP['queued|work.start']![0])).toBe(true)
    })
  })

  it('re-exports the three modules from index.ts', () => {
    const index = text('index.ts')
    for (const module of ['handlers', 'reducers', 'transitions']) expect(index).toContain(`} from './${module}.js'`)
    for (const name of [
      'dispatchCommand',
      'CommandHandlers',
      'applyEvent',
      'EventReducers',
      'WORK_ITEM_TRANSITION_LOOKUP',
      'MISSION_TRANSITION_LOOKUP',
      'WORK_ITEM_STATES_WITH_EVENT',
      'transitionTargets',
    ]) {
      expect(index).toMatch(new RegExp(`\\b${name}\\b`))
    }
  })
})
