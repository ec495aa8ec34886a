/**
 * The Message domain (§9, §9.1): Committed Messages in the Group's Conversations. A Message never
 * authorizes anything (`authority: false`), and an accepted one is never rewritten: corrections,
 * retractions and redactions are new Messages pointing at the original (§4 invariant 6).
 * @module
 */
import type { Conversation, Event, Message } from '@weft/spec'
import { draft, reject, requireGroup, type AnyEventDraft, type CommandOf, type EventOf, type HandlerContext, type HandlerFor, type ReducerFor } from '../commit/handler.js'
import type { ActorRef, AuthorityState, GroupState, MessageRecord } from '../model.js'
import { hasLiveMembership, isControlPlane, isMissionOwner, sameActor } from './memberships.js'
import { noncriticalExtensions, offlineBindingOf, reconcileMessage } from './offline.js'
import { noteRate, requireWithinRate } from './runaway.js'
import { requireCoordinatorOr } from './work-roles.js'

type MessageCommandKind = 'message.post' | 'message.correct' | 'message.retract' | 'message.redact'
type MessageEventKind = 'message.posted' | 'message.corrected' | 'message.retracted' | 'message.redacted'
type AmendingKind = 'correction' | 'retraction' | 'redaction'

/**
 * The Conversation `actor` may write to: it exists and is open, and a restricted one admits only
 * its listed members, the Coordinator and the MissionOwner (§9).
 */
function requireConversation(ctx: HandlerContext, group: GroupState, actor: ActorRef, conversationId: string): Conversation {
  const conversation = group.conversations.get(conversationId) ?? reject('INVALID_COMMAND', 'unknown conversation')
  if (conversation.state !== 'active') reject('INVALID_STATE_TRANSITION', 'the conversation is closed')
  if (conversation.access.mode === 'restricted') {
    const listed = (conversation.access.members ?? []).some((m) => sameActor(m as ActorRef, actor))
    requireCoordinatorOr(ctx, group, actor, listed || isMissionOwner(group, actor), 'actor may not write to this restricted conversation')
  }
  return conversation
}

/** §8, §9: only current members (active, or provisional for a candidate Worker) post. */
function requireMember(group: GroupState, actor: ActorRef): void {
  if (!hasLiveMembership(group, actor)) reject('MEMBERSHIP_REQUIRED', 'the actor holds no current membership in the group')
}

function requireNewId(group: GroupState, messageId: string): void {
  if (group.messages.has(messageId)) reject('INVALID_COMMAND', `message ${messageId} already exists`)
}

/** The Committed Message a handler appends; `authority` is always `false` (§9). */
function committed(ctx: HandlerContext, group: GroupState, author: ActorRef, fields: Pick<Message, 'messageId' | 'conversationId' | 'kind' | 'content'> & Partial<Message>): Message {
  return { ...fields, missionId: group.missionId, groupId: group.groupId, author: { type: author.type, id: author.id }, authority: false, committedAt: ctx.now }
}

function post(command: CommandOf<'message.post'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  const actor = command.actor as ActorRef
  const { messageId, conversationId, content, mentions, references } = command.payload
  requireMember(group, actor)
  requireConversation(ctx, group, actor, conversationId)
  requireNewId(group, messageId)
  // §20: an Organization message rate, unless a one-shot override names this very post.
  requireWithinRate(command, ctx, group, 'message_rate', ctx.policy.maxMessagesPerMinute)
  // §11.5: a Message buffered offline goes to its WorkItem's Conversation within the lease/grace
  // window, after the charge of its offline usage.
  const binding = offlineBindingOf(command)
  const charge = binding === undefined ? [] : reconcileMessage(ctx, group, command, binding)
  // §18: noncritical extension data is kept on the Message as the author sent it.
  const extensions = noncriticalExtensions(command.extensions)
  let message: Message
  if (mentions === undefined && references === undefined && extensions === undefined) {
    // The plain post, most Messages: the members `committed` would write, in its order, in one literal.
    const author = { type: actor.type, id: actor.id }
    message = { messageId, conversationId, kind: 'message', content, missionId: group.missionId, groupId: group.groupId, author, authority: false, committedAt: ctx.now }
  } else {
    const fields: Parameters<typeof committed>[3] = { messageId, conversationId, kind: 'message', content }
    if (mentions !== undefined) fields.mentions = mentions
    if (references !== undefined) fields.references = references
    if (extensions !== undefined) fields.extensions = extensions
    message = committed(ctx, group, actor, fields)
  }
  const posted = draft('message.posted', message, { conversationId })
  return charge.length === 0 ? [posted] : [...charge, posted]
}

