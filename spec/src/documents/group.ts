/**
 * The Mission Group (`group.schema.json`, §7.1, §7.4): the ordered event space created with a
 * Mission, with its main Conversation, archived only through a signed final snapshot.
 * @module
 */
import Type, { type Static } from 'typebox'
import { constant, document, oneOfValues } from '../schema.js'
import { Extensions, Id, Timestamp } from './common.js'

/** Group states; archival is final (§7.4). */
export const GROUP_STATES = ['active', 'archived'] as const

/** A Group state. */
export type GroupState = (typeof GROUP_STATES)[number]

/**
 * A Mission Group (§7). An archived Group names its archival time and signed snapshot; an active
 * one carries neither.
 */
export const Group = Type.Object(
  {
    groupId: Id,
    missionId: Id,
    state: oneOfValues(GROUP_STATES),
    mainConversationId: Id,
    createdAt: Timestamp,
    archivedAt: Type.Optional(Timestamp),
    archiveSnapshotId: Type.Optional(Id),
    extensions: Type.Optional(Extensions),
  },
  {
    additionalProperties: false,
    allOf: [
      {
        if: { properties: { state: constant('archived') }, required: ['state'] },
        then: { required: ['archivedAt', 'archiveSnapshotId'] },
      },
      {
        if: { properties: { state: constant('active') }, required: ['state'] },
        then: { not: { anyOf: [{ required: ['archivedAt'] }, { required: ['archiveSnapshotId'] }] } },
      },
    ],
  },
)

/** A Mission Group. */
export type Group = Static<typeof Group>

/** `group.schema.json` (§7, §21). */
export const groupDocument = document('group', 'group.schema.json', 'MissionWeaveProtocol 0.1 Mission Group', Group)
