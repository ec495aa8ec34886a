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
 * Everything in here that came from an Event is untrusted text (titles, Messages, reasons,
 * Artifact names): the UI renders it as text only.
 * @module
 */
import type { AcceptanceCriterion, Approval, Artifact, Event, Evidence, Message, Mission, ResourceBudget, WorkContract } from '@weft/spec'

/** The six budget dimensions of §12, as usage deltas name them. */
export const USAGE_DIMENSIONS = ['financialMicrounits', 'modelTokens', 'toolCalls', 'computeSeconds', 'wallClockSeconds', 'externalActions'] as const

/** A usage dimension. */
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number]

/** Usage per dimension (absent: zero, or for a remaining budget: no limit). */
export type Usage = Partial<Record<UsageDimension, number>>

/** The Mission budget limit (§12) that caps a usage dimension, and how to convert usage into it. */
export const LIMIT_OF: Readonly<Record<UsageDimension, { readonly limit: keyof ResourceBudget; readonly scale: number }>> = {
  financialMicrounits: { limit: 'financialLimit', scale: 1_000_000 },
  modelTokens: { limit: 'modelTokenLimit', scale: 1 },
  toolCalls: { limit: 'toolCallLimit', scale: 1 },
  computeSeconds: { limit: 'computeSecondsLimit', scale: 1 },
  wallClockSeconds: { limit: 'wallClockSecondsLimit', scale: 1 },
  externalActions: { limit: 'externalSideEffectLimit', scale: 1 },
}

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

type Payload = Record<string, unknown>

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

function num(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined
}

/** Applies the next Event in sequence; callers go through {@link receiveEvent}. */
function applyEvent(view: GroupView, event: Event): void {
  const p = event.payload as Payload
  const at = event.occurredAt
  view.head = event.sequence as number
  view.version++
  view.lastEventAt = at
  const fold = FOLDS[event.kind]
  if (fold !== undefined) fold(view, p, event)
  if (event.workItemId !== undefined && event.aggregateRevision !== undefined) {
    const w = view.workItems.get(event.workItemId)
    if (w !== undefined) {
      w.revision = event.aggregateRevision
      w.updatedAt = at
    }
  } else if (event.kind.startsWith('mission.') && event.aggregateRevision !== undefined) {
    view.missionRevision = event.aggregateRevision
  }
  view.events.push({ sequence: event.sequence as number, kind: event.kind, occurredAt: at, actor: event.actor.id, workItemId: event.workItemId, summary: summarize(view, event) })
}

function workItem(view: GroupView, id: unknown): WorkItemView | undefined {
  return typeof id === 'string' ? view.workItems.get(id) : undefined
}

function setState(view: GroupView, id: unknown, state: string): WorkItemView | undefined {
  const w = workItem(view, id)
  if (w !== undefined) w.state = state
  return w
}

/** Leases of a WorkItem still open. */
function openLeases(view: GroupView, workItemId: string | undefined, kinds: readonly LeaseKind[]): LeaseSpan[] {
  return view.leases.filter((l) => l.end === 'active' && l.workItemId === workItemId && kinds.includes(l.kind))
}

function closeLeases(view: GroupView, workItemId: string | undefined, kinds: readonly LeaseKind[], at: string, end: LeaseEnd, leaseId?: string): void {
  for (const l of openLeases(view, workItemId, kinds)) {
    if (leaseId !== undefined && l.leaseId !== undefined && l.leaseId !== leaseId) continue
    // §11.3: a lease whose expiry passed before it was closed had expired, whatever closed it later.
    const expired = Date.parse(l.expiresAt) < Date.parse(at)
    l.endedAt = expired ? l.expiresAt : at
    l.end = expired ? 'expired' : end
  }
}

function openLease(view: GroupView, span: Omit<LeaseSpan, 'key' | 'endedAt' | 'end' | 'renewals'>): void {
  view.leases.push({ ...span, key: `${span.kind}:${span.leaseId ?? view.leases.length}:${view.leases.length}`, endedAt: undefined, end: 'active', renewals: 0 })
}

function addEvidence(view: GroupView, list: unknown, source: EvidenceSource, sequence: number): string[] {
  const ids: string[] = []
  if (!Array.isArray(list)) return ids
  for (const e of list as Evidence[]) {
    if (typeof e?.evidenceId !== 'string') continue
    view.evidence.set(e.evidenceId, { evidence: e, source, sequence })
    ids.push(e.evidenceId)
  }
  return ids
}

