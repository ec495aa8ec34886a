// The emitted JSON Schemas (packages/validators/schemas/) against the normative ones: any
// difference other than annotations fails, unless `schema-differences.json` lists it with a
// reason; a listed difference that no longer occurs fails too, so the table cannot go stale.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { bundleForTests } from '@weft/spec/bundle'
import { compareSchemas } from '@weft/spec'
import { describe, expect, it } from 'vitest'

interface AllowedDifference {
  readonly file: string
  readonly difference: string
  readonly reason: string
}

const dir = bundleForTests()
const emittedDir = join(import.meta.dirname, '..', 'schemas')
const allowed = JSON.parse(readFileSync(join(import.meta.dirname, 'schema-differences.json'), 'utf8')) as AllowedDifference[]

describe.skipIf(!dir)('emitted schemas equal the normative schemas', () => {
  const normativeFiles = dir
    ? readdirSync(join(dir, 'schemas'))
        .filter((f) => f.endsWith('.schema.json'))
        .sort()
    : []

  it('cover the same 22 files', () => {
    expect(normativeFiles).toHaveLength(22)
    expect(
      readdirSync(emittedDir)
        .filter((f) => f.endsWith('.schema.json'))
        .sort(),
    ).toEqual(normativeFiles)
  })

  it.each(normativeFiles)('%s differs only in annotations or listed differences', (file) => {
    const ours = JSON.parse(readFileSync(join(emittedDir, file), 'utf8')) as unknown
    const normative = JSON.parse(readFileSync(join(dir!, 'schemas', file), 'utf8')) as unknown
    const differences = compareSchemas(ours, normative)
    const listed = allowed.filter((a) => a.file === file)
    expect(differences.filter((d) => !listed.some((a) => a.difference === d))).toEqual([])
    expect(listed.filter((a) => !differences.includes(a.difference)).map((a) => `stale entry: ${a.difference}`)).toEqual([])
  })

  it('every listed difference has a reason', () => {
    for (const a of allowed) expect(a.reason.trim().length).toBeGreaterThan(10)
  })
})
