/**
 * The Event envelope (`event.schema.json`, §15.2): an immutable accepted fact, signed by the
 * authority that accepted it. Group Events carry the Group ID, sequence and aggregate revision;
 * the two Organization-scoped registry and session facts carry none of them.
 * @module
 */
import Type, { type Static } from 'typebox'
import { constant, document, freeObject, oneOfValues } from '../schema.js'
import { Actor, Extensions, Id, PositiveInteger, ProtocolVersion, SafeInteger, Sha256, Signature, Timestamp } from './common.js'
import { ExtensionKind } from './command.js'

/** The core Event kinds of v0.1, in normative order (§15.2). */
export const CORE_EVENT_KINDS = [
  'mission.created',
  'mission.coordinator.assigned',
  'mission.coordinator.renewed',
  'mission.submitted_for_approval',
  'mission.approved',
  'mission.changes_requested',
  'mission.cancelled',
  'mission.terminated',
  'mission.child.created',
  'mission.follow_up.created',
  'membership.changed',
  'membership.ended',
  'membership.delegation.granted',
  'message.posted',
  'message.corrected',
  'message.retracted',
  'message.redacted',
  'work.proposed',
  'work.authorized',
  'work.offer.created',
  'work.offer.accepted',
  'work.contract.revised',
  'work.started',
  'work.progressed',
  'work.checkpointed',
  'work.blocked',
  'work.unblocked',
  'work.submitted',
  'work.result.accepted',
  'work.failed',
  'work.cancelled',
  'artifact.published',
  'approval.execution.granted',
  'policy.cooperation_override.granted',
  'group.snapshot.created',
  'group.archived',
] as const

/** A core Event kind. */
export type CoreEventKind = (typeof CORE_EVENT_KINDS)[number]

/**
 * The Organization-scoped facts (Agent Card registration, Session activation): accepted by a
 * service and carrying no Group ID, sequence or aggregate revision (§15.2).
 */
export const ORGANIZATION_SCOPED_EVENT_KINDS = ['ext.missionweaveprotocol.registry.agent_card_registered', 'ext.missionweaveprotocol.identity.session_opened'] as const

/** An Organization-scoped Event kind. */
export type OrganizationScopedEventKind = (typeof ORGANIZATION_SCOPED_EVENT_KINDS)[number]

/** What can cause an Event: an accepted Command, a prior Event, a timer or a policy decision (§15.2). */
export const EVENT_CAUSE_TYPES = ['command', 'event', 'timer', 'policy'] as const

/** The cause of an Event: its type and the ID of the causing object. */
export const EventCause = Type.Object(
  {
    type: oneOfValues(EVENT_CAUSE_TYPES),
    id: Id,
  },
  { additionalProperties: false },
)

/** The cause of an Event. */
export type EventCause = Static<typeof EventCause>

/**
 * A signed Event envelope (§15.2). Group Events require `groupId`, `sequence` and
 * `aggregateRevision`; an Organization-scoped registry or session fact must omit all three and be
 * accepted by a service actor. `payload` is a free object here.
 */
export const Event = Type.Object(
  {
    protocolVersion: ProtocolVersion,
    eventId: Id,
    groupId: Type.Optional(Id),
    sequence: Type.Optional(PositiveInteger),
    aggregateRevision: Type.Optional(SafeInteger),
    kind: Type.Union([oneOfValues(CORE_EVENT_KINDS), ExtensionKind]),
    actor: Actor,
    cause: EventCause,
    correlationId: Id,
    conversationId: Type.Optional(Id),
    workItemId: Type.Optional(Id),
    occurredAt: Timestamp,
    payload: freeObject(),
    acceptedBy: Actor,
    commandHash: Type.Optional(Sha256),
    extensions: Type.Optional(Extensions),
    signature: Signature,
  },
  {
    additionalProperties: false,
    allOf: [
      // §15.2: Organization-scoped facts sit outside every Group order.
      {
        if: { properties: { kind: oneOfValues(ORGANIZATION_SCOPED_EVENT_KINDS) }, required: ['kind'] },
        then: {
          properties: { actor: { properties: { type: constant('service') }, required: ['type'] } },
          not: {
            anyOf: [{ required: ['groupId'] }, { required: ['sequence'] }, { required: ['aggregateRevision'] }],
          },
        },
        else: { required: ['groupId', 'sequence', 'aggregateRevision'] },
      },
    ],
  },
)

/** An Event envelope; `kind` is a core kind or an Extension Profile kind. */
export type Event = Static<typeof Event>

/** The `kind` of an Event envelope: a core kind or any `ext.` Extension Profile kind (the catalog's `EventKind` lists the kinds Weft implements). */
export type EventEnvelopeKind = Event['kind']

/** `event.schema.json` (§15.2, §21). */
export const eventDocument = document('event', 'event.schema.json', 'MissionWeaveProtocol 0.1 Event Envelope', Event)
