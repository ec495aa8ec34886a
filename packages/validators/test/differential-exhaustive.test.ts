/**
 * Differential tests, deterministic pass: the generated validators against Ajv (the invariant and
 * the mutations are described in `differential-harness.ts`). Every single mutation of every valid
 * vector is judged, exhaustively, and all disagreements are listed; the manifest vectors are
 * judged as they are. The random pass is `differential.test.ts`.
 */
import { bundleForTests } from '@weft/spec/bundle'
import { validatorForFile, validators } from '@weft/validators'
import { describe, expect, it } from 'vitest'
import {
  candidates,
  clone,
  type Corpus,
  donorValues,
  enumValues,
  loadDifferential,
  type Mutation,
  mutate,
  NUMBERS,
  type Op,
  OTHER_TYPES,
  show,
  STRING_TRANSFORMS,
  UNKNOWN_KEYS,
} from './differential-harness.js'

const dir = bundleForTests()

/**
 * Every single mutation of a document: each applicable location with each change of a closed
 * list (every string transform at every length bound, every number, every other-typed value,
 * every unknown key, every enum value and donor value of the location's name). Random changes
 * (`randomString`, arbitrary numbers) are left to the fuzzer; members from other vectors are
 * sampled (`memberStride`) since there are hundreds.
 */
function singleMutations(corpus: Corpus, doc: unknown, memberStride: number): Mutation[] {
  const out: Mutation[] = []
  const holder = { root: doc }
  const changes: Op[] = [
    { op: 'drop' },
    ...UNKNOWN_KEYS.map((key): Op => ({ op: 'addUnknown', key, value: 1 })),
    ...OTHER_TYPES.map((value): Op => ({ op: 'retype', value })),
    ...STRING_TRANSFORMS.flatMap(([, target], transform): Op[] =>
      target === 'length' ? corpus.lengthBounds.map((_, bound): Op => ({ op: 'string', transform, bound })) : [{ op: 'string', transform, bound: 0 }],
    ),
    ...NUMBERS.map((value): Op => ({ op: 'number', value, anywhere: false })),
    { op: 'duplicate', item: 0, reorder: false },
    { op: 'duplicate', item: 0, reorder: true },
  ]
  for (const change of changes) {
    candidates(holder, change).forEach((_, at) => out.push({ at, change }))
  }
  for (const [at, l] of candidates(holder, { op: 'enum', own: true, pick: 0 }).entries()) {
    enumValues(corpus, l, true).forEach((_, p) => out.push({ at, change: { op: 'enum', own: true, pick: p } }))
  }
  for (const [at, l] of candidates(holder, { op: 'transplantValue', pick: 0 }).entries()) {
    donorValues(corpus, l).forEach((_, p) => out.push({ at, change: { op: 'transplantValue', pick: p } }))
  }
  candidates(holder, { op: 'transplantMember', pick: 0 }).forEach((_, at) => {
    for (let p = at % memberStride; p < corpus.members.length; p += memberStride) {
      out.push({ at, change: { op: 'transplantMember', pick: p } })
    }
  })
  return out
}

// ---------------------------------------------------------------------------------------------

describe.skipIf(!dir)('generated validators agree with Ajv on the normative schemas', () => {
  const { vectors, reference, corpus, files, disagreement } = loadDifferential(dir ?? '')

  it('has a Weft validator for every schema file, and Ajv compiles all 22 files', () => {
    expect(reference.size).toBe(22)
    for (const file of reference.keys()) {
      const v = validatorForFile(file)
      expect(v, file).toBeDefined()
      expect(Object.values(validators)).toContain(v)
    }
  })

  it.each(vectors.map((v) => [v.name, v] as const))('manifest vector: %s', (_name, v) => {
    // The reference must itself get the manifest right, or the differential proves nothing.
    expect(reference.get(v.file)?.(v.instance), 'Ajv verdict vs manifest').toBe(v.valid)
    expect(disagreement(v.file, v.instance)?.report).toBeUndefined()
  })

  it.each(files)(
    '%s: every single mutation of every valid vector gets the same verdict',
    (file) => {
      const found: string[] = []
      let total = 0
      let accepted = 0
      for (const [index, seed] of (corpus.seeds.get(file) ?? []).entries()) {
        for (const mutation of singleMutations(corpus, clone(seed), 7)) {
          const { doc, log } = mutate(corpus, seed, [mutation])
          total++
          const d = disagreement(file, doc)
          if (d === undefined) {
            if (validatorForFile(file)?.check(doc) === true) accepted++
            continue
          }
          found.push(`seed #${index}, ${log.join('; ')}: ${d.report}\n  document: ${show(doc)}`)
        }
      }
      expect(found.length === 0 ? [] : [`${found.length} of ${total} documents disagree; first ones:`, ...found.slice(0, 10)]).toEqual([])
      // Both sides of the schema must be reached, or agreement would be trivial.
      expect(accepted, 'documents accepted').toBeGreaterThan(0)
      expect(total - accepted, 'documents rejected').toBeGreaterThan(0)
    },
    120_000,
  )
})
