/**
 * The proof of concept's two software-development Missions (§22) and the scripted executors that
 * do their work.
 *
 * - **Checkout** (`checkout`): resilient payment retries. Requirements analysis, two
 *   implementation branches in parallel, an urgent security fix discovered while they run (a
 *   high-priority arrival that preempts running work at a safe checkpoint), testing, code review,
 *   and integration promoted to a child Mission ("Staging rollout", coordinated by its own Agent)
 *   before the human Approval.
 * - **Search** (`search`): typo-tolerant documentation search. Requirements, implementation,
 *   testing, code review and integration (which blocks once on merge-queue access), and after the
 *   MissionOwner's change request a corrective round.
 *
 * Executors are written against the reference Worker's executor API: they work in phases on the
 * virtual clock, reach a safe point between chunks of work (§11.3), checkpoint at milestones,
 * report progress and usage (§11.4, §12), reach "external" systems only through
 * `ctx.sideEffect` with its idempotency key (§16), and return published Artifacts with Evidence
 * mapped to the contract's acceptance criteria (§13.2).
 * @module
 */
import type { AcceptanceCriterion, CapabilityRef, CommandPayload, Deliverable, EvidenceType, RequestedUrgency, UsageDelta, WorkContract } from '@weft/spec'
import type { ExecutorResult, ExecutorSpec, SlotContext, WorkSnapshot } from '@weft/worker'
import type { MissionPlan, StageSpec } from './mission-plan.js'
import type { ReviewedArtifact, StageCheck } from './review.js'

/** The capabilities the demo's Agents declare and its contracts require (§6.1). */
export const CAPABILITIES = {
  coordinate: { id: 'weft.demo.coordinate', version: '1.0.0' },
  requirements: { id: 'weft.demo.requirements', version: '1.2.0' },
  implement: { id: 'weft.demo.implement', version: '2.0.0' },
  test: { id: 'weft.demo.test', version: '1.0.0' },
  review: { id: 'weft.demo.review', version: '1.1.0' },
  integrate: { id: 'weft.demo.integrate', version: '1.0.0' },
} as const satisfies Record<string, CapabilityRef>

/** A capability of {@link CAPABILITIES} by name. */
export type CapabilityName = keyof typeof CAPABILITIES

const HOUR = 3_600_000

// ---------------------------------------------------------------------------------------------
// Contracts
// ---------------------------------------------------------------------------------------------

/** Deliverables by kind: media type and output schema (§10.1, §13.1). */
const DELIVERABLES = {
  requirements: { mediaType: 'text/markdown', schema: 'urn:weft:demo:schema:requirements' },
  patch: { mediaType: 'text/x-diff', schema: 'urn:weft:demo:schema:patch' },
  report: { mediaType: 'application/json', schema: 'urn:weft:demo:schema:test-report' },
  review: { mediaType: 'text/markdown', schema: 'urn:weft:demo:schema:review' },
  record: { mediaType: 'application/json', schema: 'urn:weft:demo:schema:change-record' },
} as const

type DeliverableKind = keyof typeof DELIVERABLES

function deliverable(kind: DeliverableKind, description: string): Deliverable {
  return { deliverableId: kind, description, ...DELIVERABLES[kind] }
}

function criterion(criterionId: string, description: string, evidenceRequired: readonly EvidenceType[]): AcceptanceCriterion {
  return { criterionId, description, evidenceRequired: [...evidenceRequired] as AcceptanceCriterion['evidenceRequired'] }
}

/** What varies between the demo's Work Contracts. */
interface ContractSpec {
  readonly capability: CapabilityName
  readonly goal: string
  readonly deliverables: readonly Deliverable[]
  readonly criteria: readonly AcceptanceCriterion[]
  readonly urgency: RequestedUrgency
  readonly impact: string
  readonly deadlineMs: number
  /** Financial limit in USD; tokens and tool calls scale with it. */
  readonly usd: number
  readonly risk?: WorkContract['sideEffectRisk']
  readonly repository: string
}

