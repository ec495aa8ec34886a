/**
 * The authoritative state of a Group Authority (§5): Organization records and, per Group, the
 * Mission, Memberships, WorkItems, leases, approvals, Messages and Artifacts. It is a fold of the
 * Event log (§4 invariant 6, §16): only reducers (`reduce.ts` and the `domain/*` reducers) write
 * it, handlers only read it. Records hold the normative documents as the Events carried them plus
 * the links and bookkeeping the documents have no field for.
 *
 * Maps are used everywhere so that a Command costs the same with 1,000 or 100,000 Events in the
 * log (the reference runtime copies its whole state per Command).
 * @module
 */
import type {
  AgentCard,
  Approval,
  Artifact,
  ChildFailurePolicy,
  CheckpointRecord,
  ContextPackage,
  Conversation,
  CooperationOverrideGrant,
  DelegationGrant,
  Event,
  Evidence,
  Group,
  Lease,
  Membership,
  Message,
  Mission,
  ResourceBudget,
  WorkItem,
} from '@weft/spec'
import type { AggregateType, UsageDimension } from '@weft/spec'
import type { ClosedLease, RetryLedger, SnapshotReference, SubmissionFacts } from './domain/ledgers.js'

/** A Principal as the common `actor` shape (`{ type, id }`). */
export interface ActorRef {
  readonly type: 'agent' | 'human' | 'service'
  readonly id: string
}

/**
 * A `${kind}:${id}` key maker that remembers its last four keys: asked again for one of them, it
 * returns the same string object as before. A Command's actor and aggregate are keyed several times
 * per Command (idempotency, membership, store, rate windows, revisions), each time from a fresh
 * `id` text; a key made before has its hash computed already, so a map lookup skips hashing a new
 * concatenation.
 */
function rememberingKeys(): (kind: string, id: string) => string {
  // `[kind, id, key]` triples, newest first (each starts as a true triple, so any call is answered right).
  const recent: string[] = ['', '', ':', '', '', ':', '', '', ':', '', '', ':']
  return (kind, id) => {
    for (let i = 0; i < 12; i += 3) {
      if (recent[i + 1] === id && recent[i] === kind) return recent[i + 2]!
    }
    const key = `${kind}:${id}`
    // The oldest triple goes; the new one takes the front (plain moves: `copyWithin` is a slow generic builtin).
    for (let i = 11; i >= 3; i--) recent[i] = recent[i - 3]!
    recent[0] = kind
    recent[1] = id
    recent[2] = key
    return key
  }
}

const actorKeys = rememberingKeys()
const aggregateKeys = rememberingKeys()

/** The key of an actor in maps: `agent:urn:…`. */
export function actorKey(actor: ActorRef): string {
  return actorKeys(actor.type, actor.id)
}

/** The key of an aggregate in {@link GroupState.revisions}: `workItem:urn:…`. */
export function aggregateKey(type: AggregateType, id: string): string {
  return aggregateKeys(type, id)
}

/** An Event as stored: the signed envelope. Group Events always carry `groupId`, `sequence` and `aggregateRevision`. */
export type StoredEvent = Event

/** What the Agent Registry knows of one Agent (§6.1, §6.3). */
export interface AgentRecord {
  readonly agentId: string
  /** The latest registered, Organization-signed Agent Card. */
  card: AgentCard
  /** Every registered card version, oldest first (assignments pin a version, §6.1). */
  readonly cardVersions: AgentCard[]
  /** The current Session Epoch; 0 before the first `session_open` (§6.3). */
  sessionEpoch: number
}

/** Organization-level state: the Agent Registry and Session Epochs (§6). */
export interface OrganizationState {
  readonly agents: Map<string, AgentRecord>
  /** Organization-scoped Events (no Group, sequence or revision, §15.2), in acceptance order. */
  readonly log: StoredEvent[]
}

/** A persisted Delegation Grant with its use so far (§9.1). */
export interface GrantRecord {
  readonly grant: DelegationGrant
  /** WorkItems created or offered under the Grant; their budgets count against its ceilings. */
  readonly workItemIds: Set<string>
}

/** An open Work Proposal (§10.2: not a WorkItem yet). */
export interface ProposalRecord {
  readonly proposalId: string
  readonly proposedBy: ActorRef
  readonly eventId: string
  readonly contract: WorkItem['contract']
  readonly dependencyIds: readonly string[]
  readonly parentWorkItemId?: string
  /** Set when a `work.authorize` consumed it. */
  authorizedAs?: string
}

/** A granted Execution Approval (§12), bound to one Ownership Epoch. */
export interface ExecutionApprovalRecord {
  readonly approvalId: string
  readonly ownershipEpoch: number
  readonly expiresAt: string
  readonly grantedBy: ActorRef
  /** The operations, resources and budget the approval covers; capability tokens stay within them (§12). */
  readonly operations: readonly string[]
  readonly resources: readonly string[]
  readonly budget: ResourceBudget
}

