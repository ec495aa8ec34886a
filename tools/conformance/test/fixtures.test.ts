// The hand-written fixture checks of src/fixtures.ts against Ajv compiled from the bundle's own
// fixture schemas (Ajv is a test-time dependency only; the tool never loads it). As in the
// validators' differential tests, `uri` is the §2 rule of @weft/codec on both sides.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isAbsoluteUri } from '@weft/codec'
import Ajv2020Import from 'ajv/dist/2020.js'
import { beforeAll, describe, expect, it } from 'vitest'
import { bundleForTests } from '@weft/spec/bundle'
import { registryFixtureIssues, signingKeyFixtureIssues } from '../src/fixtures.js'

// Ajv is CommonJS: take the class whichever way the loader hands it over.
type Ajv2020Class = typeof Ajv2020Import.default
const Ajv2020: Ajv2020Class = (Ajv2020Import as unknown as { default?: Ajv2020Class }).default ?? (Ajv2020Import as unknown as Ajv2020Class)

const dir = bundleForTests()

type Mutation = (value: Record<string, unknown>) => unknown

const registryMutations: Mutation[] = [
  (v) => ({ ...v, extra: 1 }),
  (v) => ({ ...v, organizationId: '' }),
  (v) => ({ ...v, organizationId: 'x'.repeat(513) }),
  (v) => ({ ...v, organizationId: '😀'.repeat(512) }),
  (v) => ({ ...v, bindings: [] }),
  (v) => ({ ...v, bindings: 'none' }),
  (v) => ({ organizationId: v['organizationId'] }),
  (v) => ({ ...v, bindings: [{ ...(v['bindings'] as object[])[0], principal: { type: 'robot', id: 'x' } }] }),
  (v) => ({ ...v, bindings: [{ ...(v['bindings'] as object[])[0], algorithm: '' }] }),
  (v) => ({ ...v, bindings: [{ ...(v['bindings'] as object[])[0], validityHistory: [{ sequence: 0, recordedAt: 'x' }] }] }),
  (v) => ({ ...v, bindings: [{ ...(v['bindings'] as object[])[0], validityHistory: [{ sequence: 1.5, recordedAt: 'x' }] }] }),
  (v) => ({ ...v, bindings: [{ ...(v['bindings'] as object[])[0], validityHistory: [{ sequence: 2.0, recordedAt: 'x', note: 1 }] }] }),
  (v) => ({ ...v, bindings: [{ ...(v['bindings'] as object[])[0], validityHistory: [{ sequence: 1, recordedAt: 'x', revokedAt: '' }] }] }),
  (v) => ({ ...v, bindings: [{ ...(v['bindings'] as object[])[0], publicKey: 7 }] }),
  (v) => ({ ...v, bindings: Array.from({ length: 65 }, () => (v['bindings'] as object[])[0]) }),
  () => [],
  () => null,
]

const keyMutations: Mutation[] = [
  (v) => ({ ...v, testOnly: false }),
  (v) => ({ ...v, keyId: 'relative' }),
  (v) => ({ ...v, keyId: `${String(v['keyId'])}\n` }),
  (v) => ({ ...v, keyId: 'urn:a b' }),
  (v) => ({ ...v, keyId: `urn:${'x'.repeat(510)}` }),
  (v) => ({ ...v, algorithm: 'Ed448' }),
  (v) => ({ ...v, seed: String(v['seed']).slice(1) }),
  (v) => ({ ...v, publicKey: `${String(v['publicKey']).slice(1)}=` }),
  (v) => ({ ...v, extra: true }),
  () => ({ testOnly: true }),
]

describe.skipIf(!dir)('fixture structure checks agree with the bundle schemas', () => {
  const bundleDir = dir ?? ''
  const load = (path: string) => JSON.parse(readFileSync(join(bundleDir, path), 'utf8')) as Record<string, unknown>
  let registrySchema: (value: unknown) => boolean
  let keySchema: (value: unknown) => boolean
  let registries: string[]
  let signingKeys: string[]
  beforeAll(() => {
    const ajv = new Ajv2020({ allErrors: true, strict: false })
    ajv.addFormat('uri', { type: 'string', validate: isAbsoluteUri })
    registrySchema = ajv.compile(load('cryptography/registry-fixture.schema.json'))
    keySchema = ajv.compile(load('cryptography/signing-key-fixture.schema.json'))
    registries = [
      ...readdirSync(join(bundleDir, 'cryptography/keys'))
        .filter((f) => f.startsWith('registry-'))
        .map((f) => `cryptography/keys/${f}`),
      ...readdirSync(join(bundleDir, 'admission/registries')).map((f) => `admission/registries/${f}`),
    ]
    signingKeys = readdirSync(join(bundleDir, 'cryptography/keys'))
      .filter((f) => f.startsWith('signing-'))
      .map((f) => `cryptography/keys/${f}`)
  })

  it('every bundle fixture is valid under both', () => {
    expect(registries.length).toBeGreaterThan(20)
    for (const path of registries) expect([path, registryFixtureIssues(load(path))]).toEqual([path, []])
    for (const path of registries) expect([path, registrySchema(load(path))]).toEqual([path, true])
    for (const path of signingKeys) expect([path, signingKeyFixtureIssues(load(path)), keySchema(load(path))]).toEqual([path, [], true])
  })

  it('mutated fixtures get the same verdict from both', () => {
    for (const path of registries) {
      for (const [i, mutate] of registryMutations.entries()) {
        const value = mutate(load(path))
        expect([path, i, registryFixtureIssues(value).length === 0]).toEqual([path, i, registrySchema(value)])
      }
    }
    for (const path of signingKeys) {
      for (const [i, mutate] of keyMutations.entries()) {
        const value = mutate(load(path))
        expect([path, i, signingKeyFixtureIssues(value).length === 0]).toEqual([path, i, keySchema(value)])
      }
    }
  })
})
