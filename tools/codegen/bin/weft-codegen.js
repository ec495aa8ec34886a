#!/usr/bin/env node
// `weft-codegen [--check] [--root DIR]`. The generator reads the spec as TypeScript sources, so it
// runs from sources too: src/run.ts under tsx, with the `@weft/source` export condition that makes
// `@weft/spec` (and this package) resolve to `src/` instead of `dist/`. A build would be a second,
// possibly stale copy of both: `--check` would then compare the tree against the previous spec,
// and a clone that was never built would have nothing to run. `npm run generate` runs this file.
//
// A child Node process is started because export conditions are fixed when a process starts.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const entry = fileURLToPath(new URL('../src/run.ts', import.meta.url))
const result = spawnSync(
  process.execPath,
  ['--conditions=@weft/source', '--import', import.meta.resolve('tsx'), entry, ...process.argv.slice(2)],
  { stdio: 'inherit' },
)
if (result.error) {
  console.error(`weft-codegen: could not start the generator: ${result.error.message}`)
  process.exit(1)
}
// A generator killed by a signal ends this process the same way, so callers see the signal.
if (result.signal) process.kill(process.pid, result.signal)
process.exit(result.status ?? 1)
