/**
 * `renderReport`: the demo's visual report as one self-contained HTML page (inline CSS and SVG,
 * no scripts, nothing fetched): the timelines in virtual time, both Missions' WorkItem graphs and
 * the child Mission's, the two statecharts, the failure injections and checks, and the Artifact
 * provenance graph. It is a pure function of a {@link DemoResult} (live or read back from
 * `demo-result.json`) and of the fault and check records a failure suite adds.
 * @module
 */
import { MISSION_TRANSITIONS, WORK_ITEM_TRANSITIONS } from '@weft/spec/machines'
import type { DemoResult } from '../demo/run.js'
import { END_STYLES, legendItem, MARK_STYLES, paletteColor, renderGroupGantt, renderSlotGantt, swatch, type GanttContext } from './gantt.js'
import { renderProvenance, renderStatechart, renderWorkGraph, type GraphNames } from './graphs.js'
import { elapsedText, esc, token } from './svg.js'

/** One injected failure and what was seen (§22 failure suite); the shape a failure suite records. */
export interface ReportFault {
  readonly name: string
  /** Epoch milliseconds of virtual time. */
  readonly atMs: number
  readonly expected: string
  readonly observed: string
  readonly held: boolean
}

/** One post-run check and whether it held. */
export interface ReportCheck {
  readonly name: string
  readonly held: boolean
  readonly detail: string
}

