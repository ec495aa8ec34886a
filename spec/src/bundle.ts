/**
 * Locating the normative MissionWeaveProtocol bundle for tests and the conformance tool.
 *
 * The bundle is never copied into the repository. Tests find it through `MWP_PROTOCOL_DIR`, or
 * `../shared/protocol` beside the repository root. Under `CI=true` a missing bundle is a failure;
 * elsewhere tests skip with a message naming the pinned commit to fetch.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The protocol commit Weft is pinned to (`PIN.json` of the bundle). */
export const PINNED_PROTOCOL_COMMIT = 'f7e70a72c76bbeb5014c186cd820aac2112f0dde'

/** Where the bundle is, or why it is not there. */
export type BundleLocation = { readonly found: true; readonly dir: string } | { readonly found: false; readonly dir: string; readonly reason: string }

function repositoryRoot(): string {
  // Walk up from this file to the folder holding the root package.json with workspaces.
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = join(dir, 'package.json')
    if (existsSync(candidate)) {
      try {
        const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { workspaces?: unknown }
        if (Array.isArray(pkg.workspaces)) return dir
      } catch {
        // keep walking: an unreadable package.json is not the root
      }
    }
    const parent = dirname(dir)
    if (parent === dir) return process.cwd()
    dir = parent
  }
}

/**
 * Finds the normative bundle.
 * @param explicit - A directory given on a command line; wins over the environment.
 */
export function locateBundle(explicit?: string): BundleLocation {
  const dir = resolve(explicit ?? process.env['MWP_PROTOCOL_DIR'] ?? join(repositoryRoot(), '..', 'shared', 'protocol'))
  if (existsSync(join(dir, 'conformance', 'manifest.json')) && existsSync(join(dir, 'schemas'))) {
    return { found: true, dir }
  }
  return {
    found: false,
    dir,
    reason: `MissionWeaveProtocol bundle not found at ${dir}. Set MWP_PROTOCOL_DIR to a checkout of ` + `missionweaveprotocol at commit ${PINNED_PROTOCOL_COMMIT}.`,
  }
}

/**
 * The bundle directory for a test file. Returns `undefined` (and the caller skips) when the
 * bundle is absent outside CI; throws under `CI=true`, where a missing bundle is a failure.
 */
export function bundleForTests(): string | undefined {
  const location = locateBundle()
  if (location.found) return location.dir
  if (process.env['CI'] === 'true') throw new Error(location.reason)
  console.warn(`skipping bundle tests: ${location.reason}`)
  return undefined
}

/** Reads and parses a JSON file of the bundle. */
export function readBundleJson<T = unknown>(bundleDir: string, relativePath: string): T {
  return JSON.parse(readFileSync(join(bundleDir, relativePath), 'utf8')) as T
}
