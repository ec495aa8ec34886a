/**
 * The report's three graph drawings, all through {@link renderGraph}: a Mission's WorkItem graph
 * with final states (§10.2) and dependency edges (§10.4), the WorkItem and Mission statecharts
 * from their transition rows (§10.2, §7.1), and a Group's Artifact provenance (§13.1).
 * @module
 */
import type { AnyTransitionRow } from '@weft/spec/machines'
import type { ArtifactConsumer, ArtifactNode, MissionGraph } from './facts.js'
import { esc, renderGraph, token, type GraphEdge, type GraphNode } from './svg.js'

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
    lines: [w.childGroupId === undefined ? w.state : `${w.state} · child Mission ${names.groupLabel(w.childGroupId)}`],
    tooltip: `${w.title} (${w.workItemId}): ${w.state}`,
    cls: `st-${token(w.state)}`,
  }))
  const edges: GraphEdge[] = graph.workItems.flatMap((w) =>
    w.dependencyIds.filter((d) => ids.has(d)).map((d) => ({ from: d, to: w.workItemId, tooltip: `${names.title(w.workItemId)} depends on ${names.title(d)}` })),
  )
  return renderGraph(nodes, edges, { id: `work-${graph.groupId}`, caption: `WorkItem graph of ${names.groupLabel(graph.groupId)}`, minNodeWidth: 200 })
}

/** The short name of a machine event on an edge: `work.accept_offer` → `accept_offer`, extension kinds by their last part. */
function shortEvent(event: string): string {
  return event.replace(/^(work|mission|approval)\./, '').replace(/^ext\..*\./, '')
}

/** An event with its guard, as an edge label line: `accept_offer [offerValid]`. */
function eventText(r: AnyTransitionRow): string {
  return `${shortEvent(r.event)}${r.guard === undefined ? '' : ` [${r.guard}]`}`
}

/** A guarded event that leads to one state from at least this many states is drawn once, from an "any of" node. */
const BROADCAST = 4

/** How many state names an "any of" node lists per line. */
const STATES_PER_LINE = 3

/**
 * A statechart from its transition rows: one node per state (with how many of this run's
 * aggregates ended there, and its internal transitions, the events that keep it in the state,
 * marked ↻), one edge per (from, to) pair labelled with every event and guard, and the rows as a
 * table underneath. Events that apply in most states alike (cancel, fail, promotion) come from one
 * "any of" node instead of an edge per state.
 */
