/**
 * The Conversation (`conversation.schema.json`, §9): a discussion thread of a Group, either the
 * Group-level one, the one each WorkItem owns, a review thread, or a restricted thread that stays
 * inside the Mission's audit boundary.
 * @module
 */
import Type, { type Static } from 'typebox'
import { constant, document, oneOfValues } from '../schema.js'
import { Actor, Extensions, Id, SafeInteger, Timestamp } from './common.js'

/** Conversation types (§9). */
export const CONVERSATION_TYPES = ['group', 'work_item', 'review', 'restricted'] as const

/** A Conversation type. */
export type ConversationType = (typeof CONVERSATION_TYPES)[number]

/** Access modes: open to the whole Group, or to listed members only. */
export const CONVERSATION_ACCESS_MODES = ['group', 'restricted'] as const

/** A Conversation access mode. */
export type ConversationAccessMode = (typeof CONVERSATION_ACCESS_MODES)[number]

/** Conversation states. */
export const CONVERSATION_STATES = ['active', 'closed'] as const

/** A Conversation state. */
export type ConversationState = (typeof CONVERSATION_STATES)[number]

/** Who may read a Conversation; restricted access lists its members. */
export const ConversationAccess = Type.Object(
  {
    mode: oneOfValues(CONVERSATION_ACCESS_MODES),
    members: Type.Optional(Type.Array(Actor, { minItems: 1 })),
  },
  {
    additionalProperties: false,
    allOf: [
      {
        if: { properties: { mode: constant('restricted') }, required: ['mode'] },
        then: { required: ['members'] },
      },
    ],
  },
)

/** Access of a Conversation. */
export type ConversationAccess = Static<typeof ConversationAccess>

/**
 * A Conversation (§9). A WorkItem Conversation names its WorkItem; a restricted Conversation
 * uses restricted access.
 */
export const Conversation = Type.Object(
  {
    conversationId: Id,
    missionId: Id,
    groupId: Id,
    type: oneOfValues(CONVERSATION_TYPES),
    primaryWorkItemId: Type.Optional(Id),
    title: Type.String({ minLength: 1, maxLength: 500 }),
    access: ConversationAccess,
    createdBy: Actor,
    createdAt: Timestamp,
    state: oneOfValues(CONVERSATION_STATES),
    revision: SafeInteger,
    extensions: Type.Optional(Extensions),
  },
  {
    additionalProperties: false,
    allOf: [
      {
        if: { properties: { type: constant('work_item') }, required: ['type'] },
        then: { required: ['primaryWorkItemId'] },
      },
      {
        if: { properties: { type: constant('restricted') }, required: ['type'] },
        then: { properties: { access: { properties: { mode: constant('restricted') } } } },
      },
    ],
  },
)

/** A Conversation. */
export type Conversation = Static<typeof Conversation>

/** `conversation.schema.json` (§9, §21). */
export const conversationDocument = document('conversation', 'conversation.schema.json', 'MissionWeaveProtocol 0.1 Conversation', Conversation)
