/**
 * The facts the HTML report draws beyond the slot timeline: each Group's WorkItem graph with final
 * states (§10.2, §10.4), the notable Events that are not lease boundaries (offers, reassignments,
 * reviews, Mission decisions), the Artifact provenance graph (§13.1): who produced each Artifact
 * under which Execution Lease, what it was derived from, and what consumed it; the budget ledger
 * of every Mission and WorkItem (§12); every Event in brief; and which Weft and protocol commit
 * made the run.
 *
 * Apart from the build, they are read from the Authority's folded state and accepted Events only,
 * and they are plain JSON data, so a saved `demo-result.json` renders the same page as the live run.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { BudgetLedger, GroupState } from '@weft/authority'
import { type Event, type Evidence, isEventOf } from '@weft/spec'
import { locateBundle } from '@weft/spec/bundle'
import { deliverableOf } from '../demo/review.js'
import { cliVersion } from '../version.js'

/** One WorkItem as a node of its Mission's graph. */
export interface WorkItemNode {
  readonly workItemId: string
  readonly title: string
  /** The final state (§10.2). */
  readonly state: string
  /** The WorkItems it depends on (§10.4): the edges of the graph. */
  readonly dependencyIds: readonly string[]
  /** The Group of the child Mission it was promoted to (§14), if any. */
  readonly childGroupId?: string
}

/** One Group's WorkItem graph. */
export interface MissionGraph {
  readonly groupId: string
  /** For a child Mission: the parent Group and WorkItem it stands for (§14). */
  readonly parent?: { readonly groupId: string; readonly workItemId: string }
  /** In authorization order. */
  readonly workItems: readonly WorkItemNode[]
}

/** Kinds of {@link EventMark}. Lease boundaries (start, checkpoint, preemption, block, submission) come from the slot timeline instead. */
export type MarkKind = 'offer' | 'reassign' | 'unblock' | 'verified' | 'failed' | 'awaiting' | 'changes' | 'approved'

/** A notable Event on the time axis of a Group. */
export interface EventMark {
  readonly atMs: number
  readonly kind: MarkKind
  readonly groupId: string
  readonly workItemId?: string
  /** Agents named by the Event: offer candidates, or the deciding actor. */
  readonly agentIds: readonly string[]
}

/** What consumed an Artifact (§13.1, §13.2). */
export interface ArtifactConsumer {
  /**
   * `review`: the Coordinator's Evidence accepting (or `rejection`: failing) a WorkItem cites it,
   * or the child Mission Approval that verified a promoted WorkItem lists it (§14);
   * `mission`: a Mission submission for Approval lists it (§7.3); `artifact`: a derived Artifact
   * names it as a source; `input`: a Work Contract lists it as an input (§10.1).
   */
  readonly kind: 'review' | 'rejection' | 'mission' | 'artifact' | 'input'
  /** Stable within the report: a WorkItem ID, `groupId@revision`, or a content hash. */
  readonly ref: string
  readonly groupId: string
  /** Mission revision, for `mission`. */
  readonly revision?: number
}

/** One published Artifact with its provenance. */
export interface ArtifactNode {
  readonly artifactId: string
  readonly contentHash: string
  readonly mediaType: string
  /** The Work Contract deliverable it delivers (matched by media type and output schema); absent for other Artifacts. */
  readonly deliverableId?: string
  readonly groupId: string
  readonly workItemId: string
  readonly producerAgentId: string
  readonly executionLeaseId: string
  readonly ownershipEpoch: number
  /** `sourceArtifactHashes` of the manifest. */
  readonly sources: readonly string[]
  readonly consumers: readonly ArtifactConsumer[]
}

/** One Event of a Group log in brief, for the report's Event log. */
export interface EventRow {
  readonly groupId: string
  readonly sequence: number
  readonly kind: string
  readonly actorType: string
  readonly actorId: string
  /** `occurredAt` in epoch milliseconds. */
  readonly atMs: number
}

/** Which software made the run: shown in the report's header. */
export interface ReportBuild {
  /** The version of `@weft/cli`. */
  readonly weftVersion: string
  /** The `commit` of the protocol bundle's `PIN.json`; absent when the run did not find the bundle. */
  readonly protocolCommit?: string
}

