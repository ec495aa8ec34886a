/**
 * A transaction's walk after its handler decided (ARCHITECTURE, steps 4–5), as the spec tells it:
 * **materialize** the handler's Event drafts into Event envelopes with the next contiguous Group
 * sequences and aggregate revisions (§15.2), **seal** each (deep-frozen, §4.6, and signed by the
 * Authority under the `event` profile, §6.4: `./sealing.ts`), then **fold** them into the state with
 * the reducers replay runs, so state = fold(log).
 *
 * This module is the reference path: plain objects and Maps, one step after another. The pipeline
 * runs the same steps through {@link TransactionSteps}, with allocation-lean versions
 * (`./materialize-tuned.ts`) proven equal to these by differential tests.
 *
 * {@link materialize} does not touch the state, so a rejected or failing transaction leaves
 * nothing behind; {@link applyEvents} is only called with a complete, signed transaction.
 * @module
 */
import { frozenJson } from '@weft/codec'
import { aggregateIdReader, EVENT_CATALOG, type AggregateIdReader, type AggregateType, type Event } from '@weft/spec'
import type { AnyEventDraft } from './handler.js'
import { applyEvent, type AnyEvent, type EventReducers } from '../gen/reducers.js'
import { aggregateKey, type ActorRef, type AuthorityState } from '../model.js'

/** The reducer of every Event kind: the generated {@link EventReducers} under the name the transaction API has always used. */
export type ReducerTable = EventReducers

/** What caused the transaction: a Command (the usual case), a prior Event, a timer or a policy decision (§15.2). */
export interface TransactionCause {
  readonly type: 'command' | 'event' | 'timer' | 'policy'
  /** The Action ID, Event ID, timer or policy decision ID. */
  readonly id: string
  readonly actor: ActorRef
  readonly correlationId: string
  /** The Command's Group, the default Group of its drafts. */
  readonly groupId?: string
  /** The Command's signing hash (§6.4), recorded as `commandHash`. */
  readonly commandHash?: string
}

/** An Event envelope before the Authority signs it. */
export type UnsignedEvent = Omit<Event, 'signature'>

/** How to stamp the envelopes; `sign` turns each into what {@link materialize} returns (an `Event` unless said otherwise). */
export interface MaterializeOptions<E = Event> {
  /** `occurredAt` of every Event of the transaction. */
  readonly now: string
  readonly newId: () => string
  /** The Authority's service Principal (`acceptedBy`). */
  readonly authority: ActorRef
  /** Signs one unsigned envelope under the `event` profile (§6.4), e.g. with a sealer of `./sealing.ts`. */
  readonly sign: (event: UnsignedEvent) => E
}

/**
 * The materialize and fold steps of a transaction, as one implementation performs them: the plain
 * {@link plainSteps} of this module, or the pipeline's tuned ones (`./materialize-tuned.ts`). Both
 * give byte-identical Events and the same state.
 */
export interface TransactionSteps {
  /** See {@link materialize}. */
  materialize<E>(state: AuthorityState, cause: TransactionCause, drafts: readonly AnyEventDraft[], options: MaterializeOptions<E>): E[]
  /** Folds the Events of the transaction this object materialized last, once they are committed (see {@link applyEvents}). */
  apply(state: AuthorityState, events: readonly Event[], reducers: ReducerTable): void
}

/** The Event kinds that open a Group: its first Event (§7.1). */
const GROUP_GENESIS = new Set<string>(['mission.created', 'mission.follow_up.created'])

/** What a transaction needs to know of an Event kind (§15.2: its scope and the aggregate it advances). */
export interface KindInfo {
  readonly scope: string
  readonly aggregate: string
  /** Whether the kind opens a Group (§7.1), so its Group need not exist yet. */
  readonly genesis: boolean
  /**
   * Whether the aggregate is named by the envelope's `groupId` (the catalog's `aggregateIdAt` is
   * `['/groupId']`). A draft need not repeat its Group, so its aggregate is the Group it lands in.
   */
  readonly namedByGroup: boolean
  /** The catalog's `aggregateIdAt` of the kind, compiled once: reads an Event or a draft. */
  readonly readAggregateId: AggregateIdReader
}

/** The {@link KindInfo} of one catalog entry. */
function kindInfo(entry: (typeof EVENT_CATALOG)[number]): KindInfo {
  const namedByGroup = entry.aggregateIdAt.length === 1 && entry.aggregateIdAt[0] === '/groupId'
  // A draft's `groupId` may be absent (it defaults to the Command's), so a pointer to it can only
  // stand alone; a catalog entry mixing it with others would be read wrongly from drafts.
  if (!namedByGroup && (entry.aggregateIdAt as readonly string[]).includes('/groupId')) throw new Error(`transact: ${entry.kind}'s aggregateIdAt mixes /groupId with other pointers`)
  return { scope: entry.scope, aggregate: entry.aggregate, genesis: GROUP_GENESIS.has(entry.kind), namedByGroup, readAggregateId: aggregateIdReader(entry.aggregateIdAt) }
}

const catalog = new Map<string, KindInfo>(EVENT_CATALOG.map((e) => [e.kind, kindInfo(e)]))

/** The catalog entry of an Event kind a draft names. @throws Error for a kind the catalog lacks (a handler bug). */
export function kindInfoOf(kind: string): KindInfo {
  const info = catalog.get(kind)
  if (info === undefined) throw new Error(`materialize: unknown Event kind ${kind}`)
  return info
}

