/**
 * The failure suite's faults run one at a time, each as a small machine: it waits for the moment
 * where it bites, is injected, and is observed every round until it resolves; only then may the
 * next one be injected. A fault whose injection or observation throws resolves as not held.
 * @module
 */
import { nowOf, type Fault, type Outcome, type Suite } from './fault-context.js'
import type { FaultRecord } from './faults.js'

/** Where one fault of the sequence stands. */
export type FaultState =
  /** Its moment has not come yet (or an earlier fault has not resolved). */
  | { readonly phase: 'waiting' }
  /** Injected at `atMs` (virtual), observed every round since. */
  | { readonly phase: 'injected'; readonly atMs: number }
  /** Resolved with `outcome`; `atMs` is when it was injected. */
  | { readonly phase: 'resolved'; readonly atMs: number; readonly outcome: Outcome }

/** The faults of a suite run, in order. */
export interface FaultSequence {
  /** One round: injects the current fault when it can, observes it, and moves on while faults resolve. */
  step(): Promise<void>
  /** After the run: one record per fault, confirmed by what only the end shows; `endMs` dates the ones that never resolved. */
  records(endMs: number): FaultRecord[]
}

const WAITING: FaultState = { phase: 'waiting' }

/** The sequence of `faults` in the suite `s`; it announces every injection and resolution through `s.notice`. */
export function faultSequence(s: Suite, faults: readonly Fault[]): FaultSequence {
  const states: FaultState[] = faults.map(() => WAITING)
  /** The first fault that has not resolved. */
  let next = 0

  /** The current fault's outcome this round, or `undefined` while it waits or has not resolved. */
  async function advance(fault: Fault): Promise<{ readonly atMs: number; readonly outcome: Outcome } | undefined> {
    const state = states[next]!
    let atMs = state.phase === 'injected' ? state.atMs : undefined
    try {
      if (atMs === undefined) {
        const text = await fault.inject()
        if (text === undefined) return undefined
        atMs = nowOf(s)
        states[next] = { phase: 'injected', atMs }
        s.notice(fault.name, 'inject', text)
      }
      const outcome = await fault.observe()
      return outcome === undefined ? undefined : { atMs, outcome }
    } catch (error) {
      return { atMs: atMs ?? nowOf(s), outcome: { held: false, observed: `the fault could not run: ${error instanceof Error ? error.message : String(error)}` } }
    }
  }

  return {
    async step() {
      while (next < faults.length) {
        const fault = faults[next]!
        const resolved = await advance(fault)
        if (resolved === undefined) return
        states[next] = { phase: 'resolved', ...resolved }
        s.notice(fault.name, resolved.outcome.held ? 'held' : 'failed', resolved.outcome.observed)
        next++
      }
    },
    records(endMs) {
      // The fault under way when the run ended dates the ones after it too.
      const pendingAt = states.find((st) => st.phase === 'injected')?.atMs
      return faults.map((fault, i) => {
        const state = states[i]!
        if (state.phase !== 'resolved') {
          const observed = state.phase === 'injected' ? 'injected, but the run ended before it resolved' : `never injected: the run never showed ${fault.waitsFor}`
          return { name: fault.name, atMs: pendingAt ?? endMs, expected: fault.expected, observed, held: false }
        }
        const confirmed = fault.confirm?.(state.outcome) ?? state.outcome
        return { name: fault.name, atMs: state.atMs, expected: fault.expected, observed: confirmed.observed, held: confirmed.held }
      })
    },
  }
}
