/**
 * Messages (§9), Artifacts and Evidence with their provenance (§13), and the Event log (§15.2).
 * Every string from the Group is rendered as text: Messages are conversation, never instructions,
 * and URIs in manifests are shown, never followed.
 * @module
 */
import { newUrnUuid, systemRandom } from '@weft/client'
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks'
import { provenanceGraph, PROVENANCE_NODE } from '../graph.js'
import type { GroupView } from '../model.js'
import type { SignedIn } from '../session.js'
import { messageText } from '../summary.js'
import { listWindow } from '../virtual.js'
import { ActionOutcome, formatTime, Hash, shortId, useAction } from './common.js'

export function MessagesPanel({ view, session }: { readonly view: GroupView; readonly session: SignedIn }) {
  const [text, setText] = useState('')
  const [conversationId, setConversationId] = useState(view.mainConversationId ?? '')
  const action = useAction()
  const shown = view.messages.slice(-300)
  const post = (event: Event): void => {
    event.preventDefault()
    const body = text.trim()
    if (body === '' || conversationId === '') return
    void action.run(async () => {
      const issuedAt = await session.now()
      await session.client.withGroup(view.groupId).messagePost({ messageId: newUrnUuid(systemRandom), conversationId, content: [{ type: 'text', text: body }] }, { issuedAt })
      setText('')
      return 'Message posted.'
    })
  }
  return (
    <div class="stack">
      <section class="card" aria-labelledby="messages-title">
        <h2 id="messages-title">Messages</h2>
        <p class="muted small">Messages are conversation only (§9): they never authorize an action.</p>
        {shown.length === 0 ? <p class="muted">No Messages yet.</p> : null}
        <ol class="messages" data-testid="messages">
          {shown.map(({ message, amendedBy, sequence }) => (
            <li key={message.messageId} class={`message kind-${message.kind}${amendedBy === undefined ? '' : ' amended'}`} data-testid="message">
              <div class="message-head">
                <span class="author">{message.author.id}</span>
                <span class="muted small">
                  {view.conversations.get(message.conversationId) === undefined ? null : <>in “{view.conversations.get(message.conversationId)}” · </>}
                  {formatTime(message.committedAt)} · #{sequence}
                </span>
                {message.kind === 'message' ? null : <span class="badge">{message.kind}</span>}
              </div>
              <p class="message-body">{messageText(message)}</p>
              {message.reason === undefined ? null : <p class="muted small">Reason: {message.reason}</p>}
              {amendedBy === undefined ? null : (
                <p class="muted small">
                  This Message was {amendedBy.kind === 'correction' ? 'corrected' : amendedBy.kind === 'retraction' ? 'retracted' : 'redacted'} later
                  {amendedBy.reason === undefined ? '' : `: ${amendedBy.reason}`}
                </p>
              )}
            </li>
          ))}
        </ol>
      </section>
      <section class="card" aria-labelledby="post-title">
        <h2 id="post-title">Post a Message</h2>
        <form onSubmit={post} data-testid="post-message-form">
          <label for="post-conversation">Conversation</label>
          <select id="post-conversation" value={conversationId} onChange={(e) => setConversationId((e.currentTarget as HTMLSelectElement).value)}>
            {[...view.conversations.entries()].map(([id, title]) => (
              <option key={id} value={id}>
                {id === view.mainConversationId ? `Group: ${title}` : `WorkItem: ${title.slice(0, 80)}`}
              </option>
            ))}
          </select>
          <label for="post-text">Message</label>
          <textarea id="post-text" rows={3} value={text} onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} maxLength={100000} data-testid="post-text" />
          <button type="submit" class="primary" disabled={action.busy || text.trim() === ''} data-testid="post-submit">
            {action.busy ? 'Signing…' : 'Sign and post'}
          </button>
        </form>
        <ActionOutcome action={action} testId="post" />
      </section>
    </div>
  )
}

