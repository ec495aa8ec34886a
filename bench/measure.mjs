// What the tinybench suites share: where the protocol bundle is, and the mean rate of each task.
import { Bench } from 'tinybench'

/** The protocol bundle's directory (`MWP_PROTOCOL_DIR`, else `../shared/protocol`); throws what `locateBundle` says when it is missing. */
export async function bundleDir() {
  const { locateBundle } = await import('@weft/spec/bundle')
  const location = locateBundle()
  if (!location.found) throw new Error(location.reason)
  return location.dir
}

/**
 * Runs `tasks` (`[name, fn]` pairs) in one tinybench Bench and returns each task's mean rate (calls
 * per second) by name. A task that did not complete fails the suite with its error: a rate from a
 * half-run task would be a wrong number, not a slow one. `time` and `warmupTime` are in ms; `log`,
 * when given, hears how many tasks were measured.
 * @param {[string, () => unknown][]} tasks
 * @param {{ time: number, warmupTime: number, log?: (line: string) => void }} options
 * @returns {Promise<Record<string, number>>}
 */
export async function throughput(tasks, { time, warmupTime, log }) {
  const bench = new Bench({ time, warmupTime })
  for (const [name, fn] of tasks) bench.add(name, fn)
  await bench.run()
  const out = {}
  for (const task of bench.tasks) {
    if (task.result.state !== 'completed') throw new Error(`${task.name}: ${task.result.state} ${task.result.error ?? ''}`)
    out[task.name] = task.result.throughput.mean
  }
  log?.(`  measured ${Object.keys(out).length} tasks`)
  return out
}
