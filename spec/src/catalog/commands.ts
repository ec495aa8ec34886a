/**
 * The Command catalog: the 32 core Command kinds of §15.1 (in the order of the `coreCommandKind`
 * enum of `command.schema.json`), then the six reference Organization-owned
 * `ext.missionweaveprotocol.*` Commands §15.1 names.
 *
 * How to read an entry:
 * - `issuerTypes`: which kinds of Principal may sign it at all (§7.1, §8, §9, §9.1, §10.2, §12, §20).
 *   Role and policy checks come on top.
 * - `requiredEpochs`: what the envelope must carry for an Agent and for a human issuer (§15.1 and
 *   the `if`/`then` rules of `command.schema.json`); a service never carries an epoch. Lists for an
 *   issuer type outside `issuerTypes` are empty. They hold the unconditional requirements only:
 *   §15.1 additionally wants the Coordinator Epoch on any Agent Command whose authority comes from
 *   the Coordinator lease, so a Coordinator issuing e.g. `work.offer` adds it.
 * - `coordinatorOnly`: exactly the `coordinatorOnlyKind` enum of `command.schema.json`.
 * - `aggregate`: the aggregate whose revision `expectedRevision` is checked against.
 * - `aggregateIdAt`: where the envelope names that aggregate's ID, as JSON Pointers tried in
 *   order (the first string wins; `aggregateIdReader`). A Work Proposal under a parent names the
 *   parent WorkItem; a correction, retraction or redaction names the Message it targets.
 * - `emits`: every Event kind the Command may cause, including automatic ones appended in the
 *   same transaction or, where the protocol propagates across Groups, in the linked Group.
 * - `requiresExpectedRevision`: the authority always compares-and-sets for these (§15.3: first
 *   accepting ownership, lease renewal, Membership change, Approval), even when the wire field is
 *   omitted; clients should send `expectedRevision` on them.
 * @module
 */
import { CORE_COMMAND_KINDS, type CoreCommandKind } from '../documents/command.js'
import type { EventKind } from './events.js'
import {
  type AggregateType,
  type AssertTrue,
  type CatalogScope,
  type EpochName,
  type IssuerType,
  type KindsOf,
  frozenCatalog,
  kindsOf,
  type Same,
  type SectionRef,
} from './shared.js'
import type { EnvelopePointer } from './aggregate-id.js'

/** One entry of {@link COMMAND_CATALOG}. */
export interface CommandInfo {
  /** The Command kind as it appears in the envelope. */
  readonly kind: string
  /** What the Command asks for, in Weft's words. */
  readonly summary: string
  /** Principal types that may issue it. */
  readonly issuerTypes: readonly IssuerType[]
  /** Epochs the envelope must carry, per issuer type (§15.1); services carry none. */
  readonly requiredEpochs: {
    readonly agent: readonly EpochName[]
    readonly human: readonly EpochName[]
  }
  /** Reserved to the current Coordinator (`coordinatorOnlyKind`, §7.2). */
  readonly coordinatorOnly: boolean
  /** Group-scoped (carries `groupId`) or Organization-scoped (carries none, §15.1). */
  readonly scope: CatalogScope
  /** The aggregate the Command transitions. */
  readonly aggregate: AggregateType
  /**
   * The JSON Pointers into the envelope whose first string value identifies the aggregate (see
   * `aggregateIdReader`); never empty.
   */
  readonly aggregateIdAt: readonly EnvelopePointer[]
  /** Event kinds the Command may append. */
  readonly emits: readonly EventKind[]
  /** Present when §15.3 demands compare-and-set processing. */
  readonly requiresExpectedRevision?: true
  /** Where the transition is defined. */
  readonly section: SectionRef
}

const none = [] as const
/** A state-changing Agent Command in a Group (§6.3, §8, §15.1). */
const agentInGroup = ['session', 'membership'] as const
/** An Agent Command under the Coordinator lease (§7.2, §15.1). */
const agentAsCoordinator = ['session', 'membership', 'coordinator'] as const
/** A human Command in an existing Group (§8, §15.1). */
const humanInGroup = ['membership'] as const

const usageRecorded = 'ext.missionweaveprotocol.core.resource_usage_recorded'

