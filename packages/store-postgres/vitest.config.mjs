import { weftVitest } from '../../vitest.shared.mjs'

const config = weftVitest()
// Vitest hands the SSR conditions to the test process as node `--conditions`; an `import` among
// them makes node's `require` pick the ESM build of a dual package (pg requires pg-pool), so the
// test process keeps Vite's defaults plus the workspace-source condition.
config.ssr.resolve.conditions = ['@weft/source', 'module', 'node', 'development|production']
// One throwaway PostgreSQL server for every test file, unless WEFT_PG_URL names one (CI starts its own).
config.test.globalSetup = ['test/global-setup.ts']
export default config
