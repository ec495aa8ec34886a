// The tests of the repository scripts, run by `npm test` (scripts/test.mjs) from this folder, so the shared
// config names their report `.reports/scripts.json`.
import { weftVitest } from '../vitest.shared.mjs'

export default weftVitest({ include: ['*.test.mjs'] })
