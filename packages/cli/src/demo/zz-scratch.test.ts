import { it } from 'vitest'
import { runDemo } from './run.js'
import { verifyRun } from './verify.js'
it('x', async () => {
  const { world } = await runDemo({ seed: 1 })
  const t = performance.now()
  const v = verifyRun({ world })
  console.log(performance.now() - t, JSON.stringify(v, null, 1))
})
