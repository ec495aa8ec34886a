/**
 * The scripted executors of the demo's Workers, one per capability of `plans.ts`.
 *
 * They are written against the reference Worker's executor API: they work in phases on the
 * virtual clock, reach a safe point between chunks of work (§11.3), checkpoint at milestones,
 * report progress and usage (§11.4, §12), reach "external" systems only through
 * `ctx.sideEffect` with its idempotency key (§16), and return published Artifacts with Evidence
 * mapped to the contract's acceptance criteria (§13.2).
 * @module
 */
import type { EvidenceType, UsageDelta } from '@weft/spec'
import type { ExecutorResult, ExecutorSpec, SlotContext, WorkSnapshot } from '@weft/worker'
import { CAPABILITIES, DELIVERABLES } from './plans.js'

/** What executors reach outside their slot: virtual time and the "external" systems. */
export interface ExecutorEnv {
  /** Waits on the virtual clock. */
  sleep(ms: number): Promise<void>
  /**
   * An external system receiving operation `operationId` with idempotency key `key` (§16): a
   * merge queue, a deployment API. Returns its receipt.
   */
  external(operationId: string, key: string): string
  /** A deterministic per-WorkItem factor in [0.8, 1.2] that varies run times with the seed. */
  pace(workItemId: string): number
}

/** One phase of a scripted executor. */
interface Phase {
  readonly name: string
  readonly minutes: number
  readonly milestone: string
  /** Checkpoint after the phase (a durable, resumable point, §11.4). */
  readonly checkpoint?: boolean
  readonly usage: UsageDelta
}

/** What an executor produces once its phases are done. */
interface Output {
  readonly artifacts: readonly { readonly bytes: string; readonly mediaType: string }[]
  /** Evidence by criterion: its type, method and result; Artifact hashes are filled in. */
  readonly evidence: readonly { readonly type: EvidenceType; readonly criterionIds: readonly string[]; readonly method: string }[]
}

/** A scripted executor. */
interface Script {
  readonly phases: readonly Phase[]
  /** External operations after the last phase (§16: each runs once per Ownership Epoch). */
  readonly effects?: readonly { readonly operationId: string; readonly reversible: boolean }[]
  /** Block once before this phase, waiting for what `reason` asks (§11.4). */
  readonly blockOnce?: { readonly beforePhase: number; readonly reason: string; readonly requiredResolution: string; readonly when: (item: WorkSnapshot) => boolean }
  output(item: WorkSnapshot, receipts: readonly string[]): Output
}

/** The state an executor checkpoints: where it is and what it has done (§11.3). */
interface ScriptState {
  readonly phase: number
  readonly done: readonly string[]
  readonly blocked?: boolean
}

/** Safe points come every this many virtual milliseconds of work. */
const CHUNK_MS = 5 * 60_000

function isScriptState(value: unknown): value is ScriptState {
  return typeof value === 'object' && value !== null && typeof (value as ScriptState).phase === 'number' && Array.isArray((value as ScriptState).done)
}

function scripted(env: ExecutorEnv, script: Script): ExecutorSpec {
  const total = script.phases.reduce((n, p) => n + p.minutes, 0) * 60_000
  return {
    expectedDurationMs: total,
    needs: { toolCallLimit: script.phases.reduce((n, p) => n + (p.usage.toolCalls ?? 0), 0) },
    async run(item: WorkSnapshot, ctx: SlotContext): Promise<ExecutorResult> {
      // §11.3: a resumed run continues from its last checkpoint, not from the start.
      let state: ScriptState = isScriptState(ctx.resumeState) ? ctx.resumeState : { phase: 0, done: [] }
      const pace = env.pace(item.workItemId)
      while (state.phase < script.phases.length) {
        const phase = script.phases[state.phase]!
        const b = script.blockOnce
        if (b !== undefined && b.beforePhase === state.phase && state.blocked !== true && b.when(item)) {
          await ctx.block(b.reason, { requiredResolution: b.requiredResolution, state: { ...state, blocked: true } })
        }
        await ctx.progress({ phase: phase.name, completedMilestones: state.done, nextCheckpoint: phase.milestone })
        for (let left = Math.round(phase.minutes * 60_000 * pace); left > 0; left -= CHUNK_MS) {
          await env.sleep(Math.min(CHUNK_MS, left))
          // §11.3: only here may the Scheduler's preemption request take effect.
          await ctx.safePoint(state)
        }
        await ctx.reportUsage(phase.usage)
        state = { ...state, phase: state.phase + 1, done: [...state.done, phase.milestone] }
        const next = script.phases[state.phase]?.name ?? 'publish and submit'
        if (phase.checkpoint === true) await ctx.checkpoint(state, { phase: phase.name, completedMilestones: state.done, nextStep: next })
      }
      const receipts: string[] = []
      for (const effect of script.effects ?? []) {
        receipts.push(await ctx.sideEffect(effect.operationId, (key) => env.external(effect.operationId, key), { reversible: effect.reversible }))
      }
      const out = script.output(item, receipts)
      const artifacts = []
      for (const a of out.artifacts) artifacts.push(await ctx.publishArtifact(a.bytes, { mediaType: a.mediaType }))
      const hashes = artifacts.map((a) => a.contentHash)
      const evidence = out.evidence.map((e) => ctx.evidence({ type: e.type, criterionIds: [...e.criterionIds], method: e.method, result: 'passed', artifactHashes: hashes }))
      return { artifacts, evidence }
    },
  }
}

