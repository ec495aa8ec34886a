/**
 * The one-line summaries of the Event log (built as each Event is folded, so 10,000 rows stay
 * cheap) and the text of a Message. Everything quoted from an Event is untrusted text: the UI
 * renders it as text only.
 * @module
 */
import type { Approval, Artifact, Event, Message } from '@weft/spec'
import type { GroupView } from './model.js'
import { str, type Payload } from './payload.js'
import { formatUsage, type Usage } from './usage.js'

/** The first text part of a Message, or a description of its first part. */
export function messageText(message: Pick<Message, 'content'>): string {
  const parts: string[] = []
  for (const part of message.content) {
    if (part.type === 'text') parts.push(part.text)
    else if (part.type === 'artifact_ref') parts.push(`[Artifact ${part.artifactHash}]`)
    else parts.push(`[data: ${part.schema}]`)
  }
  return parts.join('\n')
}

function short(text: string | undefined, max = 120): string {
  if (text === undefined) return ''
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/** A one-line summary of `event` for the log, given the view it is folded into (for a WorkItem's goal). */
export function summarize(view: GroupView, event: Event): string {
  const p = event.payload as Payload
  const w = event.workItemId ?? str(p['workItemId'])
  const goal = w === undefined ? '' : short(view.workItems.get(w)?.goal, 60)
  switch (event.kind) {
    case 'mission.created':
    case 'mission.follow_up.created':
      return `Mission created: ${short(view.title)}`
    case 'mission.submitted_for_approval':
      return `Submitted revision ${String(p['missionRevision'])} with ${(p['artifactHashes'] as unknown[]).length} Artifact(s)`
    case 'mission.approved':
      return 'Approved by the MissionOwner'
    case 'mission.changes_requested':
      return `Changes requested: ${short((p['approval'] as Approval | undefined)?.comments, 80)}`
    case 'mission.cancelled':
    case 'mission.terminated':
      return short(str(p['reason']))
    case 'message.posted':
    case 'message.corrected':
    case 'message.retracted':
    case 'message.redacted':
      return short(messageText(p as unknown as Message), 100)
    case 'work.authorized':
      return `WorkItem authorized: ${goal}`
    case 'work.offer.accepted':
      return `${goal} — owner ${String(p['assigneeId'])}, epoch ${String(p['ownershipEpoch'])}`
    case 'work.failed':
    case 'work.cancelled':
    case 'work.blocked':
      return `${goal} — ${short(str(p['reason']), 60)}`
    case 'artifact.published':
      return `Artifact ${(p['artifact'] as Artifact | undefined)?.contentHash ?? ''}`
    case 'ext.missionweaveprotocol.core.resource_usage_recorded':
      return `${goal} — usage ${formatUsage((p['usageDelta'] ?? {}) as Usage)}`
    default:
      return goal
  }
}
