/**
 * `weft-codegen` through its real entry point: the package.json `bin`, spawned as `npx` would, on
 * a copy that was never built, and on the repository with every build output refused. The bin must
 * run the generator from the TypeScript sources of @weft/codegen and @weft/spec, as
 * `npm run generate` does; a bin that ran a previous build would check against stale output.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GENERATED_DIRS } from '../src/index.js'
import { REPO, codegenBin, copyPaths, linkNodeModules, removeTemp, runNode, snapshotTree, tempDir } from './support/workspace.js'

const guard = pathToFileURL(join(import.meta.dirname, 'support', 'no-dist.mjs')).href
/** Environment that makes every process refuse to load build output under `root`. */
const noDist = (root: string): NodeJS.ProcessEnv => ({ NODE_OPTIONS: `--import=${guard}`, WEFT_NO_DIST_ROOT: root })

describe('the no-dist guard used below', () => {
  it('refuses a module under <workspace>/dist/ and loads the same module elsewhere', () => {
    const dir = tempDir('guard')
    try {
      for (const folder of ['spec/dist', 'spec/lib']) {
        mkdirSync(join(dir, folder), { recursive: true })
        writeFileSync(join(dir, folder, 'index.js'), 'console.log("loaded")\n')
      }
      const built = runNode([join(dir, 'spec/dist/index.js')], dir, noDist(dir))
      expect(built.status).not.toBe(0)
      expect(built.stderr).toContain('no-dist guard: refused to load build output')
      const source = runNode([join(dir, 'spec/lib/index.js')], dir, noDist(dir))
      expect(source.stdout).toBe('loaded\n')
      expect(source.status).toBe(0)
    } finally {
      removeTemp(dir)
    }
  })
})

describe('weft-codegen on the repository', () => {
  it('--check exits 0 with every dist/ folder refused, so it never runs or reads a build', () => {
    const result = runNode([codegenBin(), '--check'], REPO, noDist(REPO))
    expect(result.stderr).toBe('')
    expect(result.stdout).toMatch(/^weft-codegen: \d+ generated files are current\n$/)
    expect(result.status).toBe(0)
  })
})

describe('weft-codegen on a copy that was never built', () => {
  let root = ''
  const errorCodes = 'packages/codec/src/gen/error-codes.ts'
  const documentsModule = 'packages/validators/src/gen/documents.ts'

  beforeAll(() => {
    root = tempDir('codegen-bin')
    copyPaths(root, ['spec', 'tools/codegen', ...GENERATED_DIRS], { withoutTests: true })
    linkNodeModules(root, ['spec', 'tools/codegen'])
  })
  afterAll(() => removeTemp(root))

  it('has no build output to fall back on', () => {
    expect(existsSync(join(root, 'spec/dist'))).toBe(false)
    expect(existsSync(join(root, 'tools/codegen/dist'))).toBe(false)
    expect(existsSync(codegenBin(root))).toBe(true)
  })

  it('--check exits 1 with a bounded unified diff from committed to generated, writing nothing', () => {
    const original = readFileSync(join(root, errorCodes), 'utf8')
    const documents = readFileSync(join(root, documentsModule), 'utf8')
    // One line altered in a small file; every line altered in the largest one.
    expect(original).toContain('  | "RATE_LIMITED"\n')
    writeFileSync(join(root, errorCodes), original.replace('  | "RATE_LIMITED"\n', '  | "RATE_LIMITED_BY_HAND"\n'))
    writeFileSync(join(root, documentsModule), documents.replace(/^(.+)$/gm, '$1 // edited'))
    const before = snapshotTree(join(root, 'packages'))
    try {
      const result = runNode([codegenBin(root), '--check'], root)
      expect(result.status).toBe(1)
      const err = result.stderr
      // Exactly the two altered files drifted: the rest of the never-built copy is current.
      expect(err.split('\n').filter((l) => /^(stale|missing|extra): /.test(l))).toEqual([`stale: ${errorCodes}`, `stale: ${documentsModule}`])
      expect(err).toMatch(/\nweft-codegen: 2 of \d+ generated files drifted; run `npm run generate` and commit\n$/)

      // The small drift: the altered line, committed side first, a few lines of context, nothing else.
      const small = section(err, errorCodes)
      expect(small[0]).toBe(`stale: ${errorCodes}`)
      expect(small[1]).toBe(`--- committed/${errorCodes}`)
      expect(small[2]).toBe(`+++ generated/${errorCodes}`)
      expect(small[3]).toMatch(/^@@ -\d+,7 \+\d+,7 @@$/)
      const body = small.slice(4)
      expect(body.filter((l) => l.startsWith('-'))).toEqual(['-  | "RATE_LIMITED_BY_HAND"'])
      expect(body.filter((l) => l.startsWith('+'))).toEqual(['+  | "RATE_LIMITED"'])
      expect(body.indexOf('-  | "RATE_LIMITED_BY_HAND"')).toBeLessThan(body.indexOf('+  | "RATE_LIMITED"'))
      expect(body.filter((l) => l.startsWith(' '))).toHaveLength(6)
      expect(body).toHaveLength(8)

      // The huge drift: its diff is cut short and says how much was left out.
      const huge = section(err, documentsModule)
      expect(huge[1]).toBe(`--- committed/${documentsModule}`)
      expect(huge[2]).toBe(`+++ generated/${documentsModule}`)
      expect(huge.length).toBeLessThan(100)
      expect(huge.at(-1)).toMatch(/^\.\.\. \d+ more lines of this diff left out$/)
      // Thousands of lines changed, so thousands are left out.
      expect(Number(/(\d+) more lines/.exec(huge.at(-1)!)![1])).toBeGreaterThan(5_000)
      expect(err.split('\n').length).toBeLessThan(200)

      // --check writes nothing.
      expect(snapshotTree(join(root, 'packages'))).toEqual(before)
    } finally {
      writeFileSync(join(root, errorCodes), original)
      writeFileSync(join(root, documentsModule), documents)
    }
  })

  it('without --check rewrites what drifted, to exactly what the repository has committed', () => {
    rmSync(join(root, errorCodes))
    writeFileSync(join(root, 'spec/docs/stale.mmd'), 'graph TD\n')
    const run = runNode([codegenBin(root)], root)
    expect(run.stderr).toBe('')
    expect(run.stdout).toMatch(/^weft-codegen: \d+ files, 1 written, 1 removed in \d+ ms\n$/)
    expect(run.status).toBe(0)
    for (const dir of GENERATED_DIRS) expect(snapshotTree(join(root, dir)), dir).toEqual(snapshotTree(join(REPO, dir)))
  })
})

/** The lines --check printed for one file: from its status line up to the next status or summary line. */
function section(stderr: string, path: string): string[] {
  const lines = stderr.split('\n')
  const start = lines.findIndex((l) => l === `stale: ${path}`)
  expect(start, `a section for ${path} in\n${stderr}`).toBeGreaterThan(-1)
  const end = lines.findIndex((l, i) => i > start && (/^(stale|missing|extra): /.test(l) || l.startsWith('weft-codegen: ')))
  return lines.slice(start, end)
}
