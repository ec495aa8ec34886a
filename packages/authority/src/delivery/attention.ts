/**
 * Which live Events reach a subscriber (§8, §17.2): the attention filter a subscription may set,
 * and the Events about the subscriber itself (its own Membership, Grants, offers to it, Messages
 * that mention it), which pass any filter. Delivery (`delivery.ts`) asks these for live Events
 * only; the replay a subscriber asked for is never filtered (§17.2).
 * @module
 */
import type { AttentionFilter, Event } from '@weft/spec'
import type { ActorRef, GroupState } from '../model.js'

/**
 * Whether a live Event passes `subscriber`'s attention filter `f` (§8). No filter or no selector
 * means everything. Otherwise the selectors add up: Events addressed to the subscriber always pass;
 * `mentionsOnly` lets a Message through only when it mentions the subscriber; any other Event
 * passes when it matches `eventKinds`, `conversationIds`, `workItemIds` (a WorkItem's own
 * Conversation counts as the WorkItem) or, with `announcements`, is a Group-wide fact
 * (`mission.*`, `group.*`) or a Message of the Group Conversation from the MissionOwner or the
 * Coordinator.
 */
export function passesAttention(f: AttentionFilter | undefined, subscriber: ActorRef, event: Event, group: GroupState): boolean {
  if (f === undefined) return true
  const selective = f.eventKinds !== undefined || f.conversationIds !== undefined || f.workItemIds !== undefined || f.mentionsOnly === true || f.announcements === true
  if (!selective || addressedTo(subscriber, event)) return true
  const message = event.kind.startsWith('message.')
  if (message && f.mentionsOnly === true) return false
  if (f.eventKinds?.includes(event.kind) === true) return true
  const conversationId = event.conversationId ?? text(event.payload['conversationId'])
  if (conversationId !== undefined && f.conversationIds?.includes(conversationId) === true) return true
  const conversation = conversationId === undefined ? undefined : group.conversations.get(conversationId)
  const workItemId = event.workItemId ?? text(event.payload['workItemId']) ?? conversation?.primaryWorkItemId
  if (workItemId !== undefined && f.workItemIds?.includes(workItemId) === true) return true
  if (f.announcements !== true) return false
  if (event.kind.startsWith('mission.') || event.kind.startsWith('group.')) return true
  const author = message ? (event.payload['author'] as ActorRef | undefined) : undefined
  return conversation?.type === 'group' && author !== undefined && (author.id === group.mission.coordinator.agentId || author.id === group.mission.missionOwner.id)
}

/** Events that name the subscriber: its Membership, its Grants, offers to it, its acceptance, Messages mentioning it. */
function addressedTo(subscriber: ActorRef, event: Event): boolean {
  const p = event.payload
  const same = (actor: unknown): boolean => isActor(actor) && actor.type === subscriber.type && actor.id === subscriber.id
  switch (event.kind) {
    case 'membership.changed':
    case 'membership.ended':
      return concernsOwnMembership(subscriber, event)
    case 'membership.delegation.granted':
      return subscriber.type === 'agent' && (p['grant'] as { granteeAgentId?: unknown } | undefined)?.granteeAgentId === subscriber.id
    case 'work.offer.created':
      return subscriber.type === 'agent' && Array.isArray(p['candidateAgentIds']) && p['candidateAgentIds'].includes(subscriber.id)
    case 'work.offer.accepted':
      return subscriber.type === 'agent' && p['assigneeId'] === subscriber.id
    default:
      return event.kind.startsWith('message.') && Array.isArray(p['mentions']) && p['mentions'].some(same)
  }
}

/** Whether an Event of `transaction` from index `at` on changes or ends `subscriber`'s own Membership. */
export function endsLater(subscriber: ActorRef, transaction: readonly Event[], at: number): boolean {
  for (let i = at; i < transaction.length; i++) if (concernsOwnMembership(subscriber, transaction[i] as Event)) return true
  return false
}

/** Whether `event` is a Membership Event about `subscriber` itself. */
export function concernsOwnMembership(subscriber: ActorRef, event: Event): boolean {
  const member =
    event.kind === 'membership.ended' ? event.payload['member'] : event.kind === 'membership.changed' ? (event.payload['membership'] as { member?: unknown } | undefined)?.member : undefined
  return isActor(member) && member.type === subscriber.type && member.id === subscriber.id
}

function isActor(value: unknown): value is ActorRef {
  return typeof value === 'object' && value !== null && typeof (value as ActorRef).id === 'string' && typeof (value as ActorRef).type === 'string'
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}
