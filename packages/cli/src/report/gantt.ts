/**
 * The report's timelines in virtual time: one Gantt chart by Worker slot (who ran what, where
 * preemption and blocking happened, §11.1, §11.3) and one by Group (what each Mission's work
 * looked like across Agents, with its offers, reviews and decisions). Every Execution Lease is one
 * bar labelled with its WorkItem; its end carries a marker for how it ended. Injected faults, when
 * the run had any, are numbered markers on top with a line down through the chart.
 *
 * Each chart gives colour one meaning: bars take the Group's colour in the slot chart and the
 * Agent's in the Group chart, from two palettes that share no colour with each other or with the
 * markers, so a colour never stands for a Group in one chart and an Agent in the other.
 * @module
 */
import type { LeaseEnd, SlotRecord } from '../demo/timeline.js'
import type { EventMark, MarkKind } from './facts.js'
import { elapsedText, esc, fitText, num, tip, token } from './svg.js'

/** One injected fault on the time axis (the report's failure table numbers them the same way). */
export interface GanttFault {
  /** Its number, from 1, in the order of the failure table. */
  readonly n: number
  readonly name: string
  readonly atMs: number
  readonly held: boolean
}

/** What the charts need to name and colour things. */
export interface GanttContext {
  readonly startMs: number
  readonly endMs: number
  /** Groups in display order. */
  readonly groups: readonly { readonly groupId: string; readonly label: string }[]
  /** Injected faults to mark; none when absent. */
  readonly faults?: readonly GanttFault[]
  agentName(agentId: string): string
  title(workItemId: string): string
}

/** How a marker is drawn. */
export interface MarkerStyle {
  readonly shape: 'circle' | 'down' | 'up' | 'square' | 'diamond' | 'cross' | 'tick'
  readonly color: string
  readonly hollow?: boolean
  readonly label: string
}

/**
 * Marker colours by meaning, the same in every chart: neutral steps, interruptions, blocking,
 * success, ownership fencing, Mission-level decisions, injected faults. Dark, so they show on
 * every bar colour and in print.
 */
export const MARK_COLORS = {
  neutral: '#222222',
  ended: '#616161',
  interrupted: '#c62828',
  blocked: '#b45309',
  success: '#2e7d32',
  fenced: '#5d4037',
  mission: '#6a1b9a',
  fault: '#ad1457',
} as const

/** Marker of each way a lease ends (§11.3); `running` has none. */
export const END_STYLES: Readonly<Record<Exclude<LeaseEnd, 'running'> | 'start', MarkerStyle>> = {
  start: { shape: 'tick', color: MARK_COLORS.neutral, label: 'start (Execution Lease granted)' },
  checkpointed: { shape: 'circle', color: MARK_COLORS.neutral, hollow: true, label: 'checkpoint' },
  preempted: { shape: 'down', color: MARK_COLORS.interrupted, label: 'preempted at a safe checkpoint' },
  blocked: { shape: 'square', color: MARK_COLORS.blocked, label: 'blocked' },
  submitted: { shape: 'diamond', color: MARK_COLORS.success, label: 'submitted' },
  failed: { shape: 'cross', color: MARK_COLORS.interrupted, label: 'failed' },
  cancelled: { shape: 'cross', color: MARK_COLORS.ended, label: 'cancelled' },
  revoked: { shape: 'cross', color: MARK_COLORS.ended, label: 'lease revoked' },
  fenced: { shape: 'cross', color: MARK_COLORS.fenced, label: 'owner fenced' },
  promoted: { shape: 'up', color: MARK_COLORS.mission, label: 'promoted to a child Mission' },
}

/** Marker of each notable Event on a Group's row. */
export const MARK_STYLES: Readonly<Record<MarkKind, MarkerStyle>> = {
  offer: { shape: 'down', color: MARK_COLORS.neutral, hollow: true, label: 'offer' },
  reassign: { shape: 'down', color: MARK_COLORS.interrupted, hollow: true, label: 'reassignment offer' },
  unblock: { shape: 'square', color: MARK_COLORS.blocked, hollow: true, label: 'unblocked' },
  verified: { shape: 'circle', color: MARK_COLORS.success, label: 'result accepted (verified)' },
  failed: { shape: 'cross', color: MARK_COLORS.interrupted, label: 'WorkItem failed' },
  awaiting: { shape: 'diamond', color: MARK_COLORS.mission, hollow: true, label: 'Mission submitted for Approval' },
  changes: { shape: 'up', color: MARK_COLORS.mission, hollow: true, label: 'changes requested' },
  approved: { shape: 'diamond', color: MARK_COLORS.mission, label: 'Mission approved' },
}

