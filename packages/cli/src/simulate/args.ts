/**
 * The numbers of `weft simulate --seeds N --seed S --steps K`, read strictly: each is a whole
 * number written in decimal digits, so `abc`, `1.5`, `1e3` or an empty value are refused with what
 * the option means rather than passed on as `NaN` or a surprise.
 * @module
 */
import { UsageError } from '@weft/codec'

/** The command-line text of the options (parseArgs values). */
export interface SimulateFlags {
  readonly seeds?: string | undefined
  readonly seed?: string | undefined
  readonly steps?: string | undefined
}

/** What the flags ask `runSimulation` for. */
export interface SimulateNumbers {
  readonly seeds: number
  readonly firstSeed?: number
  readonly steps?: number
}

/** How many seeds run without `--seeds` (one when `--seed` names a seed to replay). */
const DEFAULT_SEEDS = 100

/** `text` as a whole number from `least` up, or a UsageError saying what `flag` is. */
function whole(text: string, flag: string, least: number, meaning: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : Number.NaN
  if (!Number.isSafeInteger(n) || n < least) throw new UsageError(`simulate: ${flag} is ${meaning}, a whole number from ${least} up; got ${JSON.stringify(text)}`)
  return n
}

/**
 * Reads `--seeds`, `--seed` and `--steps`.
 * @throws UsageError naming the option, what it counts and the text given, e.g.
 * `simulate: --seeds is how many seeds to run, a whole number from 1 up; got "abc"`.
 */
export function simulateNumbers(flags: SimulateFlags): SimulateNumbers {
  const seeds = flags.seeds === undefined ? (flags.seed === undefined ? DEFAULT_SEEDS : 1) : whole(flags.seeds, '--seeds', 1, 'how many seeds to run')
  return {
    seeds,
    ...(flags.seed === undefined ? {} : { firstSeed: whole(flags.seed, '--seed', 0, 'the seed to run first (a failing run prints the one to replay)') }),
    ...(flags.steps === undefined ? {} : { steps: whole(flags.steps, '--steps', 1, 'how many steps each seed runs') }),
  }
}
