/**
 * The report's timelines in virtual time: one Gantt chart by Worker slot (who ran what, where
 * preemption and blocking happened, §11.1, §11.3) and one by Group (what each Mission's work
 * looked like across Agents, with its offers, reviews and decisions). Every Execution Lease is one
 * bar; its end carries a marker for how it ended.
 * @module
 */
import type { LeaseEnd, SlotRecord } from '../demo/timeline.js'
import type { EventMark, MarkKind } from './facts.js'
import { elapsedText, esc, num, tip, token } from './svg.js'

/** What the charts need to name and colour things. */
export interface GanttContext {
  readonly startMs: number
  readonly endMs: number
  /** Groups in display order. */
  readonly groups: readonly { readonly groupId: string; readonly label: string }[]
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

/** Marker of each way a lease ends (§11.3); `running` has none. */
export const END_STYLES: Readonly<Record<Exclude<LeaseEnd, 'running'> | 'start', MarkerStyle>> = {
  start: { shape: 'tick', color: '#222', label: 'start (Execution Lease granted)' },
  checkpointed: { shape: 'circle', color: '#222', hollow: true, label: 'checkpoint' },
  preempted: { shape: 'down', color: '#d62728', label: 'preempted at a safe checkpoint' },
  blocked: { shape: 'square', color: '#ff9f1c', label: 'blocked' },
  submitted: { shape: 'diamond', color: '#2ca02c', label: 'submitted' },
  failed: { shape: 'cross', color: '#d62728', label: 'failed' },
  cancelled: { shape: 'cross', color: '#666', label: 'cancelled' },
  revoked: { shape: 'cross', color: '#666', label: 'lease revoked' },
  fenced: { shape: 'cross', color: '#8c564b', label: 'owner fenced' },
  promoted: { shape: 'up', color: '#6a3d9a', label: 'promoted to a child Mission' },
}

/** Marker of each notable Event on a Group's row. */
export const MARK_STYLES: Readonly<Record<MarkKind, MarkerStyle>> = {
  offer: { shape: 'down', color: '#444', hollow: true, label: 'offer' },
  reassign: { shape: 'down', color: '#d62728', hollow: true, label: 'reassignment offer' },
  unblock: { shape: 'square', color: '#ff9f1c', hollow: true, label: 'unblocked' },
  verified: { shape: 'circle', color: '#2ca02c', label: 'result accepted (verified)' },
  failed: { shape: 'cross', color: '#d62728', label: 'WorkItem failed' },
  awaiting: { shape: 'diamond', color: '#6a3d9a', hollow: true, label: 'Mission submitted for Approval' },
  changes: { shape: 'up', color: '#6a3d9a', hollow: true, label: 'changes requested' },
  approved: { shape: 'diamond', color: '#6a3d9a', label: 'Mission approved' },
}

/** Bar colours of Groups (slot chart) and Agents (Group chart), in order of appearance. */
export const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#edc948', '#9c755f', '#e15759'] as const

/** Colour number `i` of {@link PALETTE}. */
export function paletteColor(i: number): string {
  return PALETTE[((i % PALETTE.length) + PALETTE.length) % PALETTE.length]!
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
      return `<polygon points="${at([[-s, -s], [s, -s], [0, s]])}" ${paint}/>`
    case 'up':
      return `<polygon points="${at([[-s, s], [s, s], [0, -s]])}" ${paint}/>`
    case 'square':
      return `<rect x="${num(x - s + 1)}" y="${num(y - s + 1)}" width="${2 * s - 2}" height="${2 * s - 2}" ${paint}/>`
    case 'diamond':
      return `<polygon points="${at([[0, -s], [s, 0], [0, s], [-s, 0]])}" ${paint}/>`
    case 'cross':
      return `<path d="M${at([[-s, -s]])}L${at([[s, s]])}M${at([[s, -s]])}L${at([[-s, s]])}" fill="none" stroke="${style.color}" stroke-width="2.2" class="mk ${cls}"/>`
    case 'tick':
      return `<path d="M${num(x)},${num(y - s - 2)}V${num(y + s + 2)}" stroke="${style.color}" stroke-width="2" class="mk ${cls}"/>`
  }
}

const GUTTER = 150
const PLOT = 940
const ROW = 24
const BAR = 14
const AXIS = 26
/** Height of a Group band's strip for offers and decisions. */
const STRIP = 16

interface Axis {
  readonly x: (ms: number) => number
  readonly width: number
  grid(height: number): string
}

