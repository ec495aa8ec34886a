/**
 * The generator refuses an incomplete catalog before emitting anything: in memory, one line per gap
 * naming the kind and what it lacks; through the bin, on a copy of the spec with a Command kind
 * catalogued but given no payload schema, exit 1 with that one line and no file written.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CommandInfo, EventInfo } from '@weft/spec'
import { GENERATED_DIRS, SPEC_CATALOGS, catalogProblems, type SpecCatalogs } from '../src/index.js'
import { codegenBin, copyPaths, linkNodeModules, removeTemp, runNode, snapshotTree, tempDir } from './support/workspace.js'

/** The spec's catalogs with one Command entry replaced (or appended, when `kind` is new). */
function withCommand(kind: string, change: (entry: Record<string, unknown>) => void, payloads = SPEC_CATALOGS.commandPayloads): SpecCatalogs {
  const commands = SPEC_CATALOGS.commands.map((c) => ({ ...c }) as Record<string, unknown>)
  let entry = commands.find((c) => c['kind'] === kind)
  if (entry === undefined) {
    entry = { ...commands[0], kind }
    commands.push(entry)
  }
  change(entry)
  return { ...SPEC_CATALOGS, commands: commands as unknown as CommandInfo[], commandPayloads: payloads }
}

/** A copy of a payload table without `kind`. */
const without = (table: Readonly<Record<string, unknown>>, kind: string): Record<string, unknown> => Object.fromEntries(Object.entries(table).filter(([k]) => k !== kind))

describe('catalogProblems', () => {
  it('finds nothing in the spec as it stands', () => {
    expect(catalogProblems()).toEqual([])
  })

  it('names a Command kind without a payload schema', () => {
    expect(catalogProblems({ ...SPEC_CATALOGS, commandPayloads: without(SPEC_CATALOGS.commandPayloads, 'work.start') })).toEqual([
      'Command kind work.start lacks a payload schema in CommandPayloads (spec/src/payloads/commands.ts)',
    ])
  })

  it('names a new Command kind catalogued without its schema, and the schema of a kind outside the catalog', () => {
    const renamed = { ...without(SPEC_CATALOGS.commandPayloads, 'work.start'), 'work.begin': SPEC_CATALOGS.commandPayloads['work.start'] }
    expect(catalogProblems(withCommand('work.start', (e) => (e['kind'] = 'work.commence'), renamed))).toEqual([
      'Command kind work.commence lacks a payload schema in CommandPayloads (spec/src/payloads/commands.ts)',
      'CommandPayloads (spec/src/payloads/commands.ts) has a schema for work.begin, which is not a Command kind of COMMAND_CATALOG (spec/src/catalog/commands.ts)',
    ])
  })

  it('names a Command kind with no issuers or unknown ones', () => {
    expect(catalogProblems(withCommand('work.start', (e) => (e['issuerTypes'] = [])))).toEqual([
      'Command kind work.start lacks an issuer list (issuerTypes: agent, human, service) in COMMAND_CATALOG (spec/src/catalog/commands.ts)',
    ])
    expect(catalogProblems(withCommand('work.start', (e) => delete e['issuerTypes']))).toHaveLength(1)
    expect(catalogProblems(withCommand('work.start', (e) => (e['issuerTypes'] = ['robot'])))).toEqual([
      'Command kind work.start lists unknown issuer types robot in COMMAND_CATALOG (spec/src/catalog/commands.ts)',
    ])
  })

  it('names a Command kind that emits nothing, or an Event kind outside the Event catalog', () => {
    expect(catalogProblems(withCommand('work.start', (e) => (e['emits'] = [])))).toEqual(['Command kind work.start lacks emitted Events (emits) in COMMAND_CATALOG (spec/src/catalog/commands.ts)'])
    expect(catalogProblems(withCommand('work.start', (e) => (e['emits'] = ['work.started', 'work.begun'])))).toEqual([
      'Command kind work.start emits work.begun, not in EVENT_CATALOG (spec/src/catalog/events.ts)',
    ])
  })

  it('names each other missing field of a Command entry on a line of its own', () => {
    const problems = catalogProblems(
      withCommand('work.start', (e) => {
        for (const field of ['summary', 'requiredEpochs', 'coordinatorOnly', 'scope', 'aggregate', 'section']) delete e[field]
      }),
    )
    expect(problems).toEqual([
      'Command kind work.start lacks requiredEpochs.agent (a list, empty when none) in COMMAND_CATALOG (spec/src/catalog/commands.ts)',
      'Command kind work.start lacks requiredEpochs.human (a list, empty when none) in COMMAND_CATALOG (spec/src/catalog/commands.ts)',
      'Command kind work.start lacks coordinatorOnly (true or false) in COMMAND_CATALOG (spec/src/catalog/commands.ts)',
      'Command kind work.start lacks a summary in COMMAND_CATALOG (spec/src/catalog/commands.ts)',
      'Command kind work.start lacks a scope (one of group, organization) in COMMAND_CATALOG (spec/src/catalog/commands.ts)',
      'Command kind work.start lacks an aggregate (one of mission, membership, message, workItem, artifact, approval, policy, group, agent, session) in COMMAND_CATALOG (spec/src/catalog/commands.ts)',
      'Command kind work.start lacks a PROTOCOL.md section (like §10.2) in COMMAND_CATALOG (spec/src/catalog/commands.ts)',
    ])
    for (const line of problems) expect(line).not.toContain('\n')
  })

  it('names a Command kind listed twice', () => {
    const twice = { ...SPEC_CATALOGS, commands: [...SPEC_CATALOGS.commands, SPEC_CATALOGS.commands[0]!] }
    expect(catalogProblems(twice)).toEqual(['Command kind mission.create is listed twice in COMMAND_CATALOG (spec/src/catalog/commands.ts)'])
  })

  it('names an Event kind without a payload schema, or without a section', () => {
    expect(catalogProblems({ ...SPEC_CATALOGS, eventPayloads: without(SPEC_CATALOGS.eventPayloads, 'work.started') })).toEqual([
      'Event kind work.started lacks a payload schema in EventPayloads (spec/src/payloads/events.ts)',
    ])
    const events = SPEC_CATALOGS.events.map((e) => (e.kind === 'work.started' ? { ...e, section: '10.2' } : e)) as EventInfo[]
    expect(catalogProblems({ ...SPEC_CATALOGS, events })).toEqual(['Event kind work.started lacks a PROTOCOL.md section (like §10.2) in EVENT_CATALOG (spec/src/catalog/events.ts)'])
  })
})

