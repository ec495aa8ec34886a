/**
 * Building blocks of the report's inline SVG: text escaping, text measurement, and one layered
 * graph drawing (laid out by dagre) used for the WorkItem graphs, the statecharts and the
 * provenance graph. Every string that reaches the page goes through {@link esc}: names, titles and
 * reasons come from Agents and humans and may hold markup.
 * @module
 */
import { graphlib, layout } from '@dagrejs/dagre'

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** `value` as HTML / SVG text or double-quoted attribute content. */
export function esc(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c]!)
}

/** A CSS class fragment from free text: only `[a-z0-9_-]` survive. */
export function token(value: string): string {
  return value.toLowerCase().replace(/[^a-z0-9_-]/g, '-')
}

/**
 * `text` cut with an ellipsis so that it fits `width` px at `fontSize` (the full text goes in a
 * tooltip); `''` when not even a letter and the ellipsis fit.
 */
export function fitText(text: string, width: number, fontSize: number): string {
  if (textWidth(text, fontSize) <= width) return text
  const chars = [...text]
  let n = chars.length - 1
  while (n > 0 && textWidth(`${chars.slice(0, n).join('')}…`, fontSize) > width) n--
  return n === 0 ? '' : `${chars.slice(0, n).join('').trimEnd()}…`
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

/**
 * Advance widths in em of characters that differ much from an average lowercase letter, rounded
 * up from DejaVu Sans (the sans-serif of most Linux systems and one of the widest common ones), so
 * boxes sized from them hold the text in the fonts a reader is likely to have.
 */
const WIDTHS = new Map<string, number>([..."iljI.,:;'`|!"].map((c) => [c, 0.32] as const))
for (const c of ' ftr-()[]/') WIDTHS.set(c, 0.42)
for (const c of 'mwMW@%…') WIDTHS.set(c, 1)

/** The width `text` takes at `fontSize` px, estimated on the generous side: no font metrics exist where the page is made. */
export function textWidth(text: string, fontSize: number): number {
  let em = 0
  for (const c of text) {
    const code = c.codePointAt(0)!
    em += WIDTHS.get(c) ?? (code >= 0x2e80 ? 1.05 : c >= 'A' && c <= 'Z' ? 0.74 : 0.63)
  }
  return em * fontSize
}

/** Font sizes (px) of a graph drawing; the stylesheet sets the same sizes. */
const GRAPH_FONT = { label: 12, line: 11, edge: 11 } as const

/** One node of a {@link renderGraph} drawing. */
export interface GraphNode {
  readonly id: string
  /** Drawn in full on the first line; the box grows to hold it. */
  readonly label: string
  /** Further lines under the label, in a smaller font, each drawn in full. */
  readonly lines?: readonly string[]
  /** The browser tooltip; default the label and lines. */
  readonly tooltip?: string
  /** Extra CSS class (e.g. `st-verified`). */
  readonly cls?: string
}

/** One edge of a {@link renderGraph} drawing, from `from` to `to` (never to itself). */
export interface GraphEdge {
  readonly from: string
  readonly to: string
  /** The label's lines, each drawn in full on a white box that dagre keeps clear of the nodes and other labels. */
  readonly label?: readonly string[]
  readonly tooltip?: string
  readonly cls?: string
}

/** Options of {@link renderGraph}. */
export interface GraphOptions {
  /** Unique in the page: prefixes the arrow marker's ID. */
  readonly id: string
  /** The accessible name of the drawing. */
  readonly caption: string
  /** Boxes are at least this wide, so short labels line up. Default 0. */
  readonly minNodeWidth?: number
  /** Space between neighbouring nodes of one column. Default 16. */
  readonly nodeSep?: number
  /** Space between columns (rows when top to bottom). Default 48. */
  readonly rankSep?: number
  /** `LR` (default): sources on the left; `TB`: sources on top, for drawings too wide to read or print left to right. */
  readonly direction?: 'LR' | 'TB'
}

const PAD_X = 8
const LINE_GAP = 3
const LABEL_PAD = 3
const MARGIN = 12

const lineHeight = (size: number): number => Math.ceil(size * 1.25)

function nodeSize(n: GraphNode, minWidth: number): { width: number; height: number } {
  const lines = n.lines ?? []
  const width = Math.max(minWidth, Math.ceil(Math.max(textWidth(n.label, GRAPH_FONT.label), ...lines.map((l) => textWidth(l, GRAPH_FONT.line))) + 2 * PAD_X))
  const height = 10 + lineHeight(GRAPH_FONT.label) + lines.length * (lineHeight(GRAPH_FONT.line) + LINE_GAP)
  return { width, height }
}

function labelSize(lines: readonly string[]): { width: number; height: number } {
  return { width: Math.ceil(Math.max(...lines.map((l) => textWidth(l, GRAPH_FONT.edge))) + 2 * LABEL_PAD), height: lines.length * lineHeight(GRAPH_FONT.edge) + 2 * LABEL_PAD }
}

/** `data-box` text of a box centred on (cx, cy). */
function boxAttr(cx: number, cy: number, width: number, height: number): string {
  return `${num(cx - width / 2)} ${num(cy - height / 2)} ${num(width)} ${num(height)}`
}

/**
 * A smooth path along dagre's bend points: a uniform cubic B-spline that starts and ends on the
 * end points (the construction of d3's `curveBasis`), so edges bend without kinks.
 */
function splinePath(points: readonly { x: number; y: number }[]): string {
  const at = (x: number, y: number): string => `${num(x)},${num(y)}`
  if (points.length < 3) return `M${points.map((p) => at(p.x, p.y)).join('L')}`
  let [x0, y0, x1, y1] = [points[0]!.x, points[0]!.y, points[1]!.x, points[1]!.y]
  let d = `M${at(x0, y0)}L${at((5 * x0 + x1) / 6, (5 * y0 + y1) / 6)}`
  const step = (x: number, y: number): void => {
    d += `C${at((2 * x0 + x1) / 3, (2 * y0 + y1) / 3)} ${at((x0 + 2 * x1) / 3, (y0 + 2 * y1) / 3)} ${at((x0 + 4 * x1 + x) / 6, (y0 + 4 * y1 + y) / 6)}`
    ;[x0, y0, x1, y1] = [x1, y1, x, y]
  }
  for (const p of points.slice(2)) step(p.x, p.y)
  step(x1, y1)
  return `${d}L${at(x1, y1)}`
}

/**
 * A layered drawing of `nodes` and `edges` as one `<svg>`, laid out by dagre: it
 * orders the columns, breaks cycles, routes the edges and places every edge label as a box of its
 * own, so no label is cut short and no two labels, or a label and a node, overlap. Edges that run
 * against the direction (back in a lifecycle) are dashed. Every node is a `<g class="node …" data-id
 * data-box>` and every label a `<g class="elabel" data-box>`, with a tooltip.
 */
export function renderGraph(nodes: readonly GraphNode[], edges: readonly GraphEdge[], options: GraphOptions): string {
  const g = new graphlib.Graph({ multigraph: true })
  const direction = options.direction ?? 'LR'
  g.setGraph({ rankdir: direction, nodesep: options.nodeSep ?? 16, edgesep: 12, ranksep: options.rankSep ?? 48, marginx: MARGIN, marginy: MARGIN })
  g.setDefaultEdgeLabel(() => ({}))
  const byId = new Map(nodes.map((n) => [n.id, n]))
  for (const n of byId.values()) g.setNode(n.id, nodeSize(n, options.minNodeWidth ?? 0))
  const drawn = edges.filter((e) => e.from !== e.to && byId.has(e.from) && byId.has(e.to))
  drawn.forEach((e, i) => g.setEdge(e.from, e.to, e.label === undefined || e.label.length === 0 ? { minlen: 1 } : { ...labelSize(e.label), labelpos: 'c', minlen: 1 }, `e${i}`))
  layout(g)
  const size = g.graph() as { width?: number; height?: number }
  // dagre reports -Infinity for a graph without nodes (e.g. a Group that authorized no WorkItem).
  const extent = (v: number | undefined): number => (v !== undefined && Number.isFinite(v) ? Math.ceil(v) : 2 * MARGIN)
  const width = extent(size.width)
  const height = extent(size.height)
  const marker = `${token(options.id)}-arrow`
  const paths: string[] = []
  const labels: string[] = []
  drawn.forEach((e, i) => {
    const at = g.edge(e.from, e.to, `e${i}`) as { points?: { x: number; y: number }[]; x?: number; y?: number; width?: number; height?: number }
    const points = at.points ?? []
    if (points.length < 2) return
    const [a, b] = [g.node(e.from) as { x: number; y: number }, g.node(e.to) as { x: number; y: number }]
    const back = direction === 'LR' ? b.x < a.x : b.y < a.y
    const cls = ['edge', back ? 'back' : '', e.cls ?? ''].filter((c) => c !== '').join(' ')
    const text = e.tooltip ?? e.label?.join(', ') ?? ''
    paths.push(`<g class="${cls}">${tip(text)}<path d="${splinePath(points)}" marker-end="url(#${marker})"/></g>`)
    if (e.label === undefined || e.label.length === 0 || at.x === undefined || at.y === undefined) return
    const { width: w, height: h } = labelSize(e.label)
    const top = at.y - h / 2 + LABEL_PAD
    const tspans = e.label.map((line, k) => `<tspan x="${num(at.x!)}" y="${num(top + (k + 0.8) * lineHeight(GRAPH_FONT.edge))}">${esc(line)}</tspan>`).join('')
    labels.push(
      `<g class="elabel${back ? ' back' : ''}" data-box="${boxAttr(at.x, at.y, w, h)}">${tip(text)}<rect x="${num(at.x - w / 2)}" y="${num(at.y - h / 2)}" width="${num(w)}" height="${num(h)}" rx="3"/>` +
        `<text text-anchor="middle">${tspans}</text></g>`,
    )
  })
  const boxes: string[] = []
  for (const n of byId.values()) {
    const { x, y, width: w, height: h } = g.node(n.id) as { x: number; y: number; width: number; height: number }
    const left = x - w / 2
    const top = y - h / 2
    const lines = (n.lines ?? [])
      .map((line, k) => `<text class="sub" x="${num(left + PAD_X)}" y="${num(top + 5 + lineHeight(GRAPH_FONT.label) + (k + 0.85) * (lineHeight(GRAPH_FONT.line) + LINE_GAP))}">${esc(line)}</text>`)
      .join('')
    boxes.push(
      `<g class="node ${n.cls ?? ''}" data-id="${esc(n.id)}" data-box="${boxAttr(x, y, w, h)}">${tip(n.tooltip ?? [n.label, ...(n.lines ?? [])].join(' — '))}` +
        `<rect x="${num(left)}" y="${num(top)}" width="${num(w)}" height="${num(h)}" rx="6"/>` +
        `<text x="${num(left + PAD_X)}" y="${num(top + 4 + lineHeight(GRAPH_FONT.label) * 0.85)}">${esc(n.label)}</text>${lines}</g>`,
    )
  }
  return (
    `<svg class="graph" role="img" aria-label="${esc(options.caption)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
    `<defs><marker id="${marker}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z"/></marker></defs>` +
    `${paths.join('')}${labels.join('')}${boxes.join('')}</svg>`
  )
}
