import { describe, expect, it } from 'vitest'
import { cast, contract, evidence, type Cast, DEFAULT_TEST_POLICY } from '@weft/testkit/fixtures'
import { accept, activate, authorize, checkpointOf, exec, failure, item, offer, publish, refused, rejection, start, submit, wid, world, type Running, type World } from '../../test/fixtures-work.js'
import { closedLeasesOf } from './leases.js'
import { usageOf } from './work-budget.js'

const renew = 'ext.missionweaveprotocol.core.work_execution_lease_renew'
const usage = 'ext.missionweaveprotocol.core.resource_usage_record'

function checkpoint(w: World, id: string, r: Running, who = cast.worker1) {
  return exec(w, 'work.checkpoint', { workItemId: id, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, checkpoint: checkpointOf(w), resumeWithinSeconds: 900 }, who)
}

function approval(id: string, epoch: number, approvalId = 'urn:weft:test:approval:1', expiresInSeconds = 600) {
  return { approvalId, workItemId: id, ownershipEpoch: epoch, operations: ['write'], resources: ['urn:weft:test:resource:repo'], budget: { toolCallLimit: 10 }, expiresInSeconds }
}

describe('work.start (§11.3)', () => {
  it('issues a new Execution Lease bound to the Agent, Session Epoch, WorkItem and Ownership Epoch', () => {
    const w = world()
    const running = activate(w, wid('a'))
    expect(item(w, wid('a')).executionLease).toMatchObject({
      leaseId: running.leaseId,
      leaseType: 'execution',
      workItemId: wid('a'),
      holderAgentId: cast.worker1.actor.id,
      sessionEpoch: 1,
      ownershipEpoch: 1,
      renewalCount: 0,
      state: 'active',
      expiresAt: '2026-07-15T00:10:00.000Z',
    })
    expect(item(w, wid('a')).executionLeaseIds.has(running.leaseId)).toBe(true)
  })

  it('needs every dependency verified', () => {
    const w = world()
    authorize(w, wid('dep'))
    exec(w, 'work.authorize', { workItemId: wid('a'), contract: contract(), dependencyIds: [wid('dep')] }, cast.coordinator)
    offer(w, wid('a'))
    accept(w, wid('a'))
    try {
      start(w, wid('a'))
      expect.unreachable()
    } catch (error) {
      expect(error).toMatchObject({ code: 'INVALID_STATE_TRANSITION', details: { unsatisfiedDependencies: [wid('dep')] } })
    }
    offer(w, wid('dep'), [cast.worker2])
    accept(w, wid('dep'), cast.worker2)
    const r = start(w, wid('dep'), cast.worker2)
    submit(w, wid('dep'), r, cast.worker2)
    exec(w, 'work.accept_result', { workItemId: wid('dep'), evidence: [evidence(w.group, wid('dep'), cast.reviewer)] }, cast.coordinator)
    start(w, wid('a'))
    expect(item(w, wid('a')).doc.state).toBe('active')
  })

  it('refuses another Agent (AUTH_FORBIDDEN) and a fenced epoch (WORK_STALE_OWNERSHIP)', () => {
    const w = world()
    authorize(w, wid('a'))
    offer(w, wid('a'))
    accept(w, wid('a'))
    expect(refused(w, 'work.start', { workItemId: wid('a'), ownershipEpoch: 1, executionLeaseSeconds: 60 }, cast.worker2)).toBe('AUTH_FORBIDDEN')
    expect(refused(w, 'work.start', { workItemId: wid('a'), ownershipEpoch: 2, executionLeaseSeconds: 60 }, cast.worker1)).toBe('WORK_STALE_OWNERSHIP')
    start(w, wid('a'))
    expect(refused(w, 'work.start', { workItemId: wid('a'), ownershipEpoch: 1, executionLeaseSeconds: 60 }, cast.worker1)).toBe('INVALID_STATE_TRANSITION')
  })
})

