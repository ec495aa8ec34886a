/**
 * `weft simulate`: the seeded fault simulator. Each seed builds a small world (an Authority, two
 * Missions with their Coordinators, three reference Workers, all on one virtual clock) and runs
 * it for a number of steps under a fault schedule drawn from the seed: lost, repeated and
 * reordered deliveries, cut links, answers lost after the Command was applied, requests delivered
 * twice, Worker crashes with and without local state, clock jumps past offer, execution and
 * ownership expiry, Coordinator replacement and two Workers accepting one offer at once. After
 * every step the §4 invariants are checked ({@link createInvariantChecker});
 * the first breach ends the seed and is reported with the command that replays it.
 *
 * A seed is a pure function of its number: same seed, same Events, byte for byte, and a run cut
 * short with `--steps` replays the same prefix.
 * @module
 */
import { UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import { createInvariantChecker, type InvariantBreach, type InvariantName } from './invariants.js'
import { createPrng } from './prng.js'
import { addTally, createFaultSchedule, emptyTally, type FaultKind, type FaultTally } from './schedule.js'
import { createSimWorld, type SimWorld } from './world.js'

/** Steps per seed unless told otherwise. */
export const DEFAULT_STEPS = 120

/**
 * A full replay (`fold(log)` deep-equal to the live state) runs every this many steps, and once
 * more when a seed ends. A seed usually finishes both Missions in 40 to 70 steps, so it replays
 * three or four times; the replays are then about a tenth of its cost, and a thousand seeds take
 * about 80 s of CPU (`weft simulate --seeds 1000`: 92 s wall on two busy cores), while a state
 * corrupted outside the log is still caught within twenty steps.
 */
export const REPLAY_EVERY = 20

/** A broken invariant, where it broke, and how to see it again. */
export interface SimulationViolation {
  readonly seed: number
  /** The step after which the check failed (1-based). */
  readonly step: number
  readonly invariant: InvariantName
  readonly detail: string
  /** The command that replays exactly this seed up to this step. */
  readonly replay: string
}

/** Seams for tests: called inside the step loop with the whole world. */
export interface SimulationHooks {
  /** After a step's actions, before its invariant checks (e.g. a test that corrupts the state on purpose). */
  afterStep?(world: SimWorld, step: number): void | Promise<void>
}

/** Options of {@link simulateSeed}. */
export interface SeedOptions {
  /** Steps to run at most; the seed ends earlier when every Mission is terminal. Default {@link DEFAULT_STEPS}. */
  readonly steps?: number
  readonly hooks?: SimulationHooks
  /** Return the world (its runtimes stopped) with the result, for inspection. Default `false`. */
  readonly keepWorld?: boolean
}

/** What one seed did. */
export interface SeedResult {
  readonly seed: number
  /** Steps actually run. */
  readonly steps: number
  readonly violation?: SimulationViolation
  /** Events in the log across every Group and the Organization. */
  readonly events: number
  /** Missions of the world. */
  readonly missions: number
  /** Missions that reached `approved`. */
  readonly approved: number
  readonly faults: FaultTally
  /** Present with {@link SeedOptions.keepWorld}. */
  readonly world?: SimWorld
}

/** Options of {@link runSimulation}. */
export interface SimulationOptions {
  /** How many seeds to run. */
  readonly seeds: number
  /** The first seed; the run covers `firstSeed` … `firstSeed + seeds - 1`. Default 1. */
  readonly firstSeed?: number
  /** Steps per seed. Default {@link DEFAULT_STEPS}. */
  readonly steps?: number
  /** Receives one line per violation and a progress line every hundred seeds. */
  readonly log?: (line: string) => void
  readonly hooks?: SimulationHooks
}

/** What a simulation run found. */
export interface SimulationSummary {
  readonly seeds: number
  readonly firstSeed: number
  readonly steps: number
  readonly violations: readonly SimulationViolation[]
  /** Events appended across every seed. */
  readonly eventsTotal: number
  /** Missions across every seed, and how many of them were approved within the steps. */
  readonly missions: number
  readonly approved: number
  readonly faults: FaultTally
  /** Wall time of the whole run in milliseconds (measured, never used to decide anything). */
  readonly wallMs: number
}

/** The command that replays `seed` up to `steps`. */
export function replayCommand(seed: number, steps: number): string {
  return `weft simulate --seed ${seed} --steps ${steps}`
}

function positive(value: number | undefined, fallback: number, name: string): number {
  const n = value ?? fallback
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`simulate: ${name} must be a positive integer, got ${String(value)}`)
  return n
}

/** Every Event of the world's log: the Organization's, then each Group's in sequence order. */
export function worldEvents(world: SimWorld): Event[] {
  return [...world.authority.organizationEvents(), ...[...world.authority.state.groups.keys()].flatMap((g) => world.authority.events(g))]
}

/**
 * Runs one seed.
 * @throws UsageError for a negative or fractional seed, or a non-positive step count.
 * @example
 * ```ts
 * const { violation } = await simulateSeed(17, { steps: 60 })
 * if (violation) console.log(violation.invariant, violation.replay)
 * ```
 */
