/**
 * The post-run verifier of the proof of concept (§22: "failure-recovery tests without accepting
 * stale or duplicate side effects"). {@link verifyRun} reads a finished run from the outside and
 * checks what must hold whatever faults were injected:
 *
 * - the Authority's state equals a fresh fold of its whole log (§16 replay), every Group's
 *   sequence is contiguous from 1 (§4 invariant 7, §15.2) and every Event carries a valid
 *   Authority signature (§6.4);
 * - every external side effect ran exactly once per idempotency key (§16), and every stale or
 *   duplicate attempt was refused or answered from the Worker's side-effect ledger (§11.3, §11.5);
 * - both root Missions (and the child Mission) ended approved (§4 invariant 10), each with the exact
 *   Artifact set its plan delivers: the Artifacts of the accepted submission of every verified
 *   WorkItem, covering every required deliverable of its Work Contract (§7.3, §13.1);
 * - slots are isolated (§11.1): runs that overlapped on one Worker shared no context object,
 *   capability token or side-effect key, and every run saw only its own Mission's IDs.
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { Authority } from '@weft/authority'
import { sideEffectKey } from '@weft/client'
import { verify, type Registry } from '@weft/codec'
import { type Event, type EventPayload, isEventOf, type WorkContract } from '@weft/spec'
import type { DemoPlans } from './plans.js'

/** One external side-effect attempt an executor made through its slot (§16), as the failure suite saw it. */
export interface SideEffectAttempt {
  /** The Worker runtime, `name#sessionEpoch`. */
  readonly worker: string
  readonly workItemId: string
  readonly ownershipEpoch: number
  readonly operationId: string
  /** The idempotency key (§16: Mission, WorkItem, Ownership Epoch and operation). */
  readonly key: string
  readonly atMs: number
  /**
   * `executed`: the external system was called; `replayed`: the Worker's ledger answered with the
   * recorded result; `refused`: the slot refused it (no live lease, §11.3, §11.5).
   */
  readonly outcome: 'executed' | 'replayed' | 'refused'
  /** For `executed`: whether the Authority held this Ownership Epoch with a live Execution Lease of this Agent at that moment. */
  readonly current?: boolean
  /** For `refused`: the §19 code the slot gave. */
  readonly code?: string
  /** Set when the failure suite made the attempt on purpose: a late one after the lease was lost, or a repeat. */
  readonly probe?: 'stale' | 'duplicate'
}

/** The IDs a run was handed or bound to: its Group, Mission and WorkItem. */
export interface RunScope {
  readonly groupId: string
  readonly missionId: string
  readonly workItemId: string
}

/**
 * One executor invocation in one slot of one Worker runtime, as the demo's slot audit recorded it
 * (§11.1). Holds no reference to the slot's objects: the context is named by a serial number the
 * audit gives each context object it meets.
 */
export interface SlotInvocation {
  /** The Worker runtime, `name#sessionEpoch`. */
  readonly worker: string
  readonly agentId: string
  /**
   * The audit's lane on that runtime: the lowest one free when the run began. The reference Worker
   * does not number its slots, so this is a drawing aid, not the Worker's own slot index.
   */
  readonly lane: number
  readonly startMs: number
  /** `undefined` while the run had not returned when the audit was read. */
  readonly endMs: number | undefined
  /** The serial number of the context object the run received. */
  readonly contextId: number
  readonly ownershipEpoch: number
  /** What the run was handed: the executor's WorkItem argument, then its context's `item`. */
  readonly seen: readonly RunScope[]
  /** Where the Authority holds the WorkItem; `undefined` when it holds it in no Group of the demo. */
  readonly expected: RunScope | undefined
  /** The capability tokens the context handed out (§12), by token ID, with what each is bound to. */
  readonly tokens: readonly (RunScope & { readonly tokenId: string })[]
  /** The side effects the run asked for, with the idempotency key its context gave (§16). */
  readonly sideEffects: readonly { readonly operationId: string; readonly key: string }[]
}