describe('execution approval gate (§12)', () => {
  it('human_required: refused start until the human MissionOwner approves the current epoch', () => {
    const w = world()
    authorize(w, wid('a'), { executionApproval: 'human_required' })
    offer(w, wid('a'))
    accept(w, wid('a'))
    expect(refused(w, 'work.start', { workItemId: wid('a'), ownershipEpoch: 1, executionLeaseSeconds: 60 }, cast.worker1)).toBe('APPROVAL_REQUIRED')
    expect(refused(w, 'approval.grant_execution', approval(wid('a'), 1), cast.controlPlane)).toBe('AUTH_FORBIDDEN')
    expect(refused(w, 'approval.grant_execution', approval(wid('a'), 2), cast.owner)).toBe('WORK_STALE_OWNERSHIP')
    expect(refused(w, 'approval.grant_execution', { ...approval(wid('a'), 1), operations: ['deploy'] }, cast.owner)).toBe('INVALID_COMMAND')
    expect(refused(w, 'approval.grant_execution', { ...approval(wid('a'), 1), budget: { toolCallLimit: 51 } }, cast.owner)).toBe('BUDGET_EXCEEDED')
    const [granted] = exec(w, 'approval.grant_execution', approval(wid('a'), 1), cast.owner)
    expect(granted?.payload).toMatchObject({ expiresAt: '2026-07-15T00:10:00.000Z', ownershipEpoch: 1 })
    // The approval is its own aggregate: the WorkItem revision does not move.
    expect(granted?.aggregateRevision).toBe(1)
    expect(refused(w, 'approval.grant_execution', approval(wid('a'), 1), cast.owner)).toBe('INVALID_COMMAND')
    start(w, wid('a'))
    expect(item(w, wid('a')).doc.state).toBe('active')
  })

  it('policy_required: the control plane may approve; an expired approval does not open the gate', () => {
    const w = world()
    authorize(w, wid('a'), { executionApproval: 'policy_required' })
    offer(w, wid('a'))
    accept(w, wid('a'))
    exec(w, 'approval.grant_execution', approval(wid('a'), 1, 'urn:weft:test:approval:1', 60), cast.controlPlane)
    w.clock.advance(60)
    expect(refused(w, 'work.start', { workItemId: wid('a'), ownershipEpoch: 1, executionLeaseSeconds: 60 }, cast.worker1)).toBe('APPROVAL_REQUIRED')
  })

  it('an approval binds one Ownership Epoch: a reassigned owner needs its own', () => {
    const w = world()
    authorize(w, wid('a'), { executionApproval: 'human_required' })
    offer(w, wid('a'))
    accept(w, wid('a'))
    exec(w, 'approval.grant_execution', approval(wid('a'), 1), cast.owner)
    w.clock.advance(3601)
    offer(w, wid('a'), [cast.worker2])
    accept(w, wid('a'), cast.worker2)
    expect(refused(w, 'work.start', { workItemId: wid('a'), ownershipEpoch: 2, executionLeaseSeconds: 60 }, cast.worker2)).toBe('APPROVAL_REQUIRED')
  })

  it('organization policy can require an approval the contract does not', () => {
    const w = world()
    authorize(w, wid('a'))
    offer(w, wid('a'))
    accept(w, wid('a'))
    expect(refused(w, 'approval.grant_execution', approval(wid('a'), 1), cast.owner)).toBe('INVALID_STATE_TRANSITION')
    Object.assign(DEFAULT_TEST_POLICY, { requiresExecutionApproval: () => true })
    try {
      expect(refused(w, 'work.start', { workItemId: wid('a'), ownershipEpoch: 1, executionLeaseSeconds: 60 }, cast.worker1)).toBe('APPROVAL_REQUIRED')
      exec(w, 'approval.grant_execution', approval(wid('a'), 1), cast.owner)
      start(w, wid('a'))
    } finally {
      delete (DEFAULT_TEST_POLICY as { requiresExecutionApproval?: unknown }).requiresExecutionApproval
    }
    expect(item(w, wid('a')).doc.state).toBe('active')
  })
})

