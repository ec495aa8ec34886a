import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LogProofError, type LogHead } from '@weft/authority'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openHeadFile } from './head-file.js'

const hash = (c: string): string => `sha256:${c.repeat(64)}`
let dir = ''
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'weft-heads-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe('the head file', () => {
  it('remembers the highest head of each chain, ignoring a line torn at the end', () => {
    const file = openHeadFile(join(dir, 'a.db'), true)
    const current: LogHead[] = []
    file.record(
      [
        { groupId: 'urn:g:1', sequence: 1, chain: hash('1') },
        { sequence: 1, chain: hash('a') },
      ],
      () => current,
    )
    file.record([{ groupId: 'urn:g:1', sequence: 2, chain: hash('2') }], () => current)
    file.close()
    writeFileSync(file.path, `${readFileSync(file.path, 'utf8')}{"groupId":"urn:g:1","sequence":3,"ch`)
    expect(file.read()).toEqual([
      { groupId: 'urn:g:1', sequence: 2, chain: hash('2') },
      { sequence: 1, chain: hash('a') },
    ])
  })

  it('is rewritten with the current heads once it has grown enough', () => {
    const file = openHeadFile(join(dir, 'a.db'), false, 2)
    const current: LogHead[] = [{ groupId: 'urn:g:1', sequence: 3, chain: hash('3') }]
    for (let n = 1; n <= 3; n++) file.record([{ groupId: 'urn:g:1', sequence: n, chain: hash(String(n)) }], () => current)
    file.close()
    expect(readFileSync(file.path, 'utf8')).toBe(`${JSON.stringify(current[0])}\n`)
  })

  it('refuses a damaged line before the last, and remembers nothing when absent', () => {
    const file = openHeadFile(join(dir, 'a.db'), false)
    expect(file.read()).toEqual([])
    writeFileSync(file.path, `{"sequence":1,"chain":"${hash('a')}"}\nnot json\n`)
    expect(() => file.read()).toThrow(new LogProofError({ subject: `the head file ${file.path}` }, 'line 2 is damaged').message)
  })

  it("takes the database file's mode whatever the umask, appended or rewritten, and owner-only without a database", () => {
    const umask = process.umask(0)
    try {
      const modeOf = (path: string): number => statSync(path).mode & 0o777
      const bare = openHeadFile(join(dir, 'none.db'), false)
      bare.record([{ sequence: 1, chain: hash('a') }], () => [])
      bare.close()
      expect(modeOf(bare.path)).toBe(0o600)
      const db = join(dir, 'a.db')
      writeFileSync(db, '')
      chmodSync(db, 0o640)
      const current: LogHead[] = [{ sequence: 2, chain: hash('b') }]
      const file = openHeadFile(db, false, 1)
      file.record([{ sequence: 1, chain: hash('a') }], () => current)
      expect(modeOf(file.path)).toBe(0o640)
      // The second record rewrites the file through a temporary one: same mode.
      file.record([{ sequence: 2, chain: hash('b') }], () => current)
      file.close()
      expect(modeOf(file.path)).toBe(0o640)
    } finally {
      process.umask(umask)
    }
  })
})