/** The outcome of {@link slotIsolation}. */
export interface IsolationReport {
  readonly invocations: number
  /** Pairs of invocations that overlapped in time on one Worker runtime: every one was checked. */
  readonly pairs: number
  /** Of {@link pairs}, those whose two runs served different Missions. */
  readonly crossMission: number
  /** Every breach found, the first {@link MAX_VIOLATIONS}. */
  readonly violations: readonly string[]
}

/** The most violations an {@link IsolationReport} lists. */
export const MAX_VIOLATIONS = 50

const sameScope = (a: RunScope, b: RunScope): boolean => a.groupId === b.groupId && a.missionId === b.missionId && a.workItemId === b.workItemId

/** What one invocation breaches on its own: IDs of another Mission, a token or key bound elsewhere. */
function ownScopeBreaches(run: SlotInvocation): string[] {
  const who = `${run.worker} lane ${run.lane} (${run.expected?.workItemId ?? run.seen[0]?.workItemId ?? '?'})`
  const e = run.expected
  if (e === undefined) return [`${who}: the Authority holds its WorkItem in no Group of the demo`]
  const found: string[] = []
  for (const s of run.seen) if (!sameScope(s, e)) found.push(`${who} was handed ${s.missionId} / ${s.workItemId}`)
  for (const t of run.tokens) if (!sameScope(t, e)) found.push(`${who} held token ${t.tokenId} bound to ${t.workItemId}`)
  for (const k of run.sideEffects) {
    // §16: the key names this Mission, WorkItem and Ownership Epoch; any other is another run's key.
    if (k.key !== sideEffectKey({ missionId: e.missionId, workItemId: e.workItemId, ownershipEpoch: run.ownershipEpoch, operationId: k.operationId }))
      found.push(`${who} used a side-effect key of another scope for ${k.operationId}`)
  }
  return found
}

/** What two overlapping runs on one Worker share: a context, a token, a key or the WorkItem itself. */
function sharedBetween(a: SlotInvocation, b: SlotInvocation): string[] {
  const pair = `${a.worker}: lanes ${a.lane} and ${b.lane}`
  const found: string[] = []
  if (a.contextId === b.contextId) found.push(`${pair} share context #${a.contextId}`)
  const tokens = new Set(a.tokens.map((t) => t.tokenId))
  for (const t of b.tokens) if (tokens.has(t.tokenId)) found.push(`${pair} share token ${t.tokenId}`)
  const keys = new Set(a.sideEffects.map((k) => k.key))
  for (const k of b.sideEffects) if (keys.has(k.key)) found.push(`${pair} share side-effect key ${k.key.slice(0, 19)}…`)
  if (a.expected !== undefined && b.expected !== undefined && a.expected.workItemId === b.expected.workItemId) found.push(`${pair} run ${a.expected.workItemId} at once`)
  return found
}

/**
 * §11.1: checks the slot audit of a run. Every invocation must have seen only its own Mission's
 * IDs (in its WorkItem, its context, its tokens and its side-effect keys); no context object or
 * token may serve two invocations; and no two invocations that overlapped in time on one Worker
 * runtime may share a context, a token, a side-effect key or a WorkItem.
 * @example
 * ```ts
 * const { world } = await runDemo()
 * const { pairs, violations } = slotIsolation(world.slotRuns())
 * ```
 */
