/**
 * The pipeline's {@link DraftCheck}: {@link createDraftCheck} of `./draft-check.ts` with memory of
 * what it found valid, so that most checks of consecutive Commands are a comparison. It refuses
 * exactly what the reference check refuses (`draft-check.test.ts` proves it on random drafts).
 * @module
 */
import { isProtocolTimestamp } from '@weft/codec'
import type { ActorRef } from '../model.js'
import { isoTimeOfDay } from '@weft/codec/time'
import { checkKindAndPayload, envelopeFailure, isActor, isId, type DraftCheck } from './draft-check.js'

/** {@link createDraftCheck} of `./draft-check.ts` for a pipeline's life, remembering the last valid value of each member. */
export function createCachedDraftCheck(authority: ActorRef): DraftCheck {
  const authorityValid = isActor(authority)
  // The last value each member was found valid with: consecutive Commands mostly name the same
  // WorkItem, Conversation and Group, and drafts the same actor objects.
  let validActor: unknown = authority
  let validGroupId = ''
  let validConversationId = ''
  let validWorkItemId = ''
  // The `YYYY-MM-DDT` of the last `occurredAt` found valid in the `toISOString` form: the Authority
  // clock's readings nearly all fall on that day, and then only need a valid time of day.
  let validDay = '\u0000'
  const isTimestamp = (text: string): boolean => {
    if (text.startsWith(validDay) && isoTimeOfDay(text) >= 0) return true
    if (!isProtocolTimestamp(text)) return false
    if (isoTimeOfDay(text) >= 0) validDay = text.slice(0, 11)
    return true
  }
  return (drafts, rule, now, payloads) => {
    if (drafts.length > 0 && !isTimestamp(now)) throw envelopeFailure(drafts[0]!)
    for (const d of drafts) {
      checkKindAndPayload(d, rule, payloads)
      const { actor, groupId, conversationId, workItemId } = d
      const envelopeValid =
        authorityValid &&
        (actor === undefined || actor === validActor || isActor(actor)) &&
        (groupId === undefined || groupId === validGroupId || isId(groupId)) &&
        (conversationId === undefined || conversationId === validConversationId || isId(conversationId)) &&
        (workItemId === undefined || workItemId === validWorkItemId || isId(workItemId))
      if (!envelopeValid) throw envelopeFailure(d)
      // Frozen actors only: a value that cannot change stays valid.
      if (actor !== undefined && Object.isFrozen(actor)) validActor = actor
      if (groupId !== undefined) validGroupId = groupId
      if (conversationId !== undefined) validConversationId = conversationId
      if (workItemId !== undefined) validWorkItemId = workItemId
    }
  }
}
