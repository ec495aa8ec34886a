/**
 * The HTML report as text: a real demo run's page names every WorkItem, draws one bar per
 * Execution Lease in both timelines, shows both Missions' final states, both statecharts with all
 * their rows, and every Artifact's provenance; it is self-contained; and hostile names from a
 * synthetic result come out escaped. `report-views.test.ts` covers the views' layout and legends.
 */
import { MISSION_TRANSITIONS, WORK_ITEM_TRANSITIONS } from '@weft/spec/machines'
import { beforeAll, describe, expect, it } from 'vitest'
import { runDemo, type DemoResult } from '../src/demo/run.js'
import type { SlotRecord } from '../src/demo/timeline.js'
import { renderReport } from '../src/report/report.js'

/** The `<svg id=…>…</svg>` element of `html` (the charts never nest an `<svg>`). */
function svgById(html: string, id: string): string {
  const start = html.indexOf(`<svg id="${id}"`)
  expect(start).toBeGreaterThanOrEqual(0)
  return html.slice(start, html.indexOf('</svg>', start))
}

/** The HTML between `<section id=…>` and its end. */
function section(html: string, id: string): string {
  const start = html.indexOf(`<section id="${id}">`)
  expect(start).toBeGreaterThanOrEqual(0)
  return html.slice(start, html.indexOf('</section>', start))
}

const count = (text: string, needle: string): number => text.split(needle).length - 1