export function slotIsolation(invocations: readonly SlotInvocation[]): IsolationReport {
  const violations = invocations.flatMap(ownScopeBreaches)
  // A context or token is made for one run only; reuse even without overlap is a leak.
  const contexts = new Map<number, number>()
  const tokens = new Map<string, number>()
  for (const run of invocations) {
    contexts.set(run.contextId, (contexts.get(run.contextId) ?? 0) + 1)
    for (const t of new Set(run.tokens.map((x) => x.tokenId))) tokens.set(t, (tokens.get(t) ?? 0) + 1)
  }
  for (const [id, n] of contexts) if (n > 1) violations.push(`context #${id} served ${n} runs`)
  for (const [id, n] of tokens) if (n > 1) violations.push(`token ${id} served ${n} runs`)
  let pairs = 0
  let crossMission = 0
  const end = (r: SlotInvocation): number => r.endMs ?? Number.POSITIVE_INFINITY
  for (let i = 0; i < invocations.length; i++) {
    const a = invocations[i]!
    for (let j = i + 1; j < invocations.length; j++) {
      const b = invocations[j]!
      if (a.worker !== b.worker || !(a.startMs < end(b) && b.startMs < end(a))) continue
      pairs++
      if (a.expected?.missionId !== b.expected?.missionId) crossMission++
      violations.push(...sharedBetween(a, b))
    }
  }
  return { invocations: invocations.length, pairs, crossMission, violations: [...new Set(violations)].slice(0, MAX_VIOLATIONS) }
}

/** What {@link verifyRun} reads: a {@link DemoWorld} fits. */
export interface VerifySource {
  readonly authority: Pick<Authority, 'state' | 'replayState' | 'events' | 'organizationEvents' | 'group'>
  readonly registry: Registry
  readonly plans: DemoPlans
  /** The external systems' ledger: calls per idempotency key. */
  readonly sideEffects: ReadonlyMap<string, { readonly operationId: string; readonly calls: number }>
  /** Every executor invocation the slot audit recorded (§11.1). */
  slotRuns(): readonly SlotInvocation[]
}

/** Input of {@link verifyRun}. */
export interface VerifyInput {
  readonly world: VerifySource
  /** Every side-effect attempt of the run; without it only the external ledger is read. */
  readonly attempts?: readonly SideEffectAttempt[]
}

/** One check of {@link verifyRun}. */
export interface CheckResult {
  /** A stable name, e.g. `state-equals-fold`. */
  readonly name: string
  /** What was checked, in words. */
  readonly title: string
  readonly held: boolean
  /** What was found. */
  readonly detail: string
}

/** The verdict over a run. */
export interface Verification {
  /** Every check held. */
  readonly passed: boolean
  readonly checks: readonly CheckResult[]
}

/** The names of the checks, in the order {@link verifyRun} reports them. */
export const CHECK_NAMES = [
  'state-equals-fold',
  'contiguous-sequences',
  'event-signatures',
  'side-effects-once',
  'stale-duplicate-refused',
  'missions-approved',
  'exact-artifact-sets',
  'slot-isolation',
] as const

/**
 * Verifies a finished run (see the module comment for the checks). Reads only; a check that throws
 * counts as failed with the error as its detail.
 * @example
 * ```ts
 * const { world } = await runDemo()
 * const { passed, checks } = verifyRun({ world })
 * for (const c of checks) console.log(c.held ? '✓' : '✗', c.title, '-', c.detail)
 * ```
 */
export function verifyRun(input: VerifyInput): Verification {
  const { world } = input
  const checks: CheckResult[] = [
    guarded('state-equals-fold', 'State equals a fresh fold of the whole log', () => foldCheck(world)),
    guarded('contiguous-sequences', 'Every Group sequence is contiguous from 1', () => sequenceCheck(world)),
    guarded('event-signatures', 'Every Event signature verifies', () => signatureCheck(world)),
    guarded('side-effects-once', 'Every side-effect key ran exactly once', () => onceCheck(world)),
    guarded('stale-duplicate-refused', 'Every stale or duplicate side effect was refused', () => refusalCheck(world, input.attempts)),
    guarded('missions-approved', 'Both Missions (and the child Mission) ended approved', () => approvalCheck(world)),
    guarded('exact-artifact-sets', 'Each approval names exactly the Artifacts its plan delivers', () => artifactCheck(world)),
    guarded('slot-isolation', 'Overlapping slots shared no context, token or side-effect key', () => isolationCheck(world)),
  ]
  return { passed: checks.every((c) => c.held), checks }
}

type Finding = Omit<CheckResult, 'name' | 'title'>

