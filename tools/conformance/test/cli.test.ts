import { describe, expect, it } from 'vitest'
import { bundleForTests } from '../src/bundle.js'
import { main } from '../src/cli.js'

const dir = bundleForTests()

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) })
  return { code, stdout, stderr }
}

describe('weft-conformance arguments', () => {
  it('prints usage for --help and exits 0', async () => {
    const { code, stdout } = await run(['--help'])
    expect(code).toBe(0)
    expect(stdout).toContain('Usage: weft-conformance')
    expect(stdout).toContain('structural')
  })

  it('exits 2 with the reason when the bundle is missing', async () => {
    const { code, stdout, stderr } = await run(['--bundle', '/nonexistent/mwp-bundle'])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toContain('bundle not found at /nonexistent/mwp-bundle')
  })

  it('prints one JSON object for a missing bundle under --json', async () => {
    const { code, stdout } = await run(['--bundle', '/nonexistent/mwp-bundle', '--json'])
    expect(code).toBe(2)
    expect(JSON.parse(stdout)).toMatchObject({ ok: false, bundle: '/nonexistent/mwp-bundle' })
  })

  it('exits 2 on an unknown flag or suite', async () => {
    expect((await run(['--frobnicate'])).code).toBe(2)
    const unknown = await run(['--suite', 'telepathy'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('unknown suite "telepathy"')
  })
})

describe.skipIf(!dir)('weft-conformance against the bundle', () => {
  const bundleDir = dir ?? ''

  it('prints the table and the summary line, exit 0', async () => {
    const { code, stdout } = await run(['--bundle', bundleDir, '--suite', 'structural'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/^ *# \| result \| expected \| schema +\| vector$/m)
    expect(stdout).toMatch(/^ *1 \| PASS +\| valid +\| command\.schema\.json +\| valid command envelope$/m)
    expect(stdout.trimEnd().split('\n').at(-1)).toBe('structural: 58/58 passed (27 valid, 31 invalid)')
  })

  it('prints one JSON object under --json', async () => {
    const { code, stdout } = await run(['--bundle', bundleDir, '--json'])
    expect(code).toBe(0)
    const report = JSON.parse(stdout) as { ok: boolean; suites: { suite: string; summary: unknown; results: unknown[] }[] }
    expect(report.ok).toBe(true)
    expect(report.suites.map((s) => s.suite)).toEqual(['structural', 'cryptography', 'admission'])
    expect(report.suites[0]?.summary).toEqual({ total: 58, passed: 58, failed: 0, expectedFailures: 0, valid: 27, invalid: 31 })
    expect(report.suites[0]?.results).toHaveLength(58)
  })

  it('shows why invalid vectors were rejected under --verbose', async () => {
    const { stdout } = await run(['--bundle', bundleDir, '--verbose'])
    expect(stdout).toMatch(/#\d+ PASS .*: got invalid, expected invalid; \S/)
  })
})
