/**
 * The Mission view: one Group's Events folded live (model.ts) and shown in tabs — overview, the
 * WorkItem graph (§10.4), the lease timeline (§11.3), the budget ledger (§12), Messages (§9),
 * Artifacts and Evidence (§13), the Event log, Approval (§7.3) and intervention.
 * @module
 */
import { useMemo, useRef, useState } from 'preact/hooks'
import { workGraph, WORK_NODE } from '../graph.js'
import { leaseLanes, spanEndMs } from '../lease-lanes.js'
import type { GroupView, WorkItemView } from '../model.js'
import type { SignedIn } from '../session.js'
import { DIMENSION_LABELS, formatDimension, missionLimit, USAGE_DIMENSIONS } from '../usage.js'
import { ApprovalPage } from './Approval.js'
import { formatTime, shortId, StateBadge } from './common.js'
import { CancelWork, Intervene } from './Directives.js'
import { ArtifactsPanel, EventLog, MessagesPanel } from './Panels.js'

const TABS = [
  ['overview', 'Overview'],
  ['work', 'WorkItems'],
  ['leases', 'Leases'],
  ['budget', 'Budget'],
  ['messages', 'Messages'],
  ['artifacts', 'Artifacts & Evidence'],
  ['events', 'Event log'],
  ['approval', 'Approval'],
  ['intervene', 'Intervene'],
] as const

type Tab = (typeof TABS)[number][0]

