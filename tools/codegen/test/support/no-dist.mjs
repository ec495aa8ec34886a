// Loaded with `node --import` (through NODE_OPTIONS, so child processes inherit it): registers a
// module hook that refuses to load any build output (`<workspace>/dist/`) under the folder named by
// WEFT_NO_DIST_ROOT. A test runs `weft-codegen` under it to prove the bin works on a clone where
// nothing was ever built, without deleting the dist folders other engineers' builds left behind.
import { register } from 'node:module'

const root = process.env.WEFT_NO_DIST_ROOT
if (!root) throw new Error('no-dist.mjs: set WEFT_NO_DIST_ROOT to the repository root')
register('./no-dist-hooks.mjs', import.meta.url, { data: { root } })
