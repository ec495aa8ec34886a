// Shared vitest settings: every package's tests run against the TypeScript sources of its
// workspace dependencies (the `@weft/source` export condition), so no build is needed to test.
// Each run also writes a JSON report to `.reports/` that `scripts/test.mjs` sums into the
// closing `N passed, N failed` line.
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const conditions = ['@weft/source', 'import', 'module', 'node', 'default']
const root = dirname(fileURLToPath(import.meta.url))

// Vitest hands the SSR conditions to the test process as node `--conditions`; an `import` among
// them makes node's `require` pick the ESM build of a dual package (pg requires pg-pool and fails
// with "Class extends value [object Module]"), so packages whose tests load such a package in
// process keep Vite's defaults plus the workspace-source condition (`requireSafe`).
const requireSafeConditions = ['@weft/source', 'module', 'node', 'development|production']

/** @param {{ include?: string[], testTimeout?: number, requireSafe?: boolean }} [options] */
export function weftVitest(options = {}) {
  const pkg = basename(process.cwd())
  return defineConfig({
    resolve: { conditions },
    ssr: { resolve: { conditions: options.requireSafe === true ? requireSafeConditions : conditions, externalConditions: ['@weft/source'] } },
    test: {
      include: options.include ?? ['src/**/*.test.ts', 'test/**/*.test.ts'],
      testTimeout: options.testTimeout ?? 60_000,
      hookTimeout: 120_000,
      pool: 'forks',
      reporters: ['default', 'json'],
      outputFile: { json: join(root, '.reports', `${pkg}.json`) },
    },
  })
}
