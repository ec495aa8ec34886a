/**
 * The last two steps of a Command's walk (ARCHITECTURE): turn a handler's Event drafts into Event
 * envelopes with the next contiguous Group sequences and aggregate revisions (§15.2), then advance
 * the state with the reducers, the same ones replay runs, so state = fold(log).
 *
 * {@link materialize} does not touch the state, so a rejected or failing transaction leaves
 * nothing behind; {@link applyEvents} is only called with a complete, signed transaction.
 * @module
 */
import { canonicalizeOrThrow, encodeBase64url, isAbsoluteUri, isProtocolTimestamp, MAX_JCS_DEPTH, type SignatureEnvelope, type SigningKey } from '@weft/codec'
import { EVENT_CATALOG, type Event, type EventKind } from '@weft/spec'
import { eventPayloads } from '@weft/validators/payloads'
import type { CommandRule } from './gen/rules.js'
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

/** What a transaction needs to know of an Event kind, looked up once per draft. */
interface KindInfo {
  readonly scope: string
  readonly aggregate: string
  /** Whether the kind opens a Group (§7.1), so its Group need not exist yet. */
  readonly genesis: boolean
}

const catalog = new Map<string, KindInfo>(EVENT_CATALOG.map((e) => [e.kind, { scope: e.scope, aggregate: e.aggregate, genesis: GROUP_GENESIS.has(e.kind) }]))

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

function runningOf(running: readonly Running[], groupId: string, key: string | undefined): number | undefined {
  for (let i = running.length - 1; i >= 0; i--) {
    const r = running[i]!
    if (r.key === key && r.groupId === groupId) return r.value
  }
  return undefined
}

/**
 * Builds the signed envelopes of one transaction without mutating `state`. Sequences continue each
 * Group's head; revisions continue each aggregate's current revision, draft by draft.
 * @throws Error when a draft names a Group that does not exist and is not created earlier in the
 * same transaction (a handler bug: the pipeline reports it as `INTERNAL_ERROR`).
 */
export function materialize<E = Event>(state: AuthorityState, cause: TransactionCause, drafts: readonly AnyEventDraft[], options: MaterializeOptions<E>): E[] {
  // The Group Events of this transaction so far, heads and revisions alike (kept only for the
  // drafts that follow, so a one-Event transaction keeps none).
  const running: Running[] = []
  const events: E[] = []
  const last = drafts.length - 1
  for (let i = 0; i <= last; i++) {
    const d = drafts[i]!
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
    const head = runningOf(running, groupId, undefined) ?? group?.head ?? 0
    if (group === undefined && !(info.genesis && head === 0)) throw new Error(`materialize: no Group ${groupId} for ${d.kind}`)
    const key = aggregateKey(info.aggregate as never, aggregateIdFrom(info.aggregate, groupId, d.workItemId, d.payload as Record<string, unknown>))
    const revision = (runningOf(running, groupId, key) ?? group?.revisions.get(key) ?? 0) + 1
    if (i < last) running.push({ groupId, key: undefined, value: head + 1 }, { groupId, key, value: revision })
    event['groupId'] = groupId
    event['sequence'] = head + 1
    event['aggregateRevision'] = revision
    events.push(options.sign(event as UnsignedEvent))
  }
  return events
}

/** Checks a handler's drafts before they become Events; see {@link createDraftCheck}. */
export type DraftCheck = (drafts: readonly AnyEventDraft[], rule: CommandRule, now: string) => void

/**
 * The check the pipeline runs on a handler's drafts before it materializes them. A failure is a
 * handler bug (the pipeline answers `INTERNAL_ERROR` and appends nothing): a kind the catalog does
 * not let the Command emit, a payload off its kind's schema, or an envelope member off the Event
 * schema (§15.2). Of the envelope, only what a draft supplies is checked per draft (`actor`,
 * `groupId`, `conversationId`, `workItemId`) and the `occurredAt` of the transaction; the rest is
 * valid by construction: the Event ID comes from the ID source, cause, correlation and default
 * actor from a Command that passed its schema, sequence and revision are counted, `commandHash`
 * is a signing hash, and `acceptedBy` (the Authority's Principal) is checked here once.
 */