/** Bar colours of Groups in the slot chart, in display order: cool tints, light enough for dark labels. */
export const GROUP_PALETTE = ['#80b1d3', '#8dd3c7', '#bebada', '#a6cee3', '#c6dbef', '#99d8c9', '#d0d1e6', '#b3cde3'] as const

/** Bar colours of Agents in the Group chart, in name order: warm tints, light enough for dark labels. */
export const AGENT_PALETTE = ['#fdb462', '#fccde5', '#ffed6f', '#fb8072', '#b3de69', '#e5c494', '#f4a582', '#fee391'] as const

/** The colour of bar labels: dark on every palette colour, on screen and in print. */
const BAR_TEXT = '#1d1d1f'

/** Colour `i` of `palette`; palettes repeat after their last colour. */
export function paletteColor(palette: readonly string[], i: number): string {
  return palette[((i % palette.length) + palette.length) % palette.length]!
}

/** A marker of `style` centred on (x, y). */
export function marker(style: MarkerStyle, x: number, y: number, cls: string, size = 5): string {
  const fill = style.hollow === true ? '#fff' : style.color
  const paint = `fill="${fill}" stroke="${style.color}" stroke-width="1.5" class="mk ${cls}"`
  const s = size
  const at = (pts: readonly (readonly [number, number])[]): string => pts.map(([dx, dy]) => `${num(x + dx)},${num(y + dy)}`).join(' ')
  switch (style.shape) {
    case 'circle':
      return `<circle cx="${num(x)}" cy="${num(y)}" r="${s - 0.5}" ${paint}/>`
    case 'down':
      return `<polygon points="${at([
        [-s, -s],
        [s, -s],
        [0, s],
      ])}" ${paint}/>`
    case 'up':
      return `<polygon points="${at([
        [-s, s],
        [s, s],
        [0, -s],
      ])}" ${paint}/>`
    case 'square':
      return `<rect x="${num(x - s + 1)}" y="${num(y - s + 1)}" width="${2 * s - 2}" height="${2 * s - 2}" ${paint}/>`
    case 'diamond':
      return `<polygon points="${at([
        [0, -s],
        [s, 0],
        [0, s],
        [-s, 0],
      ])}" ${paint}/>`
    case 'cross':
      return `<path d="M${at([[-s, -s]])}L${at([[s, s]])}M${at([[s, -s]])}L${at([[-s, s]])}" fill="none" stroke="${style.color}" stroke-width="2.2" class="mk ${cls}"/>`
    case 'tick':
      return `<path d="M${num(x)},${num(y - s - 2)}V${num(y + s + 2)}" stroke="${style.color}" stroke-width="2" class="mk ${cls}"/>`
  }
}

const GUTTER = 150
const PLOT = 900
const ROW = 26
const BAR = 18
const AXIS = 26
/** Height of a Group band's strip for offers and decisions. */
const STRIP = 16
/** Height of one lane of fault markers. */
const FAULT_LANE = 18
const FAULT_BADGE = { width: 22, height: 14 }
/** Font size of bar labels (px); the stylesheet's print rules keep it readable on paper. */
const BAR_FONT = 11
/** Room left of a bar label for the start tick, and right of it for the end marker. */
const LABEL_INSET = { left: 6, right: 9 }

interface Axis {
  readonly x: (ms: number) => number
  readonly width: number
  /** Where the rows start: below the fault lanes and the tick labels. */
  readonly top: number
  grid(height: number): string
}

/** Fault lanes so that no two markers overlap: each takes the first lane where it clears the last one. */
function faultLanes(faults: readonly GanttFault[], x: (ms: number) => number): Map<GanttFault, number> {
  const lastX: number[] = []
  const out = new Map<GanttFault, number>()
  for (const f of [...faults].sort((a, b) => a.atMs - b.atMs || a.n - b.n)) {
    const fx = x(f.atMs)
    let lane = lastX.findIndex((at) => fx - at >= FAULT_BADGE.width + 2)
    if (lane < 0) lane = lastX.length
    lastX[lane] = fx
    out.set(f, lane)
  }
  return out
}

