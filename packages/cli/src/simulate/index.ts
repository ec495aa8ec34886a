/**
 * The seeded fault simulator behind `weft simulate`: small worlds of an Authority, Coordinators
 * and reference Workers on a virtual clock, a fault schedule drawn from each seed, and the §4
 * invariants checked after every step.
 *
 * @example
 * ```ts
 * import { runSimulation, simulationReport } from '@weft/cli'
 *
 * const summary = await runSimulation({ seeds: 200, log: console.log })
 * process.stdout.write(simulationReport(summary))
 * for (const v of summary.violations) console.log(v.replay) // weft simulate --seed S --steps K
 * ```
 * @module
 */
export { runSimulation, simulateSeed, simulateSeeds, simulationReport, replayCommand, worldEvents, DEFAULT_STEPS, REPLAY_EVERY } from './run.js'
export type { SimulationOptions, SimulationSummary, SimulationViolation, SimulationHooks, SeedOptions, SeedResult } from './run.js'
export type { InvariantName, InvariantBreach, ReportedUsage } from './invariants.js'
export type { FaultKind, FaultTally } from './schedule.js'
export type { SimWorld, SimWorkerSlot } from './world.js'

// Library-author surface: the parts a simulator of another world is made of.
export { createInvariantChecker } from './invariants.js'
export type { InvariantChecker } from './invariants.js'
export { createFaultSchedule, FAULT_KINDS } from './schedule.js'
export type { FaultSchedule } from './schedule.js'
export { faultyFeed, linkedTransport } from './faults.js'
export type { FaultyFeed, DeliveryFaultRates, DeliveryTally, SimLink } from './faults.js'
export { createPrng } from './prng.js'
export type { Prng } from './prng.js'
export { createSimWorld, SIM_START, SIM_WORKERS, SIM_COORDINATORS } from './world.js'