export function createDraftCheck(authority: ActorRef): DraftCheck {
  const authorityValid = isActor(authority)
  let checkedNow = ''
  return (drafts, rule, now) => {
    for (const d of drafts) {
      if (!rule.emits.includes(d.kind)) throw new Error(`${rule.kind} may not emit ${d.kind} (COMMAND_CATALOG emits)`)
      const validator = eventPayloads[d.kind]
      if (!validator.check(d.payload)) throw new Error(`${d.kind} payload fails its schema: ${JSON.stringify(validator.errors(d.payload, { maxErrors: 3 }))}`)
      const envelopeValid =
        authorityValid &&
        (d.actor === undefined || isActor(d.actor)) &&
        (d.groupId === undefined || isId(d.groupId)) &&
        (d.conversationId === undefined || isId(d.conversationId)) &&
        (d.workItemId === undefined || isId(d.workItemId)) &&
        (now === checkedNow || isProtocolTimestamp(now))
      if (!envelopeValid) throw new Error(`${d.kind}: the Event envelope fails its schema`)
      checkedNow = now
    }
  }
}

/** The `id` definition of `common.schema.json`: an absolute URI of at most 512 code points. */
function isId(value: unknown): boolean {
  return typeof value === 'string' && (value.length <= 512 || [...value].length <= 512) && isAbsoluteUri(value)
}

/** The `actor` definition of `common.schema.json`: exactly a Principal type and an {@link isId} ID. */
function isActor(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const actor = value as Record<string, unknown>
  for (const name in actor) if (name !== 'type' && name !== 'id') return false
  return (actor['type'] === 'agent' || actor['type'] === 'human' || actor['type'] === 'service') && isId(actor['id'])
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
  const { check } = options
  const envelope = (occurredAt: string, value: string): SignatureEnvelope => Object.freeze({ algorithm: 'Ed25519', keyId: key.keyId, createdAt: occurredAt, value })
  const signatureOf = (top: Record<string, unknown>, plain: boolean): SignatureEnvelope =>
    envelope(top['occurredAt'] as string, encodeBase64url(key.pair.sign(signingBytes(top, plain))))
  const refuse = (top: Record<string, unknown>): never => {
    throw new Error(`${top['kind'] as string}: the Event envelope fails its schema`)
  }
  if (options.deferSignatures === true) {
    return (event, commandHash) => {
      const { top, plain } = copyEnvelope(event)
      const lazy: LazyEvent = { sign: signatureOf, hash: commandHash, plain }
      // The accessors are in place before the check, which reads placeholders through them, so the
      // Event keeps one shape from birth (no member changes from data to accessor).
      Object.defineProperty(top, LAZY, { value: lazy })
      if (commandHash !== undefined) Object.defineProperty(top, 'commandHash', LAZY_HASH)
      Object.defineProperty(top, 'signature', LAZY_SIGNATURE)
      if (check !== undefined) {
        lazy.placeholder = envelope(top['occurredAt'] as string, PLACEHOLDER_SIGNATURE)
        const ok = check(top as unknown as Event)
        lazy.placeholder = undefined
        if (!ok) refuse(top)
      }
      return Object.freeze(top) as unknown as Event
    }
  }
  return (event, commandHash) => {
    const { top, plain } = copyEnvelope(event)
    if (check !== undefined) {
      // The placeholders hold the members' places; the real values overwrite them below.
      if (commandHash !== undefined) top['commandHash'] = PLACEHOLDER_HASH
      top['signature'] = envelope(top['occurredAt'] as string, PLACEHOLDER_SIGNATURE)
      if (!check(top as unknown as Event)) refuse(top)
    }
    if (commandHash !== undefined) top['commandHash'] = commandHash()
    top['signature'] = signatureOf(top, plain)
    return Object.freeze(top) as unknown as Event
  }
}

const utf8 = new TextEncoder()

/**
 * The §6.4 signing input of a sealed envelope: every member but `signature`, `commandHash` in its
 * RFC 8785 place. `plain` says the copy holds no member name JavaScript orders as an array index;
 * then the members (sorted by the copy, their values checked against the JCS data model) are
 * already in canonical order and `JSON.stringify` writes exactly the RFC 8785 text (same escapes,
 * same number form), which spares a second walk. Otherwise the codec canonicalizes.
 */
