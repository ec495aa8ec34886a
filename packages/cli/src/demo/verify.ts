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
 *   WorkItem, covering every required deliverable of its Work Contract (§7.3, §13.1).
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import type { Authority } from '@weft/authority'
import { verify, type Registry } from '@weft/codec'
import type { Event, EventPayload, WorkContract } from '@weft/spec'
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

/** What {@link verifyRun} reads: a {@link DemoWorld} fits. */
export interface VerifySource {
  readonly authority: Pick<Authority, 'state' | 'replayState' | 'events' | 'organizationEvents' | 'group'>
  readonly registry: Registry
  readonly plans: DemoPlans
  /** The external systems' ledger: calls per idempotency key. */
  readonly sideEffects: ReadonlyMap<string, { readonly operationId: string; readonly calls: number }>
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
export const CHECK_NAMES = ['state-equals-fold', 'contiguous-sequences', 'event-signatures', 'side-effects-once', 'stale-duplicate-refused', 'missions-approved', 'exact-artifact-sets'] as const

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
  return { held, detail: held ? `a fresh fold of ${groups} Group log(s) and the Organization log equals the live state` : `the fold differs${differing.length > 0 ? ` in ${differing.join(', ')}` : ' outside the Groups'}` }
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
  return { held: bad.length === 0 && log.length > 0, detail: bad.length === 0 ? `${log.length} Event signatures verified` : `${bad.length} of ${log.length} Events fail: ${bad.slice(0, 5).join(', ')}${bad.length > 5 ? ', …' : ''}` }
}

/** §16: the external systems saw each idempotency key once. */
function onceCheck(world: VerifySource): Finding {
  const repeated = [...world.sideEffects].filter(([, v]) => v.calls !== 1)
  const detail = repeated.length === 0 ? `${world.sideEffects.size} external operation(s), each called once` : `called more than once: ${repeated.map(([k, v]) => `${v.operationId} ${k.slice(0, 19)}… ×${v.calls}`).join(', ')}`
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
    if (event.kind === 'artifact.published') {
      const a = (event.payload as EventPayload<'artifact.published'>).artifact
      hashOf.set(a.artifactId, a.contentHash)
      kindOf.set(a.artifactId, { mediaType: a.mediaType, schemaUri: a.schemaUri })
    } else if (event.kind === 'work.submitted') {
      const s = event.payload as EventPayload<'work.submitted'>
      latest.set(s.workItemId, s)
    } else if (event.kind === 'work.result.accepted') {
      const id = (event.payload as EventPayload<'work.result.accepted'>).workItemId
      const s = latest.get(id)
      if (s !== undefined) accepted.set(id, s)
    } else if (event.kind === 'mission.approved') {
      approved = (event.payload as EventPayload<'mission.approved'>).approval.artifactHashes
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
