/**
 * The console's view model of one Group: its Events (§15.2) folded in sequence order into what the
 * Mission view shows — Mission state, WorkItem graph, leases, budget ledger, Messages, Artifacts
 * and Evidence, the pending submission, and a compact Event log. No DOM here: the fold is tested
 * in Node, and the same Events always give the same view.
 *
 * The view is a mutable draft advanced in place, one Event at a time, like the Authority's own
 * reducers: a Group of 10,000 Events is folded once, not copied per Event. The UI re-renders on
 * {@link GroupView.version}.
 *
 * This module holds the view's shape and takes Events as delivery hands them over (in sequence,
 * once each, §16); what each Event kind changes is `folds.ts`, the log's summaries `summary.ts`,
 * and what the UI derives from a view is `usage.ts`, `submission.ts` and `lease-lanes.ts`.
 *
 * Everything in here that came from an Event is untrusted text (titles, Messages, reasons,
 * Artifact names): the UI renders it as text only.
 * @module
 */
import type { Approval, Artifact, Event, Evidence, Message, Mission, WorkContract } from '@weft/spec'
import { applyEvent } from './folds.js'
import type { Usage } from './usage.js'

/** One WorkItem as the console shows it. */
export interface WorkItemView {
  readonly workItemId: string
  /** The Work Contract goal (untrusted text). */
  goal: string
  state: string
  revision: number
  contract: WorkContract | undefined
  conversationId: string | undefined
  dependencyIds: string[]
  parentWorkItemId: string | undefined
  /** The current or last owner. */
  ownerId: string | undefined
  ownershipEpoch: number | undefined
  /** Artifact hashes of the latest submission. */
  submittedArtifactHashes: string[]
  /** Evidence IDs: submitted with the WorkItem, and accepted in review. */
  submittedEvidenceIds: string[]
  reviewEvidenceIds: string[]
  /** §12: cumulative usage and what is left, from the last usage record. */
  cumulativeUsage: Usage
  remainingBudget: Usage | undefined
  /** Why it failed, was cancelled or is blocked (untrusted text). */
  reason: string | undefined
  /** A linked child Mission's Group (§14). */
  childGroupId: string | undefined
  updatedAt: string
}

/** Lease kinds on the timeline (§7.2, §11.3, §11.4). */
export type LeaseKind = 'coordinator' | 'ownership' | 'execution' | 'blocked'

/** How a lease interval ended, or `active`. */
export type LeaseEnd = 'active' | 'released' | 'revoked' | 'expired' | 'superseded'

/** One lease interval on the timeline. */
export interface LeaseSpan {
  readonly key: string
  readonly kind: LeaseKind
  readonly leaseId: string | undefined
  readonly holderId: string
  readonly workItemId: string | undefined
  /** Ownership Epoch for WorkItem leases, Coordinator Epoch for the Coordinator lease. */
  readonly epoch: number | undefined
  readonly sessionEpoch: number | undefined
  readonly startedAt: string
  expiresAt: string
  endedAt: string | undefined
  end: LeaseEnd
  renewals: number
}

/** One usage record (§12) in the ledger. */
export interface LedgerEntry {
  readonly sequence: number
  readonly at: string
  readonly workItemId: string
  readonly delta: Usage
  /** The WorkItem's cumulative usage after it. */
  readonly cumulative: Usage
  readonly remaining: Usage
  /** The Mission's total usage after it. */
  readonly missionTotal: Usage
  readonly offline: boolean
}

/** A Message with the amendments that point at it (§9, §9.1). */
export interface MessageView {
  readonly sequence: number
  readonly message: Message
  /** The latest correction, retraction or redaction of this Message, if any. */
  amendedBy: { readonly kind: Message['kind']; readonly messageId: string; readonly reason: string | undefined } | undefined
}

/** An Artifact manifest as published (§13.1). */
export interface ArtifactView {
  readonly manifest: Artifact
  readonly sequence: number
}

/** Where a piece of Evidence came from. */
export type EvidenceSource = 'submitted' | 'review' | 'failure' | 'mission'

/** One Evidence record (§13.2). */
export interface EvidenceView {
  readonly evidence: Evidence
  readonly source: EvidenceSource
  readonly sequence: number
}