describe('weft-codegen on a spec copy with a Command kind lacking its payload schema', () => {
  let root = ''
  beforeAll(() => {
    root = tempDir('codegen-catalog')
    copyPaths(root, ['spec', 'tools/codegen', ...GENERATED_DIRS], { withoutTests: true })
    linkNodeModules(root, ['spec', 'tools/codegen'])
  })
  afterAll(() => removeTemp(root))

  it('exits 1 with one line naming the kind and what it lacks, and writes nothing', () => {
    // The catalog entry of a new extension kind, and nothing else: no payload schema anywhere.
    const catalog = join(root, 'spec/src/catalog/commands.ts')
    const source = readFileSync(catalog, 'utf8')
    const anchor = '] as const satisfies readonly CommandInfo[]\n\n/** Every Command kind Weft knows'
    expect(source).toContain(anchor)
    const entry = `  {
    kind: 'ext.example.work.note_add',
    summary: 'Adds a note to a WorkItem.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentInGroup, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    emits: ['work.progressed'],
    section: '§10.2',
  },
`
    writeFileSync(catalog, source.replace(anchor, entry + anchor))
    const before = new Map(GENERATED_DIRS.map((dir) => [dir, snapshotTree(join(root, dir))]))

    const result = runNode([codegenBin(root)], root)
    expect(result.stderr).toBe('weft-codegen: Command kind ext.example.work.note_add lacks a payload schema in CommandPayloads (spec/src/payloads/commands.ts)\n')
    expect(result.stdout).toBe('')
    expect(result.status).toBe(1)
    for (const dir of GENERATED_DIRS) expect(snapshotTree(join(root, dir)), dir).toEqual(before.get(dir))
  })
})
