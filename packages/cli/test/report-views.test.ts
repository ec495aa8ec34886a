/**
 * The report's views as structure, on a failure-suite run (so it has injected faults): colour has
 * one meaning per view and Groups and Agents share no colour; statechart labels are drawn whole,
 * inside their drawing and apart from each other and from the states; the faults sit on both
 * timelines; provenance names deliverables; the header names the Weft version and protocol
 * commit; the budget ledger matches the charges in the log; the Event log has a row per Event;
 * bar labels are dark on light; and a print stylesheet keeps colours and font sizes.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { EventPayload } from '@weft/spec'
import { locateBundle } from '@weft/spec/bundle'
import { MISSION_TRANSITIONS, WORK_ITEM_TRANSITIONS } from '@weft/spec/machines'
import { beforeAll, describe, expect, it } from 'vitest'
import { runFaultSuite, type FaultSuiteRun } from '../src/demo/faults.js'
import { reportBuild } from '../src/report/facts.js'
import { renderReport } from '../src/report/report.js'

/** The `<svg …>…</svg>` element whose start tag contains `marker` (drawings never nest an `<svg>`). */
function svgWith(html: string, marker: string): string {
  const at = html.indexOf(marker)
  expect(at, marker).toBeGreaterThanOrEqual(0)
  const start = html.lastIndexOf('<svg', at)
  return html.slice(start, html.indexOf('</svg>', at) + '</svg>'.length)
}

/** The HTML between `<section id=…>` and its end. */
function section(html: string, id: string): string {
  const start = html.indexOf(`<section id="${id}">`)
  expect(start, id).toBeGreaterThanOrEqual(0)
  return html.slice(start, html.indexOf('</section>', start))
}

