/**
 * Work Contract rules (§10.1, §4.11, §10.4): semantic completeness beyond what the schema forces,
 * narrowing against the Mission and the parent WorkItem, dependency reconciliation, and capability
 * version matching (§6.1, §9.1, §10.3).
 * @module
 */
import { USAGE_DIMENSIONS, type AgentCard, type CapabilityRef, type ResourceBudget, type WorkContract } from '@weft/spec'
import { reject } from '../commit/handler.js'
import type { AuthorityState, GroupState, WorkItemRecord } from '../model.js'
import { inheritanceOf, NO_CURRENCY, requireAllocation, usageAsBudget } from './work-budget.js'
import { limitOf, zeroUsage } from './budget-limits.js'
import { reservedBy } from './work-index.js'
import { parseInstant } from '@weft/codec/time'

function blank(text: string): boolean {
  return text.trim().length === 0
}

function duplicates(ids: readonly string[]): string[] {
  return ids.filter((id, i) => ids.indexOf(id) !== i)
}

/**
 * Checks what §10.1 requires of a contract beyond its schema: a goal, acceptance criteria and
 * business impact that say something (the schema lets text of blanks through, which carries none).
 * The budget needs nothing more than its schema: a dimension it leaves out, and a currency it does
 * not name, are inherited from its ancestry (§12).
 * @throws ProtocolError `WORK_CONTRACT_INCOMPLETE` for missing information, `INVALID_COMMAND` for
 * criteria or deliverables that share an ID (Evidence could not be mapped to them, §13.2).
 */
export function requireCompleteContract(contract: WorkContract): void {
  const missing: string[] = []
  if (blank(contract.goal)) missing.push('goal')
  if (contract.requiredDeliverables.length === 0) missing.push('requiredDeliverables')
  if (contract.acceptanceCriteria.length === 0) missing.push('acceptanceCriteria')
  for (const c of contract.acceptanceCriteria) {
    if (c.evidenceRequired.length === 0 || blank(c.description)) missing.push(`acceptanceCriteria.${c.criterionId}`)
  }
  if (contract.requiredCapabilities.length === 0) missing.push('requiredCapabilities')
  if (blank(contract.businessImpact)) missing.push('businessImpact')
  if (missing.length > 0) reject('WORK_CONTRACT_INCOMPLETE', `the Work Contract lacks ${missing.join(', ')}`, { missing })
  const repeated = [...duplicates(contract.acceptanceCriteria.map((c) => c.criterionId)), ...duplicates(contract.requiredDeliverables.map((d) => d.deliverableId))]
  if (repeated.length > 0) reject('INVALID_COMMAND', `the Work Contract repeats ${repeated.join(', ')}`, { repeated })
}

/**
 * Checks that `contract` stays within what it is carved from (§4.11): its deadline within the
 * Mission's and the parent WorkItem's, its budget within the remaining allocation of the Mission
 * (top-level WorkItems) or of the parent WorkItem (its children), and its allowed resources within
 * the parent's. A limit the budget lists in a dimension its parent inherits must fit what the
 * parent's ancestry has left; a dimension it leaves out is inherited (§12).
 * @param selfId - The WorkItem the contract belongs to, left out of the allocation already made.
 * @param state - Leads from a child Mission to its parent WorkItem's budgets (§14); without it the
 * ancestry ends at the Group's Mission.
 * @throws ProtocolError `INVALID_COMMAND` or `BUDGET_EXCEEDED`.
 */
export function requireContractFits(group: GroupState, contract: WorkContract, parent: WorkItemRecord | undefined, selfId: string, state?: AuthorityState): void {
  const deadline = parseInstant(contract.deadline)
  if (deadline > parseInstant(group.mission.deadline)) reject('INVALID_COMMAND', 'the WorkItem deadline is after the Mission deadline', { deadline: contract.deadline })
  if (parent !== undefined && deadline > parseInstant(parent.doc.contract.deadline)) {
    reject('INVALID_COMMAND', 'the WorkItem deadline is after its parent WorkItem deadline', { deadline: contract.deadline })
  }
  if (parent !== undefined) requireResourcesWithin(contract, parent.doc.contract)
  const parentId = parent?.doc.workItemId
  const ceiling = parent?.doc.contract.budget ?? group.mission.budget
  requireAllocation(
    ceiling,
    parent === undefined ? 'Mission' : `parent WorkItem ${parentId}`,
    [reservedUnder(group, parentId, selfId, ceiling.currency)],
    contract.budget,
    inheritanceOf(group, parent, state, group.workItems.get(selfId)),
  )
}

