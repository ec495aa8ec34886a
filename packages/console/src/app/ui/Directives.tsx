/**
 * Directives and intervention (§5, §7.1, §10.2, §12), each a Command built and signed in the
 * browser by the person's client: create a Mission or a follow-up, cancel a Mission, cancel a
 * WorkItem. Each is dated with the Authority's clock. Terminating a Mission is not offered: §7.1
 * gives it to the Coordinator or Organization policy, and the Command schema admits only an Agent
 * or a service as its actor, so a person's `mission.terminate` could never be accepted.
 * @module
 */
import { newUrnUuid, systemRandom } from '@weft/client'
import type { CommandPayload } from '@weft/spec'
import { useEffect, useState } from 'preact/hooks'
import type { GroupView, WorkItemView } from '../model.js'
import type { ConsoleAgent } from '../../shared/sign-in.js'
import type { SignedIn } from '../session.js'
import { ActionOutcome, RefusalNote, useAction } from './common.js'

const EVIDENCE_TYPES = ['human_review', 'deterministic_test', 'reviewer_assessment', 'artifact_integrity', 'schema_validation', 'business_rule', 'policy_check'] as const

/** `id: description` lines → acceptance criteria (§7.1 machine-readable definition of done). */
export function criteriaOf(text: string, evidence: (typeof EVIDENCE_TYPES)[number]): CommandPayload<'mission.create'>['definitionOfDone'] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .map((line, i) => {
      const colon = line.indexOf(':')
      const id = colon > 0 ? line.slice(0, colon).trim() : ''
      const valid = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,127}$/.test(id)
      return { criterionId: valid ? id : `criterion-${i + 1}`, description: valid ? line.slice(colon + 1).trim() || line : line, evidenceRequired: [evidence] }
    })
}

function localInput(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16)
}

