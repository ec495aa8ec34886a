#!/usr/bin/env node
// `npm run bench -- <suite> [--json]`: builds what the suite imports, runs it, and prints a table
// and (with --json) one JSON line. Suites measure ratios against a baseline in the same run.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

const SUITES = {
  validators: './validators.mjs',
  codec: './codec.mjs',
  authority: './authority.mjs',
  worker: './worker.mjs',
  wire: './wire.mjs',
  demo: './demo.mjs',
  open: './open.mjs',
  soak: './soak.mjs',
  bundles: './bundles.mjs',
  console: './console.mjs',
}
/** Suites that run only when named: they take minutes. */
const ON_DEMAND = new Set(['soak'])
/** Options that take a value; a suite reads its own from `args`. */
const VALUED = new Set(['--seconds'])

const args = process.argv.slice(2)
const json = args.includes('--json')
const names = args.filter((a, i) => !a.startsWith('--') && !VALUED.has(args[i - 1]))
const selected = names.length ? names : Object.keys(SUITES).filter((name) => !ON_DEMAND.has(name))
for (const name of selected) {
  if (!(name in SUITES)) {
    console.error(`unknown suite ${JSON.stringify(name)}; suites: ${Object.keys(SUITES).join(', ')}`)
    process.exit(2)
  }
}

const root = join(import.meta.dirname, '..')
if (!args.includes('--no-build')) {
  console.error('bench: building packages ...')
  const build = spawnSync('npx', ['turbo', 'run', 'build', '--output-logs=errors-only'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
  })
  if (build.status !== 0) process.exit(build.status ?? 1)
}

for (const name of selected) {
  const suite = await import(SUITES[name])
  const result = await suite.run({ json, log: (line) => console.error(line), args })
  console.log(result.table)
  if (json) console.log(JSON.stringify({ suite: name, ...result.summary }))
  // A missed target is reported, not an error: the bench measured what it set out to measure.
  if (result.missed?.length) console.error(`bench ${name}: targets missed: ${result.missed.join('; ')}`)
}
