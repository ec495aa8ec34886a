/**
 * The drift report of `--check`, in memory: each stale file's diff is a real unified diff from the
 * committed text to the generated one (jsdiff applies it back), bounded per file and in all.
 */
import { applyPatch } from 'diff'
import { describe, expect, it } from 'vitest'
import { driftReport, lineDiff, type Drift } from '../src/index.js'

const numbered = (n: number, tag = ''): string => Array.from({ length: n }, (_, i) => `line ${i + 1}${tag}\n`).join('')

describe('lineDiff', () => {
  it('shows the changed line, committed side as -, generated side as +, with three lines of context', () => {
    const committed = numbered(20)
    const generated = committed.replace('line 10\n', 'line ten\n')
    expect(lineDiff('a/b.ts', committed, generated).split('\n')).toEqual([
      '--- committed/a/b.ts',
      '+++ generated/a/b.ts',
      '@@ -7,7 +7,7 @@',
      ' line 7',
      ' line 8',
      ' line 9',
      '-line 10',
      '+line ten',
      ' line 11',
      ' line 12',
      ' line 13',
    ])
  })

  it('makes one hunk per separate change, leaving unchanged stretches out', () => {
    const committed = numbered(40)
    const generated = committed.replace('line 5\n', 'line five\n').replace('line 35\n', 'line thirty-five\n')
    const diff = lineDiff('x', committed, generated)
    expect(diff.split('\n').filter((l) => l.startsWith('@@'))).toEqual(['@@ -2,7 +2,7 @@', '@@ -32,7 +32,7 @@'])
    expect(diff).not.toContain('line 20')
  })

  it('is a patch that turns the committed text into the generated one, also past the edit-length limit', () => {
    const cases: [string, string][] = [
      [numbered(50), numbered(50).replace('line 7\n', '').replace('line 30\n', 'line 30\nline 30b\n')],
      // every line differs: too long an edit to search, shown as one replaced block
      [`head\n${numbered(3000)}tail\n`, `head\n${numbered(3000, '!')}tail\n`],
      ['', numbered(3)],
      [numbered(3), 'no final newline'],
    ]
    for (const [committed, generated] of cases) {
      expect(applyPatch(committed, lineDiff('f', committed, generated, { maxLines: Infinity }))).toBe(generated)
    }
  })

  it('cuts a long diff after maxLines and counts exactly the lines it left out', () => {
    const committed = `head\n${numbered(3000)}tail\n`
    const generated = `head\n${numbered(3000, '!')}tail\n`
    const full = lineDiff('f', committed, generated, { maxLines: Infinity }).split('\n')
    const cut = lineDiff('f', committed, generated, { maxLines: 10 }).split('\n')
    expect(cut).toHaveLength(2 + 10 + 1)
    expect(cut.slice(0, 12)).toEqual(full.slice(0, 12))
    expect(cut.at(-1)).toBe(`... ${full.length - 12} more lines of this diff left out`)
    // the default bound
    expect(lineDiff('f', committed, generated).split('\n')).toHaveLength(2 + 60 + 1)
  })
})

describe('driftReport', () => {
  const stale = (path: string, lines: number): Drift => ({ path, status: 'stale', diff: Array.from({ length: lines }, (_, i) => `-${i}`).join('\n') })

  it('prints each file, with diffs until the budget is spent, then counts the diffs left out', () => {
    const drift: Drift[] = [stale('a', 40), { path: 'b', status: 'missing', diff: '' }, stale('c', 40), stale('d', 30), { path: 'e', status: 'extra', diff: '' }]
    const report = driftReport(drift, 100).split('\n')
    expect(report.filter((l) => /^(stale|missing|extra): /.test(l))).toEqual(['stale: a', 'missing: b', 'stale: c', 'stale: d', 'extra: e'])
    expect(report.filter((l) => l.startsWith('-'))).toHaveLength(80)
    expect(report.at(-2)).toBe('... the diffs of 1 more files (30 lines) left out')
    expect(report.at(-1)).toBe('')
  })

  it('prints every diff when they fit', () => {
    expect(driftReport([stale('a', 3)])).toBe('stale: a\n-0\n-1\n-2\n')
  })
})
