/**
 * The Work Contract of the test worlds (§10.1) and the capability it requires, as plain data: no
 * keys and no Authority, so the tests of packages that never run one (the Worker's fabricated
 * Event logs) state the same terms as the tests that do.
 */
import type { CapabilityRef, WorkContract } from '@weft/spec'

/** The capability every test Agent Card states and every test Work Contract requires (§6.1, §10.1). */
export const CAPABILITY: CapabilityRef = { id: 'weft.test.implementation', version: '1.0.0' }

/** The schema of the `patch` deliverable of {@link contract}: an Artifact delivering it names this `schemaUri` (§13.1). */
export const PATCH_SCHEMA = 'urn:weft:test:schema:patch'

/**
 * A complete Work Contract (§10.1) with one deliverable, `patch`, and one acceptance criterion,
 * `tests-pass`; `overrides` replace members (a goal, the dependencies, the capability a world's
 * Agents hold, a deadline relative to its clock, a budget).
 *
 * @example
 * ```ts
 * contract({ goal: 'Document the checkout', dependencyWorkItemIds: [build] })
 * ```
 */
export function contract(overrides: Partial<WorkContract> = {}): WorkContract {
  return {
    contractVersion: 1,
    goal: 'Implement the feature.',
    requiredDeliverables: [{ deliverableId: 'patch', description: 'The change.', mediaType: 'text/x-diff', schema: PATCH_SCHEMA }],
    acceptanceCriteria: [{ criterionId: 'tests-pass', description: 'The tests pass.', evidenceRequired: ['deterministic_test'] }],
    inputArtifacts: [],
    dependencyWorkItemIds: [],
    allowedResources: [{ resource: 'urn:weft:test:resource:repo', operations: ['read', 'write'] }],
    requiredCapabilities: [CAPABILITY],
    deadline: '2026-08-01T00:00:00Z',
    requestedUrgency: 'normal',
    businessImpact: 'Needed for the release.',
    retryPolicy: { maxAttempts: 3, backoff: 'exponential', maxDelay: 'PT5M', retryableFailures: ['TRANSIENT'] },
    budget: { currency: 'USD', financialLimit: 10, modelTokenLimit: 10000, toolCallLimit: 50 },
    sideEffectRisk: 'reversible',
    executionApproval: 'not_required',
    ...overrides,
  } as WorkContract
}