/** The Mission's pending (or last) submission for approval (§7.3). */
export interface SubmissionView {
  readonly eventId: string
  readonly sequence: number
  readonly missionRevision: number
  readonly artifactHashes: readonly string[]
  readonly submittedAt: string
}

/** A decision the MissionOwner signed (§7.3). */
export interface DecisionView {
  readonly sequence: number
  readonly approval: Approval
}

/** One row of the Event log: small, so 10,000 of them stay cheap. */
export interface EventRow {
  readonly sequence: number
  readonly kind: string
  readonly occurredAt: string
  readonly actor: string
  readonly workItemId: string | undefined
  /** A one-line summary built from the payload (untrusted text inside). */
  readonly summary: string
}

/** Everything the Mission view shows of one Group. */
export interface GroupView {
  readonly groupId: string
  /** Bumped on every applied Event. */
  version: number
  /** The highest contiguous sequence applied (§16). */
  head: number
  /** The first sequence this person may see (§8 visibility start), when replay started later. */
  startAfter: number
  missionId: string | undefined
  title: string | undefined
  mission: Mission | undefined
  missionState: string | undefined
  /** The Mission aggregate's revision as the last Mission Event carried it. */
  missionRevision: number | undefined
  mainConversationId: string | undefined
  /** Conversation ID → its title (the Group's, or a WorkItem's goal). */
  conversations: Map<string, string>
  workItems: Map<string, WorkItemView>
  leases: LeaseSpan[]
  ledger: LedgerEntry[]
  /** Total usage per dimension over the whole Mission. */
  usage: Usage
  messages: MessageView[]
  artifacts: Map<string, ArtifactView>
  evidence: Map<string, EvidenceView>
  submission: SubmissionView | undefined
  decisions: DecisionView[]
  /** Why the Mission was cancelled or terminated. */
  endReason: string | undefined
  followUps: string[]
  events: EventRow[]
  /** The latest `occurredAt` seen. */
  lastEventAt: string | undefined
  /** Out-of-order Events waiting for the gap before them to fill (§16). */
  readonly pending: Map<number, Event>
}

/** A new, empty view of `groupId`. */
export function createGroupView(groupId: string): GroupView {
  return {
    groupId,
    version: 0,
    head: 0,
    startAfter: 0,
    missionId: undefined,
    title: undefined,
    mission: undefined,
    missionState: undefined,
    missionRevision: undefined,
    mainConversationId: undefined,
    conversations: new Map(),
    workItems: new Map(),
    leases: [],
    ledger: [],
    usage: {},
    messages: [],
    artifacts: new Map(),
    evidence: new Map(),
    submission: undefined,
    decisions: [],
    endReason: undefined,
    followUps: [],
    events: [],
    lastEventAt: undefined,
    pending: new Map(),
  }
}

/** Folds `events` (any order, duplicates allowed) into a new view of `groupId`. */
export function foldEvents(groupId: string, events: Iterable<Event>): GroupView {
  const view = createGroupView(groupId)
  for (const event of events) receiveEvent(view, event)
  return view
}

/**
 * Replay of this Group starts after `sequence` (a late joiner's visibility start, §8): the first
 * Event expected is `sequence + 1`. Only moves an empty view.
 */
export function startAt(view: GroupView, sequence: number): void {
  if (view.head === 0 && view.events.length === 0 && sequence > 0) {
    view.head = sequence
    view.startAfter = sequence
  }
}

/**
 * Takes one Event as delivery hands it over: §16 delivery is at-least-once, so a sequence already
 * applied is dropped, and one past a gap waits until the gap fills. Returns how many Events were
 * applied (0, 1 or more when it closed a gap).
 */
export function receiveEvent(view: GroupView, event: Event): number {
  if (event.groupId !== view.groupId || typeof event.sequence !== 'number') return 0
  if (event.sequence <= view.head) return 0
  if (event.sequence > view.head + 1) {
    view.pending.set(event.sequence, event)
    return 0
  }
  applyEvent(view, event)
  let applied = 1
  for (let next = view.pending.get(view.head + 1); next !== undefined; next = view.pending.get(view.head + 1)) {
    view.pending.delete(next.sequence as number)
    applyEvent(view, next)
    applied++
  }
  return applied
}
