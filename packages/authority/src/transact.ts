/**
 * The last two steps of a Command's walk (ARCHITECTURE): turn a handler's Event drafts into Event
 * envelopes with the next contiguous Group sequences and aggregate revisions (§15.2), then advance
 * the state with the reducers, the same ones replay runs, so state = fold(log).
 *
 * {@link materialize} does not touch the state, so a rejected or failing transaction leaves
 * nothing behind; {@link applyEvents} is only called with a complete, signed transaction.
 * @module
 */
import { canonicalizeOrThrow, encodeBase64url, loneSurrogateIndex, MAX_JCS_DEPTH, type SignatureEnvelope, type SigningKey } from '@weft/codec'
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
  // The running heads and revisions of this transaction, made at its first Group Event.
  let heads: Map<string, number> | undefined
  let revisions: Map<string, number> | undefined
  const events: E[] = []
  for (const d of drafts) {
    const info = catalog.get(d.kind)
    if (info === undefined) throw new Error(`materialize: unknown Event kind ${d.kind}`)
    const event: Record<string, unknown> = {
      protocolVersion: '0.1',
      eventId: options.newId(),
      kind: d.kind,
      actor: d.actor ?? cause.actor,
      cause: { type: cause.type, id: cause.id },
      correlationId: cause.correlationId,
      occurredAt: options.now,
      payload: d.payload,
      acceptedBy: options.authority,
    }
    if (d.conversationId !== undefined) event['conversationId'] = d.conversationId
    if (d.workItemId !== undefined) event['workItemId'] = d.workItemId
    if (cause.commandHash !== undefined) event['commandHash'] = cause.commandHash
    if (info.scope === 'organization') {
      events.push(options.sign(event as UnsignedEvent))
      continue
    }
    const groupId = d.groupId ?? cause.groupId
    if (groupId === undefined) throw new Error(`materialize: ${d.kind} needs a Group`)
    const group = state.groups.get(groupId)
    const head = heads?.get(groupId) ?? group?.head ?? 0
    if (group === undefined && !(GROUP_GENESIS.has(d.kind) && head === 0)) throw new Error(`materialize: no Group ${groupId} for ${d.kind}`)
    const key = aggregateKey(info.aggregate as never, aggregateIdFrom(info.aggregate, groupId, d.workItemId, d.payload as Record<string, unknown>))
    const revision = (revisions?.get(`${groupId} ${key}`) ?? group?.revisions.get(key) ?? 0) + 1
    ;(heads ??= new Map()).set(groupId, head + 1)
    ;(revisions ??= new Map()).set(`${groupId} ${key}`, revision)
    event['groupId'] = groupId
    event['sequence'] = head + 1
    event['aggregateRevision'] = revision
    events.push(options.sign(event as UnsignedEvent))
  }
  return events
}

/** How a {@link createEventSealer} signs. */
export interface SealerOptions {
  /**
   * Sign each Event the first time its `signature` is read (serializing, copying or reading the
   * member) instead of at acceptance. Either way every Event a reader can reach carries the same
   * signature over the same bytes; deferral moves the RFC 8785 form and the Ed25519 operation off
   * the commit path.
   */
  readonly deferSignatures?: boolean
  /** Checks the envelope (with a placeholder signature value) before it is signed; `false` is a pipeline or handler bug. */
  readonly check?: (event: Event) => boolean
}

/** The length of an Ed25519 signature (64 bytes) in unpadded base64url. */
const PLACEHOLDER_SIGNATURE = 'A'.repeat(86)
/** A well-formed stand-in for a signing hash not computed yet, for the envelope check. */
const PLACEHOLDER_HASH = `sha256:${'0'.repeat(64)}`

/**
 * Seals one envelope. `commandHash`, when given, supplies the envelope's `commandHash` member
 * (which `event` must then lack, and which follows the sorted members): computed when the
 * signature is, so at once unless signatures are deferred.
 */
export type EventSealer = (event: UnsignedEvent, commandHash?: () => string) => Event

