/**
 * The plan a Coordinator follows ({@link MissionPlan}): a WorkItem graph whose stages carry
 * complete Work Contracts and dependencies (§10.1, §10.4), the corrective stages of each change
 * round (§7.3), and stages promoted to child Missions (§14). Also the reading of a plan against
 * the log: which stages exist now, and which Agents a stage may go to (§6.1 capability match).
 * @module
 */
import { UsageError } from '@weft/codec'
import type { Approval, CapabilityRef, CommandPayload, ResourceBudget, WorkContract } from '@weft/spec'
import type { StageCheck } from './review.js'
import type { GroupFacts } from './tracker.js'

/** A stage promoted to a child Mission (§14): what `mission.create_child` needs besides the parent link. */
export interface Promotion {
  /** The child Mission's plan; its Coordinator runs it. */
  readonly plan: MissionPlan
  /** Its Coordinator Agent, which first accepts the parent WorkItem (§14: promotion needs an owner). */
  readonly coordinatorAgentId: string
  readonly title: string
  readonly objective: string
  readonly definitionOfDone: CommandPayload<'mission.create_child'>['definitionOfDone']
  /** Within the parent WorkItem's budget and deadline (§4 invariant 11). */
  readonly budget: ResourceBudget
  readonly deadline: string
  readonly coordinatorLeaseSeconds?: number
  readonly childFailurePolicy?: CommandPayload<'mission.create_child'>['childFailurePolicy']
}

/** One stage of a plan: one WorkItem. */
export interface StageSpec {
  /** Unique within the plan; dependencies name stages by key. */
  readonly key: string
  readonly workItemId: string
  readonly title: string
  /** The complete Work Contract (§10.1); its dependency list is filled from {@link dependsOn}. */
  readonly contract: WorkContract
  readonly dependsOn?: readonly string[]
  /** Authorized only after the named stage has started: work discovered while executing (§10.4). */
  readonly arrival?: { readonly afterStarted: string }
  /** Offer only to these Agents, in this order (Organization policy or an explicit assignment). */
  readonly candidates?: readonly string[]
  /** The plan's deterministic test or business rule over the submitted Artifacts (§13.2 step 2). */
  readonly check?: StageCheck
  /** How the Coordinator resolves a blocker of this stage (§11.4); default: a generic resolution. */
  readonly resolution?: string
  /** Promote this stage to a child Mission (§14). */
  readonly promote?: Promotion
}

/** A Mission's plan: its stages, and how it reacts to a change request. */
export interface MissionPlan {
  readonly missionId: string
  readonly groupId: string
  /** A short label for progress output, e.g. `checkout`. */
  readonly label: string
  readonly title: string
  readonly stages: readonly StageSpec[]
  /**
   * The corrective stages of change round `round` (1, 2, …) after the MissionOwner's request
   * (§7.3: revised or corrective WorkItems, earlier submissions kept). Called with the same
   * arguments by every Coordinator instance, so a replacement plans the same WorkItems.
   */
  readonly revise?: (round: number, request: Approval) => readonly StageSpec[]
}

/** An Agent the Coordinator may offer work to (from the Organization's Agent Registry, §6.1). */
export interface DirectoryEntry {
  readonly agentId: string
  readonly capabilities: readonly CapabilityRef[]
  /** The Membership role granted to it (§8); default `worker`. */
  readonly role?: 'worker' | 'reviewer'
}

/** Whether `have` satisfies `need` (same major version, at least the version asked for, §6.1). */
export function capabilityMatches(have: CapabilityRef, need: CapabilityRef): boolean {
  const [hm, hn = 0, hp = 0] = have.version.split('.').map(Number)
  const [nm, nn = 0, np = 0] = need.version.split('.').map(Number)
  return have.id === need.id && hm === nm && (hn > nn || (hn === nn && hp >= np))
}

/** Whether `capabilities` satisfy every capability the stage's contract requires (§10.3 eligibility). */
export function canTake(capabilities: readonly CapabilityRef[], stage: StageSpec): boolean {
  return stage.contract.requiredCapabilities.every((need) => capabilities.some((have) => capabilityMatches(have, need)))
}

/** The Agents a stage names itself: its child Mission's Coordinator (§14) or the plan's assignment. */
export function explicitCandidates(stage: StageSpec): readonly string[] | undefined {
  return stage.promote !== undefined ? [stage.promote.coordinatorAgentId] : stage.candidates
}

/**
 * Checks that the plan's stage keys are unique and that every dependency and arrival names a
 * stage of the plan.
 * @throws UsageError naming the stage, as `createCoordinator` reports it.
 */
export function checkPlan(plan: MissionPlan): void {
  const keys = new Set<string>()
  for (const s of plan?.stages ?? []) {
    if (keys.has(s.key)) throw new UsageError(`createCoordinator: stage key ${s.key} repeats`)
    keys.add(s.key)
  }
  for (const s of plan.stages)
    for (const d of [...(s.dependsOn ?? []), ...(s.arrival === undefined ? [] : [s.arrival.afterStarted])]) {
      if (!keys.has(d)) throw new UsageError(`createCoordinator: stage ${s.key} names unknown stage ${d}`)
    }
}

/** The plan's stages plus the corrective stages of every change round the log shows (§7.3). */
export function stagesOf(plan: MissionPlan, g: GroupFacts): StageSpec[] {
  const out = [...plan.stages]
  const requests = g.decisions.filter((d) => d.decision === 'changes_requested')
  requests.forEach((request, i) => out.push(...(plan.revise?.(i + 1, request) ?? [])))
  return out
}

/** Stages by key, for resolving dependencies and arrivals. */
export function stagesByKey(stages: readonly StageSpec[]): Map<string, StageSpec> {
  return new Map(stages.map((s) => [s.key, s]))
}

/** The WorkItem IDs `stage` depends on; a key no stage has stands for itself. */
export function dependencyIds(stage: StageSpec, byKey: ReadonlyMap<string, StageSpec>): string[] {
  return (stage.dependsOn ?? []).map((k) => byKey.get(k)?.workItemId ?? k)
}