export function MissionForm({
  session,
  followUpTo,
  onCreated,
  onCancel,
}: {
  readonly session: SignedIn
  readonly followUpTo?: { readonly missionId: string; readonly title: string }
  readonly onCreated: (groupId: string) => void
  readonly onCancel: () => void
}) {
  const [f, setF] = useState({
    title: followUpTo === undefined ? '' : `Follow-up: ${followUpTo.title}`.slice(0, 500),
    objective: '',
    done: '',
    evidence: 'human_review' as (typeof EVIDENCE_TYPES)[number],
    deadline: localInput(Date.now() + 7 * 86_400_000),
    currency: 'USD',
    financial: '100',
    tokens: '',
    toolCalls: '',
    coordinator: '',
    leaseHours: '4',
    highRisk: true,
    reason: '',
  })
  const action = useAction()
  // The Coordinators on offer: the Organization's active Agents (§6.1); any other ID may still be typed.
  const [agents, setAgents] = useState<readonly ConsoleAgent[]>([])
  useEffect(() => {
    let live = true
    session.agents().then(
      (list) => live && setAgents(list.filter((a) => a.status === 'active')),
      () => undefined,
    )
    return () => {
      live = false
    }
  }, [session])
  const set = (key: keyof typeof f) => (e: Event) => {
    const el = e.currentTarget as HTMLInputElement
    setF({ ...f, [key]: el.type === 'checkbox' ? el.checked : el.value })
  }
  const submit = (event: Event): void => {
    event.preventDefault()
    void action.run(async () => {
      const definitionOfDone = criteriaOf(f.done, f.evidence)
      if (f.title.trim() === '' || f.objective.trim() === '' || definitionOfDone.length === 0 || f.coordinator.trim() === '')
        throw Object.assign(new Error('missing'), { name: 'UsageError', message: 'title, objective, at least one criterion and the Coordinator Agent are required' })
      if (followUpTo !== undefined && f.reason.trim() === '') throw Object.assign(new Error('missing'), { name: 'UsageError', message: 'a follow-up needs a reason' })
      const budget: Record<string, unknown> = {}
      if (f.financial.trim() !== '') Object.assign(budget, { currency: f.currency.trim().toUpperCase(), financialLimit: Number(f.financial) })
      if (f.tokens.trim() !== '') budget['modelTokenLimit'] = Math.floor(Number(f.tokens))
      if (f.toolCalls.trim() !== '') budget['toolCallLimit'] = Math.floor(Number(f.toolCalls))
      const deadlineMs = Date.parse(`${f.deadline}:00Z`)
      const base = {
        missionId: newUrnUuid(systemRandom),
        title: f.title.trim(),
        objective: f.objective.trim(),
        definitionOfDone,
        deadline: new Date(Number.isNaN(deadlineMs) ? Date.now() + 7 * 86_400_000 : deadlineMs).toISOString(),
        budget: budget as CommandPayload<'mission.create'>['budget'],
        // §7.1: a root Mission always needs final human approval.
        approvalPolicy: { finalHumanApproval: true as const, highRiskExecutionApproval: f.highRisk },
        coordinatorAgentId: f.coordinator.trim(),
        coordinatorLeaseSeconds: Math.max(60, Math.round(Number(f.leaseHours) * 3600) || 14_400),
      }
      const groupId = newUrnUuid(systemRandom)
      const issuedAt = await session.now()
      if (followUpTo === undefined) await session.client.missionCreate(base as CommandPayload<'mission.create'>, { groupId, issuedAt })
      else
        await session.client.missionCreateFollowUp({ ...base, followUpToMissionId: followUpTo.missionId, reason: f.reason.trim() } as CommandPayload<'mission.create_follow_up'>, { groupId, issuedAt })
      onCreated(groupId)
      return 'Mission created.'
    })
  }
  return (
    <section class="panel" aria-labelledby="mission-form-title">
      <h1 id="mission-form-title">{followUpTo === undefined ? 'New Mission' : 'Follow-up Mission'}</h1>
      {followUpTo === undefined ? null : <p class="muted">Linked to the approved Mission {followUpTo.title}; the original stays untouched (§7.1).</p>}
      <form class="form-grid" onSubmit={submit} data-testid="mission-form">
        <label for="m-title">Title</label>
        <input id="m-title" value={f.title} onInput={set('title')} maxLength={500} required data-testid="m-title" />
        {followUpTo === undefined ? null : (
          <>
            <label for="m-reason">Why a follow-up</label>
            <input id="m-reason" value={f.reason} onInput={set('reason')} maxLength={4000} required data-testid="m-reason" />
          </>
        )}
        <label for="m-objective">Objective</label>
        <textarea id="m-objective" rows={3} value={f.objective} onInput={set('objective')} maxLength={10000} required data-testid="m-objective" />
        <label for="m-done">Definition of done (one criterion per line, “id: description”)</label>
        <textarea id="m-done" rows={3} value={f.done} onInput={set('done')} required data-testid="m-done" />
        <label for="m-evidence">Evidence required for each criterion</label>
        <select id="m-evidence" value={f.evidence} onChange={set('evidence')}>
          {EVIDENCE_TYPES.map((t) => (
            <option key={t} value={t}>
              {t.replace(/_/g, ' ')}
            </option>
          ))}
        </select>
        <label for="m-deadline">Deadline (UTC)</label>
        <input id="m-deadline" type="datetime-local" value={f.deadline} onInput={set('deadline')} required />
        <fieldset class="inline-fields">
          <legend>Budget (§12)</legend>
          <label for="m-currency">Currency</label>
          <input id="m-currency" value={f.currency} onInput={set('currency')} maxLength={3} size={4} />
          <label for="m-financial">Money limit</label>
          <input id="m-financial" type="number" min="0" step="any" value={f.financial} onInput={set('financial')} size={8} />
          <label for="m-tokens">Model tokens</label>
          <input id="m-tokens" type="number" min="0" value={f.tokens} onInput={set('tokens')} size={8} />
          <label for="m-tools">Tool calls</label>
          <input id="m-tools" type="number" min="0" value={f.toolCalls} onInput={set('toolCalls')} size={6} />
        </fieldset>
        <label for="m-coordinator">Coordinator Agent ID</label>
        <input
          id="m-coordinator"
          list="m-coordinator-agents"
          value={f.coordinator}
          onInput={set('coordinator')}
          placeholder="urn:…:agent:coordinator"
          required
          autocomplete="off"
          data-testid="m-coordinator"
        />
        <datalist id="m-coordinator-agents" data-testid="m-coordinator-agents">
          {agents.map((a) => (
            <option key={a.agentId} value={a.agentId} label={`${a.displayName} (${a.capabilities.map((c) => c.id).join(', ')})`} />
          ))}
        </datalist>
        <label for="m-lease">Coordinator lease (hours)</label>
        <input id="m-lease" type="number" min="0.1" step="any" value={f.leaseHours} onInput={set('leaseHours')} />
        <label class="check">
          <input type="checkbox" checked={f.highRisk} onChange={set('highRisk')} /> High-risk work needs execution approval
        </label>
        <div class="row">
          <button type="submit" class="primary" disabled={action.busy} data-testid="mission-submit">
            {action.busy ? 'Signing…' : 'Sign and create'}
          </button>
          <button type="button" class="ghost" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
      <RefusalNote refusal={action.refusal} testId="mission-refusal" />
    </section>
  )
}

