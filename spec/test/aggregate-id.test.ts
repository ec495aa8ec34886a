/**
 * The catalogs' `aggregateIdAt` pointers (§15.1–§15.3) against the schemas they point into: every
 * pointer names a member that the kind's envelope or payload schema declares, no pointer follows one
 * whose member is required (it would never be read), and the reader returns the first string it reaches.
 */
import { describe, expect, it } from 'vitest'
import { COMMAND_CATALOG, EVENT_CATALOG, aggregateIdReader, type EnvelopePointer } from '../src/catalog/index.js'
import { documents } from '../src/documents/index.js'
import { CommandPayloads, EventPayloads } from '../src/payloads/index.js'
import { documentId, toJsonSchema } from '../src/schema.js'

type Schema = { [key: string]: unknown }

const byFile = new Map(documents.map((d) => [d.file, toJsonSchema(d)]))

/** Follows `$ref`s (to a document, a pointer inside one, or `#/...` in the current one) and returns the schema and its document. */
function resolve(schema: Schema, within: Schema | undefined): { schema: Schema; within: Schema | undefined } {
  let at = schema
  let doc = within
  for (let hops = 0; typeof at['$ref'] === 'string'; hops++) {
    if (hops > 20) throw new Error('ref loop')
    const ref = (at['$ref'] as string).replace(documentId({ file: '' }), '')
    const [file, pointer = ''] = ref.split('#')
    if (file !== '') doc = byFile.get(file!) ?? expect.fail(`unknown document ${file}`)
    let node: unknown = doc
    for (const segment of pointer.split('/').slice(1)) node = (node as Schema)[segment]
    at = (node as Schema | undefined) ?? expect.fail(`unresolved ${ref}`)
  }
  return { schema: at, within: doc }
}

/** Whether `path` is declared under `schema` and required at every step. */
function declared(schema: Schema, path: readonly string[], within?: Schema): { declared: boolean; required: boolean } {
  let { schema: at, within: doc } = resolve(schema, within)
  let required = true
  for (const segment of path) {
    const properties = at['properties'] as Record<string, Schema> | undefined
    const member = properties?.[segment]
    if (member === undefined) return { declared: false, required: false }
    required &&= ((at['required'] as string[] | undefined) ?? []).includes(segment)
    ;({ schema: at, within: doc } = resolve(member, doc))
  }
  return { declared: true, required }
}

const envelopeMembers = new Set(['groupId', 'workItemId'])

function check(kind: string, pointers: readonly EnvelopePointer[], payload: Schema): void {
  expect(pointers.length, kind).toBeGreaterThan(0)
  const verdicts = pointers.map((pointer) => {
    expect(pointer, kind).not.toMatch(/~|\/$|\/\//)
    const [first, ...rest] = pointer.slice(1).split('/')
    if (first !== 'payload') {
      expect(envelopeMembers.has(first!) && rest.length === 0, `${kind} ${pointer}`).toBe(true)
      return { declared: true, required: first === 'groupId' }
    }
    return declared(payload, rest)
  })
  for (const [i, v] of verdicts.entries()) expect(v.declared, `${kind} ${pointers[i]} is declared`).toBe(true)
  // A pointer after a required member would never be read.
  const shadowing = pointers.filter((_, i) => i < pointers.length - 1 && verdicts[i]!.required)
  expect(shadowing, `${kind}: pointers after these are never read`).toEqual([])
}

describe('aggregateIdAt', () => {
  it('points into what every Event kind declares', () => {
    for (const e of EVENT_CATALOG) check(e.kind, e.aggregateIdAt, EventPayloads[e.kind] as unknown as Schema)
  })

  it('points into what every Command kind declares', () => {
    for (const c of COMMAND_CATALOG) check(c.kind, c.aggregateIdAt, CommandPayloads[c.kind] as unknown as Schema)
  })

  it('Group-level aggregates are the Group itself', () => {
    for (const entry of [...EVENT_CATALOG, ...COMMAND_CATALOG]) {
      if (['mission', 'group', 'policy'].includes(entry.aggregate)) expect(entry.aggregateIdAt, entry.kind).toEqual(['/groupId'])
    }
  })
})

describe('aggregateIdReader', () => {
  const read = aggregateIdReader(['/workItemId', '/payload/workItem/workItemId', '/payload/proposalId'])

  it('returns the first pointer that reaches a string', () => {
    expect(read({ workItemId: 'a', payload: { proposalId: 'c' } })).toBe('a')
    expect(read({ payload: { workItem: { workItemId: 'b' }, proposalId: 'c' } })).toBe('b')
    expect(read({ payload: { proposalId: 'c' } })).toBe('c')
  })

  it('skips members that are absent, null or not strings', () => {
    expect(read({ workItemId: 7, payload: { workItem: null, proposalId: 'c' } })).toBe('c')
    expect(read({ payload: 'text' })).toBeUndefined()
    expect(read({})).toBeUndefined()
  })
})
