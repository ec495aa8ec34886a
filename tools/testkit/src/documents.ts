/**
 * Signed and unsigned documents the test worlds send: the selection basis of an offer (§10.3),
 * Mission and child Mission payloads (§7), and a MissionOwner's Approval (§7.3).
 */
import type { GroupState } from '@weft/authority'
import { sign } from '@weft/codec'
import type { Approval, CommandPayload, SelectionBasis } from '@weft/spec'
import { CAPABILITY, cast, T0, type Cast } from './fixtures.js'
/** A structured selection basis for the test capability (§10.3). */
export const SELECTION: SelectionBasis = {
  requiredCapabilities: [CAPABILITY],
  verifiedMatches: [CAPABILITY],
  authorizationEligible: true,
  availabilityEstimate: T0,
  expectedCost: 1,
  reliabilityEvidence: [],
  policyRulesApplied: ['weft.test.first-fit'],
}

/** A `mission.create` payload for `missionId`, coordinated by `cast.coordinator`; `overrides` replace fields. */
export function missionPayload(missionId: string, overrides: Partial<CommandPayload<'mission.create'>> = {}): CommandPayload<'mission.create'> {
  return {
    missionId,
    title: 'Planning',
    objective: 'Ship the feature.',
    definitionOfDone: [{ criterionId: 'shipped', description: 'It ships.', evidenceRequired: ['human_review'] }],
    deadline: '2026-09-01T00:00:00Z',
    budget: { currency: 'USD', financialLimit: 1000, modelTokenLimit: 1_000_000, toolCallLimit: 10_000 },
    approvalPolicy: { finalHumanApproval: true, highRiskExecutionApproval: true },
    coordinatorAgentId: cast.coordinator.actor.id,
    coordinatorLeaseSeconds: 86_400,
    ...overrides,
  }
}

/** A `mission.create_child` payload promoting `parentWorkItemId` to child `name`, coordinated by `coordinator`. */
export function childPayload(
  parentWorkItemId: string,
  name: string,
  coordinator: Cast = cast.worker2,
  overrides: Partial<CommandPayload<'mission.create_child'>> = {},
): CommandPayload<'mission.create_child'> {
  const { missionId: _missionId, budget: _budget, ...base } = missionPayload(name)
  return {
    ...base,
    parentWorkItemId,
    childMissionId: `urn:weft:test:mission:${name}`,
    childGroupId: `urn:weft:test:group:${name}`,
    deadline: '2026-07-31T00:00:00Z',
    budget: { currency: 'USD', financialLimit: 5, modelTokenLimit: 5000, toolCallLimit: 20 },
    approvalPolicy: { finalHumanApproval: false, highRiskExecutionApproval: true },
    coordinatorAgentId: coordinator.actor.id,
    childFailurePolicy: 'block_parent_work_item',
    ...overrides,
  }
}

let approvalCount = 0

/** The MissionOwner's signed decision on the Group's pending submission; `overrides` replace fields before signing. */
export function decision(group: GroupState, by: Cast, verdict: Approval['decision'], overrides: Partial<Approval> = {}): Approval {
  const submission = group.submission
  return sign(
    'approval',
    {
      approvalId: `urn:weft:test:approval:${++approvalCount}`,
      kind: group.mission.parent === undefined ? 'mission_final' : 'child_mission',
      decision: verdict,
      missionId: group.missionId,
      groupId: group.groupId,
      missionRevision: submission?.missionRevision ?? group.mission.revision,
      artifactHashes: [...(submission?.artifactHashes ?? [])],
      acceptancePolicyVersion: '1.0.0',
      approver: by.actor,
      comments: verdict === 'approved' ? 'Looks right.' : 'Needs another pass.',
      conditions: [],
      occurredAt: '2026-07-15T00:00:00Z',
      ...overrides,
    },
    by.key,
  ) as unknown as Approval
}
