import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { systemRandom, timestampOf, uuidSource } from './clock.js'

describe('timestampOf', () => {
  it('writes every instant exactly as toISOString does, across day boundaries, in any order and again', () => {
    const instant = fc.oneof(fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), fc.constantFrom(0, -1, 86_399_999, 86_400_000, 1.5))
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1, maxLength: 20 }), (instants) => {
        for (const ms of instants) for (const m of [ms, ms, ms + 1, ms + 86_399_999, ms]) expect(timestampOf(m)).toBe(new Date(m).toISOString())
      }),
    )
  })

  it('refuses an instant that is not a time, as Date does', () => {
    expect(() => timestampOf(Number.NaN)).toThrow(RangeError)
  })
})

describe('uuidSource', () => {
  it('mints RFC 9562 version 4 URNs from the random source', () => {
    const next = uuidSource((n) => new Uint8Array(n).fill(0xff))
    expect(next()).toBe('urn:uuid:ffffffff-ffff-4fff-bfff-ffffffffffff')
  })

  it('writes every byte in order, and each ID is its own string', () => {
    let call = 0
    const next = uuidSource((n) => Uint8Array.from({ length: n }, (_, i) => (i + 16 * call) & 0xff))
    call = 0
    const first = next()
    call = 1
    const second = next()
    expect(first).toBe('urn:uuid:00010203-0405-4607-8809-0a0b0c0d0e0f')
    expect(second).toBe('urn:uuid:10111213-1415-4617-9819-1a1b1c1d1e1f')
    expect(first).toBe('urn:uuid:00010203-0405-4607-8809-0a0b0c0d0e0f')
  })
})

describe('systemRandom', () => {
  it('hands out fresh bytes of the asked length, each call its own copy, across pool refills', () => {
    const draws = Array.from({ length: 600 }, () => systemRandom(16))
    for (const d of draws) expect(d).toBeInstanceOf(Uint8Array)
    expect(draws.every((d) => d.length === 16)).toBe(true)
    // 600 x 16 bytes crosses two 4096-byte pools; no two draws are the same bytes.
    expect(new Set(draws.map((d) => Buffer.from(d).toString('hex'))).size).toBe(600)
    const kept = Buffer.from(draws[0]!).toString('hex')
    draws[1]!.fill(0)
    systemRandom(16)
    expect(Buffer.from(draws[0]!).toString('hex')).toBe(kept)
  })

  it('serves large requests directly, at their full length', () => {
    const big = systemRandom(10_000)
    expect(big.length).toBe(10_000)
    expect(big.some((b) => b !== 0)).toBe(true)
  })
})