export function renderStatechart(id: string, caption: string, rows: readonly AnyTransitionRow[], endedHere: ReadonlyMap<string, number>): string {
  const states = [...new Set(rows.flatMap((r) => [r.from, r.to]))]
  const sourcesOf = new Map<string, Set<string>>()
  const kindOf = (r: AnyTransitionRow): string => `${r.event}\u0000${r.guard ?? ''}\u0000${r.to}`
  for (const r of rows) if (r.from !== r.to) sourcesOf.set(kindOf(r), (sourcesOf.get(kindOf(r)) ?? new Set()).add(r.from))
  const anyOf = new Map<string, string[]>()
  const fromOf = (r: AnyTransitionRow): string => {
    const sources = sourcesOf.get(kindOf(r))
    if (sources === undefined || sources.size < BROADCAST) return r.from
    const list = [...sources]
    const key = `any:${list.join(',')}`
    anyOf.set(key, list)
    return key
  }
  const pairs = new Map<string, { from: string; to: string; rows: AnyTransitionRow[] }>()
  const internal = new Map<string, string[]>()
  for (const r of rows) {
    if (r.from === r.to) {
      const list = internal.get(r.from) ?? []
      if (!list.includes(eventText(r))) list.push(eventText(r))
      internal.set(r.from, list)
      continue
    }
    const from = fromOf(r)
    const key = `${from}\u0000${r.to}`
    const pair = pairs.get(key) ?? { from, to: r.to, rows: [] }
    pair.rows.push(r)
    pairs.set(key, pair)
  }
  const nodes: GraphNode[] = states.map((s) => {
    const n = endedHere.get(s) ?? 0
    const lines = [...(n > 0 ? [`${n} ended here`] : []), ...(internal.get(s) ?? []).map((e) => `↻ ${e}`)]
    return {
      id: s,
      label: s,
      lines,
      tooltip: `${s}${n > 0 ? `: ${n} ended here` : ''}${internal.has(s) ? `; stays ${s} on ${internal.get(s)!.join(', ')}` : ''}`,
      cls: `st-${token(s)}${n > 0 ? ' reached' : ''}`,
    }
  })
  for (const [key, list] of anyOf) {
    const lines: string[] = []
    for (let i = 0; i < list.length; i += STATES_PER_LINE) lines.push(list.slice(i, i + STATES_PER_LINE).join(', '))
    nodes.push({ id: key, label: `any of ${list.length} states`, lines, tooltip: `any of: ${list.join(', ')}`, cls: 'anyof' })
  }
  const edges: GraphEdge[] = [...pairs.values()].map((p) => ({
    from: p.from,
    to: p.to,
    label: [...new Set(p.rows.map(eventText))],
    tooltip: p.rows.map((r) => `${r.from} → ${r.to}: ${r.event}${r.guard === undefined ? '' : ` [${r.guard}]`} (${r.section})`).join('; '),
  }))
  const table = rows
    .map((r) => `<tr><td>${esc(r.from)}</td><td>${esc(r.event)}</td><td>${esc(r.guard ?? '')}</td><td>${esc(r.to)}</td><td>${esc(r.emits.join(', '))}</td><td>${esc(r.section)}</td></tr>`)
    .join('')
  return (
    renderGraph(nodes, edges, { id, caption, minNodeWidth: 110, nodeSep: 14, rankSep: 28, direction: 'TB' }) +
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
      return {
        id: `review:${c.ref}`,
        label: `review of ${names.title(c.ref)}`,
        lines: [c.groupId === groupId ? 'result accepted (§13.2)' : `result accepted in ${names.groupLabel(c.groupId)} (§14)`],
        cls: 'consumer st-verified',
      }
    case 'rejection':
      return { id: `rejection:${c.ref}`, label: `review of ${names.title(c.ref)}`, lines: ['result rejected (§13.2)'], cls: 'consumer st-failed' }
    case 'mission':
      return { id: `mission:${c.ref}`, label: `${names.groupLabel(c.groupId)} submission`, lines: [`Mission revision ${c.revision ?? '?'} for Approval (§7.3)`], cls: 'consumer st-awaiting_approval' }
    case 'artifact':
      return { id: `artifact:${c.ref}`, label: shortHash(c.ref), lines: ['derived Artifact'], tooltip: c.ref, cls: 'artifact' }
    case 'input':
      return { id: `input:${c.ref}`, label: names.title(c.ref), lines: ['Work Contract input (§10.1)'], cls: 'consumer input' }
  }
}

/**
 * A Group's provenance: producing WorkItems, then their Artifacts (named by the deliverable they
 * deliver, with media type, hash, Agent and Execution Lease), then what consumed each one:
 * reviews, Mission submissions, derived Artifacts, inputs.
 */
export function renderProvenance(groupId: string, artifacts: readonly ArtifactNode[], names: GraphNames): string {
  const nodes = new Map<string, GraphNode>()
  const edges: GraphEdge[] = []
  for (const a of artifacts) {
    nodes.set(`item:${a.workItemId}`, { id: `item:${a.workItemId}`, label: names.title(a.workItemId), lines: ['WorkItem'], cls: 'producer' })
  }
  for (const a of artifacts) {
    const id = `artifact:${a.contentHash}`
    const lease = a.executionLeaseId.replace(/^urn:uuid:/, '').slice(0, 8)
    const deliverable = a.deliverableId === undefined ? 'no required deliverable' : `deliverable ${a.deliverableId}`
    nodes.set(id, {
      id,
      label: `${a.deliverableId ?? 'Artifact'} · ${a.mediaType}`,
      lines: [shortHash(a.contentHash), `by ${names.agentName(a.producerAgentId)} · lease ${lease} · epoch ${a.ownershipEpoch}`],
      tooltip: `${a.artifactId} (${deliverable}, ${a.mediaType}) = ${a.contentHash}, produced for ${names.title(a.workItemId)} by ${names.agentName(a.producerAgentId)} under Execution Lease ${a.executionLeaseId}, Ownership Epoch ${a.ownershipEpoch}`,
      cls: 'artifact',
    })
    edges.push({ from: `item:${a.workItemId}`, to: id, tooltip: `${names.title(a.workItemId)} produced ${a.contentHash}` })
  }
  for (const a of artifacts) {
    for (const c of a.consumers) {
      const node = consumerNode(c, names, groupId)
      if (!nodes.has(node.id)) nodes.set(node.id, node)
      edges.push({ from: `artifact:${a.contentHash}`, to: node.id, tooltip: `${a.contentHash} → ${node.label}` })
    }
  }
  return renderGraph([...nodes.values()], edges, { id: `prov-${groupId}`, caption: `Artifact provenance of ${names.groupLabel(groupId)}`, minNodeWidth: 200, nodeSep: 8, rankSep: 60 })
}
