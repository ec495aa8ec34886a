/**
 * The Event catalog: every core Event kind of §15.2 (in the order of `event.schema.json`), then the
 * reference `ext.missionweaveprotocol.*` Event kinds the reference Commands emit.
 *
 * `aggregate` names the aggregate whose revision the Event advances (the envelope's
 * `aggregateRevision`); Organization-scoped Events carry no revision and name the Registry entry or
 * Session they record. `aggregateIdAt` says where the envelope names the aggregate's ID (JSON
 * Pointers tried in order, `aggregateIdReader`): replay keys each revision by it.
 * @module
 */
import { CORE_EVENT_KINDS, type CoreEventKind } from '../documents/event.js'
import {
  type AggregateType,
  type AssertTrue,
  type CatalogScope,
  type KindsOf,
  frozenCatalog,
  kindsOf,
  type Same,
  type SectionRef,
} from './shared.js'
import type { EnvelopePointer } from './aggregate-id.js'

/** One entry of {@link EVENT_CATALOG}. */
export interface EventInfo {
  /** The Event kind as it appears in the envelope. */
  readonly kind: string
  /** Group Events carry Group ID, sequence and aggregate revision; Organization ones none of them (§15.2). */
  readonly scope: CatalogScope
  /** The aggregate the fact belongs to. */
  readonly aggregate: AggregateType
  /**
   * The JSON Pointers into the envelope whose first string value identifies the aggregate (see
   * `aggregateIdReader`); never empty.
   */
  readonly aggregateIdAt: readonly EnvelopePointer[]
  /** What became true, in Weft's words. */
  readonly summary: string
  /** Where the fact is defined. */
  readonly section: SectionRef
}

