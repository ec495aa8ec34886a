/**
 * Admission control (§10.3) and schedule disclosure (§11.2): the pure decision a Worker takes on
 * an offer made to it. Accepting is a durable scheduling commitment, so the Worker declines
 * whenever it cannot make a credible one, naming a structured reason from
 * `OFFER_DECLINE_REASONS`.
 *
 * Core MissionWeaveProtocol has no Command for declining an offer: a declined offer simply
 * expires unaccepted. The Worker therefore keeps its declines (with reason and facts) locally, where
 * an operator or a later Presence report can read them; `worker.decisions()` exposes them.
 * @module
 */
import { UsageError } from '@weft/codec'
import type { CapabilityRef, CapacityStatus, OfferDeclineReason, ResourceBudget, ScheduleEstimate, SideEffectRisk, WorkContract, WorkItemState } from '@weft/spec'

/** The side-effect risk classes in increasing order (§10.1, §12). */
const RISK_ORDER: readonly SideEffectRisk[] = ['none', 'reversible', 'external', 'high_risk', 'destructive']

/**
 * What an executor declares it consumes per WorkItem, in the limit names of a Resource Budget
 * (§12). A contract whose budget is below a declared need cannot be honoured.
 */
export type ResourceNeeds = Partial<Omit<ResourceBudget, 'currency'>>

/** The Worker's admission limits; every member has a default (see {@link DEFAULT_ADMISSION_LIMITS}). */
export interface AdmissionLimits {
  /**
   * The most WorkItems this Worker holds at once (queued, running, blocked or being accepted)
   * before it declines with `capacity`: the bound of its queue.
   */
  readonly maxQueued: number
  /**
   * The expected run time of one WorkItem in milliseconds, or a function of its contract: the
   * basis of the deadline feasibility check and of the disclosed estimates (§11.2).
   */
  readonly expectedDurationMs: number | ((contract: WorkContract) => number)
  /**
   * The capabilities this Worker offers. When absent, every executor key that is a capability ID
   * counts as offered in any version.
   */
  readonly capabilities?: readonly CapabilityRef[]
  /** The highest side-effect risk this Worker is authorized to take on (§12); riskier work is declined with `authorization`. */
  readonly maxSideEffectRisk: SideEffectRisk
  /**
   * An extra authorization check (e.g. Organization policy on data classes): return `true` to
   * allow, or a short explanation to decline with `authorization`.
   */
  readonly authorize?: (contract: WorkContract, groupId: string) => true | string
}

/** The defaults of {@link AdmissionLimits}: 100 held items, one minute per item, any risk. */
export const DEFAULT_ADMISSION_LIMITS: AdmissionLimits = Object.freeze({
  maxQueued: 100,
  expectedDurationMs: 60_000,
  maxSideEffectRisk: 'destructive',
})

/** The offer being decided. */
export interface OfferFacts {
  readonly workItemId: string
  readonly groupId: string
  readonly contract: WorkContract
  /** The state of each dependency as the Worker's projection knows it (`undefined`: unknown to it). */
  readonly dependencies: readonly { readonly workItemId: string; readonly state: WorkItemState | undefined }[]
}

/** The Worker's load when the offer is decided. */
export interface CapacityFacts {
  /** Now, epoch ms of the Worker clock. */
  readonly nowMs: number
  /** Declared isolated execution slots (§11.1). */
  readonly slots: number
  /** Slots running now. */
  readonly active: number
  /** WorkItems held now: queued, running, blocked or being accepted. */
  readonly held: number
  /**
   * Ready WorkItems expected to start before this one. A coarse count (§11.2: it is turned into
   * a time estimate, never disclosed as a position).
   */
  readonly ahead: number
}

/** What the Worker can execute. */
export interface Abilities {
  /** Whether an executor exists for capability `id` (a dedicated one or the default). */
  hasExecutor(id: string): boolean
  /** The resource needs the executor of capability `id` declares, if any. */
  needsOf(id: string): ResourceNeeds | undefined
  /** Whether this Worker holds a Membership in the Group (it cannot sign a Group Command otherwise, §8). */
  member(groupId: string): boolean
}

