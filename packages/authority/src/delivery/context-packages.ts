/**
 * Context Packages (§13.3): signed, versioned, scoped summaries of a Group's history, handed to
 * late joiners and replacement Coordinators. A package summarizes a stretch of the log and cites
 * the Events it came from; it never replaces them, and it authorizes nothing (§4 invariant 2).
 * @module
 */
import { ProtocolError, sign, UsageError, type SigningKey } from '@weft/codec'
import { type ContextDecision, type ContextPackage, payloadOf } from '@weft/spec'
import type { GroupState, StoredEvent } from '../model.js'

/** A Context Package before its generator signs it. */
export type UnsignedContextPackage = Omit<ContextPackage, 'signature'>

/** What a package covers: the whole Group, or one WorkItem of it (§13.3). */
export interface ContextScope {
  readonly workItemId?: string
}

/** Input of {@link buildContextPackage}. */
export interface BuildContextPackageInput {
  /** The Group summarized; its Mission and Group IDs become the package's. */
  readonly group: GroupState
  /** The Group's Event log (at least the Events from `fromSequence` to `toSequence`). */
  readonly events: readonly StoredEvent[]
  /** First Group sequence summarized (inclusive). */
  readonly fromSequence: number
  /** Last Group sequence summarized (inclusive); at most the Group head. */
  readonly toSequence: number
  readonly scope: ContextScope
  readonly summary: string
  /** Decisions restated, each citing Events of the range. */
  readonly decisions: readonly ContextDecision[]
  readonly constraints: readonly string[]
  readonly unresolvedQuestions: readonly string[]
  /** The generating Agent; it signs the package. */
  readonly generatedBy: { readonly type: 'agent'; readonly id: string }
  readonly generatedAt: string
  /** The version this one supersedes; the new one is `previous.version + 1` and links back to it. */
  readonly previous?: ContextPackage | UnsignedContextPackage
  /** The new version's own ID (each version has its own, §13.3 provenance to the previous). */
  readonly packageId: string
}

/** Whether `event` concerns `workItemId`: by envelope, by payload, or as one of its Artifacts. */
function inScope(event: StoredEvent, scope: ContextScope): boolean {
  if (scope.workItemId === undefined) return true
  if (event.workItemId === scope.workItemId) return true
  const p = event.payload as { workItemId?: unknown; artifact?: { workItemId?: unknown } }
  return p.workItemId === scope.workItemId || p.artifact?.workItemId === scope.workItemId
}

/**
 * Builds an unsigned Context Package over Group sequences `fromSequence..toSequence` (§13.3): the
 * Event IDs of that range within the scope, the content hashes of the Artifacts published there,
 * and the caller's summary, decisions, constraints and open questions. With `previous`, the result
 * is its next version and names it. Sign the result with {@link signContextPackage}.
 * @throws UsageError when the range is empty, beyond the head or not fully present in `events`,
 * when nothing in it falls within the scope, when a decision cites an Event outside the package,
 * or when `previous` belongs to another Group or scope or has the same ID.
 */
