/**
 * The proof of concept's two software-development Missions (§22); `executors.ts` has the scripted
 * executors that do their work.
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
 * @module
 */
import type { AcceptanceCriterion, CapabilityRef, CommandPayload, Deliverable, EvidenceType, RequestedUrgency, WorkContract } from '@weft/spec'
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
export const DELIVERABLES = {
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