function genesis(view: GroupView, p: Payload, event: Event): void {
  const mission = p['mission'] as Mission
  const conversation = p['conversation'] as { conversationId: string; title?: string } | undefined
  view.mission = mission
  view.missionId = mission.missionId
  view.missionState = mission.state
  view.missionRevision = mission.revision
  view.mainConversationId = conversation?.conversationId
  view.title = conversation?.title
  if (conversation !== undefined) view.conversations.set(conversation.conversationId, conversation.title ?? 'Group conversation')
  const lease = p['coordinatorLease'] as { leaseId: string; holderAgentId: string; coordinatorEpoch?: number; sessionEpoch: number; startsAt: string; expiresAt: string } | undefined
  if (lease !== undefined) {
    openLease(view, { kind: 'coordinator', leaseId: lease.leaseId, holderId: lease.holderAgentId, workItemId: undefined, epoch: lease.coordinatorEpoch, sessionEpoch: lease.sessionEpoch, startedAt: lease.startsAt ?? event.occurredAt, expiresAt: lease.expiresAt })
  }
}

function missionEnded(view: GroupView, state: string, reason: unknown, at: string): void {
  view.missionState = state
  view.endReason = str(reason)
  if (view.mission !== undefined) view.mission = { ...view.mission, state: state as Mission['state'] }
  // §12: cancellation or termination revokes every lease; §10.2: unfinished WorkItems follow.
  for (const l of view.leases) if (l.end === 'active') closeLeases(view, l.workItemId, [l.kind], at, 'revoked')
}

type Fold = (view: GroupView, p: Payload, event: Event) => void