describe('renderReport of a demo run', () => {
  let result: DemoResult
  let html: string
  beforeAll(async () => {
    result = (await runDemo({ seed: 1 })).result
    html = renderReport(result)
  })

  it('is one self-contained document: no scripts, nothing fetched', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true)
    expect(html).not.toMatch(/<script|<link|<img|<iframe|\ssrc=|\shref=|@import|url\((?!#)/i)
    expect([...html.matchAll(/<section id="([a-z]+)">/g)].map((m) => m[1])).toEqual(['missions', 'timeline', 'graphs', 'statecharts', 'faults', 'ledger', 'provenance', 'events'])
  })

  it('draws one bar per Execution Lease in the slot chart and in the Group chart', () => {
    expect(result.timeline.length).toBeGreaterThan(10)
    for (const id of ['gantt-slots', 'gantt-groups']) {
      const svg = svgById(html, id)
      expect(count(svg, '<rect class="bar"')).toBe(result.timeline.length)
      for (const r of result.timeline) expect(count(svg, `data-lease="${r.executionLeaseId}"`)).toBe(1)
    }
    // §11.3: the preemption of the run is marked where its lease ended.
    const preempted = result.timeline.filter((r) => r.ended === 'preempted')
    expect(preempted.length).toBeGreaterThan(0)
    expect(count(svgById(html, 'gantt-slots'), 'class="mk end-preempted"')).toBe(preempted.length)
    // Offers sit on the Group chart only.
    expect(count(svgById(html, 'gantt-groups'), '<g class="mark mark-offer">')).toBe(result.counts['offers']! - result.counts['reassignments']!)
  })

  it('draws a row per Worker slot that held a lease', () => {
    const slots = new Set(result.timeline.map((r) => `${r.agentId}#${r.slot}`))
    expect(count(svgById(html, 'gantt-slots'), 'class="rowlabel"')).toBe(slots.size)
  })

  it('draws every WorkItem of both Missions and the child Mission with its final state', () => {
    const graphs = section(html, 'graphs')
    expect(result.facts.graphs).toHaveLength(3)
    for (const g of result.facts.graphs) {
      for (const w of g.workItems) {
        expect(graphs).toContain(`data-id="${w.workItemId}"`)
        expect(graphs).toContain(`${w.title} (${w.workItemId}): ${w.state}`)
      }
    }
    const child = result.facts.graphs.find((g) => g.parent !== undefined)
    expect(child?.parent?.groupId).toBe(result.missions.find((m) => m.label === 'checkout')?.groupId)
    for (const m of result.missions) expect(graphs).toContain(`(${m.label}): ${m.state}`)
    expect(section(html, 'missions')).toMatch(/<td>search<\/td><td>[^<]+<\/td><td class="mission-state st-approved">approved<\/td>/)
    expect(section(html, 'missions')).toMatch(/<td>checkout<\/td><td>[^<]+<\/td><td class="mission-state st-approved">approved<\/td>/)
  })

  it('draws both statecharts with every state and lists every transition row', () => {
    const charts = section(html, 'statecharts')
    for (const rows of [WORK_ITEM_TRANSITIONS, MISSION_TRANSITIONS]) {
      for (const state of new Set(rows.flatMap((r) => [r.from, r.to]))) expect(charts).toContain(`data-id="${state}"`)
    }
    expect(count(charts, '<tr><td>')).toBe(WORK_ITEM_TRANSITIONS.length + MISSION_TRANSITIONS.length)
    // The run's aggregates are counted where they ended.
    const verified = result.facts.graphs.flatMap((g) => g.workItems).filter((w) => w.state === 'verified').length
    expect(charts).toContain(`${verified} ended here<`)
  })

  it('draws every Artifact with its producing WorkItem and lease, and what consumed it', () => {
    const provenance = section(html, 'provenance')
    expect(result.facts.artifacts.length).toBeGreaterThan(0)
    for (const a of result.facts.artifacts) {
      expect(provenance).toContain(`data-id="artifact:${a.contentHash}"`)
      expect(provenance).toContain(`under Execution Lease ${a.executionLeaseId}`)
      expect(a.consumers.length).toBeGreaterThan(0)
    }
    // §7.3: every Artifact a Mission submitted is consumed by that submission.
    for (const m of result.missions) {
      for (const hash of m.artifactHashes) {
        const node = result.facts.artifacts.find((a) => a.contentHash === hash)
        expect(node?.consumers.some((c) => c.kind === 'mission' && c.groupId === m.groupId)).toBe(true)
      }
    }
    // §14: the child Mission's Artifacts are consumed by the parent's review of the promoted WorkItem.
    const child = result.facts.graphs.find((g) => g.parent !== undefined)!
    const childArtifacts = result.facts.artifacts.filter((a) => a.groupId === child.groupId)
    expect(childArtifacts.length).toBeGreaterThan(0)
    expect(childArtifacts.some((a) => a.consumers.some((c) => c.kind === 'review' && c.ref === child.parent!.workItemId))).toBe(true)
  })

  it('shows the checks the result answers when no verifier checks are given, and the given ones otherwise', () => {
    expect(section(html, 'faults')).toContain('This run injected no failures.')
    expect(count(section(html, 'faults'), '<td class="held">held</td>')).toBe(3)
    const page = renderReport(result, {
      faults: [{ name: 'duplicate Event delivery', atMs: result.startMs + 90 * 60_000, expected: 'the inbox drops it', observed: 'dropped', held: true }],
      checks: [{ name: 'state = fold(log)', held: false, detail: 'sequence 7 differs' }],
    })
    const faults = section(page, 'faults')
    expect(faults).toContain('<td>duplicate Event delivery</td><td>+1:30</td><td>the inbox drops it</td><td>dropped</td><td class="held">held</td>')
    expect(faults).toContain('<td>state = fold(log)</td><td class="broken">broken</td><td>sequence 7 differs</td>')
  })
})

const T0 = Date.parse('2026-07-15T08:00:00.000Z')
const EVIL = `<script>alert("x")</script>`

/** A small result whose every name, title and reason is markup. */
function hostileResult(): DemoResult {
  const agent = 'urn:a:<b>'
  const group = 'urn:g:"><svg onload=alert(1)>'
  const lease = (id: string, startMin: number, endMin: number | undefined, ended: SlotRecord['ended']): SlotRecord => ({
    agentId: agent,
    slot: 0,
    groupId: group,
    workItemId: 'urn:w:1',
    ownershipEpoch: 1,
    executionLeaseId: id,
    startMs: T0 + startMin * 60_000,
    endMs: endMin === undefined ? undefined : T0 + endMin * 60_000,
    ended,
  })
  return {
    seed: 3,
    approved: false,
    missions: [
      {
        label: `</h3>${EVIL}`,
        missionId: 'urn:m:1',
        groupId: group,
        title: `<img src=x onerror=alert(1)>`,
        state: 'active" onclick="x',
        revision: 1,
        events: 4,
        changeRequests: 0,
        artifactHashes: [],
      },
    ],
    timeline: [lease('urn:l:<1>', 0, 30, 'preempted'), lease('urn:l:2', 40, undefined, 'running')],
    counts: { '<i>events</i>': 4 },
    sideEffects: [],
    startMs: T0,
    endMs: T0 + 60 * 60_000,
    rounds: 2,
    warnings: [`worker: ${EVIL}`],
    facts: {
      names: { [agent]: `<iframe src="//evil">` },
      graphs: [{ groupId: group, workItems: [{ workItemId: 'urn:w:1', title: EVIL, state: '<u>queued</u>', dependencyIds: ['urn:w:missing'] }] }],
      marks: [{ atMs: T0 + 60_000, kind: 'offer', groupId: group, workItemId: 'urn:w:1', agentIds: [agent] }],
      artifacts: [
        {
          artifactId: 'urn:x:"1"',
          contentHash: `sha256:${'a'.repeat(64)}`,
          mediaType: 'text/<html>',
          groupId: group,
          workItemId: 'urn:w:1',
          producerAgentId: agent,
          executionLeaseId: 'urn:l:<1>',
          ownershipEpoch: 1,
          deliverableId: `<b>deliverable</b>`,
          sources: [],
          consumers: [{ kind: 'mission', ref: `${group}@1`, groupId: group, revision: 1 }],
        },
      ],
      ledger: [
        {
          scope: 'workItem',
          groupId: group,
          missionId: 'urn:m:1',
          workItemId: 'urn:w:1',
          currency: '<i>USD</i>',
          dimensions: Object.fromEntries(
            ['financialMicrounits', 'modelTokens', 'toolCalls', 'computeSeconds', 'wallClockSeconds', 'externalActions'].map((d) => [
              d,
              { limit: 10, source: 'own', reserved: 0, used: 1, remaining: 9 },
            ]),
          ) as never,
        },
      ],
      events: [{ groupId: group, sequence: 1, kind: '<script>kind</script>', actorType: 'agent', actorId: agent, atMs: T0 }],
      build: { weftVersion: `<script>1</script>`, protocolCommit: `"><script>` },
    },
  }
}

describe('renderReport of hostile names', () => {
  const html = renderReport(hostileResult(), {
    title: `${EVIL} report`,
    faults: [{ name: '<iframe>', atMs: T0, expected: '"quoted"', observed: `'single'`, held: false }],
    checks: [{ name: '<object>', held: true, detail: '&amp;' }],
  })

  it('escapes every name, title, state and reason', () => {
    expect(html).not.toMatch(/<script|<img|<iframe|<object|<svg onload|<u>|<b>|<i>/i)
    expect(html).not.toContain('onclick="x')
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;')
    expect(html).toContain('&lt;iframe src=&quot;//evil&quot;&gt;')
    expect(html).toContain('&amp;amp;')
    expect(html).toContain('data-lease="urn:l:&lt;1&gt;"')
    // The new views: deliverable, ledger currency, Event kind, build line.
    expect(html).toContain('&lt;b&gt;deliverable&lt;/b&gt; · text/&lt;html&gt;')
    expect(html).toContain('money (&lt;i&gt;USD&lt;/i&gt;)')
    expect(html).toContain('<td>&lt;script&gt;kind&lt;/script&gt;</td>')
    expect(html).toContain('<code data-version>&lt;script&gt;1&lt;/script&gt;</code>')
    // Class names built from states keep only safe characters.
    expect(html).toContain('st-active--onclick--x')
  })

  it('draws a Group without WorkItems as an empty drawing of finite size', () => {
    const empty = hostileResult()
    const page = renderReport({ ...empty, facts: { ...empty.facts, graphs: empty.facts.graphs.map((g) => ({ ...g, workItems: [] })) } })
    expect(page).not.toMatch(/Infinity|NaN/)
  })

  it('still draws each lease, the running one dashed to the end of the run', () => {
    const slots = svgById(html, 'gantt-slots')
    expect(count(slots, '<rect class="bar"')).toBe(2)
    expect(count(slots, 'stroke-dasharray="3 2"')).toBe(1)
    expect(html).toContain('still running at the end')
  })
})
