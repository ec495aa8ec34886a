import { weftVitest } from '../../vitest.shared.mjs'
// test/slow/ runs on its own (`npm run test:slow`): it type-checks whole packages and takes minutes.
export default weftVitest({ include: ['src/**/*.test.ts', 'test/*.test.ts'] })