/**
 * Builds the signed envelopes of one transaction without mutating `state`. Sequences continue each
 * Group's head; revisions continue each aggregate's current revision, draft by draft (§15.2). Each
 * Event's `payload` is a shallow copy of its draft's, sharing what the draft's holds; every Event of
 * the transaction shares one `cause` object. Members are in RFC 8785 order, so a sealer finds the
 * envelope's own members sorted.
 * @throws Error when a draft names a Group that does not exist and is not created earlier in the
 * same transaction (a handler bug: the pipeline reports it as `INTERNAL_ERROR`).
 */
export function materialize<E = Event>(state: AuthorityState, cause: TransactionCause, drafts: readonly AnyEventDraft[], options: MaterializeOptions<E>): E[] {
  // The heads and revisions this transaction reached so far, by Group and by Group and aggregate key.
  const heads = new Map<string, number>()
  const revisions = new Map<string, number>()
  /** Where a Group Event lands: its Group, aggregate key, sequence and revision. */
  const placeOf = (d: AnyEventDraft, info: KindInfo): { groupId: string; key: string; sequence: number; revision: number } => {
    const groupId = d.groupId ?? cause.groupId
    if (groupId === undefined) throw new Error(`materialize: ${d.kind} needs a Group`)
    const group = state.groups.get(groupId)
    const head = heads.get(groupId) ?? group?.head ?? 0
    if (group === undefined && !(info.genesis && head === 0)) throw new Error(`materialize: no Group ${groupId} for ${d.kind}`)
    const key = aggregateKey(info.aggregate as AggregateType, aggregateIdIn(info, groupId, d))
    const revision = (revisions.get(`${groupId} ${key}`) ?? group?.revisions.get(key) ?? 0) + 1
    heads.set(groupId, head + 1)
    revisions.set(`${groupId} ${key}`, revision)
    return { groupId, key, sequence: head + 1, revision }
  }
  // §15.2: every Event of the transaction has the same cause.
  const causeRef = { type: cause.type, id: cause.id }
  return drafts.map((d) => {
    const info = kindInfoOf(d.kind)
    // Organization Events have no Group, sequence or revision (§15.2).
    const place = info.scope === 'organization' ? undefined : placeOf(d, info)
    return options.sign(
      envelope({
        acceptedBy: options.authority,
        actor: d.actor ?? cause.actor,
        aggregateRevision: place?.revision,
        cause: causeRef,
        commandHash: cause.commandHash,
        conversationId: d.conversationId,
        correlationId: cause.correlationId,
        eventId: options.newId(),
        groupId: place?.groupId,
        kind: d.kind,
        occurredAt: options.now,
        payload: { ...d.payload },
        protocolVersion: '0.1',
        sequence: place?.sequence,
        workItemId: d.workItemId,
      }),
    )
  })
}

/** The envelope of `members`, in their order, without the optional ones that are absent. */
function envelope(members: Record<string, unknown>): UnsignedEvent {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(members)) if (value !== undefined) out[name] = value
  return out as UnsignedEvent
}

/** {@link materialize} and {@link applyEvents}: the reference {@link TransactionSteps}. */
export const plainSteps: TransactionSteps = { materialize, apply: applyEvents }

/**
 * Folds accepted Events into `state`: the kind's reducer, then the bookkeeping every Group Event
 * shares (head sequence, aggregate revision; organization Events go to the Organization log).
 * Used for live acceptance and for replay alike.
 */
export function applyEvents(state: AuthorityState, events: readonly Event[], reducers: ReducerTable): void {
  applyEventsKeyed(state, events, reducers, undefined)
}

/** {@link applyEvents} with the aggregate key of each Event at its index (`undefined` for an Organization Event) when the caller knows them, else deriving them. */
export function applyEventsKeyed(state: AuthorityState, events: readonly Event[], reducers: ReducerTable, keys: readonly (string | undefined)[] | undefined): void {
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    applyEvent(reducers, state, event as AnyEvent)
    if (event.groupId === undefined) {
      state.org.log.push(event)
      continue
    }
    const group = state.groups.get(event.groupId)
    if (group === undefined) throw new Error(`applyEvents: ${event.kind} for unknown Group ${event.groupId}`)
    group.head = event.sequence as number
    group.revisions.set(keys?.[i] ?? aggregateKeyOf(event), event.aggregateRevision as number)
  }
}

/**
 * A stored Event as the reducers and readers take it (§4.6): the Event itself when it is frozen
 * already (the memory store keeps the accepted objects), else a deep-frozen copy (a parsed row).
 */
export function storedEvent(stored: Event): Event {
  return Object.isFrozen(stored) ? stored : (frozenJson(stored) as Event)
}

/** The `aggregateKey` of the aggregate a Group Event advances. */
function aggregateKeyOf(event: Event): string {
  return aggregateKey(catalog.get(event.kind)?.aggregate as AggregateType, aggregateIdOf(event))
}

/**
 * The aggregate ID an Event advances, derived from the envelope alone (the catalog's
 * `aggregateIdAt`, §15.2) so that acceptance and replay agree (see `EventDraft`). An Event of a
 * kind the catalog lacks is keyed by its Group.
 */
export function aggregateIdOf(event: Event): string {
  const info = catalog.get(event.kind)
  return (info === undefined ? event.groupId : aggregateIdIn(info, event.groupId as string, event)) as string
}

/**
 * The aggregate ID an Event or a draft of kind `info` advances in Group `groupId`: where the
 * catalog's `aggregateIdAt` points. A draft carries `workItemId` and `payload` where its Event will,
 * so one reader serves both.
 */
export function aggregateIdIn(info: KindInfo, groupId: string, source: object): string {
  return (info.namedByGroup ? groupId : info.readAggregateId(source)) as string
}