describe('Execution Lease fencing (§11.3, §11.5)', () => {
  it('a delayed Command with an older Lease ID is rejected in the same Ownership Epoch', () => {
    const w = world()
    const first = activate(w, wid('a'))
    checkpoint(w, wid('a'), first)
    const second = start(w, wid('a'))
    expect(second.epoch).toBe(first.epoch)
    expect(second.leaseId).not.toBe(first.leaseId)
    const stale = { workItemId: wid('a'), ownershipEpoch: first.epoch, executionLeaseId: first.leaseId }
    expect(refused(w, renew, { ...stale, leaseSeconds: 600 }, cast.worker1)).toBe('WORK_LEASE_EXPIRED')
    expect(refused(w, usage, { ...stale, usageDelta: { toolCalls: 1 } }, cast.worker1)).toBe('WORK_LEASE_EXPIRED')
    const artifactId = publish(w, wid('a'), second)
    expect(refused(w, 'work.submit', { ...stale, artifactIds: [artifactId], evidence: [evidence(w.group, wid('a'), cast.worker1)] }, cast.worker1)).toBe('WORK_LEASE_EXPIRED')
  })

  it('an expired Execution Lease refuses renewal', () => {
    const w = world()
    const r = activate(w, wid('a'))
    w.clock.advance(600)
    expect(refused(w, renew, { workItemId: wid('a'), ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, leaseSeconds: 600 }, cast.worker1)).toBe('WORK_LEASE_EXPIRED')
  })

  it('reassignment after lease expiry: higher epoch, the old owner is fenced, the new one resumes from the checkpoint', () => {
    const w = world()
    const first = activate(w, wid('a'))
    checkpoint(w, wid('a'), first)
    const saved = item(w, wid('a')).lastCheckpoint
    const again = start(w, wid('a'))
    w.clock.advance(601)
    const [created] = offer(w, wid('a'), [cast.worker2])
    expect(created?.payload).toMatchObject({ fencedOwnershipEpoch: 1 })
    expect(closedLeasesOf(item(w, wid('a'))).map((l) => [l.leaseType, l.state])).toContainEqual(['execution', 'expired'])
    accept(w, wid('a'), cast.worker2)
    expect(item(w, wid('a')).doc.owner).toMatchObject({ agentId: cast.worker2.actor.id, ownershipEpoch: 2 })
    expect(item(w, wid('a')).lastCheckpoint).toEqual(saved)
    const artifactId = publish(w, wid('a'), again)
    const late = { workItemId: wid('a'), ownershipEpoch: 1, executionLeaseId: again.leaseId, artifactIds: [artifactId], evidence: [evidence(w.group, wid('a'), cast.worker1)] }
    expect(refused(w, 'work.submit', late, cast.worker1)).toBe('WORK_STALE_OWNERSHIP')
    const resumed = start(w, wid('a'), cast.worker2)
    submit(w, wid('a'), resumed, cast.worker2)
    expect(item(w, wid('a')).doc.state).toBe('submitted')
  })

  it('an offer cannot fence a live owner', () => {
    const w = world()
    activate(w, wid('a'))
    expect(
      refused(
        w,
        'work.offer',
        { workItemId: wid('a'), candidateAgentIds: [cast.worker2.actor.id], selectionBasis: item(w, wid('a')).doc.selectionBasis!, offerExpiresInSeconds: 60 },
        cast.coordinator,
      ),
    ).toBe('INVALID_STATE_TRANSITION')
  })
})

