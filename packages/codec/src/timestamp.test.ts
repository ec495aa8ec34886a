import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compareTimestamps, parseTimestamp, withinInterval } from './timestamp.js'

const ts = (s: string) => {
  const t = parseTimestamp(s)
  if (!t) throw new Error(`not a protocol timestamp: ${s}`)
  return t
}

describe('parseTimestamp', () => {
  it('keeps the text and computes the UTC instant', () => {
    const t = ts('2026-07-15T08:00:00+08:00')
    expect(t.text).toBe('2026-07-15T08:00:00+08:00')
    expect(t.seconds).toBe(Date.parse('2026-07-15T00:00:00Z') / 1000)
    expect(t.utcZ).toBe(false)
    expect(ts('2026-07-15t00:00:00Z').utcZ).toBe(true)
    expect(ts('2026-07-15T00:00:00z').utcZ).toBe(false)
  })

  it('agrees with Date for every millisecond instant in the profile', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }), (d) => {
        const t = ts(d.toISOString())
        expect(t.seconds).toBe(Math.floor(d.getTime() / 1000))
      }),
    )
  })

  it('rejects text outside the profile', () => {
    for (const s of ['2026-12-31T23:59:60Z', '0000-01-01T00:00:00Z', '2026-01-01T00:00:00-00:00', 'yesterday']) expect(parseTimestamp(s)).toBeUndefined()
  })
})

describe('compareTimestamps', () => {
  it('compares fractional seconds exactly, past the sixth digit and ignoring trailing zeros', () => {
    expect(compareTimestamps(ts('2026-01-01T00:00:00.1234567Z'), ts('2026-01-01T00:00:00.1234568Z'))).toBeLessThan(0)
    expect(compareTimestamps(ts('2026-01-01T00:00:00.5Z'), ts('2026-01-01T00:00:00.500000000Z'))).toBe(0)
    expect(compareTimestamps(ts('2026-01-01T00:00:00Z'), ts('2026-01-01T00:00:00.000000001Z'))).toBeLessThan(0)
  })

  it('compares across offsets as instants, not text', () => {
    expect(compareTimestamps(ts('2026-07-15T08:00:00+08:00'), ts('2026-07-15T00:00:00Z'))).toBe(0)
    expect(compareTimestamps(ts('2026-07-15T00:00:00-23:59'), ts('2026-07-15T23:58:59Z'))).toBeGreaterThan(0)
  })

  it('is a total order consistent with Date for millisecond instants', () => {
    fc.assert(
      fc.property(
        fc.date({ noInvalidDate: true, min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z') }),
        fc.date({ noInvalidDate: true, min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z') }),
        (a, b) => {
          expect(Math.sign(compareTimestamps(ts(a.toISOString()), ts(b.toISOString())))).toBe(Math.sign(a.getTime() - b.getTime()))
        },
      ),
    )
  })
})

describe('withinInterval (§6.4 half-open bounds)', () => {
  const validFrom = ts('2026-07-01T00:00:00Z')
  const validUntil = ts('2026-07-16T00:00:00Z')
  it('includes validFrom and excludes validUntil and revokedAt', () => {
    expect(withinInterval(validFrom, { validFrom, validUntil })).toBe(true)
    expect(withinInterval(ts('2026-06-30T23:59:59.999999999Z'), { validFrom })).toBe(false)
    expect(withinInterval(validUntil, { validFrom, validUntil })).toBe(false)
    expect(withinInterval(ts('2026-07-15T23:59:59.9999999Z'), { validFrom, validUntil })).toBe(true)
    expect(withinInterval(ts('2026-07-10T00:00:00Z'), { validFrom, revokedAt: ts('2026-07-10T00:00:00Z') })).toBe(false)
  })
})
