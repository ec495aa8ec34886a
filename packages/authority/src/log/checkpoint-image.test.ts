import { UsageError } from '@weft/codec'
import { describe, expect, it } from 'vitest'
import { seedGroup } from '../../test/fixtures-state.js'
import { decodeStateImage, encodeStateImage } from './checkpoint-image.js'
import { emptyState, type AuthorityState } from '../model.js'

/** A state with one seeded Group and `extra` as an unmodelled member of its Mission (only the image reads it). */
function stateWith(extra: unknown): AuthorityState {
  const state = emptyState()
  seedGroup(state)
  const group = [...state.groups.values()][0]!
  group.mission = { ...group.mission, extra } as typeof group.mission
  return state
}

function extraOf(state: AuthorityState): unknown {
  return ([...state.groups.values()][0]!.mission as unknown as { extra: unknown }).extra
}

function roundTrip(state: AuthorityState): AuthorityState {
  const decoded = decodeStateImage(encodeStateImage(state))
  if (!decoded.ok) throw new Error(decoded.reason)
  return decoded.state
}

describe('state images', () => {
  it('carry Maps, Sets, shared objects and what JSON has no form for', () => {
    const shared = { card: 'one' }
    const extra = {
      map: new Map<string | number, unknown>([
        ['a', new Set([1, 2])],
        [3, { inner: new Map([['deep', [shared]]]) }],
      ]),
      again: shared,
      values: [undefined, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0],
      cleared: undefined,
      ['__proto__']: 'data',
    }
    Object.defineProperty(extra, '__proto__', { value: 'data', enumerable: true, writable: true, configurable: true })
    const state = stateWith(extra)
    const restored = roundTrip(state)
    expect(restored).toEqual(state)
    const back = extraOf(restored) as typeof extra
    expect(back.map).toBeInstanceOf(Map)
    expect(back.map.get('a')).toEqual(new Set([1, 2]))
    // The shared object is one object again, wherever it was held.
    const deep = (back.map.get(3) as { inner: Map<string, unknown[]> }).inner.get('deep')![0]
    expect(deep).toBe(back.again)
    expect(Object.is(back.values[4], -0)).toBe(true)
    expect(back.values.slice(0, 4)).toEqual([undefined, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])
    expect('cleared' in back).toBe(true)
    expect(Object.getOwnPropertyDescriptor(back, '__proto__')?.value).toBe('data')
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype)
  })

  it('refuse what they cannot carry, naming where', () => {
    class Point {
      x = 1
    }
    const hidden = {}
    Object.defineProperty(hidden, 'secret', { value: 1, enumerable: false })
    const shared = new Map()
    const cases: [unknown, RegExp][] = [
      [() => 1, /a function at body\.0\.groups\.1\.0\.mission\.extra/],
      [10n, /a bigint/],
      [Symbol('s'), /a symbol/],
      [new Point(), /an instance of Point/],
      [new Date(0), /an instance of Date/],
      [hidden, /non-enumerable/],
      [new Map([[{}, 1]]), /a Map key that is a object/],
      [[shared, shared], /a Map also held at body\.0\.groups\.1\.0\.mission\.extra\.0/],
    ]
    for (const [extra, where] of cases) {
      expect(() => encodeStateImage(stateWith(extra))).toThrow(UsageError)
      expect(() => encodeStateImage(stateWith(extra))).toThrow(where)
    }
  })

  it('read nothing but an image of their own format with the ledger tables this build keeps', () => {
    const bytes = encodeStateImage(stateWith(1))
    const text = new TextDecoder().decode(bytes)
    const variants: [string, RegExp][] = [
      [text.replace('weft-state-image/1', 'weft-state-image/2'), /format "weft-state-image\/2"/],
      [text.replace(/"writer":"@weft\/authority@[^"]*"/, '"writer":"@weft/authority@0.0.0-other"'), /written by "@weft\/authority@0\.0\.0-other"/],
      [text.replace(/"tables":\[/, '"tables":["no.such.table",'), /carries the ledger tables \[no\.such\.table,/],
      [text.slice(0, -1), /does not read/],
      [JSON.stringify({ ...(JSON.parse(text) as object), fixups: { containers: [], refs: [], values: [] }, body: [{}, []] }), /not an Authority state/],
    ]
    const reasons = variants.map(([variant]) => decodeStateImage(new TextEncoder().encode(variant)))
    expect(reasons.map((r) => (r.ok ? 'read' : r.reason))).toEqual(variants.map(([, reason]) => expect.stringMatching(reason)))
    expect(decodeStateImage(new Uint8Array([0xff, 0xfe]))).toMatchObject({ ok: false, reason: expect.stringMatching(/does not read/) })
  })
})
