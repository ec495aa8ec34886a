/**
 * The Command pipeline of a Group Authority, parameterized by its handler and reducer tables:
 * ingress checks (`../ingress/checks.ts`), the kind's handler, then one atomic transaction (Events signed by
 * the Authority, appended to the store with the receipt, folded into the state by the reducers
 * replay uses). `createAuthority` binds it to the domain handlers; tests bind small tables of their
 * own.
 * @module
 */
import type { Receipt, Transport } from '@weft/client'
import { parseStrictJson, ProtocolError, sha256Tagged, UsageError, type ErrorCode, type KeyResolver, type SigningKey } from '@weft/codec'
import type { Event, GroupSnapshot } from '@weft/spec'
import { systemClock, systemRandom, timestampOf, uuidSource, type Clock, type RandomSource } from '../clock.js'
import { dispatchCommand, type CommandHandlers } from '../gen/handlers.js'
import type { EventReducers } from '../gen/reducers.js'
import { contextFactory, type AnyCommand, type AnyEventDraft } from './handler.js'
import { DEFAULT_POLICY, type AuthorityPolicy } from '../policy.js'
import {
  admit,
  commandVerifier,
  decodeSigned,
  decodeSignedAsync,
  decodeTrusted,
  diagnosticOf,
  documentVerifier,
  jsonText,
  type Admitted,
  type Decoded,
  type IngressContext,
  type IngressStage,
} from '../ingress/checks.js'
import { emptyState, type ActorRef, type AuthorityState, type GroupState } from '../model.js'
import { boundedError, isWireId, truncated } from '../ingress/bounded.js'
import { RATE_RING_CAPACITY } from '../domain/runaway.js'
import { findLease, type LeaseView } from '../domain/leases.js'
import { budgetLedgerOf, type BudgetLedger } from '../domain/budget-ledger.js'
import { createMemoryStore, type AuthorityStore, type SnapshotRecord, type StoredReceipt } from '../log/store.js'
import { createOnlineLog, type EventPage } from '../log/compaction.js'
import type { SnapshotOptions, UnsignedGroupSnapshot } from '../log/snapshots.js'
import { restoreState } from '../log/restore.js'
import { emitWarning, keepsCheckpoints, saveCheckpoint, type AuthorityWarning } from '../log/checkpoint.js'
import type { CheckpointManifest } from '../log/store.js'
import { applyEvents, applyEventsKeyed, createDraftCheck, createEventSealer, frozenJson, materializeKeyed, storedEvent, type MaterializeOptions, type TransactionCause } from './transact.js'

/** The Authority's own identity: the service Principal that accepts Events (`acceptedBy`) and its signing key. */
export interface AuthorityKeys {
  readonly authority: { readonly type: 'service'; readonly id: string }
  /** Signs every Event under the `event` profile (§6.4); the Registry must bind it to {@link authority}. */
  readonly signingKey: SigningKey
}

/** Options of `createAuthority`. Only `registry` and `keys` are required. */
export interface AuthorityOptions {
  /** The time source, epoch milliseconds. Default: the wall clock. */
  readonly clock?: Clock
  /** Random bytes for the `urn:uuid:` IDs the Authority mints. Default: `node:crypto`. */
  readonly random?: RandomSource
  /** Resolves the keys of Command and embedded-document signatures (§6.4 stage 4), e.g. a `Registry` of `@weft/codec`. */
  readonly registry: KeyResolver
  readonly keys: AuthorityKeys
  /** Organization policy; missing fields take {@link DEFAULT_POLICY}. */
  readonly policy?: Partial<AuthorityPolicy>
  /**
   * Where accepted transactions go. Default: {@link createMemoryStore}. A store holding a log is
   * folded into the initial state, each compacted Group's stored snapshot verified on the way
   * (`restoreState`); a snapshot that fails is a `UsageError`.
   */
  readonly store?: AuthorityStore
  /**
   * Told when the Authority takes a slower path than it could: a stored state checkpoint that is
   * authentic but unusable (the whole history is folded instead), or a checkpoint not saved after a
   * compaction. Default: `process.emitWarning`.
   */
  readonly onWarning?: (warning: AuthorityWarning) => void
  /**
   * Sign each accepted Event when its `signature` is first read (by a reader of a receipt or of
   * `events()`, by `JSON.stringify`, a copy, or a store that serializes it) instead of inside the
   * transaction. Every Event anyone can see is still individually signed (§15.2), with the same
   * signature; only the Ed25519 operation moves off the commit path, which matters to in-process
   * simulators on {@link Authority.submitTrusted}. Default `false`.
   */
  readonly deferEventSignatures?: boolean
  /**
   * Check every Event a handler drafts against its kind's payload schema on
   * {@link Authority.submitTrusted} too, as {@link Authority.submit} always does. The check finds
   * handler bugs, not bad Commands (a failure is `INTERNAL_ERROR` with nothing appended); the
   * package's tests run every handler with it, so the trusted path leaves it off unless asked, a
   * debug option for hosts that bring their own handler tables. Default `false`.
   */
  readonly checkEventPayloads?: boolean
  /**
   * How many refused Commands {@link Authority.audit} keeps: the newest, the oldest dropped first.
   * An entry holds a bounded amount whatever the Command held (see {@link AuditEntry}), so the
   * record stays within a fixed size however many and however large the refused Commands are. 0
   * keeps none. Default {@link DEFAULT_MAX_AUDIT_ENTRIES}.
   */
  readonly maxAuditEntries?: number
}