/**
 * One WorkItem (§10): the document as of its latest Event (`doc.state`, `doc.revision`,
 * `doc.owner`, `doc.offers`, `doc.contract` are authoritative) plus links and leases.
 */
export interface WorkItemRecord {
  doc: WorkItem
  /** Declared dependencies (§10.4); together with every other WorkItem's they form a DAG. */
  dependencyIds: string[]
  readonly parentWorkItemId?: string
  readonly proposalId?: string
  readonly delegationGrantId?: string
  /** Depth below the nearest Grant scope root (§9.1 maximum descendant depth); 0 for the root. */
  readonly depth: number
  /** When the current offer stops being acceptable (§10.3); absent when not offered. */
  offerExpiresAt?: string
  /** The highest Ownership Epoch ever issued; the next accept gets `+1` (§4.5). */
  lastOwnershipEpoch: number
  /** The current ownership lease (`leaseType: ownership`); absent when nobody owns the item. */
  ownershipLease?: Lease
  /** The current Execution Lease (`leaseType: execution`); present only while `active`. */
  executionLease?: Lease
  /** Every Execution Lease ID ever issued for the item, so an old one is told from an unknown one (§11.3). */
  readonly executionLeaseIds: Set<string>
  /** The latest checkpoint, from which a reassigned owner resumes (§11.5). */
  lastCheckpoint?: CheckpointRecord
  /** Granted Execution Approvals (§12), newest last. */
  readonly executionApprovals: ExecutionApprovalRecord[]
  /** Artifacts published for the item, by Artifact ID. */
  readonly artifactIds: Set<string>
  /** The linked child Mission while the item is promoted (§14). */
  childMissionId?: string
  childGroupId?: string
  childFailurePolicy?: ChildFailurePolicy
  /**
   * Budget reserved for the item (its contract budget), released when it ends (§12). Written only
   * through `setReservation` (`domain/work-index.ts`), which keeps the Group's
   * {@link GroupState.workItemIndex} in step.
   */
  reservedBudget: ResourceBudget
  // The ledgers below are folds of the log that the document has no field for; each is `undefined`
  // until its reducer first writes it (the `work.authorized` reducer makes every record with all four,
  // so records keep one shape), and a state checkpoint carries it (`log/checkpoint-image.ts`).
  /** What has been charged to the item and to its subtree (§12, §14); absent until the first charge. */
  usage?: UsageLedger | undefined
  /** The item's failed rounds against its retry policy (§11.4); absent until it first fails. */
  retryLedger?: RetryLedger | undefined
  /** The epoch and Evidence documents of the latest submission (§13.2: the document keeps only Evidence IDs). */
  submissionFacts?: SubmissionFacts | undefined
  /** Every lease of the item closed so far, oldest first, with when and why (§11.3). */
  closedLeases?: ClosedLease[] | undefined
}

/** A value per usage dimension (§12); money in millionths of the currency. */
export type Usage = Record<UsageDimension, number>

/** What has been charged to a WorkItem: its own charges, and those of its whole subtree with its child Missions (§12, §14). */
export interface UsageLedger {
  readonly own: Usage
  readonly subtree: Usage
}

/**
 * A Group's WorkItems by parent (§4.11: budgets and deadlines narrow down the tree; §12:
 * reservations), derived from the records' `parentWorkItemId` and `reservedBudget`, so budget checks
 * never scan the Group. Keys are parent WorkItem IDs; `''` stands for the Mission (its top-level WorkItems).
 */
export interface WorkItemIndex {
  /** The child records of each parent, in authorization order. */
  readonly children: Map<string, WorkItemRecord[]>
  /** What the children of each parent reserve together. */
  readonly reserved: Map<string, Usage>
  /** How many records of the Group are indexed; any other number means the index is rebuilt before use. */
  count: number
}

/** The child Groups of each parent WorkItem (§14), derived from {@link AuthorityState.childLinks}. */
export interface ChildGroupIndex {
  /** Child Group IDs by `parentGroupId + ' ' + parentWorkItemId`, in link order. */
  readonly byParent: Map<string, string[]>
  /** How many links are indexed (links are only ever added, a child Group is created once). */
  count: number
}

/** One published Artifact (§13.1); the bytes live in the blob store, never here. */
export interface ArtifactRecord {
  readonly manifest: Artifact
  readonly eventId: string
  readonly ownershipEpoch: number
  readonly executionLeaseId: string
}

/** A Message and its later corrections, retractions and redactions (§9.1: each a new Event). */
export interface MessageRecord {
  readonly message: Message
  /** Message IDs of the corrections / retractions / redactions that point at this one, in order. */
  readonly followUps: string[]
}

/** A Cooperation Override Grant in the Policy Log (§20); consumed once. */
export interface OverrideRecord {
  readonly grant: CooperationOverrideGrant
  consumedByActionId?: string
}

/** The Mission's pending submission (§7.3): the exact revision and Artifact set under decision. */
export interface SubmissionRecord {
  readonly missionRevision: number
  readonly artifactHashes: readonly string[]
  readonly eventId: string
}

