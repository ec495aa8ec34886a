import { UsageError } from '@weft/codec'
import type { GroupSnapshot } from '@weft/spec'
import { validators } from '@weft/validators'
import { describe, expect, it } from 'vitest'
import { snapshotOf } from '@weft/testkit/archive'
import { cast } from '@weft/testkit/fixtures'
import { reachMission, started, type World } from '@weft/testkit/world'
import { buildGroupSnapshot, groupStateHash, snapshotMismatch, verifyGroupSnapshot, type SnapshotVerification } from './snapshots.js'

async function approved(): Promise<World> {
  const w = await started()
  await reachMission(w, 'approved')
  return w
}

function verifyIn(w: World, snapshot: GroupSnapshot | string): SnapshotVerification {
  return verifyGroupSnapshot(snapshot, { registry: w.registry, events: w.authority.events(w.groupId), group: w.group() })
}

function reasonOf(result: SnapshotVerification): string {
  return result.ok ? 'accepted' : result.reason
}

describe('Signed Group Snapshots (§7.4, §16)', () => {
  it('cover the whole log, its decisions and the state, and verify for restore', async () => {
    const w = await approved()
    const snapshot = snapshotOf(w)
    const log = w.authority.events(w.groupId)
    expect(validators.groupSnapshot.errors(snapshot)).toEqual([])
    expect(snapshot).toMatchObject({ groupId: w.groupId, throughSequence: w.group().head, eventIds: log.map((e) => e.eventId), stateHash: groupStateHash(w.group()) })
    const decided = snapshot.policyLog.map((entry) => (entry.details as { kind: string }).kind)
    expect(decided).toEqual(expect.arrayContaining(['mission.created', 'work.authorized', 'work.result.accepted', 'mission.approved']))
    expect(decided).not.toContain('work.started')
    const approval = snapshot.policyLog.find((entry) => (entry.details as { kind: string }).kind === 'mission.approved')!
    expect(approval.entryId).toBe(log.find((e) => e.kind === 'mission.approved')!.eventId)
    const restored = verifyIn(w, snapshot)
    expect(restored.ok && restored.resumeAfterSequence).toBe(w.group().head)
  })

  it('build only from the exact log of the Group', async () => {
    const w = await approved()
    const options = { snapshotId: 'urn:weft:test:snapshot:partial', createdBy: cast.controlPlane.actor as { type: 'service'; id: string }, createdAt: '2026-07-15T00:00:00Z' }
    expect(() => buildGroupSnapshot(w.group(), w.authority.events(w.groupId).slice(1), options)).toThrow(UsageError)
    expect(() => buildGroupSnapshot(w.group(), w.authority.events(w.groupId).slice(0, -1), options)).toThrow(UsageError)
  })

  it('detect tampering with the signed bytes, the Event IDs, the Policy Log and the state hash', async () => {
    const w = await approved()
    const good = snapshotOf(w)
    expect(reasonOf(verifyIn(w, { ...good, stateHash: `sha256:${'e'.repeat(64)}` }))).toMatch(/^signature:/)
    const reordered = snapshotOf(w, { change: (s) => ({ ...s, eventIds: [...s.eventIds].reverse() }) })
    expect(reasonOf(verifyIn(w, reordered))).toMatch(/Event IDs differ/)
    const trimmed = snapshotOf(w, { change: (s) => ({ ...s, policyLog: s.policyLog.slice(1) }) })
    expect(reasonOf(verifyIn(w, trimmed))).toMatch(/Policy Log differs/)
    const forged = snapshotOf(w, { change: (s) => ({ ...s, stateHash: `sha256:${'e'.repeat(64)}` }) })
    expect(reasonOf(verifyIn(w, forged))).toMatch(/state hash/)
    const unregistered = snapshotOf(w, { by: { actor: cast.controlPlane.actor, key: cast.worker1.key } })
    expect(reasonOf(verifyIn(w, unregistered))).toMatch(/^signature:/)
  })

  it('stop matching the Group once its log moves on', async () => {
    const w = await started()
    const before = snapshotOf(w)
    expect(snapshotMismatch(before, w.group())).toBeUndefined()
    await reachMission(w, 'awaiting_approval')
    expect(snapshotMismatch(before, w.group())).toMatch(/Group head/)
    expect(snapshotMismatch({ ...before, throughSequence: w.group().head, eventIds: w.authority.events(w.groupId).map((e) => e.eventId) }, w.group())).toMatch(/state hash/)
    expect(snapshotMismatch({ ...before, groupId: 'urn:weft:test:group:other' }, w.group())).toMatch(/Group urn:weft:test:group:other/)
  })
})
