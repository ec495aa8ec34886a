/**
 * The Work Contract (`work-contract.schema.json`, §10.1): the versioned, machine-readable terms of
 * a WorkItem (goal, deliverables, acceptance criteria, inputs, allowed resources, capabilities,
 * deadline, urgency, budget, retries, risk and approval). Prose may supplement it, never replace it.
 * @module
 */
import Type, { type Static } from 'typebox'
import { document, freeObject, oneOfValues } from '../schema.js'
import { AcceptanceCriterion, CapabilityRef, Duration, Extensions, Id, PositiveInteger, ResourceBudget, ResourceGrant, Sha256, Timestamp } from './common.js'

/** Urgency a Coordinator may request; the Worker's Scheduler still decides order (§11.1). */
export const REQUESTED_URGENCIES = ['routine', 'normal', 'high', 'critical'] as const

/** A requested urgency. */
export type RequestedUrgency = (typeof REQUESTED_URGENCIES)[number]

/** Retry back-off strategies (§11.4). */
export const RETRY_BACKOFFS = ['none', 'fixed', 'exponential'] as const

/** A retry back-off strategy. */
export type RetryBackoff = (typeof RETRY_BACKOFFS)[number]

/** Side-effect risk classes, from none to destructive (§10.1, §12). */
export const SIDE_EFFECT_RISKS = ['none', 'reversible', 'external', 'high_risk', 'destructive'] as const

/** A side-effect risk class. */
export type SideEffectRisk = (typeof SIDE_EFFECT_RISKS)[number]

/** Whether execution needs approval first, and from whom (§12). */
export const EXECUTION_APPROVAL_MODES = ['not_required', 'policy_required', 'human_required'] as const

/** An execution approval requirement. */
export type ExecutionApprovalMode = (typeof EXECUTION_APPROVAL_MODES)[number]

/** Pattern of a media type (`type/subtype`), shared with Artifact manifests. */
export const MEDIA_TYPE_PATTERN = '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+$'

/** One deliverable the contract requires: its ID, description, media type and output schema. */
export const Deliverable = Type.Object(
  {
    deliverableId: Type.String({ pattern: '^[a-zA-Z0-9][a-zA-Z0-9._-]{0,127}$' }),
    description: Type.String({ minLength: 1, maxLength: 4000 }),
    mediaType: Type.String({ pattern: MEDIA_TYPE_PATTERN }),
    schema: Type.String({ format: 'uri' }),
  },
  { additionalProperties: false },
)

/** A required deliverable. */
export type Deliverable = Static<typeof Deliverable>

/** Bounds on automatic retries: attempts, back-off, maximum delay and retryable failure codes (§11.4). */
export const RetryPolicy = Type.Object(
  {
    maxAttempts: PositiveInteger,
    backoff: oneOfValues(RETRY_BACKOFFS),
    maxDelay: Duration,
    retryableFailures: Type.Array(Type.String({ pattern: '^[A-Z][A-Z0-9_]{1,127}$' }), { uniqueItems: true }),
  },
  { additionalProperties: false },
)

/** A retry policy. */
export type RetryPolicy = Static<typeof RetryPolicy>

/**
 * A Work Contract (§10.1). A material revision increments `contractVersion` and needs renewed
 * Worker acceptance.
 */
export const WorkContract = Type.Object(
  {
    contractVersion: PositiveInteger,
    goal: Type.String({ minLength: 1, maxLength: 10000 }),
    requiredDeliverables: Type.Array(Deliverable, { minItems: 1 }),
    acceptanceCriteria: Type.Array(AcceptanceCriterion, { minItems: 1 }),
    inputArtifacts: Type.Array(Sha256, { uniqueItems: true }),
    dependencyWorkItemIds: Type.Array(Id, { uniqueItems: true }),
    allowedResources: Type.Array(ResourceGrant),
    requiredCapabilities: Type.Array(CapabilityRef, { minItems: 1 }),
    deadline: Timestamp,
    requestedUrgency: oneOfValues(REQUESTED_URGENCIES),
    businessImpact: Type.String({ minLength: 1, maxLength: 4000 }),
    retryPolicy: RetryPolicy,
    budget: ResourceBudget,
    sideEffectRisk: oneOfValues(SIDE_EFFECT_RISKS),
    executionApproval: oneOfValues(EXECUTION_APPROVAL_MODES),
    constraints: Type.Optional(freeObject()),
    extensions: Type.Optional(Extensions),
  },
  { additionalProperties: false },
)

/** A Work Contract. */
export type WorkContract = Static<typeof WorkContract>

/** `work-contract.schema.json` (§10.1, §21). */
export const workContractDocument = document('workContract', 'work-contract.schema.json', 'MissionWeaveProtocol 0.1 Work Contract', WorkContract)
