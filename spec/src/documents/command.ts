/**
 * The Command envelope (`command.schema.json`, §15.1): a signed request for one structured state
 * transition. The envelope rules that JSON Schema can state (which epochs each kind of actor
 * carries, which kinds are Group-scoped, Organization-scoped or Coordinator-only) are in its
 * `allOf`; the rest (§6.4 signatures, §15.3 revisions, authorization) is enforced elsewhere.
 * @module
 */
import Type, { type Static } from 'typebox'
import { constant, document, freeObject, oneOfValues, ref } from '../schema.js'
import { Actor, AgentActor, Extensions, HumanActor, Id, PositiveInteger, ProtocolVersion, SafeInteger, Signature, Timestamp } from './common.js'

/** The core Command kinds of v0.1, in normative order (§15.1). */
export const CORE_COMMAND_KINDS = [
  'mission.create',
  'mission.assign_coordinator',
  'mission.renew_coordinator',
  'mission.submit_for_approval',
  'mission.approve',
  'mission.request_changes',
  'mission.cancel',
  'mission.terminate',
  'mission.create_child',
  'mission.create_follow_up',
  'membership.change',
  'membership.end',
  'membership.grant_delegation',
  'message.post',
  'message.correct',
  'message.retract',
  'message.redact',
  'work.propose',
  'work.authorize',
  'work.offer',
  'work.accept_offer',
  'work.start',
  'work.checkpoint',
  'work.block',
  'work.unblock',
  'work.submit',
  'work.accept_result',
  'work.fail',
  'work.cancel',
  'artifact.publish',
  'approval.grant_execution',
  'policy.grant_cooperation_override',
] as const

/** A core Command kind. */
export type CoreCommandKind = (typeof CORE_COMMAND_KINDS)[number]

/**
 * Organization-owned bootstrap Commands that live outside any Group: a service issues them and
 * they carry no Group ID and no Session, Membership or Coordinator Epoch (§15.1).
 */
export const ORGANIZATION_SCOPED_COMMAND_KINDS = ['ext.missionweaveprotocol.registry.agent_card_register', 'ext.missionweaveprotocol.identity.session_open'] as const

/** An Organization-scoped bootstrap Command kind. */
export type OrganizationScopedCommandKind = (typeof ORGANIZATION_SCOPED_COMMAND_KINDS)[number]

/**
 * Core kinds whose authority comes from the current Coordinator lease: the actor is an Agent and
 * the Command carries the Coordinator Epoch (§7.2, §15.1).
 */
export const COORDINATOR_ONLY_COMMAND_KINDS = ['mission.renew_coordinator', 'mission.submit_for_approval', 'mission.create_child', 'membership.grant_delegation', 'work.accept_result'] as const

/** A Coordinator-only Command kind. */
export type CoordinatorOnlyCommandKind = (typeof COORDINATOR_ONLY_COMMAND_KINDS)[number]

/**
 * Pattern of an Extension Profile Command or Event kind: `ext.<organization>.<profile>.<name>`,
 * at least three dotted segments after `ext` (§18).
 */
export const EXTENSION_KIND_PATTERN = '^ext\\.[a-z0-9][a-z0-9_-]*(?:\\.[a-z0-9][a-z0-9_-]*){2,}$'

/**
 * An Extension Profile kind name (§18), at most 160 characters. Emitted as a plain string schema;
 * its static type keeps the `ext.` prefix the pattern requires.
 */
export const ExtensionKind = Type.Unsafe<`ext.${string}`>({
  type: 'string',
  pattern: EXTENSION_KIND_PATTERN,
  maxLength: 160,
})

/** An Extension Profile kind name. */
export type ExtensionKind = Static<typeof ExtensionKind>

/** Local definitions of `command.schema.json` (`$defs`), in normative order. */
export const CommandDefs = {
  /** Any core Command kind (§15.1). */
  coreCommandKind: oneOfValues(CORE_COMMAND_KINDS),
  /** The Organization-scoped bootstrap kinds. */
  organizationScopedKind: oneOfValues(ORGANIZATION_SCOPED_COMMAND_KINDS),
  /** The kinds reserved to the current Coordinator. */
  coordinatorOnlyKind: oneOfValues(COORDINATOR_ONLY_COMMAND_KINDS),
} as const

const coreKind = ref('#/$defs/coreCommandKind', CommandDefs.coreCommandKind)
const organizationScopedKind = ref('#/$defs/organizationScopedKind', CommandDefs.organizationScopedKind)
const coordinatorOnlyKind = ref('#/$defs/coordinatorOnlyKind', CommandDefs.coordinatorOnlyKind)

/** `if` part matching an actor of one type. */
function actorTypeIs(type: 'agent' | 'human' | 'service') {
  return { properties: { type: constant(type) }, required: ['type'] }
}

/** `if` condition: the Command's kind is exactly `kind`. */
function kindIs(kind: CoreCommandKind) {
  return { properties: { kind: constant(kind) }, required: ['kind'] }
}

