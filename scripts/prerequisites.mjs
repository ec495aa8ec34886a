// What `npm test` needs on the machine, checked before anything runs. A missing prerequisite would otherwise
// show up minutes later as a failing (or, worse, skipped) test far from its cause; here it is one line with
// the command that installs it, and the run stops. The one exception is the protocol bundle outside CI: the
// project's rule is that its tests then skip and say which pinned commit to fetch, so it is a note, not a stop.
import { accessSync, constants, existsSync, readdirSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/** The browser `packages/cli/test/report-browser.test.ts` drives: Debian's package, never a download. */
export const CHROMIUM = '/usr/bin/chromium'

/** Where Debian's postgresql package puts each server version (`scripts/pg-test-server.sh` looks there too). */
export const POSTGRESQL_LIB = '/usr/lib/postgresql'

/** The protocol's repository, as the bundle's PIN.json names it. */
export const PROTOCOL_REPOSITORY = 'https://github.com/missionweaveprotocol/missionweaveprotocol'

/** The oldest Node the workspace supports (`engines` of package.json). */
export const MINIMUM_NODE = '20.19'

/**
 * @typedef {object} Probes  Each answers one question about the machine; tests replace them to simulate a
 *   machine that lacks something.
 * @property {() => string} nodeVersion  the running Node's version, e.g. `20.20.0`
 * @property {() => boolean} dependencies  whether `npm ci` has installed the workspace's packages
 * @property {() => Promise<{ found: boolean, dir: string, commit: string }>} bundle  where the protocol bundle is
 *   looked for, whether it is there, and the pinned commit
 * @property {() => boolean} chromium  whether the browser is installed
 * @property {() => boolean} postgres  whether a PostgreSQL server is at hand (binaries, or `WEFT_PG_URL`)
 * @property {() => string | undefined} sqlite  undefined when better-sqlite3 loads and runs a query, else the error
 */

/**
 * Whether `version` (e.g. `20.20.0`) is at least `minimum` (e.g. `20.19`).
 * @param {string} version
 * @param {string} minimum
 * @returns {boolean}
 */
export function atLeast(version, minimum) {
  const have = version.replace(/^v/, '').split('.').map(Number)
  const need = minimum.split('.').map(Number)
  for (let i = 0; i < need.length; i++) {
    const a = have[i] ?? 0
    const b = need[i] ?? 0
    if (a !== b) return a > b
  }
  return true
}

/**
 * Finds every missing prerequisite of `npm test`, all at once (fixing them one run at a time would be tedious).
 * @param {Probes} probes
 * @param {{ ci: boolean }} options  under CI=true a missing protocol bundle is a failure, elsewhere a note
 * @returns {Promise<{ missing: string[], notes: string[] }>}  one line per missing thing, each ending with the
 *   command that installs it; the notes do not stop the run
 */
export async function checkPrerequisites(probes, { ci }) {
  /** @type {string[]} */
  const missing = []
  /** @type {string[]} */
  const notes = []
  const node = probes.nodeVersion()
  if (!atLeast(node, MINIMUM_NODE)) {
    missing.push(`missing: Node.js ${MINIMUM_NODE} or later (this is ${node}): nvm install 20, or see https://nodejs.org`)
  }
  if (!probes.chromium()) {
    missing.push(`missing: Chromium at ${CHROMIUM} (the HTML report's browser test drives it): apt-get install -y chromium`)
  }
  if (!probes.postgres()) {
    missing.push(`missing: PostgreSQL server binaries (${POSTGRESQL_LIB}/*/bin/initdb; the store-postgres tests start a throwaway server), and WEFT_PG_URL is not set: apt-get install -y postgresql`)
  }
  // Both remaining probes load packages that `npm ci` installs: without them the only useful advice is npm ci.
  if (!probes.dependencies()) {
    missing.push('missing: the npm dependencies (node_modules): npm ci')
    return { missing, notes }
  }
  const sqlite = probes.sqlite()
  if (sqlite !== undefined) {
    // better-sqlite3 has no reachable prebuilt binary: npm ci compiles it, and without a C++ tool chain it cannot.
    missing.push(`missing: a working better-sqlite3 native build (${sqlite.split('\n')[0]}): apt-get install -y build-essential python3 && npm rebuild better-sqlite3`)
  }
  const bundle = await probes.bundle()
  if (!bundle.found) {
    const fetch = `git clone ${PROTOCOL_REPOSITORY} ${bundle.dir} && git -C ${bundle.dir} checkout ${bundle.commit} (or set MWP_PROTOCOL_DIR to such a checkout)`
    if (ci) missing.push(`missing: the protocol bundle at ${bundle.dir} (under CI=true every bundle test must run): ${fetch}`)
    else notes.push(`note: no protocol bundle at ${bundle.dir}, so the bundle tests will skip (under CI=true they fail); to run them: ${fetch}`)
  }
  return { missing, notes }
}

/**
 * The probes of this machine, for the workspace at `root`.
 * @param {string} root  the repository root
 * @returns {Probes}
 */
export function systemProbes(root) {
  return {
    nodeVersion: () => process.versions.node,
    dependencies: () => existsSync(join(root, 'node_modules', '.bin', 'turbo')) && existsSync(join(root, 'node_modules', 'tsx', 'package.json')),
    bundle: async () => {
      // The tests' own lookup (MWP_PROTOCOL_DIR, else ../shared/protocol) and pinned commit, so this check
      // cannot drift from them; tsx loads the TypeScript source, since dist/ does not exist before the build.
      const { tsImport } = await import('tsx/esm/api')
      const spec = await tsImport(pathToFileURL(join(root, 'spec', 'src', 'bundle.ts')).href, import.meta.url)
      const location = spec.locateBundle()
      return { found: location.found, dir: location.dir, commit: spec.PINNED_PROTOCOL_COMMIT }
    },
    chromium: () => {
      try {
        accessSync(CHROMIUM, constants.X_OK)
        return true
      } catch {
        return false
      }
    },
    postgres: () => {
      if ((process.env['WEFT_PG_URL'] ?? '') !== '') return true
      try {
        return readdirSync(POSTGRESQL_LIB).some((version) => existsSync(join(POSTGRESQL_LIB, version, 'bin', 'initdb')))
      } catch {
        return false
      }
    },
    sqlite: () => {
      try {
        // Resolved as @weft/store-sqlite resolves it; a query proves the native part loads, not just the JS.
        const Database = createRequire(join(root, 'packages', 'store-sqlite', 'package.json'))('better-sqlite3')
        const db = new Database(':memory:')
        try {
          db.prepare('select 1').get()
        } finally {
          db.close()
        }
        return undefined
      } catch (error) {
        return error instanceof Error ? error.message : String(error)
      }
    },
  }
}
