import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { UsageError } from './errors.js'
import { fastTime, plainTime } from './time-fast.js'
import { isoTimeOfDay, knownTimestampMs, newUrnUuid, parseInstant, systemClock, systemRandom, timestampMs, timestampOf, uuidSource } from './time.js'

/** What a call did: its value, or the class of what it threw. */
function outcome<T>(f: () => T): { value: T } | { threw: string } {
  try {
    return { value: f() }
  } catch (error) {
    return { threw: (error as Error).constructor.name }
  }
}

/** `Date`'s range: ±10^8 days around the epoch. */
const DATE_MAX_MS = 8.64e15
const DAY_MS = 86_400_000

/** Instants where a cache could go wrong: day edges, around the epoch, years 0 and 10000, Date's own ends, non-times. */
const edgeInstant = fc.constantFrom(
  0,
  -1,
  1,
  DAY_MS - 1,
  DAY_MS,
  -DAY_MS,
  -DAY_MS - 1,
  Date.parse('2026-07-15T23:59:59.999Z'),
  Date.parse('2024-02-29T00:00:00.000Z'),
  -62_167_219_200_000, // 0000-01-01
  -62_167_219_200_001, // the last millisecond of year -1
  253_402_300_799_999, // 9999-12-31T23:59:59.999
  253_402_300_800_000, // +010000-01-01
  DATE_MAX_MS,
  -DATE_MAX_MS,
  DATE_MAX_MS + 1,
  Number.MAX_SAFE_INTEGER,
  1.5,
  -0.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
)
const instant = fc.oneof(fc.integer({ min: -DATE_MAX_MS, max: DATE_MAX_MS }), fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), edgeInstant)
/** An instant and a few near it, so the day caches are hit as well as missed. */
const instantRun = fc.array(instant, { minLength: 1, maxLength: 20 }).map((xs) => xs.flatMap((ms) => [ms, ms, ms + 1, ms + DAY_MS - 1, ms - 1, ms]))

describe('timestampOf and the cached formatter', () => {
  it('the cached formatter writes what toISOString writes, or throws what it throws, for any sequence of instants', () => {
    fc.assert(
      fc.property(instantRun, (instants) => {
        for (const ms of instants)
          expect(
            outcome(() => fastTime.formatInstant(ms)),
            String(ms),
          ).toEqual(outcome(() => plainTime.formatInstant(ms)))
      }),
    )
  })

  it('timestampOf is the plain path for every finite instant and a UsageError for a reading that is no time', () => {
    fc.assert(
      fc.property(instantRun, (instants) => {
        for (const ms of instants) {
          if (Number.isFinite(ms)) expect(outcome(() => timestampOf(ms))).toEqual(outcome(() => new Date(ms).toISOString()))
          else expect(() => timestampOf(ms)).toThrow(UsageError)
        }
      }),
    )
    expect(timestampOf(0)).toBe('1970-01-01T00:00:00.000Z')
    expect(timestampOf(-1)).toBe('1969-12-31T23:59:59.999Z')
    expect(timestampOf(-62_167_219_200_001)).toBe('-000001-12-31T23:59:59.999Z')
    expect(timestampOf(253_402_300_800_000)).toBe('+010000-01-01T00:00:00.000Z')
    expect(() => timestampOf(DATE_MAX_MS + 1)).toThrow(RangeError)
  })
})

