// Demo benchmark (`npm run bench -- demo [--json]`): wall time of `weft demo --faults --yes` as a
// user runs it (a fresh process of the built CLI), against the same CLI's start-up alone
// (`weft help`) in the same run, and wall time of `weft simulate --seeds 1000` (in process).
// Targets: the demo with faults under 3 s (the reference proof of concept takes about 16 s on
// this machine); 1,000 simulated seeds under 2 minutes with no invariant violation.
// WEFT_BENCH_SEEDS sets the simulated seeds (default 1000) for quicker local runs.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { runSimulation } from '@weft/cli'
import { median, table } from './table.mjs'

const ROUNDS = 3
const SEEDS = Number(process.env.WEFT_BENCH_SEEDS ?? 1000)
const TARGETS = { demoFaultsSeconds: 3, simulateSecondsPer1000: 120 }
const bin = join(import.meta.dirname, '..', 'packages', 'cli', 'bin', 'weft.mjs')

/** Wall seconds of one `weft` process; throws when it fails. */
function timed(args) {
  const started = performance.now()
  const run = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' })
  const seconds = (performance.now() - started) / 1000
  if (run.status !== 0) throw new Error(`weft ${args.join(' ')} exited ${run.status}: ${run.stderr || run.stdout}`)
  return seconds
}

/** @param {{ log: (line: string) => void }} options */
export async function run({ log }) {
  const demo = []
  const startup = []
  for (let i = 0; i < ROUNDS; i++) {
    startup.push(timed(['help']))
    demo.push(timed(['demo', '--faults', '--yes', '--quiet', '--no-report']))
    log(`demo: round ${i + 1} of ${ROUNDS}`)
  }
  log(`demo: simulating ${SEEDS} seeds`)
  const sim = await runSimulation({ seeds: SEEDS })
  const m = { demo: median(demo), startup: median(startup), simulate: sim.wallMs / 1000 }
  const missed = []
  if (m.demo >= TARGETS.demoFaultsSeconds) missed.push(`weft demo --faults --yes ${m.demo.toFixed(2)} s >= ${TARGETS.demoFaultsSeconds} s`)
  const budget = (TARGETS.simulateSecondsPer1000 * SEEDS) / 1000
  if (m.simulate >= budget) missed.push(`weft simulate --seeds ${SEEDS} ${m.simulate.toFixed(1)} s >= ${budget} s`)
  if (sim.violations.length > 0) missed.push(`${sim.violations.length} invariant violation(s), first: ${sim.violations[0].replay}`)
  const rows = [
    ['weft demo --faults --yes, wall (s)', m.demo.toFixed(2), m.startup.toFixed(2), `${(m.demo / m.startup).toFixed(2)}x`, `< ${TARGETS.demoFaultsSeconds}`],
    ['weft help, CLI start-up alone, baseline (s)', m.startup.toFixed(2), '', '', ''],
    [`weft simulate --seeds ${SEEDS}, wall (s)`, m.simulate.toFixed(1), '', '', `< ${budget}`],
    [`  invariant violations / Missions approved`, `${sim.violations.length} / ${sim.approved} of ${sim.missions}`, '', '', '0'],
  ]
  const summary = {
    demoFaultsSeconds: +m.demo.toFixed(3),
    cliStartupSeconds: +m.startup.toFixed(3),
    demoVsStartup: +(m.demo / m.startup).toFixed(3),
    simulateSeeds: SEEDS,
    simulateSeconds: +m.simulate.toFixed(2),
    simulateEvents: sim.eventsTotal,
    violations: sim.violations.length,
    missionsApproved: sim.approved,
    missions: sim.missions,
    targets: TARGETS,
    targetsMet: missed.length === 0,
    missed,
  }
  return { table: table(['demo', 'weft', 'baseline', 'ratio', 'target'], rows), summary, missed }
}
