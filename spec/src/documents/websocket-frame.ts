/**
 * The WebSocket frame (`websocket-frame.schema.json`, §17): exactly one of ten frame shapes per
 * text message. The four `HELLO` phases form the challenge handshake of §6.3; `SUBSCRIBE`,
 * `COMMAND`, `EVENT`, `ACK`, `PING` and `ERROR` follow §17.2, §17.3 and §16.
 * @module
 */
import Type, { type Static } from 'typebox'
import { constant, document, ref } from '../schema.js'
import { Base64url, Id, Kind, PositiveInteger, ProtocolVersion, SafeInteger, Timestamp } from './common.js'
import { Command } from './command.js'
import { WireError } from './error.js'
import { Event } from './event.js'
import { PresenceRecord } from './presence-record.js'

/** The core frame types (§17.1). Partial streaming frames do not exist in v0.1. */
export const FRAME_TYPES = ['HELLO', 'SUBSCRIBE', 'COMMAND', 'EVENT', 'ACK', 'PING', 'ERROR'] as const

/** A core frame type. */
export type FrameType = (typeof FRAME_TYPES)[number]

/** The four `HELLO` phases of the handshake, in the order they are exchanged (§6.3). */
export const HELLO_PHASES = ['client_init', 'server_challenge', 'client_response', 'server_accept'] as const

/** A `HELLO` phase. */
export type HelloPhase = (typeof HELLO_PHASES)[number]

