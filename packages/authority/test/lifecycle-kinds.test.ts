/**
 * One test per Command and Event kind, with the Authority driven the way its users drive it: every
 * Command is built and signed by `@weft/client` and carried by `authority.connect()`. Each test
 * claims the kinds it performs and appends in its title (see `coverage.test.ts`); the scenarios are
 * in `lifecycle-scenarios.test.ts` and the §19 codes in `lifecycle-errors.test.ts`.
 */
import { sign } from '@weft/codec'
import type { GroupSnapshot } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { decision, SELECTION } from '@weft/testkit/documents'
import { agentCard, cast, contract, evidence, GROUP } from '@weft/testkit/fixtures'
import { contextPackage } from './fixtures-missions.js'
import { FULL_BUDGET } from './fixtures-work.js'
import { text } from './lifecycle-world.js'
import {
  accept,
  acceptResult,
  approveMission,
  authorize,
  block,
  boot,
  cancelWork,
  checkpoint,
  codeOf,
  createWorld,
  expectRefused,
  failureEvidence,
  grantExecution,
  kinds,
  missionCreate,
  offer,
  openMission,
  payloadOf,
  publish,
  reach,
  reachMission,
  renew,
  runningOf,
  start,
  started,
  submitMission,
  wid,
} from '@weft/testkit/world'

