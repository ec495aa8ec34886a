/**
 * `weft demo --faults`: the failure suite of the proof of concept (§22). It runs the normal demo
 * ({@link runDemo}) and injects, one after the other as the run reaches a moment where each one
 * bites, the faults §22 names plus two ingress faults:
 *
 * | fault | what is done | what must hold |
 * | --- | --- | --- |
 * | duplicate Event delivery | Events a Worker already processed are fed to it again | its inbox drops them (§16, §4 invariant 8) |
 * | Worker restart | a Worker stops, its local projection is dropped and the control plane opens a new Session Epoch | its leases are revoked, its queues are rebuilt by replay, it resumes from its checkpoints (§11.1, §11.3) |
 * | Coordinator replacement | a Coordinator crashes; the MissionOwner appoints another under the next Coordinator Epoch | the old runtime's Commands are refused, the new one carries on (§7.2) |
 * | Group disconnection | a Worker's link is cut during active work | it works on within its lease, buffers a signed checkpoint and reconciles it on reconnect (§11.5) |
 * | lease expiry | a Worker stalls past its Execution Lease | the Coordinator reassigns under a higher Ownership Epoch; the stale owner's late result is refused, kept in the audit log and never completes the WorkItem (§4 invariant 5, §11.5) |
 * | high-priority arrival | (the demo's urgent security fix) | it preempts running work at a safe checkpoint (§11.3) |
 * | human change request | (the demo's scripted request) | a corrective round and a new submission follow (§7.3) |
 * | Action ID collision | an accepted Action ID is reused with other content | `ACTION_ID_COLLISION`, nothing appended (§15.1) |
 * | budget overflow | usage beyond a WorkItem budget is recorded | `BUDGET_EXCEEDED`, nothing applied (§12) |
 *
 * Every executor runs behind an audit of its side effects: each attempt is recorded as executed,
 * answered from the Worker's ledger, or refused; a run that lost its lease then tries one more
 * (stale) side effect, and a run that reached the outside repeats its operations once (duplicates),
 * so the verifier's "stale or duplicate side effects refused" is tested, not assumed. After the
 * run {@link verifyRun} checks the whole log.
 *
 * Its parts: the seams in the Worker fleet (`fault-seams.ts`), the faults themselves
 * (`fault-ingress.ts`, `fault-runtime.ts`, `fault-links.ts`), the demo's own faults read from the
 * log (`fault-scripted.ts`), the one-at-a-time sequence they run in (`fault-sequence.ts`) and what
 * they share (`fault-context.ts`).
 * @module
 */
import { isEventOf } from '@weft/spec'
import { clockText, nowOf, type Suite } from './fault-context.js'
import { actionIdCollision, budgetOverflow, duplicateDelivery } from './fault-ingress.js'
import { groupDisconnection, leaseExpiry } from './fault-links.js'
import { coordinatorReplacement, workerRestart } from './fault-runtime.js'
import { changeRequestRecord, preemptionRecord } from './fault-scripted.js'
import { workerHook } from './fault-seams.js'
import { faultSequence } from './fault-sequence.js'
import { runDemo, type DemoOptions, type DemoResult, type DemoWorld } from './run.js'
import { verifyRun, type SideEffectAttempt, type Verification } from './verify.js'

export { STALE_PROBE_OPERATION } from './fault-seams.js'

/** The faults of the suite, in the order they are reported when they happen at the same time. */
export const FAULT_NAMES = [
  'duplicate-event-delivery',
  'action-id-collision',
  'budget-overflow',
  'coordinator-replacement',
  'worker-restart',
  'group-disconnection',
  'lease-expiry-reassignment',
  'high-priority-preemption',
  'human-change-request',
] as const

/** A fault of the suite. */
export type FaultName = (typeof FAULT_NAMES)[number]

/** One injected fault: when, what had to hold, and what did. */
export interface FaultRecord {
  readonly name: FaultName
  /** Virtual epoch ms of the injection (or of the scripted event, for the demo's own faults). */
  readonly atMs: number
  readonly expected: string
  readonly observed: string
  readonly held: boolean
}

/** A terminal announcement: a fault is injected, or it resolved. */
export interface FaultNotice {
  readonly atMs: number
  /** Virtual ms since the start of the run. */
  readonly elapsedMs: number
  readonly fault: FaultName
  readonly phase: 'inject' | 'held' | 'failed'
  readonly text: string
}

/** Options of {@link runFaultSuite}: those of the demo (its hooks are the suite's), plus announcements. */
export interface FaultSuiteOptions extends Omit<DemoOptions, 'hooks'> {
  readonly onNotice?: (notice: FaultNotice) => void
}