/** A decline: the structured reason and a human-readable detail. */
export interface Decline {
  readonly accept: false
  readonly reason: OfferDeclineReason
  readonly detail: string
}

/** An acceptance: the §11.2 disclosure to send with `work.accept_offer`. */
export interface Acceptance {
  readonly accept: true
  readonly scheduleEstimate: ScheduleEstimate
}

/** The outcome of {@link decideAdmission}. */
export type AdmissionDecision = Acceptance | Decline

/**
 * Checks `limits` and fills defaults.
 * @throws UsageError on a bound that is not a positive integer, a negative duration, or an unknown risk class.
 */
export function admissionLimits(limits: Partial<AdmissionLimits> = {}): AdmissionLimits {
  const merged: AdmissionLimits = { ...DEFAULT_ADMISSION_LIMITS, ...stripUndefined(limits) }
  if (!Number.isSafeInteger(merged.maxQueued) || merged.maxQueued < 1) throw new UsageError(`admission.maxQueued must be a positive integer, got ${String(merged.maxQueued)}`)
  const duration = merged.expectedDurationMs
  if (typeof duration !== 'function' && !(Number.isFinite(duration) && duration >= 0))
    throw new UsageError('admission.expectedDurationMs must be a non-negative number of milliseconds or a function of the contract')
  if (!RISK_ORDER.includes(merged.maxSideEffectRisk)) throw new UsageError(`admission.maxSideEffectRisk must be one of ${RISK_ORDER.join(', ')}`)
  return merged
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}

/** `[major, minor, patch]` of a semantic version; prerelease and build parts are ignored. */
function versionParts(version: string): readonly [number, number, number] {
  const [major = 0, minor = 0, patch = 0] = version
    .split(/[-+]/)[0]!
    .split('.')
    .map((n) => Number.parseInt(n, 10) || 0)
  return [major, minor, patch]
}

/**
 * Whether an offered capability version satisfies a required one: the same major version and at
 * least the required minor and patch (the usual semantic-versioning promise of §6.1 card versions).
 */
export function versionSatisfies(offered: string, required: string): boolean {
  const [om, on, op] = versionParts(offered)
  const [rm, rn, rp] = versionParts(required)
  return om === rm && (on > rn || (on === rn && op >= rp))
}

/** The expected run time of one WorkItem under `contract`, in ms. */
export function expectedDuration(limits: AdmissionLimits, contract: WorkContract): number {
  const d = limits.expectedDurationMs
  const value = typeof d === 'function' ? d(contract) : d
  return Number.isFinite(value) && value > 0 ? value : 0
}

const NEED_LIMITS = ['financialLimit', 'modelTokenLimit', 'toolCallLimit', 'computeSecondsLimit', 'wallClockSecondsLimit', 'externalSideEffectLimit'] as const

/** The first budget dimension in which `needs` exceeds what `budget` allows, or `undefined`. */
function overBudget(budget: ResourceBudget, needs: ResourceNeeds | undefined): string | undefined {
  if (needs === undefined) return undefined
  return NEED_LIMITS.find((k) => {
    const need = needs[k]
    const limit = budget[k]
    return need !== undefined && limit !== undefined && need > limit
  })
}

function decline(reason: OfferDeclineReason, detail: string): Decline {
  return { accept: false, reason, detail }
}

/**
 * The §11.2 schedule disclosure for a WorkItem with `ahead` items expected to start before it: it
 * starts now when a slot is free for it, else after enough waves of `durationMs` for the slots to
 * work through the items ahead. Confidence falls as the start moves further out. Nothing of other
 * Groups is disclosed: only times, a confidence and a capacity status.
 */
