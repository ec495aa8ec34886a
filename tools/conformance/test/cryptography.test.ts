import { beforeAll, describe, expect, it } from 'vitest'
import { bundleForTests } from '@weft/spec/bundle'
import { schemaCheckForKind } from '@weft/validators/signed'
import { main, type CliIo } from '../src/cli.js'
import { PINNED_CRYPTOGRAPHY, cryptographyJson, formatCryptographyReport, runCryptography, type CryptographyRun } from '../src/cryptography.js'

const dir = bundleForTests()

describe.skipIf(!dir)('cryptography suite against the bundle', () => {
  const bundleDir = dir ?? ''
  let run: CryptographyRun
  beforeAll(() => {
    run = runCryptography(bundleDir)
  })

  it('passes 62/62 evaluations with an intact manifest', () => {
    const failing = run.results.filter((r) => !r.pass).map((r) => `#${r.index} ${r.caseId} ${r.name}: ${r.mismatches.join('; ')}`)
    expect(failing).toEqual([])
    expect(run.problems).toEqual([])
    expect(run.ok).toBe(true)
    expect(run.summary).toMatchObject({ total: 62, passed: 62, failed: 0, complete: 12, rejected: 50 })
    expect(run.digest).toEqual({ declared: PINNED_CRYPTOGRAPHY.artifactDigest, computed: PINNED_CRYPTOGRAPHY.artifactDigest, ok: true })
    expect(run.artifacts.length).toBeGreaterThan(0)
    expect(run.artifacts.every((a) => a.ok)).toBe(true)
  })

  it('reports per stage', () => {
    expect(run.summary.byStage).toEqual({
      parse: { total: 4, passed: 4 },
      schema: { total: 5, passed: 5 },
      'signature-envelope': { total: 11, passed: 11 },
      'key-resolution': { total: 24, passed: 24 },
      canonicalization: { total: 2, passed: 2 },
      signature: { total: 4, passed: 4 },
      complete: { total: 12, passed: 12 },
    })
    const text = formatCryptographyReport(run)
    expect(text).toMatch(/^ *# \| result \| profile +\| expected +\| actual +\| wire code +\| evaluation$/m)
    expect(text).toMatch(/^key-resolution +\| +24 \| +24$/m)
    expect(text.trimEnd().split('\n').at(-1)).toBe(`cryptography: 62/62 passed (12 complete, 50 rejected); artifactDigest ok; ${run.artifacts.length}/${run.artifacts.length} artifacts ok`)
    const json = JSON.parse(JSON.stringify(cryptographyJson(run))) as { results: { actualStage: string; diagnostic?: string }[] }
    expect(json.results).toHaveLength(62)
    expect(json.results.filter((r) => r.actualStage !== 'complete').every((r) => typeof r.diagnostic === 'string')).toBe(true)
  })

  it('gives the same results with strict stage order', () => {
    const strict = runCryptography(bundleDir, { strictStageOrder: true })
    expect(strict.ok).toBe(true)
    expect(strict.results.map((r) => [r.actualStage, r.diagnostic])).toEqual(run.results.map((r) => [r.actualStage, r.diagnostic]))
  })

  it('notices a schema check that accepts everything, and a changed pin', () => {
    const lax = runCryptography(bundleDir, { validate: () => true })
    expect(lax.ok).toBe(false)
    // Timestamp-profile and padded-base64url faults are still caught by the codec's own re-checks
    // or later stages, but no longer at stage 2.
    expect(lax.results.filter((r) => !r.pass).every((r) => r.expectedStage === 'schema')).toBe(true)
    const repinned = runCryptography(bundleDir, { validate: schemaCheckForKind, pinned: { ...PINNED_CRYPTOGRAPHY, artifactDigest: `sha256:${'0'.repeat(64)}`, evaluations: 61 } })
    expect(repinned.ok).toBe(false)
    expect(repinned.problems).toHaveLength(2)
  })

  it('runs from the CLI with --suite cryptography', async () => {
    let stdout = ''
    const io: CliIo = { stdout: (t) => void (stdout += t), stderr: () => undefined }
    expect(await main(['--bundle', bundleDir, '--suite', 'cryptography', '--json'], io)).toBe(0)
    const report = JSON.parse(stdout) as { ok: boolean; suites: { suite: string; summary: { passed: number } }[] }
    expect(report.suites.map((s) => [s.suite, s.summary.passed])).toEqual([['cryptography', 62]])
  })
})
