/**
 * The pipeline's {@link TransactionSteps}: {@link materialize} and {@link applyEvents} of
 * `./transact.ts`, built to allocate less on the commit path. Same envelopes (members, order,
 * values), same sequences and revisions, same state; `transact.test.ts` proves it against
 * the reference path. What each trick buys is measured in `bench/README.md` ("authority: the commit
 * path").
 * @module
 */
import type { AggregateType } from '@weft/spec'
import type { AnyEventDraft } from './handler.js'
import { aggregateKey, type AuthorityState } from '../model.js'
import { aggregateIdIn, applyEventsKeyed, kindInfoOf, type MaterializeOptions, type ReducerTable, type TransactionCause, type TransactionSteps, type UnsignedEvent } from './transact.js'

/**
 * Tuned transaction steps for one pipeline. `materialize` notes each Event's aggregate key, and
 * `apply` reuses them for the Events it materialized last instead of deriving them again; one array
 * serves every transaction without being emptied (which would drop its backing store), and entries
 * past the transaction's last Event are stale and never read.
 */
export function createTunedSteps(): TransactionSteps {
  const keys: (string | undefined)[] = []
  return {
    materialize: (state, cause, drafts, options) => materializeKeyed(state, cause, drafts, options, keys),
    apply: (state, events, reducers: ReducerTable) => applyEventsKeyed(state, events, reducers, keys),
  }
}

/**
 * The running heads and aggregate revisions of one transaction, by Group. A transaction has a
 * handful of drafts, so a short list searched from its newest entry beats Maps keyed by
 * concatenated text.
 */
interface Running {
  readonly groupId: string
  /** The aggregate key (`aggregateKey`) within the Group, or `undefined` for a head entry. */
  readonly key: string | undefined
  readonly value: number
}

function runningOf(running: readonly Running[] | undefined, groupId: string, key: string | undefined): number | undefined {
  if (running === undefined) return undefined
  for (let i = running.length - 1; i >= 0; i--) {
    const r = running[i]!
    if (r.key === key && r.groupId === groupId) return r.value
  }
  return undefined
}

/** The templates `materializeKeyed` copies its Events arrays from. */
const ONE_SLOT: readonly unknown[] = [undefined]
const NO_SLOT: readonly unknown[] = []

/** The frozen-to-be members of an Event envelope, as the constructors below take them. */
type Member = unknown

/** `{ acceptedBy, actor }`: the start of an envelope built member by member. */
function initEnvelopeStart(this: Record<string, Member>, acceptedBy: Member, actor: Member): void {
  this['acceptedBy'] = acceptedBy
  this['actor'] = actor
}

/**
 * A Group Event of a Command: its members in RFC 8785 order, `conversationId` and `workItemId` only
 * when present (one constructor, four shapes).
 */
function initGroupEvent(
  this: Record<string, Member>,
  acceptedBy: Member,
  actor: Member,
  aggregateRevision: Member,
  cause: Member,
  conversationId: Member,
  correlationId: Member,
  eventId: Member,
  groupId: Member,
  kind: Member,
  occurredAt: Member,
  payload: Member,
  sequence: Member,
  workItemId: Member,
): void {
  this['acceptedBy'] = acceptedBy
  this['actor'] = actor
  this['aggregateRevision'] = aggregateRevision
  this['cause'] = cause
  if (conversationId !== undefined) this['conversationId'] = conversationId
  this['correlationId'] = correlationId
  this['eventId'] = eventId
  this['groupId'] = groupId
  this['kind'] = kind
  this['occurredAt'] = occurredAt
  this['payload'] = payload
  this['protocolVersion'] = '0.1'
  this['sequence'] = sequence
  if (workItemId !== undefined) this['workItemId'] = workItemId
}

/** An Event's `cause` (§15.2): `{ type, id }`. */
function initCauseRef(this: Record<string, Member>, type: Member, id: Member): void {
  this['type'] = type
  this['id'] = id
}

/**
 * `init` as a constructor of plain objects: its prototype becomes `Object.prototype`, so what it
 * builds is a plain object as a literal is, for JCS, JSON, copies and equality alike.
 *
 * Why constructors instead of object literals, and a copy of each draft's payload: an Authority
 * keeps every Event, and V8 moves the objects of a literal site whose objects mostly survive
 * straight into its old generation (allocation-site pretenuring), where they would point at the
 * young Command they were made from. Built this way, Events start young like the Command.
 */