function contract(spec: ContractSpec): WorkContract {
  return {
    contractVersion: 1,
    goal: spec.goal,
    requiredDeliverables: [...spec.deliverables],
    acceptanceCriteria: [...spec.criteria],
    inputArtifacts: [],
    dependencyWorkItemIds: [],
    allowedResources: [{ resource: spec.repository, operations: ['read', 'write'] }],
    requiredCapabilities: [CAPABILITIES[spec.capability]],
    deadline: new Date(spec.deadlineMs).toISOString(),
    requestedUrgency: spec.urgency,
    businessImpact: spec.impact,
    retryPolicy: { maxAttempts: 3, backoff: 'exponential', maxDelay: 'PT10M', retryableFailures: ['TRANSIENT', 'FLAKY_TEST'] },
    // §12: only work whose risk is external may act outside; the limit narrows down the Mission tree.
    budget: { currency: 'USD', financialLimit: spec.usd, modelTokenLimit: spec.usd * 5000, toolCallLimit: spec.usd * 5, externalSideEffectLimit: spec.risk === 'external' ? 3 : 0 },
    sideEffectRisk: spec.risk ?? 'reversible',
    executionApproval: 'not_required',
  }
}

// ---------------------------------------------------------------------------------------------
// Review checks (§13.2 step 2): what the Coordinator re-runs over the submitted bytes
// ---------------------------------------------------------------------------------------------

function textOf(a: ReviewedArtifact): string {
  return a.bytes === undefined ? '' : new TextDecoder().decode(a.bytes)
}

/** The JSON test report among the Artifacts, if any. */
function reportOf(artifacts: readonly ReviewedArtifact[]): { readonly passed?: number; readonly failed?: number } | undefined {
  const a = artifacts.find((x) => x.manifest.mediaType === DELIVERABLES.report.mediaType && x.manifest.schemaUri === DELIVERABLES.report.schema)
  if (a?.bytes === undefined) return undefined
  try {
    return JSON.parse(textOf(a)) as { passed?: number; failed?: number }
  } catch {
    return undefined
  }
}

/**
 * A deterministic check for `criterionId` that re-runs the verdict of the submitted JSON test
 * report (`{ passed, failed }`): something passed and nothing failed.
 */
export function greenReport(criterionId: string, what: string): StageCheck {
  return {
    type: 'deterministic_test',
    criterionIds: [criterionId],
    method: `Re-evaluated the submitted ${what} report: at least one test ran and none failed.`,
    run(artifacts) {
      const r = reportOf(artifacts)
      if (r === undefined) return [`no readable ${what} report`]
      return (r.passed ?? 0) > 0 && r.failed === 0 ? [] : [`the ${what} report shows ${r.passed ?? 0} passed and ${r.failed ?? '?'} failed`]
    },
  }
}

/** Every acceptance scenario of a requirements document is a complete Given/When/Then. */
const SCENARIOS: StageCheck = {
  type: 'business_rule',
  criterionIds: ['scenarios'],
  method: 'Checked that the requirements hold at least three scenarios, each with Given, When and Then.',
  run(artifacts) {
    const doc = artifacts.map(textOf).find((t) => t.startsWith('# Requirements')) ?? ''
    const scenarios = doc.split('\nScenario: ').slice(1)
    const incomplete = scenarios.filter((s) => !(s.includes('Given ') && s.includes('When ') && s.includes('Then ')))
    return scenarios.length >= 3 && incomplete.length === 0 ? [] : [`${scenarios.length} scenario(s), ${incomplete.length} incomplete`]
  },
}

// ---------------------------------------------------------------------------------------------
// Stage kinds: what every requirements, implementation, test, review or integration stage shares
// ---------------------------------------------------------------------------------------------

/** The parts of a contract and review a kind of stage fixes. */
interface StageKind {
  readonly capability: CapabilityName
  readonly deliverables: readonly Deliverable[]
  readonly criteria: readonly AcceptanceCriterion[]
  readonly urgency: RequestedUrgency
  readonly impact: string
  readonly usd: number
  readonly risk?: WorkContract['sideEffectRisk']
  readonly check?: StageCheck
}

