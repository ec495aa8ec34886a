/**
 * The Signed Group Snapshot (`group-snapshot.schema.json`, §7.4, §16): a service-signed summary of
 * a Group's state through one sequence, with its Policy Log; used for archival and for replay
 * after `CURSOR_TOO_OLD`.
 * @module
 */
import Type, { type Static } from 'typebox'
import { constant, document, freeObject } from '../schema.js'
import { Actor, Id, PositiveInteger, Sha256, Signature, Timestamp } from './common.js'

/** One Policy Log entry captured in the snapshot (§20): decision, actor, time and details. */
export const PolicyLogEntry = Type.Object(
  {
    entryId: Id,
    decision: Type.String({ minLength: 1, maxLength: 4000 }),
    actor: Actor,
    occurredAt: Timestamp,
    details: freeObject(),
  },
  { additionalProperties: false },
)

/** A Policy Log entry. */
export type PolicyLogEntry = Static<typeof PolicyLogEntry>

/** The Organization service that created the snapshot; only a service may. */
export const SnapshotCreator = Type.Object(
  {
    type: constant('service'),
    id: Id,
  },
  { additionalProperties: false },
)

/** The creator of a Group Snapshot. */
export type SnapshotCreator = Static<typeof SnapshotCreator>

/**
 * A Signed Group Snapshot (§7.4), signed by `createdBy` over `createdAt` (§6.4). `stateHash`
 * commits to the Group state through `throughSequence`; a recipient verifies hash and signature
 * before resuming from it (§16).
 */
export const GroupSnapshot = Type.Object(
  {
    snapshotId: Id,
    groupId: Id,
    throughSequence: PositiveInteger,
    eventIds: Type.Array(Id, { minItems: 1, uniqueItems: true }),
    stateHash: Sha256,
    policyLog: Type.Array(PolicyLogEntry, { minItems: 1 }),
    createdBy: SnapshotCreator,
    createdAt: Timestamp,
    signature: Signature,
  },
  { additionalProperties: false },
)

/** A Signed Group Snapshot. */
export type GroupSnapshot = Static<typeof GroupSnapshot>

/** `group-snapshot.schema.json` (§7.4, §21). */
export const groupSnapshotDocument = document('groupSnapshot', 'group-snapshot.schema.json', 'MissionWeaveProtocol 0.1 Signed Group Snapshot', GroupSnapshot)