export function MissionView({ session, groupId, onFollowUp }: { readonly session: SignedIn; readonly groupId: string; readonly onFollowUp: (missionId: string, title: string) => void }) {
  const entry = session.open(groupId)
  const view = entry.view
  const [tab, setTab] = useState<Tab>('overview')
  const tabRefs = useRef<(HTMLButtonElement | null)[]>([])

  if (entry.status === 'not_found') {
    return (
      <section class="panel" data-testid="group-not-found">
        <h1>Not found</h1>
        <p>
          <code class="code">GROUP_NOT_FOUND</code> This Group does not exist or is not visible to you.
        </p>
      </section>
    )
  }

  // WAI-ARIA tabs: arrow keys move between tabs, Tab moves into the panel.
  const onKey = (event: KeyboardEvent, index: number): void => {
    const delta = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0
    const to = event.key === 'Home' ? 0 : event.key === 'End' ? TABS.length - 1 : delta === 0 ? -1 : (index + delta + TABS.length) % TABS.length
    if (to < 0) return
    event.preventDefault()
    setTab(TABS[to]![0])
    tabRefs.current[to]?.focus()
  }

  const awaiting = view.missionState === 'awaiting_approval'
  return (
    <section class="mission" aria-labelledby="mission-title" data-testid="mission-view">
      <header class="mission-head">
        <div>
          <h1 id="mission-title" data-testid="mission-title">
            {view.title ?? shortId(view.missionId ?? groupId)}
          </h1>
          <p class="muted small ids">
            Mission <code>{view.missionId ?? '—'}</code> · Group <code>{groupId}</code>
          </p>
        </div>
        <dl class="facts">
          <div>
            <dt>State</dt>
            <dd>
              <StateBadge state={view.missionState} testId="mission-state" />
            </dd>
          </div>
          <div>
            <dt>Revision</dt>
            <dd data-testid="mission-revision">{view.missionRevision ?? '—'}</dd>
          </div>
          <div>
            <dt>Events</dt>
            <dd data-testid="event-count">{view.head}</dd>
          </div>
          <div>
            <dt>Feed</dt>
            <dd>{entry.status === 'paused' ? `paused (${entry.errorCode ?? ''})` : entry.status}</dd>
          </div>
        </dl>
      </header>
      {awaiting && tab !== 'approval' ? (
        <p class="notice" role="status">
          This Mission awaits your decision.{' '}
          <button type="button" class="link" onClick={() => setTab('approval')} data-testid="go-approval">
            Open the Approval page
          </button>
        </p>
      ) : null}
      <div class="tabs" role="tablist" aria-label="Mission views">
        {TABS.map(([id, label], i) => (
          <button
            key={id}
            ref={(el) => {
              tabRefs.current[i] = el
            }}
            type="button"
            role="tab"
            id={`tab-${id}`}
            aria-selected={tab === id}
            aria-controls={`panel-${id}`}
            tabIndex={tab === id ? 0 : -1}
            class={tab === id ? 'tab current' : 'tab'}
            onClick={() => setTab(id)}
            onKeyDown={(e) => onKey(e, i)}
            data-testid={`tab-${id}`}
          >
            {label}
            {id === 'approval' && awaiting ? <span class="pill">1</span> : null}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} class="tabpanel">
        {tab === 'overview' ? <Overview view={view} /> : null}
        {tab === 'work' ? <WorkPanel view={view} session={session} /> : null}
        {tab === 'leases' ? <LeaseTimeline view={view} /> : null}
        {tab === 'budget' ? <BudgetLedger view={view} /> : null}
        {tab === 'messages' ? <MessagesPanel view={view} session={session} /> : null}
        {tab === 'artifacts' ? <ArtifactsPanel view={view} /> : null}
        {tab === 'events' ? <EventLog view={view} /> : null}
        {tab === 'approval' ? <ApprovalPage view={view} session={session} /> : null}
        {tab === 'intervene' ? <Intervene view={view} session={session} onFollowUp={onFollowUp} /> : null}
      </div>
    </section>
  )
}

function Overview({ view }: { readonly view: GroupView }) {
  const m = view.mission
  const counts = new Map<string, number>()
  for (const w of view.workItems.values()) counts.set(w.state, (counts.get(w.state) ?? 0) + 1)
  return (
    <div class="grid2">
      <section class="card" aria-labelledby="ov-objective">
        <h2 id="ov-objective">Objective</h2>
        <p class="prose">{m?.objective ?? '—'}</p>
        <h3>Definition of done</h3>
        <ul class="plain">
          {(m?.definitionOfDone ?? []).map((c) => (
            <li key={c.criterionId}>
              <code>{c.criterionId}</code> {c.description} <span class="muted small">({c.evidenceRequired.join(', ')})</span>
            </li>
          ))}
        </ul>
        {view.endReason === undefined ? null : (
          <p>
            <strong>Ended:</strong> {view.endReason}
          </p>
        )}
      </section>
      <section class="card" aria-labelledby="ov-facts">
        <h2 id="ov-facts">Facts</h2>
        <dl class="kv">
          <dt>MissionOwner</dt>
          <dd>{m?.missionOwner.id ?? '—'}</dd>
          <dt>Coordinator</dt>
          <dd>
            {m?.coordinator.agentId ?? '—'} {m === undefined ? null : <span class="muted">(epoch {m.coordinator.coordinatorEpoch})</span>}
          </dd>
          <dt>Deadline</dt>
          <dd>{formatTime(m?.deadline)}</dd>
          <dt>Created</dt>
          <dd>{formatTime(m?.createdAt)}</dd>
          <dt>WorkItems</dt>
          <dd data-testid="work-counts">{counts.size === 0 ? 'none yet' : [...counts.entries()].map(([s, n]) => `${n} ${s}`).join(', ')}</dd>
          <dt>Last Event</dt>
          <dd>{formatTime(view.lastEventAt)}</dd>
        </dl>
        <h3>Budget</h3>
        <BudgetSummary view={view} />
      </section>
    </div>
  )
}

function BudgetSummary({ view }: { readonly view: GroupView }) {
  const budget = view.mission?.budget
  const rows = USAGE_DIMENSIONS.filter((d) => missionLimit(budget, d) !== undefined || (view.usage[d] ?? 0) > 0)
  if (rows.length === 0) return <p class="muted">No budget recorded.</p>
  return (
    <table class="table compact" data-testid="budget-summary">
      <caption class="sr-only">Mission budget: used and left per dimension</caption>
      <thead>
        <tr>
          <th scope="col">Dimension</th>
          <th scope="col" class="num">
            Used
          </th>
          <th scope="col" class="num">
            Limit
          </th>
          <th scope="col" class="num">
            Left
          </th>
          <th scope="col">Use</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((d) => {
          const used = view.usage[d] ?? 0
          const limit = missionLimit(budget, d)
          const share = limit === undefined || limit === 0 ? undefined : Math.min(1, used / limit)
          return (
            <tr key={d}>
              <th scope="row">
                {DIMENSION_LABELS[d]}
                {d === 'financialMicrounits' && budget?.currency !== undefined ? ` (${budget.currency})` : ''}
              </th>
              <td class="num">{formatDimension(d, used)}</td>
              <td class="num">{limit === undefined ? 'none' : formatDimension(d, limit)}</td>
              <td class="num">{limit === undefined ? '—' : formatDimension(d, Math.max(0, limit - used))}</td>
              <td>
                {share === undefined ? null : (
                  <svg class="meter" width="80" height="8" role="img" aria-label={`${Math.round(share * 100)} percent used`}>
                    <rect class="meter-bg" x="0" y="0" width="80" height="8" rx="2" />
                    <rect class={share > 0.9 ? 'meter-fg hot' : 'meter-fg'} x="0" y="0" width={Math.max(1, 80 * share)} height="8" rx="2" />
                  </svg>
                )}
              </td>
            </tr>
          )
        })}
      </tbody>
    </table>
  )
}

/** The WorkItem graph (§10.4) as SVG, and the selected WorkItem's details. */
function WorkPanel({ view, session }: { readonly view: GroupView; readonly session: SignedIn }) {
  const [selected, setSelected] = useState<string | undefined>(undefined)
  // Layout depends on the graph's shape only: recompute when WorkItems or edges change.
  const shapeKey = [...view.workItems.values()].map((w) => `${w.workItemId}<${w.dependencyIds.join(',')}<${w.parentWorkItemId ?? ''}`).join('|')
  const layout = useMemo(() => workGraph(view), [shapeKey])
  const item = selected === undefined ? undefined : view.workItems.get(selected)
  if (view.workItems.size === 0) return <p class="muted">No WorkItems yet. The Coordinator authorizes them as it plans (§10.4).</p>
  return (
    <div class="work-layout">
      <section class="card graph-card" aria-labelledby="work-graph-title">
        <h2 id="work-graph-title">WorkItem graph</h2>
        <Legend />
        <div class="graph-scroll">
          <svg class="graph" width={layout.width} height={layout.height} viewBox={`0 0 ${layout.width} ${layout.height}`} role="group" aria-label="WorkItem dependency graph" data-testid="work-graph">
            <defs>
              <marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                <path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead" />
              </marker>
            </defs>
            {layout.edges.map((e, i) => (
              <polyline key={i} class={`edge edge-${e.kind}`} points={e.points.map((p) => `${p.x},${p.y}`).join(' ')} marker-end="url(#arrow)" />
            ))}
            {layout.nodes.map((n) => {
              const w = view.workItems.get(n.id)
              if (w === undefined) return null
              const label = w.goal.length > 30 ? `${w.goal.slice(0, 29)}…` : w.goal
              const sub = `${w.state}${w.ownerId === undefined ? '' : ` · ${shortId(w.ownerId)}`}`
              return (
                <g
                  key={n.id}
                  class={`node state-${w.state}${selected === n.id ? ' selected' : ''}`}
                  transform={`translate(${n.x - WORK_NODE.width / 2},${n.y - WORK_NODE.height / 2})`}
                  tabIndex={0}
                  role="button"
                  aria-pressed={selected === n.id}
                  // The name holds the visible text (WCAG 2.5.3); the full goal is the description.
                  aria-label={`WorkItem ${label}, ${sub}`}
                  onClick={() => setSelected(n.id)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter' || e.key === ' ') {
                      e.preventDefault()
                      setSelected(n.id)
                    }
                  }}
                  data-testid="work-node"
                  data-state={w.state}
                >
                  <title>{w.goal}</title>
                  <rect class="node-box" width={WORK_NODE.width} height={WORK_NODE.height} rx="6" />
                  <rect class="node-stripe" width="5" height={WORK_NODE.height} rx="2" />
                  <text x="12" y="21" class="node-title">
                    {label}
                  </text>
                  <text x="12" y="40" class="node-sub">
                    {sub}
                  </text>
                </g>
              )
            })}
          </svg>
        </div>
      </section>
      <section class="card" aria-labelledby="work-detail-title" data-testid="work-detail">
        <h2 id="work-detail-title">{item === undefined ? 'WorkItem' : 'WorkItem details'}</h2>
        {item === undefined ? <p class="muted">Select a WorkItem in the graph (Tab to it, then Enter).</p> : <WorkDetail item={item} view={view} session={session} />}
      </section>
    </div>
  )
}

