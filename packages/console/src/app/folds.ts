/**
 * The projection of one Group's Events onto its view: what each Event kind (§7, §9, §10, §11,
 * §12, §13) changes in the Mission state, the WorkItems, the lease timeline, the budget ledger,
 * Messages, Artifacts and Evidence. Each fold advances the mutable draft in place, like the
 * Authority's own reducers; an Event kind without a fold changes only the log.
 * @module
 */
import type { Approval, Artifact, Event, Evidence, Message, Mission, WorkContract } from '@weft/spec'
import type { EvidenceSource, GroupView, LeaseEnd, LeaseKind, LeaseSpan, WorkItemView } from './model.js'
import { num, str, type Payload } from './payload.js'
import { summarize } from './summary.js'
import { USAGE_DIMENSIONS, type Usage } from './usage.js'

/** Applies the next Event in sequence; callers go through `receiveEvent` of `model.ts`, which keeps them in order (§16). */
export function applyEvent(view: GroupView, event: Event): void {
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
    openLease(view, {
      kind: 'coordinator',
      leaseId: lease.leaseId,
      holderId: lease.holderAgentId,
      workItemId: undefined,
      epoch: lease.coordinatorEpoch,
      sessionEpoch: lease.sessionEpoch,
      startedAt: lease.startsAt ?? event.occurredAt,
      expiresAt: lease.expiresAt,
    })
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
    openLease(view, {
      kind: 'coordinator',
      leaseId: lease.leaseId,
      holderId: lease.holderAgentId,
      workItemId: undefined,
      epoch: c.coordinatorEpoch,
      sessionEpoch: lease.sessionEpoch,
      startedAt: lease.startsAt ?? event.occurredAt,
      expiresAt: lease.expiresAt,
    })
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
    view.submission = {
      eventId: event.eventId,
      sequence: event.sequence as number,
      missionRevision: num(p['missionRevision']) ?? 0,
      artifactHashes: (p['artifactHashes'] as string[]) ?? [],
      submittedAt: event.occurredAt,
    }
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
    openLease(view, {
      kind: 'ownership',
      leaseId: str(p['ownershipLeaseId']),
      holderId: w.ownerId ?? '?',
      workItemId: w.workItemId,
      epoch: w.ownershipEpoch,
      sessionEpoch: num(p['sessionEpoch']),
      startedAt: event.occurredAt,
      expiresAt: str(p['ownershipLeaseExpiresAt']) ?? event.occurredAt,
    })
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
    openLease(view, {
      kind: 'execution',
      leaseId: lease.leaseId,
      holderId: lease.holderAgentId,
      workItemId: w.workItemId,
      epoch: lease.ownershipEpoch ?? num(p['ownershipEpoch']),
      sessionEpoch: lease.sessionEpoch,
      startedAt: lease.startsAt ?? event.occurredAt,
      expiresAt: str(p['executionLeaseExpiresAt']) ?? event.occurredAt,
    })
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
    openLease(view, {
      kind: 'blocked',
      leaseId: undefined,
      holderId: w.ownerId ?? '?',
      workItemId: w.workItemId,
      epoch: num(p['ownershipEpoch']),
      sessionEpoch: undefined,
      startedAt: event.occurredAt,
      expiresAt: str(p['blockedLeaseExpiresAt']) ?? event.occurredAt,
    })
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
    view.ledger.push({
      sequence: event.sequence as number,
      at: event.occurredAt,
      workItemId: str(p['workItemId']) ?? '?',
      delta,
      cumulative,
      remaining,
      missionTotal: { ...view.usage },
      offline: p['offlineReconciliation'] !== undefined,
    })
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