/** A `not` clause forbidding every listed member. */
function forbids(...members: string[]) {
  return { not: { anyOf: members.map((member) => ({ required: [member] })) } }
}

/**
 * A signed Command envelope (§15.1). Epoch rules by actor: an Agent carries Group ID, Session and
 * Membership Epochs; a human never carries a Session Epoch and, outside Mission creation, carries
 * Group ID and Membership Epoch; a service carries neither Membership nor Coordinator Epoch.
 * Core kinds are Group-scoped; Coordinator-only kinds and Agent-issued `mission.terminate` carry
 * the Coordinator Epoch. `payload` is a free object here; typed payloads live beside the catalog.
 */
export const Command = Type.Object(
  {
    protocolVersion: ProtocolVersion,
    actionId: Id,
    actor: Actor,
    sessionEpoch: Type.Optional(PositiveInteger),
    membershipEpoch: Type.Optional(PositiveInteger),
    coordinatorEpoch: Type.Optional(PositiveInteger),
    groupId: Type.Optional(Id),
    conversationId: Type.Optional(Id),
    workItemId: Type.Optional(Id),
    cooperationOverrideGrantId: Type.Optional(Id),
    kind: Type.Union([coreKind, ExtensionKind]),
    expectedRevision: Type.Optional(SafeInteger),
    correlationId: Id,
    causedByEventId: Type.Optional(Id),
    issuedAt: Timestamp,
    payload: freeObject(),
    extensions: Type.Optional(Extensions),
    signature: Signature,
  },
  {
    additionalProperties: false,
    $defs: CommandDefs,
    allOf: [
      // §15.1: mission.terminate comes from the Coordinator (an Agent) or Organization policy.
      {
        if: kindIs('mission.terminate'),
        then: {
          properties: {
            actor: { properties: { type: oneOfValues(['agent', 'service']) }, required: ['type'] },
          },
        },
      },
      // §6.3, §15.1: Agent Commands are fenced by Session and Membership Epochs; nobody else
      // may invent a Session Epoch.
      {
        if: { properties: { actor: actorTypeIs('agent') }, required: ['actor'] },
        then: { required: ['groupId', 'sessionEpoch', 'membershipEpoch'] },
        else: { not: { required: ['sessionEpoch'] } },
      },
      // §8: Organization-service Commands carry no Membership or Coordinator Epoch.
      {
        if: { properties: { actor: actorTypeIs('service') }, required: ['actor'] },
        then: forbids('membershipEpoch', 'coordinatorEpoch'),
      },
      // Every core kind is Group-scoped.
      {
        if: { properties: { kind: coreKind }, required: ['kind'] },
        then: { required: ['groupId'] },
      },
      // A human Command in an existing Group carries the Membership Epoch.
      {
        if: {
          properties: {
            actor: actorTypeIs('human'),
            kind: { not: oneOfValues(['mission.create', 'mission.create_follow_up']) },
          },
          required: ['actor', 'kind'],
        },
        then: { required: ['groupId', 'membershipEpoch'] },
      },
      // §7.1: a root or follow-up Mission is created by a human, before any Membership exists.
      {
        if: kindIs('mission.create'),
        then: { properties: { actor: HumanActor }, ...forbids('membershipEpoch', 'coordinatorEpoch') },
      },
      {
        if: kindIs('mission.create_follow_up'),
        then: { properties: { actor: HumanActor }, ...forbids('membershipEpoch', 'coordinatorEpoch') },
      },
      // Organization bootstrap Commands: a service, outside any Group, without epochs.
      {
        if: { properties: { kind: organizationScopedKind }, required: ['kind'] },
        then: {
          properties: { actor: actorTypeIs('service') },
          ...forbids('groupId', 'sessionEpoch', 'membershipEpoch', 'coordinatorEpoch'),
        },
      },
      // §7.2: Coordinator-lease authority needs an Agent and the current Coordinator Epoch.
      {
        if: { properties: { kind: coordinatorOnlyKind }, required: ['kind'] },
        then: { properties: { actor: AgentActor }, required: ['coordinatorEpoch'] },
      },
      {
        if: {
          properties: { actor: actorTypeIs('agent'), kind: constant('mission.terminate') },
          required: ['actor', 'kind'],
        },
        then: { required: ['coordinatorEpoch'] },
      },
    ],
  },
)

/** A Command envelope; `kind` is a core kind or an Extension Profile kind. */
export type Command = Static<typeof Command>

/** The `kind` of a Command envelope: a core kind or any `ext.` Extension Profile kind (the catalog's `CommandKind` lists the kinds Weft implements). */
export type CommandEnvelopeKind = Command['kind']

/** `command.schema.json` (§15.1, §21). */
export const commandDocument = document('command', 'command.schema.json', 'MissionWeaveProtocol 0.1 Command Envelope', Command)
