/**
 * Every normative schema of the bundle (§21) must equal the JSON Schema Weft emits from its TypeBox
 * definition, up to annotations and the order of `required` (see `compareSchemas`).
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { bundleForTests, readBundleJson } from '../src/bundle.js'
import { describe, expect, it } from 'vitest'
import { type DocumentName, documents } from '../src/documents/index.js'
import { compareSchemas, documentId, SCHEMA_DIALECT, toJsonSchema } from '../src/schema.js'

const bundle = bundleForTests()

/** The document names in §21 order; typed so that a misspelt name fails to compile. */
const expectedNames: readonly DocumentName[] = [
  'common',
  'websocketFrame',
  'command',
  'event',
  'agentCard',
  'presenceRecord',
  'mission',
  'group',
  'membership',
  'conversation',
  'message',
  'workContract',
  'workItem',
  'artifact',
  'evidence',
  'lease',
  'approval',
  'contextPackage',
  'groupSnapshot',
  'extensionProfile',
  'firstAdmissionRecord',
  'error',
]

describe('document list', () => {
  it('holds exactly the 22 documents of §21, in order, with distinct files', () => {
    expect(documents).toHaveLength(22)
    expect(documents.map((d) => d.name)).toEqual(expectedNames)
    expect(new Set(documents.map((d) => d.file)).size).toBe(22)
  })

  it('emits dialect, $id and title first, and plain JSON', () => {
    for (const def of documents) {
      const json = toJsonSchema(def)
      expect(Object.keys(json).slice(0, 3)).toEqual(['$schema', '$id', 'title'])
      expect(json['$schema']).toBe(SCHEMA_DIALECT)
      expect(json['$id']).toBe(documentId(def))
      expect(json['title']).toBe(def.title)
      expect(JSON.parse(JSON.stringify(json))).toEqual(json)
    }
  })
})

describe.skipIf(!bundle)('equivalence with the normative schemas', () => {
  const dir = bundle ?? ''
  const files = bundle
    ? readdirSync(join(dir, 'schemas'))
        .filter((f) => f.endsWith('.schema.json'))
        .sort()
    : []

  it('has one document per normative schema file, and no other', () => {
    expect(files).toHaveLength(22)
    expect(documents.map((d) => d.file).sort()).toEqual(files)
  })

  it.each(files)('%s', (file) => {
    const def = documents.find((d) => d.file === file)
    expect(def, `no document for ${file}`).toBeDefined()
    if (!def) return
    const normative = readBundleJson<Record<string, unknown>>(dir, join('schemas', file))
    expect(compareSchemas(toJsonSchema(def), normative)).toEqual([])
    // Annotations are skipped by the comparison; the identifying ones must still be right.
    expect(toJsonSchema(def)['$id']).toBe(normative['$id'])
    expect(toJsonSchema(def)['title']).toBe(normative['title'])
    expect(toJsonSchema(def)['$schema']).toBe(normative['$schema'])
  })
})
