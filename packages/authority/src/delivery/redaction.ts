/**
 * Redaction as it is served (§7.4, §9.1, §4 invariant 6). `message.redact` appends a redaction
 * Message that names its target, with an auditable policy reason; that Event is the tombstone the
 * spec asks for. What changes afterwards is only what readers of the log are given: wherever the
 * Authority serves the Event that carried the redacted Message (replay, paged reads, delivery), it
 * serves a tombstone of it instead.
 *
 * A tombstone keeps every envelope member that places and identifies the Event (Event ID, Group,
 * sequence, aggregate revision, kind, actor, cause, correlation, time, `commandHash`) and the
 * Message's identity and addressing (IDs, author, Conversation, kind, target, mentions, commit
 * time). It withholds the content: `content` becomes the redaction's own `content`, which
 * `message.redact` defines as the tombstone shown in the original's place, an amended Message's
 * `reason` becomes the redaction's policy reason, and `references` and Message extensions are
 * dropped. It carries
 * the noncritical {@link REDACTION_EXTENSION} naming the redaction Message and the original
 * signature value, and the Authority signs it afresh under the `event` profile, so a recipient
 * verifies it like any Event. Nothing is rewritten in place: the stored log, the receipts and the
 * folded state keep the original, which stays with the retained audit log (§7.4).
 * @module
 */
import { frozenJson, sign, type SigningKey } from '@weft/codec'
import type { Event, Message } from '@weft/spec'
import type { GroupState, MessageRecord } from '../model.js'

/** The Extension Profile ID a served tombstone carries on its envelope (noncritical). */
export const REDACTION_EXTENSION = 'urn:weft:extension:redaction-tombstone'

/** The data of {@link REDACTION_EXTENSION}. */
export interface RedactionTombstone {
  /** The Message ID of the redaction that withheld the content. */
  readonly redactionMessageId: string
  /** The signature value of the Event as accepted, which the retained audit log still verifies against. */
  readonly originalSignature: string
}

/** Turns a page of one Group's log into what is served: redacted Messages as tombstones, every other Event as stored. */
export type ServedView = (group: GroupState | undefined, events: readonly Event[]) => readonly Event[]

/** The Event kinds whose payload is a Message a redaction may target (§9.1: a Message or a correction). */
const REDACTABLE = new Set<string>(['message.posted', 'message.corrected'])

/**
 * The {@link ServedView} of an Authority whose Events `key` signs. Tombstones are signed once and
 * kept, so serving one again costs a lookup; a page without redacted Messages is returned as it is.
 */
export function createRedactionView(key: SigningKey): ServedView {
  const tombstones = new Map<string, Event>()
  return (group, events) => {
    if (group === undefined) return events
    let served: Event[] | undefined
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!
      const redaction = redactionOf(group, event)
      if (redaction === undefined) continue
      let tombstone = tombstones.get(event.eventId)
      if (tombstone === undefined) tombstones.set(event.eventId, (tombstone = tombstoneOf(event, redaction, key)))
      ;(served ??= events.slice())[i] = tombstone
    }
    return served ?? events
  }
}

/** The redaction of the Message `event` carries, if that Message was redacted. */
export function redactionOf(group: GroupState, event: Event): Message | undefined {
  if (!REDACTABLE.has(event.kind)) return undefined
  const record = group.messages.get((event.payload as { messageId?: string }).messageId ?? '')
  if (record === undefined || record.followUps.length === 0) return undefined
  return record.followUps.map((id) => group.messages.get(id)).find((r): r is MessageRecord => r?.message.kind === 'redaction')?.message
}

function tombstoneOf(event: Event, redaction: Message, key: SigningKey): Event {
  const { signature, ...envelope } = event
  const { content: _content, references: _references, extensions: _extensions, ...kept } = event.payload as unknown as Message
  const payload: Message = { ...kept, content: redaction.content, ...(kept.reason === undefined || redaction.reason === undefined ? {} : { reason: redaction.reason }) }
  const data: RedactionTombstone = { redactionMessageId: redaction.messageId, originalSignature: signature.value }
  const extensions = { ...envelope.extensions, [REDACTION_EXTENSION]: { version: '1.0.0', critical: false, data } }
  return frozenJson(sign('event', { ...envelope, payload, extensions }, key)) as Event
}