const FOLDS: Readonly<Record<string, Fold>> = {
  'mission.created': genesis,
  'mission.follow_up.created': genesis,
  'mission.coordinator.assigned': (view, p, event) => {
    closeLeases(view, undefined, ['coordinator'], event.occurredAt, 'superseded')
    const c = p['coordinator'] as Mission['coordinator']
    const lease = p['coordinatorLease'] as { leaseId: string; holderAgentId: string; sessionEpoch: number; startsAt: string; expiresAt: string }
    if (view.mission !== undefined) view.mission = { ...view.mission, coordinator: c }
    openLease(view, { kind: 'coordinator', leaseId: lease.leaseId, holderId: lease.holderAgentId, workItemId: undefined, epoch: c.coordinatorEpoch, sessionEpoch: lease.sessionEpoch, startedAt: lease.startsAt ?? event.occurredAt, expiresAt: lease.expiresAt })
  },
  'mission.coordinator.renewed': (view, p) => {
    for (const l of openLeases(view, undefined, ['coordinator'])) {
      if (l.leaseId !== p['leaseId']) continue
      l.expiresAt = str(p['leaseExpiresAt']) ?? l.expiresAt
      l.renewals = num(p['renewalCount']) ?? l.renewals + 1
    }
  },
  'mission.submitted_for_approval': (view, p, event) => {
    view.missionState = 'awaiting_approval'
    view.submission = { eventId: event.eventId, sequence: event.sequence as number, missionRevision: num(p['missionRevision']) ?? 0, artifactHashes: (p['artifactHashes'] as string[]) ?? [], submittedAt: event.occurredAt }
  },
  'mission.approved': (view, p, event) => {
    view.missionState = 'approved'
    view.decisions.push({ sequence: event.sequence as number, approval: p['approval'] as Approval })
    for (const l of view.leases) if (l.end === 'active' && l.kind === 'coordinator') closeLeases(view, undefined, ['coordinator'], event.occurredAt, 'released')
  },
  'mission.changes_requested': (view, p, event) => {
    // §7.3: changes reopen the same Mission; the earlier submission stays in history.
    view.missionState = 'active'
    view.decisions.push({ sequence: event.sequence as number, approval: p['approval'] as Approval })
  },
  'mission.cancelled': (view, p, event) => missionEnded(view, 'cancelled', p['reason'], event.occurredAt),
  'mission.terminated': (view, p, event) => {
    addEvidence(view, p['evidence'], 'mission', event.sequence as number)
    missionEnded(view, 'failed', p['reason'], event.occurredAt)
  },
  'mission.child.created': (view, p, event) => {
    const w = setState(view, p['parentWorkItemId'], 'blocked')
    if (w !== undefined) w.childGroupId = str(p['childGroupId'])
    closeLeases(view, str(p['parentWorkItemId']), ['ownership', 'execution', 'blocked'], event.occurredAt, 'revoked')
  },
  'message.posted': addMessage,
  'message.corrected': addMessage,
  'message.retracted': addMessage,
  'message.redacted': addMessage,
  'work.authorized': (view, p, event) => {
    const doc = p['workItem'] as { workItemId: string; state: string; revision: number; contract: WorkContract; conversationId: string }
    const w: WorkItemView = {
      workItemId: doc.workItemId,
      goal: doc.contract.goal,
      state: doc.state,
      revision: doc.revision,
      contract: doc.contract,
      conversationId: doc.conversationId,
      dependencyIds: [...((p['dependencyIds'] as string[] | undefined) ?? doc.contract.dependencyWorkItemIds ?? [])],
      parentWorkItemId: str(p['parentWorkItemId']),
      ownerId: undefined,
      ownershipEpoch: undefined,
      submittedArtifactHashes: [],
      submittedEvidenceIds: [],
      reviewEvidenceIds: [],
      cumulativeUsage: {},
      remainingBudget: undefined,
      reason: undefined,
      childGroupId: undefined,
      updatedAt: event.occurredAt,
    }
    view.workItems.set(w.workItemId, w)
    view.conversations.set(doc.conversationId, doc.contract.goal)
  },
  'work.offer.created': (view, p, event) => {
    setState(view, p['workItemId'], 'offered')
    if (p['fencedOwnershipEpoch'] !== undefined) closeLeases(view, str(p['workItemId']), ['ownership', 'execution', 'blocked'], event.occurredAt, 'revoked')
  },
  'work.offer.accepted': (view, p, event) => {
    const w = setState(view, p['workItemId'], 'queued')
    if (w === undefined) return
    w.ownerId = str(p['assigneeId'])
    w.ownershipEpoch = num(p['ownershipEpoch'])
    w.reason = undefined
    openLease(view, { kind: 'ownership', leaseId: str(p['ownershipLeaseId']), holderId: w.ownerId ?? '?', workItemId: w.workItemId, epoch: w.ownershipEpoch, sessionEpoch: num(p['sessionEpoch']), startedAt: event.occurredAt, expiresAt: str(p['ownershipLeaseExpiresAt']) ?? event.occurredAt })
  },
  'work.contract.revised': (view, p) => {
    const w = workItem(view, p['workItemId'])
    if (w === undefined) return
    w.contract = p['contract'] as WorkContract
    w.goal = w.contract.goal
    w.dependencyIds = [...((p['dependencyIds'] as string[] | undefined) ?? w.dependencyIds)]
  },
  'work.started': (view, p, event) => {
    const w = setState(view, p['workItemId'], 'active')
    if (w === undefined) return
    const lease = p['executionLease'] as { leaseId: string; holderAgentId: string; sessionEpoch: number; ownershipEpoch?: number; startsAt: string }
    closeLeases(view, w.workItemId, ['blocked'], event.occurredAt, 'released')
    openLease(view, { kind: 'execution', leaseId: lease.leaseId, holderId: lease.holderAgentId, workItemId: w.workItemId, epoch: lease.ownershipEpoch ?? num(p['ownershipEpoch']), sessionEpoch: lease.sessionEpoch, startedAt: lease.startsAt ?? event.occurredAt, expiresAt: str(p['executionLeaseExpiresAt']) ?? event.occurredAt })
  },
  'work.progressed': (view, p) => {
    const lease = p['executionLease'] as { leaseId: string; renewalCount?: number }
    for (const l of openLeases(view, str(p['workItemId']), ['execution'])) {
      if (l.leaseId !== lease.leaseId) continue
      l.expiresAt = str(p['executionLeaseExpiresAt']) ?? l.expiresAt
      l.renewals = lease.renewalCount ?? l.renewals + 1
    }
  },
  'work.checkpointed': (view, p, event) => {
    setState(view, p['workItemId'], 'queued')
    // §11.3: a checkpoint releases the Execution Lease; ownership is retained until resumeBy.
    closeLeases(view, str(p['workItemId']), ['execution'], event.occurredAt, 'released', str(p['executionLeaseId']))
  },
  'work.blocked': (view, p, event) => {
    const w = setState(view, p['workItemId'], 'blocked')
    if (w === undefined) return
    w.reason = str(p['reason'])
    closeLeases(view, w.workItemId, ['execution'], event.occurredAt, 'released', str(p['executionLeaseId']))
    openLease(view, { kind: 'blocked', leaseId: undefined, holderId: w.ownerId ?? '?', workItemId: w.workItemId, epoch: num(p['ownershipEpoch']), sessionEpoch: undefined, startedAt: event.occurredAt, expiresAt: str(p['blockedLeaseExpiresAt']) ?? event.occurredAt })
  },
  'work.unblocked': (view, p, event) => {
    const next = str(p['nextState']) ?? 'queued'
    const w = setState(view, p['workItemId'], next)
    if (w === undefined) return
    w.reason = undefined
    closeLeases(view, w.workItemId, ['blocked'], event.occurredAt, 'released')
    // §10.2: back to `open` means ownership expired meanwhile.
    if (next === 'open') closeLeases(view, w.workItemId, ['ownership'], event.occurredAt, 'expired')
  },
  'work.submitted': (view, p, event) => {
    const w = setState(view, p['workItemId'], 'submitted')
    if (w === undefined) return
    w.submittedArtifactHashes = [...((p['artifactHashes'] as string[]) ?? [])]
    w.submittedEvidenceIds = addEvidence(view, p['evidence'], 'submitted', event.sequence as number)
    closeLeases(view, w.workItemId, ['execution'], event.occurredAt, 'released', str(p['executionLeaseId']))
  },
  'work.result.accepted': (view, p, event) => {
    const w = setState(view, p['workItemId'], 'verified')
    if (w === undefined) return
    w.reviewEvidenceIds = addEvidence(view, p['evidence'], 'review', event.sequence as number)
    closeLeases(view, w.workItemId, ['ownership', 'execution', 'blocked'], event.occurredAt, 'released')
  },
  'work.failed': (view, p, event) => {
    const w = setState(view, p['workItemId'], 'failed')
    if (w === undefined) return
    w.reason = str(p['reason'])
    addEvidence(view, p['evidence'], 'failure', event.sequence as number)
    closeLeases(view, w.workItemId, ['ownership', 'execution', 'blocked'], event.occurredAt, 'revoked')
  },
  'work.cancelled': (view, p, event) => {
    const w = setState(view, p['workItemId'], 'cancelled')
    if (w === undefined) return
    w.reason = str(p['reason'])
    closeLeases(view, w.workItemId, ['ownership', 'execution', 'blocked'], event.occurredAt, 'revoked')
  },
  'artifact.published': (view, p, event) => {
    const manifest = p['artifact'] as Artifact
    if (typeof manifest?.contentHash === 'string') view.artifacts.set(manifest.contentHash, { manifest, sequence: event.sequence as number })
  },
  'ext.missionweaveprotocol.core.resource_usage_recorded': (view, p, event) => {
    const delta = (p['usageDelta'] ?? {}) as Usage
    const cumulative = (p['cumulativeUsage'] ?? {}) as Usage
    const remaining = (p['remainingBudget'] ?? {}) as Usage
    for (const d of USAGE_DIMENSIONS) {
      const amount = delta[d]
      if (amount !== undefined) view.usage[d] = (view.usage[d] ?? 0) + amount
    }
    const w = workItem(view, p['workItemId'])
    if (w !== undefined) {
      w.cumulativeUsage = { ...cumulative }
      w.remainingBudget = { ...remaining }
    }
    view.ledger.push({ sequence: event.sequence as number, at: event.occurredAt, workItemId: str(p['workItemId']) ?? '?', delta, cumulative, remaining, missionTotal: { ...view.usage }, offline: p['offlineReconciliation'] !== undefined })
  },
  'ext.missionweaveprotocol.core.work_execution_lease_revoked': (view, p, event) => {
    setState(view, p['workItemId'], 'queued')
    closeLeases(view, str(p['workItemId']), ['execution'], event.occurredAt, 'revoked', str(p['executionLeaseId']))
  },
}

