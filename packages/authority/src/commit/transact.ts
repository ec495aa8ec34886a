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
import { EVENT_CATALOG, type AggregateType, type Event } from '@weft/spec'
import { eventPayloads } from '@weft/validators/payloads'
import type { AnyEventDraft } from './handler.js'
import { applyEvent, type AnyEvent, type EventReducers } from '../gen/reducers.js'
import { aggregateKey, type ActorRef, type AuthorityState } from '../model.js'
import { isoTimeOfDay } from '../instants.js'
import type { CommandRule } from '../ingress/checks.js'

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
 * Why constructors instead of object literals for Events, and a copy of each draft's payload: an
 * Authority keeps every Event, and V8 allocates the objects of a literal site whose objects mostly
 * survive straight into its old generation ("allocation-site pretenuring"). The handlers' payload
 * literals and the envelope literals went there, pointing at the young parts of the Command they
 * were made from. Built this way, Events and their top-level payloads start young like the Command
 * (checked with V8's `%InYoungGeneration`), and the trusted path measured 11–22% faster in the
 * benchmark's own worker passes (`bench/authority-passes.mjs`, old and new builds alternating, 40
 * rounds each, four runs). Running Node with `--no-allocation-site-pretenuring` has a like effect.
 */
function plainConstructor<A extends Member[]>(init: (this: Record<string, Member>, ...args: A) => void): new (...args: A) => Record<string, unknown> {
  ;(init as unknown as { prototype: object }).prototype = Object.prototype
  return init as unknown as new (...args: A) => Record<string, unknown>
}

const EnvelopeStart = plainConstructor(initEnvelopeStart)
const GroupEvent = plainConstructor(initGroupEvent)
const CauseRef = plainConstructor(initCauseRef)

/**
 * Builds the signed envelopes of one transaction without mutating `state`. Sequences continue each
 * Group's head; revisions continue each aggregate's current revision, draft by draft. Each Event's
 * `payload` is a shallow copy of its draft's, sharing what the draft's holds.
 * @throws Error when a draft names a Group that does not exist and is not created earlier in the
 * same transaction (a handler bug: the pipeline reports it as `INTERNAL_ERROR`).
 */
export function materialize<E = Event>(state: AuthorityState, cause: TransactionCause, drafts: readonly AnyEventDraft[], options: MaterializeOptions<E>): E[] {
  return materializeKeyed(state, cause, drafts, options, undefined)
}

/**
 * {@link materialize}, also writing each Event's aggregate key (`aggregateKey`; `undefined` for an
 * Organization Event) to `keys` at the Event's index, for {@link applyEventsKeyed}: the pipeline
 * derives each key once. Entries past the transaction's last Event are left as they were, so one
 * array serves every transaction without being emptied (which would drop its backing store).
 */