describe('checkpoint, block and unblock (§11.3, §11.4)', () => {
  it('a checkpoint keeps ownership until resumeBy; after it passes the owner cannot start', () => {
    const w = world()
    const r = activate(w, wid('a'))
    checkpoint(w, wid('a'), r)
    expect(item(w, wid('a')).doc.state).toBe('queued')
    expect(closedLeasesOf(item(w, wid('a'))).at(-1)).toMatchObject({ leaseId: r.leaseId, state: 'released', closureReason: 'checkpoint' })
    w.clock.advance(900)
    expect(refused(w, 'work.start', { workItemId: wid('a'), ownershipEpoch: 1, executionLeaseSeconds: 60 }, cast.worker1)).toBe('WORK_LEASE_EXPIRED')
  })

  it('refuses a checkpoint dated after acceptance', () => {
    const w = world()
    const r = activate(w, wid('a'))
    const future = { ...checkpointOf(w), createdAt: '2026-07-15T01:00:00.000Z' }
    expect(refused(w, 'work.checkpoint', { workItemId: wid('a'), ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, checkpoint: future, resumeWithinSeconds: 60 }, cast.worker1)).toBe(
      'INVALID_COMMAND',
    )
  })

  it('block records the blocker in progress; unblock clears it and re-queues the live owner', () => {
    const w = world()
    const r = activate(w, wid('a'))
    const progress = { currentPhase: 'build', completedMilestones: [], nextCheckpoint: 'tests', blockers: [], updatedCompletionEstimate: '2026-07-20T00:00:00Z', evidenceIds: [] }
    exec(w, renew, { workItemId: wid('a'), ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, leaseSeconds: 600, progress }, cast.worker1)
    const [blocked] = exec(
      w,
      'work.block',
      { workItemId: wid('a'), ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, checkpoint: checkpointOf(w), reason: 'No access.', blockedLeaseSeconds: 300 },
      cast.worker1,
    )
    expect(item(w, wid('a')).doc.progress?.blockers).toEqual(['No access.'])
    expect(item(w, wid('a')).ownershipLease?.expiresAt).toBe((blocked!.payload as { blockedLeaseExpiresAt: string }).blockedLeaseExpiresAt)
    const [unblocked] = exec(w, 'work.unblock', { workItemId: wid('a') }, cast.worker1)
    expect(unblocked?.payload).toMatchObject({ nextState: 'queued', ownershipEpoch: 1 })
    expect(item(w, wid('a')).doc.progress?.blockers).toEqual([])
    start(w, wid('a'))
  })
})

describe('resource usage (§12)', () => {
  it('accumulates per WorkItem and reports the remaining budget; overflow appends nothing', () => {
    const w = world()
    const r = activate(w, wid('a'))
    const at = { workItemId: wid('a'), ownershipEpoch: r.epoch, executionLeaseId: r.leaseId }
    exec(w, usage, { ...at, usageDelta: { toolCalls: 20, financialMicrounits: 2_500_000 } }, cast.worker1)
    const [second] = exec(w, usage, { ...at, usageDelta: { toolCalls: 20, modelTokens: 100 } }, cast.worker1)
    expect(second?.payload).toMatchObject({
      cumulativeUsage: { toolCalls: 40, financialMicrounits: 2_500_000, modelTokens: 100, computeSeconds: 0 },
      remainingBudget: { toolCalls: 10, financialMicrounits: 7_500_000, modelTokens: 9_900 },
    })
    expect(refused(w, usage, { ...at, usageDelta: { toolCalls: 11 } }, cast.worker1)).toBe('BUDGET_EXCEEDED')
    expect(refused(w, usage, { ...at, usageDelta: { financialMicrounits: 7_500_001 } }, cast.worker1)).toBe('BUDGET_EXCEEDED')
    expect(refused(w, usage, { ...at, usageDelta: { toolCalls: 0 } }, cast.worker1)).toBe('INVALID_COMMAND')
    expect(usageOf(item(w, wid('a'))).own.toolCalls).toBe(40)
  })

  it('charges the WorkItem ancestry: a child cannot overdraw its parent', () => {
    const w = world()
    const parent = activate(w, wid('parent'))
    exec(w, usage, { workItemId: wid('parent'), ownershipEpoch: parent.epoch, executionLeaseId: parent.leaseId, usageDelta: { toolCalls: 45 } }, cast.worker1)
    exec(
      w,
      'work.authorize',
      { workItemId: wid('child'), contract: contract({ budget: { currency: 'USD', financialLimit: 1, modelTokenLimit: 100, toolCallLimit: 10 } }), parentWorkItemId: wid('parent') },
      cast.coordinator,
    )
    offer(w, wid('child'), [cast.worker2])
    accept(w, wid('child'), cast.worker2)
    const child = start(w, wid('child'), cast.worker2)
    const at = { workItemId: wid('child'), ownershipEpoch: child.epoch, executionLeaseId: child.leaseId }
    try {
      exec(w, usage, { ...at, usageDelta: { toolCalls: 6 } }, cast.worker2)
      expect.unreachable()
    } catch (error) {
      expect(error).toMatchObject({ code: 'BUDGET_EXCEEDED', details: { scope: `WorkItem ${wid('parent')}` } })
    }
    exec(w, usage, { ...at, usageDelta: { toolCalls: 5 } }, cast.worker2)
    expect(usageOf(item(w, wid('parent'))).subtree.toolCalls).toBe(50)
  })
})