const all = (text: string, re: RegExp): RegExpExecArray[] => [...text.matchAll(new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`))]

interface Box {
  readonly x: number
  readonly y: number
  readonly w: number
  readonly h: number
}

const boxesOf = (svg: string): { kind: string; box: Box }[] =>
  all(svg, /<g class="(node|elabel)[^"]*"[^>]*data-box="([^"]+)"/).map((m) => {
    const [x, y, w, h] = m[2]!.split(' ').map(Number)
    return { kind: m[1]!, box: { x: x!, y: y!, w: w!, h: h! } }
  })

const overlap = (a: Box, b: Box): boolean => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h

/** WCAG contrast ratio of two `#rrggbb` colours. */
function contrast(a: string, b: string): number {
  const lum = (hex: string): number => {
    const [r, g, bl] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!
  }
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x)
  return (hi! + 0.05) / (lo! + 0.05)
}

describe('the report of a failure-suite run', () => {
  let run: FaultSuiteRun
  let html: string
  beforeAll(async () => {
    run = await runFaultSuite({ seed: 1 })
    html = renderReport(run.result, { faults: run.result.faults, checks: run.result.verification.checks })
  }, 60_000)

  it('gives each timeline its own legend, and Groups and Agents no common colour', () => {
    const views = new Map<string, Map<string, string>>()
    for (const m of all(html, /<ul class="legend" data-view="([^"]+)">(.*?)<\/ul>/)) {
      const colours = views.get(m[1]!) ?? new Map<string, string>()
      for (const s of all(m[2]!, /<li class="swatch" data-color="([^"]+)">.*?<\/svg>([^<]*)<\/li>/)) {
        // One meaning per colour within a view.
        expect(colours.has(s[1]!), `${s[1]} twice in ${m[1]}`).toBe(false)
        colours.set(s[1]!, s[2]!)
      }
      views.set(m[1]!, colours)
    }
    const slots = views.get('gantt-slots')
    const groups = views.get('gantt-groups')
    expect([...(slots?.values() ?? [])]).toEqual(run.result.missions.map((m) => m.label))
    expect(groups?.size).toBe(new Set(run.result.timeline.map((r) => r.agentId)).size)
    for (const colour of slots!.keys()) expect(groups!.has(colour), colour).toBe(false)
    // Every bar takes a colour its own view's legend explains.
    for (const [id, legend] of [
      ['gantt-slots', slots!],
      ['gantt-groups', groups!],
    ] as const) {
      const fills = all(svgWith(html, `id="${id}"`), /<rect class="bar"[^>]*fill="([^"]+)"/).map((m) => m[1]!)
      expect(fills.length).toBe(run.result.timeline.length)
      for (const fill of fills) expect(legend.has(fill), `${fill} in ${id}`).toBe(true)
    }
  })

  it('lays out every statechart label whole, inside the drawing, overlapping no other label or state', () => {
    for (const [label, rows] of [
      ['the WorkItem machine', WORK_ITEM_TRANSITIONS],
      ['the Mission machine', MISSION_TRANSITIONS],
    ] as const) {
      const svg = svgWith(html, `aria-label="${label}"`)
      const [width, height] = [Number(/ width="([\d.]+)"/.exec(svg)![1]), Number(/ height="([\d.]+)"/.exec(svg)![1])]
      const boxes = boxesOf(svg)
      expect(boxes.filter((b) => b.kind === 'node').length).toBeGreaterThanOrEqual(new Set(rows.flatMap((r) => [r.from, r.to])).size)
      expect(boxes.filter((b) => b.kind === 'elabel').length).toBeGreaterThan(5)
      for (const { box } of boxes) {
        expect(box.x).toBeGreaterThanOrEqual(0)
        expect(box.y).toBeGreaterThanOrEqual(0)
        expect(box.x + box.w).toBeLessThanOrEqual(width)
        expect(box.y + box.h).toBeLessThanOrEqual(height)
      }
      for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) expect(overlap(boxes[i]!.box, boxes[j]!.box), `${label}: boxes ${i} and ${j}`).toBe(false)
      // Nothing is cut short: no ellipsis, and every transition's event (short name) and guard is drawn.
      expect(svg).not.toContain('…')
      const text = all(svg, /<(?:tspan|text)[^>]*>([^<]+)</)
        .map((m) => m[1]!)
        .join('\n')
      for (const r of rows) {
        const event = r.event.replace(/^(work|mission|approval)\./, '').replace(/^ext\..*\./, '')
        expect(text, `${r.from} ${r.event}`).toContain(r.guard === undefined ? event : `${event} [${r.guard}]`)
      }
    }
  })

  it('marks every injected fault on both timelines, numbered as in the failure table', () => {
    const faults = run.result.faults
    expect(faults.length).toBeGreaterThan(5)
    for (const id of ['gantt-slots', 'gantt-groups']) {
      const svg = svgWith(html, `id="${id}"`)
      const marks = all(svg, /<g class="fault[^"]*" data-fault="(\d+)"><title>([^<]*)<\/title>/)
      expect(marks.map((m) => Number(m[1]))).toEqual(faults.map((_, i) => i + 1))
      marks.forEach((m, i) => expect(m[2]).toContain(faults[i]!.name))
    }
    const table = section(html, 'faults')
    faults.forEach((f, i) => expect(table).toContain(`<td>F${i + 1}</td><td>${f.name}</td>`))
    // A run without faults has no fault markers.
    expect(renderReport(run.result)).not.toContain('data-fault=')
  })

  it('names the deliverable of every Artifact in the provenance graph', () => {
    const provenance = section(html, 'provenance')
    const groups = new Map([...run.world.authority.state.groups].map(([id, g]) => [id, g]))
    let named = 0
    for (const a of run.result.facts.artifacts) {
      const contract = groups.get(a.groupId)!.workItems.get(a.workItemId)!.doc.contract
      const manifest = [...groups.get(a.groupId)!.artifacts.values()].find((r) => r.manifest.contentHash === a.contentHash)!.manifest
      const deliverable = contract.requiredDeliverables.find((d) => d.mediaType === manifest.mediaType && d.schema === manifest.schemaUri)
      if (deliverable === undefined) continue
      named++
      const node = new RegExp(`data-id="artifact:${a.contentHash}"[^>]*><title>[^<]*</title><rect[^>]*/><text[^>]*>${deliverable.deliverableId} · ${a.mediaType.replace('+', '\\+')}</text>`)
      expect(provenance).toMatch(node)
    }
    expect(named).toBe(run.result.facts.artifacts.length)
  })

  it('names the Weft version and, when the run found the bundle, the protocol commit in the header', () => {
    const header = html.slice(html.indexOf('<header>'), html.indexOf('</header>'))
    const version = (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version
    expect(header).toContain(`Made by Weft <code data-version>${version}</code>`)
    const pin = join(locateBundle().dir, 'PIN.json')
    if (existsSync(pin)) expect(header).toContain(`protocol commit <code data-commit>${(JSON.parse(readFileSync(pin, 'utf8')) as { commit: string }).commit}</code>`)
    else expect(header).toContain('protocol commit not known')
    // Without a bundle the header says so and gives the version only.
    const bare = renderReport({ ...run.result, facts: { ...run.result.facts, build: { weftVersion: '9.9.9' } } })
    const bareHeader = bare.slice(bare.indexOf('<header>'), bare.indexOf('</header>'))
    expect(bareHeader).toContain('Made by Weft <code data-version>9.9.9</code>; protocol commit not known')
    expect(bareHeader).not.toContain('data-commit')
    expect(reportBuild().weftVersion).toBe(version)
  })

  it('shows the budget ledger of every Mission and WorkItem, with what the log charged to each', () => {
    const ledger = section(html, 'ledger')
    const rows = all(ledger, /<tr class="(?:mission|item)" data-scope="(mission|workItem)" data-group="([^"]+)"(?: data-item="([^"]+)")?>(.*?)<\/tr>/)
    const graphs = run.result.facts.graphs
    expect(rows.length).toBe(graphs.length + graphs.reduce((n, g) => n + g.workItems.length, 0))
    // The charges of the log: every resource_usage_recorded delta, by WorkItem and by Group.
    const byItem = new Map<string, Record<string, number>>()
    const byGroup = new Map<string, Record<string, number>>()
    const add = (map: Map<string, Record<string, number>>, key: string, delta: Record<string, number | undefined>): void => {
      const sum = map.get(key) ?? {}
      for (const [d, v] of Object.entries(delta)) sum[d] = (sum[d] ?? 0) + (v ?? 0)
      map.set(key, sum)
    }
    for (const g of graphs) {
      for (const e of run.world.authority.events(g.groupId)) {
        if (e.kind !== 'ext.missionweaveprotocol.core.resource_usage_recorded') continue
        const p = e.payload as EventPayload<'ext.missionweaveprotocol.core.resource_usage_recorded'>
        add(byItem, p.workItemId, p.usageDelta)
        add(byGroup, g.groupId, p.usageDelta)
      }
    }
    const childOf = new Map(graphs.filter((g) => g.parent !== undefined).map((g) => [g.parent!.workItemId, g.groupId]))
    const missionTotal = (groupId: string): Record<string, number> => {
      const sum = { ...(byGroup.get(groupId) ?? {}) }
      for (const child of graphs.filter((g) => g.parent?.groupId === groupId)) for (const [d, v] of Object.entries(missionTotal(child.groupId))) sum[d] = (sum[d] ?? 0) + v
      return sum
    }
    let charged = 0
    for (const [, scope, groupId, itemId, cells] of rows) {
      const child = itemId === undefined ? undefined : childOf.get(itemId)
      // A WorkItem's budget covers its subtree: a promoted WorkItem's child Mission too (§14).
      const expected = scope === 'mission' ? missionTotal(groupId!) : child === undefined ? (byItem.get(itemId!) ?? {}) : missionTotal(child)
      for (const [, dim, value] of all(cells!, /data-dim="([^"]+)" data-col="charged" data-value="(\d+)"/)) {
        expect(Number(value), `${scope} ${itemId ?? groupId} ${dim}`).toBe(expected[dim!] ?? 0)
        charged += Number(value)
      }
    }
    expect(charged).toBeGreaterThan(0)
  })

  it('lists every Event of every Group log, collapsed', () => {
    const log = section(html, 'events')
    expect(log).toMatch(/<details id="eventlog"><summary>/)
    const total = run.result.facts.graphs.reduce((n, g) => n + run.world.authority.events(g.groupId).length, 0)
    const body = log.slice(log.indexOf('<tbody>'), log.indexOf('</tbody>'))
    expect(all(body, /<tr>/).length).toBe(total)
    expect(total).toBe(run.result.counts['events'])
    // Group, sequence, kind, actor and time of the first Event.
    expect(body).toMatch(/^<tbody><tr><td>checkout<\/td><td class="num">1<\/td><td>mission.created<\/td><td>human priya<\/td><td class="num">\+0:00:00<\/td><\/tr>/)
  })

  it('labels the bars in dark text on light bar colours, and has a print stylesheet with readable sizes', () => {
    for (const id of ['gantt-slots', 'gantt-groups']) {
      const labels = all(svgWith(html, `id="${id}"`), /<text class="barlabel"[^>]*fill="(#[0-9a-f]{6})" stroke="(#[0-9a-f]{6})"/)
      expect(labels.length).toBeGreaterThan(10)
      for (const [, text, bar] of labels) expect(contrast(text!, bar!), `${text} on ${bar}`).toBeGreaterThanOrEqual(7)
    }
    const css = html.slice(html.indexOf('<style>'), html.indexOf('</style>'))
    expect(css).toMatch(/@media print\{[\s\S]*print-color-adjust:exact/)
    const sizes = all(css, /font-size:(\d+(?:\.\d+)?)px/).map((m) => Number(m[1]))
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(11)
    // White fills are for shapes (bands, boxes); the only white text is the fault numbers, on a dark badge.
    const white = all(css, /fill:#fff[;}]/).map((m) => css.slice(css.lastIndexOf('}', m.index) + 1, m.index).trim())
    expect(white.filter((selector) => !/(rect|\.band)\{$/.test(selector))).toEqual(['.fault-n{'])
    expect(contrast('#ffffff', /\.fault-badge\{fill:(#[0-9a-f]{6})/.exec(css)![1]!)).toBeGreaterThanOrEqual(4.5)
  })
})