export function materializeKeyed<E>(state: AuthorityState, cause: TransactionCause, drafts: readonly AnyEventDraft[], options: MaterializeOptions<E>, keys: (string | undefined)[] | undefined): E[] {
  // The Group Events of this transaction so far, heads and revisions alike (kept only for the
  // drafts that follow, so a one-Event transaction makes no list).
  let running: Running[] | undefined
  const last = drafts.length - 1
  // A transaction of one Event (nearly all) gets an array of exactly one slot: the log keeps it
  // frozen in the receipt, where a pushed array would hold its grown, mostly empty backing store.
  // Copies of templates and a constructor rather than literals: see {@link plainConstructor}.
  const events = (last === 0 ? ONE_SLOT.slice() : NO_SLOT.slice()) as E[]
  const causeRef = new CauseRef(cause.type, cause.id)
  for (let i = 0; i <= last; i++) {
    const d = drafts[i]!
    const info = catalog.get(d.kind)
    if (info === undefined) throw new Error(`materialize: unknown Event kind ${d.kind}`)
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
      key = aggregateKey(info.aggregate as AggregateType, aggregateIdFrom(info.aggregate, groupId, d.workItemId, d.payload as Record<string, unknown>))
      sequence = head + 1
      revision = (runningOf(running, groupId, key) ?? group?.revisions.get(key) ?? 0) + 1
      if (i < last) (running ??= []).push({ groupId, key: undefined, value: sequence }, { groupId, key, value: revision })
    }
    const actor = d.actor ?? cause.actor
    const eventId = options.newId()
    // Members in RFC 8785 order, so a sealer finds the envelope's own members sorted (see
    // `signingBytes`). A Group Event of a Command is built by one constructor, in one allocation;
    // the rest is built member by member. The payload is a shallow copy of the draft's (see
    // {@link plainConstructor}); what it holds is shared, and frozen by the seal.
    const { conversationId, workItemId } = d
    const payload = { ...d.payload }
    let event: Record<string, unknown>
    if (groupId === undefined || cause.commandHash !== undefined) {
      event = new EnvelopeStart(options.authority, actor)
      if (groupId !== undefined) event['aggregateRevision'] = revision
      // One cause object per transaction: every Event of it has the same cause (§15.2), and the sealer freezes it.
      event['cause'] = causeRef
      if (cause.commandHash !== undefined) event['commandHash'] = cause.commandHash
      if (conversationId !== undefined) event['conversationId'] = conversationId
      event['correlationId'] = cause.correlationId
      event['eventId'] = eventId
      if (groupId !== undefined) event['groupId'] = groupId
      event['kind'] = d.kind
      event['occurredAt'] = options.now
      event['payload'] = payload
      event['protocolVersion'] = '0.1'
      if (groupId !== undefined) event['sequence'] = sequence
      if (workItemId !== undefined) event['workItemId'] = workItemId
    } else {
      event = new GroupEvent(options.authority, actor, revision, causeRef, conversationId, cause.correlationId, eventId, groupId, d.kind, options.now, payload, sequence, workItemId)
    }
    const sealed = options.sign(event as UnsignedEvent)
    if (last === 0) events[0] = sealed
    else events.push(sealed)
    if (keys !== undefined) keys[i] = key
  }
  return events
}

/**
 * Checks a handler's drafts before they become Events; see {@link createDraftCheck}. `payloads`
 * says whether each payload is also checked against its Event kind's schema.
 */
export type DraftCheck = (drafts: readonly AnyEventDraft[], rule: CommandRule, now: string, payloads: boolean) => void

/**
 * The check the pipeline runs on a handler's drafts before it materializes them. A failure is a
 * handler bug (the pipeline answers `INTERNAL_ERROR` and appends nothing): a kind the catalog does
 * not let the Command emit, a payload off its kind's schema (when `payloads`), or an envelope
 * member off the Event schema (§15.2). Of the envelope, only what a draft supplies is checked per
 * draft (`actor`, `groupId`, `conversationId`, `workItemId`) and the `occurredAt` of the
 * transaction; the rest is valid by construction: the Event ID comes from the ID source, cause,
 * correlation and default actor from a Command that passed its schema, sequence and revision are
 * counted, `commandHash` is a signing hash, and `acceptedBy` (the Authority's Principal) is checked
 * here once.
 */
export function createDraftCheck(authority: ActorRef): DraftCheck {
  const authorityValid = isActor(authority)
  // The last value each member was found valid with: consecutive Commands mostly name the same
  // WorkItem, Conversation and Group, and drafts the same actor objects, so most checks are a compare.
  let validActor: unknown = authority
  let validGroupId = ''
  let validConversationId = ''
  let validWorkItemId = ''
  return (drafts, rule, now, payloads) => {
    // §2: one `occurredAt` for the whole transaction, checked once.
    if (drafts.length > 0 && !isTimestamp(now)) throw new Error(`${drafts[0]!.kind}: the Event envelope fails its schema`)
    for (const d of drafts) {
      if (!rule.emits.includes(d.kind)) throw new Error(`${rule.kind} may not emit ${d.kind} (COMMAND_CATALOG emits)`)
      if (payloads) {
        const validator = eventPayloads[d.kind]
        if (!validator.check(d.payload)) throw new Error(`${d.kind} payload fails its schema: ${JSON.stringify(validator.errors(d.payload, { maxErrors: 3 }))}`)
      }
      const { actor, groupId, conversationId, workItemId } = d
      const envelopeValid =
        authorityValid &&
        (actor === undefined || actor === validActor || isActor(actor)) &&
        (groupId === undefined || groupId === validGroupId || isId(groupId)) &&
        (conversationId === undefined || conversationId === validConversationId || isId(conversationId)) &&
        (workItemId === undefined || workItemId === validWorkItemId || isId(workItemId))
      if (!envelopeValid) throw new Error(`${d.kind}: the Event envelope fails its schema`)
      // Frozen actors only: a value that cannot change stays valid.
      if (actor !== undefined && Object.isFrozen(actor)) validActor = actor
      if (groupId !== undefined) validGroupId = groupId
      if (conversationId !== undefined) validConversationId = conversationId
      if (workItemId !== undefined) validWorkItemId = workItemId
    }
  }
}

