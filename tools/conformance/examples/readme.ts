// The README's example of @weft/conformance, run by the release check (tools/release-check),
// which points MWP_PROTOCOL_DIR at the pinned protocol bundle.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { PINNED_MANIFEST_COUNTS, PINNED_PROTOCOL_COMMIT } from '@weft/conformance'

const protocolDir = process.env['MWP_PROTOCOL_DIR']
assert.ok(protocolDir, 'set MWP_PROTOCOL_DIR to the MissionWeaveProtocol bundle')

// Record what the README block prints, so the checks below can hold it to its comments.
const printed: unknown[][] = []
const print = console.log
console.log = (...args: unknown[]) => {
  printed.push(args)
  print(...args)
}

import { runStructural, locateBundle } from '@weft/conformance'

const bundle = locateBundle() // MWP_PROTOCOL_DIR, else ../shared/protocol from the workspace root (or cwd)
if (bundle.found) {
  const { summary } = runStructural(bundle.dir)
  console.log(`${summary.passed}/${summary.total}`) // 58/58
} else {
  console.log(bundle.reason) // where it looked, and the pinned commit to fetch
}

console.log = print

// The bundle came from the environment, and every vector passed.
assert.ok(bundle.found, 'bundle.found')
assert.equal(bundle.dir, resolve(protocolDir))
assert.deepEqual(printed, [['58/58']])
const run = runStructural(bundle.dir)
assert.equal(run.ok, true)
assert.deepEqual(run.problems, [])
assert.deepEqual(run.summary, { ...PINNED_MANIFEST_COUNTS, passed: 58, failed: 0, expectedFailures: 0 })
assert.ok(run.results.every((r) => r.pass))

// Where there is no bundle, the location says why, naming the pinned commit.
const empty = mkdtempSync(join(tmpdir(), 'weft-no-bundle-'))
try {
  const missing = locateBundle(empty)
  assert.ok(!missing.found)
  assert.ok(missing.reason.includes(PINNED_PROTOCOL_COMMIT) && missing.reason.includes(empty))
} finally {
  rmSync(empty, { recursive: true, force: true })
}