function guarded(name: (typeof CHECK_NAMES)[number], title: string, run: () => Finding): CheckResult {
  try {
    return { name, title, ...run() }
  } catch (error) {
    return { name, title, held: false, detail: `the check could not run: ${error instanceof Error ? error.message : String(error)}` }
  }
}

/** The Group IDs of the plan's Missions: the two roots, then the child. */
function missionGroups(plans: DemoPlans): { readonly label: string; readonly groupId: string; readonly root: boolean }[] {
  return [
    { label: plans.checkout.plan.label, groupId: plans.checkout.plan.groupId, root: true },
    { label: plans.search.plan.label, groupId: plans.search.plan.groupId, root: true },
    { label: plans.staging.label, groupId: plans.staging.groupId, root: false },
  ]
}

/** §16: the live state must be what a replay of the stored log from scratch produces. */
function foldCheck(world: VerifySource): Finding {
  const fresh = world.authority.replayState()
  const held = isDeepStrictEqual(fresh, world.authority.state)
  let differing: string[] = []
  if (!held) {
    const live = world.authority.state.groups
    differing = [...new Set([...live.keys(), ...fresh.groups.keys()])].filter((g) => !isDeepStrictEqual(live.get(g), fresh.groups.get(g)))
  }
  const groups = world.authority.state.groups.size
  return {
    held,
    detail: held
      ? `a fresh fold of ${groups} Group log(s) and the Organization log equals the live state`
      : `the fold differs${differing.length > 0 ? ` in ${differing.join(', ')}` : ' outside the Groups'}`,
  }
}

/** §15.2: one monotonic sequence per Group, 1, 2, 3, … with the head at the last one. */
function sequenceCheck(world: VerifySource): Finding {
  const broken: string[] = []
  let events = 0
  for (const [groupId, group] of world.authority.state.groups) {
    const log = world.authority.events(groupId)
    events += log.length
    const gap = log.findIndex((e, i) => e.sequence !== i + 1 || e.groupId !== groupId)
    if (gap >= 0) broken.push(`${groupId} at position ${gap + 1} (sequence ${String(log[gap]?.sequence)})`)
    else if (group.head !== log.length) broken.push(`${groupId}: head ${group.head} but ${log.length} Events`)
  }
  return { held: broken.length === 0, detail: broken.length === 0 ? `${world.authority.state.groups.size} Group(s), ${events} Events, no gap or repeat` : `broken: ${broken.join('; ')}` }
}

/** §6.4: every Event (Group and Organization) verifies against the Authority key in the Registry. */
function signatureCheck(world: VerifySource): Finding {
  const log: Event[] = [...world.authority.organizationEvents()]
  for (const groupId of world.authority.state.groups.keys()) log.push(...world.authority.events(groupId))
  const bad: string[] = []
  for (const event of log) {
    // Schemas are the validators' business; this check is about the signature stages.
    const result = verify('event', JSON.stringify(event), world.registry, { validate: () => true })
    if (!result.ok) bad.push(event.eventId)
  }
  return {
    held: bad.length === 0 && log.length > 0,
    detail: bad.length === 0 ? `${log.length} Event signatures verified` : `${bad.length} of ${log.length} Events fail: ${bad.slice(0, 5).join(', ')}${bad.length > 5 ? ', …' : ''}`,
  }
}

/** §16: the external systems saw each idempotency key once. */
function onceCheck(world: VerifySource): Finding {
  const repeated = [...world.sideEffects].filter(([, v]) => v.calls !== 1)
  const detail =
    repeated.length === 0
      ? `${world.sideEffects.size} external operation(s), each called once`
      : `called more than once: ${repeated.map(([k, v]) => `${v.operationId} ${k.slice(0, 19)}… ×${v.calls}`).join(', ')}`
  return { held: repeated.length === 0, detail }
}

/**
 * §11.3, §11.5, §16: every execution happened under the current Ownership Epoch with a live lease,
 * no key ran twice, the external ledger saw exactly the executions, and every other attempt was
 * refused by the slot or answered from the Worker's ledger.
 */