/** Core Event kinds (§15.2), in the order of the `event.schema.json` kind enum. */
const coreEvents = [
  {
    kind: 'mission.created',
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    summary:
      'A Mission and its Group came into being with their planning Conversation, Coordinator lease and first Memberships; the first Event of a Group.',
    section: '§7.1',
  },
  {
    kind: 'mission.coordinator.assigned',
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    summary: 'A Coordinator was appointed under a new, higher Coordinator Epoch and received its Context Package.',
    section: '§7.2',
  },
  {
    kind: 'mission.coordinator.renewed',
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    summary: 'The current Coordinator extended its role lease without changing the Coordinator Epoch.',
    section: '§7.2',
  },
  {
    kind: 'mission.submitted_for_approval',
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    summary: 'The Coordinator put one Mission revision and Artifact set before the MissionOwner.',
    section: '§7.3',
  },
  {
    kind: 'mission.approved',
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    summary: 'The MissionOwner approved the submitted revision and Artifact set; the Mission is final.',
    section: '§7.3',
  },
  {
    kind: 'mission.changes_requested',
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    summary: 'The MissionOwner declined the submission and reopened the Mission for revision.',
    section: '§7.3',
  },
  {
    kind: 'mission.cancelled',
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    summary: 'The Mission was cancelled by its owner, by policy, or because its parent was cancelled.',
    section: '§7.1',
  },
  {
    kind: 'mission.terminated',
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    summary: 'The Mission ended as failed, by its Coordinator, by policy, or through declared child-failure propagation.',
    section: '§7.1',
  },
  {
    kind: 'mission.child.created',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId'],
    summary:
      'A WorkItem was promoted to a child Mission in a new Group; the parent WorkItem is blocked and its ownership fenced while the child runs.',
    section: '§14',
  },
  {
    kind: 'mission.follow_up.created',
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    summary: 'A follow-up Mission linked to an approved one came into being; the first Event of its new Group.',
    section: '§7.1',
  },
  {
    kind: 'membership.changed',
    scope: 'group',
    aggregate: 'membership',
    aggregateIdAt: ['/payload/membership/membershipId'],
    summary: 'A Membership was granted, activated or altered and now has the recorded epoch, role and scopes.',
    section: '§8',
  },
  {
    kind: 'membership.ended',
    scope: 'group',
    aggregate: 'membership',
    aggregateIdAt: ['/payload/membershipId'],
    summary: 'A Membership ended; Commands under its epoch are fenced from now on.',
    section: '§8',
  },
  {
    kind: 'membership.delegation.granted',
    scope: 'group',
    aggregate: 'membership',
    aggregateIdAt: ['/payload/grant/grantId'],
    summary: 'The Coordinator gave a work_delegate Agent a scoped, bounded Delegation Grant over one WorkItem subtree.',
    section: '§9.1',
  },
  {
    kind: 'message.posted',
    scope: 'group',
    aggregate: 'message',
    aggregateIdAt: ['/payload/messageId'],
    summary: 'A Message was committed to a Conversation; it carries no authority.',
    section: '§9',
  },
  {
    kind: 'message.corrected',
    scope: 'group',
    aggregate: 'message',
    aggregateIdAt: ['/payload/messageId'],
    summary: 'A correcting Message was committed against an earlier one, which stays unchanged in history.',
    section: '§9.1',
  },
  {
    kind: 'message.retracted',
    scope: 'group',
    aggregate: 'message',
    aggregateIdAt: ['/payload/messageId'],
    summary: 'A retraction was committed against an earlier Message, which stays unchanged in history.',
    section: '§9.1',
  },
  {
    kind: 'message.redacted',
    scope: 'group',
    aggregate: 'message',
    aggregateIdAt: ['/payload/messageId'],
    summary: 'A redaction with an auditable policy reason was committed against an earlier Message.',
    section: '§9.1',
  },
  {
    kind: 'work.proposed',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/proposalId'],
    summary: 'A Group member proposed work; the proposal is not yet an executable WorkItem.',
    section: '§10.2',
  },
  {
    kind: 'work.authorized',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItem/workItemId'],
    summary: 'A WorkItem was created in state open with its Work Contract and dedicated Conversation.',
    section: '§10.2',
  },
  {
    kind: 'work.offer.created',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary: 'A durable, expiring offer of the WorkItem was made to a bounded set of candidate Workers.',
    section: '§10.3',
  },
  {
    kind: 'work.offer.accepted',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary:
      'A candidate won the WorkItem under a new Ownership Epoch and ownership lease; the other offers were withdrawn.',
    section: '§10.3',
  },
  {
    kind: 'work.contract.revised',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary: 'The WorkItem’s Work Contract got a new version, e.g. after a dependency was added or an offer corrected it.',
    section: '§10.1',
  },
  {
    kind: 'work.started',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary: 'The owner began executing under a new Execution Lease.',
    section: '§11.3',
  },
  {
    kind: 'work.progressed',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary: 'The owner renewed its Execution Lease, optionally with a structured progress report.',
    section: '§11.3',
  },
  {
    kind: 'work.checkpointed',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary: 'The owner recorded a safe checkpoint and released execution; the WorkItem is queued again.',
    section: '§11.3',
  },
  {
    kind: 'work.blocked',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary: 'The owner checkpointed and stopped on a blocker, keeping ownership under a bounded blocked lease.',
    section: '§11.4',
  },
  {
    kind: 'work.unblocked',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary: 'The blocker was resolved; the WorkItem re-entered its queue or, without a live owner, became open.',
    section: '§11.4',
  },
  {
    kind: 'work.submitted',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary: 'The owner submitted Artifacts with Evidence mapped to the acceptance criteria.',
    section: '§13.2',
  },
  {
    kind: 'work.result.accepted',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary: 'The Coordinator’s review (or an approved child Mission) verified the WorkItem.',
    section: '§13.2',
  },
  {
    kind: 'work.failed',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary: 'The WorkItem failed with failure Evidence; only a new offer can revive it.',
    section: '§11.4',
  },
  {
    kind: 'work.cancelled',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary: 'The WorkItem was cancelled, directly or because its Mission ended.',
    section: '§10.2',
  },
  {
    kind: 'artifact.published',
    scope: 'group',
    aggregate: 'artifact',
    aggregateIdAt: ['/payload/artifact/artifactId'],
    summary: 'A signed, content-addressed Artifact manifest was recorded for a WorkItem.',
    section: '§13.1',
  },
  {
    kind: 'approval.execution.granted',
    scope: 'group',
    aggregate: 'approval',
    aggregateIdAt: ['/payload/approvalId'],
    summary: 'A time-bounded Execution Approval opened the start gate for one WorkItem Ownership Epoch.',
    section: '§12',
  },
  {
    kind: 'policy.cooperation_override.granted',
    scope: 'group',
    aggregate: 'policy',
    aggregateIdAt: ['/groupId'],
    summary: 'A one-shot Cooperation Override Grant was issued for one exact future Command.',
    section: '§20',
  },
  {
    kind: 'group.snapshot.created',
    scope: 'group',
    aggregate: 'group',
    aggregateIdAt: ['/groupId'],
    summary: 'A signed archival snapshot of the Group through a given sequence was recorded.',
    section: '§7.4',
  },
  {
    kind: 'group.archived',
    scope: 'group',
    aggregate: 'group',
    aggregateIdAt: ['/groupId'],
    summary: 'The Group was archived against its final snapshot.',
    section: '§7.4',
  },
] as const satisfies readonly EventInfo[]