/** The `YYYY-MM-DDT` of the last timestamp {@link isTimestamp} found valid in the `toISOString` form. */
let validDay = '\u0000'

/**
 * The `timestamp` definition of `common.schema.json` (§2). A text in the `toISOString` form on the
 * day of the last one found valid only needs a valid time of day; the Authority clock's readings
 * nearly all are.
 */
function isTimestamp(text: string): boolean {
  if (text.startsWith(validDay) && isoTimeOfDay(text) >= 0) return true
  if (!isProtocolTimestamp(text)) return false
  if (isoTimeOfDay(text) >= 0) validDay = text.slice(0, 11)
  return true
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
 * (which `event` must then lack, and which follows the other members). A sealer that signs at once
 * reads it at once; a deferring one reads the hash, when first needed, from the transaction given
 * to {@link EventSealer.commit}, and `commandHash` only says that the member is there.
 */
export interface EventSealer {
  (event: UnsignedEvent, commandHash?: CommandHashSource): Event
  /**
   * Binds the Events of one committed transaction, sealed by this sealer, to what their deferred
   * members are computed from (a no-op unless signatures are deferred). A deferred Event's
   * `signature` and `commandHash` can be read once its transaction is committed; the pipeline
   * commits before the store or any reader sees the Events.
   */
  commit(transaction: SealedTransaction): void
}

/** Where a sealer reads a Command's signing hash: an object whose `commandHash` may compute on first read (the trusted path's `Decoded`). */
export interface CommandHashSource {
  readonly commandHash: string
}

/**
 * One committed transaction as a deferring sealer keeps it until a reader needs it: its Events, and
 * where those sealed with a `commandHash` read it (the pipeline's stored receipt, which holds both).
 */
export interface SealedTransaction {
  readonly events: readonly Event[]
  readonly commandHash?: string
}

/**
 * The sealer the pipeline uses as the `sign` of {@link materialize}. Each envelope becomes the Event
 * in place, with no copy: every member is deep-frozen where it stands (§4.6: an accepted Event is
 * immutable), so the objects it shares with the handler's draft (and, through it, with the Command
 * or with earlier Events) are frozen with it; the log, every reader and the reducers get that one
 * object. Members keep their order (then `commandHash` when supplied lazily, and `signature`). It is
 * signed with the Authority's key under the `event` profile (§6.4: the signing input is the
 * canonical envelope without `signature`, signed time `occurredAt`), at once or, with
 * `deferSignatures`, when the signature (or a lazily supplied `commandHash`) is first read. An
 * envelope outside the JCS data model throws in both modes, so such an Event is never accepted;
 * `-0` is stored as `0`, as the signed text has it.
 */
export function createEventSealer(key: SigningKey, options: SealerOptions = {}): EventSealer {
  const { check } = options
  const envelope = (occurredAt: string, value: string): SignatureEnvelope => Object.freeze({ algorithm: 'Ed25519', keyId: key.keyId, createdAt: occurredAt, value })
  const signatureOf = (top: Record<string, unknown>, form: SigningForm): SignatureEnvelope =>
    envelope(top['occurredAt'] as string, encodeBase64url(key.pair.sign(signingBytes(top, form))))
  const refuse = (top: Record<string, unknown>): never => {
    throw new Error(`${top['kind'] as string}: the Event envelope fails its schema`)
  }
  if (options.deferSignatures === true) {
    const batch: LazyBatch = { sign: (top) => signatureOf(top, signingFormOf(top)), pending: [] }
    let registered: unknown
    const sealer = (event: UnsignedEvent, commandHash?: CommandHashSource): Event => {
      const top = ownEnvelope(event)
      // The seal checks and freezes; the signing form is found again when the Event is signed, so
      // nothing per Event is kept on the commit path.
      sealMembers(top)
      // After the seal, which may replace a member with a frozen copy. Nearly always the same
      // object, the pipeline's Principal: registered once.
      if (top['acceptedBy'] !== registered) {
        registerBatch(top['acceptedBy'], batch)
        registered = top['acceptedBy']
      }
      // The accessors are in place before the check, which reads placeholders through them, so the
      // Event keeps one shape from birth (no member changes from data to accessor).
      if (commandHash !== undefined) Object.defineProperty(top, 'commandHash', LAZY_HASH)
      Object.defineProperty(top, 'signature', LAZY_SIGNATURE)
      if (check !== undefined) {
        checking = { event: top, placeholder: envelope(top['occurredAt'] as string, PLACEHOLDER_SIGNATURE) }
        try {
          if (!check(top as unknown as Event)) refuse(top)
        } finally {
          checking = undefined
        }
      }
      return Object.freeze(top) as unknown as Event
    }
    // One entry per transaction, an object the log keeps anyway (the receipt), where the sealer
    // kept three per Event before (the Event, its hash source, its signing form).
    return Object.assign(sealer, { commit: (transaction: SealedTransaction) => void batch.pending.push(transaction) })
  }
  const sealer = (event: UnsignedEvent, commandHash?: CommandHashSource): Event => {
    const top = ownEnvelope(event)
    const form = sealMembers(top)
    if (check !== undefined) {
      // The placeholders hold the members' places; the real values overwrite them below.
      if (commandHash !== undefined) top['commandHash'] = PLACEHOLDER_HASH
      top['signature'] = envelope(top['occurredAt'] as string, PLACEHOLDER_SIGNATURE)
      if (!check(top as unknown as Event)) refuse(top)
    }
    if (commandHash !== undefined) top['commandHash'] = commandHash.commandHash
    top['signature'] = signatureOf(top, form)
    return Object.freeze(top) as unknown as Event
  }
  return Object.assign(sealer, { commit: () => {} })
}

/** The envelope object to seal: `event` itself, or a shallow copy when someone froze it already. */
function ownEnvelope(event: UnsignedEvent): Record<string, unknown> {
  return Object.isFrozen(event) ? { ...event } : (event as unknown as Record<string, unknown>)
}

/**
 * How {@link signingBytes} writes a sealed envelope's RFC 8785 text. `sorted`: every object's
 * members are in canonical order and none is named like an array index, so `JSON.stringify` writes
 * exactly the RFC 8785 text (same escapes, same number form, values checked by the seal);
 * `unsorted`: a sorted copy is written the same way; `index`: a member name JavaScript orders as an
 * array index, which only the codec's canonicalization places right.
 */
type SigningForm = 'sorted' | 'unsorted' | 'index'

/** Set by {@link freezeInPlace} when it meets an object whose members are out of RFC 8785 order. */
let sawUnsorted = false
/** Set by {@link freezeInPlace} and {@link copyFrozen} when they meet a member name that may order as an array index. */
let sawIndexName = false

/**
 * Deep-freezes every member of an envelope in place (the envelope itself stays open for the
 * sealer's members) and returns how its signing text can be written.
 * @throws ProtocolError (the codec's) when a member is outside the JCS data model.
 */
function sealMembers(top: Record<string, unknown>): SigningForm {
  sawUnsorted = false
  sawIndexName = false
  let previous = ''
  try {
    // `for in`: the envelope is a plain object (see {@link ownEnvelope}); no member list is allocated.
    for (const name in top) {
      if (!wellFormed(name)) throw OUTSIDE_JCS
      if (name < previous) sawUnsorted = true
      previous = name
      const value = top[name]
      const sealed = freezeInPlace(value, 1)
      if (sealed !== value || isNegativeZero(value)) top[name] = sealed
    }
  } catch (thrown) {
    if (thrown !== OUTSIDE_JCS) throw thrown
    canonicalizeOrThrow(top)
    throw new Error('sealMembers: a value the seal refused has a canonical form')
  }
  return sawIndexName ? 'index' : sawUnsorted ? 'unsorted' : 'sorted'
}

/**
 * `value` deep-frozen in place after the checks of {@link copyFrozen}; returns `value`, or what
 * replaces it: `0` for `-0`, and a frozen copy of an object someone else froze with a `-0` inside.
 * Throws {@link OUTSIDE_JCS}.
 */
function freezeInPlace(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return jcsScalar(value)
  if (depth >= MAX_JCS_DEPTH) throw OUTSIDE_JCS
  if (Array.isArray(value)) {
    const n = value.length
    for (let i = 0; i < n; i++) {
      const member: unknown = value[i]
      const sealed = freezeInPlace(member, depth + 1)
      if (sealed === member && !isNegativeZero(member)) continue
      if (Object.isFrozen(value)) return copyFrozen(value, depth)
      value[i] = sealed
    }
    return Object.freeze(value)
  }
  requirePlain(value)
  const record = value as Record<string, unknown>
  let previous = ''
  // `for in` walks the own members (the prototype is Object.prototype or null, checked above) in
  // the order of Object.keys, without allocating their list.
  for (const name in record) {
    if (!wellFormed(name)) throw OUTSIDE_JCS
    noteMemberName(name, previous)
    previous = name
    const member = record[name]
    const sealed = freezeInPlace(member, depth + 1)
    if (sealed === member && !isNegativeZero(member)) continue
    if (Object.isFrozen(record)) return copyFrozen(record, depth)
    setMember(record, name, sealed)
  }
  return Object.freeze(record)
}

/** A JSON scalar checked against the JCS data model, `-0` as `0` (RFC 8785 writes it so); throws {@link OUTSIDE_JCS} for anything else. */
function jcsScalar(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
      if (!wellFormed(value)) throw OUTSIDE_JCS
      return value
    case 'number':
      if (!Number.isFinite(value)) throw OUTSIDE_JCS
      return value === 0 ? 0 : value
    case 'boolean':
      return value
    default:
      if (value === null) return null
      throw OUTSIDE_JCS
  }
}

