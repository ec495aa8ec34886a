/**
 * The contract between the ingress pipeline and the Command handlers. A handler is pure: it reads
 * the state and the verified Command and returns Event drafts, or throws a `ProtocolError`. It
 * never mutates state; the pipeline appends the drafts atomically and advances the state with the
 * same reducers replay uses (ARCHITECTURE, "A Command's walk", steps 4–5).
 * @module
 */
import { ProtocolError } from '@weft/codec/errors'
import type { ErrorCode } from '@weft/codec'
import type { Command, CommandKind, CommandPayload, Event, EventKind, EventPayload } from '@weft/spec'
import { timestampOf } from '@weft/codec/time'
import type { ActorRef, AuthorityState, GroupState } from '../model.js'
import type { AuthorityPolicy } from '../policy.js'

/** A Command whose `kind` and `payload` are typed by `K`; the envelope is the normative one. */
export type CommandOf<K extends CommandKind> = Omit<Command, 'kind' | 'payload'> & {
  readonly kind: K
  readonly payload: CommandPayload<K>
}

/** An Event whose `kind` and `payload` are typed by `K`. */
export type EventOf<K extends EventKind> = Omit<Event, 'kind' | 'payload'> & {
  readonly kind: K
  readonly payload: EventPayload<K>
}

/** A Command handler: pure, returns the Events to append or throws a `ProtocolError`. */
export type HandlerFor<K extends CommandKind> = (command: CommandOf<K>, ctx: HandlerContext) => readonly AnyEventDraft[]

/**
 * An Event reducer: advances the state by one accepted Event. Replay and live acceptance run the same
 * reducers, so state = fold(log). Reducers must not throw for an Event their handler produced.
 */
export type ReducerFor<K extends EventKind> = (state: AuthorityState, event: EventOf<K>) => void

/** Any catalogued Command, discriminated by `kind`. */
export type AnyCommand = { [K in CommandKind]: CommandOf<K> }[CommandKind]

/**
 * One Event a handler wants appended. The pipeline fills the envelope: Event ID, Group sequence,
 * aggregate revision (the current revision of the Event's aggregate plus one, draft by draft),
 * actor, cause, correlation, `occurredAt`, `acceptedBy`, `commandHash` and the signature.
 *
 * The aggregate is the catalog's `aggregate` of the kind, identified where its `aggregateIdAt`
 * points (read by `aggregateIdIn` in `transact.ts`): WorkItem Events by the envelope
 * `workItemId` (so set {@link workItemId} on every WorkItem-aggregate draft; a proposal by its
 * `proposalId`), Mission/Group/policy Events by
 * the Group, Memberships by `membership.membershipId` / `membershipId` (a Delegation Grant by its
 * `grant.grantId`), Messages by `messageId`, Artifacts by `artifact.artifactId`, Execution
 * Approvals by `approvalId`.
 */
export interface EventDraft<K extends EventKind = EventKind> {
  readonly kind: K
  readonly payload: EventPayload<K>
  /**
   * The Group the Event belongs to. Defaults to the Command's Group. A draft may name another Group
   * the Authority serves only for the propagation §14 defines (a child Mission's creation, approval
   * or failure reaching the other side). Organization-scoped Event kinds carry none.
   */
  readonly groupId?: string
  readonly conversationId?: string
  readonly workItemId?: string
  /** Overrides the Event actor (default: the Command actor), e.g. the Authority for a propagated fact. */
  readonly actor?: ActorRef
}

/** Any {@link EventDraft}, discriminated by `kind`. */
export type AnyEventDraft = { [K in EventKind]: EventDraft<K> }[EventKind]

/** Makes a typed {@link EventDraft}; keeps `kind` and `payload` in step. */
export function draft<K extends EventKind>(kind: K, payload: EventPayload<K>, at: Omit<EventDraft<K>, 'kind' | 'payload'> = NO_MEMBERS): EventDraft<K> {
  // Every draft has one shape, absent envelope members `undefined`: the pipeline reads the members
  // of every draft, and reads of objects of one shape are the fast kind.
  return { kind, payload, groupId: at.groupId, conversationId: at.conversationId, workItemId: at.workItemId, actor: at.actor } as EventDraft<K>
}

const NO_MEMBERS: Omit<EventDraft, 'kind' | 'payload'> = Object.freeze({})