/** A time axis over the run, ticks at a round step so that at most about ten are drawn. */
function axis(ctx: GanttContext): Axis {
  const span = Math.max(60_000, ctx.endMs - ctx.startMs)
  const x = (ms: number): number => GUTTER + ((Math.min(Math.max(ms, ctx.startMs), ctx.endMs) - ctx.startMs) / span) * PLOT
  const step = [5, 10, 15, 30, 60, 120, 240, 480, 960].map((m) => m * 60_000).find((s) => span / s <= 10) ?? span
  return {
    x,
    width: GUTTER + PLOT + 20,
    grid(height) {
      const out: string[] = []
      for (let t = 0; t <= span; t += step) {
        const gx = num(x(ctx.startMs + t))
        out.push(`<line class="grid" x1="${gx}" y1="${AXIS - 6}" x2="${gx}" y2="${num(height)}"/><text class="tick" x="${gx}" y="${AXIS - 10}" text-anchor="middle">${elapsedText(t)}</text>`)
      }
      return out.join('')
    },
  }
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

function frame(id: string, caption: string, ax: Axis, height: number, body: string): string {
  return `<svg id="${esc(id)}" class="gantt" role="img" aria-label="${esc(caption)}" width="${ax.width}" height="${num(height)}" viewBox="0 0 ${ax.width} ${num(height)}">${ax.grid(height)}${body}</svg>`
}

const groupLabelOf = (ctx: GanttContext, groupId: string): string => ctx.groups.find((g) => g.groupId === groupId)?.label ?? groupId
const groupIndexOf = (ctx: GanttContext, groupId: string): number => ctx.groups.findIndex((g) => g.groupId === groupId)

/**
 * The chart by Worker slot: one row per (Agent, slot) that held a lease, bars coloured by Group.
 * @returns An `<svg id="gantt-slots">` with one `rect.bar` per lease.
 */
export function renderSlotGantt(timeline: readonly SlotRecord[], ctx: GanttContext): string {
  const ax = axis(ctx)
  const rows = [...new Map(timeline.map((r) => [`${r.agentId}#${r.slot}`, r] as const))].sort(([, a], [, b]) => ctx.agentName(a.agentId).localeCompare(ctx.agentName(b.agentId)) || a.agentId.localeCompare(b.agentId) || a.slot - b.slot)
  const rowOf = new Map(rows.map(([key], i) => [key, i]))
  const parts: string[] = []
  rows.forEach(([, r], i) => {
    const y = AXIS + i * ROW
    parts.push(`<rect class="band${i % 2 === 0 ? ' even' : ''}" x="0" y="${y}" width="${ax.width}" height="${ROW}"/>`)
    parts.push(`<text class="rowlabel" x="8" y="${y + ROW / 2 + 4}">${esc(`${ctx.agentName(r.agentId)} · slot ${r.slot + 1}`)}</text>`)
  })
  for (const r of timeline) {
    const y = AXIS + rowOf.get(`${r.agentId}#${r.slot}`)! * ROW + (ROW - BAR) / 2
    parts.push(bar(r, y, paletteColor(groupIndexOf(ctx, r.groupId)), ax, ctx, groupLabelOf(ctx, r.groupId)))
  }
  return frame('gantt-slots', 'Execution Leases by Worker slot', ax, AXIS + rows.length * ROW + 6, parts.join(''))
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
 * leases below in as many lanes as overlap, bars coloured by Agent.
 * @returns An `<svg id="gantt-groups">` with one `rect.bar` per lease.
 */
export function renderGroupGantt(timeline: readonly SlotRecord[], marks: readonly EventMark[], agents: readonly string[], ctx: GanttContext): string {
  const ax = axis(ctx)
  const parts: string[] = []
  let y = AXIS
  ctx.groups.forEach((g, i) => {
    const records = timeline.filter((r) => r.groupId === g.groupId)
    const laneOf = lanes(records, ctx.endMs)
    const height = STRIP + Math.max(1, ...[...laneOf.values()].map((l) => l + 1)) * ROW
    parts.push(`<rect class="band${i % 2 === 0 ? ' even' : ''}" x="0" y="${y}" width="${ax.width}" height="${height}"/>`)
    parts.push(`<text class="rowlabel" x="8" y="${y + STRIP + ROW / 2 + 4}">${esc(g.label)}</text>`)
    for (const m of marks) {
      if (m.groupId !== g.groupId) continue
      const who = m.agentIds.map((a) => ctx.agentName(a)).join(', ')
      const text = `${MARK_STYLES[m.kind].label}${m.workItemId === undefined ? '' : `: ${ctx.title(m.workItemId)}`}${who === '' ? '' : ` — ${who}`} — ${elapsedText(m.atMs - ctx.startMs)}`
      parts.push(`<g class="mark mark-${m.kind}">${tip(text)}${marker(MARK_STYLES[m.kind], ax.x(m.atMs), y + STRIP / 2 + 1, `mark-${m.kind}`, 4.5)}</g>`)
    }
    for (const r of records) {
      const at = y + STRIP + laneOf.get(r)! * ROW + (ROW - BAR) / 2
      parts.push(bar(r, at, paletteColor(agents.indexOf(r.agentId)), ax, ctx, g.label))
    }
    y += height
  })
  return frame('gantt-groups', 'Execution Leases, offers and decisions by Group', ax, y + 6, parts.join(''))
}

/** A legend entry: a marker of `style` and its label. */
export function legendItem(style: MarkerStyle, cls: string): string {
  return `<li><svg width="14" height="14" viewBox="0 0 14 14" aria-hidden="true">${marker(style, 7, 7, cls, 5)}</svg>${esc(style.label)}</li>`
}

/** A legend entry: a colour swatch and its label. */
export function swatch(color: string, label: string): string {
  return `<li><svg width="14" height="14" viewBox="0 0 14 14" aria-hidden="true"><rect x="1" y="3" width="12" height="8" rx="2" fill="${color}"/></svg>${esc(label)}</li>`
}
