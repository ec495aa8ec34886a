/**
 * Window math of a virtualized list with fixed row height: which rows a scroll position shows, so
 * the Event log keeps only those in the DOM however long the Group's history grows (§16: a
 * Group's full history is replayed to an owner). No DOM here.
 * @module
 */

/** The rows to render and where they sit. */
export interface ListWindow {
  /** The first row index to render (inclusive). */
  readonly start: number
  /** One past the last row index to render. */
  readonly end: number
  /** The pixel offset of row `start` from the top of the list. */
  readonly offset: number
  /** The height of the whole list in pixels. */
  readonly totalHeight: number
}

/**
 * The window of rows visible at `scrollTop` in a viewport of `viewportHeight` pixels, plus
 * `overscan` rows on each side (so keyboard scrolling never shows a blank row), clamped to the list.
 */
export function listWindow(count: number, rowHeight: number, scrollTop: number, viewportHeight: number, overscan = 8): ListWindow {
  const rows = Math.max(0, Math.floor(count))
  const height = rowHeight > 0 ? rowHeight : 1
  const totalHeight = rows * height
  const top = Math.min(Math.max(0, scrollTop), Math.max(0, totalHeight - Math.max(0, viewportHeight)))
  const first = Math.floor(top / height)
  const visible = Math.ceil(Math.max(0, viewportHeight) / height) + 1
  const start = Math.max(0, first - overscan)
  const end = Math.min(rows, first + visible + overscan)
  return { start, end: Math.max(start, end), offset: start * height, totalHeight }
}

/**
 * The `scrollTop` that brings row `index` into view from `scrollTop`, moving as little as possible
 * (unchanged when the row is already fully visible).
 */
export function scrollToRow(index: number, rowHeight: number, scrollTop: number, viewportHeight: number): number {
  const top = index * rowHeight
  const bottom = top + rowHeight
  if (top < scrollTop) return top
  if (bottom > scrollTop + viewportHeight) return Math.max(0, bottom - viewportHeight)
  return scrollTop
}