/** Texts near the form the fast reader takes, and some far from it. */
const instantText = fc.oneof(
  instant.filter((ms) => Number.isFinite(ms) && Math.abs(ms) <= DATE_MAX_MS).map((ms) => new Date(ms).toISOString()),
  fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }).map((ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')),
  // One character of a valid text changed: a leap second, 24:00, a letter, a lower-case z, an offset.
  fc.tuple(fc.integer({ min: 0, max: 253_402_300_799_999 }), fc.nat({ max: 23 }), fc.constantFrom('0', '2', '5', '6', '9', 'a', 'z', 'T', '-', ':', '.', '+')).map(([ms, at, c]) => {
    const text = new Date(ms).toISOString()
    return text.slice(0, at) + c + text.slice(at + 1)
  }),
  fc.constantFrom('2026-07-15T23:59:60.000Z', '2026-07-15T24:00:00.000Z', '2026-02-30T10:00:00.000Z', '2026-07-15T10:00:00.000+00:00', '+002026-07-15T10:00:00.000Z', ''),
  fc.string({ minLength: 0, maxLength: 26 }),
)

describe('parseInstant and the day-cached reader', () => {
  it('is exactly Date.parse for any sequence of texts, NaN included', () => {
    fc.assert(
      fc.property(fc.array(instantText, { minLength: 1, maxLength: 30 }), (texts) => {
        for (const text of texts.flatMap((t) => [t, t, '2026-07-15T10:00:00.000Z', t])) {
          expect(Object.is(fastTime.parseInstant(text), plainTime.parseInstant(text)), text).toBe(true)
          expect(Object.is(parseInstant(text), Date.parse(text)), text).toBe(true)
        }
      }),
    )
  })

  const same = (text: string): void => expect(Object.is(parseInstant(text), Date.parse(text)), text).toBe(true)

  it('equals Date.parse millisecond by millisecond around midnight, before and after 1970', () => {
    for (const start of ['1969-12-31T23:59:58.500Z', '2026-07-15T23:59:59.000Z', '0001-01-01T00:00:00.000Z', '9999-12-31T23:59:58.000Z']) {
      const from = Date.parse(start)
      for (let ms = from; ms < from + 2500; ms += 7) same(new Date(ms).toISOString())
    }
  })

  it('equals Date.parse while the texts move between more days than it remembers', () => {
    const days = ['2026-07-15', '2026-07-16', '2025-12-31', '2024-02-29', '1969-12-31', '2026-07-15', '2026-07-17', '2026-07-18', '2026-07-19', '2026-07-20', '2026-07-21']
    for (let round = 0; round < 3; round++) for (const d of days) for (const t of ['00:00:00.000', '12:34:56.789', '23:59:59.999', '00:00:00', '12:34:56']) same(`${d}T${t}Z`)
  })

  it('isoTimeOfDay reads only the two fast forms and only times within the day', () => {
    expect(isoTimeOfDay('2026-07-15T12:34:56.789Z')).toBe(((12 * 60 + 34) * 60 + 56) * 1000 + 789)
    expect(isoTimeOfDay('2026-07-15T12:34:56Z')).toBe(((12 * 60 + 34) * 60 + 56) * 1000)
    for (const text of ['2026-07-15T23:59:60.000Z', '2026-07-15T24:00:00Z', '2026-07-15T10:00:00.000z', '2026-07-15T10:00:00.12Z', '2026-07-15T1a:00:00Z']) expect(isoTimeOfDay(text), text).toBe(-1)
  })
})

describe('newUrnUuid and uuidSource', () => {
  const sixteen = fc.uint8Array({ minLength: 16, maxLength: 24 })

  it('give the same text from the same bytes, and that text is the plain reference', () => {
    fc.assert(
      fc.property(fc.array(sixteen, { minLength: 1, maxLength: 8 }), (draws) => {
        const fromSource = uuidSource(
          (
            (queue) => () =>
              queue.shift()!
          )([...draws]),
        )
        for (const bytes of draws) {
          const before = Uint8Array.from(bytes)
          const text = newUrnUuid(() => bytes)
          expect(fromSource()).toBe(text)
          expect(text).toBe(plainTime.urnUuidOf(bytes))
          expect(bytes, 'the random bytes are not written to').toEqual(before)
        }
      }),
    )
  })

  it('set version 4 and the RFC 9562 variant whatever the bytes', () => {
    expect(newUrnUuid(() => new Uint8Array(16).fill(0xff))).toBe('urn:uuid:ffffffff-ffff-4fff-bfff-ffffffffffff')
    expect(uuidSource(() => new Uint8Array(16))()).toBe('urn:uuid:00000000-0000-4000-8000-000000000000')
    expect(newUrnUuid(() => Uint8Array.from({ length: 16 }, (_, i) => i))).toBe('urn:uuid:00010203-0405-4607-8809-0a0b0c0d0e0f')
  })

  it('refuse a source that returns fewer than 16 bytes', () => {
    expect(() => newUrnUuid(() => new Uint8Array(8))).toThrow(UsageError)
    expect(() => uuidSource(() => new Uint8Array(15))()).toThrow(UsageError)
  })

  it('hand out a string per call that later IDs do not change', () => {
    let n = 0
    const next = uuidSource((size) => new Uint8Array(size).fill(n++))
    const first = next()
    next()
    expect(first).toBe('urn:uuid:00000000-0000-4000-8000-000000000000')
  })
})

describe('systemRandom', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
  })

  it('hands out fresh bytes of the asked length, each call its own copy, across pool refills', () => {
    const draws = Array.from({ length: 600 }, () => systemRandom(16))
    for (const d of draws) expect(d).toBeInstanceOf(Uint8Array)
    expect(draws.every((d) => d.length === 16)).toBe(true)
    // 600 x 16 bytes crosses two 4096-byte pools; no two draws are the same bytes.
    expect(new Set(draws.map((d) => Array.from(d).join(','))).size).toBe(600)
    const kept = Array.from(draws[0]!).join(',')
    draws[1]!.fill(0)
    systemRandom(16)
    expect(Array.from(draws[0]!).join(',')).toBe(kept)
    expect(draws[0]!.buffer.byteLength, 'a copy, not a view of the pool').toBe(16)
  })

  it('serves large requests directly, at their full length, past the WebCrypto quota', () => {
    const big = systemRandom(70_000)
    expect(big.length).toBe(70_000)
    expect(big.subarray(65_536).some((b) => b !== 0)).toBe(true)
    expect(systemRandom(0).length).toBe(0)
  })

  it('throws a UsageError naming WebCrypto when the platform has none, as soon as it needs the platform', () => {
    vi.stubGlobal('crypto', undefined)
    expect(() => systemRandom(100_000)).toThrow(UsageError)
    expect(() => systemRandom(100_000)).toThrow(/getRandomValues/)
    // A pool of 4096 bytes gives at most eight draws of 512; the ninth refills it, or fails.
    expect(() => {
      for (let i = 0; i < 9; i++) systemRandom(512)
    }).toThrow(UsageError)
  })
})