describe('work.submit (§13.2)', () => {
  it('carries the Artifact hashes and releases the Execution Lease', () => {
    const w = world()
    const r = activate(w, wid('a'))
    const [submitted] = submit(w, wid('a'), r)
    const record = item(w, wid('a'))
    expect(submitted?.payload).toMatchObject({ artifactHashes: [record.doc.submission?.artifactHashes[0]] })
    expect(record.executionLease).toBeUndefined()
    expect(record.doc.submission?.evidenceIds).toHaveLength(1)
  })

  it('refuses Artifacts of another WorkItem and Evidence about another WorkItem', () => {
    const w = world()
    const r = activate(w, wid('a'))
    const other = activate(w, wid('b'), cast.worker2)
    const base = { workItemId: wid('a'), ownershipEpoch: r.epoch, executionLeaseId: r.leaseId }
    expect(refused(w, 'work.submit', { ...base, artifactIds: [publish(w, wid('b'), other)], evidence: [evidence(w.group, wid('a'), cast.worker1)] }, cast.worker1)).toBe('INVALID_COMMAND')
    expect(refused(w, 'work.submit', { ...base, artifactIds: [publish(w, wid('a'), r)], evidence: [evidence(w.group, wid('b'), cast.worker1)] }, cast.worker1)).toBe('INVALID_COMMAND')
    try {
      exec(w, 'work.submit', { ...base, artifactIds: [publish(w, wid('a'), r)], evidence: [evidence(w.group, wid('a'), cast.worker1, ['tests-pass'], 'inconclusive')] }, cast.worker1)
      expect.unreachable()
    } catch (error) {
      expect(error).toMatchObject({ code: 'INVALID_COMMAND', details: { uncoveredCriteria: ['tests-pass'] } })
    }
  })

  it('needs a submitted Artifact of the media type and schema of every required deliverable (§10.1)', () => {
    const w = world()
    const r = activate(w, wid('a'))
    const base = { workItemId: wid('a'), ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, evidence: [evidence(w.group, wid('a'), cast.worker1)] }
    /** Publishes an Artifact of WorkItem a, then gives its manifest another kind. */
    const publishAs = (content: string, kind: { mediaType?: string; schemaUri?: string }): string => {
      const id = publish(w, wid('a'), r, content)
      const entry = w.group.artifacts.get(id)!
      w.group.artifacts.set(id, { ...entry, manifest: { ...entry.manifest, ...kind } })
      return id
    }
    const plain = publishAs('notes', { mediaType: 'text/plain' })
    const otherSchema = publishAs('diff against another schema', { schemaUri: 'urn:weft:test:schema:other' })
    for (const artifactIds of [[plain], [otherSchema], [plain, otherSchema]]) {
      try {
        exec(w, 'work.submit', { ...base, artifactIds }, cast.worker1)
        expect.unreachable()
      } catch (error) {
        expect(error).toMatchObject({ code: 'INVALID_COMMAND', details: { missingDeliverables: ['patch'] } })
      }
    }
    expect(item(w, wid('a')).doc.state).toBe('active')
    // Extra Artifacts beside the deliverable are fine.
    exec(w, 'work.submit', { ...base, artifactIds: [plain, publish(w, wid('a'), r)] }, cast.worker1)
    expect(item(w, wid('a')).doc.state).toBe('submitted')
  })

  it('a contract with two deliverables needs both', () => {
    const report = { deliverableId: 'report', description: 'The test report.', mediaType: 'application/json', schema: 'urn:weft:test:schema:report' }
    const w = world()
    const r = activate(w, wid('a'), cast.worker1, { requiredDeliverables: [...contract().requiredDeliverables, report] })
    const base = { workItemId: wid('a'), ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, evidence: [evidence(w.group, wid('a'), cast.worker1)] }
    const patch = publish(w, wid('a'), r)
    expect(refused(w, 'work.submit', { ...base, artifactIds: [patch] }, cast.worker1)).toBe('INVALID_COMMAND')
    const reportId = publish(w, wid('a'), r, '{"passed":12}')
    const entry = w.group.artifacts.get(reportId)!
    w.group.artifacts.set(reportId, { ...entry, manifest: { ...entry.manifest, mediaType: report.mediaType, schemaUri: report.schema } })
    exec(w, 'work.submit', { ...base, artifactIds: [patch, reportId] }, cast.worker1)
    expect(item(w, wid('a')).doc.state).toBe('submitted')
  })
})