/** The payload every amending Command shares. */
type AmendPayload = CommandOf<'message.correct'>['payload'] | CommandOf<'message.retract'>['payload'] | CommandOf<'message.redact'>['payload']

/**
 * The new Message amending `targetMessageId` (§9.1), in the target's Conversation. A correction
 * or retraction needs a target still in effect; a redaction may hide anything not yet redacted.
 */
function amendment(ctx: HandlerContext, group: GroupState, actor: ActorRef, kind: AmendingKind, p: AmendPayload): { message: Message; target: MessageRecord } {
  const target = group.messages.get(p.targetMessageId) ?? reject('INVALID_COMMAND', 'unknown target message')
  if (target.message.kind !== 'message' && target.message.kind !== 'correction') reject('INVALID_COMMAND', `a ${target.message.kind} cannot be amended`)
  const amendedBy = new Set(target.followUps.map((id) => group.messages.get(id)?.message.kind))
  const closedBy = kind === 'redaction' ? ['redaction'] : ['retraction', 'redaction']
  const closing = closedBy.find((k) => amendedBy.has(k as Message['kind']))
  if (closing !== undefined) reject('INVALID_STATE_TRANSITION', `the target message was already subject to a ${closing}`)
  requireNewId(group, p.messageId)
  const extra = 'mentions' in p ? { ...(p.mentions === undefined ? {} : { mentions: p.mentions }), ...(p.references === undefined ? {} : { references: p.references }) } : {}
  const message = committed(ctx, group, actor, {
    messageId: p.messageId,
    conversationId: target.message.conversationId,
    kind,
    targetMessageId: p.targetMessageId,
    content: p.content,
    reason: p.reason,
    ...extra,
  })
  return { message, target }
}

/** Correction and retraction: a current member amends a Message it authored (§9.1). */
function authorAmendment(command: CommandOf<'message.correct' | 'message.retract'>, ctx: HandlerContext, kind: 'correction' | 'retraction'): { message: Message; conversationId: string } {
  const group = requireGroup(ctx)
  const actor = command.actor as ActorRef
  requireMember(group, actor)
  const { message, target } = amendment(ctx, group, actor, kind, command.payload)
  if (!sameActor(target.message.author as ActorRef, actor)) reject('AUTH_FORBIDDEN', `only the author may issue a ${kind}`)
  requireConversation(ctx, group, actor, message.conversationId)
  // §20: corrections and retractions are Messages too and count against the same rate.
  requireWithinRate(command, ctx, group, 'message_rate', ctx.policy.maxMessagesPerMinute)
  return { message, conversationId: message.conversationId }
}

function correct(command: CommandOf<'message.correct'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const { message, conversationId } = authorAmendment(command, ctx, 'correction')
  return [draft('message.corrected', message, { conversationId })]
}

function retract(command: CommandOf<'message.retract'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const { message, conversationId } = authorAmendment(command, ctx, 'retraction')
  return [draft('message.retracted', message, { conversationId })]
}

function redact(command: CommandOf<'message.redact'>, ctx: HandlerContext): readonly AnyEventDraft[] {
  const group = requireGroup(ctx)
  const actor = command.actor as ActorRef
  // §9.1, §7.4: a redaction is a moderation decision with an auditable policy reason.
  requireCoordinatorOr(ctx, group, actor, isMissionOwner(group, actor) || isControlPlane(ctx, actor), 'actor may not redact messages')
  const { message } = amendment(ctx, group, actor, 'redaction', command.payload)
  return [draft('message.redacted', message, { conversationId: message.conversationId })]
}

/** Command handlers of the Message domain (§9, §9.1). */
export const messageHandlers = {
  'message.post': post,
  'message.correct': correct,
  'message.retract': retract,
  'message.redact': redact,
} satisfies { readonly [K in MessageCommandKind]: HandlerFor<K> }

/**
 * Stores a Committed Message and links an amendment to its target, whose own record stays as
 * accepted. An author's Message also counts toward its §20 message rate; a redaction is moderation
 * and does not.
 */
function commit(state: AuthorityState, event: EventOf<MessageEventKind>): void {
  const group = state.groups.get(event.groupId as string)
  if (group === undefined) return
  const message = event.payload
  group.messages.set(message.messageId, { message, followUps: [] })
  if (message.targetMessageId !== undefined) group.messages.get(message.targetMessageId)?.followUps.push(message.messageId)
  if (message.kind === 'redaction') return
  noteRate(state, event as Event, 'message_rate')
}

/** Event reducers of the Message domain. */
export const messageReducers = {
  'message.posted': commit,
  'message.corrected': commit,
  'message.retracted': commit,
  'message.redacted': commit,
} satisfies { readonly [K in MessageEventKind]: ReducerFor<K> }