/**
 * Reference `ext.missionweaveprotocol.*` Event kinds. The protocol names the first three;
 * `ext.missionweaveprotocol.core.work_execution_lease_revoked` is Weft's name (past tense, in the
 * reference namespace) for the Group fact §11.3 requires when a replacement Session revokes an
 * Agent's Execution Leases and returns its WorkItems to `queued`; the protocol names no Event for it.
 */
const referenceExtensionEvents = [
  {
    kind: 'ext.missionweaveprotocol.registry.agent_card_registered',
    scope: 'organization',
    aggregate: 'agent',
    aggregateIdAt: ['/payload/card/agentId'],
    summary: 'The Organization registered a signed Agent Card version in its Agent Registry.',
    section: '§6.1',
  },
  {
    kind: 'ext.missionweaveprotocol.identity.session_opened',
    scope: 'organization',
    aggregate: 'session',
    aggregateIdAt: ['/payload/agentId'],
    summary: 'An Agent Session was activated under a new Session Epoch, fencing every lower one.',
    section: '§6.3',
  },
  {
    kind: 'ext.missionweaveprotocol.core.resource_usage_recorded',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary:
      'A nonzero resource delta was charged to a WorkItem and its whole budget ancestry, with the resulting totals and remainder.',
    section: '§12',
  },
  {
    kind: 'ext.missionweaveprotocol.core.work_execution_lease_revoked',
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/workItemId', '/payload/workItemId'],
    summary:
      'A replacement Session revoked the Agent’s Execution Lease on a WorkItem, which went back to queued (name chosen by Weft).',
    section: '§11.3',
  },
] as const satisfies readonly EventInfo[]

/** Every Event kind Weft knows: the core kinds of §15.2, then the reference extension kinds. */
export const EVENT_CATALOG = frozenCatalog([...coreEvents, ...referenceExtensionEvents] as const)

/** A catalogued Event kind. */
export type EventKind = (typeof EVENT_CATALOG)[number]['kind']

/**
 * The core Event kinds in the order of §15.2 and the `event.schema.json` kind enum, and their union.
 * Re-exported from the envelope module (`documents/event.ts`) so that both modules name one
 * binding; the assertion below pins the catalog to exactly that list and order.
 */
export { CORE_EVENT_KINDS, type CoreEventKind }

// Compile-time: the catalog lists every core kind once, in normative order.
// biome-ignore lint/correctness/noUnusedVariables: a compile-time assertion; tsc fails the build when it does not hold
type CoreEventsInOrder = AssertTrue<Same<KindsOf<typeof coreEvents>, typeof CORE_EVENT_KINDS>>

/** A reference `ext.missionweaveprotocol.*` Event kind. */
export type ReferenceExtensionEventKind = (typeof referenceExtensionEvents)[number]['kind']

/** The catalog entry of one Event kind. */
export type EventEntry<K extends EventKind = EventKind> = Extract<(typeof EVENT_CATALOG)[number], { readonly kind: K }>

/** Every catalogued Event kind, core kinds first, in catalog order. */
export const EVENT_KINDS = kindsOf(EVENT_CATALOG)

/** The reference `ext.missionweaveprotocol.*` Event kinds. */
export const REFERENCE_EXTENSION_EVENT_KINDS = kindsOf(referenceExtensionEvents)

const eventsByKind: ReadonlyMap<string, EventEntry> = new Map(EVENT_CATALOG.map((entry) => [entry.kind, entry]))

/** Whether a string is a catalogued Event kind. */
export function isEventKind(value: string): value is EventKind {
  return eventsByKind.has(value)
}

/**
 * The catalog entry of an Event kind.
 * @example
 * ```ts
 * eventInfo('work.offer.accepted').aggregate // 'workItem'
 * eventInfo('ext.example.unknown.thing') // undefined
 * ```
 */
export function eventInfo<K extends EventKind>(kind: K): EventEntry<K>
export function eventInfo(kind: string): EventInfo | undefined
export function eventInfo(kind: string): EventInfo | undefined {
  return eventsByKind.get(kind)
}
