/**
 * The report's three graph drawings, all through {@link renderGraph}: a Mission's WorkItem graph
 * with final states (§10.2) and dependency edges (§10.4), the WorkItem and Mission statecharts
 * from their transition rows (§10.2, §7.1), and a Group's Artifact provenance (§13.1).
 * @module
 */
import type { AnyTransitionRow } from '@weft/spec/machines'
import type { ArtifactConsumer, ArtifactNode, MissionGraph } from './facts.js'
import { clip, esc, layersOf, renderGraph, token, type GraphEdge, type GraphNode } from './svg.js'

/** Names the drawings need. */
export interface GraphNames {
  agentName(agentId: string): string
  title(workItemId: string): string
  groupLabel(groupId: string): string
}

/**
 * A Mission's WorkItems as nodes coloured by final state, in columns by dependency depth, with an
 * edge from each dependency to its dependant.
 */
export function renderWorkGraph(graph: MissionGraph, names: GraphNames): string {
  const ids = new Set(graph.workItems.map((w) => w.workItemId))
  const nodes: GraphNode[] = graph.workItems.map((w) => ({
    id: w.workItemId,
    label: w.title,
    sub: w.childGroupId === undefined ? w.state : `${w.state} · child Mission ${names.groupLabel(w.childGroupId)}`,
    tooltip: `${w.title} (${w.workItemId}): ${w.state}`,
    cls: `st-${token(w.state)}`,
  }))
  const edges: GraphEdge[] = graph.workItems.flatMap((w) =>
    w.dependencyIds.filter((d) => ids.has(d)).map((d) => ({ from: d, to: w.workItemId, tooltip: `${names.title(w.workItemId)} depends on ${names.title(d)}` })),
  )
  return renderGraph(nodes, edges, { id: `work-${graph.groupId}`, caption: `WorkItem graph of ${names.groupLabel(graph.groupId)}`, nodeWidth: 240, nodeHeight: 40 })
}

/** The short name of a machine event on an edge: `work.accept_offer` → `accept_offer`, extension kinds by their last part. */
function shortEvent(event: string): string {
  return event.replace(/^(work|mission|approval)\./, '').replace(/^ext\..*\./, '')
}

/** A guarded event that leads to one state from at least this many states is drawn once, from an "any of" node. */
const BROADCAST = 4

/**
 * A statechart from its transition rows: one node per state (with how many of this run's
 * aggregates ended there), one edge per (from, to) pair labelled with its events, guards in the
 * tooltip, and the rows as a table underneath. Events that apply in most states alike (cancel,
 * fail, promotion) come from one "any of" node instead of an edge per state.
 */
export function renderStatechart(id: string, caption: string, rows: readonly AnyTransitionRow[], endedHere: ReadonlyMap<string, number>): string {
  const states = [...new Set(rows.flatMap((r) => [r.from, r.to]))]
  const sourcesOf = new Map<string, Set<string>>()
  const kindOf = (r: AnyTransitionRow): string => `${r.event}\u0000${r.guard ?? ''}\u0000${r.to}`
  for (const r of rows) if (r.from !== r.to) sourcesOf.set(kindOf(r), (sourcesOf.get(kindOf(r)) ?? new Set()).add(r.from))
  const anyOf = new Map<string, string[]>()
  const fromOf = (r: AnyTransitionRow): string => {
    const sources = sourcesOf.get(kindOf(r))
    if (r.from === r.to || sources === undefined || sources.size < BROADCAST) return r.from
    const list = [...sources]
    const key = `any:${list.join(',')}`
    anyOf.set(key, list)
    return key
  }
  const pairs = new Map<string, { from: string; to: string; rows: AnyTransitionRow[] }>()
  for (const r of rows) {
    const from = fromOf(r)
    const key = `${from}\u0000${r.to}`
    const pair = pairs.get(key) ?? { from, to: r.to, rows: [] }
    pair.rows.push(r)
    pairs.set(key, pair)
  }
  const nodes: GraphNode[] = states.map((s) => {
    const n = endedHere.get(s) ?? 0
    return { id: s, label: s, ...(n > 0 ? { sub: `${n} ended here` } : {}), cls: `st-${token(s)}${n > 0 ? ' reached' : ''}` }
  })
  const edges: GraphEdge[] = [...pairs.values()].map((p) => {
    const events = [...new Set(p.rows.map((r) => shortEvent(r.event)))]
    return {
      from: p.from,
      to: p.to,
      label: clip(events.join(', '), 16),
      tooltip: `${p.rows.map((r) => `${r.from} → ${r.to}: ${r.event}${r.guard === undefined ? '' : ` [${r.guard}]`} (${r.section})`).join('; ')}`,
    }
  })
  // States take their columns from every row; an "any of" node joins the column of its
  // latest state, so its edges run forward.
  const layer = layersOf(
    states,
    rows.map((r) => ({ from: r.from, to: r.to })),
  )
  const placed: GraphNode[] = nodes.map((n) => ({ ...n, layer: layer.get(n.id) ?? 0 }))
  for (const [key, list] of anyOf) {
    placed.push({ id: key, label: `any of ${list.length} states`, sub: list.join(', '), tooltip: `any of: ${list.join(', ')}`, cls: 'anyof', layer: Math.max(...list.map((s) => layer.get(s) ?? 0)) })
  }
  const table = rows
    .map((r) => `<tr><td>${esc(r.from)}</td><td>${esc(r.event)}</td><td>${esc(r.guard ?? '')}</td><td>${esc(r.to)}</td><td>${esc(r.emits.join(', '))}</td><td>${esc(r.section)}</td></tr>`)
    .join('')
  return (
    renderGraph(placed, edges, { id, caption, nodeWidth: 136, nodeHeight: 36, gapX: 96, gapY: 24 }) +
    `<details><summary>${esc(`${rows.length} transition rows of ${caption}`)}</summary><table class="rows"><thead><tr><th>from</th><th>event</th><th>guard</th><th>to</th><th>emits</th><th>§</th></tr></thead><tbody>${table}</tbody></table></details>`
  )
}