describe('work.accept_result (§13.2, §7.2)', () => {
  it('verifies, keeps the Evidence as accepted and releases the unspent reservation', () => {
    const w = world()
    const r = activate(w, wid('a'))
    submit(w, wid('a'), r)
    const review = evidence(w.group, wid('a'), cast.reviewer)
    exec(w, 'work.accept_result', { workItemId: wid('a'), evidence: [review] }, cast.coordinator)
    const record = item(w, wid('a'))
    expect(record.doc.state).toBe('verified')
    expect(w.group.acceptedEvidence.map((e) => e.evidenceId)).toContain(review.evidenceId)
    expect(w.group.acceptedEvidence).toHaveLength(2)
    expect(record.reservedBudget).toMatchObject({ toolCallLimit: 0 })
    expect(record.ownershipLease).toBeUndefined()
  })

  it('a Coordinator must not be the sole reviewer of its own output', () => {
    const w = world()
    const r = activate(w, wid('a'), cast.coordinator)
    submit(w, wid('a'), r, cast.coordinator)
    expect(refused(w, 'work.accept_result', { workItemId: wid('a'), evidence: [evidence(w.group, wid('a'), cast.coordinator)] }, cast.coordinator)).toBe('AUTH_FORBIDDEN')
    exec(w, 'work.accept_result', { workItemId: wid('a'), evidence: [evidence(w.group, wid('a'), cast.coordinator), evidence(w.group, wid('a'), cast.reviewer)] }, cast.coordinator)
    expect(item(w, wid('a')).doc.state).toBe('verified')
  })

  it('needs every required Evidence type across submission and review', () => {
    const w = world()
    const criteria = [{ criterionId: 'tests-pass', description: 'Tests pass and a reviewer agrees.', evidenceRequired: ['deterministic_test' as const, 'reviewer_assessment' as const] }]
    const r = activate(w, wid('a'), cast.worker1, { acceptanceCriteria: criteria })
    submit(w, wid('a'), r)
    expect(refused(w, 'work.accept_result', { workItemId: wid('a'), evidence: [evidence(w.group, wid('a'), cast.reviewer)] }, cast.coordinator)).toBe('INVALID_COMMAND')
    const assessment = { ...evidence(w.group, wid('a'), cast.reviewer), type: 'reviewer_assessment' as const }
    exec(w, 'work.accept_result', { workItemId: wid('a'), evidence: [assessment] }, cast.coordinator)
    expect(item(w, wid('a')).doc.state).toBe('verified')
  })

  it('[command work.accept_result] [event work.result.accepted] judges the submission and review Evidence together: a reviewer assessment accepts what the submission tested', () => {
    const w = world()
    const r = activate(w, wid('a'))
    // The submission carries the passing deterministic_test the criterion requires.
    submit(w, wid('a'), r)
    const assessment = { ...evidence(w.group, wid('a'), cast.reviewer), type: 'reviewer_assessment' as const }
    const [accepted] = exec(w, 'work.accept_result', { workItemId: wid('a'), evidence: [assessment] }, cast.coordinator)
    expect(accepted?.kind).toBe('work.result.accepted')
    expect(item(w, wid('a')).doc.state).toBe('verified')
  })

  it('[error INVALID_COMMAND] failing Evidence in the submission blocks acceptance even when the review passes', () => {
    const w = world()
    const r = activate(w, wid('a'))
    const flaky = failure(w, wid('a'), cast.worker1)
    exec(
      w,
      'work.submit',
      { workItemId: wid('a'), ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, artifactIds: [publish(w, wid('a'), r)], evidence: [evidence(w.group, wid('a'), cast.worker1), flaky] },
      cast.worker1,
    )
    const error = rejection(w, 'work.accept_result', { workItemId: wid('a'), evidence: [evidence(w.group, wid('a'), cast.reviewer)] }, cast.coordinator)
    expect(error).toMatchObject({ code: 'INVALID_COMMAND', details: { uncoveredCriteria: [], failedEvidence: [flaky.evidenceId] } })
    expect(item(w, wid('a')).doc.state).toBe('submitted')
  })

  it('[error INVALID_COMMAND] Evidence of a submission under a fenced Ownership Epoch covers nothing', () => {
    const w = world()
    const criteria = [{ criterionId: 'tests-pass', description: 'Tests and business rules pass.', evidenceRequired: ['deterministic_test' as const, 'business_rule' as const] }]
    const r1 = activate(w, wid('a'), cast.worker1, { acceptanceCriteria: criteria })
    const rule = (by: Cast) => ({ ...evidence(w.group, wid('a'), by), type: 'business_rule' as const })
    // Epoch 1 submits both required types, then fails and is re-offered.
    exec(
      w,
      'work.submit',
      {
        workItemId: wid('a'),
        ownershipEpoch: r1.epoch,
        executionLeaseId: r1.leaseId,
        artifactIds: [publish(w, wid('a'), r1)],
        evidence: [evidence(w.group, wid('a'), cast.worker1), rule(cast.worker1)],
      },
      cast.worker1,
    )
    exec(w, 'work.fail', { workItemId: wid('a'), reason: 'Rejected on review.', evidence: [failure(w, wid('a'))] }, cast.coordinator)
    offer(w, wid('a'), [cast.worker2])
    accept(w, wid('a'), cast.worker2)
    const r2 = start(w, wid('a'), cast.worker2)
    expect(r2.epoch).toBe(2)
    // Epoch 2 submits only the business rule; epoch 1's deterministic_test must not stand in for it.
    exec(w, 'work.submit', { workItemId: wid('a'), ownershipEpoch: r2.epoch, executionLeaseId: r2.leaseId, artifactIds: [publish(w, wid('a'), r2)], evidence: [rule(cast.worker2)] }, cast.worker2)
    const assessment = { ...evidence(w.group, wid('a'), cast.reviewer), type: 'reviewer_assessment' as const }
    expect(rejection(w, 'work.accept_result', { workItemId: wid('a'), evidence: [assessment] }, cast.coordinator)).toMatchObject({
      code: 'INVALID_COMMAND',
      details: { uncoveredCriteria: ['tests-pass'] },
    })
    // The review's own test, with epoch 2's business rule, covers both types.
    exec(w, 'work.accept_result', { workItemId: wid('a'), evidence: [evidence(w.group, wid('a'), cast.reviewer)] }, cast.coordinator)
    expect(item(w, wid('a')).doc.state).toBe('verified')
  })

  it('a submission from a fenced Ownership Epoch never completes the WorkItem', () => {
    const w = world()
    const r = activate(w, wid('a'))
    submit(w, wid('a'), r)
    const record = item(w, wid('a'))
    record.doc = { ...record.doc, owner: { ...record.doc.owner!, ownershipEpoch: 2 } }
    expect(refused(w, 'work.accept_result', { workItemId: wid('a'), evidence: [evidence(w.group, wid('a'), cast.reviewer)] }, cast.coordinator)).toBe('WORK_STALE_OWNERSHIP')
  })

  it('only the current Coordinator accepts results', () => {
    const w = world()
    const r = activate(w, wid('a'))
    submit(w, wid('a'), r)
    expect(refused(w, 'work.accept_result', { workItemId: wid('a'), evidence: [evidence(w.group, wid('a'), cast.reviewer)] }, cast.reviewer)).toBe('AUTH_FORBIDDEN')
  })
})