/** Everything {@link reportFacts} gathers. */
export interface ReportFacts {
  /** Short names of actors by ID, for labels. */
  readonly names: Readonly<Record<string, string>>
  readonly graphs: readonly MissionGraph[]
  /** In time order. */
  readonly marks: readonly EventMark[]
  /** In publication order, Group by Group. */
  readonly artifacts: readonly ArtifactNode[]
  /**
   * The budget ledger (§12), Group by Group: the Mission's, then each WorkItem's in authorization
   * order. Absent in results saved before the report showed it.
   */
  readonly ledger?: readonly BudgetLedger[]
  /** Every Event of the Groups in brief, Group by Group in sequence order. Absent in older results. */
  readonly events?: readonly EventRow[]
  /** Absent in older results. */
  readonly build?: ReportBuild
}

/** The read side of an Authority that {@link reportFacts} needs. */
export interface FactsSource {
  group(groupId: string): GroupState | undefined
  events(groupId: string): readonly Event[]
  /** The budget ledger of a Group's Mission or of one of its WorkItems (`Authority.budgetLedger`). */
  budgetLedger(groupId: string, workItemId?: string): BudgetLedger | undefined
}

/**
 * Which Weft made this run and against which protocol commit: the version of `@weft/cli`, and the
 * `commit` of `PIN.json` in the protocol bundle when the bundle is where tests and
 * `weft-conformance` look for it (`MWP_PROTOCOL_DIR`, or `../shared/protocol` beside the
 * repository). Never throws: an unreadable bundle counts as missing.
 */
export function reportBuild(): ReportBuild {
  const weftVersion = cliVersion()
  try {
    const pin = join(locateBundle().dir, 'PIN.json')
    const commit = existsSync(pin) ? (JSON.parse(readFileSync(pin, 'utf8')) as { commit?: unknown }).commit : undefined
    return typeof commit === 'string' && /^[0-9a-f]{7,64}$/.test(commit) ? { weftVersion, protocolCommit: commit } : { weftVersion }
  } catch {
    return { weftVersion }
  }
}

/** Names for labels: WorkItem titles and actor names; unknown IDs fall back to the contract goal or the ID. */
export interface FactsNames {
  readonly titles: ReadonlyMap<string, string>
  readonly actors: ReadonlyMap<string, string>
}

const MARKS: Readonly<Partial<Record<string, MarkKind>>> = {
  'work.unblocked': 'unblock',
  'work.result.accepted': 'verified',
  'work.failed': 'failed',
  'mission.submitted_for_approval': 'awaiting',
  'mission.changes_requested': 'changes',
  'mission.approved': 'approved',
}

/** The longest title the graphs keep when falling back to a contract goal. */
const MAX_GOAL_TITLE = 80

/**
 * Gathers the report's facts of the Groups `groupIds` from `source` (an Authority); `build`
 * defaults to {@link reportBuild}.
 * @example
 * ```ts
 * const facts = reportFacts(world.authority, [checkoutGroupId, searchGroupId], { titles, actors })
 * renderReport(result, { facts })
 * ```
 */
export function reportFacts(source: FactsSource, groupIds: readonly string[], names: FactsNames, build: ReportBuild = reportBuild()): ReportFacts {
  const graphs: MissionGraph[] = []
  const marks: EventMark[] = []
  const artifacts: ArtifactNode[] = []
  const parents = new Map<string, { groupId: string; workItemId: string }>()
  const present = groupIds.filter((g) => source.group(g) !== undefined)
  for (const groupId of present) {
    for (const event of source.events(groupId)) {
      if (!isEventOf(event, 'mission.child.created')) continue
      const p = event.payload
      parents.set(p.childGroupId, { groupId, workItemId: p.parentWorkItemId })
    }
  }
  for (const groupId of present) {
    const group = source.group(groupId)!
    const events = source.events(groupId)
    const children = new Map([...parents].filter(([, p]) => p.groupId === groupId).map(([child, p]) => [p.workItemId, child]))
    const parent = parents.get(groupId)
    graphs.push({
      groupId,
      ...(parent === undefined ? {} : { parent }),
      workItems: [...group.workItems.values()].map((r) => {
        const child = children.get(r.doc.workItemId)
        return {
          workItemId: r.doc.workItemId,
          title: names.titles.get(r.doc.workItemId) ?? r.doc.contract.goal.slice(0, MAX_GOAL_TITLE),
          state: r.doc.state,
          dependencyIds: [...r.dependencyIds],
          ...(child === undefined ? {} : { childGroupId: child }),
        }
      }),
    })
    marks.push(...marksOf(groupId, events))
  }
  const consumers = consumersOf(source, present)
  for (const groupId of present) artifacts.push(...artifactsOf(source.group(groupId)!, consumers))
  marks.sort((a, b) => a.atMs - b.atMs)
  const ledger = present.flatMap((groupId) => [undefined, ...source.group(groupId)!.workItems.keys()].map((id) => source.budgetLedger(groupId, id)).filter((l): l is BudgetLedger => l !== undefined))
  const events = present.flatMap((groupId) =>
    source.events(groupId).map((e) => ({ groupId, sequence: e.sequence ?? 0, kind: e.kind, actorType: e.actor.type, actorId: e.actor.id, atMs: Date.parse(e.occurredAt) })),
  )
  return { names: Object.fromEntries(names.actors), graphs, marks, artifacts, ledger, events, build }
}