/** A time axis over the run, ticks at a round step so that at most about ten are drawn. */
function axis(ctx: GanttContext): Axis {
  const span = Math.max(60_000, ctx.endMs - ctx.startMs)
  const x = (ms: number): number => GUTTER + ((Math.min(Math.max(ms, ctx.startMs), ctx.endMs) - ctx.startMs) / span) * PLOT
  const step = [5, 10, 15, 30, 60, 120, 240, 480, 960].map((m) => m * 60_000).find((s) => span / s <= 10) ?? span
  const lanes = faultLanes(ctx.faults ?? [], x)
  const faultRoom = lanes.size === 0 ? 0 : (Math.max(...lanes.values()) + 1) * FAULT_LANE + 4
  const top = faultRoom + AXIS
  return {
    x,
    width: GUTTER + PLOT + 24,
    top,
    grid(height) {
      const out: string[] = []
      for (let t = 0; t <= span; t += step) {
        const gx = num(x(ctx.startMs + t))
        out.push(`<line class="grid" x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${num(height)}"/><text class="tick" x="${gx}" y="${top - 10}" text-anchor="middle">${elapsedText(t)}</text>`)
      }
      return out.join('')
    },
  }
}

/** The fault markers and their lines down through the rows; drawn over the bars. */
function faultLayer(ctx: GanttContext, ax: Axis, height: number): string {
  const lanes = faultLanes(ctx.faults ?? [], ax.x)
  const out: string[] = []
  for (const [f, lane] of lanes) {
    const fx = ax.x(f.atMs)
    const y = 2 + lane * FAULT_LANE
    const text = `Fault ${f.n}: ${f.name} injected at ${elapsedText(f.atMs - ctx.startMs)} — ${f.held ? 'held' : 'broken'}`
    out.push(
      `<g class="fault${f.held ? '' : ' broken'}" data-fault="${f.n}">${tip(text)}` +
        `<line class="fault-line" x1="${num(fx)}" y1="${y + FAULT_BADGE.height}" x2="${num(fx)}" y2="${num(height)}"/>` +
        `<rect class="fault-badge" x="${num(fx - FAULT_BADGE.width / 2)}" y="${y}" width="${FAULT_BADGE.width}" height="${FAULT_BADGE.height}" rx="3"/>` +
        `<text class="fault-n" x="${num(fx)}" y="${y + 11}" text-anchor="middle">F${f.n}</text></g>`,
    )
  }
  return out.join('')
}

/** A bar as placed on a chart: its lease, top edge and fill. */
interface PlacedBar {
  readonly r: SlotRecord
  readonly y: number
  readonly color: string
}

/** Leases of one WorkItem in one colour that follow each other on a row within this gap read as one run of work. */
const RUN_GAP_MS = 60_000

/**
 * The bar labels: the WorkItem's title once per run of its leases on a row (a checkpoint ends a
 * lease and the next starts at once, §11.3), cut to the run's length. They are drawn over bars
 * and markers, dark on the light bar colours, with a halo of the bar's colour.
 */
function barLabels(bars: readonly PlacedBar[], ax: Axis, ctx: GanttContext): string {
  const rows = new Map<number, PlacedBar[]>()
  for (const b of bars) rows.set(b.y, [...(rows.get(b.y) ?? []), b])
  const out: string[] = []
  for (const row of rows.values()) {
    row.sort((a, b) => a.r.startMs - b.r.startMs)
    let run: PlacedBar[] = []
    const flush = (): void => {
      const first = run[0]
      if (first === undefined) return
      const endMs = run.at(-1)!.r.endMs ?? ctx.endMs
      const x0 = ax.x(first.r.startMs)
      const text = fitText(ctx.title(first.r.workItemId), Math.max(ax.x(endMs), x0 + 2) - x0 - LABEL_INSET.left - LABEL_INSET.right, BAR_FONT)
      if (text !== '') {
        out.push(
          `<text class="barlabel" x="${num(x0 + LABEL_INSET.left)}" y="${num(first.y + BAR / 2 + BAR_FONT * 0.36)}" fill="${BAR_TEXT}" stroke="${first.color}" data-bar="${first.color}">${esc(text)}</text>`,
        )
      }
      run = []
    }
    for (const b of row) {
      const last = run.at(-1)
      if (last !== undefined && (last.r.workItemId !== b.r.workItemId || last.color !== b.color || b.r.startMs - (last.r.endMs ?? ctx.endMs) > RUN_GAP_MS)) flush()
      run.push(b)
    }
    flush()
  }
  return `<g class="barlabels">${out.join('')}</g>`
}

