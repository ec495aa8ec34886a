/**
 * The failure suite's records of the two faults the demo brings itself: the urgent arrival that
 * preempts running work (§11.3) and the MissionOwner's change request (§7.3). Nothing is
 * injected; after the run, the log and the slot timeline tell whether each held.
 * @module
 */
import { type Event, payloadOf } from '@weft/spec'
import { clockText, titleOf, workItems, worldOf, type Suite } from './fault-context.js'
import type { FaultRecord } from './faults.js'
import type { DemoResult } from './run.js'

const PREEMPTION_EXPECTED =
  'The critical arrival makes the Worker preempt the lowest-urgency running WorkItem of its Group at its next safe checkpoint; the critical work starts and the preempted work resumes later from its checkpoint (§11.3).'
const CHANGE_EXPECTED = 'The MissionOwner’s change request is answered by corrective WorkItems and a new submission of a later revision, which is approved (§7.3).'

/** The record of the demo's high-priority arrival: a Worker preempted running work for it at a safe checkpoint (§11.3). */
export function preemptionRecord(s: Suite, result: DemoResult): FaultRecord {
  const w = worldOf(s)
  const critical = (id: string): boolean => [...workItems(s)].some(({ record }) => record.doc.workItemId === id && record.doc.contract.requestedUrgency === 'critical')
  // The Worker's Scheduler announces each preemption it requests for queued urgent work (§11.3).
  for (const request of s.lines.filter((l) => l.kind === 'preempt')) {
    const agent = request.text.split(' ')[0]
    const r = result.timeline.find(
      (x) => x.ended === 'preempted' && x.endMs !== undefined && x.endMs >= request.atMs && x.agentId === (agent === undefined ? undefined : w.principals.agents.get(agent)?.actor.id),
    )
    if (r?.endMs === undefined) continue
    const checkpoint = w.authority.events(r.groupId).find((e) => payloadOf(e, 'work.checkpointed')?.workItemId === r.workItemId && Date.parse(e.occurredAt) === r.endMs)
    const safe = payloadOf(checkpoint, 'work.checkpointed')?.checkpoint.phase === 'preempted'
    const urgent = result.timeline.find((x) => x.groupId === r.groupId && x.startMs >= request.atMs && critical(x.workItemId))
    const freed = urgent !== undefined && urgent.agentId === r.agentId && urgent.startMs === r.endMs
    const resumed = result.timeline.find((x) => x.workItemId === r.workItemId && x.startMs > r.endMs!)
    const at = (ms: number): string => clockText(ms - result.startMs)
    return {
      name: 'high-priority-preemption',
      atMs: request.atMs,
      expected: PREEMPTION_EXPECTED,
      held: safe && urgent !== undefined && resumed !== undefined,
      observed:
        `${titleOf(s, r.workItemId)} was asked to stop at ${at(request.atMs)} and checkpointed ${safe ? 'at a safe point' : 'without a preemption checkpoint'} at ${at(r.endMs)}; ` +
        `${urgent === undefined ? 'the critical work never started' : `${titleOf(s, urgent.workItemId)} started ${freed ? 'on the freed slot' : `at ${at(urgent.startMs)}`}`}; ` +
        `${resumed === undefined ? 'the preempted work never resumed' : `the preempted work resumed at ${at(resumed.startMs)}`}`,
    }
  }
  return { name: 'high-priority-preemption', atMs: result.endMs, expected: PREEMPTION_EXPECTED, held: false, observed: 'no Worker preempted running work for a critical arrival' }
}

/** The record of the MissionOwner's scripted change request and the corrective round that answered it (§7.3). */
export function changeRequestRecord(s: Suite, result: DemoResult): FaultRecord {
  const w = worldOf(s)
  for (const plan of [w.plans.search.plan, w.plans.checkout.plan]) {
    const log = w.authority.events(plan.groupId)
    const at = log.findIndex((e) => e.kind === 'mission.changes_requested')
    if (at < 0) continue
    const request = log[at]!
    const after = log.slice(at + 1)
    const before = log.slice(0, at).findLast((e) => e.kind === 'mission.submitted_for_approval')
    const revisionOf = (e: Event | undefined): number => payloadOf(e, 'mission.submitted_for_approval')?.missionRevision ?? 0
    const corrective = after.filter((e) => e.kind === 'work.authorized').length
    const resubmitted = after.find((e) => e.kind === 'mission.submitted_for_approval' && revisionOf(e) > revisionOf(before))
    const approved = after.some((e) => e.kind === 'mission.approved')
    return {
      name: 'human-change-request',
      atMs: Date.parse(request.occurredAt),
      expected: CHANGE_EXPECTED,
      held: corrective > 0 && resubmitted !== undefined && approved,
      observed: `${plan.label}: changes requested on revision ${revisionOf(before)}; ${corrective} corrective WorkItem(s) authorized; revision ${revisionOf(resubmitted)} submitted and ${approved ? 'approved' : 'not approved'}`,
    }
  }
  return { name: 'human-change-request', atMs: result.endMs, expected: CHANGE_EXPECTED, held: false, observed: 'no change request in the log' }
}