/** Core Command kinds (§15.1), in the order of the `coreCommandKind` enum. */
const coreCommands = [
  {
    kind: 'mission.create',
    summary:
      'A human opens a root Mission with its new Group, naming the objective, definition of done, deadline, budget, approval policy and the Coordinator to lease.',
    // §15.1: the Group being created is named on the envelope; no Membership exists yet and humans hold no Session.
    issuerTypes: ['human'],
    requiredEpochs: { agent: none, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    emits: ['mission.created'],
    section: '§7.1',
  },
  {
    kind: 'mission.assign_coordinator',
    summary:
      'The MissionOwner or the Organization control plane appoints a Coordinator under a higher Coordinator Epoch, handing it a signed Context Package.',
    // §7.2: MissionOwner (human for a root, the parent Coordinator for a child) or the control plane (service).
    issuerTypes: ['agent', 'human', 'service'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    // The incoming Coordinator's Membership is granted or changed, the outgoing one's may end.
    emits: ['mission.coordinator.assigned', 'membership.changed', 'membership.ended'],
    section: '§7.2',
  },
  {
    kind: 'mission.renew_coordinator',
    summary: 'The current Coordinator extends its role lease.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentAsCoordinator, human: none },
    coordinatorOnly: true,
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    emits: ['mission.coordinator.renewed'],
    requiresExpectedRevision: true,
    section: '§7.2',
  },
  {
    kind: 'mission.submit_for_approval',
    summary: 'The current Coordinator submits one Mission revision and Artifact set for the MissionOwner’s decision.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentAsCoordinator, human: none },
    coordinatorOnly: true,
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    emits: ['mission.submitted_for_approval'],
    section: '§7.3',
  },
  {
    kind: 'mission.approve',
    summary: 'The MissionOwner approves the submitted revision and Artifact set with a signed Approval.',
    // A root MissionOwner is human; a child Mission's owner is the parent Coordinator, an Agent (§3, §14).
    issuerTypes: ['agent', 'human'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    // Approving a child Mission verifies the parent WorkItem in the parent Group (§10.2, §14).
    emits: ['mission.approved', 'work.result.accepted'],
    requiresExpectedRevision: true,
    section: '§7.3',
  },
  {
    kind: 'mission.request_changes',
    summary: 'The MissionOwner answers a submission with a signed change request, reopening the Mission.',
    issuerTypes: ['agent', 'human'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    emits: ['mission.changes_requested'],
    // The other outcome of the same Approval decision (`decision: changes_requested`); it races `mission.approve`.
    requiresExpectedRevision: true,
    section: '§7.3',
  },
  {
    kind: 'mission.cancel',
    summary: 'The MissionOwner or Organization policy cancels a non-terminal Mission.',
    issuerTypes: ['agent', 'human', 'service'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    // Unfinished WorkItems are cancelled with it; child Missions receive `mission.cancelled` in their own Groups.
    emits: ['mission.cancelled', 'work.cancelled'],
    section: '§7.1',
  },
  {
    kind: 'mission.terminate',
    summary: 'The Coordinator or Organization policy ends a non-terminal Mission as failed.',
    // command.schema.json: the actor is an Agent (with Coordinator Epoch) or a service (policy, no epochs).
    issuerTypes: ['agent', 'service'],
    requiredEpochs: { agent: agentAsCoordinator, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    // Unfinished WorkItems fail with it; a failed child may fail its parent WorkItem under the declared policy (§14).
    emits: ['mission.terminated', 'work.failed'],
    section: '§7.1',
  },
  {
    kind: 'mission.create_child',
    summary:
      'The current Coordinator promotes a WorkItem to a child Mission with its own Group, Coordinator, budget, deadline and approval policy.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentAsCoordinator, human: none },
    coordinatorOnly: true,
    scope: 'group',
    // The transition of §10.2 is on the parent WorkItem (to `blocked`); the envelope names the parent Group.
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/parentWorkItemId'],
    // `mission.created` is the genesis Event of the child's new Group (no cross-Group transaction, §10.4).
    emits: ['mission.child.created', 'mission.created'],
    section: '§14',
  },
  {
    kind: 'mission.create_follow_up',
    summary: 'The MissionOwner opens a new Mission linked to an approved one, for correction, revocation or more work.',
    issuerTypes: ['human'],
    requiredEpochs: { agent: none, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'mission',
    aggregateIdAt: ['/groupId'],
    emits: ['mission.follow_up.created'],
    section: '§7.1',
  },
  {
    kind: 'membership.change',
    summary: 'Grants, activates or alters a Membership: role, scopes, visibility start, provisional expiry.',
    // §8: usually the Coordinator (just-in-time Worker Membership), also the MissionOwner or Organization policy.
    issuerTypes: ['agent', 'human', 'service'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'membership',
    aggregateIdAt: ['/payload/membershipId'],
    emits: ['membership.changed'],
    requiresExpectedRevision: true,
    section: '§8',
  },
  {
    kind: 'membership.end',
    summary: 'Ends a Membership, fencing its epoch.',
    issuerTypes: ['agent', 'human', 'service'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'membership',
    aggregateIdAt: ['/payload/membershipId'],
    emits: ['membership.ended'],
    requiresExpectedRevision: true,
    section: '§8',
  },
  {
    kind: 'membership.grant_delegation',
    summary: 'The current Coordinator grants a work_delegate Agent a bounded Delegation Grant over one WorkItem subtree.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentAsCoordinator, human: none },
    coordinatorOnly: true,
    scope: 'group',
    aggregate: 'membership',
    aggregateIdAt: ['/payload/grantId'],
    emits: ['membership.delegation.granted'],
    section: '§9.1',
  },
  {
    kind: 'message.post',
    summary: 'Commits a Message to a Conversation; it never authorizes anything.',
    issuerTypes: ['agent', 'human'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'message',
    aggregateIdAt: ['/payload/messageId'],
    // §11.5: a Message buffered offline first charges its nonzero usage delta, then is applied.
    emits: [usageRecorded, 'message.posted'],
    section: '§9',
  },
  {
    kind: 'message.correct',
    summary: 'Commits a correction of an earlier Message.',
    issuerTypes: ['agent', 'human'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'message',
    aggregateIdAt: ['/payload/targetMessageId'],
    emits: ['message.corrected'],
    section: '§9.1',
  },
  {
    kind: 'message.retract',
    summary: 'Commits a retraction of an earlier Message.',
    issuerTypes: ['agent', 'human'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'message',
    aggregateIdAt: ['/payload/targetMessageId'],
    emits: ['message.retracted'],
    section: '§9.1',
  },
  {
    kind: 'message.redact',
    summary: 'Commits a redaction of an earlier Message with an auditable policy reason.',
    // §7.4: legal deletion or security redaction may come from Organization policy.
    issuerTypes: ['agent', 'human', 'service'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'message',
    aggregateIdAt: ['/payload/targetMessageId'],
    emits: ['message.redacted'],
    section: '§9.1',
  },
  {
    kind: 'work.propose',
    summary: 'Any Group member proposes work with a full Work Contract; nothing becomes executable yet.',
    issuerTypes: ['agent', 'human'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/parentWorkItemId', '/payload/proposalId'],
    emits: ['work.proposed'],
    section: '§10.2',
  },
  {
    kind: 'work.authorize',
    summary:
      'The Coordinator, a delegate under a Delegation Grant, or the MissionOwner (emergency override) creates a WorkItem.',
    issuerTypes: ['agent', 'human'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    emits: ['work.authorized'],
    section: '§10.2',
  },
  {
    kind: 'work.offer',
    summary: 'Creates, replaces or extends an expiring offer of a WorkItem to a bounded set of candidate Workers.',
    issuerTypes: ['agent', 'human'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    // §10.1: an offer may carry a corrected Work Contract, which is a new contract version.
    emits: ['work.contract.revised', 'work.offer.created'],
    section: '§10.3',
  },
  {
    kind: 'work.accept_offer',
    summary: 'A candidate Worker accepts an offer after admission control and wins a new Ownership Epoch.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentInGroup, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    // §8: accepting activates the Worker's provisional Membership.
    emits: ['work.offer.accepted', 'membership.changed'],
    requiresExpectedRevision: true,
    section: '§10.3',
  },
  {
    kind: 'work.start',
    summary: 'The owner starts executing a queued WorkItem under a new Execution Lease.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentInGroup, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    emits: ['work.started'],
    section: '§11.3',
  },
  {
    kind: 'work.checkpoint',
    summary: 'The owner records a safe checkpoint and releases execution, keeping a bounded ownership lease.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentInGroup, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    // §11.5: a checkpoint buffered offline first charges its nonzero usage delta, then is applied.
    emits: [usageRecorded, 'work.checkpointed'],
    section: '§11.3',
  },
  {
    kind: 'work.block',
    summary: 'The owner checkpoints and stops on a blocker, keeping ownership under a bounded blocked lease.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentInGroup, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    emits: ['work.blocked'],
    section: '§11.4',
  },
  {
    kind: 'work.unblock',
    summary: 'Declares a blocker resolved; the WorkItem re-enters its queue, or becomes open if ownership lapsed.',
    // §11.4: the Coordinator resolves blockers; the owner or the MissionOwner may also clear one.
    issuerTypes: ['agent', 'human'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    emits: ['work.unblocked'],
    section: '§11.4',
  },
  {
    kind: 'work.submit',
    summary: 'The owner submits Artifacts and Evidence mapped to the acceptance criteria.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentInGroup, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    emits: ['work.submitted'],
    section: '§13.2',
  },
  {
    kind: 'work.accept_result',
    summary: 'The current Coordinator verifies a submitted WorkItem on the strength of review Evidence.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentAsCoordinator, human: none },
    coordinatorOnly: true,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    emits: ['work.result.accepted'],
    section: '§13.2',
  },
  {
    kind: 'work.fail',
    summary: 'The owner (citing its lease) or the Coordinator or policy (without one) fails a WorkItem with Evidence.',
    // §11.4: Worker-reported failure or Coordinator decision; Organization policy on exhausted retry budgets.
    issuerTypes: ['agent', 'service'],
    requiredEpochs: { agent: agentInGroup, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    emits: ['work.failed'],
    section: '§11.4',
  },
  {
    kind: 'work.cancel',
    summary: 'The Coordinator, MissionOwner or Organization policy cancels an unfinished WorkItem.',
    issuerTypes: ['agent', 'human', 'service'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    emits: ['work.cancelled'],
    section: '§10.2',
  },
  {
    kind: 'artifact.publish',
    summary: 'The executing owner records a signed Artifact manifest under its current Execution Lease.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentInGroup, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'artifact',
    aggregateIdAt: ['/payload/artifact/artifactId'],
    emits: ['artifact.published'],
    section: '§13.1',
  },
  {
    kind: 'approval.grant_execution',
    summary:
      'A human approver, or Organization policy where the contract allows it, opens the execution gate for one WorkItem Ownership Epoch.',
    // §12 and the contract's `executionApproval` (`human_required` vs `policy_required`).
    issuerTypes: ['human', 'service'],
    requiredEpochs: { agent: none, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'approval',
    aggregateIdAt: ['/payload/approvalId'],
    emits: ['approval.execution.granted'],
    requiresExpectedRevision: true,
    section: '§12',
  },
  {
    kind: 'policy.grant_cooperation_override',
    summary: 'The MissionOwner or an Organization policy actor issues a one-shot Cooperation Override Grant.',
    issuerTypes: ['agent', 'human', 'service'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'policy',
    aggregateIdAt: ['/groupId'],
    emits: ['policy.cooperation_override.granted'],
    section: '§20',
  },
] as const satisfies readonly CommandInfo[]

/** The reference Organization-owned `ext.missionweaveprotocol.*` Commands of §15.1. */
const referenceExtensionCommands = [
  {
    kind: 'ext.missionweaveprotocol.registry.agent_card_register',
    summary: 'The Organization registers a signed Agent Card version.',
    issuerTypes: ['service'],
    requiredEpochs: { agent: none, human: none },
    coordinatorOnly: false,
    scope: 'organization',
    aggregate: 'agent',
    aggregateIdAt: ['/payload/card/agentId'],
    emits: ['ext.missionweaveprotocol.registry.agent_card_registered'],
    section: '§6.1',
  },
  {
    kind: 'ext.missionweaveprotocol.identity.session_open',
    summary: 'The Organization activates a new Session Epoch for an authenticated Agent.',
    issuerTypes: ['service'],
    requiredEpochs: { agent: none, human: none },
    coordinatorOnly: false,
    scope: 'organization',
    aggregate: 'session',
    aggregateIdAt: ['/payload/agentId'],
    // §11.3: the replacement Session revokes the Agent's Execution Leases in every affected Group.
    emits: [
      'ext.missionweaveprotocol.identity.session_opened',
      'ext.missionweaveprotocol.core.work_execution_lease_revoked',
    ],
    section: '§6.3',
  },
  {
    kind: 'ext.missionweaveprotocol.core.work_dependency_add',
    summary: 'Adds a dependency to a WorkItem, revising its Work Contract; cycles are rejected.',
    issuerTypes: ['agent', 'human'],
    requiredEpochs: { agent: agentInGroup, human: humanInGroup },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    emits: ['work.contract.revised'],
    section: '§10.4',
  },
  {
    kind: 'ext.missionweaveprotocol.core.work_execution_lease_renew',
    summary: 'The executing owner renews its Execution Lease.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentInGroup, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    emits: ['work.progressed'],
    requiresExpectedRevision: true,
    section: '§11.3',
  },
  {
    kind: 'ext.missionweaveprotocol.core.resource_usage_record',
    summary:
      'The executing owner records a nonzero six-dimensional usage delta against its WorkItem, Ownership Epoch and Execution Lease.',
    issuerTypes: ['agent'],
    requiredEpochs: { agent: agentInGroup, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'workItem',
    aggregateIdAt: ['/payload/workItemId'],
    emits: [usageRecorded],
    section: '§12',
  },
  {
    kind: 'ext.missionweaveprotocol.core.group_archive',
    summary: 'An authorized archival service archives the Group against a signed final snapshot.',
    // §6.4: a Group Snapshot creator is an authorized archival service.
    issuerTypes: ['service'],
    requiredEpochs: { agent: none, human: none },
    coordinatorOnly: false,
    scope: 'group',
    aggregate: 'group',
    aggregateIdAt: ['/groupId'],
    emits: ['group.snapshot.created', 'group.archived'],
    section: '§7.4',
  },
] as const satisfies readonly CommandInfo[]

/** Every Command kind Weft knows: the 32 core kinds, then the 6 reference extension kinds. */
export const COMMAND_CATALOG = frozenCatalog([...coreCommands, ...referenceExtensionCommands] as const)

/** A catalogued Command kind. */
export type CommandKind = (typeof COMMAND_CATALOG)[number]['kind']

/**
 * The core Command kinds in the order of the `coreCommandKind` enum of `command.schema.json`, and
 * their union. Re-exported from the envelope module (`documents/command.ts`) so that both modules
 * name one binding; the assertion below pins the catalog to exactly that list and order.
 */
export { CORE_COMMAND_KINDS, type CoreCommandKind }

// Compile-time: the catalog lists every core kind once, in normative order.
// biome-ignore lint/correctness/noUnusedVariables: a compile-time assertion; tsc fails the build when it does not hold
type CoreCommandsInOrder = AssertTrue<Same<KindsOf<typeof coreCommands>, typeof CORE_COMMAND_KINDS>>

/** A reference Organization-owned `ext.missionweaveprotocol.*` Command kind. */
export type ReferenceExtensionCommandKind = (typeof referenceExtensionCommands)[number]['kind']

/** The catalog entry of one Command kind. */
export type CommandEntry<K extends CommandKind = CommandKind> = Extract<
  (typeof COMMAND_CATALOG)[number],
  { readonly kind: K }
>

/** Every catalogued Command kind, core kinds first. */
export const COMMAND_KINDS = kindsOf(COMMAND_CATALOG)

/** The six reference Organization-owned `ext.missionweaveprotocol.*` Command kinds. */
export const REFERENCE_EXTENSION_COMMAND_KINDS = kindsOf(referenceExtensionCommands)

const commandsByKind: ReadonlyMap<string, CommandEntry> = new Map(COMMAND_CATALOG.map((entry) => [entry.kind, entry]))

/** Whether a string is a catalogued Command kind. */
export function isCommandKind(value: string): value is CommandKind {
  return commandsByKind.has(value)
}

/**
 * The catalog entry of a Command kind.
 * @example
 * ```ts
 * commandInfo('work.accept_result').requiredEpochs.agent // ['session', 'membership', 'coordinator']
 * commandInfo('mission.pause') // undefined: not a v0.1 kind
 * ```
 */
export function commandInfo<K extends CommandKind>(kind: K): CommandEntry<K>
export function commandInfo(kind: string): CommandInfo | undefined
export function commandInfo(kind: string): CommandInfo | undefined {
  return commandsByKind.get(kind)
}