function refusalCheck(world: VerifySource, attempts: readonly SideEffectAttempt[] | undefined): Finding {
  const externalCalls = [...world.sideEffects.values()].reduce((n, v) => n + v.calls, 0)
  if (attempts === undefined) {
    const held = [...world.sideEffects.values()].every((v) => v.calls === 1)
    return { held, detail: `no attempt ledger given: read ${externalCalls} external call(s) only` }
  }
  const executed = attempts.filter((a) => a.outcome === 'executed')
  const stale = executed.filter((a) => a.current !== true)
  const perKey = new Map<string, number>()
  for (const a of executed) perKey.set(a.key, (perKey.get(a.key) ?? 0) + 1)
  const twice = [...perKey].filter(([, n]) => n > 1)
  const replayed = attempts.filter((a) => a.outcome === 'replayed')
  const refused = attempts.filter((a) => a.outcome === 'refused')
  const problems = [
    ...stale.map((a) => `stale execution of ${a.operationId} for ${a.workItemId} (epoch ${a.ownershipEpoch}) by ${a.worker}`),
    ...twice.map(([key, n]) => `key ${key.slice(0, 19)}… executed ${n} times`),
    ...(externalCalls === executed.length ? [] : [`${externalCalls} external call(s) but ${executed.length} execution(s) through a slot`]),
  ]
  const codes = [...new Set(refused.map((a) => a.code ?? '?'))].join(', ')
  const probes = `probes: ${attempts.filter((a) => a.probe === 'stale').length} stale, ${attempts.filter((a) => a.probe === 'duplicate').length} duplicate`
  const detail =
    problems.length > 0
      ? problems.join('; ')
      : `${attempts.length} attempt(s): ${executed.length} executed (= ${externalCalls} external call(s)), ${replayed.length} repeat(s) answered from the ledger, ${refused.length} refused${codes === '' ? '' : ` (${codes})`}; ${probes}`
  return { held: problems.length === 0, detail }
}

/** §4 invariant 10, §14: the roots approved by their MissionOwner, the child by its parent Coordinator. */
function approvalCheck(world: VerifySource): Finding {
  const states = missionGroups(world.plans).map((m) => ({ ...m, state: world.authority.group(m.groupId)?.mission.state ?? 'absent' }))
  return { held: states.every((m) => m.state === 'approved'), detail: states.map((m) => `${m.label} ${m.state}`).join(', ') }
}

/** What one Group's log says about the Artifacts of its accepted submissions. */
interface Delivered {
  /** Content hash by Artifact ID, from `artifact.published`. */
  readonly hashOf: Map<string, string>
  /** Media type and schema by Artifact ID. */
  readonly kindOf: Map<string, { readonly mediaType: string; readonly schemaUri: string }>
  /** The submission each verified WorkItem was accepted on: the last `work.submitted` before `work.result.accepted`. */
  readonly accepted: Map<string, EventPayload<'work.submitted'>>
  /** The last approved Artifact set. */
  readonly approved: readonly string[] | undefined
}

function deliveredIn(log: readonly Event[]): Delivered {
  const hashOf = new Map<string, string>()
  const kindOf = new Map<string, { mediaType: string; schemaUri: string }>()
  const latest = new Map<string, EventPayload<'work.submitted'>>()
  const accepted = new Map<string, EventPayload<'work.submitted'>>()
  let approved: readonly string[] | undefined
  for (const event of log) {
    if (isEventOf(event, 'artifact.published')) {
      const a = event.payload.artifact
      hashOf.set(a.artifactId, a.contentHash)
      kindOf.set(a.artifactId, { mediaType: a.mediaType, schemaUri: a.schemaUri })
    } else if (isEventOf(event, 'work.submitted')) {
      latest.set(event.payload.workItemId, event.payload)
    } else if (isEventOf(event, 'work.result.accepted')) {
      const id = event.payload.workItemId
      const s = latest.get(id)
      if (s !== undefined) accepted.set(id, s)
    } else if (isEventOf(event, 'mission.approved')) {
      approved = event.payload.approval.artifactHashes
    }
  }
  return { hashOf, kindOf, accepted, approved }
}