/** The default of {@link AuthorityOptions.maxAuditEntries}. An entry holds at most about 2,000 characters, so some 20 MB of text at the very worst. */
export const DEFAULT_MAX_AUDIT_ENTRIES = 10_000

/**
 * One refused Command as the audit record keeps it (§6.4: the first failing stage and its reason
 * are retained for authorized auditors and never sent to the caller). Envelope members are present
 * when the Command could be read that far. Every text that may come from the Command (identifiers,
 * a handler's reason) is cut to `MAX_ECHO_CHARS` (256) characters and then marked
 * `…[<n> chars]` with its full length, so an entry stays small whatever was sent.
 */
export interface AuditEntry {
  /** The Authority clock when the Command was refused. */
  readonly at: string
  readonly code: ErrorCode
  /** Which check refused it (an {@link IngressStage}, or `<document kind>:<§6.4 stage>` for an embedded document). */
  readonly stage: string
  /** A stable reason, or the handler's message. */
  readonly reason: string
  readonly detail?: string
  /** The signer the envelope names. */
  readonly actor?: ActorRef
  /**
   * `sha256:` of the exact bytes submitted (of UTF-8 text when given text), which identifies the
   * refused Command without keeping it; on {@link Authority.submitTrusted}, of its JSON text.
   * Absent for input refused for exceeding `maxCommandBytes` (reason `command-too-large`), which
   * is refused without being read.
   */
  readonly bytesHash?: string
  readonly actionId?: string
  readonly kind?: string
  readonly groupId?: string
  readonly correlationId?: string
}

/**
 * A running Group Authority.
 *
 * Commands are admitted and committed one at a time, in the order submitted: each one's checks past
 * the signature, its handler and its commit run to completion before the next one's start. That is
 * what makes the compare-and-set of §15.3 (first accept of an offer, lease renewal, Membership
 * change, Approval) atomic: a handler's decision and its Events see exactly the state no other
 * Command can change in between. Only the Ed25519 check of signed Commands submitted together
 * overlaps (see {@link Authority.submit}).
 */
