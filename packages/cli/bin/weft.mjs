#!/usr/bin/env node
// The `weft` command. All logic is in src/bin.ts. After `npm run build` this runs dist/; in a
// workspace checkout that was not built yet it runs the TypeScript sources through tsx instead.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const built = new URL('../dist/bin.js', import.meta.url)
if (existsSync(fileURLToPath(built))) {
  const { main } = await import(built.href)
  process.exitCode = await main(process.argv.slice(2))
} else {
  const source = fileURLToPath(new URL('../src/bin-run.ts', import.meta.url))
  const child = spawn(process.execPath, ['--conditions=@weft/source', '--import', 'tsx', source, ...process.argv.slice(2)], { stdio: 'inherit' })
  // `weft serve` shuts down gracefully on SIGINT/SIGTERM: pass them on to the process doing the work.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
  child.once('error', (error) => {
    process.stderr.write(`weft: dist/ is missing and tsx could not run the sources (${error.message}); run npm run build first\n`)
    process.exitCode = 2
  })
  child.once('exit', (code, signal) => {
    process.exitCode = code ?? (signal === null ? 1 : 128)
  })
}
