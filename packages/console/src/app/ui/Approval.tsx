/**
 * The Approval page (§7.3): exactly what the MissionOwner approves — Mission ID and revision, the
 * Artifact set with full hashes, media types and deliverables, and the Evidence per acceptance
 * criterion — and the signed decision: an Approval or a change request, signed in the browser
 * with the person's non-extractable key over the Authority's time.
 * @module
 */
import { signAsync } from '@weft/codec'
import { newUrnUuid, systemRandom } from '@weft/client'
import type { Approval } from '@weft/spec'
import { useEffect, useState } from 'preact/hooks'
import type { GroupView, SubmissionView } from '../model.js'
import type { SignedIn } from '../session.js'
import { describeSubmission, definitionOfDoneEvidence } from '../submission.js'
import { formatTime, Hash, RefusalNote, StateBadge, useAction } from './common.js'

/** The codes with which the Authority refuses a decision on a submission that is no longer the pending one (§7.3, §19). */
const STALE_CODES: ReadonlySet<string> = new Set(['REVISION_CONFLICT', 'INVALID_STATE_TRANSITION', 'INVALID_COMMAND'])

/** The acceptance policy version decisions cite, as the demo's MissionOwner does. */
const ACCEPTANCE_POLICY_VERSION = '1.0.0'