/** Throws {@link OUTSIDE_JCS} unless `value` is a plain object (the codec's test: its prototype is Object.prototype, null, or one whose prototype is null). */
function requirePlain(value: object): void {
  const proto = Object.getPrototypeOf(value) as object | null
  if (proto !== Object.prototype && !(proto === null || Object.getPrototypeOf(proto) === null)) throw OUTSIDE_JCS
}

/** `record[name] = value`, an own "__proto__" member as data (as JSON.parse makes it), not the prototype setter. */
function setMember(record: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__') Object.defineProperty(record, name, { value, enumerable: true, writable: true, configurable: true })
  else record[name] = value
}

/** `-0`, which `===` cannot tell from `0`. */
function isNegativeZero(value: unknown): boolean {
  return value === 0 && 1 / value < 0
}

const utf8 = new TextEncoder()

/**
 * The §6.4 signing input of a sealed envelope: every member but `signature`, `commandHash` in its
 * RFC 8785 place, written as `form` says (see {@link SigningForm}).
 */
function signingBytes(top: Record<string, unknown>, form: SigningForm): Uint8Array {
  const unsigned: Record<string, unknown> = {}
  const hash = top['commandHash']
  let pending = hash !== undefined
  for (const name of Object.keys(top)) {
    if (name === 'signature' || name === 'commandHash') continue
    if (pending && name > 'commandHash') {
      unsigned['commandHash'] = hash
      pending = false
    }
    setMember(unsigned, name, top[name])
  }
  if (pending) unsigned['commandHash'] = hash
  if (form === 'sorted') return utf8.encode(JSON.stringify(unsigned))
  if (form === 'unsorted') return utf8.encode(JSON.stringify(sortedCopy(unsigned)))
  return canonicalizeOrThrow(unsigned)
}