function addMessage(view: GroupView, p: Payload, event: Event): void {
  const message = p as unknown as Message
  view.messages.push({ sequence: event.sequence as number, message, amendedBy: undefined })
  if (message.kind !== 'message' && message.targetMessageId !== undefined) {
    // §9.1: the original stays; the UI shows the latest effective form next to it.
    const target = view.messages.find((m) => m.message.messageId === message.targetMessageId)
    if (target !== undefined) target.amendedBy = { kind: message.kind, messageId: message.messageId, reason: message.reason }
  }
}

/** The first text part of a Message, or a description of its first part. */
export function messageText(message: Pick<Message, 'content'>): string {
  const parts: string[] = []
  for (const part of message.content) {
    if (part.type === 'text') parts.push(part.text)
    else if (part.type === 'artifact_ref') parts.push(`[Artifact ${part.artifactHash}]`)
    else parts.push(`[data: ${part.schema}]`)
  }
  return parts.join('\n')
}

function short(text: string | undefined, max = 120): string {
  if (text === undefined) return ''
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/** A one-line summary of an Event for the log. */
function summarize(view: GroupView, event: Event): string {
  const p = event.payload as Payload
  const w = event.workItemId ?? str(p['workItemId'])
  const goal = w === undefined ? '' : short(view.workItems.get(w)?.goal, 60)
  switch (event.kind) {
    case 'mission.created':
    case 'mission.follow_up.created':
      return `Mission created: ${short(view.title)}`
    case 'mission.submitted_for_approval':
      return `Submitted revision ${String(p['missionRevision'])} with ${(p['artifactHashes'] as unknown[]).length} Artifact(s)`
    case 'mission.approved':
      return 'Approved by the MissionOwner'
    case 'mission.changes_requested':
      return `Changes requested: ${short((p['approval'] as Approval | undefined)?.comments, 80)}`
    case 'mission.cancelled':
    case 'mission.terminated':
      return short(str(p['reason']))
    case 'message.posted':
    case 'message.corrected':
    case 'message.retracted':
    case 'message.redacted':
      return short(messageText(p as unknown as Message), 100)
    case 'work.authorized':
      return `WorkItem authorized: ${goal}`
    case 'work.offer.accepted':
      return `${goal} — owner ${String(p['assigneeId'])}, epoch ${String(p['ownershipEpoch'])}`
    case 'work.failed':
    case 'work.cancelled':
    case 'work.blocked':
      return `${goal} — ${short(str(p['reason']), 60)}`
    case 'artifact.published':
      return `Artifact ${(p['artifact'] as Artifact | undefined)?.contentHash ?? ''}`
    case 'ext.missionweaveprotocol.core.resource_usage_recorded':
      return `${goal} — usage ${formatUsage((p['usageDelta'] ?? {}) as Usage)}`
    default:
      return goal
  }
}

/** `tokens 1200, tool calls 3, $0.05`: a usage delta in words. */
export function formatUsage(usage: Usage): string {
  const parts: string[] = []
  for (const d of USAGE_DIMENSIONS) {
    const v = usage[d]
    if (v === undefined || v === 0) continue
    parts.push(`${DIMENSION_LABELS[d]} ${formatDimension(d, v)}`)
  }
  return parts.length === 0 ? 'none' : parts.join(', ')
}

/** Display names of the usage dimensions. */
export const DIMENSION_LABELS: Readonly<Record<UsageDimension, string>> = {
  financialMicrounits: 'cost',
  modelTokens: 'tokens',
  toolCalls: 'tool calls',
  computeSeconds: 'compute s',
  wallClockSeconds: 'wall-clock s',
  externalActions: 'external actions',
}

/** A usage amount in its display unit (money in currency units from micro-units, §12). */
export function formatDimension(d: UsageDimension, value: number): string {
  if (d === 'financialMicrounits') return (value / 1_000_000).toFixed(2)
  return String(value)
}

/** What the Mission budget allows per dimension (in usage units), or undefined for no limit. */
export function missionLimit(budget: ResourceBudget | undefined, d: UsageDimension): number | undefined {
  const limit = budget?.[LIMIT_OF[d].limit]
  return typeof limit === 'number' ? Math.round(limit * LIMIT_OF[d].scale) : undefined
}

// ---------------------------------------------------------------------------------------------
// What the Approval page shows (§7.3), as the demo's MissionOwner describes a submission
// ---------------------------------------------------------------------------------------------

/** One piece of Evidence that cites a submitted Artifact, by criterion. */
export interface CitingEvidence {
  readonly evidenceId: string
  readonly type: Evidence['type']
  readonly result: Evidence['result']
  readonly source: EvidenceSource
  readonly method: string
  readonly generatedBy: string
}

/** A submitted Artifact, described for the decision. */
export interface SubmittedArtifact {
  readonly hash: string
  readonly manifest: Artifact | undefined
  readonly workItemId: string | undefined
  /** The Work Contract deliverable it delivers (same media type and schema). */
  readonly deliverable: WorkContract['requiredDeliverables'][number] | undefined
  /** The producing WorkItem's criteria, each with the Evidence citing this Artifact. */
  readonly criteria: readonly { readonly criterion: AcceptanceCriterion | undefined; readonly criterionId: string; readonly evidence: readonly CitingEvidence[] }[]
}

/** Describes each hash of the pending submission: manifest, deliverable and Evidence per criterion. */
export function describeSubmission(view: GroupView, submission: SubmissionView): SubmittedArtifact[] {
  return submission.artifactHashes.map((hash) => {
    const manifest = view.artifacts.get(hash)?.manifest
    const w = manifest === undefined ? undefined : view.workItems.get(manifest.workItemId)
    const contract = w?.contract
    const citing = [...view.evidence.values()].filter((e) => e.evidence.artifactHashes.includes(hash) || (w !== undefined && e.evidence.workItemId === w.workItemId && e.source !== 'failure'))
    const ids = [...new Set([...(contract?.acceptanceCriteria.map((c) => c.criterionId) ?? []), ...citing.flatMap((e) => e.evidence.criterionIds)])]
    return {
      hash,
      manifest,
      workItemId: manifest?.workItemId,
      deliverable: manifest === undefined ? undefined : contract?.requiredDeliverables.find((d) => d.mediaType === manifest.mediaType && d.schema === manifest.schemaUri),
      criteria: ids.map((criterionId) => ({
        criterionId,
        criterion: contract?.acceptanceCriteria.find((c) => c.criterionId === criterionId),
        evidence: citing
          .filter((e) => e.evidence.criterionIds.includes(criterionId))
          .map((e) => ({ evidenceId: e.evidence.evidenceId, type: e.evidence.type, result: e.evidence.result, source: e.source, method: e.evidence.method, generatedBy: e.evidence.generatedBy.id })),
      })),
    }
  })
}

/** The Mission's definition of done with the Evidence naming each criterion. */
export function definitionOfDoneEvidence(view: GroupView): { readonly criterion: AcceptanceCriterion; readonly evidence: readonly EvidenceView[] }[] {
  return (view.mission?.definitionOfDone ?? []).map((criterion) => ({ criterion, evidence: [...view.evidence.values()].filter((e) => e.evidence.criterionIds.includes(criterion.criterionId)) }))
}

/** Lanes per holder: overlapping leases of one holder go to separate lanes (its concurrent slots). */
export interface LeaseLane {
  readonly holderId: string
  readonly lane: number
  readonly spans: readonly LeaseSpan[]
}

/**
 * Groups WorkItem leases (execution and blocked: what occupies a slot) per holder into lanes by
 * greedy interval partitioning: a Worker with two concurrent Execution Leases gets two lanes, its
 * slots as the log shows them (§11.1: slots are the Worker's; Events show only their leases).
 * Ownership and Coordinator leases get one lane each per holder.
 */
export function leaseLanes(view: GroupView, nowMs: number): LeaseLane[] {
  const byHolder = new Map<string, LeaseSpan[]>()
  for (const l of view.leases) {
    const list = byHolder.get(l.holderId) ?? []
    list.push(l)
    byHolder.set(l.holderId, list)
  }
  const lanes: LeaseLane[] = []
  for (const [holderId, spans] of [...byHolder.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
    for (const kinds of [['coordinator'], ['ownership'], ['execution', 'blocked']] as const) {
      const list = spans.filter((s) => (kinds as readonly string[]).includes(s.kind)).sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt))
      if (list.length === 0) continue
      const ends: number[] = []
      const assigned: LeaseSpan[][] = []
      for (const s of list) {
        const start = Date.parse(s.startedAt)
        let lane = ends.findIndex((end) => end <= start)
        if (lane === -1) {
          lane = ends.length
          ends.push(0)
          assigned.push([])
        }
        ends[lane] = spanEndMs(s, nowMs)
        assigned[lane]!.push(s)
      }
      assigned.forEach((spansOfLane, i) => lanes.push({ holderId, lane: i, spans: spansOfLane }))
    }
  }
  return lanes
}

/** Where a lease's bar ends: when it closed, or for an open one its expiry (or now, if later). */
export function spanEndMs(s: LeaseSpan, nowMs: number): number {
  if (s.endedAt !== undefined) return Date.parse(s.endedAt)
  return Math.max(Date.parse(s.expiresAt), Math.min(nowMs, Date.parse(s.expiresAt)))
}
