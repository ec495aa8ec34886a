/**
 * Graph layouts of the Mission view with dagre: the WorkItem dependency graph (§10.4) and the
 * provenance graph of Artifacts and Evidence (§13.1, §13.2). Pure: IDs in, coordinates out; the
 * SVG is drawn by Preact elements elsewhere.
 * @module
 */
import dagre from '@dagrejs/dagre'
import type { GroupView } from './model.js'

/** A laid-out node. */
export interface LaidNode {
  readonly id: string
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}

/** A laid-out edge: a polyline. */
export interface LaidEdge {
  readonly from: string
  readonly to: string
  readonly points: readonly { readonly x: number; readonly y: number }[]
  /** `dependency`, `parent`, `source`, `produced`, `cites`, `checks`. */
  readonly kind: string
}

/** A laid-out graph. */
export interface Layout {
  readonly nodes: readonly LaidNode[]
  readonly edges: readonly LaidEdge[]
  readonly width: number
  readonly height: number
}

interface Input {
  readonly nodes: readonly { readonly id: string; readonly width: number; readonly height: number }[]
  readonly edges: readonly { readonly from: string; readonly to: string; readonly kind: string }[]
  readonly direction?: 'LR' | 'TB'
}

/** Lays out `input` left to right with dagre. Edges to unknown nodes are dropped. */
export function layoutGraph(input: Input): Layout {
  const g = new dagre.graphlib.Graph({ multigraph: true })
  g.setGraph({ rankdir: input.direction ?? 'LR', nodesep: 18, ranksep: 48, marginx: 12, marginy: 12 })
  g.setDefaultEdgeLabel(() => ({}))
  const ids = new Set<string>()
  for (const n of input.nodes) {
    g.setNode(n.id, { width: n.width, height: n.height })
    ids.add(n.id)
  }
  const edges = input.edges.filter((e) => ids.has(e.from) && ids.has(e.to) && e.from !== e.to)
  edges.forEach((e, i) => g.setEdge(e.from, e.to, {}, `e${i}`))
  dagre.layout(g)
  const nodes: LaidNode[] = input.nodes.map((n) => {
    const laid = g.node(n.id) as { x: number; y: number }
    return { id: n.id, x: laid.x, y: laid.y, width: n.width, height: n.height }
  })
  const laidEdges: LaidEdge[] = edges.map((e, i) => {
    const laid = g.edge({ v: e.from, w: e.to, name: `e${i}` }) as { points?: { x: number; y: number }[] } | undefined
    return { from: e.from, to: e.to, kind: e.kind, points: laid?.points ?? [] }
  })
  const graph = g.graph() as { width?: number; height?: number }
  return { nodes, edges: laidEdges, width: Math.max(graph.width ?? 0, 1), height: Math.max(graph.height ?? 0, 1) }
}

/** Node size of a WorkItem box. */
export const WORK_NODE = { width: 200, height: 54 } as const

/** The WorkItem graph: dependency → dependent (§10.4), parent → sub-work. */
export function workGraph(view: GroupView): Layout {
  const items = [...view.workItems.values()]
  return layoutGraph({
    nodes: items.map((w) => ({ id: w.workItemId, ...WORK_NODE })),
    edges: items.flatMap((w) => [
      ...w.dependencyIds.map((d) => ({ from: d, to: w.workItemId, kind: 'dependency' })),
      ...(w.parentWorkItemId === undefined ? [] : [{ from: w.parentWorkItemId, to: w.workItemId, kind: 'parent' }]),
    ]),
  })
}

/** A node of the provenance graph. */
export interface ProvenanceNode {
  readonly id: string
  readonly type: 'artifact' | 'work' | 'evidence'
  /** What it refers to: content hash, WorkItem ID or Evidence ID. */
  readonly ref: string
}

/** Node size of a provenance box. */
export const PROVENANCE_NODE = { width: 190, height: 44 } as const

/**
 * The provenance graph (§13.1, §13.2): source Artifact → derived Artifact → the WorkItem that
 * produced it → the Evidence about that WorkItem; Evidence that cites an Artifact links it too.
 */
export function provenanceGraph(view: GroupView): { readonly layout: Layout; readonly nodes: ReadonlyMap<string, ProvenanceNode> } {
  const nodes = new Map<string, ProvenanceNode>()
  const edges: { from: string; to: string; kind: string }[] = []
  const artifactNode = (hash: string): string => {
    const id = `a:${hash}`
    if (!nodes.has(id)) nodes.set(id, { id, type: 'artifact', ref: hash })
    return id
  }
  const workNode = (workItemId: string): string => {
    const id = `w:${workItemId}`
    if (!nodes.has(id)) nodes.set(id, { id, type: 'work', ref: workItemId })
    return id
  }
  for (const { manifest } of view.artifacts.values()) {
    const a = artifactNode(manifest.contentHash)
    for (const source of manifest.sourceArtifactHashes) edges.push({ from: artifactNode(source), to: a, kind: 'source' })
    edges.push({ from: a, to: workNode(manifest.workItemId), kind: 'produced' })
  }
  for (const { evidence } of view.evidence.values()) {
    const id = `e:${evidence.evidenceId}`
    nodes.set(id, { id, type: 'evidence', ref: evidence.evidenceId })
    edges.push({ from: workNode(evidence.workItemId), to: id, kind: 'checks' })
    for (const hash of evidence.artifactHashes) edges.push({ from: artifactNode(hash), to: id, kind: 'cites' })
  }
  const layout = layoutGraph({ nodes: [...nodes.values()].map((n) => ({ id: n.id, ...PROVENANCE_NODE })), edges })
  return { layout, nodes }
}
