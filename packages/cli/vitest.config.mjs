import { weftVitest } from '../../vitest.shared.mjs'
// `weft serve --postgres` loads pg in the test process too (see `requireSafe` in vitest.shared.mjs).
export default weftVitest({ requireSafe: true })