/** What {@link renderReport} adds to the result. */
export interface ReportExtra {
  /** Injected failures; absent when the run injected none. */
  readonly faults?: readonly ReportFault[]
  /** Post-run checks; when absent, the checks the result itself answers are shown. */
  readonly checks?: readonly ReportCheck[]
  /** The page title; default `Weft demo report (seed N)`. */
  readonly title?: string
}

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1d1f;margin:0 auto;padding:16px 24px 48px;max-width:1400px}
h1{font-size:24px;margin:8px 0 4px}h2{font-size:19px;margin:32px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f4f4f6}
td.num{text-align:right;font-variant-numeric:tabular-nums}.held{color:#1b7a2e;font-weight:600}.broken{color:#c62828;font-weight:600}
.scroll{overflow-x:auto;border:1px solid #eee;border-radius:6px;padding:4px;margin:4px 0}
ul.legend{list-style:none;padding:0;margin:6px 0;display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px}ul.legend li{display:flex;align-items:center;gap:5px}
.note{color:#555}code{font-size:12px}details{margin:6px 0}table.rows{font-size:12px}
svg text{font-family:system-ui,sans-serif}svg.graph,svg.gantt{max-width:100%;height:auto}
.gantt .band{fill:#fff}.gantt .band.even{fill:#f6f7f9}.gantt .grid{stroke:#e2e2e6}.gantt .tick{font-size:10px;fill:#666}.gantt .rowlabel{font-size:12px;fill:#333}
.graph .node rect{fill:#f5f5f7;stroke:#8a8a8e;stroke-width:1.2}.graph .node text{font-size:12px;fill:#1d1d1f}.graph .node text.sub{font-size:10px;fill:#555}
.graph .edge path{fill:none;stroke:#8a8a8e;stroke-width:1.2}.graph .edge.back path{stroke-dasharray:4 3}.graph marker path{fill:#8a8a8e}
.graph .elabel{font-size:10px;fill:#444;paint-order:stroke;stroke:#fff;stroke-width:3px}
.graph .st-verified rect,.graph .st-approved rect{fill:#e3f4e1;stroke:#2e7d32}.graph .st-failed rect{fill:#fde3e3;stroke:#c62828}
.graph .st-cancelled rect{fill:#eee;stroke:#777}.graph .st-blocked rect{fill:#fff4d6;stroke:#d98c00}.graph .st-active rect{fill:#e1eefa;stroke:#1f77b4}
.graph .st-submitted rect{fill:#eef8ec;stroke:#66a85f}.graph .st-awaiting_approval rect{fill:#f1e8f8;stroke:#6a3d9a}
.graph .st-open rect,.graph .st-offered rect,.graph .st-queued rect{fill:#eef0fd;stroke:#5b5bd6}.graph .st-none rect{fill:#fff;stroke-dasharray:3 2}
.graph .reached rect{stroke-width:2.4}.graph .artifact rect{fill:#fffbe8;stroke:#b38f00}.graph .producer rect{fill:#e9f1fb;stroke:#4e79a7}.graph .anyof rect{fill:#fafafa;stroke:#999;stroke-dasharray:2 2}
`

function table(head: readonly string[], rows: readonly (readonly string[])[], cls = ''): string {
  return `<table${cls === '' ? '' : ` class="${cls}"`}><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.join('')}</tr>`).join('')}</tbody></table>`
}

const td = (text: string | number, cls = ''): string => `<td${cls === '' ? '' : ` class="${cls}"`}>${esc(text)}</td>`
const heldCell = (held: boolean): string => `<td class="${held ? 'held' : 'broken'}">${held ? 'held' : 'broken'}</td>`

/** The checks a result answers by itself, shown when no verifier's checks are given. */
function resultChecks(result: DemoResult): ReportCheck[] {
  const roots = result.missions.filter((m) => !result.facts.graphs.some((g) => g.groupId === m.groupId && g.parent !== undefined))
  const repeated = result.sideEffects.filter((s) => s.calls !== 1)
  return [
    { name: 'Both root Missions approved', held: result.approved, detail: roots.map((m) => `${m.label}: ${m.state}`).join(', ') },
    { name: 'Every external side effect performed once per idempotency key (§16)', held: repeated.length === 0, detail: `${result.sideEffects.length} key(s), ${repeated.length} repeated` },
    { name: 'No refusals or lost leases logged by the actors', held: result.warnings.length === 0, detail: `${result.warnings.length} warning(s)` },
  ]
}

/**
 * Renders the report page of `result`.
 * @returns A complete HTML document; every name, title and reason in it is escaped.
 * @example
 * ```ts
 * const { result } = await runDemo({ seed: 1 })
 * await writeFile('weft-report/index.html', renderReport(result))
 * ```
 */
export function renderReport(result: DemoResult, extra: ReportExtra = {}): string {
  const facts = result.facts
  const titles = new Map(facts.graphs.flatMap((g) => g.workItems.map((w) => [w.workItemId, w.title] as const)))
  const labels = new Map(result.missions.map((m) => [m.groupId, m.label]))
  const names: GraphNames = {
    agentName: (id) => facts.names[id] ?? id,
    title: (id) => titles.get(id) ?? id,
    groupLabel: (id) => labels.get(id) ?? id,
  }
  const ctx: GanttContext = { startMs: result.startMs, endMs: result.endMs, groups: result.missions.map((m) => ({ groupId: m.groupId, label: m.label })), ...names }
  const agents = [...new Set(result.timeline.map((r) => r.agentId))].sort((a, b) => names.agentName(a).localeCompare(names.agentName(b)))
  const title = extra.title ?? `Weft demo report (seed ${result.seed})`
  const out: string[] = []

  out.push(`<header><h1>${esc(title)}</h1><p class="note">MissionWeaveProtocol 0.1 proof of concept (§22): ${esc(elapsedText(result.endMs - result.startMs).slice(1))} of virtual time from ${esc(new Date(result.startMs).toISOString())}, ${result.rounds} rounds. ${result.approved ? 'Both Missions were approved.' : 'Not every Mission was approved.'}</p></header>`)
  out.push('<section id="missions"><h2>Missions</h2>')
  out.push(
    table(
      ['Mission', 'Title', 'Final state', 'Revision', 'Events', 'Change requests', 'Submitted Artifacts'],
      result.missions.map((m) => [td(m.label), td(m.title), `<td class="mission-state st-${token(m.state)}">${esc(m.state)}</td>`, td(m.revision, 'num'), td(m.events, 'num'), td(m.changeRequests, 'num'), td(m.artifactHashes.length, 'num')]),
    ),
  )
  out.push(`<details><summary>Counts</summary>${table(['What', 'How many'], Object.entries(result.counts).map(([k, v]) => [td(k), td(v, 'num')]))}</details></section>`)

  // (1) Timelines.
  out.push('<section id="timeline"><h2>Timeline</h2>')
  out.push(`<p class="note">${result.timeline.length} Execution Leases; each bar runs from <code>work.started</code> to the Event that ended the lease (§11.3). Hover a bar or marker for details.</p>`)
  out.push(`<h3>By Worker slot</h3><ul class="legend">${ctx.groups.map((g, i) => swatch(paletteColor(i), g.label)).join('')}</ul><div class="scroll">${renderSlotGantt(result.timeline, ctx)}</div>`)
  out.push(`<h3>By Group</h3><ul class="legend">${agents.map((a, i) => swatch(paletteColor(i), names.agentName(a))).join('')}</ul><div class="scroll">${renderGroupGantt(result.timeline, facts.marks, agents, ctx)}</div>`)
  const ends = Object.entries(END_STYLES).map(([k, s]) => legendItem(s, `end-${k}`))
  const marks = Object.entries(MARK_STYLES).map(([k, s]) => legendItem(s, `mark-${k}`))
  out.push(`<ul class="legend" id="legend">${[...ends, ...marks].join('')}</ul></section>`)

  // (2) WorkItem graphs, child Missions after their parent.
  out.push('<section id="graphs"><h2>WorkItem graphs</h2>')
  for (const g of facts.graphs) {
    const m = result.missions.find((x) => x.groupId === g.groupId)
    const parent = g.parent === undefined ? '' : ` — child Mission of ${names.title(g.parent.workItemId)} (${names.groupLabel(g.parent.groupId)})`
    out.push(`<h3 class="graph-title" data-group="${esc(g.groupId)}">${esc(`${m?.title ?? g.groupId} (${names.groupLabel(g.groupId)}): ${m?.state ?? 'unknown'}${parent}`)}</h3>`)
    out.push(`<div class="scroll">${renderWorkGraph(g, names)}</div>`)
  }
  out.push('</section>')

  // (3) Statecharts, with how many of this run's aggregates ended in each state.
  const itemEnds = new Map<string, number>()
  for (const g of facts.graphs) for (const w of g.workItems) itemEnds.set(w.state, (itemEnds.get(w.state) ?? 0) + 1)
  const missionEnds = new Map<string, number>()
  for (const m of result.missions) missionEnds.set(m.state, (missionEnds.get(m.state) ?? 0) + 1)
  out.push('<section id="statecharts"><h2>Statecharts</h2>')
  out.push(`<h3>WorkItem (§10.2)</h3><div class="scroll">${renderStatechart('chart-work', 'the WorkItem machine', WORK_ITEM_TRANSITIONS, itemEnds)}</div>`)
  out.push(`<h3>Mission (§7.1)</h3><div class="scroll">${renderStatechart('chart-mission', 'the Mission machine', MISSION_TRANSITIONS, missionEnds)}</div>`)
  out.push('<p class="note">Dashed edges go back in the lifecycle; guards and sections are in each edge\'s tooltip and in the tables.</p></section>')

  // (4) Failure injections and checks.
  out.push('<section id="faults"><h2>Failure injections and checks</h2>')
  const faults = extra.faults ?? []
  out.push(
    faults.length === 0
      ? '<p class="note">This run injected no failures.</p>'
      : table(
          ['Injection', 'At', 'Expected', 'Observed', 'Outcome'],
          faults.map((f) => [td(f.name), td(elapsedText(f.atMs - result.startMs)), td(f.expected), td(f.observed), heldCell(f.held)]),
          'faults',
        ),
  )
  const checks = extra.checks ?? resultChecks(result)
  out.push(`<h3>Checks${extra.checks === undefined ? ' answered by the result' : ''}</h3>`)
  out.push(table(['Check', 'Outcome', 'Detail'], checks.map((c) => [td(c.name), heldCell(c.held), td(c.detail)]), 'checks'))
  out.push('</section>')

  // (5) Provenance, Group by Group.
  out.push('<section id="provenance"><h2>Artifact provenance</h2><p class="note">WorkItem → Artifact (producing Agent, Execution Lease, Ownership Epoch) → what consumed it (§13.1, §13.2).</p>')
  for (const g of facts.graphs) {
    const artifacts = facts.artifacts.filter((a) => a.groupId === g.groupId)
    if (artifacts.length === 0) continue
    out.push(`<h3>${esc(`${names.groupLabel(g.groupId)}: ${artifacts.length} Artifact(s)`)}</h3><div class="scroll">${renderProvenance(g.groupId, artifacts, names)}</div>`)
  }
  out.push('</section>')

  if (result.warnings.length > 0) out.push(`<section id="warnings"><h2>Diagnostics</h2><ul>${result.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul></section>`)
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><style>${CSS}</style></head><body>${out.join('\n')}</body></html>\n`
}