export function ApprovalPage({ view, session }: { readonly view: GroupView; readonly session: SignedIn }) {
  const current = view.missionState === 'awaiting_approval' ? view.submission : undefined
  // The submission under review is pinned: a newer one replaces it visibly, never silently.
  const [reviewed, setReviewed] = useState<SubmissionView | undefined>(current)
  const [moved, setMoved] = useState<string | undefined>(undefined)
  // This page's own decision on the reviewed submission: it outlives the decision form, which
  // goes once the Mission leaves awaiting_approval, and is not news from elsewhere.
  const [decided, setDecided] = useState<{ readonly eventId: string; readonly text: string } | undefined>(undefined)
  useEffect(() => {
    if (reviewed === undefined && current !== undefined) setReviewed(current)
    else if (reviewed !== undefined && current !== undefined && current.eventId !== reviewed.eventId) {
      setMoved(`A newer submission arrived (revision ${current.missionRevision}). The page now shows it; review it before deciding.`)
      setReviewed(current)
    } else if (reviewed !== undefined && current === undefined && decided?.eventId !== reviewed.eventId) {
      setMoved(view.missionState === 'approved' ? 'This Mission has been approved.' : `The submission is no longer pending: the Mission is ${view.missionState ?? 'unknown'}.`)
    }
  }, [current?.eventId, view.missionState])
  // What happened to the reviewed submission: news from elsewhere, and this page's own decision.
  const notices = (
    <>
      {moved === undefined ? null : (
        <p class="notice" role="status" data-testid="approval-moved">
          {moved}
        </p>
      )}
      {decided === undefined ? null : (
        <p class="ok" role="status" data-testid="approval-done">
          {decided.text}
        </p>
      )}
    </>
  )

  const history = (
    <section class="card" aria-labelledby="decisions-title">
      <h2 id="decisions-title">Earlier decisions</h2>
      {view.decisions.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="plain" data-testid="decisions">
          {view.decisions.map(({ approval, sequence }) => (
            <li key={approval.approvalId}>
              <StateBadge state={approval.decision} /> revision {approval.missionRevision} by {approval.approver.id} at {formatTime(approval.occurredAt)} (#{sequence})
              {approval.comments === '' ? '' : ` — ${approval.comments}`}
              {approval.conditions.length === 0 ? null : (
                <ul>
                  {approval.conditions.map((c, i) => (
                    <li key={i}>{c}</li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  )

  if (current === undefined || reviewed === undefined) {
    return (
      <div class="stack" data-testid="approval-page">
        {notices}
        <section class="card">
          <h2>Approval</h2>
          <p class="muted" data-testid="approval-none">
            No submission awaits a decision. The Mission is <StateBadge state={view.missionState} />.
          </p>
        </section>
        {history}
      </div>
    )
  }
  return (
    <div class="stack" data-testid="approval-page">
      {notices}
      <Submission view={view} submission={reviewed} />
      <Decision key={reviewed.eventId} view={view} session={session} submission={reviewed} onStale={(why) => setMoved(why)} onDecided={(text) => setDecided({ eventId: reviewed.eventId, text })} />
      {history}
    </div>
  )
}

function Submission({ view, submission }: { readonly view: GroupView; readonly submission: SubmissionView }) {
  const artifacts = describeSubmission(view, submission)
  const done = definitionOfDoneEvidence(view)
  return (
    <section class="card" aria-labelledby="submission-title" data-testid="submission">
      <h2 id="submission-title">What you are deciding on</h2>
      <dl class="kv">
        <dt>Mission</dt>
        <dd>
          <code data-testid="approval-mission-id">{view.missionId}</code>
        </dd>
        <dt>Revision</dt>
        <dd data-testid="approval-revision">{submission.missionRevision}</dd>
        <dt>Submitted</dt>
        <dd>
          {formatTime(submission.submittedAt)} (Event #{submission.sequence})
        </dd>
        <dt>Artifacts</dt>
        <dd>{submission.artifactHashes.length}</dd>
      </dl>
      <h3>Artifact set</h3>
      <ol class="artifact-set">
        {artifacts.map((a) => (
          <li key={a.hash} class="artifact" data-testid="approval-artifact">
            <div>
              <Hash value={a.hash} />
            </div>
            {a.manifest === undefined ? (
              <p class="refusal">No manifest for this hash was published in this Group: its content is unknown here.</p>
            ) : (
              <dl class="kv small">
                <dt>Media type</dt>
                <dd>{a.manifest.mediaType}</dd>
                <dt>Deliverable</dt>
                <dd>{a.deliverable === undefined ? 'matches no required deliverable' : `${a.deliverable.deliverableId}: ${a.deliverable.description}`}</dd>
                <dt>WorkItem</dt>
                <dd>{view.workItems.get(a.manifest.workItemId)?.goal ?? a.manifest.workItemId}</dd>
                <dt>Producer</dt>
                <dd>{a.manifest.producer.agentId}</dd>
                <dt>Size</dt>
                <dd>{a.manifest.sizeBytes} bytes</dd>
              </dl>
            )}
            <table class="table compact">
              <caption>Evidence per acceptance criterion</caption>
              <thead>
                <tr>
                  <th scope="col">Criterion</th>
                  <th scope="col">Evidence</th>
                </tr>
              </thead>
              <tbody>
                {a.criteria.map((c) => (
                  <tr key={c.criterionId}>
                    <th scope="row">
                      <code>{c.criterionId}</code>
                      {c.criterion === undefined ? null : <div class="muted small">{c.criterion.description}</div>}
                    </th>
                    <td>
                      {c.evidence.length === 0 ? (
                        <span class="refusal-text">no Evidence</span>
                      ) : (
                        c.evidence.map((e) => (
                          <div key={e.evidenceId}>
                            <span class={`badge result-${e.result}`}>{e.result}</span> {e.type.replace(/_/g, ' ')} by {e.generatedBy} ({e.source === 'review' ? 'review' : 'submitted'}): {e.method}
                          </div>
                        ))
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </li>
        ))}
      </ol>
      <h3>Definition of done</h3>
      <ul class="plain">
        {done.map(({ criterion, evidence }) => (
          <li key={criterion.criterionId}>
            <code>{criterion.criterionId}</code> {criterion.description} —{' '}
            {evidence.length === 0 ? <span class="muted">no Evidence names this criterion</span> : `${evidence.filter((e) => e.evidence.result === 'passed').length} passed of ${evidence.length}`}
          </li>
        ))}
      </ul>
    </section>
  )
}

function Decision({
  view,
  session,
  submission,
  onStale,
  onDecided,
}: {
  readonly view: GroupView
  readonly session: SignedIn
  readonly submission: SubmissionView
  readonly onStale: (why: string) => void
  readonly onDecided: (text: string) => void
}) {
  const [comments, setComments] = useState('')
  const [conditions, setConditions] = useState('')
  const action = useAction()
  const owner = view.mission?.missionOwner
  if (owner === undefined || owner.type !== 'human' || owner.id !== session.person.id) {
    return (
      <section class="card">
        <h2>Decision</h2>
        <p class="muted">Only the MissionOwner ({owner?.id ?? 'unknown'}) decides on this submission.</p>
      </section>
    )
  }

  const decide = (decision: 'approved' | 'changes_requested'): void => {
    const lines = conditions
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '')
    void action.run(
      async () => {
        // §7.3: the decision binds exactly the reviewed revision and Artifact set; refuse to sign
        // over anything else.
        if (view.submission?.eventId !== submission.eventId || view.missionState !== 'awaiting_approval') throw Object.assign(new Error('stale'), { code: 'REVISION_CONFLICT' })
        const occurredAt = await session.now()
        const approval = (await signAsync(
          'approval',
          {
            approvalId: newUrnUuid(systemRandom),
            kind: view.mission?.parent === undefined ? 'mission_final' : 'child_mission',
            decision,
            missionId: view.missionId,
            groupId: view.groupId,
            missionRevision: submission.missionRevision,
            artifactHashes: [...submission.artifactHashes],
            acceptancePolicyVersion: ACCEPTANCE_POLICY_VERSION,
            approver: { type: 'human', id: session.person.id },
            comments: comments.trim() === '' ? (decision === 'approved' ? 'Approved in the console.' : 'Changes requested in the console.') : comments.trim(),
            conditions: decision === 'changes_requested' ? lines : [],
            occurredAt,
          },
          session.signingKey,
        )) as unknown as Approval
        const to = session.client.withGroup(view.groupId)
        const issuedAt = await session.now()
        await (decision === 'approved' ? to.missionApprove({ approval }, { issuedAt }) : to.missionRequestChanges({ approval }, { issuedAt }))
        const text = decision === 'approved' ? `Approved revision ${submission.missionRevision}.` : `Changes requested on revision ${submission.missionRevision}.`
        onDecided(text)
        return text
      },
      (refusal) => {
        // The page may lag the Authority: a refusal because no submission is pending any more, or
        // because the decision names another revision or Artifact set, means it moved on (§7.3).
        const stale = view.submission?.eventId !== submission.eventId || view.missionState !== 'awaiting_approval'
        if (stale || STALE_CODES.has(refusal.code ?? ''))
          onStale('The revision moved on while you were reviewing: the Mission is no longer awaiting a decision on what you saw. The page shows the current state.')
      },
    )
  }

  return (
    <section class="card decision" aria-labelledby="decision-title">
      <h2 id="decision-title">Your decision on revision {submission.missionRevision}</h2>
      <label for="decision-comments">Comments</label>
      <textarea id="decision-comments" rows={3} maxLength={10000} value={comments} onInput={(e) => setComments((e.currentTarget as HTMLTextAreaElement).value)} data-testid="approval-comments" />
      <label for="decision-conditions">Conditions for a change request (one per line)</label>
      <textarea id="decision-conditions" rows={3} value={conditions} onInput={(e) => setConditions((e.currentTarget as HTMLTextAreaElement).value)} data-testid="approval-conditions" />
      <div class="row">
        <button type="button" class="primary" disabled={action.busy} onClick={() => decide('approved')} data-testid="approve">
          Approve revision {submission.missionRevision}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={action.busy || (conditions.trim() === '' && comments.trim() === '')}
          onClick={() => decide('changes_requested')}
          data-testid="request-changes"
        >
          Request changes
        </button>
        {action.busy ? <span class="muted">Signing…</span> : null}
      </div>
      <p class="muted small">Your browser signs the decision with your key over the exact Mission ID, revision and Artifact hashes shown above.</p>
      <RefusalNote refusal={action.refusal} testId="approval-refusal" />
    </section>
  )
}