/** The kinds of stage of a software-development Mission (§22). */
export const STAGE_KINDS = {
  requirements: {
    capability: 'requirements',
    deliverables: [deliverable('requirements', 'Requirements with acceptance scenarios.')],
    criteria: [
      criterion('scenarios', 'Every behaviour is an executable Given/When/Then scenario.', ['business_rule']),
      criterion('traceable', 'The document is published intact.', ['artifact_integrity']),
    ],
    urgency: 'normal',
    impact: 'Every later stage builds on these scenarios.',
    usd: 20,
    check: SCENARIOS,
  },
  implement: {
    capability: 'implement',
    deliverables: [deliverable('patch', 'The change as a unified diff.'), deliverable('report', 'Unit test results.')],
    criteria: [
      criterion('unit-tests-pass', 'The unit tests of the change pass.', ['deterministic_test']),
      criterion('patch-applies', 'The patch is intact and well-formed.', ['artifact_integrity', 'schema_validation']),
    ],
    urgency: 'normal',
    impact: 'Part of the feature the Mission delivers.',
    usd: 40,
    check: greenReport('unit-tests-pass', 'unit test'),
  },
  test: {
    capability: 'test',
    deliverables: [deliverable('report', 'Test results.')],
    criteria: [
      criterion('suite-green', 'The whole suite passes.', ['deterministic_test']),
      criterion('coverage', 'The scenarios of the requirements are covered.', ['business_rule', 'artifact_integrity']),
    ],
    urgency: 'high',
    impact: 'Nothing integrates without a green suite.',
    usd: 30,
    check: greenReport('suite-green', 'test'),
  },
  review: {
    capability: 'review',
    deliverables: [deliverable('review', 'Review notes with the verdict.')],
    // §7.2, §13.2: qualitative judgement comes from a reviewer Agent, never the Coordinator alone.
    criteria: [criterion('review-approved', 'A reviewer approved the change.', ['reviewer_assessment', 'artifact_integrity'])],
    urgency: 'normal',
    impact: 'Catches design and security problems tests do not.',
    usd: 20,
  },
  integrate: {
    capability: 'integrate',
    deliverables: [deliverable('record', 'The change record of the integration.')],
    criteria: [criterion('integrated', 'The change is integrated and recorded.', ['deterministic_test', 'artifact_integrity'])],
    urgency: 'normal',
    impact: 'Delivers the change to its users.',
    usd: 40,
    risk: 'external',
  },
} as const satisfies Record<string, StageKind>

/** A kind of stage. */
export type StageKindName = keyof typeof STAGE_KINDS

/** Where a Mission's stages live: the slug of their IDs, their repository and the Mission deadline. */
export interface MissionFrame {
  readonly slug: string
  readonly repository: string
  readonly deadlineMs: number
}

/** What a stage sets besides its kind: the plan fields, and contract fields that differ from the kind's. */
export type StageOptions = Omit<StageSpec, 'key' | 'workItemId' | 'title' | 'contract'> & { readonly urgency?: RequestedUrgency; readonly usd?: number; readonly impact?: string }

/**
 * A stage of kind `kind` in `frame`: WorkItem `urn:weft:demo:work:<slug>:<key>`, due six hours
 * before the Mission deadline, working on the frame's repository.
 */
export function planStage(frame: MissionFrame, kind: StageKindName, key: string, title: string, goal: string, options: StageOptions = {}): StageSpec {
  const k: StageKind = STAGE_KINDS[kind]
  const { urgency, usd, impact, ...extras } = options
  const check = k.check === undefined ? {} : { check: k.check }
  return {
    key,
    workItemId: `urn:weft:demo:work:${frame.slug}:${key}`,
    title,
    contract: contract({ ...k, goal, urgency: urgency ?? k.urgency, usd: usd ?? k.usd, impact: impact ?? k.impact, deadlineMs: frame.deadlineMs - 6 * HOUR, repository: frame.repository }),
    ...check,
    ...extras,
  }
}

// ---------------------------------------------------------------------------------------------
// The two Missions
// ---------------------------------------------------------------------------------------------

/** The Agents the plans name. */
export interface PlanAgents {
  /** Coordinator of the checkout Mission. */
  readonly checkoutCoordinator: string
  /** Coordinator of the search Mission. */
  readonly searchCoordinator: string
  /** Coordinator of the staging child Mission; accepts the checkout integration first. */
  readonly stagingLead: string
  /** The Worker the checkout implementation and its urgent fix are assigned to. */
  readonly implementer: string
}

