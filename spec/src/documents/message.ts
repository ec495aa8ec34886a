/**
 * The Committed Message (`message.schema.json`, §9): completed conversation content, immutable once
 * accepted and never an authorization to act. Corrections, retractions and redactions are new
 * Messages that point at the original.
 * @module
 */
import Type, { type Static } from 'typebox'
import { anyValue, constant, document, oneOfValues } from '../schema.js'
import { Actor, Extensions, Id, Sha256, Timestamp } from './common.js'

/** Message kinds (§9). */
export const MESSAGE_KINDS = ['message', 'correction', 'retraction', 'redaction'] as const

/** A Message kind. */
export type MessageKind = (typeof MESSAGE_KINDS)[number]

/** Kinds that amend an earlier Message and so need a target and a reason (§9.1). */
export const AMENDING_MESSAGE_KINDS = ['correction', 'retraction', 'redaction'] as const

/** The `type` tags of Message content parts. */
export const MESSAGE_CONTENT_TYPES = ['text', 'artifact_ref', 'data_ref'] as const

/** A Message content part type. */
export type MessageContentType = (typeof MESSAGE_CONTENT_TYPES)[number]

/** Inline text content. */
export const TextContent = Type.Object(
  {
    type: constant('text'),
    text: Type.String({ minLength: 1, maxLength: 100000 }),
  },
  { additionalProperties: false },
)

/** Inline text content. */
export type TextContent = Static<typeof TextContent>

/** A reference to an Artifact by content hash; binary data is never embedded (§9, §13.1). */
export const ArtifactRefContent = Type.Object(
  {
    type: constant('artifact_ref'),
    artifactHash: Sha256,
  },
  { additionalProperties: false },
)

/** An Artifact reference content part. */
export type ArtifactRefContent = Static<typeof ArtifactRefContent>

/** Structured data together with the URI of the schema it follows. */
export const DataRefContent = Type.Object(
  {
    type: constant('data_ref'),
    schema: Type.String({ format: 'uri' }),
    data: anyValue(),
  },
  { additionalProperties: false },
)

/** A structured data content part. */
export type DataRefContent = Static<typeof DataRefContent>

/** One part of a Message's content. */
export type MessageContentPart = TextContent | ArtifactRefContent | DataRefContent

/**
 * One part of a Message's content: exactly one of text, Artifact reference or structured data.
 * The normative spelling is `oneOf`, which `Type.Union` (`anyOf`) cannot emit, so it is written
 * with `Type.Unsafe`; the static type is the union tagged by `type`.
 */
export const MessageContentPart = Type.Unsafe<MessageContentPart>({
  oneOf: [TextContent, ArtifactRefContent, DataRefContent],
})

/**
 * A Committed Message (§9). `authority` is always `false`: a Message is context only. An amending
 * kind names the target Message and a reason.
 */
export const Message = Type.Object(
  {
    messageId: Id,
    missionId: Id,
    groupId: Id,
    conversationId: Id,
    author: Actor,
    kind: oneOfValues(MESSAGE_KINDS),
    authority: constant(false),
    targetMessageId: Type.Optional(Id),
    content: Type.Array(MessageContentPart, { minItems: 1 }),
    mentions: Type.Optional(Type.Array(Actor, { uniqueItems: true })),
    references: Type.Optional(Type.Array(Id, { uniqueItems: true })),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
    committedAt: Timestamp,
    extensions: Type.Optional(Extensions),
  },
  {
    additionalProperties: false,
    allOf: [
      {
        if: { properties: { kind: oneOfValues(AMENDING_MESSAGE_KINDS) }, required: ['kind'] },
        then: { required: ['targetMessageId', 'reason'] },
      },
    ],
  },
)

/** A Committed Message. */
export type Message = Static<typeof Message>

/** `message.schema.json` (§9, §21). */
export const messageDocument = document('message', 'message.schema.json', 'MissionWeaveProtocol 0.1 Committed Message', Message)