/** One lease as a bar with its start tick and end marker. */
function bar(r: SlotRecord, y: number, color: string, ax: Axis, ctx: GanttContext, groupLabel: string): string {
  const end = r.endMs ?? ctx.endMs
  const x0 = ax.x(r.startMs)
  const x1 = Math.max(ax.x(end), x0 + 2)
  const mid = y + BAR / 2
  const how = r.ended === 'running' ? 'still running at the end' : END_STYLES[r.ended].label
  const text = `${ctx.title(r.workItemId)} — ${ctx.agentName(r.agentId)} slot ${r.slot + 1} — ${groupLabel} — ${elapsedText(r.startMs - ctx.startMs)} to ${elapsedText(end - ctx.startMs)} — ${how} (ownership epoch ${r.ownershipEpoch})`
  const endMark = r.ended === 'running' ? '' : marker(END_STYLES[r.ended], x1, mid, `end-${r.ended}`)
  return (
    `<g class="lease end-${token(r.ended)}" data-lease="${esc(r.executionLeaseId)}" data-item="${esc(r.workItemId)}">${tip(text)}` +
    `<rect class="bar" x="${num(x0)}" y="${num(y)}" width="${num(x1 - x0)}" height="${BAR}" rx="2" fill="${color}"${r.ended === 'running' ? ' stroke-dasharray="3 2"' : ''}/>` +
    `${marker(END_STYLES.start, x0, mid, 'start', 4)}${endMark}</g>`
  )
}

function frame(id: string, caption: string, ax: Axis, height: number, body: string, ctx: GanttContext): string {
  return `<svg id="${esc(id)}" class="gantt" role="img" aria-label="${esc(caption)}" width="${ax.width}" height="${num(height)}" viewBox="0 0 ${ax.width} ${num(height)}">${ax.grid(height)}${body}${faultLayer(ctx, ax, height)}</svg>`
}

/** A row label that fits the gutter. */
function rowLabel(text: string, y: number): string {
  return `<text class="rowlabel" x="8" y="${num(y)}">${tip(text)}${esc(fitText(text, GUTTER - 14, 12))}</text>`
}

const groupLabelOf = (ctx: GanttContext, groupId: string): string => ctx.groups.find((g) => g.groupId === groupId)?.label ?? groupId
const groupIndexOf = (ctx: GanttContext, groupId: string): number => ctx.groups.findIndex((g) => g.groupId === groupId)

/**
 * The chart by Worker slot: one row per (Agent, slot) that held a lease, bars coloured by Group
 * from {@link GROUP_PALETTE}.
 * @returns An `<svg id="gantt-slots">` with one `rect.bar` per lease.
 */
export function renderSlotGantt(timeline: readonly SlotRecord[], ctx: GanttContext): string {
  const ax = axis(ctx)
  const rows = [...new Map(timeline.map((r) => [`${r.agentId}#${r.slot}`, r] as const))].sort(
    ([, a], [, b]) => ctx.agentName(a.agentId).localeCompare(ctx.agentName(b.agentId)) || a.agentId.localeCompare(b.agentId) || a.slot - b.slot,
  )
  const rowOf = new Map(rows.map(([key], i) => [key, i]))
  const parts: string[] = []
  rows.forEach(([, r], i) => {
    const y = ax.top + i * ROW
    parts.push(`<rect class="band${i % 2 === 0 ? ' even' : ''}" x="0" y="${y}" width="${ax.width}" height="${ROW}"/>`)
    parts.push(rowLabel(`${ctx.agentName(r.agentId)} · slot ${r.slot + 1}`, y + ROW / 2 + 4))
  })
  const placed = timeline.map((r) => ({ r, y: ax.top + rowOf.get(`${r.agentId}#${r.slot}`)! * ROW + (ROW - BAR) / 2, color: paletteColor(GROUP_PALETTE, groupIndexOf(ctx, r.groupId)) }))
  for (const b of placed) parts.push(bar(b.r, b.y, b.color, ax, ctx, groupLabelOf(ctx, b.r.groupId)))
  parts.push(barLabels(placed, ax, ctx))
  return frame('gantt-slots', 'Execution Leases by Worker slot', ax, ax.top + rows.length * ROW + 6, parts.join(''), ctx)
}