/**
 * The `sign` of {@link materialize} the pipeline uses. Each envelope is copied once into a
 * deep-frozen Event (§4.6: an accepted Event is immutable) that shares no object with the
 * handler's draft, with members in RFC 8785 order (then `commandHash` when supplied lazily, and
 * `signature`); the log, every reader and the reducers get that
 * one object. It is signed with the Authority's key under the `event` profile (§6.4: the signing
 * input is the canonical envelope without `signature`, signed time `occurredAt`), at once or, with
 * `deferSignatures`, when the signature (or a lazily supplied `commandHash`) is first read. An
 * envelope outside the JCS data model throws in both modes, so such an Event is never accepted.
 */
export function createEventSealer(key: SigningKey, options: SealerOptions = {}): EventSealer {
  const envelope = (occurredAt: string, value: string): SignatureEnvelope => Object.freeze({ algorithm: 'Ed25519', keyId: key.keyId, createdAt: occurredAt, value })
  const signatureOf = (unsigned: object): SignatureEnvelope => envelope((unsigned as UnsignedEvent).occurredAt, encodeBase64url(key.pair.sign(canonicalizeOrThrow(unsigned))))
  const check = (unsigned: UnsignedEvent, commandHash: (() => string) | undefined): void => {
    if (options.check === undefined) return
    const placeholders = { ...(commandHash === undefined ? {} : { commandHash: PLACEHOLDER_HASH }), signature: envelope(unsigned.occurredAt, PLACEHOLDER_SIGNATURE) }
    if (!options.check({ ...unsigned, ...placeholders } as Event)) throw new Error(`${unsigned.kind}: the Event envelope fails its schema`)
  }
  if (options.deferSignatures === true) {
    return (event, commandHash) => {
      const top = copyChecked(event, false) as Record<string, unknown>
      if (options.check !== undefined) {
        // The placeholders hold the members' places; the accessors below take them over.
        if (commandHash !== undefined) top['commandHash'] = PLACEHOLDER_HASH
        top['signature'] = envelope(top['occurredAt'] as string, PLACEHOLDER_SIGNATURE)
        if (!options.check(top as Event)) throw new Error(`${top['kind'] as string}: the Event envelope fails its schema`)
      }
      const lazy: LazyEvent = { sign: signatureOf, hash: commandHash }
      Object.defineProperty(top, LAZY, { value: lazy })
      if (commandHash !== undefined) Object.defineProperty(top, 'commandHash', LAZY_HASH)
      return Object.freeze(Object.defineProperty(top, 'signature', LAZY_SIGNATURE)) as Event
    }
  }
  return (event, commandHash) => {
    let unsigned = frozenJson(event) as UnsignedEvent
    check(unsigned, commandHash)
    if (commandHash !== undefined) unsigned = Object.freeze({ ...unsigned, commandHash: commandHash() })
    return Object.freeze({ ...unsigned, signature: signatureOf(unsigned) }) as Event
  }
}

/**
 * Where a lazily signed Event keeps what its accessors compute once: a non-enumerable symbol
 * member, so readers (JSON, spreads, `Object.keys`, equality) see only the envelope.
 */
const LAZY = Symbol('weft.lazyEvent')

interface LazyEvent {
  readonly sign: (unsigned: object) => SignatureEnvelope
  readonly hash: (() => string) | undefined
  hashValue?: string
  signature?: SignatureEnvelope
}

type LazilySigned = Record<string, unknown> & { readonly [LAZY]: LazyEvent }

// One pair of accessor functions shared by every lazily signed Event (rather than closures per
// Event) keeps the Events on shared hidden classes: creating one costs a fraction as much.
const LAZY_HASH: PropertyDescriptor = {
  enumerable: true,
  get(this: LazilySigned): string {
    const lazy = this[LAZY]
    return (lazy.hashValue ??= lazy.hash!())
  },
}

const LAZY_SIGNATURE: PropertyDescriptor = {
  enumerable: true,
  get(this: LazilySigned): SignatureEnvelope {
    const lazy = this[LAZY]
    if (lazy.signature !== undefined) return lazy.signature
    // §6.4: the signing input is the envelope without `signature` (with `commandHash` resolved).
    const unsigned: Record<string, unknown> = {}
    for (const name of Object.keys(this)) if (name !== 'signature') unsigned[name] = this[name]
    return (lazy.signature = lazy.sign(unsigned))
  },
}