function signingBytes(top: Record<string, unknown>, plain: boolean): Uint8Array {
  const unsigned: Record<string, unknown> = {}
  const hash = top['commandHash']
  let pending = hash !== undefined
  for (const name of Object.keys(top)) {
    if (name === 'signature' || name === 'commandHash') continue
    if (pending && name > 'commandHash') {
      unsigned['commandHash'] = hash
      pending = false
    }
    if (name === '__proto__') Object.defineProperty(unsigned, name, { value: top[name], enumerable: true, writable: true, configurable: true })
    else unsigned[name] = top[name]
  }
  if (pending) unsigned['commandHash'] = hash
  return plain ? utf8.encode(JSON.stringify(unsigned)) : canonicalizeOrThrow(unsigned)
}

/**
 * Where a lazily signed Event keeps what its accessors compute once: a non-enumerable symbol
 * member, so readers (JSON, spreads, `Object.keys`, equality) see only the envelope.
 */
const LAZY = Symbol('weft.lazyEvent')

interface LazyEvent {
  readonly sign: (top: Record<string, unknown>, plain: boolean) => SignatureEnvelope
  readonly hash: (() => string) | undefined
  /** See {@link signingBytes}. */
  readonly plain: boolean
  /** Set only while the envelope check runs: what the accessors answer then, computing nothing. */
  placeholder?: SignatureEnvelope | undefined
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
    if (lazy.placeholder !== undefined) return PLACEHOLDER_HASH
    return (lazy.hashValue ??= lazy.hash!())
  },
}

const LAZY_SIGNATURE: PropertyDescriptor = {
  enumerable: true,
  get(this: LazilySigned): SignatureEnvelope {
    const lazy = this[LAZY]
    if (lazy.placeholder !== undefined) return lazy.placeholder
    // §6.4: the signing input is the envelope without `signature` (with `commandHash` resolved).
    return (lazy.signature ??= lazy.sign(this, lazy.plain))
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

/** Set by {@link copyFrozen} when it copies a member name that may order as an array index. */
let sawIndexName = false

/** An envelope's {@link copyChecked} copy, outermost object unfrozen, and whether it is {@link signingBytes} `plain`. */
function copyEnvelope(event: UnsignedEvent): { readonly top: Record<string, unknown>; readonly plain: boolean } {
  sawIndexName = false
  const top = copyChecked(event, false) as Record<string, unknown>
  return { top, plain: !sawIndexName }
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

/** A string without unpaired surrogates (native `String.prototype.isWellFormed`, in every Node this package supports). */
function wellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed()
}

/**
 * `keys` sorted in place by UTF-16 code units, as RFC 8785 orders members. Protocol objects have a
 * handful of members, often already in order, where an insertion sort with `>` beats the generic
 * `Array.prototype.sort` several times over; long member lists take the library sort.
 */
function sortKeys(keys: string[]): string[] {
  const n = keys.length
  if (n > 24) return keys.sort()
  for (let i = 1; i < n; i++) {
    const key = keys[i]!
    let j = i - 1
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!
      j--
    }
    keys[j + 1] = key
  }
  return keys
}

/** The walk of {@link copyChecked}; throws {@link OUTSIDE_JCS}. */
function copyFrozen(value: unknown, depth: number, freeze: boolean): unknown {
  switch (typeof value) {
    case 'string':
      if (!wellFormed(value)) throw OUTSIDE_JCS
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
        const n = value.length
        const out = new Array<unknown>(n)
        for (let i = 0; i < n; i++) out[i] = copyFrozen(value[i], depth + 1, true)
        return freeze ? Object.freeze(out) : out
      }
      const proto = Object.getPrototypeOf(value) as object | null
      if (proto !== Object.prototype && !(proto === null || Object.getPrototypeOf(proto) === null)) throw OUTSIDE_JCS
      const record = value as Record<string, unknown>
      const keys = sortKeys(Object.keys(record))
      const out: Record<string, unknown> = {}
      for (const name of keys) {
        if (!wellFormed(name)) throw OUTSIDE_JCS
        // Array-index names ("0", "17") iterate first in JavaScript whatever the order of insertion.
        const first = name.charCodeAt(0)
        if (first >= 0x30 && first <= 0x39) sawIndexName = true
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
    const aggregate = catalog.get(event.kind)?.aggregate
    group.head = event.sequence as number
    group.revisions.set(aggregateKey(aggregate as never, aggregateIdFrom(aggregate, event.groupId, event.workItemId, event.payload as Record<string, unknown>)), event.aggregateRevision as number)
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
