/**
 * `renderReport`: the demo's visual report as one self-contained HTML page (inline CSS and SVG,
 * no scripts, nothing fetched): which Weft and protocol commit made the run, the timelines in
 * virtual time with the injected faults on them, both Missions' WorkItem graphs and the child
 * Mission's, the two statecharts, the failure injections and checks, the budget ledger, the
 * Artifact provenance graph and the whole Event log. Every view has its own legend, and a colour
 * means one thing in a view. It is a pure function of a {@link DemoResult} (live or read back from
 * `demo-result.json`) and of the fault and check records a failure suite adds.
 * @module
 */
import type { BudgetLedger, BudgetLedgerEntry } from '@weft/authority'
import { USAGE_DIMENSIONS, type UsageDimension } from '@weft/spec'
import { MISSION_TRANSITIONS, WORK_ITEM_TRANSITIONS } from '@weft/spec/machines'
import type { DemoResult } from '../demo/run.js'
import {
  AGENT_PALETTE,
  END_STYLES,
  faultKey,
  GROUP_PALETTE,
  legendItem,
  MARK_COLORS,
  MARK_STYLES,
  paletteColor,
  renderGroupGantt,
  renderSlotGantt,
  swatch,
  type GanttContext,
  type GanttFault,
} from './gantt.js'
import type { ReportBuild } from './facts.js'
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
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}.held{color:#1b7a2e;font-weight:600}.broken{color:#c62828;font-weight:600}
.scroll{overflow-x:auto;border:1px solid #eee;border-radius:6px;padding:4px;margin:4px 0}
ul.legend{list-style:none;padding:0;margin:6px 0;display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px}ul.legend li{display:flex;align-items:center;gap:5px}
ul.legend li.heading{font-weight:600}
.note{color:#555}code{font-size:12px}details{margin:6px 0}table.rows{font-size:12px}summary{cursor:pointer}
.build{margin:2px 0;font-size:13px}.build code{font-size:12px}
svg text{font-family:system-ui,sans-serif}svg.gantt{max-width:100%;height:auto}
.gantt .band{fill:#fff}.gantt .band.even{fill:#f6f7f9}.gantt .grid{stroke:#e2e2e6}.gantt .tick{font-size:11px;fill:#555}.gantt .rowlabel{font-size:12px;fill:#333}
.gantt .barlabel{font-size:11px;pointer-events:none;stroke-width:3px;stroke-linejoin:round;paint-order:stroke}.gantt .bar{stroke:#555;stroke-width:.5}
.fault-badge{fill:${MARK_COLORS.fault}}.fault-n{fill:#fff;font-size:11px;font-weight:700}.fault-line{stroke:${MARK_COLORS.fault};stroke-width:1.4;stroke-dasharray:5 3}
.fault.broken .fault-badge{stroke:#000;stroke-width:2}
.graph .node rect,.graph .keybox rect{fill:#f5f5f7;stroke:#8a8a8e;stroke-width:1.2}.graph .node text{font-size:12px;fill:#1d1d1f}.graph .node text.sub{font-size:11px;fill:#444}
.graph .edge path{fill:none;stroke:#8a8a8e;stroke-width:1.2}.graph .edge.back path{stroke-dasharray:4 3}.graph marker path{fill:#8a8a8e}
.graph .elabel rect{fill:#fff;fill-opacity:.94;stroke:#d4d4da;stroke-width:.8}.graph .elabel text{font-size:11px;fill:#333}
.graph .st-verified rect,.graph .st-approved rect{fill:#e3f4e1;stroke:#2e7d32}.graph .st-failed rect{fill:#fde3e3;stroke:#c62828}
.graph .st-cancelled rect{fill:#eee;stroke:#777}.graph .st-blocked rect{fill:#fff4d6;stroke:#b45309}.graph .st-active rect{fill:#e1eefa;stroke:#1f77b4}
.graph .st-submitted rect{fill:#eef8ec;stroke:#66a85f}.graph .st-awaiting_approval rect{fill:#f1e8f8;stroke:#6a1b9a}
.graph .st-open rect,.graph .st-offered rect,.graph .st-queued rect{fill:#eef0fd;stroke:#5b5bd6}.graph .st-none rect{fill:#fff;stroke-dasharray:3 2}
.graph .reached rect{stroke-width:2.4}.graph .artifact rect{fill:#fffbe8;stroke:#b38f00}.graph .producer rect{fill:#e9f1fb;stroke:#4e79a7}.graph .anyof rect{fill:#fafafa;stroke:#999;stroke-dasharray:2 2}
.graph .input rect{fill:#fff;stroke:#4e79a7;stroke-dasharray:3 2}
table.ledger td.limit{color:#555}table.ledger tr.mission td{font-weight:600;background:#fafafc}table.ledger td.item{padding-left:20px}
table.events td{padding:1px 6px;white-space:nowrap}
@media print{
@page{size:A4 landscape;margin:10mm}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
body{max-width:none;padding:0;font-size:10pt}
.scroll{overflow:visible;border:0;padding:0}
svg.gantt,svg.graph{max-width:100%;height:auto}
h2,h3{break-after:avoid}.view,svg,tr{break-inside:avoid}
}
`

function table(head: readonly string[], rows: readonly (readonly string[])[], cls = ''): string {
  return `<table${cls === '' ? '' : ` class="${cls}"`}><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.map((r) => `<tr>${r.join('')}</tr>`).join('')}</tbody></table>`
}

const td = (text: string | number, cls = ''): string => `<td${cls === '' ? '' : ` class="${cls}"`}>${esc(text)}</td>`
const heldCell = (held: boolean): string => `<td class="${held ? 'held' : 'broken'}">${held ? 'held' : 'broken'}</td>`

/** A legend list for the view `view`, introduced by `heading`. */
const legend = (view: string, heading: string, items: readonly string[]): string => `<ul class="legend" data-view="${esc(view)}"><li class="heading">${esc(heading)}</li>${items.join('')}</ul>`

/** A legend entry drawn like a graph node of class `cls` (but not a `.node`, which stands for drawn aggregates only). */
function nodeKey(cls: string, label: string): string {
  return `<li class="key"><svg class="graph" width="24" height="16" viewBox="0 0 24 16" aria-hidden="true"><g class="keybox ${esc(cls)}"><rect x="1.5" y="1.5" width="21" height="13" rx="3"/></g></svg>${esc(label)}</li>`
}

/** A legend entry for an edge style. */
function edgeKey(back: boolean, label: string): string {
  return `<li class="key"><svg class="graph" width="30" height="12" viewBox="0 0 30 12" aria-hidden="true"><g class="edge${back ? ' back' : ''}"><path d="M2,6H27"/></g></svg>${esc(label)}</li>`
}

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

/** The header line naming the software: the Weft version and, when the run knew it, the protocol commit. */
function buildLine(build: ReportBuild | undefined): string {
  if (build === undefined) return '<p class="build note" id="build">This result does not record which Weft version made it.</p>'
  const protocol =
    build.protocolCommit === undefined
      ? 'protocol commit not known: the run found no protocol bundle (<code>PIN.json</code>; set <code>MWP_PROTOCOL_DIR</code>), so only the Weft version is given'
      : `MissionWeaveProtocol 0.1 at protocol commit <code data-commit>${esc(build.protocolCommit)}</code>`
  return `<p class="build" id="build">Made by Weft <code data-version>${esc(build.weftVersion)}</code>; ${protocol}.</p>`
}

/** Display names of the ledger's dimensions, money by its currency. */
const DIMENSION_NAMES: Readonly<Record<UsageDimension, string>> = {
  financialMicrounits: 'money',
  modelTokens: 'model tokens',
  toolCalls: 'tool calls',
  computeSeconds: 'compute seconds',
  wallClockSeconds: 'wall-clock seconds',
  externalActions: 'external actions',
}

const grouping = new Intl.NumberFormat('en-US', { maximumFractionDigits: 6 })

/** A ledger amount: money from microunits to the currency's units, everything else as counted. */
function amount(dimension: UsageDimension, value: number): string {
  return grouping.format(dimension === 'financialMicrounits' ? value / 1_000_000 : value)
}

/** The three cells of one dimension of one budget: limit, charged, remaining. */
function ledgerCells(dimension: UsageDimension, e: BudgetLedgerEntry): string {
  const cell = (col: string, value: number | null, text: string, cls: string): string =>
    `<td class="${cls}" data-dim="${dimension}" data-col="${col}"${value === null ? '' : ` data-value="${value}"`}>${esc(text)}</td>`
  const limit = e.limit !== null ? amount(dimension, e.limit) : e.source === 'inherited' ? 'inherited' : 'none'
  return (
    cell('limit', e.limit, limit, 'num limit') +
    cell('charged', e.used, amount(dimension, e.used), 'num') +
    cell('remaining', e.remaining, e.remaining === null ? '—' : amount(dimension, e.remaining), 'num')
  )
}

/**
 * The budget ledger (§12): one row per Mission and WorkItem, and per dimension the limit the
 * budget lists, what was charged to it (its whole subtree) and what can still be charged.
 * Dimensions no budget limits and nothing was charged to are named instead of shown empty.
 */
function ledgerSection(ledger: readonly BudgetLedger[], label: (l: BudgetLedger) => string): string {
  if (ledger.length === 0) return '<p class="note">This result carries no budget ledger.</p>'
  const shown = USAGE_DIMENSIONS.filter((d) => ledger.some((l) => l.dimensions[d].limit !== null || l.dimensions[d].used > 0))
  const hidden = USAGE_DIMENSIONS.filter((d) => !shown.includes(d))
  const currency = [...new Set(ledger.map((l) => l.currency).filter((c): c is string => c !== undefined))].join('/')
  const name = (d: UsageDimension): string => (d === 'financialMicrounits' && currency !== '' ? `${DIMENSION_NAMES[d]} (${currency})` : DIMENSION_NAMES[d])
  const head =
    `<tr><th rowspan="2">Budget</th>${shown.map((d) => `<th colspan="3">${esc(name(d))}</th>`).join('')}</tr>` +
    `<tr>${shown.map(() => '<th class="num">limit</th><th class="num">charged</th><th class="num">left</th>').join('')}</tr>`
  const rows = ledger.map((l) => {
    const attrs = `data-scope="${l.scope}" data-group="${esc(l.groupId)}"${l.workItemId === undefined ? '' : ` data-item="${esc(l.workItemId)}"`}`
    return `<tr class="${l.scope === 'mission' ? 'mission' : 'item'}" ${attrs}><td class="${l.scope === 'mission' ? 'budget' : 'budget item'}">${esc(label(l))}</td>${shown.map((d) => ledgerCells(d, l.dimensions[d])).join('')}</tr>`
  })
  const note = hidden.length === 0 ? '' : ` No budget limits ${hidden.map((d) => DIMENSION_NAMES[d]).join(' or ')}, and nothing was charged to them.`
  return (
    `<p class="note">Per Mission (the whole Mission, child Missions included) and per WorkItem: the limit its budget lists (<em>inherited</em>: bounded by a budget above), what was charged, and what can still be charged given every budget above it.${esc(note)}</p>` +
    `<div class="scroll"><table class="ledger"><thead>${head}</thead><tbody>${rows.join('')}</tbody></table></div>`
  )
}

/** `+H:MM:SS` of virtual time since the start. */
function clockText(ms: number): string {
  const s = Math.floor(Math.max(0, ms) / 1000)
  return `+${Math.floor(s / 3600)}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`
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
  const faults = extra.faults ?? []
  const numbered: GanttFault[] = faults.map((f, i) => ({ n: i + 1, name: f.name, atMs: f.atMs, held: f.held }))
  const ctx: GanttContext = { startMs: result.startMs, endMs: result.endMs, groups: result.missions.map((m) => ({ groupId: m.groupId, label: m.label })), faults: numbered, ...names }
  const agents = [...new Set(result.timeline.map((r) => r.agentId))].sort((a, b) => names.agentName(a).localeCompare(names.agentName(b)))
  const title = extra.title ?? `Weft demo report (seed ${result.seed})`
  const out: string[] = []

  out.push(
    `<header><h1>${esc(title)}</h1>${buildLine(facts.build)}<p class="note">MissionWeaveProtocol 0.1 proof of concept (§22): ${esc(elapsedText(result.endMs - result.startMs).slice(1))} of virtual time from ${esc(new Date(result.startMs).toISOString())}, ${result.rounds} rounds${faults.length === 0 ? '' : `, ${faults.length} injected fault(s)`}. ${result.approved ? 'Both Missions were approved.' : 'Not every Mission was approved.'}</p></header>`,
  )
  out.push('<section id="missions"><h2>Missions</h2>')
  out.push(
    table(
      ['Mission', 'Title', 'Final state', 'Revision', 'Events', 'Change requests', 'Submitted Artifacts'],
      result.missions.map((m) => [
        td(m.label),
        td(m.title),
        `<td class="mission-state st-${token(m.state)}">${esc(m.state)}</td>`,
        td(m.revision, 'num'),
        td(m.events, 'num'),
        td(m.changeRequests, 'num'),
        td(m.artifactHashes.length, 'num'),
      ]),
    ),
  )
  out.push(
    `<details><summary>Counts</summary>${table(
      ['What', 'How many'],
      Object.entries(result.counts).map(([k, v]) => [td(k), td(v, 'num')]),
    )}</details></section>`,
  )

  // (1) Timelines: each with its own legend, since bar colours mean Groups in one and Agents in the other.
  const ends = Object.entries(END_STYLES).map(([k, s]) => legendItem(s, `end-${k}`))
  const marks = Object.entries(MARK_STYLES).map(([k, s]) => legendItem(s, `mark-${k}`))
  const faultItems = numbered.length === 0 ? [] : [faultKey()]
  out.push('<section id="timeline"><h2>Timeline</h2>')
  out.push(
    `<p class="note">${result.timeline.length} Execution Leases; each bar runs from <code>work.started</code> to the Event that ended the lease (§11.3) and is labelled with its WorkItem. Hover a bar or marker for details.</p>`,
  )
  out.push(
    `<div class="view"><h3>By Worker slot</h3>${legend(
      'gantt-slots',
      'Bar colour: Group',
      ctx.groups.map((g, i) => swatch(paletteColor(GROUP_PALETTE, i), g.label)),
    )}` + `${legend('gantt-slots', 'Markers', [...ends, ...faultItems])}<div class="scroll">${renderSlotGantt(result.timeline, ctx)}</div></div>`,
  )
  out.push(
    `<div class="view"><h3>By Group</h3>${legend(
      'gantt-groups',
      'Bar colour: Agent',
      agents.map((a, i) => swatch(paletteColor(AGENT_PALETTE, i), names.agentName(a))),
    )}` + `${legend('gantt-groups', 'Markers', [...ends, ...marks, ...faultItems])}<div class="scroll">${renderGroupGantt(result.timeline, facts.marks, agents, ctx)}</div></div></section>`,
  )

  // (2) WorkItem graphs, child Missions after their parent.
  const finalStates = [...new Set(facts.graphs.flatMap((g) => g.workItems.map((w) => w.state)))]
  out.push('<section id="graphs"><h2>WorkItem graphs</h2>')
  out.push(legend('graphs', 'Box colour: final state', [...finalStates.map((s) => nodeKey(`st-${token(s)}`, s)), edgeKey(false, 'dependency → dependant (§10.4)')]))
  for (const g of facts.graphs) {
    const m = result.missions.find((x) => x.groupId === g.groupId)
    const parent = g.parent === undefined ? '' : ` — child Mission of ${names.title(g.parent.workItemId)} (${names.groupLabel(g.parent.groupId)})`
    out.push(`<div class="view"><h3 class="graph-title" data-group="${esc(g.groupId)}">${esc(`${m?.title ?? g.groupId} (${names.groupLabel(g.groupId)}): ${m?.state ?? 'unknown'}${parent}`)}</h3>`)
    out.push(`<div class="scroll">${renderWorkGraph(g, names)}</div></div>`)
  }
  out.push('</section>')

  // (3) Statecharts, with how many of this run's aggregates ended in each state.
  const itemEnds = new Map<string, number>()
  for (const g of facts.graphs) for (const w of g.workItems) itemEnds.set(w.state, (itemEnds.get(w.state) ?? 0) + 1)
  const missionEnds = new Map<string, number>()
  for (const m of result.missions) missionEnds.set(m.state, (missionEnds.get(m.state) ?? 0) + 1)
  out.push('<section id="statecharts"><h2>Statecharts</h2>')
  out.push(
    legend('statecharts', 'Notation', [
      nodeKey('st-verified reached', 'thick border: some of this run’s aggregates ended here'),
      nodeKey('anyof', 'any of several states'),
      edgeKey(false, 'transition: event [guard]'),
      edgeKey(true, 'back in the lifecycle'),
      '<li class="key">↻ event: stays in the state (internal transition)</li>',
    ]),
  )
  out.push(`<div class="view"><h3>WorkItem (§10.2)</h3><div class="scroll">${renderStatechart('chart-work', 'the WorkItem machine', WORK_ITEM_TRANSITIONS, itemEnds)}</div></div>`)
  out.push(`<div class="view"><h3>Mission (§7.1)</h3><div class="scroll">${renderStatechart('chart-mission', 'the Mission machine', MISSION_TRANSITIONS, missionEnds)}</div></div>`)
  out.push('<p class="note">Sections and emitted Events are in each edge\'s tooltip and in the tables.</p></section>')

  // (4) Failure injections and checks; F-numbers match the markers on the timelines.
  out.push('<section id="faults"><h2>Failure injections and checks</h2>')
  out.push(
    faults.length === 0
      ? '<p class="note">This run injected no failures.</p>'
      : table(
          ['#', 'Injection', 'At', 'Expected', 'Observed', 'Outcome'],
          faults.map((f, i) => [td(`F${i + 1}`), td(f.name), td(elapsedText(f.atMs - result.startMs)), td(f.expected), td(f.observed), heldCell(f.held)]),
          'faults',
        ),
  )
  const checks = extra.checks ?? resultChecks(result)
  out.push(`<h3>Checks${extra.checks === undefined ? ' answered by the result' : ''}</h3>`)
  out.push(
    table(
      ['Check', 'Outcome', 'Detail'],
      checks.map((c) => [td(c.name), heldCell(c.held), td(c.detail)]),
      'checks',
    ),
  )
  out.push('</section>')

  // (5) The budget ledger.
  out.push('<section id="ledger"><h2>Budget ledger</h2>')
  out.push(ledgerSection(facts.ledger ?? [], (l) => (l.workItemId === undefined ? `${names.groupLabel(l.groupId)} Mission` : names.title(l.workItemId))))
  out.push('</section>')

  // (6) Provenance, Group by Group.
  out.push(
    '<section id="provenance"><h2>Artifact provenance</h2><p class="note">WorkItem → Artifact (deliverable, media type, hash, producing Agent, Execution Lease, Ownership Epoch) → what consumed it (§13.1, §13.2).</p>',
  )
  out.push(
    legend('provenance', 'Box colour: role', [
      nodeKey('producer', 'WorkItem'),
      nodeKey('artifact', 'Artifact'),
      nodeKey('st-verified', 'review: result accepted'),
      nodeKey('st-failed', 'review: result rejected'),
      nodeKey('st-awaiting_approval', 'Mission submission for Approval'),
      nodeKey('input', 'Work Contract input'),
    ]),
  )
  for (const g of facts.graphs) {
    const artifacts = facts.artifacts.filter((a) => a.groupId === g.groupId)
    if (artifacts.length === 0) continue
    out.push(`<div class="view"><h3>${esc(`${names.groupLabel(g.groupId)}: ${artifacts.length} Artifact(s)`)}</h3><div class="scroll">${renderProvenance(g.groupId, artifacts, names)}</div></div>`)
  }
  out.push('</section>')

  // (7) Every Event, collapsed: the log behind every view above.
  const events = [...(facts.events ?? [])].sort((a, b) => a.atMs - b.atMs)
  out.push('<section id="events"><h2>Event log</h2>')
  out.push(
    events.length === 0
      ? '<p class="note">This result carries no Event log.</p>'
      : `<details id="eventlog"><summary>${esc(`${events.length} Events of ${new Set(events.map((e) => e.groupId)).size} Group log(s), in time order`)}</summary>` +
          table(
            ['Group', 'Seq', 'Kind', 'Actor', 'Time'],
            events.map((e) => [td(names.groupLabel(e.groupId)), td(e.sequence, 'num'), td(e.kind), td(`${e.actorType} ${names.agentName(e.actorId)}`), td(clockText(e.atMs - result.startMs), 'num')]),
            'rows events',
          ) +
          '</details>',
  )
  out.push('</section>')

  if (result.warnings.length > 0) out.push(`<section id="warnings"><h2>Diagnostics</h2><ul>${result.warnings.map((w) => `<li>${esc(w)}</li>`).join('')}</ul></section>`)
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><style>${CSS}</style></head><body>${out.join('\n')}</body></html>\n`
}
