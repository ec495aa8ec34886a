/**
 * Who a Coordinator enrols and offers work to: the Agents each stage may go to (§8 Memberships),
 * candidates ranked for an offer and the structured selection basis the offer carries (§10.3).
 * Read from the plan, the directory and the Group log only, so a replacement Coordinator ranks
 * the same way (§7.2).
 * @module
 */
import type { SelectionBasis } from '@weft/spec'
import { canTake, capabilityMatches, explicitCandidates, type DirectoryEntry, type StageSpec } from './mission-plan.js'
import type { Tracker } from './tracker.js'

/** What staffing reads: the Group's log as folded, and the Agents of the directory. */
export interface StaffingSource {
  readonly tracker: Tracker
  readonly groupId: string
  readonly directory: readonly DirectoryEntry[]
}

/** A Membership role the Coordinator grants (§8). */
export type MemberRole = 'worker' | 'reviewer'

/** The Agents `stages` may be offered to, with the role each is granted (§8). */
export function memberRoles(stages: readonly StageSpec[], directory: readonly DirectoryEntry[]): Map<string, MemberRole> {
  const members = new Map<string, MemberRole>()
  for (const s of stages) {
    const explicit = explicitCandidates(s)
    if (explicit !== undefined) for (const id of explicit) members.set(id, directory.find((d) => d.agentId === id)?.role ?? 'worker')
    else for (const d of directory) if (canTake(d.capabilities, s)) members.set(d.agentId, d.role ?? 'worker')
  }
  return members
}

/**
 * {@link memberRoles} for a stage list that only ever grows (corrective rounds append, §7.3):
 * recomputed only when its length changes.
 */
export function memberRolesByLength(directory: readonly DirectoryEntry[]): (stages: readonly StageSpec[]) => Map<string, MemberRole> {
  let last: { readonly stages: number; readonly members: Map<string, MemberRole> } | undefined
  return (stages) => {
    if (last?.stages !== stages.length) last = { stages: stages.length, members: memberRoles(stages, directory) }
    return last.members
  }
}

/** How many of the Group's WorkItems an Agent holds or is offered now (its load as seen from this Mission, §11.2). */
function loadOf(source: StaffingSource, agentId: string): number {
  let n = 0
  for (const w of source.tracker.view(source.groupId)?.work.values() ?? []) {
    if ((w.owner === agentId && (w.state === 'queued' || w.state === 'active' || w.state === 'blocked')) || (w.state === 'offered' && w.offeredTo.includes(agentId))) n++
  }
  return n
}

/**
 * Ranked candidates for `stage` (§10.3): the plan's explicit candidates in order, else every
 * directory Agent with every required capability, least loaded first. Agents that already let
 * this WorkItem lapse, failed it, or left an offer of it unaccepted go last.
 */
export function rankCandidates(source: StaffingSource, stage: StageSpec, passedOver: ReadonlySet<string>): string[] {
  const explicit = explicitCandidates(stage)
  const eligible = explicit ?? source.directory.filter((d) => canTake(d.capabilities, stage)).map((d) => d.agentId)
  const lapsed = source.tracker.facts(stage.workItemId).lapsed
  const penalty = (id: string): number => (lapsed.has(id) ? 2 : passedOver.has(id) ? 1 : 0)
  const ranked = eligible
    .map((id, order) => ({ id, order, load: explicit === undefined ? loadOf(source, id) : 0 }))
    .sort((a, b) => penalty(a.id) - penalty(b.id) || a.load - b.load || a.order - b.order)
  return ranked.map((r) => r.id)
}

/** The structured selection basis of an offer of `stage` to `chosen` (§10.3). */
export function selectionBasis(source: StaffingSource, stage: StageSpec, chosen: readonly string[], nowMs: number, rules: readonly string[]): SelectionBasis {
  const needs = stage.contract.requiredCapabilities
  const entry = source.directory.find((d) => d.agentId === chosen[0])
  const matches = needs.map((n) => entry?.capabilities.find((c) => capabilityMatches(c, n)) ?? n)
  // §10.3: capability-specific reliability Evidence: accepted review Evidence of earlier work by this Agent.
  const reliability: string[] = []
  for (const w of source.tracker.view(source.groupId)?.work.values() ?? []) {
    if (w.state !== 'verified' || w.owner !== chosen[0]) continue
    for (const e of source.tracker.facts(w.workItemId).accepted ?? []) if (reliability.length < 8) reliability.push(e.evidenceId)
  }
  return {
    requiredCapabilities: needs,
    verifiedMatches: matches,
    authorizationEligible: true,
    availabilityEstimate: new Date(nowMs).toISOString(),
    expectedCost: stage.contract.budget.financialLimit ?? 0,
    reliabilityEvidence: reliability,
    policyRulesApplied: rules.length > 0 ? [...rules] : ['capability-match'],
  }
}