export function buildContextPackage(input: BuildContextPackageInput): UnsignedContextPackage {
  const { group, fromSequence, toSequence, scope, previous } = input
  if (!(Number.isSafeInteger(fromSequence) && Number.isSafeInteger(toSequence) && fromSequence >= 1 && fromSequence <= toSequence)) {
    throw new UsageError(`buildContextPackage: bad sequence range ${fromSequence}..${toSequence}`)
  }
  if (toSequence > group.head) throw new UsageError(`buildContextPackage: sequence ${toSequence} is beyond the Group head ${group.head}`)
  if (scope.workItemId !== undefined && !group.workItems.has(scope.workItemId)) {
    throw new UsageError(`buildContextPackage: no WorkItem ${scope.workItemId} in the Group`)
  }
  const range = input.events.filter((e) => e.groupId === group.groupId && (e.sequence as number) >= fromSequence && (e.sequence as number) <= toSequence)
  if (new Set(range.map((e) => e.sequence)).size !== toSequence - fromSequence + 1) {
    throw new UsageError(`buildContextPackage: the log given does not hold every Event of ${fromSequence}..${toSequence}`)
  }
  range.sort((a, b) => (a.sequence as number) - (b.sequence as number))
  const scoped = range.filter((e) => inScope(e, scope))
  if (scoped.length === 0) throw new UsageError('buildContextPackage: no Event of the range falls within the scope')
  const eventIds = scoped.map((e) => e.eventId)
  const cited = new Set(eventIds)
  for (const d of input.decisions) {
    const stray = d.sourceEventIds.find((id) => !cited.has(id))
    if (stray !== undefined) throw new UsageError(`buildContextPackage: decision cites ${stray}, which is not among the package's source Events`)
  }
  const artifactHashes = new Set<string>()
  for (const e of scoped) {
    const published = payloadOf(e, 'artifact.published')
    if (published !== undefined) artifactHashes.add(published.artifact.contentHash)
  }
  if (previous !== undefined) {
    if (previous.groupId !== group.groupId || previous.missionId !== group.missionId || previous.workItemId !== scope.workItemId) {
      throw new UsageError('buildContextPackage: the previous version has another Mission, Group or scope')
    }
    if (previous.contextPackageId === input.packageId) throw new UsageError('buildContextPackage: a new version needs its own package ID')
  }
  return {
    contextPackageId: input.packageId,
    version: previous === undefined ? 1 : previous.version + 1,
    ...(previous === undefined ? {} : { previousContextPackageId: previous.contextPackageId }),
    missionId: group.missionId,
    groupId: group.groupId,
    ...(scope.workItemId === undefined ? {} : { workItemId: scope.workItemId }),
    sourceEventRange: { fromSequence, toSequence, eventIds },
    artifactHashes: [...artifactHashes],
    summary: input.summary,
    decisions: input.decisions.map((d) => ({ description: d.description, sourceEventIds: [...d.sourceEventIds] })),
    constraints: [...input.constraints],
    unresolvedQuestions: [...input.unresolvedQuestions],
    generatedBy: { type: 'agent', id: input.generatedBy.id },
    generatedAt: input.generatedAt,
  }
}

/**
 * Signs a package as its generating Agent (§6.4 `context-package` profile: the signer is
 * `generatedBy`, the protected time `generatedAt`).
 */
export function signContextPackage(pkg: UnsignedContextPackage, key: SigningKey): ContextPackage {
  return sign('context-package', pkg, key) as unknown as ContextPackage
}

/**
 * Checks that a package may enter the context of `group` (§13.3, §4 invariant 9): it must belong
 * to the same Mission and Group (another Mission's content never enters by default), its scope
 * must be a WorkItem of the Group, and it may cite only Events the Group has appended.
 * @throws ProtocolError `AUTH_FORBIDDEN` for another Mission's or Group's package;
 * `INVALID_COMMAND` for a range beyond the Group head, a malformed range or an unknown WorkItem.
 */
export function checkContextPackageScope(pkg: UnsignedContextPackage, group: GroupState): void {
  if (pkg.missionId !== group.missionId || pkg.groupId !== group.groupId) {
    throw new ProtocolError('AUTH_FORBIDDEN', 'the context package belongs to another Mission or Group')
  }
  const { fromSequence, toSequence, eventIds } = pkg.sourceEventRange
  if (fromSequence > toSequence || eventIds.length > toSequence - fromSequence + 1) {
    throw new ProtocolError('INVALID_COMMAND', 'the context package source Event range is malformed')
  }
  if (toSequence > group.head) {
    throw new ProtocolError('INVALID_COMMAND', 'the context package cites Events beyond the Group head', { details: { toSequence, head: group.head } })
  }
  if (pkg.workItemId !== undefined && !group.workItems.has(pkg.workItemId)) {
    throw new ProtocolError('INVALID_COMMAND', 'the context package scope names an unknown WorkItem')
  }
}
