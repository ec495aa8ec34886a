/**
 * A PostgreSQL server for tests: `WEFT_PG_URL` when set, else a throwaway server started with
 * `scripts/pg-test-server.sh` and stopped by the returned `stop`. A server that cannot start is an
 * error: the tests that need one never skip. Used by this package's global setup and by the
 * `weft serve --postgres` tests of `@weft/cli`.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const script = join(dirname(fileURLToPath(import.meta.url)), '../../../scripts/pg-test-server.sh')

/** The URL of a test server and how to stop it (a no-op for `WEFT_PG_URL`). */
export function testServer(): { readonly url: string; stop(): void } {
  const given = process.env['WEFT_PG_URL']
  if (given !== undefined && given !== '') return { url: given, stop: () => {} }
  const dir = mkdtempSync(join(tmpdir(), 'weft-pg-'))
  let url: string
  try {
    url = execFileSync(script, ['start', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? ''
    throw new Error(`could not start a PostgreSQL test server (set WEFT_PG_URL, or install postgresql): ${stderr || String(error)}`)
  }
  return { url, stop: () => execFileSync(script, ['stop', dir], { stdio: 'ignore' }) }
}

/** Polls `check` until it holds (the test's own timeout bounds the wait): a shared log reaches each process by notification, not at once. */
export async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20))
}
