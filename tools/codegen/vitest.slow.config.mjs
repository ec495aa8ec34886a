import { weftVitest } from '../../vitest.shared.mjs'

// `npm run test:slow`: the tests of test/slow/, kept out of the default suite for their length.
// They report to the console only, so the JSON report of the default suite is left as it was.
const config = weftVitest({ include: ['test/slow/**/*.test.ts'], testTimeout: 600_000 })
export default { ...config, test: { ...config.test, reporters: ['default'], outputFile: undefined } }