/** Thrown inside {@link copyFrozen} to abandon the copy; never escapes this module. */
const OUTSIDE_JCS = Symbol('outside-jcs')

/**
 * A deep-frozen copy of a JSON value, members sorted as RFC 8785 sorts them. A value outside the
 * JCS data model (a non-finite number, an unpaired surrogate, `undefined`, a non-plain object, a
 * cycle) gets the codec's own `PROTOCOL_VIOLATION` with the reason and path.
 */
export function frozenJson(value: unknown): unknown {
  return copyChecked(value, true)
}

/** {@link frozenJson}, leaving the outermost object or array unfrozen unless `freeze`. */
function copyChecked(value: unknown, freeze: boolean): unknown {
  try {
    return copyFrozen(value, 0, freeze)
  } catch (thrown) {
    if (thrown !== OUTSIDE_JCS) throw thrown
    canonicalizeOrThrow(value)
    throw new Error('frozenJson: a value the copy refused has a canonical form')
  }
}

/** The walk of {@link copyChecked}; throws {@link OUTSIDE_JCS}. */
function copyFrozen(value: unknown, depth: number, freeze: boolean): unknown {
  switch (typeof value) {
    case 'string':
      if (loneSurrogateIndex(value) >= 0) throw OUTSIDE_JCS
      return value
    case 'number':
      if (!Number.isFinite(value)) throw OUTSIDE_JCS
      // RFC 8785 writes -0 as 0, so the copy reads back as the signed bytes say.
      return value === 0 ? 0 : value
    case 'boolean':
      return value
    case 'object': {
      if (value === null) return null
      if (depth >= MAX_JCS_DEPTH) throw OUTSIDE_JCS
      if (Array.isArray(value)) {
        const out = new Array<unknown>(value.length)
        for (let i = 0; i < value.length; i++) out[i] = copyFrozen(value[i], depth + 1, true)
        return freeze ? Object.freeze(out) : out
      }
      const proto = Object.getPrototypeOf(value) as object | null
      if (!(proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null)) throw OUTSIDE_JCS
      const record = value as Record<string, unknown>
      const keys = Object.keys(record).sort()
      const out: Record<string, unknown> = {}
      for (const name of keys) {
        if (loneSurrogateIndex(name) >= 0) throw OUTSIDE_JCS
        const member = copyFrozen(record[name], depth + 1, true)
        // An own "__proto__" member is data, as JSON.parse makes it, not the prototype setter.
        if (name === '__proto__') Object.defineProperty(out, name, { value: member, enumerable: true, writable: true, configurable: true })
        else out[name] = member
      }
      return freeze ? Object.freeze(out) : out
    }
    default:
      throw OUTSIDE_JCS
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
  return aggregateIdFrom(catalog.get(event.kind)?.aggregate, event.groupId, event.workItemId, event.payload as Record<string, unknown>)
}

/** {@link aggregateIdOf} from the envelope members it reads. */
function aggregateIdFrom(aggregate: string | undefined, groupId: string | undefined, workItemId: string | undefined, p: Record<string, unknown>): string {
  switch (aggregate) {
    case 'workItem':
      return (workItemId ?? p['workItemId'] ?? (p['workItem'] as { workItemId?: string } | undefined)?.workItemId ?? p['proposalId']) as string
    case 'mission':
    case 'group':
    case 'policy':
      return groupId as string
    case 'membership':
      return ((p['membership'] as { membershipId?: string } | undefined)?.membershipId ?? p['membershipId'] ?? (p['grant'] as { grantId?: string } | undefined)?.grantId) as string
    case 'message':
      return p['messageId'] as string
    case 'artifact':
      return (p['artifact'] as { artifactId: string }).artifactId
    case 'approval':
      return p['approvalId'] as string
    default:
      return groupId as string
  }
}