/** Mission-level intervention: cancel (MissionOwner, §7.1), and a follow-up of an approved Mission. */
export function Intervene({ view, session, onFollowUp }: { readonly view: GroupView; readonly session: SignedIn; readonly onFollowUp: (missionId: string, title: string) => void }) {
  const [reason, setReason] = useState('')
  const [confirming, setConfirming] = useState(false)
  const action = useAction()
  const terminal = view.missionState === 'approved' || view.missionState === 'cancelled' || view.missionState === 'failed'
  const cancel = (): void => {
    void action.run(async () => {
      const issuedAt = await session.now()
      await session.client.withGroup(view.groupId).missionCancel({ reason: reason.trim() }, { issuedAt })
      setConfirming(false)
      setReason('')
      return 'The Mission was cancelled.'
    })
  }
  return (
    <div class="stack">
      {view.missionState === 'approved' && view.missionId !== undefined ? (
        <section class="card">
          <h2>Follow-up</h2>
          <p class="muted">An approved Mission is never reopened; corrections go into a linked follow-up Mission (§7.1).</p>
          <button type="button" class="primary" onClick={() => onFollowUp(view.missionId!, view.title ?? view.missionId!)} data-testid="follow-up">
            Create a follow-up Mission
          </button>
        </section>
      ) : null}
      <section class="card" aria-labelledby="intervene-title">
        <h2 id="intervene-title">Stop the Mission</h2>
        {terminal ? (
          <p class="muted">The Mission is {view.missionState}: it cannot be stopped any more.</p>
        ) : (
          <>
            <p class="muted">Cancelling revokes every lease and stops new assignments (§12). It is final. (Ending a Mission as failed is for its Coordinator or Organization policy, §7.1.)</p>
            <label for="stop-reason">Reason</label>
            <textarea id="stop-reason" rows={2} maxLength={4000} value={reason} onInput={(e) => setReason((e.currentTarget as HTMLTextAreaElement).value)} data-testid="stop-reason" />
            {!confirming ? (
              <div class="row">
                <button type="button" class="danger" disabled={reason.trim() === ''} onClick={() => setConfirming(true)} data-testid="cancel-mission">
                  Cancel Mission…
                </button>
              </div>
            ) : (
              <div class="confirm" role="group" aria-label="Confirm">
                <p>
                  <strong>Cancel this Mission?</strong> This cannot be undone.
                </p>
                <div class="row">
                  <button type="button" class="danger" disabled={action.busy} onClick={cancel} data-testid="confirm-stop">
                    {action.busy ? 'Signing…' : 'Yes, cancel'}
                  </button>
                  <button type="button" class="ghost" onClick={() => setConfirming(false)}>
                    Keep it running
                  </button>
                </div>
              </div>
            )}
          </>
        )}
        <ActionOutcome action={action} testId="stop" />
      </section>
    </div>
  )
}

const CANCELLABLE = new Set(['open', 'offered', 'queued', 'active', 'blocked', 'submitted'])

/** Cancels one WorkItem (§10.2 `work.cancel`), with a reason. */
export function CancelWork({ item, view, session }: { readonly item: WorkItemView; readonly view: GroupView; readonly session: SignedIn }) {
  const [reason, setReason] = useState('')
  const action = useAction()
  if (!CANCELLABLE.has(item.state)) return null
  return (
    <form
      class="cancel-work"
      onSubmit={(e) => {
        e.preventDefault()
        void action.run(async () => {
          const issuedAt = await session.now()
          await session.client.withGroup(view.groupId).workCancel({ workItemId: item.workItemId, reason: reason.trim() }, { issuedAt, workItemId: item.workItemId })
          setReason('')
          return 'The WorkItem was cancelled.'
        })
      }}
    >
      <h3>Cancel this WorkItem</h3>
      <label for="cancel-work-reason">Reason</label>
      <input id="cancel-work-reason" value={reason} onInput={(e) => setReason((e.currentTarget as HTMLInputElement).value)} maxLength={4000} data-testid="cancel-work-reason" />
      <button type="submit" class="danger" disabled={action.busy || reason.trim() === ''} data-testid="cancel-work">
        {action.busy ? 'Signing…' : 'Cancel WorkItem'}
      </button>
      <ActionOutcome action={action} testId="cancel-work" />
    </form>
  )
}
