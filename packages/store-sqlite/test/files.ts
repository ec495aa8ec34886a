/** A fresh temporary directory per test for the SQLite files it writes, removed after the test. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach } from 'vitest'

/** Registers the per-test directory; `path(name)` names a file in the current test's directory. */
export function tempFiles(prefix: string): { path(name: string): string } {
  let dir = ''
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), `weft-${prefix}-`))
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))
  return { path: (name) => join(dir, name) }
}
