/**
 * Every table `weft-conformance` prints lines up: in the header and in each row, the column
 * separators (` | `) stand exactly above the joints (`-+-`) of the rule under the header. The
 * admission suite prints three tables (evaluations, per expected stage, per expected reason), the
 * last two from one printer with different first headers of different widths.
 */
import { describe, expect, it } from 'vitest'
import { bundleForTests } from '../src/bundle.js'
import { main } from '../src/cli.js'

const dir = bundleForTests()

/** The tables of a plain-text report: blocks whose second line is a rule of dashes and joints. */
function tables(report: string): string[][] {
  return report
    .split('\n\n')
    .map((block) => block.split('\n'))
    .filter((lines) => lines.length >= 2 && /^-+(-\+-+)*$/.test(lines[1]!))
}

/** Positions of `mark` in `line`. */
function positions(line: string, mark: string): number[] {
  return [...line].flatMap((c, i) => (c === mark ? [i] : []))
}

describe.skipIf(!dir)('weft-conformance tables', () => {
  it('put every header and row separator above the joints of the rule, the reason table included', async () => {
    let stdout = ''
    const code = await main(['--bundle', dir ?? '', '--suite', 'admission'], { stdout: (t) => (stdout += t), stderr: () => undefined })
    expect(code).toBe(0)
    const found = tables(stdout)
    // The evaluations, the stages and the reasons.
    expect(found.map((t) => t[0]!.trim().split(' ')[0])).toEqual(['#', 'stage', 'reason'])
    for (const [header, rule, ...rows] of found) {
      const joints = positions(rule!, '+')
      expect(joints.length).toBeGreaterThan(0)
      const misaligned = [header!, ...rows].filter((line) => JSON.stringify(positions(line, '|')) !== JSON.stringify(joints))
      expect(misaligned, `${header}\n${rule}`).toEqual([])
    }
  })
})
