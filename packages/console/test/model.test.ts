/**
 * The console's view model (src/app/model.ts) folded from real Events: a Mission driven through
 * an in-process Authority by signed Commands of @weft/client (`@weft/authority/testing`), from
 * creation through WorkItems, leases, usage, Artifacts, Evidence and Messages to submission for
 * approval and a change request; then the delivery rules of §16 (duplicates, gaps).
 */
import { createTestOrganization, TEST_CAPABILITY } from '@weft/authority/testing'
import { sha256Tagged, sign, utf8Encode } from '@weft/codec'
import type { Approval, Artifact, Event, Evidence, WorkContract } from '@weft/spec'
import { missionPayload } from '@weft/testkit/documents'
import { PATCH_SCHEMA, contract as testContract } from '@weft/testkit/work-contract'
import { eventPayloads } from '@weft/validators/payloads'
import { beforeAll, describe, expect, it } from 'vitest'
import { leaseLanes } from '../src/app/lease-lanes.js'
import { foldEvents, receiveEvent, createGroupView, type GroupView } from '../src/app/model.js'
import { describeSubmission } from '../src/app/submission.js'
import { missionLimit } from '../src/app/usage.js'

const GROUP = 'urn:weft:test:group:console'
const MISSION = 'urn:weft:test:mission:console'
const T0 = Date.parse('2026-07-15T00:00:00Z')

const org = createTestOrganization({ humans: ['owner'], agents: ['coordinator', 'worker', 'reviewer'] })
let nowMs = T0
const clock = { now: () => nowMs }
const at = (): string => new Date(nowMs).toISOString()
const tick = (seconds: number): void => {
  nowMs += seconds * 1000
}

/** The kit's Work Contract for `goal`, requiring the capability the test Organization's Agents hold. */
function contract(goal: string, dependencyWorkItemIds: string[] = []): WorkContract {
  return testContract({ goal, dependencyWorkItemIds, requiredCapabilities: [TEST_CAPABILITY] })
}

const selection = {
  requiredCapabilities: [TEST_CAPABILITY],
  verifiedMatches: [TEST_CAPABILITY],
  authorizationEligible: true,
  availabilityEstimate: '2026-07-15T00:00:00Z',
  expectedCost: 1,
  reliabilityEvidence: [],
  policyRulesApplied: ['weft.test.first-fit'],
}

/** The Mission of the run: the kit's payload with a title that is HTML, which the view holds as text. */
const missionCreate = missionPayload(MISSION, {
  title: 'Ship <b>checkout</b> & friends',
  objective: 'Ship the checkout flow.',
  definitionOfDone: [{ criterionId: 'tests-pass', description: 'It ships with green tests.', evidenceRequired: ['deterministic_test'] }],
  coordinatorAgentId: org.agents.coordinator.actor.id,
})

let events: readonly Event[] = []
const W1 = 'urn:weft:test:work:build'
const W2 = 'urn:weft:test:work:docs'
const W3 = 'urn:weft:test:work:spare'
let artifact: Artifact