/** A copy of a sealed value (checked, no array-index names) with every object's members sorted, for `JSON.stringify`. */
function sortedCopy(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map(sortedCopy)
  const record = value as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const name of sortKeys(Object.keys(record))) {
    setMember(out, name, sortedCopy(record[name]))
  }
  return out
}

/** What a lazily signed Event's accessors compute, once, and what from. */
interface LazyEvent {
  readonly sign: SignFn
  /** The committed transaction the Event belongs to: where its `commandHash` is read. */
  readonly transaction: SealedTransaction
  hashValue?: string
  signature?: SignatureEnvelope
}

/** How a sealer signs a sealed envelope. */
type SignFn = (top: Record<string, unknown>) => SignatureEnvelope

/**
 * The transactions one deferring sealer committed since the accessors last ran. Committing only
 * appends here (no map entry or object per Event on the commit path); the first read of a lazy
 * member of one of the sealer's Events moves the batch into {@link lazyEvents}, so the bookkeeping
 * is paid for by readers, once per Event.
 */
interface LazyBatch {
  readonly sign: SignFn
  readonly pending: SealedTransaction[]
}

/**
 * The batches of the deferring sealers, by the `acceptedBy` object of the Events each sealed: a
 * pipeline's own frozen copy of its Principal, shared by all its Events. A lazy accessor, shared by
 * every sealer's Events, finds its Event's sealer through a member the Event has anyway, and an
 * Authority that is dropped takes its unread Events with it (the key lives as long as one of its
 * Events does, or its Authority). Measured on the trusted path (a CPU-time probe over the
 * benchmark's recorded Commands, `bench/authority-world.mjs`), this was ~10% faster than a
 * module-level set of the batches (held weakly, as before, or strongly until a finalizer dropped
 * them), and ~5% faster than marking each Event with its batch in a private field.
 */
