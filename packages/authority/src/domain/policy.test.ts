import { describe, expect, it } from 'vitest'
import { sign } from '@weft/codec'
import type { CommandPayload, Event, GroupSnapshot } from '@weft/spec'
import { validators } from '@weft/validators'
import { cast, T0 } from '@weft/testkit/fixtures'
import { seedGroup } from '../../test/fixtures-state.js'
import { codeOf, exec, expectValidGroup, expectValidPayloads, inGroup } from '../../test/fixtures-missions.js'
import { applyEvents, type ReducerTable } from '../commit/transact.js'
import { emptyState } from '../model.js'
import { groupSnapshots, policyReducers } from './policy.js'

function setup() {
  const state = emptyState()
  const group = seedGroup(state)
  const grant = (by = cast.owner, payload: Partial<CommandPayload<'policy.grant_cooperation_override'>> = {}) =>
    exec(
      state,
      'policy.grant_cooperation_override',
      {
        grantId: 'urn:weft:test:override:1',
        policyName: 'mission_depth',
        beneficiary: cast.coordinator.actor,
        targetCommandKind: 'mission.create_child',
        targetActionId: 'urn:weft:test:action:deep-child',
        reason: 'The integration needs one more level.',
        expiresAt: '2026-07-16T00:00:00Z',
        ...payload,
      },
      by,
      { envelope: inGroup(group) },
    )
  return { state, group, grant }
}

describe('policy.grant_cooperation_override (§20)', () => {
  it('records a one-shot grant bound to Mission, Group, beneficiary, target Command and approver', () => {
    const { group, grant } = setup()
    const events = grant()
    expect(events.map((e) => e.kind)).toEqual(['policy.cooperation_override.granted'])
    const stored = group.overrides.get('urn:weft:test:override:1')!
    expect(stored.consumedByActionId).toBeUndefined()
    expect(stored.grant).toMatchObject({ missionId: group.missionId, groupId: group.groupId, approver: cast.owner.actor, grantedAt: T0, targetActionId: 'urn:weft:test:action:deep-child' })
    expectValidPayloads(events)
    expectValidGroup(group)
  })

  it('is issued by the MissionOwner or the control plane only, once per grant ID, with a future expiry', () => {
    const { grant } = setup()
    expect(codeOf(() => grant(cast.coordinator))).toBe('AUTH_FORBIDDEN')
    expect(codeOf(() => grant(cast.owner, { expiresAt: '2026-07-14T00:00:00Z' }))).toBe('INVALID_COMMAND')
    expect(grant(cast.controlPlane)[0]!.payload).toMatchObject({ grant: { approver: cast.controlPlane.actor } })
    expect(codeOf(() => grant(cast.owner))).toBe('INVALID_COMMAND')
  })
})

describe('group archival (§7.4)', () => {
  it('refuses a snapshot that names no Group', () => {
    const { state, group } = setup()
    const snapshot = sign('group-snapshot', { snapshotId: 'urn:weft:test:snapshot:1', createdBy: cast.authority.actor, createdAt: T0 }, cast.authority.key) as unknown as GroupSnapshot
    expect(codeOf(() => exec(state, 'ext.missionweaveprotocol.core.group_archive', { snapshot }, cast.controlPlane, { envelope: inGroup(group) }))).toBe('INVALID_COMMAND')
    expect(group.group.state).toBe('active')
  })

  it('folds archival Events of an existing log', () => {
    const { state, group } = setup()
    const envelope = (kind: string, sequence: number, payload: Record<string, unknown>) =>
      ({ kind, groupId: group.groupId, sequence, aggregateRevision: sequence - 1, occurredAt: '2026-07-15T01:00:00.000Z', payload }) as unknown as Event
    const snapshot = { snapshotId: 'urn:weft:test:snapshot:1', throughSequence: 1, stateHash: `sha256:${'c'.repeat(64)}`, snapshotArtifactHash: `sha256:${'d'.repeat(64)}` }
    applyEvents(state, [envelope('group.snapshot.created', 2, snapshot), envelope('group.archived', 3, { archiveSnapshotId: snapshot.snapshotId })], policyReducers as unknown as ReducerTable)
    expect(groupSnapshots(group).get(snapshot.snapshotId)).toEqual(snapshot)
    expect(group.group).toMatchObject({ state: 'archived', archivedAt: '2026-07-15T01:00:00.000Z', archiveSnapshotId: snapshot.snapshotId })
    expect(validators.group.errors(group.group)).toEqual([])
    expect(group.head).toBe(3)
  })
})