describe('systemClock', () => {
  it('reads the wall clock', () => {
    const before = Date.now()
    const now = systemClock.now()
    expect(now).toBeGreaterThanOrEqual(before)
    expect(now).toBeLessThanOrEqual(Date.now())
  })
})

/** §2 timestamps in other forms than `toISOString`'s: no fraction, short and long fractions, offsets. */
const otherTimestamp = fc
  .tuple(fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 }), fc.constantFrom('', '.5', '.1234', '.000001', '.999999999'), fc.constantFrom('Z', '+02:00', '-11:30', '+00:00'))
  .map(([ms, fraction, offset]) => `${new Date(ms).toISOString().slice(0, 19)}${fraction}${offset}`)

describe('timestampMs and the known-timestamp reader', () => {
  it('reads every §2 timestamp exactly as the plain reader does, to the last bit', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            instant.filter((ms) => Number.isFinite(ms) && ms >= -62_135_596_800_000 && ms <= 253_402_300_799_999).map((ms) => new Date(ms).toISOString()),
            otherTimestamp,
          ),
          { minLength: 1, maxLength: 30 },
        ),
        (texts) => {
          for (const text of texts) {
            expect(Object.is(fastTime.timestampMs(text), plainTime.timestampMs(text)), text).toBe(true)
            expect(Object.is(knownTimestampMs(text), timestampMs(text)), text).toBe(true)
          }
        },
      ),
    )
  })

  it('equals timestampMs millisecond by millisecond, before and after 1970 and at the ends of the years', () => {
    for (const start of ['1969-12-31T23:59:59.000Z', '2026-07-15T00:00:00.000Z', '0001-01-01T00:00:00.000Z', '9999-12-31T23:59:58.000Z']) {
      const from = Date.parse(start)
      for (let ms = from; ms < from + 2000; ms++) {
        const text = new Date(ms).toISOString()
        expect(Object.is(knownTimestampMs(text), timestampMs(text)), text).toBe(true)
      }
    }
  })

  it('keeps fraction digits past the millisecond, and reads texts that are not §2 timestamps as NaN (the plain reader)', () => {
    expect(timestampMs('2026-07-15T08:00:00.250Z')).toBe(Date.parse('2026-07-15T08:00:00.250Z'))
    expect(timestampMs('2026-07-15T08:00:00.0005Z') - timestampMs('2026-07-15T08:00:00Z')).toBeCloseTo(0.5, 9)
    expect(timestampMs('2026-07-15T10:00:00.500+02:00')).toBe(Date.parse('2026-07-15T08:00:00.500Z'))
    for (const text of ['2026-07-15T23:59:60.000Z', '2026-07-15T10:60:00.000Z', '2026-07-15T1a:00:00.000Z', '2026-07-15', '', 'now']) expect(timestampMs(text), text).toBeNaN()
  })
})
