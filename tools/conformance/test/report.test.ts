import { describe, expect, it } from 'vitest'
import { renderTable } from '../src/report.js'

describe('renderTable', () => {
  it('aligns columns, right-aligns numbers and leaves the last column unpadded', () => {
    const text = renderTable(
      [{ header: '#', align: 'right' }, { header: 'result' }, { header: 'name' }],
      [
        ['1', 'PASS', 'short'],
        ['10', 'XFAIL', 'a longer name'],
      ],
    )
    expect(text.split('\n')).toEqual([' # | result | name', '---+--------+--------------', ' 1 | PASS   | short', '10 | XFAIL  | a longer name'])
  })

  it('renders a header and rule for no rows', () => {
    expect(renderTable([{ header: 'a' }, { header: 'bb' }], [])).toBe('a | bb\n--+---')
  })
})