export interface Authority {
  /**
   * Runs the full ingress on a Command's exact UTF-8 JSON bytes (or text): size, strict parse,
   * schema, §6.4 signature, freshness, idempotency, epochs, role, `expectedRevision`, then the
   * kind's handler and one atomic transaction. Resolves to the {@link Receipt}; an exact retry of
   * an accepted Command resolves to its original receipt with `duplicate: true`.
   *
   * The Command is judged at the Authority time of the call, and nothing changes before the call
   * returns: the Command runs once the caller's synchronous code is done (a microtask), after every
   * Command submitted before it. When other signed Commands are in flight, the size limit and §6.4
   * stages 1–5 run then and the signature's Ed25519 equation on the libuv threadpool, so Commands
   * submitted together have their signatures checked on several cores; the outcome is the same as
   * submitting them one by one.
   * @returns Rejects only with a `ProtocolError` (§19), after which nothing was appended or changed.
   */
  submit(bytes: string | Uint8Array): Promise<Receipt>
  /** Serializes a signed Command object to JSON and {@link submit}s it. */
  submitCommand(command: object): Promise<Receipt>
  /**
   * The trusted in-process path, for benchmarks and simulators that build Commands in memory: it
   * skips the size limit, the strict parse and the §6.4 signature stages (of the Command and of
   * embedded documents, whose schemas are still checked) and runs everything else exactly as
   * {@link submit}. The Command must not be changed after the call. Never expose it to untrusted input.
   * @throws ProtocolError when the Command is refused.
   */
  submitTrusted(command: object): Receipt
  /** The in-process transport: `submit(command, bytes)` runs {@link submit} on the bytes. */
  connect(): Transport
  /**
   * The live state, a fold of the log. Read-only: mutating it breaks state = fold(log). The object
   * stays the same for the Authority's life.
   */
  readonly state: AuthorityState
  /** One Group's state, or `undefined`. Read-only like {@link state}. */
  group(groupId: string): GroupState | undefined
  /**
   * A WorkItem's ownership or Execution Lease in Group `groupId` by its Lease ID, live or closed
   * (§11.3): WorkItem, holder, Session and Ownership Epochs, issue and expiry, and either whether
   * an active lease is still `live` at the Authority's clock, or how a closed one ended
   * (`released`, `expired`, `revoked`), when and why. Built from the folded state, so it tells what
   * the log tells. `undefined` for an unknown Group or a Lease ID no WorkItem of that Group held,
   * Coordinator leases included (see `group(groupId).coordinatorLease`).
   *
   * An in-process operator API: it checks no caller's Membership, so do not expose it to Agents
   * without an authorization check of your own. It scans the Group's WorkItems.
   * @example
   * ```ts
   * const view = authority.lease(groupId, executionLeaseId)
   * if (view?.state === 'active') console.log(view.live)
   * else if (view !== undefined) console.log(view.state, view.closedAt, view.closureReason) // e.g. 'revoked', …, 'cancelled'
   * ```
   */
  lease(groupId: string, leaseId: string): LeaseView | undefined
  /**
   * The budget ledger (§12) of Group `groupId`'s Mission, or of its WorkItem `workItemId`: for
   * each of the six usage dimensions the limit the budget lists (money in microunits), where the
   * bound comes from (`own`; `inherited`, naming the nearest budget above that lists it, across
   * child Mission links; or `unlimited`), and what its children reserve, what was charged to it and
   * what can still be charged (the least any budget on its path has left, as the usage Events
   * report). Built from the folded state; `budgetLedgerOf` gives the same over any fold.
   *
   * An in-process operator API: it checks no caller's Membership.
   * @returns `undefined` for an unknown Group or WorkItem.
   * @example
   * ```ts
   * const { dimensions } = authority.budgetLedger(groupId, workItemId)!
   * const tokens = dimensions.modelTokens // { limit: null, source: 'inherited', inheritedFrom: { scope: 'mission', … }, reserved, used, remaining }
   * ```
   */
  budgetLedger(groupId: string, workItemId?: string): BudgetLedger | undefined
  /**
   * Every Event of a Group's online log after `afterSequence` (default 0), in sequence order. A
   * Message that was redacted is served as its signed tombstone (`../delivery/redaction.ts`, §7.4).
   * @throws ProtocolError `CURSOR_TOO_OLD` (with the snapshot reference in `details`) when the log
   * was compacted past `afterSequence` (§16): nothing is left out silently.
   */
  events(groupId: string, afterSequence?: number): readonly Event[]
  /**
   * At most `limit` Events of a Group's online log after `afterSequence`, served as {@link events}
   * serves them, with where the next page starts and whether there is one (§16: no silent cut).
   * @throws ProtocolError `CURSOR_TOO_OLD` as for {@link events}; UsageError when `limit` is not a positive integer.
   */
  eventPage(groupId: string, afterSequence: number, limit: number): EventPage
  /**
   * At most `limit` Events of a Group's retained history after `afterSequence`, compacted ones
   * included (§7.4: an active Group keeps its complete history), served as {@link events} serves
   * them. Unlike {@link eventPage} it never answers `CURSOR_TOO_OLD`; it reads the store by
   * position where the store has `groupHistory`, else its whole retained history from the start.
   * An in-process operator read (audit, building snapshots): it checks no caller's Membership.
   * @throws UsageError when `afterSequence` is not a non-negative integer or `limit` not a positive one.
   */
  history(groupId: string, afterSequence: number, limit: number): EventPage
  /**
   * The unsigned Group Snapshot at sequence `through`, 1 to the head (§7.4, §16): the Group's state
   * at `through` (the live state at the head, otherwise a fold of the retained history up to that
   * Event), its Event IDs 1..`through` and their Policy Log. An Organization service signs it
   * (`signGroupSnapshot`) and passes it to {@link compact}.
   * @throws ProtocolError `GROUP_NOT_FOUND` for an unknown Group; UsageError when `through` is not a sequence of its log.
   */
  buildSnapshot(groupId: string, through: number, options: SnapshotOptions): UnsignedGroupSnapshot
  /** The Group's latest compaction: the signed snapshot, its reference hash and state image; `undefined` before any. */
  snapshot(groupId: string): SnapshotRecord | undefined
  /**
   * Compacts a Group's online log behind a Signed Group Snapshot made by an Organization service
   * (§7.4, §16): after checking it like a restore would (signature, Event IDs, Policy Log, state
   * hash at its sequence), Events up to its sequence leave the online log; the store retains them
   * and the state does not change. Replays from below then answer `CURSOR_TOO_OLD`.
   * @returns The stored record.
   * When the store keeps state checkpoints, a {@link checkpoint} follows; should it fail, the
   * compaction stands and `onWarning` hears why.
   * @throws ProtocolError `GROUP_NOT_FOUND`, `AUTH_INVALID_SIGNATURE` or `INVALID_COMMAND` for a snapshot
   * that does not verify or does not advance the compaction point; UsageError when the store cannot compact.
   */
  compact(groupId: string, snapshot: GroupSnapshot | string): SnapshotRecord
  /**
   * Saves a state checkpoint in the store: an image of the whole state at the end of the retained
   * history, signed with the Authority's key together with its position and the compacted Groups'
   * snapshot references, so the next Authority over the store verifies it and folds only what came
   * after (`../log/checkpoint.ts`).
   * @returns The signed manifest.
   * @throws UsageError when the store keeps no checkpoints (see `AuthorityStore`) or the state holds what an image cannot carry.
   */
  checkpoint(): CheckpointManifest
  /** The Organization-scoped Events, in acceptance order. */
  organizationEvents(): readonly Event[]
  /** A fresh fold of the whole stored log with the same reducers; equal to {@link state} unless something is wrong. */
  replayState(): AuthorityState
  /**
   * The refused Commands, oldest first: the last {@link AuthorityOptions.maxAuditEntries} of them
   * (default {@link DEFAULT_MAX_AUDIT_ENTRIES}).
   */
  audit(): readonly AuditEntry[]
  /**
   * Calls `listener` with the Events of every committed transaction, in commit order, right after
   * the append (§16: every Event of a transaction is delivered, not only the first). Delivery and
   * subscriptions build on it. A listener that throws does not affect the transaction. Returns a
   * function that removes the listener.
   */
  onCommit(listener: (events: readonly Event[]) => void): () => void
  /**
   * Folds transactions another Authority over the same log already accepted (a peer process of a
   * shared database, see `@weft/store-postgres`) into this one, in their acceptance order: each
   * one's Events go through the reducers replay uses and, with its receipt, into the store, then
   * to the {@link onCommit} listeners, exactly as if this Authority had accepted them. No handler
   * runs and nothing is signed again: the Events are trusted as the accepted facts they are.
   * @throws Error from the store when a transaction does not continue the log (a Group sequence
   * gap or fork, a receipt key reused); the state is then the fold of what the store holds.
   */
  ingest(transactions: Iterable<AcceptedTransaction>): void
}

