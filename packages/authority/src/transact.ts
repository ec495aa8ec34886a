/**
 * The last two steps of a Command's walk (ARCHITECTURE): turn a handler's Event drafts into Event
 * envelopes with the next contiguous Group sequences and aggregate revisions (§15.2), then advance
 * the state with the reducers, the same ones replay runs, so state = fold(log).
 *
 * {@link materialize} does not touch the state, so a rejected or failing transaction leaves
 * nothing behind; {@link applyEvents} is only called with a complete, signed transaction.
 * @module
 */
import { EVENT_CATALOG, type Event, type EventKind } from '@weft/spec'
import type { AnyEventDraft, EventOf, ReducerFor } from './handler.js'
import { aggregateKey, type ActorRef, type AuthorityState } from './model.js'

/** The reducer of every Event kind (the generated `EventReducers` interface has this shape). */
export type ReducerTable = { readonly [K in EventKind]: ReducerFor<K> }

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

/** How to stamp the envelopes. */
export interface MaterializeOptions {
  /** `occurredAt` of every Event of the transaction. */
  readonly now: string
  readonly newId: () => string
  /** The Authority's service Principal (`acceptedBy`). */
  readonly authority: ActorRef
  /** Signs one unsigned envelope under the `event` profile (§6.4). */
  readonly sign: (event: Omit<Event, 'signature'>) => Event
}

/** The Event kinds that open a Group: its first Event (§7.1). */
const GROUP_GENESIS = new Set<string>(['mission.created', 'mission.follow_up.created'])

const catalog = new Map<string, { readonly scope: string; readonly aggregate: string }>(EVENT_CATALOG.map((e) => [e.kind, e]))

/**
 * Builds the signed envelopes of one transaction without mutating `state`. Sequences continue each
 * Group's head; revisions continue each aggregate's current revision, draft by draft.
 * @throws Error when a draft names a Group that does not exist and is not created earlier in the
 * same transaction (a handler bug: the pipeline reports it as `INTERNAL_ERROR`).
 */
export function materialize(state: AuthorityState, cause: TransactionCause, drafts: readonly AnyEventDraft[], options: MaterializeOptions): Event[] {
  const heads = new Map<string, number>()
  const revisions = new Map<string, number>()
  const events: Event[] = []
  for (const d of drafts) {
    const info = catalog.get(d.kind)
    if (info === undefined) throw new Error(`materialize: unknown Event kind ${d.kind}`)
    const base = {
      protocolVersion: '0.1' as const,
      eventId: options.newId(),
      kind: d.kind,
      actor: d.actor ?? cause.actor,
      cause: { type: cause.type, id: cause.id },
      correlationId: cause.correlationId,
      ...(d.conversationId === undefined ? {} : { conversationId: d.conversationId }),
      ...(d.workItemId === undefined ? {} : { workItemId: d.workItemId }),
      occurredAt: options.now,
      payload: d.payload as Record<string, unknown>,
      acceptedBy: options.authority,
      ...(cause.commandHash === undefined ? {} : { commandHash: cause.commandHash }),
    }
    if (info.scope === 'organization') {
      events.push(options.sign(base as Omit<Event, 'signature'>))
      continue
    }
    const groupId = d.groupId ?? cause.groupId
    if (groupId === undefined) throw new Error(`materialize: ${d.kind} needs a Group`)
    const group = state.groups.get(groupId)
    const head = heads.get(groupId) ?? group?.head ?? 0
    if (group === undefined && !(GROUP_GENESIS.has(d.kind) && head === 0)) throw new Error(`materialize: no Group ${groupId} for ${d.kind}`)
    const key = aggregateKey(info.aggregate as never, aggregateIdOf({ ...base, groupId } as Event))
    const revision = (revisions.get(`${groupId} ${key}`) ?? group?.revisions.get(key) ?? 0) + 1
    heads.set(groupId, head + 1)
    revisions.set(`${groupId} ${key}`, revision)
    events.push(options.sign({ ...base, groupId, sequence: head + 1, aggregateRevision: revision } as Omit<Event, 'signature'>))
  }
  return events
}

/**
 * Folds accepted Events into `state`: the kind's reducer, then the bookkeeping every Group Event
 * shares (head sequence, aggregate revision; organization Events go to the Organization log).
 * Used for live acceptance and for replay alike.
 */
export function applyEvents(state: AuthorityState, events: readonly Event[], reducers: ReducerTable): void {
  for (const event of events) {
    const reducer = reducers[event.kind as EventKind] as (s: AuthorityState, e: EventOf<EventKind>) => void
    reducer(state, event as EventOf<EventKind>)
    if (event.groupId === undefined) {
      state.org.log.push(event)
      continue
    }
    const group = state.groups.get(event.groupId)
    if (group === undefined) throw new Error(`applyEvents: ${event.kind} for unknown Group ${event.groupId}`)
    const info = catalog.get(event.kind)
    group.head = event.sequence as number
    group.revisions.set(aggregateKey(info!.aggregate as never, aggregateIdOf(event)), event.aggregateRevision as number)
  }
}

/**
 * The aggregate ID an Event advances, derived from the envelope alone so that acceptance and
 * replay agree (see `EventDraft` for the rules).
 */
export function aggregateIdOf(event: Event): string {
  const p = event.payload as Record<string, unknown>
  const info = catalog.get(event.kind)
  switch (info?.aggregate) {
    case 'workItem':
      return (event.workItemId ?? p['workItemId'] ?? (p['workItem'] as { workItemId?: string } | undefined)?.workItemId ?? p['proposalId']) as string
    case 'mission':
    case 'group':
    case 'policy':
      return event.groupId as string
    case 'membership':
      return ((p['membership'] as { membershipId?: string } | undefined)?.membershipId ?? p['membershipId'] ?? (p['grant'] as { grantId?: string } | undefined)?.grantId) as string
    case 'message':
      return p['messageId'] as string
    case 'artifact':
      return (p['artifact'] as { artifactId: string }).artifactId
    case 'approval':
      return p['approvalId'] as string
    default:
      return event.groupId as string
  }
}
