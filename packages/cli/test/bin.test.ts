/**
 * The `weft` command in memory: help (also per command), argument errors, the demo with `--yes` and `--report`,
 * the interactive MissionOwner prompt, and delegation to `weft-conformance`.
 */
import { FAULT_NAMES } from '../src/demo/faults.js'
import { CHECK_NAMES } from '../src/demo/verify.js'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { EXIT, main, type CliIo } from '../src/bin.js'

function io(overrides: Partial<CliIo> = {}): CliIo & { out: string[]; err: string[] } {
  const out: string[] = []
  const err: string[] = []
  return { stdout: (t) => out.push(t), stderr: (t) => err.push(t), interactive: false, out, err, ...overrides }
}

describe('weft', () => {
  it('prints usage for help and no command, and refuses unknown commands and options', async () => {
    for (const argv of [[], ['help'], ['--help']]) {
      const x = io()
      expect(await main(argv, x)).toBe(EXIT.ok)
      expect(x.out.join('')).toContain('Usage: weft <command>')
    }
    const unknown = io()
    expect(await main(['deploy'], unknown)).toBe(EXIT.usage)
    expect(unknown.err.join('')).toContain('unknown command deploy')
    const badOption = io()
    expect(await main(['demo', '--colour'], badOption)).toBe(EXIT.usage)
    const badSeed = io()
    expect(await main(['demo', '--seed', 'x'], badSeed)).toBe(EXIT.usage)
    expect(badSeed.err.join('')).toContain('--seed must be a non-negative integer')
  })

  it("prints a command's own usage for --help or -h after it, and runs nothing", async () => {
    const expected: Record<string, string> = { demo: '--faults', simulate: '--steps K', serve: '--tls-cert', inspect: '--last N' }
    for (const [command, option] of Object.entries(expected)) {
      for (const flag of ['--help', '-h']) {
        const x = io()
        expect(await main([command, '--seed', 'x', flag], x), `${command} ${flag}`).toBe(EXIT.ok)
        const text = x.out.join('')
        expect(text).toContain(`Usage: weft ${command} [options]`)
        expect(text).toContain(option)
        // Only its own part: no other command's options.
        for (const other of Object.keys(expected).filter((c) => c !== command)) expect(text).not.toContain(expected[other])
        expect(x.err).toEqual([])
      }
    }
  })

  it('runs the demo with --yes, prints progress and a summary, writes the report and exits 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'weft-cli-'))
    try {
      const x = io()
      expect(await main(['demo', '--yes', '--report', dir], x)).toBe(EXIT.ok)
      const text = x.out.join('')
      expect(text).toMatch(/\+00:00 {2}\[checkout\] +offer {6}Payment retry requirements offered to ada/)
      expect(text).toContain('preempted at a safe checkpoint')
      expect(text).toContain('Both Missions were approved.')
      const report = JSON.parse(await readFile(join(dir, 'demo-result.json'), 'utf8')) as { approved: boolean; timeline: unknown[]; seed: number }
      expect(report).toMatchObject({ approved: true, seed: 1 })
      expect(report.timeline.length).toBeGreaterThan(10)
      const page = await readFile(join(dir, 'index.html'), 'utf8')
      expect(page).toMatch(/^<!DOCTYPE html>/i)
      expect(page).toContain('Payment retry requirements')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('runs the failure suite with --faults: a checklist on the terminal and every injection in the report', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'weft-cli-faults-'))
    try {
      const x = io()
      expect(await main(['demo', '--faults', '--yes', '--quiet', '--report', dir], x)).toBe(EXIT.ok)
      const text = x.out.join('')
      expect(text).toContain('Both Missions were approved.')
      const page = await readFile(join(dir, 'index.html'), 'utf8')
      for (const name of FAULT_NAMES) expect(page).toContain(name)
      for (const check of CHECK_NAMES) expect(page).toContain(check)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('asks the MissionOwner on a terminal: a change request, then approvals', async () => {
    const answers = ['c', 'Add an audit log of retries.', 'y', 'y', 'y']
    const asked: string[] = []
    const x = io({
      interactive: true,
      question: async (prompt) => {
        asked.push(prompt)
        return answers.shift() ?? 'y'
      },
    })
    expect(await main(['demo', '--quiet', '--no-report'], x)).toBe(EXIT.ok)
    // The first submission to reach the owner is refused at the terminal; the search Mission also gets its scripted round.
    expect(asked.filter((p) => p.startsWith('Approve?')).length).toBeGreaterThanOrEqual(3)
    expect(asked).toContain('What must change? ')
    expect(x.out.join('')).toContain('asks for approval of revision')
  })

  it('delegates conformance to weft-conformance with the same arguments', async () => {
    const calls: [string, readonly string[]][] = []
    const ok = io({ run: async (command, args) => (calls.push([command, args]), 0) })
    expect(await main(['conformance', '--suite', 'structural'], ok)).toBe(EXIT.ok)
    expect(calls).toEqual([['weft-conformance', ['--suite', 'structural']]])
    const missing = io({ run: () => Promise.reject(new Error('spawn weft-conformance ENOENT')) })
    expect(await main(['conformance'], missing)).toBe(EXIT.usage)
    expect(missing.err.join('')).toContain('install @weft/conformance')
  })
})
