import { describe, expect, it } from 'vitest'
import { groupSnapshots } from '../src/domain/policy.js'
import { groupStateHash, snapshotArtifactHash, verifyGroupSnapshot } from '../src/log/snapshots.js'
import { snapshotOf } from '@weft/testkit/archive'
import { cast } from '@weft/testkit/fixtures'
import { approveMission, expectIntegrity, expectRefused, kinds, payloadOf, reachMission, started, type World } from '@weft/testkit/world'

function archive(w: World, snapshot = snapshotOf(w), by: 'controlPlane' | 'authority' = 'controlPlane') {
  return w.as[by].coreGroupArchive({ snapshot }, { groupId: w.groupId })
}

describe('Group archival (§7.4)', () => {
  it('archives a finished Mission against its signed final snapshot, atomically [command ext.missionweaveprotocol.core.group_archive] [event group.snapshot.created] [event group.archived]', async () => {
    const w = await started()
    await reachMission(w, 'approved')
    const head = w.group().head
    const stateHash = groupStateHash(w.group())
    const snapshot = snapshotOf(w)
    const receipt = await archive(w, snapshot)
    expect(kinds(receipt.events)).toEqual(['group.snapshot.created', 'group.archived'])
    expect(receipt.events.map((e) => e.sequence)).toEqual([head + 1, head + 2])
    expect(payloadOf(receipt, 'group.snapshot.created')).toEqual({ snapshotId: snapshot.snapshotId, throughSequence: head, stateHash, snapshotArtifactHash: snapshotArtifactHash(snapshot) })
    expect(payloadOf(receipt, 'group.archived')).toEqual({ archiveSnapshotId: snapshot.snapshotId })
    expect(w.group().group).toMatchObject({ state: 'archived', archiveSnapshotId: snapshot.snapshotId })
    expect(groupSnapshots(w.group()).get(snapshot.snapshotId)?.throughSequence).toBe(head)
    // §16: the snapshot still verifies against the retained log, and restore resumes after it.
    const restored = verifyGroupSnapshot(snapshot, { registry: w.registry, events: w.authority.events(w.groupId) })
    expect(restored.ok && restored.resumeAfterSequence).toBe(head)
    expectIntegrity(w)
    // §7.4: archival is final.
    await expectRefused(w, () => archive(w), 'INVALID_STATE_TRANSITION')
    const override = {
      grantId: 'urn:weft:test:override:late',
      policyName: 'message_rate',
      beneficiary: cast.worker1.actor,
      targetCommandKind: 'message.post',
      targetActionId: 'urn:weft:test:action:late',
      reason: 'Too late.',
      expiresAt: '2026-07-16T00:00:00Z',
    } as const
    await expectRefused(w, () => w.as.owner.policyGrantCooperationOverride(override), 'INVALID_STATE_TRANSITION')
    // §7.4: any other Group Command is refused at ingress too; the log stays as archived.
    await expectRefused(
      w,
      () => w.as.owner.messagePost({ messageId: 'urn:weft:test:message:after-archive', conversationId: w.group().group.mainConversationId, content: [{ type: 'text', text: 'Anyone?' }] }),
      'INVALID_STATE_TRANSITION',
    )
    expect(w.group().head).toBe(head + 2)
  })

  it('is refused to a service outside the control plane', async () => {
    const w = await started()
    await reachMission(w, 'approved')
    await expectRefused(w, () => archive(w, snapshotOf(w), 'authority'), 'AUTH_FORBIDDEN')
  })

  it('is refused while the Mission is not terminal', async () => {
    const w = await started()
    await reachMission(w, 'awaiting_approval')
    await expectRefused(w, () => archive(w), 'INVALID_STATE_TRANSITION')
    expect(w.group().group.state).toBe('active')
  })

  it('is refused with a snapshot that does not cover exactly the Group as it stands', async () => {
    const w = await started()
    await reachMission(w, 'awaiting_approval')
    const stale = snapshotOf(w)
    await approveMission(w)
    await expectRefused(w, () => archive(w, stale), 'INVALID_COMMAND')
    await expectRefused(w, () => archive(w, snapshotOf(w, { change: (s) => ({ ...s, stateHash: `sha256:${'e'.repeat(64)}` }) })), 'INVALID_COMMAND')
    await expectRefused(w, () => archive(w, snapshotOf(w, { change: (s) => ({ ...s, eventIds: s.eventIds.slice(1) }) })), 'INVALID_COMMAND')
    expect(w.group().group.state).toBe('active')
  })

  it('is refused with a snapshot whose signature does not verify', async () => {
    const w = await started()
    await reachMission(w, 'approved')
    const snapshot = snapshotOf(w)
    await expectRefused(w, () => archive(w, { ...snapshot, createdAt: '2026-07-15T00:00:01Z' }), 'AUTH_INVALID_SIGNATURE')
    expect(w.group().group.state).toBe('active')
  })
})