/** One accepted Command as a log keeps it: its Events, in order, and its receipt. */
export interface AcceptedTransaction {
  readonly events: readonly Event[]
  readonly receipt: StoredReceipt
}

/** What {@link createPipeline} needs besides the public options: the tables it dispatches to. */
export interface PipelineOptions extends AuthorityOptions {
  readonly handlers: CommandHandlers
  readonly reducers: EventReducers
}

/**
 * Folds `events` (in acceptance order) into a new state with `reducers`. Each reducer receives a
 * deep-frozen copy of the Event, as on acceptance, so nothing a reducer keeps can reach the stored
 * log and replay reads exactly what live acceptance read.
 */
export function fold(events: Iterable<Event>, reducers: EventReducers): AuthorityState {
  const state = emptyState()
  for (const event of events) applyEvents(state, [frozenJson(event) as Event], reducers)
  return state
}

/**
 * Builds an {@link Authority} over the given handler and reducer tables. `createAuthority` calls it
 * with the domain tables; it is exported for tests and for hosts that compose their own.
 * @throws UsageError on bad options.
 */
export function createPipeline(options: PipelineOptions): Authority {
  const { handlers, reducers, registry, keys } = checkOptions(options)
  const policy = resolvePolicy(options.policy)
  const clock = options.clock ?? systemClock
  const newId = uuidSource(options.random ?? systemRandom)
  const store = options.store ?? createMemoryStore()
  const verifier = commandVerifier(policy.maxCommandBytes)
  const onWarning = options.onWarning ?? emitWarning
  const state = restoreState(store, reducers, registry, { authority: keys.authority, onWarning })
  const log = createOnlineLog({ store, state, reducers, registry, signingKey: keys.signingKey, now: () => timestampOf(clock.now()) })
  const checkpoint = (): CheckpointManifest => saveCheckpoint({ store, state, authority: keys.authority, signingKey: keys.signingKey, now: () => timestampOf(clock.now()) })
  /** A compaction is followed by a checkpoint where the store keeps them, so a restart starts past it. */
  const compact = (groupId: string, snapshot: GroupSnapshot | string): SnapshotRecord => {
    const record = log.compact(groupId, snapshot)
    if (!keepsCheckpoints(store)) return record
    try {
      checkpoint()
    } catch (cause) {
      onWarning({ kind: 'checkpoint-not-saved', message: `compact: Group ${groupId} was compacted, but no checkpoint was saved after it: ${(cause as Error).message}`, cause })
    }
    return record
  }
  const audit = createAuditRing(options.maxAuditEntries ?? DEFAULT_MAX_AUDIT_ENTRIES)
  const commitListeners = new Set<(events: readonly Event[]) => void>()
  const verifyDocument = documentVerifier(verifier, registry)
  // The trusted path's handler runs on a Command whose payload schema was checked at admission; the
  // embedded documents that check covered need no second schema check (`documentVerifier`).
  let handling: AnyCommand | undefined
  const verifySchemaOnly = documentVerifier(verifier, undefined, () => handling)
  const seal = createEventSealer(keys.signingKey, { deferSignatures: options.deferEventSignatures === true })
  const checkTrustedPayloads = options.checkEventPayloads === true
  // The Principal every Event names as `acceptedBy`, frozen with them: a copy, since the options are the caller's.
  const authorityActor: ActorRef = Object.freeze({ type: keys.authority.type, id: keys.authority.id })
  const contextOf = contextFactory({ state, authority: authorityActor, policy, newId })
  const checkDrafts = createDraftCheck(authorityActor)
  const ingress: IngressContext = { state, store, policy }
  // The `materialize` options of the Command being committed, one object for the pipeline's life.
  const sealing: MaterializeOptions & { now: string; hashSource: Decoded | undefined } = {
    now: '',
    newId,
    authority: authorityActor,
    hashSource: undefined,
    sign: (event) => seal(event, sealing.hashSource),
  }

  // The last two actors' frozen copies: consecutive Commands mostly come from the same few actors.
  let lastActor = authorityActor
  let actorBefore = authorityActor

  /**
   * The frozen actor the Events and both receipts of a Command share: a copy, since the Command's
   * may be the caller's object, and the same copy as a recent Command's when that names the same actor.
   */
  function frozenActor(actor: ActorRef): ActorRef {
    if (lastActor.id === actor.id && lastActor.type === actor.type) return lastActor
    const copy = actorBefore.id === actor.id && actorBefore.type === actor.type ? actorBefore : Object.freeze({ type: actor.type, id: actor.id })
    actorBefore = lastActor
    lastActor = copy
    return copy
  }

  // The aggregate key of each Event of the transaction being committed, for `applyEventsKeyed`:
  // one array for the pipeline's life, overwritten from index 0 by each transaction and read before
  // the next Command can start (entries past its Events are stale and never read).
  const eventKeys: (string | undefined)[] = []

  // Where the Command being handled is, for the audit record of a refusal. Commands run one at a
  // time (see Authority), so one variable serves them all.
  let stage = 'ingress' as IngressStage

  /**
   * One Command received at `nowMs`, from decoding to receipt: `input` is the Command object when
   * `trusted`, else its bytes, and `decode` its ingress up to the signature (`decodeTrusted`, or the
   * outcome of `decodeSignedAsync`). Throws only the caller's `ProtocolError`, recorded in audit.
   */
  function run(input: unknown, trusted: boolean, nowMs: number, decode: (input: unknown) => Decoded): Receipt {
    const now = timestampOf(nowMs)
    let decoded: Decoded | undefined
    stage = 'ingress' as IngressStage
    try {
      decoded = decode(input)
      const admitted = admit(decoded, ingress, nowMs)
      if (admitted.duplicate !== undefined) return { ...admitted.duplicate, duplicate: true }
      return commit(admitted, decoded, nowMs, now, trusted)
    } catch (thrown) {
      throw refused(thrown, input, trusted, decoded?.command ?? (trusted ? input : peek(input, policy.maxCommandBytes)), now, stage)
    }
  }

  function commit({ command, rule, group }: Admitted, decoded: Decoded, nowMs: number, now: string, trusted: boolean): Receipt {
    const ctx = contextOf(group, now, nowMs, trusted ? verifySchemaOnly : verifyDocument, decoded)
    stage = 'handler'
    handling = command
    let drafts: readonly AnyEventDraft[]
    try {
      drafts = dispatchCommand(handlers, command, ctx)
    } finally {
      handling = undefined
    }
    stage = 'commit'
    checkDrafts(drafts, rule, now, !trusted || checkTrustedPayloads)
    const actor = frozenActor(command.actor as ActorRef)
    const cause: TransactionCause =
      command.groupId === undefined
        ? { type: 'command', id: command.actionId, actor, correlationId: command.correlationId }
        : { type: 'command', id: command.actionId, actor, correlationId: command.correlationId, groupId: command.groupId }
    sealing.now = now
    // The trusted path computes the signing hash on first read (see `decodeTrusted`): with deferred
    // Event signatures, that is when a reader first needs it, not in the transaction.
    sealing.hashSource = decoded
    // §4.6: accepted Events are immutable; the log, the readers and the reducers share the deep-frozen Events.
    const events = Object.freeze(materializeKeyed(state, cause, drafts, sealing, eventKeys))
    sealing.hashSource = undefined
    const receipt: StoredReceipt = receiptOf(command, actor, events, now, decoded)
    // Deferred signatures: the receipt holds the Events and their `commandHash`, so it is what the
    // sealer keeps until a reader (the store's serialization among them) first needs a signature.
    seal.commit(receipt)
    append(events, receipt, eventKeys)
    notify(events)
    return receiptOf(command, actor, events, now, decoded, false)
  }

  /** Applies and stores one transaction; on any failure the state goes back to the fold of what is stored. */
  function append(events: readonly Event[], receipt: StoredReceipt, keys?: readonly (string | undefined)[]): void {
    try {
      applyEventsKeyed(state, events, reducers, keys)
      // The append is the commit point: a receipt exists exactly when the Events do.
      store.appendTransaction(events, receipt)
    } catch (failure) {
      // A reducer or the store failed part-way: the state goes back to the fold of what is stored.
      refill(state, fold(store.allEvents(), reducers))
      throw failure
    }
  }

  function notify(events: readonly Event[]): void {
    for (const listener of commitListeners) {
      try {
        listener(events)
      } catch {
        // A subscriber's failure is its own; the transaction is committed and stays so.
      }
    }
  }

  function ingest(transactions: Iterable<AcceptedTransaction>): void {
    for (const transaction of transactions) {
      // §4.6: the same deep-frozen sharing as on acceptance; a parsed row is copied once and frozen.
      const events = Object.freeze(transaction.events.map(storedEvent))
      const receipt = Object.freeze({ ...transaction.receipt, events }) as StoredReceipt
      append(events, receipt)
      notify(events)
    }
  }

  /**
   * The caller's error, after recording the refusal in audit. It names the Command's Action ID when
   * that is one (§19), and its `details` are bounded: nothing of the input is echoed whole.
   */
  function refused(thrown: unknown, input: unknown, trusted: boolean, source: unknown, at: string, stage: IngressStage): ProtocolError {
    const error = boundedError(ProtocolError.from(thrown))
    const { actionId, actor, kind, groupId, correlationId } = envelopeOf(source)
    const diagnostic = diagnosticOf(error, stage)
    // Input refused for its size is not hashed: hashing it would make each refusal cost as much as the attacker sent.
    const hash = diagnostic.reason === 'command-too-large' ? undefined : bytesHashOf(input, trusted)
    audit.add(
      Object.freeze({
        at,
        code: error.code,
        stage: truncated(diagnostic.stage),
        reason: truncated(diagnostic.reason),
        ...(diagnostic.detail === undefined ? {} : { detail: truncated(diagnostic.detail) }),
        ...(actor === undefined ? {} : { actor: Object.freeze({ type: actor.type, id: truncated(actor.id) }) }),
        ...(hash === undefined ? {} : { bytesHash: hash }),
        ...(actionId === undefined ? {} : { actionId: truncated(actionId) }),
        ...(kind === undefined ? {} : { kind: truncated(kind) }),
        ...(groupId === undefined ? {} : { groupId: truncated(groupId) }),
        ...(correlationId === undefined ? {} : { correlationId: truncated(correlationId) }),
      }),
    )
    // §19: a value that is no schema `id` (a megabyte of `actionId`, say) is not named back.
    return isWireId(actionId) ? error.with({ relatedActionId: actionId }) : error
  }

  // Signed Commands submitted in this turn of the event loop and not yet started, in order.
  let intake: Intake[] = []
  // Signed Commands whose Ed25519 check went to the threadpool and whose turn has not ended.
  let inFlight = 0
  // The turn of the last of them: each one's admission and commit wait for it.
  let turn: Promise<void> = Promise.resolve()
  const decodeNow = (bytes: unknown): Decoded => decodeSigned(bytes as string | Uint8Array, verifier, registry, policy.maxCommandBytes)

  /**
   * `submit`: the Command joins the intake, which is drained once the caller's synchronous run
   * ends (a microtask), so the Commands submitted together are seen together (see {@link drain}).
   */
  function submitSigned(bytes: string | Uint8Array): Promise<Receipt> {
    return new Promise((resolve, reject) => {
      if (intake.length === 0) queueMicrotask(drain)
      intake.push({ bytes, nowMs: clock.now(), resolve, reject })
    })
  }

  /**
   * Starts the Commands of the intake. Each is admitted and committed alone and in the order
   * submitted, at the Authority time of its submission, exactly as if it ran at once; what may
   * overlap is the Ed25519 check of its signature (§6.4 stage 6), which depends on nothing the
   * Authority holds. A Command submitted alone, with none in flight, runs at once on this thread:
   * the threadpool's round trip would only add its latency. Otherwise each one's size limit and
   * stages 1–5 run now, its equation goes to the libuv threadpool, and its turn comes when the
   * Command before it is done and its own check is back; when none was in flight, the first of the
   * batch runs at once on this thread while the threadpool checks the others.
   */
  function drain(): void {
    const batch = intake
    intake = []
    const alone = inFlight === 0
    for (let i = alone ? 1 : 0; i < batch.length; i++) schedule(batch[i]!)
    if (alone) settle(batch[0]!, decodeNow)
  }

  /** The Command's stages up to the equation now, the equation on the threadpool, the rest in its turn. */
  function schedule(command: Intake): void {
    inFlight++
    let verified: Promise<Decoded>
    try {
      verified = decodeSignedAsync(command.bytes, verifier, registry, policy.maxCommandBytes)
    } catch (refusal) {
      verified = Promise.reject(refusal)
    }
    // Settled either way before its turn, so a refusal is not reported as unhandled while it waits.
    const outcome = verified.then(
      (decoded) => () => decoded,
      (refusal: unknown) => () => {
        throw refusal
      },
    )
    turn = turn
      .then(() => outcome)
      .then((decode) => {
        inFlight--
        settle(command, decode)
      })
  }

  /** Runs a signed Command to its receipt, or its refusal, for its caller. */
  function settle(command: Intake, decode: (input: unknown) => Decoded): void {
    try {
      command.resolve(run(command.bytes, false, command.nowMs, decode))
    } catch (refusal) {
      command.reject(refusal)
    }
  }

  const authority: Authority = {
    submit: submitSigned,
    submitCommand: (command) => submitSigned(jsonText(command) as string),
    submitTrusted: (command) => run(command, true, clock.now(), decodeTrusted),
    connect: () => ({ submit: (_command, bytes) => authority.submit(bytes) }),
    state,
    group: (groupId) => state.groups.get(groupId),
    lease: (groupId, leaseId) => {
      const group = state.groups.get(groupId)
      return group === undefined ? undefined : findLease(group, leaseId, clock.now())
    },
    budgetLedger: (groupId, workItemId) => budgetLedgerOf(state, groupId, workItemId),
    events: log.events,
    eventPage: log.eventPage,
    snapshot: log.snapshot,
    history: log.history,
    buildSnapshot: log.buildSnapshot,
    compact,
    checkpoint,
    organizationEvents: () => store.organizationEvents(),
    replayState: () => fold(store.allEvents(), reducers),
    audit: () => audit.entries(),
    onCommit(listener) {
      commitListeners.add(listener)
      return () => commitListeners.delete(listener)
    },
    ingest,
  }
  return Object.freeze(authority)
}

