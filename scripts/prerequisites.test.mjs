// The prerequisite check of `npm test`: a machine lacking something is simulated by replacing probes, never by
// uninstalling anything.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { atLeast, checkPrerequisites, systemProbes } from './prerequisites.mjs'

const PINNED = 'f7e70a72c76bbeb5014c186cd820aac2112f0dde'

/** A machine with everything, except what `overrides` says. */
function probes(overrides = {}) {
  return {
    nodeVersion: () => '20.20.0',
    dependencies: () => true,
    bundle: async () => ({ found: true, dir: '/work/shared/protocol', commit: PINNED }),
    chromium: () => true,
    postgres: () => true,
    sqlite: () => undefined,
    ...overrides,
  }
}

const absentBundle = async () => ({ found: false, dir: '/work/shared/protocol', commit: PINNED })

describe('checkPrerequisites', () => {
  it('finds nothing missing on a complete machine', async () => {
    expect(await checkPrerequisites(probes(), { ci: true })).toEqual({ missing: [], notes: [] })
  })

  it('names Chromium with its Debian package', async () => {
    const { missing } = await checkPrerequisites(probes({ chromium: () => false }), { ci: false })
    expect(missing).toEqual([expect.stringMatching(/^missing: Chromium at \/usr\/bin\/chromium .*: apt-get install -y chromium$/)])
  })

  it('names the PostgreSQL server binaries with their Debian package', async () => {
    const { missing } = await checkPrerequisites(probes({ postgres: () => false }), { ci: false })
    expect(missing).toEqual([expect.stringMatching(/^missing: PostgreSQL server binaries .*: apt-get install -y postgresql$/)])
  })

  it('names a broken better-sqlite3 build with the tool chain and the rebuild', async () => {
    const { missing } = await checkPrerequisites(probes({ sqlite: () => 'Could not locate the bindings file. Tried:\n → /x/build/better_sqlite3.node' }), { ci: false })
    expect(missing).toEqual(['missing: a working better-sqlite3 native build (Could not locate the bindings file. Tried:): apt-get install -y build-essential python3 && npm rebuild better-sqlite3'])
  })

  it('names an old Node', async () => {
    const { missing } = await checkPrerequisites(probes({ nodeVersion: () => '20.18.1' }), { ci: false })
    expect(missing).toEqual([expect.stringMatching(/^missing: Node\.js 20\.19 or later \(this is 20\.18\.1\)/)])
  })

  it('fails on a missing bundle under CI=true, with the pinned commit to fetch', async () => {
    const { missing, notes } = await checkPrerequisites(probes({ bundle: absentBundle }), { ci: true })
    expect(notes).toEqual([])
    expect(missing).toHaveLength(1)
    expect(missing[0]).toMatch(/^missing: the protocol bundle at \/work\/shared\/protocol /)
    expect(missing[0]).toContain(`git -C /work/shared/protocol checkout ${PINNED}`)
  })

  it('only notes a missing bundle outside CI, where its tests skip, with the pinned commit to fetch', async () => {
    const { missing, notes } = await checkPrerequisites(probes({ bundle: absentBundle }), { ci: false })
    expect(missing).toEqual([])
    expect(notes).toHaveLength(1)
    expect(notes[0]).toMatch(/^note: no protocol bundle at \/work\/shared\/protocol, so the bundle tests will skip/)
    expect(notes[0]).toContain(`checkout ${PINNED}`)
  })

  it('lists every missing thing at once, one line each', async () => {
    const { missing } = await checkPrerequisites(probes({ chromium: () => false, postgres: () => false, sqlite: () => 'boom', bundle: absentBundle }), { ci: true })
    expect(missing).toEqual([
      expect.stringMatching(/^missing: Chromium /),
      expect.stringMatching(/^missing: PostgreSQL /),
      expect.stringMatching(/^missing: a working better-sqlite3 /),
      expect.stringMatching(/^missing: the protocol bundle /),
    ])
    for (const line of missing) expect(line).not.toContain('\n')
  })

  it('asks for npm ci alone when the dependencies are missing, without probing what they provide', async () => {
    const untouchable = () => {
      throw new Error('probed a package that is not installed')
    }
    const result = await checkPrerequisites(probes({ dependencies: () => false, sqlite: untouchable, bundle: untouchable }), { ci: true })
    expect(result).toEqual({ missing: ['missing: the npm dependencies (node_modules): npm ci'], notes: [] })
  })
})

describe('atLeast', () => {
  it('compares versions numerically', () => {
    expect(atLeast('20.19.0', '20.19')).toBe(true)
    expect(atLeast('v20.20.0', '20.19')).toBe(true)
    expect(atLeast('22.1.0', '20.19')).toBe(true)
    expect(atLeast('20.18.3', '20.19')).toBe(false)
    expect(atLeast('20.9.0', '20.19')).toBe(false)
    expect(atLeast('18.20.0', '20.19')).toBe(false)
  })
})

describe('systemProbes', () => {
  const root = join(import.meta.dirname, '..')
  const saved = { MWP_PROTOCOL_DIR: process.env['MWP_PROTOCOL_DIR'], WEFT_PG_URL: process.env['WEFT_PG_URL'] }
  const dirs = []
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  it('looks for the bundle where the tests do, and reports the pinned commit of @weft/spec', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'weft-no-bundle-'))
    dirs.push(empty)
    process.env['MWP_PROTOCOL_DIR'] = empty
    expect(await systemProbes(root).bundle()).toEqual({ found: false, dir: empty, commit: PINNED })

    // the shape the tests accept: conformance/manifest.json and schemas/
    mkdirSync(join(empty, 'conformance'))
    mkdirSync(join(empty, 'schemas'))
    writeFileSync(join(empty, 'conformance', 'manifest.json'), '{}')
    expect((await systemProbes(root).bundle()).found).toBe(true)
  })

  it('accepts a given PostgreSQL URL in place of local server binaries', () => {
    process.env['WEFT_PG_URL'] = 'postgres://weft@db.invalid/weft'
    expect(systemProbes(root).postgres()).toBe(true)
  })

  it('reports why better-sqlite3 cannot load where it is not installed', () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'weft-no-sqlite-'))
    dirs.push(elsewhere)
    expect(systemProbes(elsewhere).sqlite()).toMatch(/Cannot find module 'better-sqlite3'/)
  })

  it('finds no dependencies in a folder where npm ci never ran', () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'weft-no-modules-'))
    dirs.push(elsewhere)
    expect(systemProbes(elsewhere).dependencies()).toBe(false)
  })
})
