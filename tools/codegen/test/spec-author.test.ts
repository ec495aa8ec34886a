/**
 * The spec author's walkthroughs of spec/README.md ("Adding a Command kind", "Changing a
 * document"), performed on a copy of the spec and the generator: their spec diffs apply to the
 * sources as they stand, `npm run generate` then rewrites exactly the files the README lists, the
 * generated handler and reducer interfaces name the new kinds, and `--check` agrees.
 *
 * The rest of the walkthrough, that the Authority's and the Worker's tables then fail to compile
 * until the README's finishing diffs are applied, type-checks five packages twice and takes about a
 * minute: it is `npm run test:slow` (test/slow/spec-author-compile.test.ts).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GENERATED_DIRS } from '../src/index.js'
import { applyReadmePatches, listedPaths, readmePatches, readmeSection, tableErrors } from './support/readme.js'
import { REPO, codegenBin, copyPaths, linkNodeModules, removeTemp, snapshotTree, tempDir } from './support/workspace.js'
import { spawnSync } from 'node:child_process'

const readme = readFileSync(join(REPO, 'spec/README.md'), 'utf8')
const addKind = readmeSection(readme, 'Adding a Command kind')
const changeDocument = readmeSection(readme, 'Changing a document')
const LEAD = 'it rewrites these files:'

describe('the walkthroughs of spec/README.md', () => {
  it('edit the spec first, then finish in the Authority and the Worker', () => {
    expect(readmePatches(addKind).map((p) => p.path)).toEqual([
      'spec/src/catalog/events.ts',
      'spec/src/payloads/events.ts',
      'spec/src/catalog/commands.ts',
      'spec/src/payloads/commands.ts',
      'packages/authority/src/domain/notes.ts',
      'packages/authority/src/domain/compose.ts',
      'packages/worker/src/reducers.ts',
    ])
    expect(readmePatches(changeDocument).map((p) => p.path)).toEqual(['spec/src/documents/presence-record.ts'])
  })

  it('quote the errors of the handler table and both reducer tables', () => {
    const quoted = addKind.slice(addKind.indexOf('```text'), addKind.indexOf('```', addKind.indexOf('```text') + 3))
    const { errors } = tableErrors(quoted.replace('```text', ''))
    expect(errors.map((e) => `${e.file} ${e.type} ${e.property}`)).toEqual([
      "packages/authority/src/domain/compose.ts CommandHandlers 'ext.example.work.note_add'",
      "packages/authority/src/domain/compose.ts EventReducers 'ext.example.work.note_added'",
      "packages/worker/src/reducers.ts WorkerEventReducers 'ext.example.work.note_added'",
    ])
  })
})

describe('the spec steps on a copy of spec and codegen', () => {
  let root = ''
  let before = new Map<string, Map<string, string>>()

  beforeAll(() => {
    root = tempDir('spec-author')
    copyPaths(root, ['package.json', 'spec', 'tools/codegen', ...GENERATED_DIRS], { withoutTests: true })
    linkNodeModules(root, ['spec', 'tools/codegen'])
    before = new Map(GENERATED_DIRS.map((dir) => [dir, snapshotTree(join(root, dir))]))
  })
  afterAll(() => removeTemp(root))

  it('apply to the sources as they stand, each hunk at one place', () => {
    const specOnly = (section: string) => readmePatches(section).filter((p) => p.path.startsWith('spec/'))
    expect(() => applyReadmePatches(root, [...specOnly(addKind), ...specOnly(changeDocument)])).not.toThrow()
  })

  it('then `npm run generate` rewrites exactly the files both sections list', () => {
    const run = spawnSync('npm', ['run', 'generate', '--silent'], { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 120_000 })
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    const changed = GENERATED_DIRS.flatMap((dir) => {
      const now = snapshotTree(join(root, dir))
      const was = before.get(dir)!
      return [...new Set([...now.keys(), ...was.keys()])].filter((f) => now.get(f) !== was.get(f)).map((f) => `${dir}/${f}`)
    })
    expect(changed.sort()).toEqual([...listedPaths(addKind, LEAD), ...listedPaths(changeDocument, LEAD)].sort())
    expect(run.stdout).toMatch(new RegExp(`^weft-codegen: \\d+ files, ${changed.length} written, 0 removed in \\d+ ms\\n$`))
  })

  it('and the generated interfaces demand a handler and reducers of the new kinds', () => {
    const gen = (path: string): string => readFileSync(join(root, path), 'utf8')
    expect(gen('packages/authority/src/gen/handlers.ts')).toContain("  readonly 'ext.example.work.note_add': HandlerFor<'ext.example.work.note_add'>\n")
    expect(gen('packages/authority/src/gen/reducers.ts')).toContain("  readonly 'ext.example.work.note_added': ReducerFor<'ext.example.work.note_added'>\n")
    expect(gen('packages/worker/src/gen/reducers.ts')).toContain("  readonly 'ext.example.work.note_added': WorkerReducerFor<'ext.example.work.note_added'>\n")
    expect(gen('packages/client/src/gen/builders.ts')).toContain("  extExampleWorkNoteAdd(payload: CommandPayload<'ext.example.work.note_add'>, options?: CommandOptions): Promise<Receipt>\n")
    expect(gen('packages/validators/schemas/presence-record.schema.json')).toContain('"statusMessage"')
  })

  it('after which `npx weft-codegen --check` passes', () => {
    const check = spawnSync(process.execPath, [codegenBin(root), '--check'], { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
    expect(check.stderr).toBe('')
    expect(check.status).toBe(0)
  })
})