/** `sha256:abcdef…` shortened for a label. */
function shortHash(hash: string): string {
  return `${hash.slice(0, 'sha256:'.length + 10)}…`
}

function consumerNode(c: ArtifactConsumer, names: GraphNames, groupId: string): GraphNode {
  switch (c.kind) {
    case 'review':
      // §14: a child Mission's Artifacts are accepted by the parent Group's review of the promoted WorkItem.
      return { id: `review:${c.ref}`, label: `review of ${names.title(c.ref)}`, sub: c.groupId === groupId ? 'result accepted (§13.2)' : `result accepted in ${names.groupLabel(c.groupId)} (§14)`, cls: 'consumer st-verified' }
    case 'rejection':
      return { id: `rejection:${c.ref}`, label: `review of ${names.title(c.ref)}`, sub: 'result rejected (§13.2)', cls: 'consumer st-failed' }
    case 'mission':
      return { id: `mission:${c.ref}`, label: `${names.groupLabel(c.groupId)} submission`, sub: `Mission revision ${c.revision ?? '?'} for Approval (§7.3)`, cls: 'consumer st-awaiting_approval' }
    case 'artifact':
      return { id: `artifact:${c.ref}`, label: shortHash(c.ref), sub: 'derived Artifact', tooltip: c.ref, cls: 'artifact' }
    case 'input':
      return { id: `input:${c.ref}`, label: names.title(c.ref), sub: 'Work Contract input (§10.1)', cls: 'consumer' }
  }
}

/**
 * A Group's provenance: producing WorkItems, then their Artifacts (with Agent and Execution
 * Lease), then what consumed each one: reviews, Mission submissions, derived Artifacts, inputs.
 */
export function renderProvenance(groupId: string, artifacts: readonly ArtifactNode[], names: GraphNames): string {
  const nodes = new Map<string, GraphNode>()
  const edges: GraphEdge[] = []
  for (const a of artifacts) {
    nodes.set(`item:${a.workItemId}`, { id: `item:${a.workItemId}`, label: names.title(a.workItemId), sub: 'WorkItem', cls: 'producer', layer: 0 })
  }
  for (const a of artifacts) {
    const id = `artifact:${a.contentHash}`
    const lease = a.executionLeaseId.replace(/^urn:uuid:/, '').slice(0, 8)
    nodes.set(id, {
      id,
      label: `${shortHash(a.contentHash)} ${a.mediaType}`,
      sub: `by ${names.agentName(a.producerAgentId)} · lease ${lease} · epoch ${a.ownershipEpoch}`,
      tooltip: `${a.artifactId} (${a.mediaType}) = ${a.contentHash}, produced for ${names.title(a.workItemId)} by ${names.agentName(a.producerAgentId)} under Execution Lease ${a.executionLeaseId}, Ownership Epoch ${a.ownershipEpoch}`,
      cls: 'artifact',
      layer: 1,
    })
    edges.push({ from: `item:${a.workItemId}`, to: id, tooltip: `${names.title(a.workItemId)} produced ${a.contentHash}` })
  }
  for (const a of artifacts) {
    for (const c of a.consumers) {
      const node = consumerNode(c, names, groupId)
      if (!nodes.has(node.id)) nodes.set(node.id, { ...node, layer: 2 })
      edges.push({ from: `artifact:${a.contentHash}`, to: node.id, tooltip: `${a.contentHash} → ${node.label}` })
    }
  }
  return renderGraph([...nodes.values()], edges, { id: `prov-${groupId}`, caption: `Artifact provenance of ${names.groupLabel(groupId)}`, nodeWidth: 250, nodeHeight: 36, gapX: 60, gapY: 8 })
}