export function ArtifactsPanel({ view }: { readonly view: GroupView }) {
  const graphKey = `${view.artifacts.size}:${view.evidence.size}`
  const { layout, nodes } = useMemo(() => provenanceGraph(view), [graphKey])
  const label = (id: string): string => {
    const n = nodes.get(id)
    if (n === undefined) return id
    if (n.type === 'artifact') return `Artifact ${n.ref.slice(7, 19)}…`
    if (n.type === 'work') return (view.workItems.get(n.ref)?.goal ?? shortId(n.ref)).slice(0, 28)
    const e = view.evidence.get(n.ref)?.evidence
    return e === undefined ? 'Evidence' : `${e.type.replace(/_/g, ' ')}: ${e.result}`
  }
  return (
    <div class="stack">
      <section class="card" aria-labelledby="artifacts-title">
        <h2 id="artifacts-title">Artifacts</h2>
        {view.artifacts.size === 0 ? (
          <p class="muted">No Artifacts published yet.</p>
        ) : (
          <table class="table compact" data-testid="artifacts">
            <thead>
              <tr>
                <th scope="col">Content hash</th>
                <th scope="col">Media type</th>
                <th scope="col">WorkItem</th>
                <th scope="col">Producer</th>
                <th scope="col" class="num">
                  Bytes
                </th>
                <th scope="col">Class</th>
                <th scope="col">Retrieval URI (not followed)</th>
              </tr>
            </thead>
            <tbody>
              {[...view.artifacts.values()].map(({ manifest }) => (
                <tr key={manifest.contentHash}>
                  <td>
                    <Hash value={manifest.contentHash} />
                  </td>
                  <td>{manifest.mediaType}</td>
                  <td>{view.workItems.get(manifest.workItemId)?.goal ?? manifest.workItemId}</td>
                  <td>{manifest.producer.agentId}</td>
                  <td class="num">{manifest.sizeBytes}</td>
                  <td>{manifest.classification}</td>
                  <td class="uri">{manifest.uri}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section class="card" aria-labelledby="provenance-title">
        <h2 id="provenance-title">Provenance</h2>
        <p class="muted small">Source Artifact → Artifact → the WorkItem that produced it → Evidence about it; dashed: Evidence citing an Artifact.</p>
        {nodes.size === 0 ? null : (
          <div class="graph-scroll">
            <svg
              class="graph"
              width={layout.width}
              height={layout.height}
              viewBox={`0 0 ${layout.width} ${layout.height}`}
              role="img"
              aria-label={`Provenance graph of ${view.artifacts.size} Artifacts and ${view.evidence.size} Evidence records`}
              data-testid="provenance-graph"
            >
              <defs>
                <marker id="parrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                  <path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead" />
                </marker>
              </defs>
              {layout.edges.map((e, i) => (
                <polyline key={i} class={`edge edge-${e.kind}`} points={e.points.map((p) => `${p.x},${p.y}`).join(' ')} marker-end="url(#parrow)" />
              ))}
              {layout.nodes.map((n) => {
                const type = nodes.get(n.id)?.type ?? 'work'
                const result = type === 'evidence' ? view.evidence.get(nodes.get(n.id)!.ref)?.evidence.result : undefined
                return (
                  <g
                    key={n.id}
                    class={`pnode pnode-${type}${result === undefined ? '' : ` result-${result}`}`}
                    transform={`translate(${n.x - PROVENANCE_NODE.width / 2},${n.y - PROVENANCE_NODE.height / 2})`}
                  >
                    <title>{nodes.get(n.id)?.ref ?? n.id}</title>
                    <rect class="node-box" width={PROVENANCE_NODE.width} height={PROVENANCE_NODE.height} rx={type === 'work' ? 6 : 14} />
                    <text x="10" y="18" class="node-kind">
                      {type === 'artifact' ? 'Artifact' : type === 'work' ? 'WorkItem' : 'Evidence'}
                    </text>
                    <text x="10" y="34" class="node-title">
                      {label(n.id)}
                    </text>
                  </g>
                )
              })}
            </svg>
          </div>
        )}
      </section>
      <section class="card" aria-labelledby="evidence-title">
        <h2 id="evidence-title">Evidence</h2>
        {view.evidence.size === 0 ? (
          <p class="muted">No Evidence yet.</p>
        ) : (
          <table class="table compact" data-testid="evidence">
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Result</th>
                <th scope="col">Criteria</th>
                <th scope="col">WorkItem</th>
                <th scope="col">By</th>
                <th scope="col">From</th>
                <th scope="col">Method</th>
              </tr>
            </thead>
            <tbody>
              {[...view.evidence.values()].map(({ evidence, source }) => (
                <tr key={evidence.evidenceId}>
                  <td>{evidence.type.replace(/_/g, ' ')}</td>
                  <td>
                    <span class={`badge result-${evidence.result}`}>{evidence.result}</span>
                  </td>
                  <td>{evidence.criterionIds.join(', ')}</td>
                  <td>{view.workItems.get(evidence.workItemId)?.goal ?? evidence.workItemId}</td>
                  <td>{evidence.generatedBy.id}</td>
                  <td>{source}</td>
                  <td>{evidence.method}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  )
}

/** Row height of the Event log: fixed, so the window math needs no measuring. */
export const EVENT_ROW_HEIGHT = 28

/** The Event log: a virtualized list (only visible rows in the DOM), newest at the bottom, following live. */
export function EventLog({ view }: { readonly view: GroupView }) {
  const scroller = useRef<HTMLDivElement>(null)
  const [scrollTop, setScrollTop] = useState(0)
  const [height, setHeight] = useState(480)
  const [filter, setFilter] = useState('')
  const [follow, setFollow] = useState(true)
  const needle = filter.trim().toLowerCase()
  const rows = useMemo(
    () => (needle === '' ? view.events : view.events.filter((r) => r.kind.includes(needle) || r.summary.toLowerCase().includes(needle) || r.actor.toLowerCase().includes(needle))),
    [view.events.length, needle],
  )
  // Following live, the window is the tail from the first render on: no frame shows the top of the
  // list first, and no layout is read to find the bottom (listWindow clamps to the last rows).
  const totalHeight = rows.length * EVENT_ROW_HEIGHT
  const win = listWindow(rows.length, EVENT_ROW_HEIGHT, follow ? totalHeight : scrollTop, height)

  useEffect(() => {
    const el = scroller.current
    if (el === null) return
    setHeight(el.clientHeight)
    const observer = typeof ResizeObserver === 'function' ? new ResizeObserver(() => setHeight(el.clientHeight)) : undefined
    observer?.observe(el)
    return () => observer?.disconnect()
  }, [])
  // Live tail: stay at the bottom while following, set before the browser paints.
  useLayoutEffect(() => {
    const el = scroller.current
    if (el !== null && follow) el.scrollTop = totalHeight
  }, [totalHeight, follow])

  return (
    <section class="card" aria-labelledby="events-title">
      <div class="row spread">
        <h2 id="events-title">Event log</h2>
        <span class="muted small" data-testid="event-log-count">
          {rows.length} of {view.events.length} Events
        </span>
      </div>
      <div class="row">
        <label for="event-filter" class="inline">
          Filter
        </label>
        <input id="event-filter" type="search" value={filter} onInput={(e) => setFilter((e.currentTarget as HTMLInputElement).value)} placeholder="kind, actor or text" data-testid="event-filter" />
        <label class="inline check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow((e.currentTarget as HTMLInputElement).checked)} /> Follow live
        </label>
      </div>
      <div class="log-head" aria-hidden="true">
        <span class="c-seq">Seq</span>
        <span class="c-time">Time (UTC)</span>
        <span class="c-kind">Kind</span>
        <span class="c-actor">Actor</span>
        <span class="c-sum">Summary</span>
      </div>
      <div
        ref={scroller}
        class="log"
        tabIndex={0}
        role="list"
        aria-label={`Event log, ${rows.length} Events; scroll with the arrow keys`}
        onScroll={(e) => {
          const el = e.currentTarget as HTMLDivElement
          setScrollTop(el.scrollTop)
          // Scrolling up stops following; reaching the bottom resumes it.
          setFollow(el.scrollTop + el.clientHeight >= el.scrollHeight - EVENT_ROW_HEIGHT)
        }}
        data-testid="event-log"
      >
        <div class="log-spacer" style={{ height: `${win.totalHeight}px` }}>
          <div class="log-window" style={{ transform: `translateY(${win.offset}px)` }}>
            {rows.slice(win.start, win.end).map((r) => (
              <div key={r.sequence} class="log-row" role="listitem" data-testid="event-row" data-sequence={r.sequence}>
                <span class="c-seq">{r.sequence}</span>
                <span class="c-time">{formatTime(r.occurredAt).slice(5)}</span>
                <span class="c-kind">{r.kind.replace('ext.missionweaveprotocol.', 'ext.')}</span>
                <span class="c-actor" title={r.actor}>
                  {shortId(r.actor)}
                </span>
                <span class="c-sum">{r.summary}</span>
              </div>
            ))}
          </div>
        </div>
      </div>
    </section>
  )
}