describe('every Command and Event kind, through @weft/client', () => {
  it('registers a newer Agent Card version and refuses an older one [command ext.missionweaveprotocol.registry.agent_card_register] [event ext.missionweaveprotocol.registry.agent_card_registered]', async () => {
    const w = createWorld()
    const first = await w.as.controlPlane.registryAgentCardRegister({ card: agentCard(cast.worker1) })
    expect(payloadOf(first, 'ext.missionweaveprotocol.registry.agent_card_registered').card.cardVersion).toBe(1)
    await w.as.controlPlane.registryAgentCardRegister({ card: agentCard(cast.worker1, 2) })
    expect(w.authority.state.org.agents.get(cast.worker1.actor.id)).toMatchObject({ card: { cardVersion: 2 }, sessionEpoch: 0 })
    expect(await codeOf(w.as.controlPlane.registryAgentCardRegister({ card: agentCard(cast.worker1, 2) }))).toBe('INVALID_COMMAND')
  })

  it('creates a Mission whose owner and Coordinator hold complete-visibility Memberships [command mission.create] [event mission.created]', async () => {
    const w = createWorld()
    await boot(w)
    const created = payloadOf(await openMission(w), 'mission.created')
    expect(created.memberships.map((m) => [m.member.id, m.role, m.membershipEpoch])).toEqual([
      [cast.owner.actor.id, 'mission_owner', 1],
      [cast.coordinator.actor.id, 'coordinator', 1],
    ])
    expect(created.coordinatorLease).toMatchObject({ holderAgentId: cast.coordinator.actor.id, coordinatorEpoch: 1, sessionEpoch: 1, state: 'active' })
    expect(w.group().mission).toMatchObject({ state: 'active', missionOwner: cast.owner.actor, revision: 1 })
  })

  it('appoints a new Coordinator, ending the old one’s seat [command mission.assign_coordinator] [event mission.coordinator.assigned] [event membership.ended]', async () => {
    const w = await started()
    const assigned = await w.as.owner.missionAssignCoordinator({
      coordinatorAgentId: cast.reviewer.actor.id,
      leaseSeconds: 3600,
      contextPackage: contextPackage(w.group()),
      reason: 'The Coordinator stopped renewing.',
    })
    expect(kinds(assigned.events)).toEqual(['mission.coordinator.assigned', 'membership.changed', 'membership.ended'])
    expect(payloadOf(assigned, 'mission.coordinator.assigned')).toMatchObject({ replacedCoordinatorEpoch: 1, coordinator: { agentId: cast.reviewer.actor.id, coordinatorEpoch: 2 } })
    expect(payloadOf(assigned, 'membership.ended').member).toEqual(cast.coordinator.actor)
    expect([w.as.reviewer.epochs.coordinator(GROUP), w.as.coordinator.epochs.coordinator(GROUP), w.as.coordinator.epochs.membership(GROUP)]).toEqual([2, undefined, undefined])
    // §7.2: the replacement coordinates from now on.
    await authorize(w, wid('after-handover'))
    expect(w.item(wid('after-handover')).doc.authorizedBy).toEqual(cast.reviewer.actor)
  })

  it('renews the Coordinator lease [command mission.renew_coordinator] [event mission.coordinator.renewed]', async () => {
    const w = await started()
    const renewed = payloadOf(await w.as.coordinator.missionRenewCoordinator({ leaseSeconds: 172_800 }), 'mission.coordinator.renewed')
    expect(renewed).toMatchObject({ coordinatorEpoch: 1, renewalCount: 1, leaseExpiresAt: '2026-07-17T00:00:00.000Z' })
    expect(w.group().coordinatorLease.expiresAt).toBe('2026-07-17T00:00:00.000Z')
  })

  it('submits a Mission revision with its Artifact set and approves exactly that [command mission.submit_for_approval] [event mission.submitted_for_approval] [command mission.approve] [event mission.approved]', async () => {
    const w = await started()
    await reach(w, 'verified')
    const submitted = payloadOf(await submitMission(w), 'mission.submitted_for_approval')
    expect(submitted.artifactHashes).toEqual([...w.group().artifacts.values()].map((a) => a.manifest.contentHash))
    expect(w.group().mission.state).toBe('awaiting_approval')
    const approved = payloadOf(await approveMission(w), 'mission.approved')
    expect(approved.approval).toMatchObject({ decision: 'approved', kind: 'mission_final', missionRevision: submitted.missionRevision, artifactHashes: submitted.artifactHashes })
  })

  it('reopens a submitted Mission on a signed change request [command mission.request_changes] [event mission.changes_requested]', async () => {
    const w = await started()
    await reachMission(w, 'awaiting_approval')
    const requested = await w.as.owner.missionRequestChanges({ approval: decision(w.group(), cast.owner, 'changes_requested') })
    expect(payloadOf(requested, 'mission.changes_requested').approval.decision).toBe('changes_requested')
    expect(w.group().mission.state).toBe('active')
    // §7.3: the Coordinator revises and submits again.
    await reach(w, 'verified')
    await submitMission(w)
    expect(w.group().mission.state).toBe('awaiting_approval')
  })

  it('terminates a Mission; its unfinished WorkItems fail with it [command mission.terminate] [event mission.terminated] [event work.failed]', async () => {
    const w = await started()
    const [queued, verified] = [await reach(w, 'queued'), await reach(w, 'verified')]
    const terminated = await w.as.coordinator.missionTerminate({ reason: 'The deadline cannot be met.' })
    expect(kinds(terminated.events)).toEqual(['mission.terminated', 'work.failed'])
    expect(payloadOf(terminated, 'work.failed').workItemId).toBe(queued)
    expect([w.group().mission.state, w.item(queued).doc.state, w.item(verified).doc.state]).toEqual(['failed', 'failed', 'verified'])
  })

  it('links a follow-up Mission to an approved one, carrying the owner’s revocation [command mission.create_follow_up] [event mission.follow_up.created]', async () => {
    const w = await started()
    await reachMission(w, 'approved')
    const original = w.group()
    const approval = [...original.approvals.values()][0]!
    const revocation = decision(original, cast.owner, 'revoked', { revokesApprovalId: approval.approvalId, comments: 'Superseded by the follow-up.' })
    const followUp = w.in('urn:weft:test:group:follow-up')
    const created = await w.as.owner.missionCreateFollowUp(
      { ...missionCreate('follow-up'), followUpToMissionId: original.missionId, reason: 'A defect was found.', approvalRevocation: revocation },
      { groupId: followUp.groupId },
    )
    expect(payloadOf(created, 'mission.follow_up.created')).toMatchObject({ reason: 'A defect was found.', mission: { followUpToMissionId: original.missionId, state: 'active' } })
    expect([original.mission.state, original.approvals.get(approval.approvalId)?.decision]).toEqual(['approved', 'approved'])
    expect(followUp.group().approvals.get(revocation.approvalId)?.decision).toBe('revoked')
  })

  it('changes a Membership under the next epoch, fencing the previous one [command membership.change] [event membership.changed] [error MEMBERSHIP_STALE]', async () => {
    const w = await started()
    const before = w.as.worker1.build('message.post', { messageId: 'urn:weft:test:message:stale', conversationId: w.group().group.mainConversationId, content: text('Hello.') })
    const changed = await w.as.coordinator.membershipChange({
      membershipId: `${GROUP}:membership:worker1`,
      member: cast.worker1.actor,
      role: 'worker',
      state: 'active',
      scopes: ['group:read', 'work_item:write'],
    })
    expect(payloadOf(changed, 'membership.changed').membership).toMatchObject({ membershipEpoch: 2, scopes: ['group:read', 'work_item:write'] })
    expect(w.as.worker1.epochs.membership(GROUP)).toBe(2)
    expect(await codeOf(w.as.worker1.resend(before))).toBe('MEMBERSHIP_STALE')
  })

  it('ends a Membership; its holder is no member any more [command membership.end] [event membership.ended] [error MEMBERSHIP_REQUIRED]', async () => {
    const w = await started()
    const ended = await w.as.coordinator.membershipEnd({ membershipId: `${GROUP}:membership:worker2`, reason: 'Left the team.' })
    expect(payloadOf(ended, 'membership.ended')).toMatchObject({ member: cast.worker2.actor, membershipEpoch: 1 })
    w.as.worker2.epochs.setMembership(GROUP, 1)
    expect(await codeOf(w.as.worker2.workPropose({ proposalId: wid('late-idea'), contract: contract() }))).toBe('MEMBERSHIP_REQUIRED')
  })

  it('grants a Delegation Grant its grantee authorizes sub-work under [command membership.grant_delegation] [event membership.delegation.granted]', async () => {
    const w = await started()
    const target = await reach(w, 'open')
    await w.as.coordinator.membershipChange({ membershipId: `${GROUP}:membership:worker3`, member: cast.worker3.actor, role: 'work_delegate', state: 'active', scopes: ['group:read'] })
    const grantId = 'urn:weft:test:grant:1'
    const granted = await w.as.coordinator.membershipGrantDelegation({
      grantId,
      granteeAgentId: cast.worker3.actor.id,
      targetWorkItemId: target,
      allowedCapabilities: [SELECTION.requiredCapabilities[0]!],
      budget: FULL_BUDGET,
      maxDescendantDepth: 2,
      granteeMembershipEpoch: 2,
      expiresAt: '2026-07-15T12:00:00.000Z',
    })
    expect(payloadOf(granted, 'membership.delegation.granted').grant).toMatchObject({ grantId, coordinatorEpoch: 1, grantedBy: cast.coordinator.actor })
    const sub = wid('delegated')
    const budget = { currency: 'USD', financialLimit: 1, modelTokenLimit: 100, toolCallLimit: 5, computeSecondsLimit: 10, wallClockSecondsLimit: 10, externalSideEffectLimit: 1 }
    const authorized = await w.as.worker3.workAuthorize({ workItemId: sub, contract: contract({ budget }), parentWorkItemId: target, delegationGrantId: grantId })
    expect(payloadOf(authorized, 'work.authorized')).toMatchObject({ delegationGrantId: grantId, parentWorkItemId: target })
    expect(w.group().grants.get(grantId)?.workItemIds.has(sub)).toBe(true)
  })

  it('posts a Message and corrects it as its author [command message.post] [event message.posted] [command message.correct] [event message.corrected]', async () => {
    const w = await started()
    const conversationId = w.group().group.mainConversationId
    const posted = await w.as.worker1.messagePost({ messageId: 'urn:weft:test:message:1', conversationId, content: text('The build is red.') })
    expect(payloadOf(posted, 'message.posted')).toMatchObject({ author: cast.worker1.actor, kind: 'message', authority: false })
    const corrected = await w.as.worker1.messageCorrect({
      messageId: 'urn:weft:test:message:2',
      targetMessageId: 'urn:weft:test:message:1',
      content: text('The build is green.'),
      reason: 'Misread the dashboard.',
    })
    expect(payloadOf(corrected, 'message.corrected')).toMatchObject({ kind: 'correction', targetMessageId: 'urn:weft:test:message:1' })
    // §9.1: the original stays as accepted; the correction points at it.
    expect(w.group().messages.get('urn:weft:test:message:1')).toMatchObject({ message: { content: text('The build is red.') }, followUps: ['urn:weft:test:message:2'] })
    expect(await codeOf(w.as.worker2.messageCorrect({ messageId: 'urn:weft:test:message:3', targetMessageId: 'urn:weft:test:message:1', content: text('No.'), reason: 'Not mine.' }))).toBe(
      'AUTH_FORBIDDEN',
    )
  })

  it('retracts a Message as its author and redacts another as Coordinator [command message.retract] [event message.retracted] [command message.redact] [event message.redacted]', async () => {
    const w = await started()
    const conversationId = w.group().group.mainConversationId
    await w.as.worker1.messagePost({ messageId: 'urn:weft:test:message:a', conversationId, content: text('Wrong thread.') })
    await w.as.worker2.messagePost({ messageId: 'urn:weft:test:message:b', conversationId, content: text('A leaked secret.') })
    const retracted = await w.as.worker1.messageRetract({
      messageId: 'urn:weft:test:message:c',
      targetMessageId: 'urn:weft:test:message:a',
      content: text('Retracted.'),
      reason: 'Posted in the wrong place.',
    })
    expect(payloadOf(retracted, 'message.retracted').kind).toBe('retraction')
    const redacted = await w.as.coordinator.messageRedact({
      messageId: 'urn:weft:test:message:d',
      targetMessageId: 'urn:weft:test:message:b',
      content: text('Redacted.'),
      reason: 'Policy: credentials.',
    })
    expect(payloadOf(redacted, 'message.redacted')).toMatchObject({ kind: 'redaction', author: cast.coordinator.actor })
    expect(await codeOf(w.as.worker1.messageCorrect({ messageId: 'urn:weft:test:message:e', targetMessageId: 'urn:weft:test:message:a', content: text('Again.'), reason: 'Retry.' }))).toBe(
      'INVALID_STATE_TRANSITION',
    )
  })

  it('grants a one-shot Cooperation Override [command policy.grant_cooperation_override] [event policy.cooperation_override.granted]', async () => {
    const w = await started()
    const granted = await w.as.owner.policyGrantCooperationOverride({
      grantId: 'urn:weft:test:override:burst',
      policyName: 'message_rate',
      beneficiary: cast.worker1.actor,
      targetCommandKind: 'message.post',
      targetActionId: 'urn:weft:test:action:status-burst',
      reason: 'Incident updates go out every minute.',
      expiresAt: '2026-07-15T06:00:00.000Z',
    })
    expect(payloadOf(granted, 'policy.cooperation_override.granted').grant).toMatchObject({ approver: cast.owner.actor, beneficiary: cast.worker1.actor, grantedAt: '2026-07-15T00:00:00.000Z' })
    expect(w.group().overrides.get('urn:weft:test:override:burst')?.consumedByActionId).toBeUndefined()
  })

  it('refuses Group archival against a snapshot whose state hash does not match', async () => {
    const w = await started()
    const snapshot = sign(
      'group-snapshot',
      {
        snapshotId: 'urn:weft:test:snapshot:1',
        groupId: GROUP,
        throughSequence: w.group().head,
        eventIds: w.authority.events(GROUP).map((e) => e.eventId),
        stateHash: `sha256:${'c'.repeat(64)}`,
        policyLog: [{ entryId: 'urn:weft:test:policy:1', decision: 'Archive after approval.', actor: cast.controlPlane.actor, occurredAt: '2026-07-15T00:00:00Z', details: {} }],
        createdBy: cast.controlPlane.actor,
        createdAt: '2026-07-15T00:00:00Z',
      },
      cast.controlPlane.key,
    ) as unknown as GroupSnapshot
    await expectRefused(w, () => w.as.controlPlane.coreGroupArchive({ snapshot }, { groupId: GROUP }), 'INVALID_COMMAND')
  })

  it('proposes work that becomes a WorkItem when authorized [command work.propose] [event work.proposed] [command work.authorize] [event work.authorized]', async () => {
    const w = await started()
    const id = wid('proposed')
    const proposed = await w.as.worker2.workPropose({ proposalId: id, contract: contract() })
    expect(payloadOf(proposed, 'work.proposed').proposalId).toBe(id)
    expect(w.group().workItems.has(id)).toBe(false)
    const authorized = await w.as.coordinator.workAuthorize({ workItemId: id, contract: contract(), proposalId: id })
    expect(payloadOf(authorized, 'work.authorized').workItem).toMatchObject({ state: 'open', createdBy: cast.worker2.actor, authorizedBy: cast.coordinator.actor })
    // §9: every WorkItem owns a Conversation.
    expect(w.group().conversations.get(w.item(id).doc.conversationId)?.primaryWorkItemId).toBe(id)
  })

  it('offers with a corrected contract, appended as a new contract version first [command work.offer] [event work.offer.created] [event work.contract.revised]', async () => {
    const w = await started()
    const id = await reach(w, 'open')
    const offered = await w.as.coordinator.workOffer({
      workItemId: id,
      candidateAgentIds: [cast.worker1.actor.id],
      selectionBasis: SELECTION,
      offerExpiresInSeconds: 600,
      contract: contract({ goal: 'Implement the feature, with tests.' }),
    })
    expect(kinds(offered.events)).toEqual(['work.contract.revised', 'work.offer.created'])
    expect(payloadOf(offered, 'work.contract.revised')).toMatchObject({ previousContractVersion: 1, revisionReason: 'offer_correction', requiresReacceptance: true })
    expect(payloadOf(offered, 'work.offer.created')).toMatchObject({ offerExpiresAt: '2026-07-15T00:10:00.000Z', candidateAgentIds: [cast.worker1.actor.id] })
    expect(w.item(id).doc.contract.contractVersion).toBe(2)
  })

  it('accepts an offer from a provisional Membership, which activates under the next epoch [command work.accept_offer] [event work.offer.accepted]', async () => {
    const w = createWorld()
    await boot(w)
    await openMission(w)
    await w.as.coordinator.membershipChange({
      membershipId: `${GROUP}:membership:candidate`,
      member: cast.worker1.actor,
      role: 'worker',
      state: 'provisional',
      scopes: ['work_item:read'],
      contextPackageId: 'urn:weft:test:context:candidate',
      provisionalExpiresInSeconds: 600,
    })
    const id = wid('offered')
    await authorize(w, id)
    await offer(w, id, ['worker1'])
    const accepted = await accept(w, id, 'worker1', 1800)
    expect(kinds(accepted.events)).toEqual(['work.offer.accepted', 'membership.changed'])
    expect(payloadOf(accepted, 'work.offer.accepted')).toMatchObject({ assigneeId: cast.worker1.actor.id, ownershipEpoch: 1, ownershipLeaseExpiresAt: '2026-07-15T00:30:00.000Z', agentCardVersion: 1 })
    expect(payloadOf(accepted, 'membership.changed').membership).toMatchObject({ state: 'active', membershipEpoch: 2 })
    expect(w.as.worker1.epochs.membership(GROUP)).toBe(2)
  })

  it('starts under an Execution Lease, renews it and checkpoints [command work.start] [event work.started] [command ext.missionweaveprotocol.core.work_execution_lease_renew] [event work.progressed] [command work.checkpoint] [event work.checkpointed]', async () => {
    const w = await started()
    const id = await reach(w, 'queued')
    const begun = payloadOf(await start(w, id, 300), 'work.started')
    expect(begun.executionLease).toMatchObject({ leaseType: 'execution', holderAgentId: cast.worker1.actor.id, ownershipEpoch: 1, sessionEpoch: 1 })
    w.clock.advance(200)
    const progressed = payloadOf(await renew(w, id, 300), 'work.progressed')
    expect(progressed).toMatchObject({ executionLeaseExpiresAt: '2026-07-15T00:08:20.000Z', executionLease: { leaseId: begun.executionLease.leaseId, renewalCount: 1 } })
    const checkpointed = payloadOf(await checkpoint(w, id, 900), 'work.checkpointed')
    expect(checkpointed).toMatchObject({ executionLeaseId: begun.executionLease.leaseId, resumeBy: '2026-07-15T00:18:20.000Z' })
    expect([w.item(id).doc.state, w.item(id).lastCheckpoint?.phase]).toEqual(['queued', 'build'])
  })

  it('blocks under a bounded lease and unblocks back into the queue [command work.block] [event work.blocked] [command work.unblock] [event work.unblocked]', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const blocked = payloadOf(await block(w, id, 900), 'work.blocked')
    expect(blocked).toMatchObject({ reason: 'Waiting for credentials.', blockedLeaseExpiresAt: '2026-07-15T00:15:00.000Z' })
    const unblocked = payloadOf(await w.as.worker1.workUnblock({ workItemId: id, resolution: 'Credentials arrived.' }), 'work.unblocked')
    expect(unblocked).toMatchObject({ nextState: 'queued', ownershipEpoch: 1 })
  })

  it('publishes an Artifact, submits it with Evidence and has it accepted on review [command artifact.publish] [event artifact.published] [command work.submit] [event work.submitted] [command work.accept_result] [event work.result.accepted]', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const artifact = await publish(w, id, 'the patch')
    expect(w.group().artifacts.get(artifact.artifactId)).toMatchObject({ ownershipEpoch: 1, executionLeaseId: runningOf(w, id).leaseId })
    const { epoch, leaseId } = runningOf(w, id)
    const submitted = await w.as.worker1.workSubmit({
      workItemId: id,
      ownershipEpoch: epoch,
      executionLeaseId: leaseId,
      artifactIds: [artifact.artifactId],
      evidence: [evidence(w.group(), id, cast.worker1)],
    })
    expect(payloadOf(submitted, 'work.submitted').artifactHashes).toEqual([artifact.contentHash])
    const accepted = await acceptResult(w, id)
    expect(payloadOf(accepted, 'work.result.accepted').evidence.map((e) => e.generatedBy)).toEqual([cast.reviewer.actor])
    expect(w.item(id).doc.state).toBe('verified')
  })

  it('lets the owner report its own failure under its current lease [command work.fail]', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const { epoch, leaseId } = runningOf(w, id)
    const failed = await w.as.worker1.workFail({ workItemId: id, reason: 'The API is gone.', ownershipEpoch: epoch, executionLeaseId: leaseId, evidence: [failureEvidence(w, id, 'worker1')] })
    expect(payloadOf(failed, 'work.failed')).toMatchObject({ ownershipEpoch: 1, executionLeaseId: leaseId })
    // §10.2: a failed WorkItem goes back to the Coordinator, who may offer it again.
    await offer(w, id, ['worker2'])
    expect(w.item(id).doc.state).toBe('offered')
  })

  it('cancels a WorkItem and revokes its leases [command work.cancel]', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const cancelled = await cancelWork(w, id)
    expect(payloadOf(cancelled, 'work.cancelled')).toEqual({ workItemId: id, reason: 'No longer needed.' })
    expect([w.item(id).ownershipLease, w.item(id).executionLease]).toEqual([undefined, undefined])
  })

  it('grants an Execution Approval bound to the Ownership Epoch [command approval.grant_execution] [event approval.execution.granted]', async () => {
    const w = await started()
    const id = await reach(w, 'queued', { contract: { executionApproval: 'human_required' } })
    const granted = payloadOf(await grantExecution(w, id), 'approval.execution.granted')
    expect(granted).toMatchObject({ workItemId: id, ownershipEpoch: 1, expiresAt: '2026-07-15T00:10:00.000Z' })
    await start(w, id)
    expect(w.item(id).doc.state).toBe('active')
  })

  it('adds a dependency that gates the start [command ext.missionweaveprotocol.core.work_dependency_add]', async () => {
    const w = await started()
    const [id, dependency] = [await reach(w, 'open'), await reach(w, 'open')]
    const revised = await w.as.coordinator.coreWorkDependencyAdd({ workItemId: id, dependencyId: dependency })
    expect(payloadOf(revised, 'work.contract.revised')).toMatchObject({ addedDependencyId: dependency, revisionReason: 'dependency_added', contract: { contractVersion: 2 } })
    await offer(w, id, ['worker1'])
    await accept(w, id)
    expect(await codeOf(start(w, id))).toBe('INVALID_STATE_TRANSITION')
  })

  it('records resource usage against the WorkItem and the Mission [command ext.missionweaveprotocol.core.resource_usage_record] [event ext.missionweaveprotocol.core.resource_usage_recorded]', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const { epoch, leaseId } = runningOf(w, id)
    const recorded = await w.as.worker1.coreResourceUsageRecord({ workItemId: id, ownershipEpoch: epoch, executionLeaseId: leaseId, usageDelta: { toolCalls: 3, modelTokens: 1200 } })
    expect(payloadOf(recorded, 'ext.missionweaveprotocol.core.resource_usage_recorded')).toMatchObject({
      usageDelta: { toolCalls: 3, modelTokens: 1200 },
      cumulativeUsage: { toolCalls: 3, modelTokens: 1200 },
    })
  })
})