function marksOf(groupId: string, events: readonly Event[]): EventMark[] {
  const out: EventMark[] = []
  for (const event of events) {
    const atMs = Date.parse(event.occurredAt)
    if (isEventOf(event, 'work.offer.created')) {
      const o = event.payload
      // §10.2: an offer over a lapsed owner's epoch is a reassignment.
      out.push({ atMs, kind: o.fencedOwnershipEpoch === undefined ? 'offer' : 'reassign', groupId, workItemId: o.workItemId, agentIds: [...o.candidateAgentIds] })
      continue
    }
    const kind = MARKS[event.kind]
    if (kind === undefined) continue
    const workItemId = (event.payload as { workItemId?: unknown }).workItemId
    out.push({ atMs, kind, groupId, ...(typeof workItemId === 'string' ? { workItemId } : {}), agentIds: [event.actor.id] })
  }
  return out
}

/** Who consumed each hash, across every Group: a child Mission's Artifacts are consumed by the parent's review (§14). */
function consumersOf(source: FactsSource, groupIds: readonly string[]): Map<string, ArtifactConsumer[]> {
  const consumers = new Map<string, ArtifactConsumer[]>()
  const consume = (hash: string, consumer: ArtifactConsumer): void => {
    const list = consumers.get(hash) ?? []
    if (!list.some((c) => c.kind === consumer.kind && c.ref === consumer.ref)) list.push(consumer)
    consumers.set(hash, list)
  }
  const cited = (evidence: readonly Evidence[]): string[] => [...new Set(evidence.flatMap((e) => e.artifactHashes))]
  for (const groupId of groupIds) {
    for (const event of source.events(groupId)) {
      if (isEventOf(event, 'work.result.accepted')) {
        const p = event.payload
        const hashes = [...cited(p.evidence), ...(p.childApproval?.artifactHashes ?? [])]
        for (const hash of hashes) consume(hash, { kind: 'review', ref: p.workItemId, groupId })
      } else if (isEventOf(event, 'work.failed')) {
        const p = event.payload
        for (const hash of cited(p.evidence)) consume(hash, { kind: 'rejection', ref: p.workItemId, groupId })
      } else if (isEventOf(event, 'mission.submitted_for_approval')) {
        const p = event.payload
        for (const hash of p.artifactHashes) consume(hash, { kind: 'mission', ref: `${groupId}@${p.missionRevision}`, groupId, revision: p.missionRevision })
      }
    }
    const group = source.group(groupId)!
    for (const { manifest } of group.artifacts.values()) {
      for (const from of manifest.sourceArtifactHashes) consume(from, { kind: 'artifact', ref: manifest.contentHash, groupId })
    }
    // §10.1: contract inputs are consumed by the WorkItem that lists them.
    for (const r of group.workItems.values()) for (const input of r.doc.contract.inputArtifacts) consume(input, { kind: 'input', ref: r.doc.workItemId, groupId })
  }
  return consumers
}

/** §13.1: a Group's manifests with their producing lease, sources and consumers. */
function artifactsOf(group: GroupState, consumers: ReadonlyMap<string, readonly ArtifactConsumer[]>): ArtifactNode[] {
  return [...group.artifacts.values()].map(({ manifest, executionLeaseId, ownershipEpoch }) => {
    const deliverable = deliverableOf(group.workItems.get(manifest.workItemId)?.doc.contract, manifest)
    return {
      artifactId: manifest.artifactId,
      contentHash: manifest.contentHash,
      mediaType: manifest.mediaType,
      ...(deliverable === undefined ? {} : { deliverableId: deliverable.deliverableId }),
      groupId: group.groupId,
      workItemId: manifest.workItemId,
      producerAgentId: manifest.producer.agentId,
      executionLeaseId,
      ownershipEpoch,
      sources: [...manifest.sourceArtifactHashes],
      consumers: [...(consumers.get(manifest.contentHash) ?? [])],
    }
  })
}