/** A root Mission: its plan and the `mission.create` payload the MissionOwner signs. */
export interface RootMission {
  readonly plan: MissionPlan
  readonly create: CommandPayload<'mission.create'>
  /** Its fair-share weight on shared Workers (§11.1): an Organization priority class. */
  readonly weight: number
}

/** The demo's Missions. */
export interface DemoPlans {
  readonly checkout: RootMission
  readonly search: RootMission
  /** The child Mission the checkout integration is promoted to (§14). */
  readonly staging: MissionPlan
  /** The scripted change request of the search Mission (§7.3). */
  readonly changeRequest: { readonly missionId: string; readonly comments: string; readonly conditions: readonly string[] }
}

function missionPayload(plan: MissionPlan, objective: string, done: readonly AcceptanceCriterion[], deadlineMs: number, usd: number, coordinator: string): CommandPayload<'mission.create'> {
  return {
    missionId: plan.missionId,
    title: plan.title,
    objective,
    definitionOfDone: [...done],
    deadline: new Date(deadlineMs).toISOString(),
    budget: { currency: 'USD', financialLimit: usd, modelTokenLimit: usd * 5000, toolCallLimit: usd * 5, externalSideEffectLimit: 50 },
    approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    coordinatorAgentId: coordinator,
    coordinatorLeaseSeconds: 14_400,
  }
}

/**
 * The plans of the demo, with deadlines counted from `startMs`.
 * @example
 * ```ts
 * const plans = demoPlans(clock.now(), { checkoutCoordinator, searchCoordinator, stagingLead, implementer })
 * await owner.createMission(plans.checkout.plan.groupId, plans.checkout.create)
 * ```
 */