/** Everything one Group's log folds into. */
export interface GroupState {
  readonly groupId: string
  readonly missionId: string
  /** The sequence of the last appended Event; the next one gets `head + 1` (§15.2). */
  head: number
  /** The current revision of every aggregate that has one, by {@link aggregateKey}. */
  readonly revisions: Map<string, number>
  mission: Mission
  group: Group
  /** The Coordinator lease under the current Coordinator Epoch (§7.2). */
  coordinatorLease: Lease
  readonly conversations: Map<string, Conversation>
  readonly memberships: Map<string, Membership>
  /** The Membership ID of each member, by {@link actorKey}; the latest one, ended or not. */
  readonly membershipByMember: Map<string, string>
  readonly grants: Map<string, GrantRecord>
  readonly proposals: Map<string, ProposalRecord>
  readonly workItems: Map<string, WorkItemRecord>
  readonly messages: Map<string, MessageRecord>
  readonly artifacts: Map<string, ArtifactRecord>
  /** Context Packages handed over in this Group, by package ID (§13.3). */
  readonly contextPackages: Map<string, ContextPackage>
  /** Mission-level Approvals and change requests, by Approval ID (§7.3). */
  readonly approvals: Map<string, Approval>
  submission?: SubmissionRecord
  readonly overrides: Map<string, OverrideRecord>
  /** Evidence accepted in this Group, for the derived progress of §7.3. */
  readonly acceptedEvidence: Evidence[]
  // Ledgers: folds of the log with no document field, absent until their reducer first writes them;
  // a state checkpoint carries them (`log/checkpoint-image.ts`).
  /** What has been charged to the Mission: every WorkItem together, child Missions included (§12, §14). */
  missionUsage?: Usage
  /** §20 rate windows: acceptance times (epoch ms, oldest first) by `rate + ' ' + actorKey`. */
  rateWindows?: Map<string, number[]>
  /** §20: the ID of each Cooperation Override Grant by `actorKey(beneficiary) + ' ' + targetActionId`. */
  overridesByTarget?: Map<string, string>
  /** The snapshots `group.snapshot.created` recorded (§7.4), by snapshot ID. */
  snapshots?: Map<string, SnapshotReference>
  // Indexes, derived from `workItems` and `acceptedEvidence`: kept in step by the reducers, rebuilt
  // from the state when a checkpoint is read (`domain/indexes.ts`); a checkpoint does not carry them.
  /** The WorkItems by parent, with their reservations (see {@link WorkItemIndex}). */
  readonly workItemIndex: WorkItemIndex
  /** The IDs of {@link GroupState.acceptedEvidence}, so accepting a result costs the same however much came before. */
  readonly acceptedEvidenceIds: Set<string>
}

/** The whole authoritative state of one Authority: the Organization plus every Group it serves. */
export interface AuthorityState {
  readonly org: OrganizationState
  readonly groups: Map<string, GroupState>
  /** Child Group ID -> parent Group and WorkItem (§14), for propagation both ways. */
  readonly childLinks: Map<string, { readonly parentGroupId: string; readonly parentWorkItemId: string }>
  /** Derived from {@link AuthorityState.childLinks} (see {@link ChildGroupIndex}); a checkpoint does not carry it. */
  readonly childGroupIndex: ChildGroupIndex
}

/** What a Group is born with (`mission.created`, §7.1); every collection starts empty. */
export interface GroupGenesis {
  readonly groupId: string
  readonly missionId: string
  readonly mission: Mission
  readonly group: Group
  readonly coordinatorLease: Lease
  readonly conversation: Conversation
}

/** A Group's state before any Event but its genesis has been folded in: head 0, no revisions. */
export function emptyGroupState(genesis: GroupGenesis): GroupState {
  return {
    groupId: genesis.groupId,
    missionId: genesis.missionId,
    head: 0,
    revisions: new Map(),
    mission: genesis.mission,
    group: genesis.group,
    coordinatorLease: genesis.coordinatorLease,
    conversations: new Map([[genesis.conversation.conversationId, genesis.conversation]]),
    memberships: new Map(),
    membershipByMember: new Map(),
    grants: new Map(),
    proposals: new Map(),
    workItems: new Map(),
    messages: new Map(),
    artifacts: new Map(),
    contextPackages: new Map(),
    approvals: new Map(),
    overrides: new Map(),
    acceptedEvidence: [],
    ...emptyGroupIndexes(),
  }
}

/** The derived indexes of a Group that holds no WorkItem and no accepted Evidence. */
export function emptyGroupIndexes(): Pick<GroupState, 'workItemIndex' | 'acceptedEvidenceIds'> {
  return { workItemIndex: { children: new Map(), reserved: new Map(), count: 0 }, acceptedEvidenceIds: new Set() }
}

/** An empty Authority state. */
export function emptyState(): AuthorityState {
  return { org: { agents: new Map(), log: [] }, groups: new Map(), childLinks: new Map(), childGroupIndex: { byParent: new Map(), count: 0 } }
}