const batchesByAuthority = new WeakMap<object, LazyBatch[]>()

/** Registers `batch` under an `acceptedBy` value its sealer met. */
function registerBatch(authority: unknown, batch: LazyBatch): void {
  if (typeof authority !== 'object' || authority === null) throw new Error('a deferring sealer needs an acceptedBy object')
  const list = batchesByAuthority.get(authority)
  if (list === undefined) batchesByAuthority.set(authority, [batch])
  else if (!list.includes(batch)) list.push(batch)
}

/** The lazily signed Events read at least once since sealing (or committed before such a read), out of readers' sight. */
const lazyEvents = new WeakMap<object, LazyEvent>()

/** The Event the sealer's check is reading, and what its signature reads as meanwhile (see {@link SealerOptions.check}). */
let checking: { readonly event: object; readonly placeholder: SignatureEnvelope } | undefined

/** What `event`'s accessors compute from, after indexing the transactions committed since the last read. */
function lazyOf(event: object): LazyEvent {
  const known = lazyEvents.get(event)
  if (known !== undefined) return known
  const acceptedBy = (event as { acceptedBy?: unknown }).acceptedBy
  const batches = typeof acceptedBy === 'object' && acceptedBy !== null ? batchesByAuthority.get(acceptedBy) : undefined
  for (const { sign, pending } of batches ?? []) {
    for (const transaction of pending) {
      const { events } = transaction
      for (let i = 0; i < events.length; i++) lazyEvents.set(events[i]!, { sign, transaction })
    }
    pending.length = 0
  }
  const lazy = lazyEvents.get(event)
  if (lazy === undefined) throw new Error('a lazily signed Event whose transaction was never committed')
  return lazy
}

/**
 * The {@link SigningForm} of a sealed envelope, found by walking it again (the deferring sealer
 * does not keep the one {@link sealMembers} found): the lazy members are left out, as
 * {@link signingBytes} places them itself.
 */
function signingFormOf(top: Record<string, unknown>): SigningForm {
  sawUnsorted = false
  sawIndexName = false
  let previous = ''
  for (const name in top) {
    if (name === 'signature' || name === 'commandHash') continue
    if (name < previous) sawUnsorted = true
    previous = name
    scanForm(top[name])
  }
  return sawIndexName ? 'index' : sawUnsorted ? 'unsorted' : 'sorted'
}

/** Notes in {@link sawUnsorted} and {@link sawIndexName} what a sealed value's objects hold. */
function scanForm(value: unknown): void {
  if (typeof value !== 'object' || value === null) return
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) scanForm(value[i])
    return
  }
  const record = value as Record<string, unknown>
  let previous = ''
  for (const name in record) {
    noteMemberName(name, previous)
    previous = name
    scanForm(record[name])
  }
}

/**
 * Notes in {@link sawUnsorted} and {@link sawIndexName} what the name of a nested object's member,
 * after `previous`, says of the object's signing form ({@link freezeInPlace} and {@link scanForm}).
 */
