/**
 * What the demo tells as it runs and at its end: one progress line per notable Event, a line
 * when a Worker's per-Group queues change (§11.1), and the counts and Mission outcomes of the
 * result. All of it read from the Group logs and the Workers' schedulers.
 * @module
 */
import type { Authority } from '@weft/authority'
import { catalogued, type Event, isEventOf } from '@weft/spec'
import type { Worker } from '@weft/worker'
import type { MissionPlan } from './mission-plan.js'
import type { DemoLine, MissionOutcome } from './run.js'
import { preemptionKey } from './timeline.js'

/** A Worker's queue line is printed at most this often (virtual time). */
const QUEUE_LINE_MS = 15 * 60_000

/** One progress line for `event`, or `undefined` when it is not notable. */
export function describe(event: Event, titles: ReadonlyMap<string, string>, names: ReadonlyMap<string, string>, preempted: ReadonlySet<string>): Pick<DemoLine, 'kind' | 'text'> | undefined {
  const title = (id: string): string => titles.get(id) ?? id
  const who = (id: string): string => names.get(id) ?? id
  const by = who(event.actor.id)
  const e = catalogued(event)
  switch (e.kind) {
    case 'work.offer.created': {
      const o = e.payload
      const kind = o.fencedOwnershipEpoch === undefined ? 'offer' : 'reassign'
      return { kind, text: `${title(o.workItemId)} offered to ${o.candidateAgentIds.map(who).join(', ')}${kind === 'reassign' ? ` (owner of epoch ${o.fencedOwnershipEpoch} fenced)` : ''}` }
    }
    case 'work.offer.accepted':
      return { kind: 'accept', text: `${who(e.payload.assigneeId)} accepted ${title(e.payload.workItemId)} (ownership epoch ${e.payload.ownershipEpoch})` }
    case 'work.started':
      return { kind: 'start', text: `${by} started ${title(e.payload.workItemId)}` }
    case 'work.checkpointed': {
      const c = e.payload
      const wasPreempted = preempted.has(preemptionKey(c.workItemId, Date.parse(event.occurredAt)))
      return { kind: 'checkpoint', text: `${by} ${wasPreempted ? 'preempted at a safe checkpoint:' : 'checkpointed'} ${title(c.workItemId)} (${c.checkpoint.phase})` }
    }
    case 'work.blocked':
      return { kind: 'block', text: `${by} blocked on ${title(e.payload.workItemId)}: ${e.payload.reason}` }
    case 'work.unblocked':
      return { kind: 'unblock', text: `${by} unblocked ${title(e.payload.workItemId)}` }
    case 'work.submitted':
      return { kind: 'submit', text: `${by} submitted ${title(e.payload.workItemId)} with ${e.payload.evidence.length} Evidence record(s)` }
    case 'work.result.accepted':
      return { kind: 'verified', text: `${by} accepted the result of ${title(e.payload.workItemId)}${e.payload.childMissionId === undefined ? '' : ' (child Mission approved)'}` }
    case 'work.failed':
      return { kind: 'failed', text: `${title(e.payload.workItemId)} failed: ${e.payload.reason.slice(0, 120)}` }
    case 'mission.child.created':
      return { kind: 'promote', text: `${title(e.payload.parentWorkItemId)} promoted to a child Mission coordinated by ${who(e.payload.coordinatorAgentId)}` }
    case 'mission.submitted_for_approval':
      return { kind: 'awaiting', text: `${by} submitted revision ${e.payload.missionRevision} for approval` }
    case 'mission.approved':
      return { kind: 'approved', text: `${by} approved the Mission` }
    case 'mission.changes_requested':
      return { kind: 'changes', text: `${by} requested changes: ${e.payload.approval.comments}` }
    case 'mission.coordinator.assigned':
      return { kind: 'coordinator', text: `${who(e.payload.coordinator.agentId)} became Coordinator` }
    default:
      return undefined
  }
}

/**
 * §11.1: a function that emits each Worker's per-Group queues as a line when they change, at
 * most one line per Worker every {@link QUEUE_LINE_MS} of virtual time.
 */
export function queueLines(
  plans: Iterable<MissionPlan>,
  now: () => number,
  emit: (atMs: number, worker: string, kind: 'queues', text: string) => void,
): (workers: ReadonlyMap<string, Worker>) => void {
  const shown = new Map<string, { readonly text: string; readonly atMs: number }>()
  const labelled = [...plans]
  return (workers) => {
    for (const [name, worker] of workers) {
      const groups = labelled.map((p) => ({ label: p.label, queued: worker.scheduler.queued(p.groupId), active: worker.scheduler.active(p.groupId) })).filter((g) => g.queued + g.active > 0)
      const text = groups.length === 0 ? 'idle' : groups.map((g) => `${g.label} ${g.queued} queued, ${g.active} active`).join(' | ')
      const last = shown.get(name)
      if (last === undefined ? groups.length === 0 : last.text === text || now() - last.atMs < QUEUE_LINE_MS) continue
      shown.set(name, { text, atMs: now() })
      emit(now(), name, 'queues', text)
    }
  }
}

/** A Mission's end state as the Authority holds it. */
export function outcomeOf(authority: Authority, plan: MissionPlan): MissionOutcome {
  const g = authority.group(plan.groupId)
  const changes = g === undefined ? 0 : [...g.approvals.values()].filter((a) => a.decision === 'changes_requested').length
  return {
    label: plan.label,
    missionId: plan.missionId,
    groupId: plan.groupId,
    title: plan.title,
    state: g?.mission.state ?? 'absent',
    revision: g?.mission.revision ?? 0,
    events: g?.head ?? 0,
    changeRequests: changes,
    artifactHashes: g?.submission?.artifactHashes ?? [...(g?.approvals.values() ?? [])].find((a) => a.decision === 'approved')?.artifactHashes ?? [],
  }
}

/** The result's counts: Events by what they did, preemptions, refused Commands and loop rounds. */
export function countsOf(events: readonly Event[], preemptions: number, authority: Authority, rounds: number): Record<string, number> {
  const count = (kind: string): number => events.filter((e) => e.kind === kind).length
  return {
    events: events.length,
    offers: count('work.offer.created'),
    reassignments: events.filter((e) => isEventOf(e, 'work.offer.created') && e.payload.fencedOwnershipEpoch !== undefined).length,
    acceptances: count('work.offer.accepted'),
    starts: count('work.started'),
    checkpoints: count('work.checkpointed'),
    preemptions,
    blocks: count('work.blocked'),
    submissions: count('work.submitted'),
    verified: count('work.result.accepted'),
    failures: count('work.failed'),
    childMissions: count('mission.child.created'),
    changeRequests: count('mission.changes_requested'),
    approvals: count('mission.approved'),
    usageRecords: count('ext.missionweaveprotocol.core.resource_usage_recorded'),
    refusedCommands: authority.audit().length,
    rounds,
  }
}
