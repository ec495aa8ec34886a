/**
 * The Authority driven end to end the way its users drive it: every Command is built and signed by
 * `@weft/client` and carried by `authority.connect()`. These are the scenarios (the happy path, a
 * child Mission, reassignment, Session replacement, cancellation), each ending on the log
 * invariants; `lifecycle-kinds.test.ts` has one test per Command and Event kind and
 * `lifecycle-errors.test.ts` one per §19 code, each claiming what it asserts (see `coverage.test.ts`).
 */
import { describe, expect, it } from 'vitest'
import { cast, evidence, GROUP } from '@weft/testkit/fixtures'
import { boot, CHILD_CONTRACT, codeOf, createWorld, enrol, expectIntegrity, kinds, openMission, payloadOf, runningOf, started, wid } from '@weft/testkit/world'
// The lifecycle steps the scenarios take, each sent as signed Commands through the client.
import { accept, acceptResult, approveMission, authorize, checkpoint, offer, promote, publish, reach, reachMission, renew, start, submit, submitMission } from '@weft/testkit/world'

describe('a Mission end to end, driven only through @weft/client', () => {
  it('runs from Agent registration to the owner’s final approval; the log verifies and replays [error WORK_ALREADY_OWNED]', async () => {
    const w = createWorld()
    await boot(w)
    expect(w.as.worker1.epochs.sessionEpoch).toBe(1)
    await openMission(w)
    expect([w.as.owner.epochs.membership(GROUP), w.as.coordinator.epochs.coordinator(GROUP)]).toEqual([1, 1])
    await enrol(w, ['worker1', 'worker2', 'reviewer'])
    const id = wid('feature')
    await authorize(w, id)
    await offer(w, id, ['worker1', 'worker2'])
    await accept(w, id, 'worker1')
    // §10.3: the first valid acceptance wins; the other candidate's offer lost the race.
    expect(await codeOf(accept(w, id, 'worker2'))).toBe('WORK_ALREADY_OWNED')
    await start(w, id)
    await renew(w, id, 900)
    await checkpoint(w, id)
    expect(w.item(id).doc.state).toBe('queued')
    await start(w, id)
    await submit(w, id)
    await acceptResult(w, id)
    await submitMission(w)
    await approveMission(w)

    const group = w.group()
    expect([group.mission.state, w.item(id).doc.state, w.item(id).doc.owner?.agentId]).toEqual(['approved', 'verified', cast.worker1.actor.id])
    expect(group.acceptedEvidence.map((e) => e.generatedBy.id)).toEqual([cast.worker1.actor.id, cast.reviewer.actor.id])
    expect([...group.approvals.values()].map((a) => [a.decision, a.artifactHashes])).toEqual([['approved', w.item(id).doc.submission?.artifactHashes]])
    expectIntegrity(w)
  })

  it('promotes a WorkItem to a child Mission whose approval verifies the parent WorkItem [command mission.create_child] [event mission.child.created]', async () => {
    const w = await started()
    const parent = await reach(w, 'active')
    const { child, receipt } = await promote(w, parent)
    expect(receipt.events.map((e) => [e.kind, e.groupId])).toEqual([
      ['mission.child.created', GROUP],
      ['mission.created', child.groupId],
    ])
    expect(payloadOf(receipt, 'mission.child.created')).toMatchObject({ parentWorkItemId: parent, childGroupId: child.groupId, depth: 1, fencedOwnershipEpoch: 1 })
    // §14: the parent Coordinator owns the child; the parent WorkItem waits with its ownership fenced.
    expect(child.group().mission.missionOwner).toEqual(cast.coordinator.actor)
    expect([w.item(parent).doc.state, w.item(parent).executionLease]).toEqual(['blocked', undefined])
    expect(await codeOf(start(w, parent))).toBe('INVALID_STATE_TRANSITION')

    await reachMission(child, 'awaiting_approval', CHILD_CONTRACT)
    const approved = await approveMission(child)
    expect(approved.events.map((e) => [e.kind, e.groupId])).toEqual([
      ['mission.approved', child.groupId],
      ['work.result.accepted', GROUP],
    ])
    expect(payloadOf(approved, 'work.result.accepted')).toMatchObject({ workItemId: parent, childMissionId: child.group().missionId })
    expect(w.item(parent).doc.state).toBe('verified')
    expectIntegrity(w)
  })

  it('reassigns a WorkItem whose owner missed its resume deadline; the old owner’s late result is refused and audited [error WORK_STALE_OWNERSHIP]', async () => {
    const w = await started()
    const id = await reach(w, 'active', { candidates: ['worker1'] })
    const old = runningOf(w, id)
    const artifact = await publish(w, id)
    await checkpoint(w, id, 600)
    w.clock.advance(601)
    // §11.5: the owner missed its start-by deadline, so the Coordinator may reassign; the old epoch is fenced.
    const reoffered = await offer(w, id, ['worker2'])
    expect(payloadOf(reoffered, 'work.offer.created').fencedOwnershipEpoch).toBe(1)
    await accept(w, id, 'worker2')
    expect(w.item(id).doc.owner).toMatchObject({ agentId: cast.worker2.actor.id, ownershipEpoch: 2 })
    expect(w.item(id).lastCheckpoint?.phase).toBe('build')

    const late = w.as.worker1.workSubmit({
      workItemId: id,
      ownershipEpoch: old.epoch,
      executionLeaseId: old.leaseId,
      artifactIds: [artifact.artifactId],
      evidence: [evidence(w.group(), id, cast.worker1)],
    })
    expect(await codeOf(late)).toBe('WORK_STALE_OWNERSHIP')
    expect(w.authority.audit().at(-1)).toMatchObject({ code: 'WORK_STALE_OWNERSHIP', kind: 'work.submit', actor: cast.worker1.actor })
    expect(w.item(id).doc.state).toBe('queued')

    await start(w, id)
    await submit(w, id)
    await acceptResult(w, id)
    expect(w.item(id).doc).toMatchObject({ state: 'verified', owner: { agentId: cast.worker2.actor.id, ownershipEpoch: 2 } })
    expectIntegrity(w)
  })

  it('opens a replacement Session that revokes the old runtime’s Execution Lease [command ext.missionweaveprotocol.identity.session_open] [event ext.missionweaveprotocol.identity.session_opened] [event ext.missionweaveprotocol.core.work_execution_lease_revoked] [error AUTH_STALE_SESSION]', async () => {
    const w = await started()
    const id = await reach(w, 'active')
    const old = runningOf(w, id)
    const stale = w.as.worker1.build('ext.missionweaveprotocol.core.work_execution_lease_renew', { workItemId: id, ownershipEpoch: old.epoch, executionLeaseId: old.leaseId, leaseSeconds: 600 })
    const reopened = await w.as.controlPlane.identitySessionOpen({ agentId: cast.worker1.actor.id })
    expect(kinds(reopened.events)).toEqual(['ext.missionweaveprotocol.identity.session_opened', 'ext.missionweaveprotocol.core.work_execution_lease_revoked'])
    expect(payloadOf(reopened, 'ext.missionweaveprotocol.identity.session_opened').sessionEpoch).toBe(2)
    expect(payloadOf(reopened, 'ext.missionweaveprotocol.core.work_execution_lease_revoked')).toMatchObject({ workItemId: id, executionLeaseId: old.leaseId, revokedSessionEpoch: 1 })
    expect([w.item(id).doc.state, w.as.worker1.epochs.sessionEpoch]).toEqual(['queued', 2])
    // §6.3: the old runtime's Commands carry a fenced Session Epoch.
    expect(await codeOf(w.as.worker1.resend(stale))).toBe('AUTH_STALE_SESSION')
    await start(w, id)
    expect(w.item(id).executionLease).toMatchObject({ sessionEpoch: 2, ownershipEpoch: 1 })
    expectIntegrity(w)
  })

  it('cancels a Mission: unfinished WorkItems and the running child Mission follow in the same transaction [command mission.cancel] [event mission.cancelled] [event work.cancelled]', async () => {
    const w = await started()
    const [open, active, verified, promoted] = [await reach(w, 'open'), await reach(w, 'active'), await reach(w, 'verified'), await reach(w, 'queued')]
    const { child } = await promote(w, promoted)
    const cancelled = await w.as.owner.missionCancel({ reason: 'Priorities changed.' })
    expect(cancelled.events.map((e) => [e.kind, e.groupId, e.workItemId])).toEqual([
      ['mission.cancelled', GROUP, undefined],
      ['work.cancelled', GROUP, open],
      ['work.cancelled', GROUP, active],
      ['work.cancelled', GROUP, promoted],
      ['mission.cancelled', child.groupId, undefined],
    ])
    expect([open, active, verified, promoted].map((id) => w.item(id).doc.state)).toEqual(['cancelled', 'cancelled', 'verified', 'cancelled'])
    expect([w.group().coordinatorLease.state, child.group().mission.state]).toEqual(['revoked', 'cancelled'])
    expect(w.item(active).executionLease).toBeUndefined()
    expectIntegrity(w)
  })
})