function noteMemberName(name: string, previous: string): void {
  if (name < previous) sawUnsorted = true
  // Array-index names ("0", "17") iterate first in JavaScript whatever the order of insertion.
  const first = name.charCodeAt(0)
  if (first >= 0x30 && first <= 0x39) sawIndexName = true
}

// One pair of accessor functions shared by every lazily signed Event of every sealer (rather than
// closures per Event or per sealer) keeps the Events on shared hidden classes: creating one costs a
// fraction as much, and code reading Events of several Authorities stays monomorphic.
const LAZY_HASH: PropertyDescriptor = {
  enumerable: true,
  get(this: object): string {
    if (checking?.event === this) return PLACEHOLDER_HASH
    const lazy = lazyOf(this)
    if (lazy.hashValue !== undefined) return lazy.hashValue
    const hash = lazy.transaction.commandHash
    if (hash === undefined) throw new Error('an Event sealed with a commandHash, committed in a transaction without one')
    return (lazy.hashValue = hash)
  },
}

const LAZY_SIGNATURE: PropertyDescriptor = {
  enumerable: true,
  get(this: Record<string, unknown>): SignatureEnvelope {
    if (checking?.event === this) return checking.placeholder
    const lazy = lazyOf(this)
    // §6.4: the signing input is the envelope without `signature` (with `commandHash` resolved).
    return (lazy.signature ??= lazy.sign(this))
  },
}

/** Thrown inside {@link copyFrozen} and {@link freezeInPlace} to abandon the walk; never escapes this module. */
const OUTSIDE_JCS = Symbol('outside-jcs')

/**
 * A deep-frozen copy of a JSON value, members sorted as RFC 8785 sorts them. A value outside the
 * JCS data model (a non-finite number, an unpaired surrogate, `undefined`, a non-plain object, a
 * cycle) gets the codec's own `PROTOCOL_VIOLATION` with the reason and path.
 */
export function frozenJson(value: unknown): unknown {
  try {
    return copyFrozen(value, 0)
  } catch (thrown) {
    if (thrown !== OUTSIDE_JCS) throw thrown
    canonicalizeOrThrow(value)
    throw new Error('frozenJson: a value the copy refused has a canonical form')
  }
}

/**
 * A stored Event as the reducers and readers take it (§4.6): the Event itself when it is frozen
 * already (the memory store keeps the accepted objects), else a deep-frozen copy (a parsed row).
 */
export function storedEvent(stored: Event): Event {
  return Object.isFrozen(stored) ? stored : (frozenJson(stored) as Event)
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

/** The walk of {@link frozenJson}; throws {@link OUTSIDE_JCS}. */
function copyFrozen(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return jcsScalar(value)
  if (depth >= MAX_JCS_DEPTH) throw OUTSIDE_JCS
  if (Array.isArray(value)) {
    const n = value.length
    const out = new Array<unknown>(n)
    for (let i = 0; i < n; i++) out[i] = copyFrozen(value[i], depth + 1)
    return Object.freeze(out)
  }
  requirePlain(value)
  const record = value as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const name of sortKeys(Object.keys(record))) {
    if (!wellFormed(name)) throw OUTSIDE_JCS
    const first = name.charCodeAt(0)
    if (first >= 0x30 && first <= 0x39) sawIndexName = true
    setMember(out, name, copyFrozen(record[name], depth + 1))
  }
  return Object.freeze(out)
}

/**
 * Folds accepted Events into `state`: the kind's reducer, then the bookkeeping every Group Event
 * shares (head sequence, aggregate revision; organization Events go to the Organization log).
 * Used for live acceptance and for replay alike.
 */
export function applyEvents(state: AuthorityState, events: readonly Event[], reducers: ReducerTable): void {
  applyEventsKeyed(state, events, reducers, undefined)
}

/** {@link applyEvents} with the aggregate keys {@link materializeKeyed} wrote for `events`, or deriving them when `keys` is `undefined`. */
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

/** The `aggregateKey` of the aggregate a Group Event advances. */
function aggregateKeyOf(event: Event): string {
  const aggregate = catalog.get(event.kind)?.aggregate
  return aggregateKey(aggregate as AggregateType, aggregateIdFrom(aggregate, event.groupId, event.workItemId, event.payload as Record<string, unknown>))
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
