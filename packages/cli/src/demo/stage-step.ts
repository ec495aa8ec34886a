/**
 * What a Coordinator does next for one stage of its plan, decided from what the log says about
 * the stage's WorkItem (the §10.2 rows): a pure reading of the {@link Tracker}, so the decision
 * and the Command that carries it out ({@link StageStep}, `coordinator-actions.ts`) stay apart.
 * @module
 */
import type { TrackedWork } from '@weft/worker'
import { dependencyIds, type Promotion, type StageSpec } from './mission-plan.js'
import type { Tracker } from './tracker.js'

/** The next step for one stage. */
export type StageStep =
  /** Nothing to do this round. */
  | { readonly step: 'wait' }
  /** Authorize the WorkItem with its dependency edges (§10.4). */
  | { readonly step: 'authorize'; readonly dependencyIds: readonly string[] }
  /** Offer it (§10.3), or offer it again after its owner let the lease lapse (`reassign`, §11.5). */
  | { readonly step: 'offer'; readonly work: TrackedWork; readonly why: 'offer' | 'reassign' }
  /** Review the pending submission (§13.2). */
  | { readonly step: 'review'; readonly work: TrackedWork }
  /** Resolve the blocker (§11.4). */
  | { readonly step: 'unblock'; readonly work: TrackedWork }
  /** Promote it to a child Mission: the child's Coordinator holds it (§14). */
  | { readonly step: 'promote'; readonly promotion: Promotion }
  /** Decide on the child Mission's submission as its MissionOwner (§14). */
  | { readonly step: 'decide_child'; readonly childGroupId: string }

const WAIT: StageStep = { step: 'wait' }

/**
 * Whether the owner of `w` still holds it at `nowMs` as the log tells (the `noLiveOwner` guard of
 * §10.2): queued within its ownership lease, active under an
 * unexpired Execution Lease, blocked within its blocked lease.
 */
export function ownerLive(w: TrackedWork, nowMs: number): boolean {
  const until = (t: string | undefined): boolean => t !== undefined && nowMs < Date.parse(t)
  switch (w.state) {
    case 'active':
      return until(w.executionLeaseExpiresAt)
    case 'queued':
    case 'blocked':
      // A checkpoint or block renews the ownership lease and moves its start-by with it (§11.3).
      return until(w.ownershipLeaseExpiresAt)
    default:
      return false
  }
}

/** The next step for `stage` of the Group `groupId` at `nowMs`; `byKey` resolves the plan's stage keys. */
export function nextStageStep(tracker: Tracker, groupId: string, stage: StageSpec, byKey: ReadonlyMap<string, StageSpec>, nowMs: number): StageStep {
  const w = tracker.work(stage.workItemId)
  const deps = dependencyIds(stage, byKey)
  if (w === undefined) {
    const waitFor = stage.arrival === undefined ? undefined : byKey.get(stage.arrival.afterStarted)
    if (waitFor !== undefined && !tracker.facts(waitFor.workItemId).started) return WAIT
    // §10.4: an edge may only point at an existing WorkItem; a dependency that arrives later is waited for.
    if (deps.some((d) => tracker.work(d) === undefined)) return WAIT
    return { step: 'authorize', dependencyIds: deps }
  }
  switch (w.state) {
    case 'open': {
      const verified = tracker.view(groupId)?.verified
      return deps.every((d) => verified?.has(d) === true) ? { step: 'offer', work: w, why: 'offer' } : WAIT
    }
    case 'offered':
      // §10.3: no Command exists for a decline; an offer nobody took expires and goes to the next candidate.
      return w.offerExpiresAt !== undefined && nowMs >= Date.parse(w.offerExpiresAt) ? { step: 'offer', work: w, why: 'offer' } : WAIT
    case 'failed': {
      const attempts = (w.contract ?? stage.contract).retryPolicy.maxAttempts
      return tracker.facts(stage.workItemId).failures < attempts ? { step: 'offer', work: w, why: 'offer' } : WAIT
    }
    case 'queued':
    case 'active':
    case 'blocked':
      if (w.childGroupId !== undefined) return { step: 'decide_child', childGroupId: w.childGroupId }
      if (stage.promote !== undefined && w.owner === stage.promote.coordinatorAgentId && w.state === 'queued') return { step: 'promote', promotion: stage.promote }
      if (!ownerLive(w, nowMs)) return { step: 'offer', work: w, why: 'reassign' }
      return w.state === 'blocked' ? { step: 'unblock', work: w } : WAIT
    case 'submitted':
      return { step: 'review', work: w }
    default:
      return WAIT
  }
}