/** A phase of `minutes` that uses `tokens` model tokens and `calls` tool calls (§12). */
function phase(name: string, minutes: number, milestone: string, tokens: number, calls: number, checkpoint = false): Phase {
  const usage: UsageDelta = { modelTokens: tokens, toolCalls: calls, financialMicrounits: tokens * 2 }
  return { name, minutes, milestone, usage, ...(checkpoint ? { checkpoint } : {}) }
}

/** The executor's own passing Evidence for one criterion. */
function claim(type: EvidenceType, criterionId: string, method: string): Output['evidence'][number] {
  return { type, criterionIds: [criterionId], method }
}

/** The acceptance scenarios every requirements document of the demo carries. */
const SCENARIO_TEXT = [
  'Scenario: a transient failure is retried\nGiven a request that fails with a timeout\nWhen the policy allows another attempt\nThen it is retried with the same idempotency key',
  'Scenario: a permanent failure is not retried\nGiven a request rejected as invalid\nWhen it fails\nThen it is reported once',
  'Scenario: retries stop at the limit\nGiven three failed attempts\nWhen the fourth would start\nThen the work fails with evidence',
]

function report(item: WorkSnapshot, suite: string, passed: number): string {
  return JSON.stringify({ suite, workItemId: item.workItemId, passed, failed: 0, skipped: 0 })
}

/** The executors of the demo's Workers by capability ID, over `env`. */
export function demoExecutors(env: ExecutorEnv): Record<string, ExecutorSpec> {
  const requirements = scripted(env, {
    phases: [phase('interview stakeholders', 20, 'constraints gathered', 6000, 4), phase('write scenarios', 25, 'scenarios drafted', 9000, 3, true)],
    output: (item) => ({
      artifacts: [{ mediaType: DELIVERABLES.requirements.mediaType, bytes: [`# Requirements: ${item.contract.goal}`, '', ...SCENARIO_TEXT].join('\n') }],
      evidence: [claim('business_rule', 'scenarios', 'Linted every scenario for Given/When/Then.'), claim('artifact_integrity', 'traceable', 'Hashed the published document.')],
    }),
  })
  const implement = scripted(env, {
    phases: [phase('write failing tests', 15, 'tests written', 8000, 6, true), phase('implement', 30, 'change implemented', 20000, 10, true), phase('run unit tests', 10, 'unit tests green', 2000, 8)],
    output: (item) => {
      const file = `src/${item.workItemId.split(':').pop()}.ts`
      return {
        artifacts: [
          { mediaType: DELIVERABLES.patch.mediaType, bytes: `diff --git a/${file} b/${file}\n+// ${item.contract.goal}\n` },
          { mediaType: DELIVERABLES.report.mediaType, bytes: report(item, 'unit', 42) },
        ],
        evidence: [claim('deterministic_test', 'unit-tests-pass', 'Ran the unit test suite.'), claim('artifact_integrity', 'patch-applies', 'Applied the patch to a clean checkout.')],
      }
    },
  })
  const test = scripted(env, {
    phases: [phase('prepare fixtures', 10, 'fixtures ready', 3000, 5), phase('run suite', 25, 'suite run', 4000, 20, true)],
    output: (item) => ({
      artifacts: [{ mediaType: DELIVERABLES.report.mediaType, bytes: report(item, 'integration', 128) }],
      evidence: [claim('deterministic_test', 'suite-green', 'Ran the suite in a clean environment.'), claim('business_rule', 'coverage', 'Mapped every requirement scenario to at least one test.')],
    }),
  })
  const review = scripted(env, {
    phases: [phase('read the change', 15, 'change read', 12000, 3), phase('write review', 10, 'review written', 5000, 1)],
    output: (item) => ({
      artifacts: [{ mediaType: DELIVERABLES.review.mediaType, bytes: `# Review of ${item.contract.goal}\n\nVerdict: approve. Idempotency keys are stable; no blocking findings.\n` }],
      evidence: [claim('reviewer_assessment', 'review-approved', 'Read the diff, the tests and the requirements; approved.')],
    }),
  })
  const integrate = scripted(env, {
    phases: [phase('prepare release', 10, 'release prepared', 3000, 4, true), phase('roll out', 15, 'rolled out', 2000, 6)],
    effects: [{ operationId: 'integrate:release', reversible: false }],
    blockOnce: {
      beforePhase: 1,
      reason: 'The merge queue refuses this Agent: it lacks merge rights on the repository.',
      requiredResolution: 'Grant merge-queue access to the integrating Agent.',
      when: (item) => item.contract.allowedResources.some((r) => r.resource.endsWith('docs-site')),
    },
    output: (item, receipts) => ({
      artifacts: [{ mediaType: DELIVERABLES.record.mediaType, bytes: JSON.stringify({ workItemId: item.workItemId, receipts, status: 'integrated' }) }],
      evidence: [claim('deterministic_test', 'integrated', 'Checked the post-integration health probe.')],
    }),
  })
  return {
    [CAPABILITIES.requirements.id]: requirements,
    [CAPABILITIES.implement.id]: implement,
    [CAPABILITIES.test.id]: test,
    [CAPABILITIES.review.id]: review,
    [CAPABILITIES.integrate.id]: integrate,
  }
}
