/**
 * Provides the tests with a PostgreSQL URL: `WEFT_PG_URL` when set, else a throwaway server started
 * with `scripts/pg-test-server.sh` for this run and stopped after it. A server that cannot start
 * fails the run: these tests never skip.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string
  }
}

const script = join(dirname(fileURLToPath(import.meta.url)), '../../../scripts/pg-test-server.sh')

export default function setup(project: TestProject): (() => void) | undefined {
  const given = process.env['WEFT_PG_URL']
  if (given !== undefined && given !== '') {
    project.provide('pgUrl', given)
    return undefined
  }
  const dir = mkdtempSync(join(tmpdir(), 'weft-pg-'))
  let url: string
  try {
    url = execFileSync(script, ['start', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? ''
    throw new Error(`could not start a PostgreSQL test server (set WEFT_PG_URL, or install postgresql): ${stderr || String(error)}`)
  }
  project.provide('pgUrl', url)
  return () => {
    execFileSync(script, ['stop', dir], { stdio: 'ignore' })
  }
}