export function estimateSchedule(capacity: CapacityFacts, limits: AdmissionLimits, durationMs: number): ScheduleEstimate {
  const { nowMs, slots, active, ahead, held } = capacity
  const free = Math.max(0, slots - active)
  const waves = ahead < free ? 0 : Math.ceil((ahead - free + 1) / slots)
  const startMs = nowMs + waves * durationMs
  const status: CapacityStatus = held + 1 >= Math.ceil(limits.maxQueued * 0.8) ? 'constrained' : waves === 0 ? 'available' : 'queued'
  const iso = (ms: number) => new Date(ms).toISOString()
  return {
    estimatedStart: iso(startMs),
    estimatedCompletion: iso(startMs + durationMs),
    // A start that depends on more waves of other work is less certain.
    confidence: Math.round((0.9 / (1 + waves * 0.25)) * 100) / 100,
    capacityStatus: status,
    lastCalculatedAt: iso(nowMs),
  }
}

/**
 * Decides an offer (§10.3). Checks, in order: `capability` (a required capability not offered in
 * a compatible version or without an executor), `authorization` (no Membership to sign with, a
 * side-effect risk above the Worker's authorization, or the `authorize` hook), `dependency` (a
 * dependency failed, cancelled or unknown, so it can never be satisfied), `budget` (an executor
 * needs more than the contract budget allows), `capacity` (the queue bound is reached) and
 * `deadline` (the estimated completion falls after the contract deadline).
 * @example
 * ```ts
 * const decision = decideAdmission(offer, { nowMs, slots: 2, active: 1, held: 3, ahead: 2 }, admissionLimits(), abilities)
 * if (decision.accept) await client.workAcceptOffer({ workItemId, ownershipLeaseSeconds: 3600, scheduleEstimate: decision.scheduleEstimate })
 * ```
 */
export function decideAdmission(offer: OfferFacts, capacity: CapacityFacts, limits: AdmissionLimits, abilities: Abilities): AdmissionDecision {
  const { contract } = offer
  for (const need of contract.requiredCapabilities) {
    const offered =
      limits.capabilities === undefined ? (abilities.hasExecutor(need.id) ? need : undefined) : limits.capabilities.find((c) => c.id === need.id && versionSatisfies(c.version, need.version))
    if (offered === undefined) return decline('capability', `capability ${need.id} ${need.version} is not offered in a compatible version`)
    if (!abilities.hasExecutor(need.id)) return decline('capability', `no executor runs capability ${need.id}`)
  }
  if (!abilities.member(offer.groupId)) return decline('authorization', 'this Worker holds no Membership in the Group to accept with')
  if (RISK_ORDER.indexOf(contract.sideEffectRisk) > RISK_ORDER.indexOf(limits.maxSideEffectRisk)) {
    return decline('authorization', `side-effect risk ${contract.sideEffectRisk} is above what this Worker may take on (${limits.maxSideEffectRisk})`)
  }
  const verdict = limits.authorize?.(contract, offer.groupId) ?? true
  if (verdict !== true) return decline('authorization', verdict)
  const dead = offer.dependencies.find((d) => d.state === undefined || d.state === 'failed' || d.state === 'cancelled')
  if (dead !== undefined) return decline('dependency', `dependency ${dead.workItemId} is ${dead.state ?? 'unknown to this Worker'} and cannot be satisfied`)
  for (const need of contract.requiredCapabilities) {
    const dimension = overBudget(contract.budget, abilities.needsOf(need.id))
    if (dimension !== undefined) return decline('budget', `the executor of ${need.id} needs more than the contract's ${dimension}`)
  }
  if (capacity.held >= limits.maxQueued) return decline('capacity', `the queue holds ${capacity.held} of at most ${limits.maxQueued} WorkItems`)
  const durationMs = expectedDuration(limits, contract)
  const estimate = estimateSchedule(capacity, limits, durationMs)
  const deadlineMs = Date.parse(contract.deadline)
  if (Date.parse(estimate.estimatedCompletion) > deadlineMs) {
    return decline('deadline', `estimated completion ${estimate.estimatedCompletion} is after the deadline ${contract.deadline}`)
  }
  return { accept: true, scheduleEstimate: estimate }
}
