/**
 * The simulator's source of decisions: a small, fast pseudo-random generator (mulberry32) keyed
 * by the seed and a stream name. Every fault the simulator injects is drawn from one of these, so
 * a seed names one schedule exactly (ARCHITECTURE, "Time, randomness, stores": no `Math.random`,
 * no wall clock). Identifiers and signatures still come from `seededRandom` streams of the demo.
 * @module
 */
import { createHash } from 'node:crypto'
import { UsageError } from '@weft/codec'

/** A deterministic stream of decisions. Not for secrets. */
export interface Prng {
  /** A number in [0, 1). */
  next(): number
  /** An integer in [min, max]. */
  between(min: number, max: number): number
  /** `true` with probability `p`. */
  chance(p: number): boolean
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T
}

/**
 * A stream for `seed` and `stream`: the same pair always yields the same numbers, and streams of
 * one seed are independent, so a new stream never shifts the draws of another.
 * @example
 * ```ts
 * const faults = createPrng(42, 'schedule')
 * if (faults.chance(0.1)) crashSomeWorker(faults.pick(workers))
 * ```
 */
export function createPrng(seed: number, stream: string): Prng {
  if (!Number.isSafeInteger(seed) || seed < 0) throw new UsageError(`createPrng: seed must be a non-negative integer, got ${String(seed)}`)
  let state = createHash('sha256').update(`weft-simulate\u0000${seed}\u0000${stream}`).digest().readUInt32LE(0)
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
  return {
    next,
    between: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick(items) {
      if (items.length === 0) throw new UsageError('pick: the list is empty')
      return items[Math.floor(next() * items.length)]!
    },
  }
}