function Legend() {
  return (
    <ul class="legend" aria-label="WorkItem states">
      {['open', 'offered', 'queued', 'active', 'blocked', 'submitted', 'verified', 'failed', 'cancelled'].map((s) => (
        <li key={s}>
          <span class={`swatch state-${s}`} aria-hidden="true" />
          {s}
        </li>
      ))}
    </ul>
  )
}

function WorkDetail({ item, view, session }: { readonly item: WorkItemView; readonly view: GroupView; readonly session: SignedIn }) {
  const c = item.contract
  return (
    <div>
      <p class="prose">{item.goal}</p>
      <dl class="kv">
        <dt>ID</dt>
        <dd>
          <code>{item.workItemId}</code>
        </dd>
        <dt>State</dt>
        <dd>
          <StateBadge state={item.state} />
        </dd>
        <dt>Revision</dt>
        <dd>{item.revision}</dd>
        <dt>Owner</dt>
        <dd>{item.ownerId === undefined ? '—' : `${item.ownerId} (epoch ${item.ownershipEpoch ?? '?'})`}</dd>
        <dt>Depends on</dt>
        <dd>{item.dependencyIds.length === 0 ? 'nothing' : item.dependencyIds.map((d) => view.workItems.get(d)?.goal ?? d).join('; ')}</dd>
        {item.reason === undefined ? null : (
          <>
            <dt>Reason</dt>
            <dd>{item.reason}</dd>
          </>
        )}
        <dt>Deadline</dt>
        <dd>{formatTime(c?.deadline)}</dd>
        <dt>Risk</dt>
        <dd>{c === undefined ? '—' : `${c.sideEffectRisk}, execution approval ${c.executionApproval.replace(/_/g, ' ')}`}</dd>
      </dl>
      <h3>Acceptance criteria</h3>
      <ul class="plain">
        {(c?.acceptanceCriteria ?? []).map((a) => (
          <li key={a.criterionId}>
            <code>{a.criterionId}</code> {a.description}
          </li>
        ))}
      </ul>
      <CancelWork item={item} view={view} session={session} />
    </div>
  )
}