export async function simulateSeed(seed: number, options: SeedOptions = {}): Promise<SeedResult> {
  if (!Number.isSafeInteger(seed) || seed < 0) throw new UsageError(`simulate: a seed is a non-negative integer, got ${String(seed)}`)
  const steps = positive(options.steps, DEFAULT_STEPS, 'steps')
  const world = await createSimWorld(seed)
  const schedule = createFaultSchedule(world, createPrng(seed, 'schedule'))
  const invariants = createInvariantChecker(world.authority, world.reportedUsage)
  const breachAt = (step: number, breach: InvariantBreach): SimulationViolation => ({ seed, step, ...breach, replay: replayCommand(seed, step) })
  let violation: SimulationViolation | undefined
  let step = 0
  let replayedAt = 0
  while (step < steps && violation === undefined && !world.finished()) {
    step++
    const before = world.commits()
    const fault: FaultKind | undefined = await schedule.before(step)
    await world.round(() => schedule.midRound())
    // A quiet step lets virtual time move on; a step with a clock jump already moved it.
    if (world.commits() === before && fault?.startsWith('clock-jump') !== true) await world.advanceQuietly()
    await options.hooks?.afterStep?.(world, step)
    const stuck = world.stuck()
    const diverged = schedule.tally()['duplicate-submit-diverged']
    let breach: InvariantBreach | undefined =
      stuck.length > 0
        ? { invariant: 'actors-return', detail: `the round of ${stuck.join(', ')} never returned` }
        : diverged > 0
          ? { invariant: 'action-applied-once', detail: `a request the network delivered twice got two different answers (${diverged} so far)` }
          : invariants.check()
    if (breach === undefined && step % REPLAY_EVERY === 0) {
      replayedAt = step
      breach = invariants.replay()
    }
    if (breach !== undefined) violation = breachAt(step, breach)
  }
  if (violation === undefined && replayedAt !== step) {
    const breach = invariants.check() ?? invariants.replay()
    if (breach !== undefined) violation = breachAt(step, breach)
  }
  await world.close()
  const events = world.authority.organizationEvents().length + [...world.authority.state.groups.values()].reduce((n, g) => n + g.head, 0)
  const approved = world.missions.filter((p) => world.authority.group(p.groupId)?.mission.state === 'approved').length
  return {
    seed,
    steps: step,
    events,
    missions: world.missions.length,
    approved,
    faults: schedule.tally(),
    ...(violation === undefined ? {} : { violation }),
    ...(options.keepWorld === true ? { world } : {}),
  }
}

/**
 * Runs `options.seeds` seeds one after the other and sums what they found.
 * @throws UsageError on a non-positive seed count or step count, or a negative first seed.
 * @example
 * ```ts
 * const summary = await runSimulation({ seeds: 1000, log: console.log })
 * process.exitCode = summary.violations.length === 0 ? 0 : 1
 * ```
 */
export async function runSimulation(options: SimulationOptions): Promise<SimulationSummary> {
  const seeds = positive(options.seeds, 0, 'seeds')
  const firstSeed = options.firstSeed ?? 1
  if (!Number.isSafeInteger(firstSeed) || firstSeed < 0) throw new UsageError(`simulate: the first seed must be a non-negative integer, got ${String(options.firstSeed)}`)
  const steps = positive(options.steps, DEFAULT_STEPS, 'steps')
  const started = performance.now()
  const violations: SimulationViolation[] = []
  const faults = emptyTally()
  let eventsTotal = 0
  let missions = 0
  let approved = 0
  for (let seed = firstSeed; seed < firstSeed + seeds; seed++) {
    const result = await simulateSeed(seed, { steps, ...(options.hooks === undefined ? {} : { hooks: options.hooks }) })
    eventsTotal += result.events
    missions += result.missions
    approved += result.approved
    addTally(faults, result.faults)
    if (result.violation !== undefined) {
      const v = result.violation
      violations.push(v)
      options.log?.(`seed ${v.seed}: invariant ${v.invariant} broken at step ${v.step}: ${v.detail}\n  replay: ${v.replay}`)
    }
    const done = seed - firstSeed + 1
    if (done % 100 === 0 && done < seeds) options.log?.(`${done}/${seeds} seeds, ${violations.length} violation(s)`)
  }
  return { seeds, firstSeed, steps, violations, eventsTotal, missions, approved, faults, wallMs: Math.round(performance.now() - started) }
}

/**
 * Bench hook (`npm run bench -- demo`): runs seeds 1 … `n` with the default steps and returns
 * the wall time in milliseconds. It measures; whether the seeds kept the invariants is
 * {@link runSimulation}'s to report.
 */
export async function simulateSeeds(n: number): Promise<number> {
  return (await runSimulation({ seeds: n })).wallMs
}

/**
 * The closing text of a run, as `weft simulate` prints it: seeds and steps, violations, Events,
 * approvals, the faults injected by kind and the wall time.
 */
export function simulationReport(summary: SimulationSummary): string {
  const last = summary.firstSeed + summary.seeds - 1
  const range = summary.seeds === 1 ? `seed ${summary.firstSeed}` : `${summary.seeds} seeds (${summary.firstSeed}–${last})`
  const faults = Object.entries(summary.faults)
    .filter(([, n]) => n > 0)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ')
  return [
    `${range}, up to ${summary.steps} steps each: ${summary.violations.length} invariant violation(s)`,
    `${summary.eventsTotal} Events, ${summary.approved} of ${summary.missions} Missions approved`,
    `faults: ${faults || 'none'}`,
    `${summary.wallMs} ms wall time`,
    '',
  ].join('\n')
}
