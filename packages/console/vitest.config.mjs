import { weftVitest } from '../../vitest.shared.mjs'
export default weftVitest()
