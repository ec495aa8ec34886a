/**
 * The Command pipeline of a Group Authority, parameterized by its handler and reducer tables:
 * ingress checks (`../ingress/checks.ts`), the kind's handler, then one atomic transaction (Events
 * materialized and sealed, appended to the store with the receipt, folded into the state by the
 * reducers replay uses: `./transact.ts`). `createAuthority` binds it to the domain handlers; tests
 * bind small tables of their own. The {@link Authority} interface and its options are in `./api.ts`.
 * @module
 */
import type { Receipt } from '@weft/client'
import { frozenJson } from '@weft/codec'
import type { Event, GroupSnapshot } from '@weft/spec'
import { systemClock, systemRandom, timestampOf, uuidSource } from '@weft/codec/time'
import { dispatchCommand } from '../gen/handlers.js'
import type { EventReducers } from '../gen/reducers.js'
import { contextFactory, type AnyCommand, type AnyEventDraft } from './handler.js'
import { admit, type Admitted, type IngressContext } from '../ingress/checks.js'
import { commandVerifier, decodeTrusted, type Decoded } from '../ingress/decode.js'
import { documentVerifier, jsonText } from '../ingress/documents.js'
import type { IngressStage } from '../ingress/refusal.js'
import { emptyState, type ActorRef, type AuthorityState } from '../model.js'
import { findLease } from '../domain/leases.js'
import { budgetLedgerOf } from '../domain/budget-ledger.js'
import { createMemoryStore, type CheckpointManifest, type SnapshotRecord, type StoredReceipt } from '../log/store.js'
import { createOnlineLog } from '../log/compaction.js'
import { restoreState } from '../log/restore.js'
import { emitWarning, keepsCheckpoints, saveCheckpoint } from '../log/checkpoint.js'
import { DEFAULT_MAX_AUDIT_ENTRIES, type AcceptedTransaction, type Authority, type PipelineOptions } from './api.js'
import { createAuditRing, peek, refused } from './audit.js'
import { createCachedDraftCheck } from './draft-check-cached.js'
import { createDraftCheck, type DraftCheck } from './draft-check.js'
import { createDeferredSealer } from './deferred-sealing.js'
import { createSignedIntake } from './intake.js'
import { createTunedSteps } from './materialize-tuned.js'
import { checkOptions, resolvePolicy } from './options.js'
import { receiptOf } from './receipts.js'
import { createEagerSealer } from './sealing.js'
import { applyEvents, plainSteps, storedEvent, type MaterializeOptions, type TransactionCause, type TransactionSteps } from './transact.js'

export type { Authority, AuthorityOptions, AuthorityKeys, AuditEntry, AcceptedTransaction, PipelineOptions } from './api.js'
export { DEFAULT_MAX_AUDIT_ENTRIES } from './api.js'

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
 * How a pipeline performs a transaction's steps: the tuned modules ({@link TUNED_ENGINE}, what
 * {@link createPipeline} runs) or the reference path of `./transact.ts` and `./draft-check.ts`
 * ({@link REFERENCE_ENGINE}). Both accept and refuse the same Commands with byte-identical Events.
 */
export interface CommitEngine {
  /** The materialize and fold steps for one pipeline's life. */
  readonly steps: () => TransactionSteps
  /** The check of a handler's drafts, for one pipeline's life. */
  readonly draftCheck: (authority: ActorRef) => DraftCheck
}

/** The allocation-lean steps and the cached draft check. */
export const TUNED_ENGINE: CommitEngine = Object.freeze({ steps: createTunedSteps, draftCheck: createCachedDraftCheck })

/** The reference steps and draft check, as the spec reads. */
export const REFERENCE_ENGINE: CommitEngine = Object.freeze({ steps: () => plainSteps, draftCheck: createDraftCheck })

/**
 * Builds an {@link Authority} over the given handler and reducer tables. `createAuthority` calls it
 * with the domain tables; it is exported for tests and for hosts that compose their own.
 * @throws UsageError on bad options.
 */
export function createPipeline(options: PipelineOptions): Authority {
  return createPipelineWith(options, TUNED_ENGINE)
}

/** {@link createPipeline} with the transaction steps of `engine` (the differential tests run both). */
export function createPipelineWith(options: PipelineOptions, engine: CommitEngine): Authority {
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
  // §15.2: every Event is signed, in the transaction or, deferred, when its signature is first read (see `./deferred-sealing.ts`).
  const seal = options.deferEventSignatures === true ? createDeferredSealer(keys.signingKey) : createEagerSealer(keys.signingKey)
  const checkTrustedPayloads = options.checkEventPayloads === true
  // The Principal every Event names as `acceptedBy`, frozen with them: a copy, since the options are the caller's.
  const authorityActor: ActorRef = Object.freeze({ type: keys.authority.type, id: keys.authority.id })
  const contextOf = contextFactory({ state, authority: authorityActor, policy, newId })
  const checkDrafts = engine.draftCheck(authorityActor)
  const steps = engine.steps()
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
      throw refused(audit, thrown, input, trusted, decoded?.command ?? (trusted ? input : peek(input, policy.maxCommandBytes)), now, stage)
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
    const events = Object.freeze(steps.materialize(state, cause, drafts, sealing))
    sealing.hashSource = undefined
    const receipt: StoredReceipt = receiptOf(command, actor, events, now, decoded)
    // Deferred signatures: the receipt holds the Events and their `commandHash`, so it is what the
    // sealer keeps until a reader (the store's serialization among them) first needs a signature.
    seal.commit(receipt)
    append(events, receipt, steps.apply)
    notify(events)
    return receiptOf(command, actor, events, now, decoded, false)
  }

  /** Folds (with `apply`) and stores one transaction; on any failure the state goes back to the fold of what is stored. */
  function append(events: readonly Event[], receipt: StoredReceipt, apply: TransactionSteps['apply']): void {
    try {
      apply(state, events, reducers)
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
      append(events, receipt, applyEvents)
      notify(events)
    }
  }

  const submitSigned = createSignedIntake((bytes, nowMs, decode) => run(bytes, false, nowMs, decode), {
    verifier,
    registry,
    maxCommandBytes: policy.maxCommandBytes,
    now: () => clock.now(),
  })

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
