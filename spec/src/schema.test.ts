import Type from 'typebox'
import { describe, expect, it } from 'vitest'
import { common } from './documents/common.js'
import { compareSchemas, constant, document, oneOfValues, ref, SCHEMA_BASE, SCHEMA_DIALECT, toJsonSchema } from './schema.js'

/** A small normative-looking schema to mutate. */
function sample(): Record<string, unknown> {
  return {
    $schema: SCHEMA_DIALECT,
    $id: `${SCHEMA_BASE}sample.schema.json`,
    title: 'Sample',
    type: 'object',
    additionalProperties: false,
    required: ['id', 'state', 'title'],
    properties: {
      id: { $ref: 'common.schema.json#/$defs/id' },
      state: { enum: ['open', 'closed'] },
      title: { type: 'string', pattern: '^[A-Z]', description: 'a property named title' },
      note: { type: 'string', $comment: 'free text' },
    },
    allOf: [{ if: { properties: { state: { const: 'closed' } }, required: ['state'] }, then: { required: ['note'] } }],
  }
}

describe('compareSchemas', () => {
  it('finds no difference between equal schemas', () => {
    expect(compareSchemas(sample(), sample())).toEqual([])
  })

  it('reports a changed pattern with its JSON pointer', () => {
    const ours = sample()
    ;(ours['properties'] as Record<string, Record<string, unknown>>)['title']!['pattern'] = '^[a-z]'
    expect(compareSchemas(ours, sample())).toEqual(['/properties/title/pattern: ours is "^[a-z]", normative is "^[A-Z]"'])
  })

  it('reports a missing key', () => {
    const ours = sample()
    delete ours['additionalProperties']
    expect(compareSchemas(ours, sample())).toEqual(['/additionalProperties: missing (normative has false)'])
  })

  it('reports a missing property even when it is named like an annotation', () => {
    const ours = sample()
    delete (ours['properties'] as Record<string, unknown>)['title']
    const differences = compareSchemas(ours, sample())
    expect(differences).toHaveLength(1)
    expect(differences[0]).toMatch(/^\/properties\/title: missing/)
  })

  it('reports an extra key, also deep inside if/then', () => {
    const ours = sample()
    ours['minProperties'] = 1
    const allOf = ours['allOf'] as Record<string, Record<string, unknown>>[]
    allOf[0]!['then']!['not'] = { required: ['id'] }
    expect(compareSchemas(ours, sample())).toEqual(['/allOf/0/then/not: unexpected (ours has {"required":["id"]})', '/minProperties: unexpected (ours has 1)'])
  })

  it('reports a changed enum order', () => {
    const ours = sample()
    ;(ours['properties'] as Record<string, Record<string, unknown>>)['state']!['enum'] = ['closed', 'open']
    expect(compareSchemas(ours, sample())).toEqual(['/properties/state/enum: ours is ["closed","open"], normative is ["open","closed"]'])
  })

  it('reports a differently spelt $ref', () => {
    const ours = sample()
    ;(ours['properties'] as Record<string, Record<string, unknown>>)['id']!['$ref'] = 'https://missionweaveprotocol.dev/schemas/0.1/common.schema.json#/$defs/id'
    expect(compareSchemas(ours, sample())).toHaveLength(1)
  })

  it('reports a different number of subschemas', () => {
    const ours = sample()
    ours['allOf'] = []
    expect(compareSchemas(ours, sample())).toEqual(['/allOf: ours has 0 subschemas, normative has 1'])
  })

  it('reports members missing from or added to required', () => {
    const ours = sample()
    ours['required'] = ['id', 'state', 'note']
    expect(compareSchemas(ours, sample())).toEqual(['/required: lacks "title"', '/required: has extra "note"'])
  })

  it('ignores a changed title and other annotations', () => {
    const ours = sample()
    ours['title'] = 'Another title'
    ours['$id'] = 'https://example.com/other.json'
    ours['description'] = 'added'
    delete (ours['properties'] as Record<string, Record<string, unknown>>)['note']!['$comment']
    delete (ours['properties'] as Record<string, Record<string, unknown>>)['title']!['description']
    expect(compareSchemas(ours, sample())).toEqual([])
  })

  it('ignores a reordered required list, at the root and nested', () => {
    const ours = sample()
    ours['required'] = ['title', 'id', 'state']
    const normative = sample()
    ;(normative['allOf'] as Record<string, Record<string, unknown>>[])[0]!['if']!['required'] = ['state']
    expect(compareSchemas(ours, normative)).toEqual([])
  })

  it('compares const values as data, not as schemas', () => {
    expect(compareSchemas({ const: { title: 'a' } }, { const: { title: 'b' } })).toHaveLength(1)
    expect(compareSchemas({ const: { a: 1, b: 2 } }, { const: { b: 2, a: 1 } })).toEqual([])
  })

  it('escapes JSON pointer tokens', () => {
    expect(compareSchemas({ properties: { 'a/b~c': { type: 'string' } } }, { properties: {} })).toEqual(['/properties/a~1b~0c: unexpected (ours has {"type":"string"})'])
  })
})

describe('toJsonSchema', () => {
  it('puts dialect, $id and title before the plain JSON of the schema', () => {
    const def = document(
      'sample',
      'sample.schema.json',
      'Sample',
      Type.Object(
        { state: oneOfValues(['a', 'b']), kind: constant('x'), id: ref('common.schema.json#/$defs/id') },
        {
          additionalProperties: false,
        },
      ),
    )
    expect(toJsonSchema(def)).toEqual({
      $schema: SCHEMA_DIALECT,
      $id: `${SCHEMA_BASE}sample.schema.json`,
      title: 'Sample',
      type: 'object',
      required: ['state', 'kind', 'id'],
      properties: { state: { enum: ['a', 'b'] }, kind: { const: 'x' }, id: { $ref: 'common.schema.json#/$defs/id' } },
      additionalProperties: false,
    })
  })

  it('emits common as definitions only', () => {
    const json = toJsonSchema(common)
    expect(Object.keys(json)).toEqual(['$schema', '$id', 'title', '$defs'])
  })
})