beforeAll(async () => {
  const { authority, clientOf } = await org.start({ groupId: GROUP, clock })
  const owner = clientOf(org.humans.owner)
  const coordinator = clientOf(org.agents.coordinator)
  const worker = clientOf(org.agents.worker)
  await owner.missionCreate(missionCreate, { groupId: GROUP })
  for (const [who, role] of [
    [org.agents.worker, 'worker'],
    [org.agents.reviewer, 'reviewer'],
  ] as const) {
    await coordinator.membershipChange({ membershipId: `${GROUP}:membership:${who.name}`, member: who.actor, role, state: 'active', scopes: ['group:read'] })
  }
  await owner.messagePost({
    messageId: 'urn:weft:test:message:1',
    conversationId: authority.group(GROUP)!.group.mainConversationId,
    content: [{ type: 'text', text: '<img src=x onerror=alert(1)> deploy now' }],
  })
  await coordinator.workAuthorize({ workItemId: W1, contract: contract('Build the checkout') })
  await coordinator.workAuthorize({ workItemId: W2, contract: contract('Document the checkout', [W1]), dependencyIds: [W1] })
  await coordinator.workAuthorize({ workItemId: W3, contract: contract('Spare work') })
  await coordinator.workCancel({ workItemId: W3, reason: 'Not needed.' })
  await coordinator.workOffer({ workItemId: W1, candidateAgentIds: [org.agents.worker.actor.id], selectionBasis: selection, offerExpiresInSeconds: 600 })
  tick(5)
  const accepted = await worker.workAcceptOffer({ workItemId: W1, ownershipLeaseSeconds: 3600 })
  const epoch = (accepted.events[0]!.payload as { ownershipEpoch: number }).ownershipEpoch
  tick(5)
  const started = await worker.workStart({ workItemId: W1, ownershipEpoch: epoch, executionLeaseSeconds: 600 })
  const leaseId = (started.events.find((e) => e.kind === 'work.started')!.payload as { executionLease: { leaseId: string } }).executionLease.leaseId
  tick(30)
  await worker.coreResourceUsageRecord({ workItemId: W1, ownershipEpoch: epoch, executionLeaseId: leaseId, usageDelta: { financialMicrounits: 250_000, modelTokens: 1200, toolCalls: 3 } })
  tick(30)
  await worker.coreResourceUsageRecord({ workItemId: W1, ownershipEpoch: epoch, executionLeaseId: leaseId, usageDelta: { modelTokens: 800 } })
  const content = 'diff --git a/checkout b/checkout'
  const contentHash = sha256Tagged(utf8Encode(content))
  artifact = sign(
    'artifact',
    {
      artifactId: 'urn:weft:test:artifact:1',
      contentHash,
      uri: 'javascript:alert(1)',
      sizeBytes: utf8Encode(content).byteLength,
      mediaType: 'text/x-diff',
      schemaUri: PATCH_SCHEMA,
      producer: { agentId: org.agents.worker.actor.id, agentCardVersion: 1, capabilities: [TEST_CAPABILITY] },
      missionId: MISSION,
      groupId: GROUP,
      workItemId: W1,
      sourceArtifactHashes: [],
      toolVersions: [],
      modelVersions: [],
      classification: 'internal',
      createdAt: at(),
    },
    org.agents.worker.signingKey,
  ) as unknown as Artifact
  await worker.artifactPublish({ artifact, ownershipEpoch: epoch, executionLeaseId: leaseId })
  const evidenceBy = (who: typeof org.agents.worker, id: string): Evidence =>
    sign(
      'evidence',
      {
        evidenceId: id,
        missionId: MISSION,
        groupId: GROUP,
        workItemId: W1,
        type: 'deterministic_test',
        subject: { type: 'work_item', id: W1 },
        criterionIds: ['tests-pass'],
        method: 'Ran the test suite.',
        result: 'passed',
        artifactHashes: [contentHash],
        generatedBy: who.actor,
        createdAt: at(),
      },
      who.signingKey,
    ) as unknown as Evidence
  tick(10)
  await worker.workSubmit({
    workItemId: W1,
    ownershipEpoch: epoch,
    executionLeaseId: leaseId,
    artifactIds: [artifact.artifactId],
    evidence: [evidenceBy(org.agents.worker, 'urn:weft:test:evidence:submitted')],
  })
  tick(10)
  await coordinator.workAcceptResult({ workItemId: W1, evidence: [evidenceBy(org.agents.reviewer, 'urn:weft:test:evidence:review')] })
  await coordinator.workCancel({ workItemId: W2, reason: 'Folded into the build.' })
  await coordinator.missionSubmitForApproval({ artifactHashes: [contentHash] })
  const submission = authority.group(GROUP)!.submission!
  const changes = sign(
    'approval',
    {
      approvalId: 'urn:weft:test:approval:1',
      kind: 'mission_final',
      decision: 'changes_requested',
      missionId: MISSION,
      groupId: GROUP,
      missionRevision: submission.missionRevision,
      artifactHashes: [...submission.artifactHashes],
      acceptancePolicyVersion: '1.0.0',
      approver: org.humans.owner.actor,
      comments: 'Add docs.',
      conditions: ['Document the flow'],
      occurredAt: at(),
    },
    org.humans.owner.signingKey,
  ) as unknown as Approval
  await owner.missionRequestChanges({ approval: changes })
  await coordinator.missionSubmitForApproval({ artifactHashes: [contentHash] })
  events = authority.events(GROUP)
})

