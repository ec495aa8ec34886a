/**
 * Differential tests, random pass: the generated validators against Ajv (the invariant and the
 * mutations are described in `differential-harness.ts`). Per schema, fast-check chains of one to
 * four random mutations of the valid vectors. A schema file no vector names (the definitions-only
 * `common.schema.json`) is judged instead on every vector of the manifest and on random JSON
 * values. The deterministic pass is `differential-exhaustive.test.ts`.
 * `WEFT_FUZZ_RUNS` sets the runs per schema (default 2000), `WEFT_FUZZ_SEED` the seed (fixed by
 * default, so a run is reproducible); `npm run fuzz` runs this file at 10000 per schema.
 */
import { bundleForTests } from '@weft/spec/bundle'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loadDifferential, type Mutation, mutate, NUMBERS, type Op, OTHER_TYPES, show, STRING_TRANSFORMS, UNKNOWN_KEYS } from './differential-harness.js'

const DEFAULT_SEED = 20_260_731
const RUNS = positiveInteger(process.env['WEFT_FUZZ_RUNS'], 2000, 'WEFT_FUZZ_RUNS')
const SEED = integer(process.env['WEFT_FUZZ_SEED'], DEFAULT_SEED, 'WEFT_FUZZ_SEED')

function integer(text: string | undefined, fallback: number, name: string): number {
  if (text === undefined || text.trim() === '') return fallback
  const n = Number(text)
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got ${JSON.stringify(text)}`)
  return n
}

function positiveInteger(text: string | undefined, fallback: number, name: string): number {
  const n = integer(text, fallback, name)
  if (n < 1) throw new Error(`${name} must be at least 1, got ${n}`)
  return n
}

const dir = bundleForTests()

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ op: 'drop' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('addUnknown' as const),
      key: fc.constantFrom(...UNKNOWN_KEYS),
      value: fc.constantFrom(...OTHER_TYPES),
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('retype' as const), value: fc.constantFrom(...OTHER_TYPES) }) },
  {
    weight: 8,
    arbitrary: fc.record({
      op: fc.constant('string' as const),
      transform: fc.nat({ max: STRING_TRANSFORMS.length - 1 }),
      bound: fc.nat(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('randomString' as const),
      value: fc.oneof(
        fc.string(),
        fc.string({ unit: 'binary', maxLength: 20 }),
        fc.webUrl(),
        fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('number' as const),
      value: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...NUMBERS) }, { weight: 1, arbitrary: fc.integer() }, { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) }),
      anywhere: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('duplicate' as const), item: fc.nat(), reorder: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('enum' as const), own: fc.boolean(), pick: fc.nat() }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('transplantValue' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('transplantMember' as const), pick: fc.nat() }) },
)

const mutationsArbitrary: fc.Arbitrary<Mutation[]> = fc.array(fc.record({ at: fc.nat(), change: opArbitrary }), {
  minLength: 1,
  maxLength: 4,
})

// ---------------------------------------------------------------------------------------------

describe.skipIf(!dir)('generated validators agree with Ajv on the normative schemas', () => {
  const { vectors, reference, corpus, files, disagreement } = loadDifferential(dir ?? '')

  it.each(files)(
    `%s: random mutation chains get the same verdict (${RUNS} runs, seed ${SEED})`,
    (file) => {
      const seeds = corpus.seeds.get(file) ?? []
      const property = fc.property(fc.nat({ max: seeds.length - 1 }), mutationsArbitrary, (seedIndex, mutations) => {
        const { doc, log } = mutate(corpus, seeds[seedIndex], mutations)
        const d = disagreement(file, doc)
        if (d !== undefined) {
          throw new Error(`${file}, seed vector #${seedIndex}, ${log.join('; ')}:\n${d.report}\n  document: ${show(doc)}`)
        }
      })
      try {
        fc.assert(property, { numRuns: RUNS, seed: SEED })
      } catch (error) {
        const message = `differential test of ${file} failed; reproduce with WEFT_FUZZ_SEED=${SEED} WEFT_FUZZ_RUNS=${RUNS}`
        console.error(message)
        throw new Error(`${message}\n${(error as Error).message}`, { cause: error })
      }
    },
    Math.max(60_000, RUNS * 60),
  )

  // Schema files no manifest vector names, such as the definitions-only common.schema.json (§21):
  // no seed to mutate, so both sides judge every vector of the manifest and random JSON values.
  const unseeded = [...reference.keys()].filter((file) => !corpus.seeds.has(file)).sort()

  it('fuzzes the schema files no vector names: common.schema.json', () => {
    expect(unseeded).toEqual(['common.schema.json'])
  })

  it.each(unseeded)(`%s: every vector and random JSON values get the same verdict (${RUNS} runs, seed ${SEED})`, (file) => {
    for (const v of vectors) expect(disagreement(file, v.instance)?.report, v.name).toBeUndefined()
    const property = fc.property(fc.jsonValue(), (doc) => {
      const d = disagreement(file, doc)
      if (d !== undefined) throw new Error(`${file}:\n${d.report}\n  document: ${show(doc)}`)
    })
    fc.assert(property, { numRuns: RUNS, seed: SEED })
  })
})