export function demoPlans(startMs: number, agents: PlanAgents): DemoPlans {
  const checkout: MissionFrame = { slug: 'checkout', repository: 'urn:weft:demo:repo:checkout-service', deadlineMs: startMs + 72 * HOUR }
  const staging: MissionFrame = { slug: 'staging', repository: checkout.repository, deadlineMs: startMs + 60 * HOUR }
  const search: MissionFrame = { slug: 'search', repository: 'urn:weft:demo:repo:docs-site', deadlineMs: startMs + 48 * HOUR }

  const stagingPlan: MissionPlan = {
    missionId: 'urn:weft:demo:mission:staging-rollout',
    groupId: 'urn:weft:demo:group:staging-rollout',
    label: 'staging',
    title: 'Staging rollout of payment retries',
    stages: [
      planStage(staging, 'integrate', 'deploy-staging', 'Deploy the retry release to staging', 'Deploy the integrated checkout build to the staging cluster.'),
      planStage(staging, 'test', 'smoke-tests', 'Smoke-test payments on staging', 'Run the payment smoke suite against staging.', { dependsOn: ['deploy-staging'] }),
    ],
  }

  const checkoutStages: StageSpec[] = [
    planStage(checkout, 'requirements', 'requirements', 'Payment retry requirements', 'Specify when and how failed card payments are retried without double charges.'),
    planStage(checkout, 'implement', 'impl-api', 'Retry policy in the payment API', 'Add an idempotent retry policy with backoff to the payment API.', {
      dependsOn: ['requirements'],
      candidates: [agents.implementer],
    }),
    planStage(checkout, 'implement', 'impl-worker', 'Idempotent retry worker', 'Move retries to a background worker keyed by payment intent.', {
      dependsOn: ['requirements'],
      candidates: [agents.implementer],
    }),
    planStage(checkout, 'implement', 'security-fix', 'Patch CVE-2026-31337 in the HTTP client', 'Upgrade the HTTP client past the request-smuggling fix.', {
      urgency: 'critical',
      impact: 'A known vulnerability is exploitable in production until this ships.',
      arrival: { afterStarted: 'impl-worker' },
      candidates: [agents.implementer],
    }),
    planStage(checkout, 'test', 'testing', 'Checkout integration tests', 'Run the checkout suite with retries, timeouts and duplicate webhooks.', {
      dependsOn: ['impl-api', 'impl-worker', 'security-fix'],
    }),
    planStage(checkout, 'review', 'code-review', 'Code review of the retry change', 'Review the retry policy, the worker and the fix for correctness and safety.', {
      dependsOn: ['impl-api', 'impl-worker', 'security-fix'],
    }),
    planStage(checkout, 'integrate', 'integration', 'Integrate and roll out to staging', 'Merge the change and prove it on staging.', {
      usd: 120,
      dependsOn: ['testing', 'code-review'],
      promote: {
        plan: stagingPlan,
        coordinatorAgentId: agents.stagingLead,
        title: stagingPlan.title,
        objective: 'Deploy the integrated retry change to staging and prove it with smoke tests.',
        definitionOfDone: [criterion('staging-green', 'The release runs on staging and the smoke suite passes.', ['deterministic_test'])],
        budget: { currency: 'USD', financialLimit: 100, modelTokenLimit: 500_000, toolCallLimit: 500, externalSideEffectLimit: 3 },
        deadline: new Date(staging.deadlineMs).toISOString(),
      },
    }),
  ]
  const checkoutPlan: MissionPlan = {
    missionId: 'urn:weft:demo:mission:checkout-retries',
    groupId: 'urn:weft:demo:group:checkout-retries',
    label: 'checkout',
    title: 'Checkout: resilient payment retries',
    stages: checkoutStages,
  }

  const searchPlan: MissionPlan = {
    missionId: 'urn:weft:demo:mission:docs-search',
    groupId: 'urn:weft:demo:group:docs-search',
    label: 'search',
    title: 'Docs: typo-tolerant search',
    stages: [
      planStage(search, 'requirements', 'requirements', 'Search requirements', 'Specify typo tolerance, ranking and latency for documentation search.'),
      planStage(search, 'implement', 'implement', 'Fuzzy matching in the search index', 'Add trigram fuzzy matching to the documentation index.', { dependsOn: ['requirements'] }),
      planStage(search, 'test', 'testing', 'Search relevance tests', 'Run the relevance suite over the golden queries.', { dependsOn: ['implement'] }),
      planStage(search, 'review', 'code-review', 'Code review of fuzzy search', 'Review the index change for correctness and performance.', { dependsOn: ['implement'] }),
      planStage(search, 'integrate', 'integration', 'Merge and publish the docs site', 'Merge through the merge queue and publish the site.', {
        dependsOn: ['testing', 'code-review'],
        resolution: 'Merge-queue access granted to the integrating Agent.',
      }),
    ],
    revise: (round) => [
      planStage(search, 'implement', `r${round}-accents`, 'Rank accented queries correctly', 'Fold diacritics before trigram matching, as the MissionOwner asked.', { urgency: 'high' }),
      planStage(search, 'test', `r${round}-retest`, 'Relevance tests for accented queries', 'Add golden queries with accents and rerun the suite.', { dependsOn: [`r${round}-accents`] }),
    ],
  }

  return {
    checkout: {
      plan: checkoutPlan,
      create: missionPayload(
        checkoutPlan,
        'Card payments that fail transiently are retried safely, without double charges, and proven on staging.',
        [criterion('retries-shipped', 'Retries are live on staging with a green smoke suite.', ['human_review'])],
        checkout.deadlineMs,
        1000,
        agents.checkoutCoordinator,
      ),
      weight: 2,
    },
    search: {
      plan: searchPlan,
      create: missionPayload(
        searchPlan,
        'Documentation search finds pages despite typos, within 50 ms at p95.',
        [criterion('search-shipped', 'Typo-tolerant search is published.', ['human_review'])],
        search.deadlineMs,
        600,
        agents.searchCoordinator,
      ),
      weight: 1,
    },
    staging: stagingPlan,
    changeRequest: {
      missionId: searchPlan.missionId,
      comments: 'Queries with accents ("café", "naïve") still rank the wrong pages first. Please fix before release.',
      conditions: ['Accented queries rank like their unaccented forms.', 'The relevance suite includes accented golden queries.'],
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Executors
// ---------------------------------------------------------------------------------------------

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
