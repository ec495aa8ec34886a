import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { MISSION_TRANSITIONS, TERMINAL_MISSION_STATES, TERMINAL_WORK_ITEM_STATES, WORK_ITEM_TRANSITIONS } from '@weft/spec/machines'
import { GENERATED_DIRS, generate, preamble, statechartLine } from '../src/index.js'

const root = join(import.meta.dirname, '..', '..', '..')
const version = (pkg: string): string => (JSON.parse(readFileSync(join(root, pkg, 'package.json'), 'utf8')) as { version: string }).version
const options = { codegenVersion: version('tools/codegen'), specVersion: version('spec') }
const byPath = new Map(generate(options).map((o) => [o.path, o.content]))
const lines = (path: string): string[] => byPath.get(path)?.split('\n') ?? []

const charts = [
  { path: 'spec/docs/work-item-machine.mmd', rows: WORK_ITEM_TRANSITIONS, terminal: TERMINAL_WORK_ITEM_STATES },
  { path: 'spec/docs/mission-machine.mmd', rows: MISSION_TRANSITIONS, terminal: TERMINAL_MISSION_STATES },
]

describe('statecharts (in memory)', () => {
  it('puts the Mermaid charts in a folder the drift check owns', () => {
    expect(GENERATED_DIRS).toContain('spec/docs')
    expect([...byPath.keys()].filter((p) => p.startsWith('spec/docs/')).sort()).toEqual(charts.map((c) => c.path).sort())
  })

  for (const c of charts) {
    describe(c.path, () => {
      const emitted = lines(c.path)

      it('starts with the preamble as a %% comment, then declares a stateDiagram-v2', () => {
        expect(emitted[0]).toBe(`%% ${preamble(options).replace(/^\/\/ /, '')}`)
        expect(emitted).toContain('stateDiagram-v2')
        expect(emitted.indexOf('stateDiagram-v2')).toBeLessThan(emitted.indexOf('[*] --> none'))
      })

      it('has one `from --> to : event [guard]` line per row, in table order', () => {
        const transitions = emitted.filter((l) => / --> /.test(l) && !l.includes('[*]'))
        expect(transitions).toEqual(c.rows.map(statechartLine))
        for (const row of c.rows) {
          const line = `${row.from} --> ${row.to} : ${row.event}${row.guard ? ` [${row.guard}]` : ''}`
          expect(emitted, line).toContain(line)
        }
      })

      it('marks every terminal state as an end', () => {
        for (const state of c.terminal) expect(emitted).toContain(`${state} --> [*]`)
        expect(emitted.filter((l) => l.endsWith('--> [*]'))).toHaveLength(c.terminal.length)
      })
    })
  }

  it('writes guarded rows with the guard in brackets', () => {
    expect(lines('spec/docs/work-item-machine.mmd')).toContain('blocked --> queued : work.unblock [ownershipLive]')
    expect(lines('spec/docs/work-item-machine.mmd')).toContain('blocked --> open : work.unblock')
    expect(lines('spec/docs/mission-machine.mmd')).toContain('awaiting_approval --> approved : mission.approve')
  })
})
