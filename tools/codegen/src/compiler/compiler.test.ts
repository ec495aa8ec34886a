import { describe, expect, it } from 'vitest'
import { ValidatorCompiler, type CompiledModule } from './compiler.js'
import { SchemaRegistry } from './registry.js'

const BASE = 'https://example.test/schemas/'

interface Compiled {
  check(v: unknown): boolean
  errors(v: unknown, max?: number): { path: string; keyword: string; message: string; schemaPath: string }[]
  modules: ReadonlyMap<string, CompiledModule>
}

const FULL = Symbol('full')
const runtime = {
  codePoints: (s: string) => [...s].length,
  pointerToken: (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1'),
  equal: (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b),
  unique: (a: unknown[]) => new Set(a.map((x) => JSON.stringify(x))).size === a.length,
  isUri: (s: string) => /^[a-z]+:[^\s]*$/.test(s),
}

/** Compiles `schemas` (file -> schema) and evaluates the emitted code of `root` in one scope. */
function compile(schemas: Record<string, unknown>, root = Object.keys(schemas)[0]!, pointer = ''): Compiled {
  const registry = new SchemaRegistry()
  for (const [file, schema] of Object.entries(schemas)) registry.add(BASE + file, JSON.parse(JSON.stringify(schema)))
  const compiler = new ValidatorCompiler(registry, {
    place: (base) => ({ module: base.slice(BASE.length).replace(/\W/g, '_'), prefix: base.slice(BASE.length).replace(/\W/g, '_') }),
    formats: { uri: { name: 'isUri', from: 'formats' } },
    runtime: 'runtime',
  })
  const names = compiler.entry(BASE + root, pointer)
  const modules = compiler.modules()
  let code = ''
  for (const mod of modules.values()) {
    for (const constant of mod.constants) code += `const ${constant.name} = ${constant.initializer}\n`
    for (const fn of mod.functions) {
      const s = fn.schemaPathDefault === undefined ? '' : `, s = ${JSON.stringify(fn.schemaPathDefault)}`
      code += `function ${fn.name}(${fn.mode === 'check' ? 'v' : `v, p, x${s}`}) {\n${fn.body}}\n`
    }
  }
  code += `return { check: ${names.name}, collect: ${names.name} }`
  const { check, collect } = new Function(...Object.keys(runtime), code)(...Object.values(runtime)) as {
    check: (v: unknown) => boolean
    collect: (v: unknown, p: string, x: unknown) => void
  }
  return {
    modules,
    check,
    errors(v, max = 100) {
      const issues: { path: string; keyword: string; message: string; schemaPath: string }[] = []
      const x = {
        add(path: string, keyword: string, message: string, schemaPath: string) {
          issues.push({ path, keyword, message, schemaPath })
          if (issues.length >= max) throw FULL
        },
      }
      try {
        collect(v, '', x)
      } catch (e) {
        if (e !== FULL) throw e
      }
      return issues
    },
  }
}

describe('ValidatorCompiler', () => {
  it('checks types, required members and rejects unknown members when additionalProperties is false', () => {
    const v = compile({
      'a.json': { type: 'object', additionalProperties: false, required: ['n'], properties: { n: { type: 'integer', minimum: 1 }, s: { type: 'string' } } },
    })
    expect(v.check({ n: 1 })).toBe(true)
    expect(v.check({ n: 1, s: 'x' })).toBe(true)
    expect(v.check({ n: 0 })).toBe(false)
    expect(v.check({ n: 1.5 })).toBe(false)
    expect(v.check({ s: 'x' })).toBe(false)
    expect(v.check({ n: 1, extra: true })).toBe(false)
    expect(v.check([])).toBe(false)
    expect(v.check(null)).toBe(false)
    expect(v.errors({ n: 0, s: 3, extra: 1 }).map((i) => [i.path, i.keyword])).toEqual([
      ['/n', 'minimum'],
      ['/s', 'type'],
      ['/extra', 'additionalProperties'],
    ])
  })

  it('applies keywords of one type only to values of that type when `type` is absent', () => {
    const v = compile({ 'a.json': { required: ['x'], minLength: 2, minimum: 3 } })
    expect(v.check('ab')).toBe(true)
    expect(v.check('a')).toBe(false)
    expect(v.check(5)).toBe(true)
    expect(v.check(2)).toBe(false)
    expect(v.check({ x: 1 })).toBe(true)
    expect(v.check({})).toBe(false)
    expect(v.check(null)).toBe(true)
  })

  it('resolves $ref across schema resources and keeps shared definitions in their own module', () => {
    const v = compile({
      'doc.json': { type: 'object', properties: { id: { $ref: 'common.json#/$defs/id' } } },
      'common.json': { $defs: { id: { type: 'string', format: 'uri', maxLength: 10 } } },
    })
    expect(v.check({ id: 'urn:a' })).toBe(true)
    expect(v.check({ id: 'not a uri' })).toBe(false)
    expect(v.check({ id: 'urn:aaaaaaaaaaaa' })).toBe(false)
    expect([...v.modules.keys()].sort()).toEqual(['common_json', 'doc_json'])
    expect(v.modules.get('doc_json')!.imports.get('./common_json.js')).toEqual(new Set(['c_common_json_defs_id', 'v_common_json_defs_id']))
    expect(v.errors({ id: 'x y' })).toEqual([{ path: '/id', keyword: 'format', message: 'must be a valid uri (§2)', schemaPath: '#/$defs/id/format' }])
  })

  it('implements if/then/else, not, anyOf, oneOf and allOf', () => {
    const v = compile({
      'a.json': {
        type: 'object',
        allOf: [
          { if: { properties: { k: { const: 'a' } }, required: ['k'] }, then: { required: ['a'] }, else: { not: { required: ['a'] } } },
          { anyOf: [{ required: ['x'] }, { required: ['y'] }] },
          { oneOf: [{ required: ['x'] }, { required: ['z'] }] },
        ],
      },
    })
    expect(v.check({ k: 'a', a: 1, x: 1 })).toBe(true)
    expect(v.check({ k: 'a', x: 1 })).toBe(false) // then: a required
    expect(v.check({ k: 'b', a: 1, x: 1 })).toBe(false) // else: a forbidden
    expect(v.check({ k: 'b', y: 1 })).toBe(false) // oneOf: neither x nor z
    expect(v.check({ k: 'b', y: 1, z: 1 })).toBe(true)
    expect(v.check({ k: 'b', x: 1, z: 1 })).toBe(false) // oneOf: both
    expect(v.errors({ k: 'b', a: 1 }).map((i) => i.keyword)).toEqual(['not', 'anyOf', 'oneOf'])
  })

  it('checks enum, const, arrays, uniqueItems, propertyNames and additionalProperties schemas', () => {
    const v = compile({
      'a.json': {
        type: 'object',
        properties: {
          e: { enum: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'] },
          c: { const: { deep: [1] } },
          list: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3, uniqueItems: true },
          map: { type: 'object', propertyNames: { pattern: '^[a-z]+$' }, additionalProperties: { type: 'boolean' } },
        },
      },
    })
    expect(v.check({ e: 'h', c: { deep: [1] }, list: ['x', 'y'], map: { ok: true } })).toBe(true)
    expect(v.check({ e: 'z' })).toBe(false)
    expect(v.check({ c: { deep: [2] } })).toBe(false)
    expect(v.check({ list: [] })).toBe(false)
    expect(v.check({ list: ['a', 'a'] })).toBe(false)
    expect(v.check({ list: ['a', 'b', 'c', 'd'] })).toBe(false)
    expect(v.check({ map: { Bad: true } })).toBe(false)
    expect(v.check({ map: { ok: 1 } })).toBe(false)
    expect(v.errors({ list: ['a', 1], map: { 'a/b': true } }).map((i) => [i.path, i.keyword])).toEqual([
      ['/list/1', 'type'],
      ['/map/a~1b', 'propertyNames'],
    ])
  })

  it('counts string length in code points, not UTF-16 units', () => {
    const v = compile({ 'a.json': { type: 'string', minLength: 2, maxLength: 2 } })
    expect(v.check('😀😀')).toBe(true) // four UTF-16 units, two code points
    expect(v.check('😀')).toBe(false)
    expect(v.check('abc')).toBe(false)
  })

  it('stops collecting at the bound however many members are bad', () => {
    const v = compile({ 'a.json': { type: 'object', additionalProperties: { type: 'string' } } })
    const hostile = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]))
    expect(v.errors(hostile, 5)).toHaveLength(5)
  })

  it('never lets a type failure run the keywords of another type', () => {
    const v = compile({ 'a.json': { type: 'object', required: ['a'], properties: { a: { type: 'array', items: { type: 'string' } } } } })
    expect(v.errors({ a: 'abc' })).toEqual([{ path: '/a', keyword: 'type', message: 'must be array', schemaPath: '#/properties/a/type' }])
    expect(v.errors('abc').map((i) => i.keyword)).toEqual(['type'])
  })

  it('emits a schema that occurs at several locations once, each issue carrying the schema path of its location', () => {
    const text = { type: 'string', minLength: 1, maxLength: 3 }
    const v = compile({ 'a.json': { type: 'object', properties: { a: text, b: { type: 'array', items: text }, c: { type: 'object', properties: { d: text } } } } })
    const functions = [...v.modules.values()].flatMap((m) => m.functions)
    const shared = functions.filter((f) => f.mode === 'collect' && f.schemaPathDefault !== undefined)
    expect(shared.map((f) => [f.name, f.uses])).toEqual([['v_a_json_properties_a', 3]])
    expect(v.check({ a: 'abc', b: ['x'], c: { d: 'y' } })).toBe(true)
    expect(v.check({ c: { d: 'long' } })).toBe(false)
    expect(v.errors({ a: 'long', b: [''], c: { d: 7 } })).toEqual([
      { path: '/a', keyword: 'maxLength', message: 'must have at most 3 characters', schemaPath: '#/properties/a/maxLength' },
      { path: '/b/0', keyword: 'minLength', message: 'must have at least 1 characters', schemaPath: '#/properties/b/items/minLength' },
      { path: '/c/d', keyword: 'type', message: 'must be string', schemaPath: '#/properties/c/properties/d/type' },
    ])
  })

  it('gives a leaf schema a check-only twin, and an entry of a shared schema a function of its own', () => {
    const schemas = { 'c.json': { $defs: { a: { type: 'string', maxLength: 3 }, b: { type: 'string', maxLength: 3 } } } }
    const v = compile(schemas, 'c.json', '/$defs/b')
    const functions = [...v.modules.values()].flatMap((m) => m.functions)
    expect(functions.map((f) => [f.name, f.mode])).toEqual([['v_c_json_defs_b', 'collect']])
    expect(v.errors('long')).toEqual([{ path: '', keyword: 'maxLength', message: 'must have at most 3 characters', schemaPath: '#/$defs/b/maxLength' }])
    const doc = compile({ 'd.json': { type: 'object', properties: { id: { $ref: 'c.json#/$defs/a' } } }, ...schemas })
    expect(doc.modules.get('c_json')!.functions.map((f) => [f.name, f.mode])).toEqual([
      ['v_c_json_defs_a', 'collect'],
      ['c_c_json_defs_a', 'check'],
    ])
    expect(doc.check({ id: 'abc' })).toBe(true)
    expect(doc.check({ id: 'abcd' })).toBe(false)
    expect(doc.errors({ id: 'abcd' }).map((i) => i.schemaPath)).toEqual(['#/$defs/a/maxLength'])
  })

  it('judges members set to undefined (JavaScript, not JSON) as the for-in check did: declared ones by their schema', () => {
    const closed = compile({ 'a.json': { type: 'object', additionalProperties: false, properties: { s: { type: 'string' }, any: {} } } })
    expect(closed.check({ s: undefined })).toBe(false)
    expect(closed.check({ any: undefined })).toBe(true)
    expect(closed.check({ other: undefined })).toBe(false)
    expect(closed.check(Object.assign(Object.create({ inherited: 1 }), { s: 'x' }))).toBe(false)
    const open = compile({ 'a.json': { type: 'object', properties: { s: { type: 'string' } } } })
    expect(open.check({ s: undefined })).toBe(true)
  })

  it('refuses unknown keywords and formats instead of ignoring them', () => {
    expect(() => compile({ 'a.json': { type: 'object', patternProperties: {} } })).toThrow(/unsupported keyword "patternProperties"/)
    expect(() => compile({ 'a.json': { type: 'string', format: 'email' } })).toThrow(/unsupported format "email"/)
    expect(() => compile({ 'a.json': { $ref: 'missing.json' } })).toThrow(/unresolvable \$ref/)
    expect(() => compile({ 'a.json': { type: 'object', properties: { toString: { type: 'string' } } } })).toThrow(/also a member of every object/)
  })
})
