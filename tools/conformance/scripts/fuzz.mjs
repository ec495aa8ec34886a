#!/usr/bin/env node
// `npm run fuzz [-- RUNS] [--runs N] [--seed N]`: the differential tests of @weft/validators
// against Ajv with many more runs per schema than `npm test` uses (10000 by default).
import { spawnSync } from 'node:child_process'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')

let parsed
try {
  parsed = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: { runs: { type: 'string' }, seed: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  })
} catch (error) {
  console.error(`fuzz: ${error.message}`)
  process.exit(2)
}
const { values, positionals } = parsed
if (values.help) {
  console.log('Usage: npm run fuzz -- [RUNS] [--runs N] [--seed N]   (runs per schema, default 10000)')
  process.exit(0)
}

const runs = values.runs ?? positionals[0] ?? '10000'
if (!/^[1-9][0-9]*$/.test(runs)) {
  console.error(`fuzz: runs must be a positive integer, got ${JSON.stringify(runs)}`)
  process.exit(2)
}
const env = { ...process.env, WEFT_FUZZ_RUNS: runs }
if (values.seed !== undefined) env.WEFT_FUZZ_SEED = values.seed
console.log(`fuzz: ${runs} runs per schema, seed ${env.WEFT_FUZZ_SEED ?? '(default)'}`)

const result = spawnSync('npx', ['vitest', 'run', '--root', 'packages/validators', 'test/differential.test.ts'], {
  cwd: root,
  env,
  stdio: 'inherit',
  shell: process.platform === 'win32',
})
if (result.error) console.error(`fuzz: ${result.error.message}`)
process.exitCode = result.status ?? 1