/** Lanes so that no two leases of one Group overlap on a row: each goes to the first free lane. */
function lanes(records: readonly SlotRecord[], endMs: number): Map<SlotRecord, number> {
  const free: number[] = []
  const out = new Map<SlotRecord, number>()
  for (const r of [...records].sort((a, b) => a.startMs - b.startMs)) {
    let lane = free.findIndex((until) => until <= r.startMs)
    if (lane < 0) lane = free.length
    free[lane] = r.endMs ?? endMs
    out.set(r, lane)
  }
  return out
}

/**
 * The chart by Group: one band per Group with a strip of offers and decisions on top and its
 * leases below in as many lanes as overlap, bars coloured by Agent from {@link AGENT_PALETTE} in
 * the order of `agents`.
 * @returns An `<svg id="gantt-groups">` with one `rect.bar` per lease.
 */
export function renderGroupGantt(timeline: readonly SlotRecord[], marks: readonly EventMark[], agents: readonly string[], ctx: GanttContext): string {
  const ax = axis(ctx)
  const parts: string[] = []
  const placed: PlacedBar[] = []
  let y = ax.top
  ctx.groups.forEach((g, i) => {
    const records = timeline.filter((r) => r.groupId === g.groupId)
    const laneOf = lanes(records, ctx.endMs)
    const height = STRIP + Math.max(1, ...[...laneOf.values()].map((l) => l + 1)) * ROW
    parts.push(`<rect class="band${i % 2 === 0 ? ' even' : ''}" x="0" y="${y}" width="${ax.width}" height="${height}"/>`)
    parts.push(rowLabel(g.label, y + STRIP + ROW / 2 + 4))
    for (const m of marks) {
      if (m.groupId !== g.groupId) continue
      const who = m.agentIds.map((a) => ctx.agentName(a)).join(', ')
      const text = `${MARK_STYLES[m.kind].label}${m.workItemId === undefined ? '' : `: ${ctx.title(m.workItemId)}`}${who === '' ? '' : ` — ${who}`} — ${elapsedText(m.atMs - ctx.startMs)}`
      parts.push(`<g class="mark mark-${m.kind}">${tip(text)}${marker(MARK_STYLES[m.kind], ax.x(m.atMs), y + STRIP / 2 + 1, `mark-${m.kind}`, 4.5)}</g>`)
    }
    for (const r of records) {
      const b = { r, y: y + STRIP + laneOf.get(r)! * ROW + (ROW - BAR) / 2, color: paletteColor(AGENT_PALETTE, agents.indexOf(r.agentId)) }
      placed.push(b)
      parts.push(bar(b.r, b.y, b.color, ax, ctx, g.label))
    }
    y += height
  })
  parts.push(barLabels(placed, ax, ctx))
  return frame('gantt-groups', 'Execution Leases, offers and decisions by Group', ax, y + 6, parts.join(''), ctx)
}

/** A legend entry: a marker of `style` and its label. */
export function legendItem(style: MarkerStyle, cls: string): string {
  return `<li class="key"><svg width="14" height="14" viewBox="0 0 14 14" aria-hidden="true">${marker(style, 7, 7, cls, 5)}</svg>${esc(style.label)}</li>`
}

/** A legend entry: a colour swatch (recorded in `data-color`) and what the colour stands for. */
export function swatch(color: string, label: string): string {
  return `<li class="swatch" data-color="${esc(color)}"><svg width="16" height="14" viewBox="0 0 16 14" aria-hidden="true"><rect x="1" y="2" width="14" height="10" rx="2" fill="${esc(color)}" stroke="#555" stroke-width=".6"/></svg>${esc(label)}</li>`
}

/** The legend entry of injected faults. */
export function faultKey(): string {
  return (
    `<li class="key"><svg width="24" height="16" viewBox="0 0 24 16" aria-hidden="true"><rect class="fault-badge" x="1" y="1" width="22" height="14" rx="3"/>` +
    `<text class="fault-n" x="12" y="12" text-anchor="middle">F</text></svg>injected fault (number as in the failure table), with a line at its time</li>`
  )
}