/** What the suite produced: the demo's result with the fault records and the verification. */
export interface FaultSuiteResult extends DemoResult {
  /** One record per fault of {@link FAULT_NAMES}, by time. */
  readonly faults: readonly FaultRecord[]
  readonly verification: Verification
  /** Every fault held and every check passed. */
  readonly passed: boolean
}

/** A suite run: its result, the world it ran in and the side-effect attempts the audit saw. */
export interface FaultSuiteRun {
  readonly result: FaultSuiteResult
  readonly world: DemoWorld
  readonly attempts: readonly SideEffectAttempt[]
}

// ---------------------------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------------------------

/**
 * Runs the demo with the failure suite injected and verifies the run afterwards. Faults are
 * injected one at a time, each when the run reaches a moment where it bites; a fault that never
 * found its moment, or did not resolve, is recorded as not held.
 * @example
 * ```ts
 * const { result } = await runFaultSuite({ onNotice: (n) => console.log(n.fault, n.phase, n.text) })
 * result.faults.every((f) => f.held) && result.verification.passed // result.passed
 * ```
 */
export async function runFaultSuite(options: FaultSuiteOptions = {}): Promise<FaultSuiteRun> {
  const { onNotice, ...demo } = options
  const s: Suite = {
    seed: options.seed ?? 1,
    world: undefined,
    stores: new Map(),
    taps: new Map(),
    attempts: [],
    runs: [],
    lines: [],
    warnings: [],
    startMs: 0,
    preemptionSeen: false,
    control: undefined,
    notice(fault, phase, text) {
      const atMs = nowOf(s)
      onNotice?.({ atMs, elapsedMs: atMs - s.startMs, fault, phase, text })
    },
  }
  const faults = [duplicateDelivery(s), actionIdCollision(s), budgetOverflow(s), coordinatorReplacement(s), workerRestart(s), groupDisconnection(s), leaseExpiry(s)]
  const sequence = faultSequence(s, faults)

  const { result, world } = await runDemo({
    ...demo,
    onLine(line) {
      s.lines.push(line)
      options.onLine?.(line)
    },
    hooks: {
      worker: (name, workerOptions) => workerHook(s, name, workerOptions),
      setup(w) {
        s.world = w
        s.startMs = w.clock.now()
        w.authority.onCommit((events) => {
          for (const e of events) if (isEventOf(e, 'work.checkpointed') && e.payload.checkpoint.phase === 'preempted') s.preemptionSeen = true
        })
      },
      round: () => sequence.step(),
    },
  })

  const records = sequence.records(result.endMs)
  records.push(preemptionRecord(s, result), changeRequestRecord(s, result))
  records.sort((a, b) => a.atMs - b.atMs || FAULT_NAMES.indexOf(a.name) - FAULT_NAMES.indexOf(b.name))
  const verification = verifyRun({ world, attempts: s.attempts })
  const warnings = [...result.warnings, ...s.warnings.filter((w) => !result.warnings.includes(w))].slice(0, 200)
  return {
    result: { ...result, warnings, faults: records, verification, passed: verification.passed && records.every((r) => r.held) },
    world,
    attempts: [...s.attempts],
  }
}

// ---------------------------------------------------------------------------------------------
// The command
// ---------------------------------------------------------------------------------------------

/** One terminal line announcing a fault, aligned with the demo's progress lines. */
export function noticeText(notice: FaultNotice): string {
  return `${clockText(notice.elapsedMs)}  ${'[fault]'.padEnd(11)} ${notice.phase.padEnd(10)} ${notice.fault}: ${notice.text}\n`
}

/** The checklist printed after a suite run: every fault, then every check, then the verdict. */
export function checklistText(result: FaultSuiteResult): string {
  const mark = (held: boolean): string => (held ? '✓' : '✗')
  const lines = ['', `Failure suite (${result.faults.length} faults):`]
  for (const f of result.faults) {
    lines.push(`  ${mark(f.held)} ${f.name.padEnd(26)} ${clockText(f.atMs - result.startMs)}  ${f.observed}`)
    if (!f.held) lines.push(`      expected: ${f.expected}`)
  }
  lines.push('', `Post-run verification (${result.verification.checks.length} checks):`)
  for (const c of result.verification.checks) lines.push(`  ${mark(c.held)} ${c.title}: ${c.detail}`)
  const faultsHeld = result.faults.filter((f) => f.held).length
  const checksHeld = result.verification.checks.filter((c) => c.held).length
  lines.push(
    '',
    `${faultsHeld} of ${result.faults.length} faults held, ${checksHeld} of ${result.verification.checks.length} checks passed: ${result.passed ? 'the run recovered from every fault.' : 'the suite FAILED.'}`,
    '',
  )
  return lines.join('\n')
}
