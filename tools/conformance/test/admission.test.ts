import { describe, expect, it } from 'vitest'
import { bundleForTests } from '@weft/spec/bundle'
import { schemaCheckForKind } from '@weft/validators/signed'
import { main, type CliIo } from '../src/cli.js'
import { PINNED_ADMISSION, admissionJson, formatAdmissionReport, runAdmission } from '../src/admission.js'

const dir = bundleForTests()

describe.skipIf(!dir)('admission suite against the bundle', () => {
  const bundleDir = dir ?? ''

  it('passes 30/30 evaluations with intact manifests and the pinned cryptography digest', async () => {
    const run = await runAdmission(bundleDir)
    const failing = run.results.filter((r) => !r.pass).map((r) => `#${r.index} ${r.id}: ${r.mismatches.join('; ')}`)
    expect(failing).toEqual([])
    expect(run.problems).toEqual([])
    expect(run.ok).toBe(true)
    expect(run.summary).toMatchObject({ total: 30, passed: 30, failed: 0, complete: 12, rejected: 18 })
    expect(run.summary.byStage).toEqual({ complete: { total: 12, passed: 12 }, admission: { total: 18, passed: 18 } })
    expect(run.cryptographyPin).toEqual({ pinned: PINNED_ADMISSION.cryptographyDigest, actual: PINNED_ADMISSION.cryptographyDigest, ok: true })
    expect(run.digest.ok).toBe(true)
    expect(run.artifacts).toHaveLength(19)
    expect(run.artifacts.every((a) => a.ok)).toBe(true)
  })

  it('follows the orchestration: replay never appends, trusted context only after absence', async () => {
    const run = await runAdmission(bundleDir)
    const byId = new Map(run.results.map((r) => [r.id, r]))
    expect(byId.get('first-admission.command')?.calls).toEqual(['lookup', 'trusted-context', 'append'])
    expect(byId.get('first-admission.idempotent-retry')?.calls).toEqual(['lookup'])
    expect(byId.get('historical-record-missing')?.calls).toEqual(['lookup'])
    expect(byId.get('trusted-time-equal-valid-until')?.calls).toEqual(['lookup', 'trusted-context'])
    for (const r of run.results.filter((r) => r.mode === 'historical-replay')) expect(r.calls).toEqual(['lookup'])
    expect(byId.get('event-self-anchoring')?.actualReason).toBe('event-self-anchoring')
    const text = formatAdmissionReport(run)
    expect(text).toMatch(/^ *# \| result \| mode +\| profile +\| expected +\| actual +\| reason +\| evaluation$/m)
    expect(text.trimEnd().split('\n').at(-1)).toBe('admission: 30/30 passed (12 complete, 18 rejected); artifactDigest ok; cryptography pin ok; 19/19 artifacts ok')
    expect(JSON.parse(JSON.stringify(admissionJson(run))).results).toHaveLength(30)
  })

  it('consults the record schema, and re-checks acceptedBy even under a lax one', async () => {
    const strict = await runAdmission(bundleDir, { validate: (kind, value) => kind !== 'first-admission-record' && schemaCheckForKind(kind, value) })
    expect(strict.ok).toBe(false)
    expect(strict.results.filter((r) => r.expectedStage === 'complete').every((r) => !r.pass && r.actualReason === 'record-schema-invalid')).toBe(true)
    const lax = await runAdmission(bundleDir, { validate: (kind, value) => kind === 'first-admission-record' || schemaCheckForKind(kind, value) })
    expect(lax.results.find((r) => r.id === 'accepted-by-non-service')).toMatchObject({ pass: true, actualReason: 'record-schema-invalid' })
  })

  it('runs from the CLI with --suite admission', async () => {
    let stdout = ''
    const io: CliIo = { stdout: (t) => void (stdout += t), stderr: () => undefined }
    expect(await main(['--bundle', bundleDir, '--suite', 'admission'], io)).toBe(0)
    expect(stdout.trimEnd().split('\n').at(-1)).toMatch(/^admission: 30\/30 passed/)
  })
})