/**
 * The receipt of an accepted Command: frozen as stored, or with `duplicate` as the caller gets it. Its
 * `commandHash` member is the hash when `decoded` already knows it, else an accessor that reads
 * `decoded.commandHash` (which computes once) on access.
 */
function receiptOf(command: AnyCommand, actor: ActorRef, events: readonly Event[], acceptedAt: string, decoded: Decoded): StoredReceipt
function receiptOf(command: AnyCommand, actor: ActorRef, events: readonly Event[], acceptedAt: string, decoded: Decoded, duplicate: boolean): Receipt
function receiptOf(command: AnyCommand, actor: ActorRef, events: readonly Event[], acceptedAt: string, decoded: Decoded, duplicate?: boolean): StoredReceipt {
  const known = decoded.knownHash
  const receipt = (known === undefined ? new LazyHashReceipt(decoded) : {}) as Record<string, unknown>
  receipt['actionId'] = command.actionId
  receipt['actor'] = actor
  receipt['kind'] = command.kind
  if (command.groupId !== undefined) receipt['groupId'] = command.groupId
  receipt['events'] = events
  receipt['acceptedAt'] = acceptedAt
  if (duplicate !== undefined) receipt['duplicate'] = duplicate
  if (known !== undefined) receipt['commandHash'] = known
  else Object.defineProperty(receipt, 'commandHash', LAZY_COMMAND_HASH)
  // The stored receipt answers every retry, so it is frozen; the caller's copy is the caller's.
  return (duplicate === undefined ? Object.freeze(receipt) : receipt) as unknown as StoredReceipt
}

