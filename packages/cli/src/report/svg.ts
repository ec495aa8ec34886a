/**
 * Small, dependency-free building blocks of the report's inline SVG: text escaping, and one
 * layered graph drawing used for the WorkItem graphs, the statecharts and the provenance graph.
 * Every string that reaches the page goes through {@link esc}: names, titles and reasons come from
 * Agents and humans and may hold markup.
 * @module
 */

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** `value` as HTML / SVG text or double-quoted attribute content. */
export function esc(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c]!)
}

/** A CSS class fragment from free text: only `[a-z0-9_-]` survive. */
export function token(value: string): string {
  return value.toLowerCase().replace(/[^a-z0-9_-]/g, '-')
}

/** `text` cut to `max` characters with an ellipsis (the full text goes in a tooltip). */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`
}

/** A coordinate with at most one decimal. */
export function num(value: number): string {
  return String(Math.round(value * 10) / 10)
}

/** Virtual time since the start as `+H:MM`. */
export function elapsedText(ms: number): string {
  const minutes = Math.floor(Math.max(0, ms) / 60_000)
  return `+${Math.floor(minutes / 60)}:${String(minutes % 60).padStart(2, '0')}`
}

/** A `<title>` child: the browser's tooltip. */
export function tip(text: string): string {
  return `<title>${esc(text)}</title>`
}

/** One node of a {@link renderGraph} drawing. */
export interface GraphNode {
  readonly id: string
  readonly label: string
  readonly sub?: string
  /** The full text behind the clipped label. */
  readonly tooltip?: string
  /** Extra CSS class (e.g. `st-verified`). */
  readonly cls?: string
  /** A fixed column; otherwise the longest path from a source decides it. */
  readonly layer?: number
}

/** One edge of a {@link renderGraph} drawing, from `from` to `to`. */
export interface GraphEdge {
  readonly from: string
  readonly to: string
  readonly label?: string
  readonly tooltip?: string
  readonly cls?: string
}

/** Options of {@link renderGraph}. */
export interface GraphOptions {
  /** Unique in the page: prefixes the arrow marker's ID. */
  readonly id: string
  /** The accessible name of the drawing. */
  readonly caption: string
  readonly nodeWidth?: number
  readonly nodeHeight?: number
  readonly gapX?: number
  readonly gapY?: number
}

interface Placed {
  readonly node: GraphNode
  readonly x: number
  readonly y: number
}

const PAD = 14
/** Room above the top row for self-loops. */
const LOOP_ROOM = 26

/**
 * Columns by longest path from the sources, after dropping the edges that close a cycle (found by
 * a depth-first walk in node order), so statecharts with loops still read left to right.
 */
export function layersOf(ids: readonly string[], edges: readonly GraphEdge[]): Map<string, number> {
  const out = new Map<string, string[]>(ids.map((id) => [id, []]))
  for (const e of edges) if (e.from !== e.to && out.has(e.to)) out.get(e.from)?.push(e.to)
  const state = new Map<string, 'open' | 'done'>()
  const order: string[] = []
  const forward = new Map<string, string[]>(ids.map((id) => [id, []]))
  const visit = (id: string): void => {
    state.set(id, 'open')
    for (const next of out.get(id) ?? []) {
      const s = state.get(next)
      if (s === 'open') continue // closes a cycle: drawn, but not used for layering
      forward.get(id)!.push(next)
      if (s === undefined) visit(next)
    }
    state.set(id, 'done')
    order.push(id)
  }
  for (const id of ids) if (!state.has(id)) visit(id)
  const layer = new Map<string, number>(ids.map((id) => [id, 0]))
  for (const id of order.reverse()) for (const next of forward.get(id)!) layer.set(next, Math.max(layer.get(next)!, layer.get(id)! + 1))
  return layer
}

/** Point of a cubic Bézier at t = 0.5. */
function middle(p: readonly number[]): [number, number] {
  return [(p[0]! + 3 * p[2]! + 3 * p[4]! + p[6]!) / 8, (p[1]! + 3 * p[3]! + 3 * p[5]! + p[7]!) / 8]
}

interface Metrics {
  readonly w: number
  readonly h: number
  readonly gapX: number
  readonly gapY: number
}

const cubic = (p: readonly number[]): string => `M${num(p[0]!)},${num(p[1]!)} C${num(p[2]!)},${num(p[3]!)} ${num(p[4]!)},${num(p[5]!)} ${num(p[6]!)},${num(p[7]!)}`

/**
 * The path of one edge and where its label goes: a loop above the node to itself; a curve to the
 * next column; along the gap under the source's row to a column further on or back (so it never
 * crosses a node); a bulge to the right within a column.
 */
function route(a: Placed, b: Placed, m: Metrics): { d: string; at: readonly [number, number]; back: boolean } {
  const { w, h, gapX } = m
  const ay = a.y + h / 2
  const by = b.y + h / 2
  if (a === b) {
    const p = [a.x + w * 0.35, a.y, a.x + w * 0.3, a.y - LOOP_ROOM, a.x + w * 0.7, a.y - LOOP_ROOM, a.x + w * 0.65, a.y]
    return { d: cubic(p), at: middle(p), back: false }
  }
  if (b.x === a.x) {
    const p = [a.x + w, ay, a.x + w + 40, ay, b.x + w + 40, by, b.x + w, by]
    return { d: cubic(p), at: middle(p), back: true }
  }
  const lane = a.y + h + m.gapY / 2
  if (b.x < a.x) {
    // Out of the source's left side, along the gap under its row, into the target's right side;
    // the lower quarter of both sides keeps it apart from the forward edge between the same nodes.
    const q = gapX / 4
    const x0 = a.x
    const x1 = b.x + w
    const y0 = a.y + h * 0.75
    const y1 = b.y + h * 0.75
    const d = `M${num(x0)},${num(y0)} C${num(x0 - q)},${num(y0)} ${num(x0 - q)},${num(lane)} ${num(x0 - 2 * q)},${num(lane)} L${num(x1 + 2 * q)},${num(lane)} C${num(x1 + q)},${num(lane)} ${num(x1 + q)},${num(y1)} ${num(x1)},${num(y1)}`
    return { d, at: [(x0 + x1) / 2, lane + 13], back: true }
  }
  if (b.x - a.x <= w + gapX) {
    const dx = (b.x - a.x - w) / 2
    const p = [a.x + w, ay, a.x + w + dx, ay, b.x - dx, by, b.x, by]
    return { d: cubic(p), at: middle(p), back: false }
  }
  const x0 = a.x + w
  const x1 = b.x
  const g = gapX / 2
  const d = `M${num(x0)},${num(ay)} C${num(x0 + g)},${num(ay)} ${num(x0 + g)},${num(lane)} ${num(x0 + gapX)},${num(lane)} L${num(x1 - gapX)},${num(lane)} C${num(x1 - g)},${num(lane)} ${num(x1 - g)},${num(by)} ${num(x1)},${num(by)}`
  return { d, at: [(x0 + x1) / 2, lane], back: false }
}

/**
 * A left-to-right layered drawing of `nodes` and `edges` as one `<svg>`: forward edges as curves
 * between columns, edges that go back (or stay in a column) dashed, self-loops above their node.
 * Every node is a `<g class="node …" data-id>` with a tooltip.
 */
export function renderGraph(nodes: readonly GraphNode[], edges: readonly GraphEdge[], options: GraphOptions): string {
  const w = options.nodeWidth ?? 180
  const h = options.nodeHeight ?? 40
  const gapX = options.gapX ?? 70
  const gapY = options.gapY ?? 14
  const computed = layersOf(
    nodes.map((n) => n.id),
    edges,
  )
  const layerOf = (n: GraphNode): number => n.layer ?? computed.get(n.id) ?? 0
  const columns: GraphNode[][] = []
  for (const n of nodes) (columns[layerOf(n)] ??= []).push(n)
  // One barycentre pass: a node sits near the average row of what points at it.
  const row = new Map<string, number>()
  columns.forEach((column, c) => {
    if (c > 0) {
      const score = (n: GraphNode): number => {
        const rows = edges.filter((e) => e.to === n.id && row.has(e.from)).map((e) => row.get(e.from)!)
        return rows.length === 0 ? Number.POSITIVE_INFINITY : rows.reduce((a, b) => a + b, 0) / rows.length
      }
      const scored = column.map((n, i) => ({ n, s: score(n), i }))
      scored.sort((a, b) => a.s - b.s || a.i - b.i)
      column.splice(0, column.length, ...scored.map((x) => x.n))
    }
    column.forEach((n, i) => row.set(n.id, i))
  })
  const placed = new Map<string, Placed>()
  columns.forEach((column, c) => column.forEach((node, i) => placed.set(node.id, { node, x: PAD + c * (w + gapX), y: PAD + LOOP_ROOM + i * (h + gapY) })))
  const width = PAD * 2 + 40 + Math.max(1, columns.length) * (w + gapX) - gapX
  const height = PAD * 2 + LOOP_ROOM + Math.max(1, ...columns.map((c) => c?.length ?? 0)) * (h + gapY) - gapY
  const marker = `${token(options.id)}-arrow`
  const parts: string[] = []
  for (const e of edges) {
    const a = placed.get(e.from)
    const b = placed.get(e.to)
    if (a === undefined || b === undefined) continue
    const { d, at, back } = route(a, b, { w, h, gapX, gapY })
    const cls = ['edge', back ? 'back' : '', e.cls ?? ''].filter((c) => c !== '').join(' ')
    const label = e.label === undefined ? '' : `<text class="elabel" x="${num(at[0])}" y="${num(at[1] - 3)}" text-anchor="middle">${esc(e.label)}</text>`
    parts.push(`<g class="${cls}">${tip(e.tooltip ?? e.label ?? '')}<path d="${d}" marker-end="url(#${marker})"/>${label}</g>`)
  }
  const maxChars = Math.floor((w - 14) / 6.2)
  for (const { node, x, y } of placed.values()) {
    const sub = node.sub === undefined ? '' : `<text class="sub" x="${num(x + 8)}" y="${num(y + h - 9)}">${esc(clip(node.sub, maxChars + 4))}</text>`
    const labelY = node.sub === undefined ? y + h / 2 + 4 : y + 16
    parts.push(
      `<g class="node ${node.cls ?? ''}" data-id="${esc(node.id)}">${tip(node.tooltip ?? node.label)}` +
        `<rect x="${num(x)}" y="${num(y)}" width="${w}" height="${h}" rx="6"/>` +
        `<text x="${num(x + 8)}" y="${num(labelY)}">${esc(clip(node.label, maxChars))}</text>${sub}</g>`,
    )
  }
  return (
    `<svg class="graph" role="img" aria-label="${esc(options.caption)}" width="${num(width)}" height="${num(height)}" viewBox="0 0 ${num(width)} ${num(height)}">` +
    `<defs><marker id="${marker}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z"/></marker></defs>` +
    `${parts.join('')}</svg>`
  )
}