/**
 * What the children of `parentId` (the Mission's top-level WorkItems when `undefined`) reserve
 * together, leaving out `selfId`, as one Resource Budget for {@link requireAllocation}.
 * @param currency - Stamped on the result so that its money limit survives the conversion;
 * {@link requireAllocation} compares currencies of the ceiling and the request only.
 */
export function reservedUnder(group: GroupState, parentId: string | undefined, selfId: string, currency: string | undefined): ResourceBudget {
  const parentKey = parentId ?? ''
  const sum = reservedBy(group, parentId)
  const total = zeroUsage()
  if (sum !== undefined) for (const d of USAGE_DIMENSIONS) total[d] = sum[d]
  const self = group.workItems.get(selfId)
  if (self !== undefined && (self.parentWorkItemId ?? '') === parentKey) {
    const own = self.reservedBudget
    for (const d of USAGE_DIMENSIONS) total[d] -= limitOf(own, d) ?? 0
  }
  // Any code keeps the money limit, and none is compared.
  return usageAsBudget(total, currency ?? NO_CURRENCY)
}

function requireResourcesWithin(child: WorkContract, parent: WorkContract): void {
  for (const grant of child.allowedResources) {
    const allowed = parent.allowedResources.find((g) => g.resource === grant.resource)
    const extra = grant.operations.filter((op) => !(allowed?.operations ?? []).includes(op))
    if (extra.length > 0) reject('INVALID_COMMAND', `resource ${grant.resource} allows more than the parent WorkItem (${extra.join(', ')})`, { resource: grant.resource, operations: extra })
  }
}

/** The dependency set of a contract and a Command's `dependencyIds`, reconciled as their union (contract order first). */
export function reconcileDependencies(contract: WorkContract, dependencyIds: readonly string[] | undefined): string[] {
  return [...new Set([...contract.dependencyWorkItemIds, ...(dependencyIds ?? [])])]
}

const SEMVER = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+.*)?$/

/** Orders two Semantic Versioning 2.0 versions like `a - b` (build metadata ignored). */
export function compareSemver(a: string, b: string): number {
  // The same text is the same version: the common case (a card naming the contract's version) parses nothing.
  if (a === b) return 0
  const x = SEMVER.exec(a)
  const y = SEMVER.exec(b)
  if (x === null || y === null) return a < b ? -1 : 1
  for (let i = 1; i <= 3; i++) {
    const d = Number(x[i]) - Number(y[i])
    if (d !== 0) return d
  }
  const [p, q] = [x[4], y[4]]
  if (p === undefined || q === undefined) return p === q ? 0 : p === undefined ? 1 : -1
  const ps = p.split('.')
  const qs = q.split('.')
  for (let i = 0; i < Math.max(ps.length, qs.length); i++) {
    const [s, t] = [ps[i], qs[i]]
    if (s === undefined || t === undefined) return s === undefined ? -1 : 1
    if (s === t) continue
    const [sn, tn] = [/^\d+$/.test(s), /^\d+$/.test(t)]
    if (sn && tn) return Number(s) - Number(t)
    if (sn !== tn) return sn ? -1 : 1
    return s < t ? -1 : 1
  }
  return 0
}

/** The major version of a Semantic Version. */
function majorOf(version: string): string {
  const dot = version.indexOf('.')
  return dot < 0 ? version : version.slice(0, dot)
}

/**
 * The capability of `card` that satisfies `need`: same ID, same major version, and a version equal
 * or higher (§10.3: the contract's version or a compatible higher one).
 */
export function cardCapabilityFor(card: AgentCard, need: CapabilityRef): CapabilityRef | undefined {
  const match = card.capabilities.find((c) => c.id === need.id && majorOf(c.version) === majorOf(need.version) && compareSemver(c.version, need.version) >= 0)
  return match === undefined ? undefined : { id: match.id, version: match.version }
}