/**
 * A receipt whose `commandHash` is read from the source of the trusted path's lazy signing hash,
 * kept in a private field: out of readers' sight (JSON, spreads, equality see the members only),
 * and cheaper to set than a hidden property.
 */
class LazyHashReceipt {
  readonly #source: Decoded

  constructor(source: Decoded) {
    this.#source = source
  }

  /** The signing hash, computed by the source on its first read. */
  static hashOf(receipt: LazyHashReceipt): string {
    return receipt.#source.commandHash
  }
}

// One accessor shared by every lazy receipt keeps receipts on shared hidden classes (see `transact.ts`).
const LAZY_COMMAND_HASH: PropertyDescriptor = {
  enumerable: true,
  get(this: LazyHashReceipt): string {
    return LazyHashReceipt.hashOf(this)
  },
}

/** A signed Command submitted and not yet started. */
interface Intake {
  readonly bytes: string | Uint8Array
  /** The Authority clock when it was submitted: its time through the whole ingress. */
  readonly nowMs: number
  readonly resolve: (receipt: Receipt) => void
  readonly reject: (refusal: unknown) => void
}

/**
 * Moves the contents of `source` into `target` in place, so the `state` object handed out keeps its
 * identity: Maps and arrays are refilled, nested records recursed into, other members replaced.
 */
