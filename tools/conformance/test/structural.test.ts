import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { validatorForFile } from '@weft/validators'
import { afterEach, describe, expect, it } from 'vitest'
import { bundleForTests } from '../src/bundle.js'
import { formatStructuralReport, structuralSummaryLine } from '../src/report.js'
import { bundleSchemaFiles, loadExpectedFailures, readManifest, runStructural, unmappedSchemas, type StructuralValidator } from '../src/structural.js'

const dir = bundleForTests()

/** A bundle copy with only what the structural suite reads, and the manifest rewritten. */
function tamperedBundle(bundleDir: string, edit: (manifest: ReturnType<typeof readManifest>) => unknown): string {
  const copy = mkdtempSync(join(tmpdir(), 'weft-conformance-'))
  cpSync(join(bundleDir, 'schemas'), join(copy, 'schemas'), { recursive: true })
  cpSync(join(bundleDir, 'conformance'), join(copy, 'conformance'), { recursive: true })
  const manifest = readManifest(bundleDir)
  writeFileSync(join(copy, 'conformance', 'manifest.json'), JSON.stringify(edit(manifest), null, 2))
  return copy
}

const temporary: string[] = []
afterEach(() => {
  for (const d of temporary.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('expected-failures.json', () => {
  it('is a list of { name, reason }', () => {
    const list = loadExpectedFailures()
    expect(Array.isArray(list)).toBe(true)
    for (const entry of list) expect(entry.reason.trim()).not.toBe('')
  })
})

describe.skipIf(!dir)('structural suite against the bundle', () => {
  const bundleDir = dir ?? ''

  it('passes all 58 vectors (27 valid, 31 invalid) with no known failure', () => {
    const run = runStructural(bundleDir, { expectedFailures: [] })
    const failures = run.results.filter((r) => !r.pass).map((r) => `${r.name}: ${r.actual} (${r.firstError ?? ''})`)
    expect(failures).toEqual([])
    expect(run.problems).toEqual([])
    expect(run.ok).toBe(true)
    expect(run.summary).toEqual({ total: 58, passed: 58, failed: 0, expectedFailures: 0, valid: 27, invalid: 31 })
    expect(structuralSummaryLine(run)).toBe('structural: 58/58 passed (27 valid, 31 invalid)')
  })

  it('passes with the committed expected-failures list, which lists only failing vectors', () => {
    const run = runStructural(bundleDir)
    expect(run.problems).toEqual([])
    expect(run.ok).toBe(true)
  })

  it('gives the first reason for every invalid vector', () => {
    const run = runStructural(bundleDir, { expectedFailures: [] })
    for (const r of run.results.filter((x) => x.expected === 'invalid')) {
      expect(r.firstError, r.name).toMatch(/\S/)
    }
    for (const r of run.results.filter((x) => x.expected === 'valid')) expect(r.firstError, r.name).toBeUndefined()
  })

  it('fails when a vector of the manifest is flipped, naming it and the count mismatch', () => {
    const copy = tamperedBundle(bundleDir, (manifest) => manifest.map((v, i) => (i === 0 ? { ...v, valid: !v.valid } : v)))
    temporary.push(copy)
    const flipped = readManifest(bundleDir)[0]
    const run = runStructural(copy, { expectedFailures: [] })
    expect(run.ok).toBe(false)
    expect(run.summary.failed).toBe(1)
    const failure = run.results.find((r) => !r.pass)
    expect(failure?.name).toBe(flipped?.name)
    expect(failure?.firstError).toMatch(/accepted/)
    expect(run.problems.some((p) => p.includes('manifest has 58 vectors (26 valid, 32 invalid)'))).toBe(true)
    expect(formatStructuralReport(run)).toMatch(/^ *1 \| FAIL /m)
  })

  it('reports a manifest with a vector missing', () => {
    const copy = tamperedBundle(bundleDir, (manifest) => manifest.slice(1))
    temporary.push(copy)
    const run = runStructural(copy, { expectedFailures: [] })
    expect(run.summary.failed).toBe(0)
    expect(run.ok).toBe(false)
    expect(run.problems).toEqual([expect.stringContaining('manifest has 57 vectors')])
  })

  it('fails the run when a listed expected failure now passes', () => {
    const name = readManifest(bundleDir)[0]?.name ?? ''
    const run = runStructural(bundleDir, { expectedFailures: [{ name, reason: 'was broken once' }] })
    expect(run.ok).toBe(false)
    expect(run.summary.passed).toBe(58)
    expect(run.problems).toEqual([expect.stringContaining('remove it from expected-failures')])
    expect(run.problems[0]).toContain(name)
  })

  it('fails the run when a listed expected failure names no vector', () => {
    const run = runStructural(bundleDir, { expectedFailures: [{ name: 'no such vector', reason: 'typo' }] })
    expect(run.ok).toBe(false)
    expect(run.problems).toEqual([expect.stringContaining('"no such vector" names no vector')])
  })

  it('counts a listed failure as expected (XFAIL) and an unlisted one as a failure', () => {
    // A validator that accepts everything for work items: the invalid work-item vectors fail.
    const broken = (file: string): StructuralValidator | undefined => (file === 'work-item.schema.json' ? { check: () => true, errors: () => [] } : validatorForFile(file))
    const workItemInvalid = readManifest(bundleDir).filter((v) => v.schema.endsWith('/work-item.schema.json') && !v.valid)
    expect(workItemInvalid.length).toBeGreaterThanOrEqual(2)
    const [listed, unlisted] = workItemInvalid

    const run = runStructural(bundleDir, {
      validatorForFile: broken,
      expectedFailures: [{ name: listed?.name ?? '', reason: 'test: work items accept anything' }],
    })
    const byName = new Map(run.results.map((r) => [r.name, r]))
    expect(byName.get(listed?.name ?? '')?.expectedFailure).toBe('test: work items accept anything')
    expect(byName.get(unlisted?.name ?? '')?.pass).toBe(false)
    expect(run.summary.expectedFailures).toBe(1)
    expect(run.summary.failed).toBe(workItemInvalid.length - 1)
    expect(run.ok).toBe(false)
    const report = formatStructuralReport(run)
    expect(report).toContain('XFAIL')
    expect(report).toContain('(expected failure: test: work items accept anything)')

    const allListed = runStructural(bundleDir, {
      validatorForFile: broken,
      expectedFailures: workItemInvalid.map((v) => ({ name: v.name, reason: 'test' })),
    })
    expect(allListed.ok).toBe(true)
    expect(structuralSummaryLine(allListed)).toBe(`structural: ${58 - workItemInvalid.length}/58 passed (27 valid, 31 invalid); ${workItemInvalid.length} expected failures`)
  })

  it('validates vectors of the definitions-only common.schema.json: any JSON value is valid at its root', () => {
    // §21: common.schema.json holds only `$defs`, so its root accepts every JSON value.
    const instances: readonly unknown[] = [{}, { any: ['member'] }, [], 42, -0.5, 'text', true, null]
    const copy = tamperedBundle(bundleDir, (manifest) => [
      ...manifest,
      ...instances.map((_, i) => ({
        name: `common root accepts instance ${i}`,
        schema: 'schemas/common.schema.json',
        instance: `conformance/vectors/valid/weft-common-${i}.json`,
        valid: true,
      })),
    ])
    temporary.push(copy)
    instances.forEach((instance, i) => {
      writeFileSync(join(copy, 'conformance', 'vectors', 'valid', `weft-common-${i}.json`), JSON.stringify(instance))
    })
    const run = runStructural(copy, {
      expectedFailures: [],
      expectedCounts: { total: 58 + instances.length, valid: 27 + instances.length, invalid: 31 },
    })
    const common = run.results.filter((r) => r.schema === 'schemas/common.schema.json')
    expect(common.map((r) => `${r.name}: ${r.actual}${r.firstError === undefined ? '' : ` (${r.firstError})`}`)).toEqual(instances.map((_, i) => `common root accepts instance ${i}: valid`))
    expect(run.problems).toEqual([])
    expect(run.ok).toBe(true)
  })

  it('has a runner path for every schemas/*.schema.json of the bundle, definitions-only ones included', () => {
    const files = readdirSync(join(bundleDir, 'schemas'))
      .filter((f) => f.endsWith('.schema.json'))
      .sort()
    expect(files).toHaveLength(22)
    expect(files).toContain('common.schema.json')
    expect(bundleSchemaFiles(bundleDir)).toEqual(files)
    expect(unmappedSchemas(bundleDir)).toEqual([])
    for (const file of files) expect(validatorForFile(file)?.file, file).toBe(file)
    // One vector per schema file, through the runner itself: each gets a verdict, never an error.
    const copy = tamperedBundle(bundleDir, () => files.map((file) => ({ name: file, schema: `schemas/${file}`, instance: 'conformance/vectors/valid/command.json', valid: true })))
    temporary.push(copy)
    const run = runStructural(copy, { expectedFailures: [], expectedCounts: { total: files.length, valid: files.length, invalid: 0 } })
    expect(run.results.filter((r) => r.actual === 'error').map((r) => `${r.name}: ${r.firstError ?? ''}`)).toEqual([])
    expect(run.results.find((r) => r.name === 'common.schema.json')?.actual).toBe('valid')
  })

  it('fails the run, naming the file, when a bundle schema no vector uses has no validator', () => {
    const lookup = (file: string): StructuralValidator | undefined => (file === 'common.schema.json' ? undefined : validatorForFile(file))
    const message = 'no Weft validator for bundle schema schemas/common.schema.json: every schema file of the bundle needs one'
    expect(unmappedSchemas(bundleDir, lookup)).toEqual([message])
    const run = runStructural(bundleDir, { expectedFailures: [], validatorForFile: lookup })
    expect(run.summary.passed).toBe(58)
    expect(run.problems).toEqual([message])
    expect(run.ok).toBe(false)
    expect(formatStructuralReport(run)).toContain(`problem: ${message}`)
  })

  it('marks a vector whose schema has no validator as an error', () => {
    const run = runStructural(bundleDir, {
      expectedFailures: [],
      validatorForFile: (file) => (file === 'lease.schema.json' ? undefined : validatorForFile(file)),
    })
    const lease = run.results.filter((r) => r.schema.endsWith('/lease.schema.json'))
    expect(lease.length).toBeGreaterThan(0)
    for (const r of lease) {
      expect(r.actual).toBe('error')
      expect(r.firstError).toBe('no Weft validator for lease.schema.json')
    }
    expect(run.ok).toBe(false)
  })
})
