/**
 * @weft/cli: the `weft` command and the MissionWeaveProtocol 0.1 proof of concept it runs (§22):
 * two concurrent software-development Missions with automated Coordinators, a child Mission, a
 * human MissionOwner and shared reference Workers, on one in-memory Group Authority.
 *
 * @example
 * ```ts
 * import { runDemo } from '@weft/cli'
 *
 * const { result } = await runDemo({ seed: 7, onLine: (line) => console.log(line.text) })
 * result.approved // both Missions approved by their MissionOwner
 * ```
 * @packageDocumentation
 */
export { runDemo, DEMO_START, WORKER_SPECS } from './demo/run.js'
export type { DemoOptions, DemoResult, DemoRun, DemoWorld, DemoHooks, DemoLine, MissionOutcome, Link } from './demo/run.js'
export { main, EXIT } from './bin.js'
export type { CliIo } from './bin.js'

// The agents of the demo, usable on their own against any Authority.
export { createCoordinator } from './demo/coordinator.js'
export type { Coordinator, CoordinatorOptions, CoordinatorDecision, CoordinatorLogEntry } from './demo/coordinator.js'
export type { CoordinatorStatus } from './demo/coordinator-lifecycle.js'
export { capabilityMatches } from './demo/mission-plan.js'
export type { MissionPlan, StageSpec, Promotion, DirectoryEntry } from './demo/mission-plan.js'
export { ownerLive } from './demo/stage-step.js'
export { createMissionOwner, approveAll, requestChangesOnce, promptDecider } from './demo/owner.js'
export type { MissionOwner, MissionOwnerOptions, Decider, OwnerDecision, SubmissionView, OwnerRecord } from './demo/owner.js'
export { demoPlans, planStage, greenReport, CAPABILITIES, STAGE_KINDS } from './demo/plans.js'
export type { DemoPlans, RootMission, PlanAgents, CapabilityName, MissionFrame, StageOptions, StageKindName } from './demo/plans.js'
export { demoExecutors, type ExecutorEnv } from './demo/executors.js'
export { reviewSubmission } from './demo/review.js'
export type { ReviewInput, ReviewOutcome, ReviewEvidencePlan, ReviewedArtifact, StageCheck, BlobSource } from './demo/review.js'

// Library-author surface: the pieces the demo is made of.
export { createTracker, memberKey } from './demo/tracker.js'
export type { Tracker, TrackerOptions, GroupFacts, WorkFacts, SubmissionFacts, MemberFacts } from './demo/tracker.js'
export { slotTimeline, mergeLogs, preemptionKey } from './demo/timeline.js'
export type { SlotRecord, LeaseEnd } from './demo/timeline.js'
export { createVirtualClock, seededRandom } from './demo/clock.js'
export type { VirtualClock } from './demo/clock.js'
export { agentPrincipal, humanPrincipal, servicePrincipal, registryOf, agentCard, ORGANIZATION_ID } from './demo/organization.js'
export type { Principal, AgentPrincipal, HumanPrincipal, ServicePrincipal, CardSpec } from './demo/organization.js'
export { renderReport } from './report/report.js'
export type { ReportExtra, ReportFault, ReportCheck } from './report/report.js'
export { reportFacts } from './report/facts.js'
export type { ReportFacts, MissionGraph, WorkItemNode, EventMark, MarkKind, ArtifactNode, ArtifactConsumer, FactsSource, FactsNames } from './report/facts.js'
export { runFaultSuite, FAULT_NAMES, STALE_PROBE_OPERATION, noticeText, checklistText } from './demo/faults.js'
export type { FaultRecord, FaultName, FaultNotice, FaultSuiteOptions, FaultSuiteResult, FaultSuiteRun } from './demo/faults.js'
export { verifyRun, CHECK_NAMES } from './demo/verify.js'
export type { Verification, CheckResult, VerifyInput, VerifySource, SideEffectAttempt } from './demo/verify.js'
export * from './simulate/index.js'