/** Lease timeline (§7.2, §11.3, §11.4): one row per holder and lane, bars per lease, epochs labelled. */
function LeaseTimeline({ view }: { readonly view: GroupView }) {
  const nowMs = view.lastEventAt === undefined ? Date.now() : Date.parse(view.lastEventAt)
  const lanes = leaseLanes(view, nowMs)
  if (lanes.length === 0) return <p class="muted">No leases yet.</p>
  const starts = view.leases.map((l) => Date.parse(l.startedAt))
  const ends = view.leases.map((l) => spanEndMs(l, nowMs))
  const t0 = Math.min(...starts)
  // Far-future Coordinator lease expiries would squash the picture: cap the axis near the last activity.
  const t1 = Math.max(t0 + 60_000, Math.min(Math.max(...ends), nowMs + (nowMs - t0) * 0.25 + 60_000))
  const labelW = 230
  const width = 1000
  const rowH = 26
  const plotW = width - labelW - 10
  const x = (ms: number): number => labelW + Math.max(0, Math.min(plotW, ((ms - t0) / (t1 - t0)) * plotW))
  const height = lanes.length * rowH + 30
  const ticks = Array.from({ length: 6 }, (_, i) => t0 + ((t1 - t0) * i) / 5)
  return (
    <section class="card" aria-labelledby="lease-title">
      <h2 id="lease-title">Lease timeline</h2>
      <ul class="legend" aria-label="Lease kinds">
        {['coordinator', 'ownership', 'execution', 'blocked'].map((k) => (
          <li key={k}>
            <span class={`swatch lease-${k}`} aria-hidden="true" />
            {k}
          </li>
        ))}
        <li>
          <span class="swatch lease-ended" aria-hidden="true" />
          revoked / expired
        </li>
      </ul>
      <div class="graph-scroll">
        <svg class="timeline" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`Lease timeline, ${view.leases.length} leases`} data-testid="lease-timeline">
          {ticks.map((t, i) => (
            <g key={i}>
              <line class="tick" x1={x(t)} x2={x(t)} y1={0} y2={height - 20} />
              <text class="tick-label" x={x(t)} y={height - 6} text-anchor="middle">
                {formatTime(new Date(t).toISOString()).slice(11)}
              </text>
            </g>
          ))}
          {lanes.map((lane, i) => {
            const kind = lane.spans[0]?.kind ?? 'execution'
            const laneName = kind === 'coordinator' ? 'coordinator' : kind === 'ownership' ? 'ownership' : `slot ${lane.lane + 1}`
            return (
              <g key={`${lane.holderId}:${kind}:${lane.lane}`} transform={`translate(0,${i * rowH})`}>
                <text class="lane-label" x="4" y="17">
                  {shortId(lane.holderId)} · {laneName}
                </text>
                {lane.spans.map((s) => {
                  const x0 = x(Date.parse(s.startedAt))
                  const x1 = Math.max(x0 + 2, x(spanEndMs(s, nowMs)))
                  const goal = s.workItemId === undefined ? 'Coordinator lease' : (view.workItems.get(s.workItemId)?.goal ?? s.workItemId)
                  return (
                    <g key={s.key}>
                      <rect class={`bar lease-${s.kind} end-${s.end}`} x={x0} y="5" width={x1 - x0} height="16" rx="3">
                        <title>{`${s.kind} lease ${s.leaseId ?? ''} · ${goal} · epoch ${s.epoch ?? '—'} · session ${s.sessionEpoch ?? '—'} · ${formatTime(s.startedAt)} → ${formatTime(s.endedAt ?? s.expiresAt)} (${s.end}${s.renewals > 0 ? `, ${s.renewals} renewals` : ''})`}</title>
                      </rect>
                      {x1 - x0 > 26 ? (
                        <text class="bar-label" x={x0 + 4} y="17">
                          {`e${s.epoch ?? '?'}`}
                        </text>
                      ) : null}
                    </g>
                  )
                })}
              </g>
            )
          })}
        </svg>
      </div>
      <details>
        <summary>Leases as a table</summary>
        <table class="table compact" data-testid="lease-table">
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Holder</th>
              <th scope="col">WorkItem</th>
              <th scope="col" class="num">
                Epoch
              </th>
              <th scope="col">Start</th>
              <th scope="col">End</th>
              <th scope="col">How</th>
            </tr>
          </thead>
          <tbody>
            {view.leases.map((s) => (
              <tr key={s.key}>
                <td>{s.kind}</td>
                <td>{s.holderId}</td>
                <td>{s.workItemId === undefined ? '—' : (view.workItems.get(s.workItemId)?.goal ?? s.workItemId)}</td>
                <td class="num">{s.epoch ?? '—'}</td>
                <td>{formatTime(s.startedAt)}</td>
                <td>{formatTime(s.endedAt ?? s.expiresAt)}</td>
                <td>{s.end}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </section>
  )
}

/** The budget ledger (§12): every usage record, cumulative per WorkItem, and what is left. */
function BudgetLedger({ view }: { readonly view: GroupView }) {
  const shown = view.ledger.slice(-500).reverse()
  const dims = USAGE_DIMENSIONS.filter((d) => view.ledger.some((e) => e.delta[d] !== undefined))
  return (
    <div class="stack">
      <section class="card" aria-labelledby="budget-mission">
        <h2 id="budget-mission">Mission budget</h2>
        <BudgetSummary view={view} />
      </section>
      <section class="card" aria-labelledby="budget-work">
        <h2 id="budget-work">Per WorkItem</h2>
        <table class="table compact" data-testid="budget-per-work">
          <thead>
            <tr>
              <th scope="col">WorkItem</th>
              {dims.map((d) => (
                <th key={d} scope="col" class="num">
                  {DIMENSION_LABELS[d]} used / left
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {[...view.workItems.values()]
              .filter((w) => w.remainingBudget !== undefined)
              .map((w) => (
                <tr key={w.workItemId}>
                  <th scope="row">{w.goal}</th>
                  {dims.map((d) => (
                    <td key={d} class="num">
                      {formatDimension(d, w.cumulativeUsage[d] ?? 0)} / {w.remainingBudget?.[d] === undefined ? 'no limit' : formatDimension(d, w.remainingBudget[d])}
                    </td>
                  ))}
                </tr>
              ))}
          </tbody>
        </table>
      </section>
      <section class="card" aria-labelledby="budget-ledger">
        <h2 id="budget-ledger">Ledger</h2>
        {shown.length === 0 ? (
          <p class="muted">No usage recorded yet.</p>
        ) : (
          <table class="table compact" data-testid="budget-ledger">
            <caption class="sr-only">Usage records, newest first</caption>
            <thead>
              <tr>
                <th scope="col" class="num">
                  Seq
                </th>
                <th scope="col">Time</th>
                <th scope="col">WorkItem</th>
                {dims.map((d) => (
                  <th key={d} scope="col" class="num">
                    {DIMENSION_LABELS[d]} +
                  </th>
                ))}
                {dims.map((d) => (
                  <th key={`t${d}`} scope="col" class="num">
                    Mission {DIMENSION_LABELS[d]}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {shown.map((e) => (
                <tr key={e.sequence}>
                  <td class="num">{e.sequence}</td>
                  <td>{formatTime(e.at)}</td>
                  <td>
                    {view.workItems.get(e.workItemId)?.goal ?? e.workItemId}
                    {e.offline ? <span class="muted small"> (offline, reconciled)</span> : null}
                  </td>
                  {dims.map((d) => (
                    <td key={d} class="num">
                      {e.delta[d] === undefined ? '' : formatDimension(d, e.delta[d])}
                    </td>
                  ))}
                  {dims.map((d) => (
                    <td key={`t${d}`} class="num">
                      {formatDimension(d, e.missionTotal[d] ?? 0)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  )
}
