#!/usr/bin/env node
// Runs the built CLI (`npm run build` in tools/conformance first); all logic is in src/cli.ts.
import { main } from '../dist/cli.js'

process.exitCode = await main(process.argv.slice(2))
