import { describe, expect, it } from 'vitest'
import { parseInstant } from './instants.js'

const same = (text: string): void => expect(Object.is(parseInstant(text), Date.parse(text)), text).toBe(true)

describe('parseInstant', () => {
  it('equals Date.parse to the last bit across days, millisecond by millisecond around midnight, before and after 1970', () => {
    for (const start of ['1969-12-31T23:59:58.500Z', '2026-07-15T23:59:59.000Z', '0001-01-01T00:00:00.000Z', '9999-12-31T23:59:58.000Z']) {
      const from = Date.parse(start)
      for (let ms = from; ms < from + 2500; ms += 7) same(new Date(ms).toISOString())
    }
  })

  it('equals Date.parse while the texts move between more days than it remembers', () => {
    const days = ['2026-07-15', '2026-07-16', '2025-12-31', '2024-02-29', '1969-12-31', '2026-07-15', '2026-07-17']
    for (let round = 0; round < 3; round++) for (const d of days) for (const t of ['00:00:00.000', '12:34:56.789', '23:59:59.999', '00:00:00', '12:34:56']) same(`${d}T${t}Z`)
  })

  it('equals Date.parse on texts that leave the fast form, including ones read right after a day was remembered', () => {
    same('2026-07-15T10:00:00.000Z')
    const texts = [
      '2026-07-15T23:59:60.000Z',
      '2026-07-15T24:00:00.000Z',
      '2026-07-15T10:60:00.000Z',
      '2026-07-15T1a:00:00.000Z',
      '2026-07-15T10:00:00.0a0Z',
      '2026-07-15T10-00-00.000Z',
      '2026-07-15t10:00:00.000Z',
      '2026-07-15T10:00:00.000z',
      '2026-07-15T10:00:00.000+00:00',
      '2026-07-15T10:00:00Z',
      '2026-07-15T23:59:60Z',
      '2026-07-15T10:00:0aZ',
      '2026-07-15T10:00:00z',
      '2026-07-15T10:00:00.1234Z',
      '2026-07-15T10:00:00.12Z',
      '+002026-07-15T10:00:00.000Z',
      '2026-02-30T10:00:00.000Z',
      'not a time at all, 24 ch',
      '',
    ]
    for (const text of texts) {
      same(text)
      same('2026-07-15T10:00:00.000Z')
    }
  })
})
