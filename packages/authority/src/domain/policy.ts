/**
 * The policy and archival domain (§7.4, §20): one-shot Cooperation Override Grants recorded in the
 * Group's Policy Log, and archival against a signed final snapshot (`../log/snapshots.ts`).
 * @module
 */
import type { CooperationOverrideGrant } from '@weft/spec'
import { draft, reject, requireGroup, type AnyEventDraft, type CommandOf, type HandlerContext, type HandlerFor, type ReducerFor } from '../commit/handler.js'
import type { ActorRef, GroupState } from '../model.js'
import { TERMINAL_MISSION_STATES } from '@weft/spec/machines'
import { snapshotArtifactHash, snapshotMismatch } from '../log/snapshots.js'
import { isControlPlane, isMissionOwner, requireRole } from './memberships.js'
import { indexOverride } from './runaway.js'
import { parseInstant } from '@weft/codec/time'
import type { SnapshotReference } from './ledgers.js'

type PolicyCommandKind = 'policy.grant_cooperation_override' | 'ext.missionweaveprotocol.core.group_archive'
type PolicyEventKind = 'policy.cooperation_override.granted' | 'group.snapshot.created' | 'group.archived'

/** The snapshots `group.snapshot.created` recorded for a Group, by snapshot ID. */
export function groupSnapshots(group: GroupState): ReadonlyMap<string, SnapshotReference> {
  return group.snapshots ?? new Map()
}

function grantOverride(command: CommandOf<'policy.grant_cooperation_override'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  const actor = command.actor as ActorRef
  const p = command.payload
  requireNotArchived(group)
  // §20: only the MissionOwner or an authorized Organization policy actor issues an override.
  requireRole([isMissionOwner(group, actor), isControlPlane(ctx, actor)], 'grant cooperation overrides')
  if (group.overrides.has(p.grantId)) reject('INVALID_COMMAND', `override grant ${p.grantId} already exists`)
  if (parseInstant(p.expiresAt) <= ctx.nowMs) reject('INVALID_COMMAND', 'the override expiry is not in the future')
  const grant: CooperationOverrideGrant = {
    grantId: p.grantId,
    missionId: group.missionId,
    groupId: group.groupId,
    policyName: p.policyName,
    beneficiary: p.beneficiary,
    targetCommandKind: p.targetCommandKind,
    targetActionId: p.targetActionId,
    reason: p.reason,
    approver: { type: actor.type, id: actor.id },
    grantedAt: ctx.now,
    expiresAt: p.expiresAt,
  }
  return [draft('policy.cooperation_override.granted', { grant })]
}

/** §7.4: an archived Group is final; it takes no further Group Command. */
function requireNotArchived(group: GroupState): void {
  if (group.group.state === 'archived') reject('INVALID_STATE_TRANSITION', `group ${group.groupId} is archived`)
}

function archive(command: CommandOf<'ext.missionweaveprotocol.core.group_archive'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  const actor = command.actor as ActorRef
  const { snapshot } = command.payload
  // §6.4: a Group Snapshot creator is an authorized archival service; the MissionOwner may also ask.
  requireRole([isControlPlane(ctx, actor), isMissionOwner(group, actor)], 'archive the group')
  requireNotArchived(group)
  ctx.verifyDocument('group-snapshot', snapshot)
  // §7.4: the final snapshot covers exactly the log as it stands, so nothing escapes the archive.
  const mismatch = snapshotMismatch(snapshot, group)
  if (mismatch !== undefined) reject('INVALID_COMMAND', mismatch)
  // §7.4: only a finished Mission is archived; its Group stays active until then.
  if (!(TERMINAL_MISSION_STATES as readonly string[]).includes(group.mission.state)) {
    reject('INVALID_STATE_TRANSITION', `mission is ${group.mission.state}, not terminal`)
  }
  // §15.2: the snapshot record and the archival are one transaction.
  return [
    draft('group.snapshot.created', {
      snapshotId: snapshot.snapshotId,
      throughSequence: snapshot.throughSequence,
      stateHash: snapshot.stateHash,
      snapshotArtifactHash: snapshotArtifactHash(snapshot),
    }),
    draft('group.archived', { archiveSnapshotId: snapshot.snapshotId }),
  ]
}

/** Command handlers of the policy and archival domain (§7.4, §20). */
export const policyHandlers = {
  'policy.grant_cooperation_override': grantOverride,
  'ext.missionweaveprotocol.core.group_archive': archive,
} satisfies { readonly [K in PolicyCommandKind]: HandlerFor<K> }

/** Event reducers of the policy and archival domain. */
export const policyReducers = {
  'policy.cooperation_override.granted': (state, event) => {
    const group = state.groups.get(event.groupId as string)
    if (group === undefined) return
    // §20: issued unconsumed; the target Command's acceptance consumes it once (see `consumeOverride`).
    const record = { grant: event.payload.grant }
    group.overrides.set(record.grant.grantId, record)
    indexOverride(group, record)
  },
  'group.snapshot.created': (state, event) => {
    const group = state.groups.get(event.groupId as string)
    if (group === undefined) return
    let known = group.snapshots
    if (known === undefined) group.snapshots = known = new Map()
    known.set(event.payload.snapshotId, event.payload)
  },
  'group.archived': (state, event) => {
    const group = state.groups.get(event.groupId as string)
    // §7.4: archival is final and names the signed snapshot it rests on.
    if (group !== undefined) group.group = { ...group.group, state: 'archived', archivedAt: event.occurredAt, archiveSnapshotId: event.payload.archiveSnapshotId }
  },
} satisfies { readonly [K in PolicyEventKind]: ReducerFor<K> }
