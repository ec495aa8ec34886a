/**
 * The public face of a running Group Authority: its options, the {@link Authority} interface, the
 * audit record's entries and the transactions a log keeps. `./pipeline.ts` implements it.
 * @module
 */
import type { Receipt, Transport } from '@weft/client'
import type { ErrorCode, KeyResolver, SigningKey } from '@weft/codec'
import type { Event } from '@weft/spec'
import type { Clock, RandomSource } from '@weft/codec/time'
import type { CommandHandlers } from '../gen/handlers.js'
import type { EventReducers } from '../gen/reducers.js'
import type { AuthorityPolicy } from '../policy.js'
import type { IngressStage } from '../ingress/refusal.js'
import type { ActorRef, AuthorityState, GroupState } from '../model.js'
import type { LeaseView } from '../domain/leases.js'
import type { BudgetLedger } from '../domain/budget-ledger.js'
import type { AuthorityStore, CheckpointManifest, StoredReceipt } from '../log/store.js'
import type { OnlineLog } from '../log/compaction.js'
import type { AuthorityWarning } from '../log/checkpoint.js'

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
export interface Authority extends OnlineLog {
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