function refill(target: object, source: object): void {
  const to = target as Record<string, unknown>
  for (const [key, value] of Object.entries(source)) {
    const current = to[key]
    if (current instanceof Map && value instanceof Map) {
      current.clear()
      for (const [k, v] of value) current.set(k, v)
    } else if (Array.isArray(current) && Array.isArray(value)) {
      current.length = 0
      for (const v of value) current.push(v)
    } else if (typeof current === 'object' && current !== null && typeof value === 'object' && value !== null) {
      refill(current, value)
    } else {
      to[key] = value
    }
  }
}

/** The raw document of refused bytes, read again for the audit record (only refusals pay for it). */
function peek(bytes: unknown, maxBytes: number): unknown {
  if (typeof bytes !== 'string' && !(bytes instanceof Uint8Array)) return undefined
  const parsed = parseStrictJson(bytes, { maxBytes })
  return parsed.ok ? parsed.value : undefined
}

/** The envelope members of a (possibly invalid) Command that the audit record and `relatedActionId` use, whole. */
function envelopeOf(source: unknown): Pick<AuditEntry, 'actor' | 'actionId' | 'kind' | 'groupId' | 'correlationId'> {
  if (typeof source !== 'object' || source === null) return {}
  const s = source as Record<string, unknown>
  const actor = s['actor'] as Record<string, unknown> | undefined
  const text = (v: unknown): v is string => typeof v === 'string'
  return {
    ...(text(s['actionId']) ? { actionId: s['actionId'] } : {}),
    ...(typeof actor === 'object' && actor !== null && text(actor['id']) && ['agent', 'human', 'service'].includes(actor['type'] as string)
      ? { actor: { type: actor['type'] as ActorRef['type'], id: actor['id'] } }
      : {}),
    ...(text(s['kind']) ? { kind: s['kind'] } : {}),
    ...(text(s['groupId']) ? { groupId: s['groupId'] } : {}),
    ...(text(s['correlationId']) ? { correlationId: s['correlationId'] } : {}),
  }
}

