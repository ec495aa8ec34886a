import { weftVitest } from '../../vitest.shared.mjs'

// pg is loaded in the test process (see `requireSafe` in vitest.shared.mjs).
const config = weftVitest({ requireSafe: true })
// One throwaway PostgreSQL server for every test file, unless WEFT_PG_URL names one (CI starts its own).
config.test.globalSetup = ['test/global-setup.ts']
export default config