describe('work.fail and work.cancel (§10.2, §11.4, §12)', () => {
  it('the owner fails its WorkItem under its current lease; the leases are revoked', () => {
    const w = world()
    const r = activate(w, wid('a'))
    const [failed] = exec(
      w,
      'work.fail',
      { workItemId: wid('a'), reason: 'Upstream API gone.', ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, evidence: [failure(w, wid('a'), cast.worker1)] },
      cast.worker1,
    )
    expect(failed?.payload).toMatchObject({ ownershipEpoch: 1, executionLeaseId: r.leaseId })
    const record = item(w, wid('a'))
    expect(record.executionLease).toBeUndefined()
    expect(closedLeasesOf(record).map((l) => [l.leaseType, l.state, l.closureReason])).toEqual([
      ['execution', 'revoked', 'failed'],
      ['ownership', 'revoked', 'failed'],
    ])
  })

  it('a Worker without a lease cannot fail the WorkItem; a failed WorkItem is re-offered with a new epoch', () => {
    const w = world()
    activate(w, wid('a'))
    expect(refused(w, 'work.fail', { workItemId: wid('a'), reason: 'Giving up.', evidence: [failure(w, wid('a'), cast.worker1)] }, cast.worker1)).toBe('AUTH_FORBIDDEN')
    exec(w, 'work.fail', { workItemId: wid('a'), reason: 'Giving up.', evidence: [failure(w, wid('a'))] }, cast.controlPlane)
    offer(w, wid('a'), [cast.worker2])
    accept(w, wid('a'), cast.worker2)
    expect(item(w, wid('a')).doc.owner?.ownershipEpoch).toBe(2)
  })

  it('cancel withdraws pending offers and nobody can accept them any more', () => {
    const w = world()
    authorize(w, wid('a'))
    offer(w, wid('a'), [cast.worker1, cast.worker2])
    exec(w, 'work.cancel', { workItemId: wid('a'), reason: 'Descoped.' }, cast.coordinator)
    expect(item(w, wid('a')).doc.offers?.map((o) => o.status)).toEqual(['withdrawn', 'withdrawn'])
    expect(refused(w, 'work.accept_offer', { workItemId: wid('a'), ownershipLeaseSeconds: 60 }, cast.worker1)).toBe('WORK_OFFER_EXPIRED')
    expect(refused(w, 'work.cancel', { workItemId: wid('a'), reason: 'Again.' }, cast.coordinator)).toBe('INVALID_STATE_TRANSITION')
  })
})