/** The required deliverables of `contract` no Artifact of `artifactIds` provides (§10.1, §13.1). */
function missingDeliverables(contract: WorkContract, artifactIds: readonly string[], kindOf: Delivered['kindOf']): string[] {
  const kinds = artifactIds.map((id) => kindOf.get(id))
  return contract.requiredDeliverables.filter((d) => !kinds.some((k) => k?.mediaType === d.mediaType && k.schemaUri === d.schema)).map((d) => d.deliverableId)
}

/**
 * §7.3, §13.1: the approved Artifact set of each Mission is exactly the union of the accepted
 * submissions of its verified WorkItems, each of which covers its contract's deliverables, and
 * every WorkItem the plan names is verified.
 */
function artifactCheck(world: VerifySource): Finding {
  const problems: string[] = []
  const found: string[] = []
  const planned = new Map<string, readonly string[]>([
    [world.plans.checkout.plan.groupId, world.plans.checkout.plan.stages.map((s) => s.workItemId)],
    [world.plans.search.plan.groupId, world.plans.search.plan.stages.map((s) => s.workItemId)],
    [world.plans.staging.groupId, world.plans.staging.stages.map((s) => s.workItemId)],
  ])
  for (const m of missionGroups(world.plans)) {
    const group = world.authority.group(m.groupId)
    if (group === undefined) {
      problems.push(`${m.label}: no Group`)
      continue
    }
    const d = deliveredIn(world.authority.events(m.groupId))
    const expected = new Set<string>()
    for (const stageId of planned.get(m.groupId) ?? []) {
      if (group.workItems.get(stageId)?.doc.state !== 'verified') problems.push(`${m.label}: planned WorkItem ${stageId} is ${group.workItems.get(stageId)?.doc.state ?? 'absent'}`)
    }
    for (const [id, record] of group.workItems) {
      if (record.doc.state !== 'verified') continue
      const submission = d.accepted.get(id)
      // §14: a promoted WorkItem is verified by its child Mission's approval, not by a submission here.
      if (submission === undefined) {
        if (record.childMissionId === undefined) problems.push(`${m.label}: ${id} is verified without an accepted submission`)
        continue
      }
      for (const artifactId of submission.artifactIds) {
        const hash = d.hashOf.get(artifactId)
        if (hash === undefined) problems.push(`${m.label}: ${id} submitted unpublished Artifact ${artifactId}`)
        else expected.add(hash)
      }
      const missing = missingDeliverables(record.doc.contract, submission.artifactIds, d.kindOf)
      if (missing.length > 0) problems.push(`${m.label}: ${id} lacks deliverable(s) ${missing.join(', ')}`)
    }
    const approved = new Set(d.approved ?? [])
    const extra = [...approved].filter((h) => !expected.has(h))
    const absent = [...expected].filter((h) => !approved.has(h))
    if (d.approved === undefined) problems.push(`${m.label}: no approval`)
    else if (extra.length > 0 || absent.length > 0) problems.push(`${m.label}: approval names ${extra.length} unexpected and misses ${absent.length} expected Artifact(s)`)
    else found.push(`${m.label} ${approved.size}`)
  }
  return { held: problems.length === 0, detail: problems.length === 0 ? `approved sets equal the delivered Artifacts (${found.join(', ')})` : problems.join('; ') }
}

/** §11.1: the slot audit found no breach of isolation, and there was something to audit. */
function isolationCheck(world: VerifySource): Finding {
  const r = slotIsolation(world.slotRuns())
  if (r.violations.length > 0) return { held: false, detail: `${r.violations.length} breach(es): ${r.violations.slice(0, 5).join('; ')}${r.violations.length > 5 ? '; …' : ''}` }
  if (r.invocations === 0) return { held: false, detail: 'the slot audit recorded no executor invocation' }
  return { held: true, detail: `${r.invocations} invocation(s), ${r.pairs} overlapping pair(s) on one Worker (${r.crossMission} across Missions): no shared context, token or side-effect key` }
}