/** {@link AuditEntry.bytesHash} of submitted `input`: its bytes, or the JSON text of a trusted Command object. */
function bytesHashOf(input: unknown, trusted: boolean): string | undefined {
  const bytes = trusted ? jsonText(input) : input
  if (bytes instanceof Uint8Array) return sha256Tagged(bytes)
  return typeof bytes === 'string' ? sha256Tagged(Buffer.from(bytes, 'utf8')) : undefined
}

/** The audit record: a ring of the newest `capacity` entries. */
interface AuditRing {
  add(entry: AuditEntry): void
  /** The entries, oldest first. */
  entries(): AuditEntry[]
}

function createAuditRing(capacity: number): AuditRing {
  const ring: AuditEntry[] = []
  // Where the next entry goes once the ring is full: the oldest entry's place.
  let next = 0
  return {
    add(entry) {
      if (capacity === 0) return
      if (ring.length < capacity) {
        ring.push(entry)
        return
      }
      ring[next] = entry
      next = (next + 1) % capacity
    },
    entries: () => [...ring.slice(next), ...ring.slice(0, next)],
  }
}

function resolvePolicy(overrides: Partial<AuthorityPolicy> = {}): AuthorityPolicy {
  const policy: AuthorityPolicy = { ...DEFAULT_POLICY, ...overrides }
  for (const name of ['freshnessSeconds', 'maxCommandBytes', 'maxMissionDepth', 'maxDelegationDepth'] as const) {
    const value = policy[name]
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new UsageError(`policy.${name} must be a non-negative finite number, got ${String(value)}`)
  }
  // §20: cooperation limits are opt-in; a per-minute rate is bounded by the ring the reducers keep.
  for (const name of ['maxMessagesPerMinute', 'maxProposalsPerMinute', 'maxQueuedWorkItems', 'maxActiveWorkItems'] as const) {
    const value = policy[name]
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) throw new UsageError(`policy.${name} must be a non-negative integer, got ${String(value)}`)
    if (value !== undefined && name.endsWith('PerMinute') && value > RATE_RING_CAPACITY) throw new UsageError(`policy.${name} may not exceed ${RATE_RING_CAPACITY}`)
  }
  if (!Array.isArray(policy.controlPlane) || !policy.controlPlane.every((id) => typeof id === 'string')) throw new UsageError('policy.controlPlane must be an array of service Principal IDs')
  return Object.freeze({ ...policy, controlPlane: Object.freeze([...policy.controlPlane]) })
}

function checkOptions(options: PipelineOptions): PipelineOptions {
  if (typeof options?.registry?.resolve !== 'function') throw new UsageError('createAuthority needs a registry (a KeyResolver such as Registry.fromEvidence(...))')
  const { authority, signingKey } = options.keys ?? {}
  if (authority?.type !== 'service' || typeof authority.id !== 'string') throw new UsageError("keys.authority must be the Authority's service Principal { type: 'service', id }")
  if (typeof signingKey?.keyId !== 'string' || typeof signingKey.pair?.sign !== 'function') throw new UsageError('keys.signingKey must be a SigningKey { keyId, pair }')
  const bound = options.registry.resolve(signingKey.keyId)
  // Subscribers verify every Event against the Registry (§6.4 `acceptedBy`), so an unbound key could never be checked.
  if (!bound.ok || bound.key.principal.type !== 'service' || bound.key.principal.id !== authority.id) {
    throw new UsageError(`keys.signingKey (${signingKey.keyId}) is not bound to ${authority.id} in the registry`)
  }
  if (options.clock !== undefined && typeof options.clock.now !== 'function') throw new UsageError('clock must be { now(): number }')
  if (options.random !== undefined && typeof options.random !== 'function') throw new UsageError('random must be a function (n) => Uint8Array')
  const entries = options.maxAuditEntries
  if (entries !== undefined && (!Number.isSafeInteger(entries) || entries < 0)) throw new UsageError(`maxAuditEntries must be a non-negative integer, got ${String(entries)}`)
  return options
}
