import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ProtocolError } from './errors.js'
import { canonicalBytes, deepFreeze, freezeMembers, frozenJson, jcsFormOf } from './frozen.js'
import { canonicalizeOrThrow } from './jcs.js'

const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes)

/** Whether `value` and every object and array it holds is frozen. */
function allFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  return Object.isFrozen(value) && Object.values(value).every(allFrozen)
}

// JSON values with member names that probe the orders RFC 8785 and JavaScript disagree on.
const name = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('0', '10', '9', '1a', 'b', 'B', 'é', '__proto__', 'toJSON'))
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string(), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(name, tie('value'), { maxKeys: 5 }),
})).value

describe('deepFreeze', () => {
  it('freezes a table and everything in it, in place', () => {
    const table = { a: [{ b: 1 }], c: { d: 'x' } }
    expect(deepFreeze(table)).toBe(table)
    expect(allFrozen(table)).toBe(true)
  })
})

describe('frozenJson', () => {
  it('copies a JSON value deep-frozen, as its canonical form reads back (-0 as 0, own __proto__ as data)', () => {
    const source = JSON.parse('{"b":[1,{"__proto__":{"x":-0}}],"a":"é"}') as unknown
    const copy = frozenJson(source)
    expect(copy).toEqual(JSON.parse(text(canonicalizeOrThrow(source))))
    expect(Object.keys(copy as object)).toEqual(['a', 'b'])
    const inner = (copy as { b: [number, Record<string, { x: number }>] }).b[1]
    expect(Object.getPrototypeOf(inner)).toBe(Object.prototype)
    // biome-ignore lint/suspicious/noProto: the test is that a `__proto__` key stays an own, frozen member
    expect(Object.is(inner['__proto__']!.x, 0)).toBe(true)
    // biome-ignore lint/suspicious/noProto: as above
    expect(Object.isFrozen(inner) && Object.isFrozen(inner['__proto__'])).toBe(true)
  })

  it('refuses what has no canonical form with the codec reason and path', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    const cases: [unknown, string][] = [
      [{ a: [1, Number.POSITIVE_INFINITY] }, 'non-finite-number'],
      [{ a: '\ud800' }, 'lone-surrogate'],
      [{ a: undefined }, 'unsupported-value'],
      [{ a: new Date(0) }, 'unsupported-value'],
      [cyclic, 'unsupported-value'],
    ]
    for (const [value, reason] of cases) {
      expect(() => frozenJson(value)).toThrow(ProtocolError)
      try {
        frozenJson(value)
      } catch (error) {
        expect((error as ProtocolError).details).toMatchObject({ reason })
      }
    }
  })

  it('property: the copy is deep-frozen and its JSON text is the canonical text', () => {
    fc.assert(
      fc.property(json, (value) => {
        const copy = frozenJson(value)
        expect(allFrozen(copy)).toBe(true)
        expect(jcsFormOf(copy as Record<string, unknown>)).not.toBe('unsorted')
        expect(text(canonicalBytes(copy, jcsFormOf(copy as Record<string, unknown>)))).toBe(text(canonicalizeOrThrow(value)))
      }),
    )
  })
})

describe('freezeMembers and canonicalBytes', () => {
  it('property: every member is frozen in place and the bytes written for the form found are the canonical bytes', () => {
    fc.assert(
      fc.property(fc.dictionary(name, json, { maxKeys: 6 }), (record) => {
        const expected = text(canonicalizeOrThrow(record))
        const form = freezeMembers(record)
        expect(Object.isFrozen(record)).toBe(false)
        expect(Object.values(record).every(allFrozen)).toBe(true)
        expect(text(canonicalBytes(record, form))).toBe(expected)
        expect(jcsFormOf(record)).toBe(form)
      }),
    )
  })

  it('tells the forms apart: sorted, unsorted, and a member named like an array index', () => {
    expect(freezeMembers({ a: 1, b: { c: [{ d: 1, e: 2 }] } })).toBe('sorted')
    expect(freezeMembers({ a: 1, b: { e: 2, d: 1 } })).toBe('unsorted')
    expect(freezeMembers({ a: { '10': 1, '9': 2 } })).toBe('index')
    expect(jcsFormOf({ z: 1, a: 2 }, ['z'])).toBe('sorted')
  })

  it('stores -0 as 0 and copies a frozen object only when it holds a -0', () => {
    const frozen = Object.freeze({ n: -0, s: 'kept' })
    const untouched = Object.freeze({ n: 1 })
    const shared = { weight: -0 }
    const record: Record<string, unknown> = { a: frozen, b: untouched, c: [shared], d: -0 }
    freezeMembers(record)
    expect(record['a']).not.toBe(frozen)
    expect(Object.is((record['a'] as { n: number }).n, 0) && Object.isFrozen(record['a'])).toBe(true)
    expect(record['b']).toBe(untouched)
    expect((record['c'] as object[])[0]).toBe(shared)
    expect(Object.is(shared.weight, 0) && Object.is(record['d'], 0)).toBe(true)
  })

  it('refuses a member outside the JCS data model with the codec error', () => {
    expect(() => freezeMembers({ a: { n: Number.NaN } })).toThrow(ProtocolError)
    expect(() => freezeMembers({ a: [new Map()] })).toThrow(/not JSON/)
  })
})
