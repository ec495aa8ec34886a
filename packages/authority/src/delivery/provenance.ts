/**
 * The provenance graph of a Group's Artifacts (§13.1): each published manifest links its content
 * hash to the hashes it was derived from. The queries here are pure reads over the manifests the
 * Group holds, so reviewers and Evidence checks (§13.2) can resolve every hash they cite to the
 * Agent, card, capability, tool and model versions that produced it (§6.1).
 * @module
 */
import type { Artifact, ArtifactProducer, ModelVersion, ToolVersion } from '@weft/spec'
import type { GroupState } from '../model.js'

/** Who and what produced one published Artifact (§6.1, §13.1). */
export interface ProducedBy {
  readonly artifactId: string
  readonly workItemId: string
  readonly producer: ArtifactProducer
  readonly toolVersions: readonly ToolVersion[]
  readonly modelVersions: readonly ModelVersion[]
  readonly createdAt: string
}

/**
 * Read-only queries over one Group's provenance graph. Hashes are `sha256:` content hashes; one
 * hash may be published by several manifests (same bytes, different Artifact IDs), and the graph
 * then merges their edges. The index is a snapshot of the Group when it was made.
 */
export interface ProvenanceIndex {
  /** Whether the Group knows `hash`: a published Artifact's content or a Work Contract input (§10.1). */
  isKnown(hash: string): boolean
  /** The manifests published with content `hash`, in publication order. */
  manifests(hash: string): readonly Artifact[]
  /** The direct sources of `hash` (its manifests' `sourceArtifactHashes`). */
  sources(hash: string): readonly string[]
  /** The hashes directly derived from `hash` (published with it among their sources). */
  derived(hash: string): readonly string[]
  /** Every hash `hash` was transitively derived from, nearest first; never `hash` itself. */
  ancestors(hash: string): readonly string[]
  /** Every hash transitively derived from `hash`, nearest first; never `hash` itself. */
  descendants(hash: string): readonly string[]
  /** The producer records of every manifest with content `hash`. */
  producedBy(hash: string): readonly ProducedBy[]
  /** The manifests published for a WorkItem, in publication order. */
  forWorkItem(workItemId: string): readonly Artifact[]
}

function push<V>(map: Map<string, V[]>, key: string, value: V): void {
  const list = map.get(key)
  if (list === undefined) map.set(key, [value])
  else if (!list.includes(value)) list.push(value)
}

/** Breadth-first walk from `start` along `next`; the visited set makes it safe on cycles. */
function walk(start: string, next: (hash: string) => readonly string[]): string[] {
  const seen = new Set<string>([start])
  const order: string[] = []
  const queue = [start]
  for (let i = 0; i < queue.length; i++) {
    for (const n of next(queue[i]!)) {
      if (seen.has(n)) continue
      seen.add(n)
      order.push(n)
      queue.push(n)
    }
  }
  return order
}

/**
 * Builds the {@link ProvenanceIndex} of `group` from its published manifests and its WorkItems'
 * contract inputs. Costs one pass over both; the Group is not modified.
 * @example
 * ```ts
 * const provenance = createProvenanceIndex(group)
 * for (const hash of evidence.artifactHashes) if (!provenance.isKnown(hash)) throw ...
 * provenance.ancestors(finalReportHash) // everything the report was derived from
 * ```
 */
export function createProvenanceIndex(group: GroupState): ProvenanceIndex {
  const byHash = new Map<string, Artifact[]>()
  const sourcesOf = new Map<string, string[]>()
  const derivedOf = new Map<string, string[]>()
  const byWorkItem = new Map<string, Artifact[]>()
  const inputs = new Set<string>()
  for (const { manifest } of group.artifacts.values()) {
    push(byHash, manifest.contentHash, manifest)
    push(byWorkItem, manifest.workItemId, manifest)
    for (const source of manifest.sourceArtifactHashes) {
      push(sourcesOf, manifest.contentHash, source)
      push(derivedOf, source, manifest.contentHash)
    }
  }
  // §10.1: contract inputs are provenance roots the Group knows without a manifest.
  for (const record of group.workItems.values()) for (const input of record.doc.contract.inputArtifacts) inputs.add(input)
  const sources = (hash: string): readonly string[] => sourcesOf.get(hash) ?? []
  const derived = (hash: string): readonly string[] => derivedOf.get(hash) ?? []
  return {
    isKnown: (hash) => byHash.has(hash) || inputs.has(hash),
    manifests: (hash) => byHash.get(hash) ?? [],
    sources,
    derived,
    ancestors: (hash) => walk(hash, sources),
    descendants: (hash) => walk(hash, derived),
    producedBy: (hash) =>
      (byHash.get(hash) ?? []).map((m) => ({
        artifactId: m.artifactId,
        workItemId: m.workItemId,
        producer: m.producer,
        toolVersions: m.toolVersions,
        modelVersions: m.modelVersions,
        createdAt: m.createdAt,
      })),
    forWorkItem: (workItemId) => byWorkItem.get(workItemId) ?? [],
  }
}