function plainConstructor<A extends Member[]>(init: (this: Record<string, Member>, ...args: A) => void): new (...args: A) => Record<string, unknown> {
  ;(init as unknown as { prototype: object }).prototype = Object.prototype
  return init as unknown as new (
    ...args: A
  ) => Record<string, unknown>
}

const EnvelopeStart = plainConstructor(initEnvelopeStart)
const GroupEvent = plainConstructor(initGroupEvent)
const CauseRef = plainConstructor(initCauseRef)

/**
 * {@link materialize} of `./transact.ts`, also writing each Event's aggregate key (`undefined` for
 * an Organization Event) to `keys` at the Event's index.
 */
function materializeKeyed<E>(state: AuthorityState, cause: TransactionCause, drafts: readonly AnyEventDraft[], options: MaterializeOptions<E>, keys: (string | undefined)[]): E[] {
  // The Group Events of this transaction so far, heads and revisions alike (kept only for the
  // drafts that follow, so a one-Event transaction makes no list).
  let running: Running[] | undefined
  const last = drafts.length - 1
  // A transaction of one Event (nearly all) gets an array of exactly one slot: the log keeps it
  // frozen in the receipt, where a pushed array would hold its grown, mostly empty backing store.
  const events = (last === 0 ? ONE_SLOT.slice() : NO_SLOT.slice()) as E[]
  const causeRef = new CauseRef(cause.type, cause.id)
  for (let i = 0; i <= last; i++) {
    const d = drafts[i]!
    const info = kindInfoOf(d.kind)
    let groupId: string | undefined
    let key: string | undefined
    let sequence = 0
    let revision = 0
    if (info.scope !== 'organization') {
      groupId = d.groupId ?? cause.groupId
      if (groupId === undefined) throw new Error(`materialize: ${d.kind} needs a Group`)
      const group = state.groups.get(groupId)
      const head = runningOf(running, groupId, undefined) ?? group?.head ?? 0
      if (group === undefined && !(info.genesis && head === 0)) throw new Error(`materialize: no Group ${groupId} for ${d.kind}`)
      key = aggregateKey(info.aggregate as AggregateType, aggregateIdIn(info, groupId, d))
      sequence = head + 1
      revision = (runningOf(running, groupId, key) ?? group?.revisions.get(key) ?? 0) + 1
      if (i < last) (running ??= []).push({ groupId, key: undefined, value: sequence }, { groupId, key, value: revision })
    }
    const eventId = options.newId()
    // A Group Event of a Command is built by one constructor, in one allocation; the rest member by
    // member, in the same RFC 8785 order.
    const { conversationId, workItemId } = d
    const payload = { ...d.payload }
    const event =
      groupId === undefined || cause.commandHash !== undefined
        ? memberByMember(options, cause, causeRef, d, eventId, payload, groupId, sequence, revision)
        : new GroupEvent(options.authority, d.actor ?? cause.actor, revision, causeRef, conversationId, cause.correlationId, eventId, groupId, d.kind, options.now, payload, sequence, workItemId)
    const sealed = options.sign(event as UnsignedEvent)
    if (last === 0) events[0] = sealed
    else events.push(sealed)
    keys[i] = key
  }
  return events
}

/** An envelope that is not a Group Event of a Command, built member by member in RFC 8785 order. */
function memberByMember(
  options: MaterializeOptions<unknown>,
  cause: TransactionCause,
  causeRef: object,
  d: AnyEventDraft,
  eventId: string,
  payload: object,
  groupId: string | undefined,
  sequence: number,
  revision: number,
): Record<string, unknown> {
  const event = new EnvelopeStart(options.authority, d.actor ?? cause.actor)
  if (groupId !== undefined) event['aggregateRevision'] = revision
  event['cause'] = causeRef
  if (cause.commandHash !== undefined) event['commandHash'] = cause.commandHash
  if (d.conversationId !== undefined) event['conversationId'] = d.conversationId
  event['correlationId'] = cause.correlationId
  event['eventId'] = eventId
  if (groupId !== undefined) event['groupId'] = groupId
  event['kind'] = d.kind
  event['occurredAt'] = options.now
  event['payload'] = payload
  event['protocolVersion'] = '0.1'
  if (groupId !== undefined) event['sequence'] = sequence
  if (d.workItemId !== undefined) event['workItemId'] = d.workItemId
  return event
}