/** What a handler may read besides the Command. Everything is read-only. */
export interface HandlerContext {
  /** The whole Authority state (read-only by contract). */
  readonly state: AuthorityState
  /** The Command's Group, when it is Group-scoped and the Group exists. */
  readonly group: GroupState | undefined
  /** The Authority clock at acceptance, as an RFC 3339 UTC text with millisecond precision. */
  readonly now: string
  /** The same instant in epoch milliseconds. */
  readonly nowMs: number
  /** The Authority's service Principal: the `acceptedBy` of every Event. */
  readonly authority: ActorRef
  readonly policy: AuthorityPolicy
  /** A fresh identifier (`urn:uuid:…`) from the injected random source. */
  newId(): string
  /** `nowMs + seconds`, as a timestamp text. */
  after(seconds: number): string
  /** The signing hash of the Command being handled (§6.4). */
  readonly commandHash: string
  /**
   * The Coordinator Epoch the Command carries, if any. The ingress admitted it only as the current
   * epoch, from the current Coordinator under a live lease (§7.2), so a Command carrying it is under
   * the current Coordinator lease; one without it is not, whoever signs it (§15.1). Role checks read
   * it through `isCurrentCoordinator`.
   */
  readonly coordinatorEpoch: number | undefined
  /**
   * Verifies a Signed Document embedded in the Command (Evidence, Artifact manifest, Approval,
   * Context Package, Agent Card, Group Snapshot) through all six stages of §6.4 against the
   * Registry, and checks its schema. Throws `ProtocolError` (`AUTH_INVALID_SIGNATURE`,
   * `SCHEMA_VALIDATION_FAILED` or `PROTOCOL_VIOLATION`) when it fails. Trusted in-process
   * Commands (benchmarks, the simulator) skip the signature stages but not the schema.
   */
  verifyDocument(kind: 'agent-card' | 'approval' | 'artifact' | 'context-package' | 'evidence' | 'group-snapshot', document: unknown): void
}

/**
 * The Command a {@link HandlerContext} is made for, as the pipeline holds it (a decoded Command):
 * the envelope members the context exposes, and where its signing hash comes from.
 */
export interface CommandSource {
  readonly command: { readonly coordinatorEpoch?: number | undefined }
  readonly commandHash: string
}

/** Makes the {@link HandlerContext} of one Command; see {@link contextFactory}. */
export type ContextFactory = (group: GroupState | undefined, now: string, nowMs: number, verifyDocument: HandlerContext['verifyDocument'], source: CommandSource) => HandlerContext

/** What {@link contextFactory} keeps for a pipeline's life. */
type FixedContext = Pick<HandlerContext, 'state' | 'authority' | 'policy' | 'newId'>

/**
 * One Command's {@link HandlerContext}. A class of the module, not an object on a per-pipeline
 * prototype: every Authority in the process then hands its handlers contexts of one hidden class,
 * so the handlers' property reads stay monomorphic however many Authorities run (tests, the
 * simulator, a host serving several Organizations). Building one is a single allocation with no
 * closure; the hash source sits in a private field, out of handlers' way.
 */
class CommandContext implements HandlerContext {
  readonly state: AuthorityState
  readonly authority: ActorRef
  readonly policy: AuthorityPolicy
  readonly newId: () => string
  readonly group: GroupState | undefined
  readonly now: string
  readonly nowMs: number
  readonly verifyDocument: HandlerContext['verifyDocument']
  readonly coordinatorEpoch: number | undefined
  readonly #hashSource: { readonly commandHash: string }

  constructor(fixed: FixedContext, group: GroupState | undefined, now: string, nowMs: number, verifyDocument: HandlerContext['verifyDocument'], source: CommandSource) {
    this.state = fixed.state
    this.authority = fixed.authority
    this.policy = fixed.policy
    this.newId = fixed.newId
    this.group = group
    this.now = now
    this.nowMs = nowMs
    this.verifyDocument = verifyDocument
    this.coordinatorEpoch = source.command.coordinatorEpoch
    this.#hashSource = source
  }

  after(seconds: number): string {
    return timestampOf(this.nowMs + seconds * 1000)
  }

  /** Read from the hash source on every access, so a source that computes on first read (the trusted path) computes only if a handler asks. */
  get commandHash(): string {
    return this.#hashSource.commandHash
  }
}

/**
 * The contexts a pipeline hands its handlers: what stays the same for the pipeline's life (state,
 * Principal, policy, ID source) with what each Command brings (Group, clock reading, document
 * verifier, the Command with its hash source), as one {@link CommandContext}.
 */
export function contextFactory(fixed: FixedContext): ContextFactory {
  const kept: FixedContext = { state: fixed.state, authority: fixed.authority, policy: fixed.policy, newId: fixed.newId }
  return (group, now, nowMs, verifyDocument, source) => new CommandContext(kept, group, now, nowMs, verifyDocument, source)
}

/**
 * Throws the `ProtocolError` a handler rejects with. Handlers throw nothing else: the pipeline turns
 * any other exception into `INTERNAL_ERROR` and appends nothing.
 */
export function reject(code: ErrorCode, message: string, details?: Record<string, unknown>): never {
  throw new ProtocolError(code, message, details === undefined ? {} : { details })
}

/** The Group a Group-scoped Command names, or `GROUP_NOT_FOUND` (§17.2: absent and hidden look alike). */
export function requireGroup(ctx: HandlerContext): GroupState {
  if (ctx.group === undefined) reject('GROUP_NOT_FOUND', 'group not found')
  return ctx.group
}
