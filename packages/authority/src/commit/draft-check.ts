/**
 * The check a transaction runs on a handler's drafts before it materializes them (§15.2). A failure
 * is a handler bug, not a bad Command: the pipeline answers `INTERNAL_ERROR` and appends nothing.
 * The pipeline runs the cached variant of `./draft-check-cached.ts`, proven to decide as this one.
 * @module
 */
import { isAbsoluteUri, isProtocolTimestamp } from '@weft/codec'
import { eventPayloads } from '@weft/validators/payloads'
import type { AnyEventDraft } from './handler.js'
import type { ActorRef } from '../model.js'
import type { CommandRule } from '../ingress/checks.js'

/**
 * Checks a handler's drafts before they become Events; see {@link createDraftCheck}. `payloads`
 * says whether each payload is also checked against its Event kind's schema.
 */
export type DraftCheck = (drafts: readonly AnyEventDraft[], rule: CommandRule, now: string, payloads: boolean) => void

/**
 * The draft check of the reference path. It refuses a kind the catalog does not let the Command
 * emit, a payload off its kind's schema (when `payloads`), or an envelope member off the Event
 * schema. Of the envelope, only what a draft supplies is checked per draft (`actor`, `groupId`,
 * `conversationId`, `workItemId`) and the `occurredAt` of the transaction; the rest is valid by
 * construction: the Event ID comes from the ID source, cause, correlation and default actor from a
 * Command that passed its schema, sequence and revision are counted, `commandHash` is a signing
 * hash, and `acceptedBy` is the Authority's Principal, checked here too.
 */
export function createDraftCheck(authority: ActorRef): DraftCheck {
  return (drafts, rule, now, payloads) => {
    // §2: one `occurredAt` for the whole transaction.
    if (drafts.length > 0 && !isProtocolTimestamp(now)) throw envelopeFailure(drafts[0]!)
    for (const d of drafts) {
      checkKindAndPayload(d, rule, payloads)
      const valid =
        isActor(authority) &&
        (d.actor === undefined || isActor(d.actor)) &&
        (d.groupId === undefined || isId(d.groupId)) &&
        (d.conversationId === undefined || isId(d.conversationId)) &&
        (d.workItemId === undefined || isId(d.workItemId))
      if (!valid) throw envelopeFailure(d)
    }
  }
}

/** The catalog's `emits` of the Command (§15.1) and, when `payloads`, the kind's payload schema. */
export function checkKindAndPayload(d: AnyEventDraft, rule: CommandRule, payloads: boolean): void {
  if (!rule.emits.includes(d.kind)) throw new Error(`${rule.kind} may not emit ${d.kind} (COMMAND_CATALOG emits)`)
  if (!payloads) return
  const validator = eventPayloads[d.kind]
  if (!validator.check(d.payload)) throw new Error(`${d.kind} payload fails its schema: ${JSON.stringify(validator.errors(d.payload, { maxErrors: 3 }))}`)
}

/** The error of a draft whose envelope would fail the Event schema. */
export function envelopeFailure(d: AnyEventDraft): Error {
  return new Error(`${d.kind}: the Event envelope fails its schema`)
}

/** The `id` definition of `common.schema.json`: an absolute URI of at most 512 code points. */
export function isId(value: unknown): boolean {
  return typeof value === 'string' && (value.length <= 512 || [...value].length <= 512) && isAbsoluteUri(value)
}

/** The `actor` definition of `common.schema.json`: exactly a Principal type and an {@link isId} ID. */
export function isActor(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const actor = value as Record<string, unknown>
  for (const name in actor) if (name !== 'type' && name !== 'id') return false
  return (actor['type'] === 'agent' || actor['type'] === 'human' || actor['type'] === 'service') && isId(actor['id'])
}
