/**
 * The whole "Adding a Command kind" walkthrough of spec/README.md (with "Changing a document"
 * applied on top), on a copy of the spec, the generator and the packages whose generated tables it
 * changes: after the spec diffs and `npm run generate`, `tsc --noEmit` of @weft/authority and
 * @weft/worker fails with exactly the errors the README quotes (the handler table and both reducer
 * tables, nothing else); after the README's finishing diffs both compile.
 *
 * Not in the default suite: it type-checks two packages twice (about a minute on two cores). Run
 * it with `npm run test:slow -w @weft/codegen`; test/spec-author.test.ts is its quick part.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applyReadmePatches, readmePatches, readmeSection, tableErrors } from '../support/readme.js'
import { REPO, copyPaths, linkNodeModules, removeTemp, runNode, tempDir, type RunResult } from '../support/workspace.js'

const readme = readFileSync(join(REPO, 'spec/README.md'), 'utf8')
const addKind = readmeSection(readme, 'Adding a Command kind')
const changeDocument = readmeSection(readme, 'Changing a document')
const patches = [...readmePatches(addKind), ...readmePatches(changeDocument)]
const specSteps = patches.filter((p) => p.path.startsWith('spec/'))
const finishingSteps = patches.filter((p) => !p.path.startsWith('spec/'))

/** The packages the walkthrough type-checks, and the workspaces they compile against. */
const CHECKED = ['packages/authority', 'packages/worker']
const WORKSPACES = ['spec', 'tools/codegen', 'packages/codec', 'packages/validators', 'packages/client', ...CHECKED]

/** The repository's `tsc` (TypeScript 7), as `npm run check` runs it. */
const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc')

describe('adding a Command kind as spec/README.md says, on a copy of the packages it reaches', () => {
  let root = ''
  /** `tsc -p <package>/tsconfig.json --noEmit` of each checked package, one after the other (two cores are shared). */
  const typeCheck = (): RunResult[] => CHECKED.map((pkg) => runNode([TSC, '-p', join(pkg, 'tsconfig.json'), '--noEmit', '--pretty', 'false'], root))

  beforeAll(() => {
    root = tempDir('spec-author-compile')
    // Sources only: a package's own tests may fake its tables, and they are not what the README is about.
    copyPaths(root, ['package.json', 'tsconfig.base.json', ...WORKSPACES], { withoutTests: true })
    linkNodeModules(root, WORKSPACES)
    applyReadmePatches(root, specSteps)
    const generate = spawnSync('npm', ['run', 'generate', '--silent'], { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 120_000 })
    if (generate.status !== 0) throw new Error(`npm run generate failed:\n${generate.stdout}${generate.stderr}`)
  })
  afterAll(() => removeTemp(root))

  it('fails to compile in the handler table and both reducer tables, with the errors the README quotes', () => {
    const results = typeCheck()
    for (const result of results) expect(result.status).not.toBe(0)
    const found = tableErrors(results.map((r) => r.stdout + r.stderr).join('\n'))
    expect(found.other).toEqual([])
    const quotedBlock = addKind.slice(addKind.indexOf('```text') + 7, addKind.indexOf('```', addKind.indexOf('```text') + 7))
    const quoted = tableErrors(quotedBlock)
    expect(quoted.errors).toHaveLength(3)
    expect(found.errors).toEqual(quoted.errors)
  })

  it('compiles once the README finishing diffs handle the new kinds', () => {
    applyReadmePatches(root, finishingSteps)
    const results = typeCheck()
    expect(results.map((r) => r.stdout + r.stderr)).toEqual(['', ''])
    expect(results.map((r) => r.status)).toEqual([0, 0])
  })
})