/** Live-delivery filter of one subscribed Group; it narrows delivery, never authorization (§8, §17.2). */
export const AttentionFilter = Type.Object(
  {
    eventKinds: Type.Optional(Type.Array(Kind, { uniqueItems: true })),
    conversationIds: Type.Optional(Type.Array(Id, { uniqueItems: true })),
    workItemIds: Type.Optional(Type.Array(Id, { uniqueItems: true })),
    mentionsOnly: Type.Optional(Type.Boolean()),
    announcements: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

/** An attention filter. */
export type AttentionFilter = Static<typeof AttentionFilter>

/** One Group of a `SUBSCRIBE`: replay resumes after `afterSequence` (§16, §17.2). */
export const GroupSubscription = Type.Object(
  {
    groupId: Id,
    afterSequence: SafeInteger,
    attention: Type.Optional(AttentionFilter),
  },
  { additionalProperties: false },
)

/** One subscribed Group. */
export type GroupSubscription = Static<typeof GroupSubscription>

/** One durable Cursor reported by an `ACK`: the highest contiguous sequence processed (§16). */
export const GroupAcknowledgement = Type.Object(
  {
    groupId: Id,
    sequence: SafeInteger,
  },
  { additionalProperties: false },
)

/** One acknowledged Cursor. */
export type GroupAcknowledgement = Static<typeof GroupAcknowledgement>

/** Local definitions of `websocket-frame.schema.json` (`$defs`): one per frame shape, in normative order. */
export const WebSocketFrameDefs = {
  /** Handshake step 1: the Agent names itself, its key, a nonce and the versions it speaks (§6.3). */
  helloClientInit: Type.Object(
    {
      protocolVersion: ProtocolVersion,
      frameId: Id,
      frameType: constant('HELLO'),
      phase: constant('client_init'),
      agentId: Id,
      keyId: Id,
      clientNonce: Base64url,
      supportedVersions: Type.Array(ProtocolVersion, { minItems: 1, uniqueItems: true }),
    },
    { additionalProperties: false },
  ),
  /** Handshake step 2: the server picks a version and sends a fresh challenge. */
  helloServerChallenge: Type.Object(
    {
      protocolVersion: ProtocolVersion,
      frameId: Id,
      frameType: constant('HELLO'),
      phase: constant('server_challenge'),
      selectedVersion: ProtocolVersion,
      clientNonce: Base64url,
      serverNonce: Base64url,
      challenge: Base64url,
    },
    { additionalProperties: false },
  ),
  /** Handshake step 3: the Agent's Ed25519 signature over the challenge transcript. */
  helloClientResponse: Type.Object(
    {
      protocolVersion: ProtocolVersion,
      frameId: Id,
      frameType: constant('HELLO'),
      phase: constant('client_response'),
      agentId: Id,
      keyId: Id,
      clientNonce: Base64url,
      serverNonce: Base64url,
      challengeSignature: Base64url,
    },
    { additionalProperties: false },
  ),
  /** Handshake step 4: a short-lived session token and the newly issued Session Epoch. */
  helloServerAccept: Type.Object(
    {
      protocolVersion: ProtocolVersion,
      frameId: Id,
      frameType: constant('HELLO'),
      phase: constant('server_accept'),
      selectedVersion: ProtocolVersion,
      sessionToken: Type.String({ minLength: 16, maxLength: 8192 }),
      sessionEpoch: PositiveInteger,
      expiresAt: Timestamp,
    },
    { additionalProperties: false },
  ),
  /** Subscribes to one or more Groups with replay positions and attention filters (§17.2). */
  subscribe: Type.Object(
    {
      protocolVersion: ProtocolVersion,
      frameId: Id,
      frameType: constant('SUBSCRIBE'),
      subscriptionId: Id,
      groups: Type.Array(GroupSubscription, { minItems: 1 }),
    },
    { additionalProperties: false },
  ),
  /** Carries one signed Command (§15.1). */
  command: Type.Object(
    {
      protocolVersion: ProtocolVersion,
      frameId: Id,
      frameType: constant('COMMAND'),
      command: ref('command.schema.json', Command),
    },
    { additionalProperties: false },
  ),
  /** Carries one signed Event (§15.2). */
  event: Type.Object(
    {
      protocolVersion: ProtocolVersion,
      frameId: Id,
      frameType: constant('EVENT'),
      event: ref('event.schema.json', Event),
    },
    { additionalProperties: false },
  ),
  /** Reports durable Cursors; it allows delivery cleanup, never history deletion (§16). */
  ack: Type.Object(
    {
      protocolVersion: ProtocolVersion,
      frameId: Id,
      frameType: constant('ACK'),
      acknowledgements: Type.Array(GroupAcknowledgement, { minItems: 1 }),
      sentAt: Timestamp,
    },
    { additionalProperties: false },
  ),
  /** Liveness; a reply echoes the peer's nonce, and a Presence Record may ride along (§17.3). */
  ping: Type.Object(
    {
      protocolVersion: ProtocolVersion,
      frameId: Id,
      frameType: constant('PING'),
      nonce: Base64url,
      replyToNonce: Type.Optional(Base64url),
      sentAt: Timestamp,
      presence: Type.Optional(ref('presence-record.schema.json', PresenceRecord)),
    },
    { additionalProperties: false },
  ),
  /** Carries one Protocol Error (§19). */
  error: Type.Object(
    {
      protocolVersion: ProtocolVersion,
      frameId: Id,
      frameType: constant('ERROR'),
      error: ref('error.schema.json', WireError),
    },
    { additionalProperties: false },
  ),
} as const

type Defs = typeof WebSocketFrameDefs

/** `HELLO` phase `client_init`. */
export type HelloClientInitFrame = Static<Defs['helloClientInit']>
/** `HELLO` phase `server_challenge`. */
export type HelloServerChallengeFrame = Static<Defs['helloServerChallenge']>
/** `HELLO` phase `client_response`. */
export type HelloClientResponseFrame = Static<Defs['helloClientResponse']>
/** `HELLO` phase `server_accept`. */
export type HelloServerAcceptFrame = Static<Defs['helloServerAccept']>
/** Any of the four `HELLO` frames; narrow on `phase`. */
export type HelloFrame = HelloClientInitFrame | HelloServerChallengeFrame | HelloClientResponseFrame | HelloServerAcceptFrame
/** A `SUBSCRIBE` frame. */
export type SubscribeFrame = Static<Defs['subscribe']>
/** A `COMMAND` frame. */
export type CommandFrame = Static<Defs['command']>
/** An `EVENT` frame. */
export type EventFrame = Static<Defs['event']>
/** An `ACK` frame. */
export type AckFrame = Static<Defs['ack']>
/** A `PING` frame. */
export type PingFrame = Static<Defs['ping']>
/** An `ERROR` frame. */
export type ErrorFrame = Static<Defs['error']>

/**
 * A WebSocket frame (§17.1): exactly one of the ten shapes of {@link WebSocketFrameDefs}. The
 * normative root is a bare `oneOf` over `$ref`s with no `type`, which `Type.Object` cannot emit
 * and `Type.Union` would spell `anyOf`, so it is written with `Type.Unsafe`; the static type is
 * the discriminated union of the ten frames (narrow on `frameType`, then `phase`).
 */
export const WebSocketFrame = Type.Unsafe<HelloFrame | SubscribeFrame | CommandFrame | EventFrame | AckFrame | PingFrame | ErrorFrame>({
  oneOf: (Object.keys(WebSocketFrameDefs) as (keyof Defs)[]).map((name) => ref(`#/$defs/${name}`, WebSocketFrameDefs[name])),
  $defs: WebSocketFrameDefs,
})

/** A WebSocket frame. */
export type WebSocketFrame = Static<typeof WebSocketFrame>

/** `websocket-frame.schema.json` (§17, §21). */
export const websocketFrameDocument = document('websocketFrame', 'websocket-frame.schema.json', 'MissionWeaveProtocol 0.1 WebSocket Frame', WebSocketFrame, 'WebSocketFrame')
