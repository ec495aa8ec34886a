/**
 * The last two steps of a Command's walk (ARCHITECTURE): turn a handler's Event drafts into Event
 * envelopes with the next contiguous Group sequences and aggregate revisions (§15.2), then advance
 * the state with the reducers, the same ones replay runs, so state = fold(log).
 *
 * {@link materialize} does not touch the state, so a rejected or failing transaction leaves
 * nothing behind; {@link applyEvents} is only called with a complete, signed transaction.
 * @module
 */
import { canonicalizeOrThrow, encodeBase64url, type SignatureEnvelope, type SigningKey } from '@weft/codec'
import { EVENT_CATALOG, type Event, type EventKind } from '@weft/spec'
import { deepFreeze } from './gen/rules.js'
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

/** An Event envelope before the Authority signs it. */
export type UnsignedEvent = Omit<Event, 'signature'>

/** How to stamp the envelopes; `sign` turns each into what {@link materialize} returns (an `Event` unless said otherwise). */
export interface MaterializeOptions<E = Event> {
  /** `occurredAt` of every Event of the transaction. */
  readonly now: string
  readonly newId: () => string
  /** The Authority's service Principal (`acceptedBy`). */
  readonly authority: ActorRef
  /** Signs one unsigned envelope under the `event` profile (§6.4), e.g. with a {@link createEventSealer}. */
  readonly sign: (event: UnsignedEvent) => E
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
export function materialize<E = Event>(state: AuthorityState, cause: TransactionCause, drafts: readonly AnyEventDraft[], options: MaterializeOptions<E>): E[] {
  const heads = new Map<string, number>()
  const revisions = new Map<string, number>()
  const events: E[] = []
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
      events.push(options.sign(base as UnsignedEvent))
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
    events.push(options.sign({ ...base, groupId, sequence: head + 1, aggregateRevision: revision } as UnsignedEvent))
  }
  return events
}

/** One accepted Event in the two copies a transaction needs. */
export interface SealedEvent {
  /** What the log keeps and every reader gets: deep-frozen (§4.6, an accepted Event is immutable) and signed. */
  readonly stored: Event
  /** The reducers' private copy: equal to {@link stored}, mutable, sharing no object with it or with the handler's drafts. */
  readonly live: Event
}

/** How a {@link createEventSealer} signs. */
export interface SealerOptions {
  /**
   * Sign each Event the first time its `signature` is read (serializing, copying or reading the
   * member) instead of at acceptance. Either way every Event a reader can reach carries the same
   * signature over the same bytes; deferral only moves the Ed25519 operation off the commit path.
   */
  readonly deferSignatures?: boolean
  /** Checks the envelope (with a placeholder signature value) before it is signed; `false` is a pipeline or handler bug. */
  readonly check?: (event: Event) => boolean
}

const decoder = new TextDecoder()

/** The length of an Ed25519 signature (64 bytes) in unpadded base64url. */
const PLACEHOLDER_SIGNATURE = 'A'.repeat(86)

/**
 * The `sign` of {@link materialize} the pipeline uses: the RFC 8785 form of each envelope is
 * computed once (§6.4: the signing input is the envelope without `signature`), signed with the
 * Authority's key under the `event` profile (signed time `occurredAt`), and parsed back twice for
 * the two copies of a {@link SealedEvent}. An envelope outside the JCS data model throws, so such an
 * Event is never accepted.
 */
export function createEventSealer(key: SigningKey, options: SealerOptions = {}): (event: UnsignedEvent) => SealedEvent {
  const envelope = (occurredAt: string, value: string): SignatureEnvelope => ({ algorithm: 'Ed25519', keyId: key.keyId, createdAt: occurredAt, value })
  return (event) => {
    const bytes = canonicalizeOrThrow(event)
    const text = decoder.decode(bytes)
    const frozen = deepFreeze(JSON.parse(text) as UnsignedEvent)
    const live = JSON.parse(text) as Event
    if (options.check !== undefined && !options.check({ ...frozen, signature: envelope(frozen.occurredAt, PLACEHOLDER_SIGNATURE) } as Event)) {
      throw new Error(`${frozen.kind}: the Event envelope fails its schema`)
    }
    if (options.deferSignatures !== true) {
      const signature = envelope(frozen.occurredAt, encodeBase64url(key.pair.sign(bytes)))
      live.signature = { ...signature }
      return { stored: Object.freeze({ ...frozen, signature: Object.freeze(signature) }) as Event, live }
    }
    let signature: SignatureEnvelope | undefined
    // `frozen` has no signature member and never changes, so its canonical form is `bytes` again.
    const read = (): SignatureEnvelope => (signature ??= Object.freeze(envelope(frozen.occurredAt, encodeBase64url(key.pair.sign(canonicalizeOrThrow(frozen))))))
    const stored = Object.defineProperty({ ...frozen }, 'signature', { get: read, enumerable: true }) as Event
    Object.defineProperty(live, 'signature', { get: () => ({ ...read() }), enumerable: true, configurable: true })
    return { stored: Object.freeze(stored), live }
  }
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
