/**
 * What a Worker tells a Group about taking and scheduling its work: offers decided by admission
 * control and accepted with a schedule estimate (§10.3, §11.2), or declined with a reason kept
 * locally (core has no decline Command; a declined offer expires), and the revised estimate of
 * queued work when it moves materially (§11.2 re-disclosure).
 * @module
 */
import { ProtocolError } from '@weft/codec'
import { newUrnUuid } from '@weft/client'
import { decideAdmission, estimateSchedule } from './admission.js'
import { isTransportUnavailable } from './offline.js'
import type { TrackedWork } from './seams.js'
import { urgencyLevel } from './scheduler.js'
import type { AdmissionRecord } from './worker.js'
import type { WorkerParts, WorkerState } from './worker-state.js'

/** The longest relative duration a Command carries, s: one year. */
export const MAX_RELATIVE_SECONDS = 31_536_000

/** The offers and disclosure loop of a Worker. */
export interface Offers {
  /** Decides every live offer not decided yet, in WorkItem ID order; stops while the service is unreachable. */
  decide(nowMs: number): Promise<void>
  /**
   * §11.2: a queued WorkItem whose estimate changed materially since the Group last heard it gets
   * one revised estimate in its Conversation.
   */
  disclose(nowMs: number): Promise<void>
  /** Every admission decision so far, oldest first. */
  decisions(): readonly AdmissionRecord[]
}

/** The offers loop over `state.offers`, which the queue projection keeps. */
export function createOffers(parts: WorkerParts, state: WorkerState): Offers {
  const { options, client, projection, scheduler, offline, limits, leases, executors, disclosure, log } = parts
  const { offers, held, running, enqueued } = state
  /** Offers decided, by WorkItem and offer expiry: a renewed offer is decided afresh. */
  const decided = new Set<string>()
  /** Acceptances in flight: counted as held, never decided twice. */
  const accepting = new Set<string>()
  const decisionLog: AdmissionRecord[] = []

  /**
   * How many queued WorkItems would start before `w` if it were queued now: the Scheduler's own
   * estimate for a probe entry with `w`'s ordering facts, taken out again at once. §11.2: a count
   * of its own Group plus a weight share of the others, never their names or positions.
   */
  function aheadOf(w: TrackedWork, nowMs: number): number {
    const contract = w.contract!
    const probe = `${w.workItemId}#admission`
    scheduler.enqueue({ id: probe, groupId: w.groupId, urgency: urgencyLevel(contract.requestedUrgency), deadlineMs: Date.parse(contract.deadline), readyAtMs: nowMs })
    const ahead = scheduler.estimatedPosition(probe) ?? scheduler.size
    scheduler.remove(probe)
    return ahead
  }

  async function decide(nowMs: number): Promise<void> {
    for (const [id, w] of [...offers].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (offline.offline) return
      const key = `${id}@${w.offerExpiresAt}`
      if (decided.has(key) || accepting.has(id) || w.contract === undefined) continue
      const group = projection.group(w.groupId)
      const decision = decideAdmission(
        { workItemId: id, groupId: w.groupId, contract: w.contract, dependencies: w.dependencyIds.map((d) => ({ workItemId: d, state: group?.work.get(d)?.state })) },
        { nowMs, slots: options.slots, active: running.size, held: held.size + accepting.size, ahead: aheadOf(w, nowMs) },
        { ...limits, expectedDurationMs: executors.durationOf(w.contract) },
        { hasExecutor: executors.has, needsOf: executors.needsOf, member: (g) => client.epochs.membership(g) !== undefined },
      )
      const base = { workItemId: id, groupId: w.groupId, atMs: nowMs }
      if (!decision.accept) {
        decided.add(key)
        decisionLog.push({ ...base, decision: 'declined', reason: decision.reason, detail: decision.detail })
        log({ level: 'info', message: `declined offer (${decision.reason}): ${decision.detail}`, workItemId: id })
        continue
      }
      const startMs = Date.parse(decision.scheduleEstimate.estimatedStart)
      // §11.3: the start-by deadline is the ownership lease's end, so it must cover the disclosed start.
      const ownershipLeaseSeconds = Math.min(MAX_RELATIVE_SECONDS, Math.max(leases.ownershipLeaseSeconds, Math.ceil((startMs - nowMs) / 1000) + leases.executionLeaseSeconds))
      accepting.add(id)
      try {
        await client.workAcceptOffer({ workItemId: id, ownershipLeaseSeconds, scheduleEstimate: decision.scheduleEstimate }, { groupId: w.groupId })
        decided.add(key)
        decisionLog.push({ ...base, decision: 'accepted', scheduleEstimate: decision.scheduleEstimate })
      } catch (error) {
        if (isTransportUnavailable(error)) return
        decided.add(key)
        const e = ProtocolError.from(error)
        decisionLog.push({ ...base, decision: 'refused', code: e.code, detail: e.message })
        log({ level: 'info', message: `acceptance refused: ${e.message}`, workItemId: id, code: e.code })
      } finally {
        accepting.delete(id)
      }
    }
  }

  /**
   * The estimate is built like the acceptance's, from the Scheduler's coarse count of work ahead,
   * this Worker's slots and the expected duration; nothing of another Group enters the Message.
   * Active work revises its estimate through `ctx.progress`.
   */
  async function disclose(nowMs: number): Promise<void> {
    if (disclosure === undefined || offline.offline) return
    disclosure.retain(held)
    for (const [id, item] of [...enqueued]) {
      const w = projection.work(id)
      if (w?.contract === undefined || !disclosure.due(id, item.groupId, nowMs)) continue
      const ahead = scheduler.estimatedPosition(id) ?? scheduler.size
      // The WorkItem is one of the held ones: counting it again would overstate the load.
      const estimate = estimateSchedule({ nowMs, slots: options.slots, active: running.size, held: Math.max(0, held.size - 1), ahead }, limits, executors.durationOf(w.contract))
      const plan = disclosure.review(id, item.groupId, estimate, nowMs)
      if (plan === undefined) continue
      try {
        await client.messagePost(
          { messageId: newUrnUuid(parts.random), conversationId: plan.conversationId, content: plan.content },
          { groupId: item.groupId, workItemId: id, conversationId: plan.conversationId },
        )
        disclosure.posted(id, item.groupId, estimate, nowMs)
      } catch (error) {
        if (isTransportUnavailable(error)) return
        const e = ProtocolError.from(error)
        // §20: a refused post waits out its interval; a rate refusal also holds the Group back for its window.
        disclosure.refused(id, item.groupId, nowMs, e.code === 'RATE_LIMITED' ? 60_000 : 0)
        log({ level: 'info', message: `schedule disclosure refused: ${e.message}`, workItemId: id, code: e.code })
      }
    }
  }

  return { decide, disclose, decisions: () => [...decisionLog] }
}
