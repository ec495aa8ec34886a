import { weftVitest } from '../../vitest.shared.mjs'
export default weftVitest({ testTimeout: 600000 })
