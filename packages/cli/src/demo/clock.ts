/**
 * Virtual time and seeded randomness for the demo (ARCHITECTURE, "Time, randomness, stores"):
 * every actor reads one {@link VirtualClock}, executors wait on it instead of the wall clock, and
 * every identifier is drawn from a {@link seededRandom} stream, so a run with the same seed is the
 * same run, Event for Event, and a day of simulated work takes a fraction of a second.
 * @module
 */
import { createHash } from 'node:crypto'
import { UsageError } from '@weft/codec'
import type { Clock, RandomSource } from '@weft/codec/time'

/**
 * A {@link Clock} that only moves when its owner moves it, with timers executors can wait on. It
 * is a `Clock` as it is: pass it as the `clock` of an Authority, a client, a Worker or a Coordinator.
 */
export interface VirtualClock extends Clock {
  /** Epoch milliseconds of virtual now. */
  now(): number
  /** Resolves once the clock has been moved at least `ms` past now. */
  sleep(ms: number): Promise<void>
  /** When the earliest pending timer is due, or `undefined` when none waits. */
  nextDueMs(): number | undefined
  /**
   * Moves the clock to `ms` (never backwards) and resolves every timer due by then, earliest
   * first. Returns how many timers fired.
   */
  advanceTo(ms: number): number
}

interface Timer {
  readonly dueMs: number
  readonly order: number
  readonly resolve: () => void
}

/**
 * A virtual clock starting at `startMs`.
 * @example
 * ```ts
 * const clock = createVirtualClock(Date.parse('2026-07-15T08:00:00Z'))
 * const done = clock.sleep(60_000)
 * clock.advanceTo(clock.now() + 60_000) // `done` resolves
 * ```
 */
export function createVirtualClock(startMs: number): VirtualClock {
  if (!Number.isSafeInteger(startMs)) throw new UsageError('createVirtualClock: startMs must be an integer of epoch milliseconds')
  let nowMs = startMs
  let order = 0
  const timers: Timer[] = []
  return {
    now: () => nowMs,
    sleep(ms) {
      if (!(Number.isFinite(ms) && ms >= 0)) throw new UsageError(`sleep: ${String(ms)} is not a duration in milliseconds`)
      return new Promise<void>((resolve) => {
        timers.push({ dueMs: nowMs + ms, order: order++, resolve })
      })
    },
    nextDueMs() {
      let due: number | undefined
      for (const t of timers) if (due === undefined || t.dueMs < due) due = t.dueMs
      return due
    },
    advanceTo(ms) {
      if (ms > nowMs) nowMs = ms
      const due = timers.filter((t) => t.dueMs <= nowMs).sort((a, b) => a.dueMs - b.dueMs || a.order - b.order)
      for (const t of due) timers.splice(timers.indexOf(t), 1)
      for (const t of due) t.resolve()
      return due.length
    },
  }
}

/**
 * A deterministic {@link RandomSource}: SHA-256 over `seed`, `stream` and a block counter. Each
 * actor gets its own stream, so adding one actor does not shift the identifiers of the others.
 * Not for secrets: it exists so a demo run can be repeated exactly.
 */
export function seededRandom(seed: number, stream: string): RandomSource {
  let counter = 0
  let pool = new Uint8Array(0)
  return (size) => {
    const out = new Uint8Array(size)
    let filled = 0
    while (filled < size) {
      if (pool.length === 0) pool = new Uint8Array(createHash('sha256').update(`${seed}\u0000${stream}\u0000${counter++}`).digest())
      const take = Math.min(pool.length, size - filled)
      out.set(pool.subarray(0, take), filled)
      pool = pool.subarray(take)
      filled += take
    }
    return out
  }
}