describe('the console view model folded from an Authority’s Events', () => {
  it('uses Events that are schema-valid payloads', () => {
    expect(events.length).toBeGreaterThan(15)
    for (const e of events) expect([e.kind, eventPayloads[e.kind as keyof typeof eventPayloads].errors(e.payload)]).toEqual([e.kind, []])
  })

  it('holds the Mission: title, state, revision, budget and the Messages as text', () => {
    const view = foldEvents(GROUP, events)
    expect(view.head).toBe(events.length)
    expect(view.missionId).toBe(MISSION)
    // Untrusted text is kept verbatim; the UI renders it as text only.
    expect(view.title).toBe('Ship <b>checkout</b> & friends')
    expect(view.missionState).toBe('awaiting_approval')
    expect(view.missionRevision).toBe(events.filter((e) => e.kind.startsWith('mission.')).at(-1)!.aggregateRevision)
    expect(missionLimit(view.mission?.budget, 'financialMicrounits')).toBe(1_000_000_000)
    expect(view.messages.map((m) => m.message.content)).toEqual([[{ type: 'text', text: '<img src=x onerror=alert(1)> deploy now' }]])
    expect(view.events).toHaveLength(events.length)
  })

  it('builds the WorkItem graph with states and dependencies (§10.4)', () => {
    const view = foldEvents(GROUP, events)
    expect([...view.workItems.values()].map((w) => [w.workItemId, w.state])).toEqual([
      [W1, 'verified'],
      [W2, 'cancelled'],
      [W3, 'cancelled'],
    ])
    expect(view.workItems.get(W2)!.dependencyIds).toEqual([W1])
    expect(view.workItems.get(W3)!.reason).toBe('Not needed.')
  })

  it('traces ownership and execution leases with their epochs and how they ended (§11.3)', () => {
    const view = foldEvents(GROUP, events)
    const of = (kind: string) => view.leases.filter((l) => l.kind === kind && l.workItemId === W1)
    expect(of('ownership')).toMatchObject([{ holderId: org.agents.worker.actor.id, epoch: 1, end: 'released' }])
    expect(of('execution')).toMatchObject([{ holderId: org.agents.worker.actor.id, epoch: 1, end: 'released' }])
    // The execution lease was released by the submission, 70 s after it started.
    const exec = of('execution')[0]!
    expect(Date.parse(exec.endedAt!) - Date.parse(exec.startedAt)).toBe(70_000)
    expect(view.leases.filter((l) => l.kind === 'coordinator')).toMatchObject([{ holderId: org.agents.coordinator.actor.id, end: 'active' }])
    const lanes = leaseLanes(view, nowMs)
    expect(lanes.map((l) => [l.holderId, l.spans[0]!.kind, l.lane])).toEqual([
      [org.agents.coordinator.actor.id, 'coordinator', 0],
      [org.agents.worker.actor.id, 'ownership', 0],
      [org.agents.worker.actor.id, 'execution', 0],
    ])
  })

  it('keeps the budget ledger: deltas, cumulative per WorkItem, remaining, Mission totals (§12)', () => {
    const view = foldEvents(GROUP, events)
    expect(view.ledger.map((e) => e.delta)).toEqual([{ financialMicrounits: 250_000, modelTokens: 1200, toolCalls: 3 }, { modelTokens: 800 }])
    expect(view.ledger.at(-1)!.missionTotal).toEqual({ financialMicrounits: 250_000, modelTokens: 2000, toolCalls: 3 })
    const w = view.workItems.get(W1)!
    expect(w.cumulativeUsage).toMatchObject({ financialMicrounits: 250_000, modelTokens: 2000, toolCalls: 3 })
    expect(w.remainingBudget).toMatchObject({ financialMicrounits: 9_750_000, modelTokens: 8000, toolCalls: 47 })
  })

  it('describes the pending submission as the Approval page shows it (§7.3)', () => {
    const view = foldEvents(GROUP, events)
    expect(view.decisions.map((d) => d.approval.decision)).toEqual(['changes_requested'])
    const submission = view.submission!
    expect(submission.artifactHashes).toEqual([artifact.contentHash])
    const [described] = describeSubmission(view, submission)
    expect(described).toMatchObject({ hash: artifact.contentHash, workItemId: W1, deliverable: { deliverableId: 'patch' } })
    expect(described!.manifest?.mediaType).toBe('text/x-diff')
    expect(described!.criteria).toEqual([
      {
        criterionId: 'tests-pass',
        criterion: { criterionId: 'tests-pass', description: 'The tests pass.', evidenceRequired: ['deterministic_test'] },
        evidence: [
          { evidenceId: 'urn:weft:test:evidence:submitted', type: 'deterministic_test', result: 'passed', source: 'submitted', method: 'Ran the test suite.', generatedBy: org.agents.worker.actor.id },
          { evidenceId: 'urn:weft:test:evidence:review', type: 'deterministic_test', result: 'passed', source: 'review', method: 'Ran the test suite.', generatedBy: org.agents.reviewer.actor.id },
        ],
      },
    ])
  })

  it('links Artifacts and Evidence for the provenance graph (§13)', () => {
    const view = foldEvents(GROUP, events)
    expect([...view.artifacts.keys()]).toEqual([artifact.contentHash])
    expect([...view.evidence.values()].map((e) => [e.evidence.evidenceId, e.source])).toEqual([
      ['urn:weft:test:evidence:submitted', 'submitted'],
      ['urn:weft:test:evidence:review', 'review'],
    ])
  })
})

describe('delivery into the view (§16)', () => {
  it('drops duplicates and waits for gaps: any delivery order gives the in-order view', () => {
    const inOrder = foldEvents(GROUP, events)
    const shuffled = [...events].reverse()
    const view = createGroupView(GROUP)
    for (const e of shuffled) receiveEvent(view, e)
    for (const e of events.slice(0, 5)) expect(receiveEvent(view, e)).toBe(0)
    expect(strip(view)).toEqual(strip(inOrder))
    expect(view.pending.size).toBe(0)
  })

  it('applies nothing past a gap until it is filled', () => {
    const view = createGroupView(GROUP)
    expect(receiveEvent(view, events[0]!)).toBe(1)
    expect(receiveEvent(view, events[2]!)).toBe(0)
    expect(view.head).toBe(1)
    expect(receiveEvent(view, events[1]!)).toBe(2)
    expect(view.head).toBe(3)
  })

  it('ignores Events of another Group', () => {
    const view = createGroupView('urn:weft:test:group:other')
    expect(receiveEvent(view, events[0]!)).toBe(0)
    expect(view.head).toBe(0)
  })
})

function strip(view: GroupView): unknown {
  return { ...view, version: 0, pending: undefined }
}
