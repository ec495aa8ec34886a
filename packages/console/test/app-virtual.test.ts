/** Window math of the Event log's virtualized list (src/app/virtual.ts). */
import { describe, expect, it } from 'vitest'
import { listWindow, scrollToRow } from '../src/app/virtual.js'

describe('listWindow', () => {
  it('renders only the rows in view plus the overscan, at 10,000 rows', () => {
    const w = listWindow(10_000, 28, 28 * 5000, 560, 8)
    expect(w).toEqual({ start: 4992, end: 5029, offset: 4992 * 28, totalHeight: 280_000 })
    expect(w.end - w.start).toBeLessThan(40)
  })

  it('clamps at the top and the bottom', () => {
    expect(listWindow(10_000, 28, -50, 560, 8)).toMatchObject({ start: 0, end: 29, offset: 0 })
    const bottom = listWindow(10_000, 28, 10_000_000, 560, 8)
    expect(bottom.end).toBe(10_000)
    expect(bottom.start).toBe(10_000 - 20 - 8)
  })

  it('handles an empty list and a list shorter than the viewport', () => {
    expect(listWindow(0, 28, 0, 560)).toEqual({ start: 0, end: 0, offset: 0, totalHeight: 0 })
    expect(listWindow(5, 28, 100, 560)).toEqual({ start: 0, end: 5, offset: 0, totalHeight: 140 })
  })

  it('covers every visible row at every scroll position', () => {
    for (let top = 0; top < 28 * 200; top += 7) {
      const w = listWindow(200, 28, top, 300, 0)
      const firstVisible = Math.floor(Math.min(top, 200 * 28 - 300) / 28)
      const lastVisible = Math.ceil((Math.min(top, 200 * 28 - 300) + 300) / 28) - 1
      expect(w.start).toBeLessThanOrEqual(firstVisible)
      expect(w.end - 1).toBeGreaterThanOrEqual(Math.min(199, lastVisible))
    }
  })
})

describe('scrollToRow', () => {
  it('moves as little as possible to show a row', () => {
    expect(scrollToRow(10, 28, 0, 280)).toBe(28)
    expect(scrollToRow(3, 28, 200, 280)).toBe(84)
    expect(scrollToRow(8, 28, 100, 280)).toBe(100)
  })
})
