/**
 * The admission checks of a Group Authority, after a Command is decoded (`./decode.ts`: size and
 * the six §6.4 stages), in the order of its walk (ARCHITECTURE): the kind and payload schema,
 * critical extensions, freshness, an Agent's card and key standing, idempotency by (actor, Action
 * ID), Session, Membership and Coordinator Epochs, issuer type, and `expectedRevision`. Each check
 * reads the state and throws a `ProtocolError` with the most specific §19 code; none writes
 * anything. The first failing check decides the answer.
 *
 * Every refusal carries a protected `Diagnostic` as its `cause` (`./refusal.ts`): which check
 * failed and why. The Authority keeps it in its audit record and never sends it (§6.4).
 * @module
 */
import { GENERIC_WIRE_MESSAGES } from '@weft/codec'
import { aggregateIdReader, BOUNDED_OFFLINE_EXECUTION, COMMAND_CATALOG, type AggregateIdReader, type Command, type CommandInfo, type CommandKind } from '@weft/spec'
import { commandPayloads } from '@weft/validators/payloads'
import type { AnyCommand } from '../commit/handler.js'
import type { AuthorityPolicy } from '../policy.js'
import { actorKey, aggregateKey, type ActorRef, type AuthorityState, type GroupState } from '../model.js'
import type { AuthorityStore, StoredReceipt } from '../log/store.js'
import { knownTimestampMs } from '@weft/codec/time'
import { standingRefusal } from './standing.js'
import type { Decoded } from './decode.js'
import { refuse, type IngressStage } from './refusal.js'

/** What the checks after the signature read. */
export interface IngressContext {
  readonly state: AuthorityState
  readonly store: AuthorityStore
  readonly policy: AuthorityPolicy
}

/** A Command cleared for its handler. */
export interface Admitted {
  readonly command: AnyCommand
  readonly rule: CommandRule
  /** The Command's Group; absent for Organization-scoped kinds and for the kinds that create one. */
  readonly group: GroupState | undefined
  readonly duplicate?: undefined
}

/** A retry of an accepted Command: its stored receipt (§15.1). */
export interface Duplicate {
  readonly duplicate: StoredReceipt
}

/** §15.1: the kinds that carry the ID of the Group they create, which therefore need not exist yet. */
const CREATES_GROUP: ReadonlySet<string> = new Set<CommandKind>(['mission.create', 'mission.create_follow_up'])

/**
 * Ingress steps after the signature, in order: kind and payload schema, critical extensions,
 * freshness, an Agent's card and key standing, idempotency, Session Epoch, Group and Membership
 * (or control-plane policy for a service), Coordinator Epoch, issuer type, `expectedRevision`.
 * Returns the Command typed by its kind, or the stored receipt when it is an exact retry.
 * @throws ProtocolError with the code of the first failing check.
 */
export function admit(decoded: Decoded, ctx: IngressContext, nowMs: number): Admitted | Duplicate {
  const { command } = decoded
  const rule = ruleOf(command)
  checkExtensions(command)
  checkFreshness(command, ctx.policy, nowMs)
  const actor = command.actor as ActorRef
  checkStanding(command, actor, ctx.state)
  const key = actorKey(actor)
  const prior = ctx.store.receipt(key, command.actionId)
  if (prior !== undefined) {
    // The trusted path computes the signing hash here, on a seen Action ID, not for every Command.
    if (prior.commandHash === decoded.commandHash) return { duplicate: prior }
    refuse('ACTION_ID_COLLISION', 'The Action ID was already used for a different Command.', 'idempotency', 'different-signing-hash')
  }
  checkSession(command, actor, rule, ctx.state)
  const group = checkGroupAndMembership(command, actor, key, rule, ctx)
  // §7.4: an archived Group is closed history; nothing more is appended to it.
  if (group !== undefined && group.group.state === 'archived') refuse('INVALID_STATE_TRANSITION', 'The Group is archived.', 'group', 'group-archived')
  checkCoordinator(command, actor, rule, group, nowMs)
  if (!rule.issuerTypes.includes(actor.type)) refuse('AUTH_FORBIDDEN', `A ${actor.type} may not issue ${command.kind}.`, 'role', 'issuer-type-not-allowed')
  checkRevision(command, rule, group, ctx.state)
  return { command: command as AnyCommand, rule, group }
}

/**
 * A Command kind's entry of the `@weft/spec` catalog (§15.1), read as the rule the checks apply:
 * who may issue it, the epochs it carries, its scope and aggregate, what it may emit.
 */
export type CommandRule = CommandInfo & { readonly kind: CommandKind }

/**
 * The catalog rules by kind. A Map, because a Command's `kind` is a fresh string from its JSON:
 * hashing it beats the keyed lookup of an object with a member per kind.
 */
const RULES: ReadonlyMap<string, CommandRule> = new Map(COMMAND_CATALOG.map((entry): [string, CommandRule] => [entry.kind, entry]))

/** The catalog rule of a known kind whose payload matches its schema. */
function ruleOf(command: Command): CommandRule {
  const rule = RULES.get(command.kind)
  // §18: an `ext.` kind passes the envelope schema, but only catalogued kinds have a transition here.
  if (rule === undefined) refuse('INVALID_COMMAND', `Unknown Command kind ${command.kind}.`, 'kind', 'kind-not-catalogued')
  const payload = commandPayloads[rule.kind]
  if (!payload.check(command.payload)) {
    refuse('SCHEMA_VALIDATION_FAILED', `The ${command.kind} payload does not conform to its schema.`, 'payload', 'payload-schema-invalid', {
      details: { issues: payload.errors(command.payload, { maxErrors: 8 }) },
    })
  }
  return rule
}

/**
 * §18: a critical entry of an Extension Profile this Authority does not interpret is refused;
 * {@link INTERPRETED_CRITICAL_EXTENSIONS} lists the ones its handlers do interpret.
 */
function checkExtensions(command: Command): void {
  if (command.extensions === undefined) return
  const critical = Object.entries(command.extensions ?? {})
    .filter(([profile, entry]) => entry.critical && INTERPRETED_CRITICAL_EXTENSIONS.get(profile)?.has(command.kind) !== true)
    .map(([profile]) => profile)
  if (critical.length > 0) {
    refuse('UNKNOWN_CRITICAL_EXTENSION', 'The Command depends on an Extension Profile this Authority cannot interpret.', 'extensions', 'critical-extension', {
      details: { profiles: critical },
    })
  }
}

/**
 * Extension Profiles whose critical entries the handlers interpret, and on which Command kinds
 * (§11.5: the bounded offline execution binding rides on buffered progress, checkpoints and
 * WorkItem Conversation Messages, whose handlers check it). Anywhere else it stays unknown.
 */
export const INTERPRETED_CRITICAL_EXTENSIONS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  [BOUNDED_OFFLINE_EXECUTION, new Set(['work.checkpoint', 'ext.missionweaveprotocol.core.work_execution_lease_renew', 'message.post'])],
])

/** §6.4: a newly presented Command must fall within the bounded freshness window; failure is AUTH_INVALID_SIGNATURE (§19). */
function checkFreshness(command: Command, policy: AuthorityPolicy, nowMs: number): void {
  // The Command schema (checked before admission, on both paths) made `issuedAt` a §2 timestamp.
  const skew = knownTimestampMs(command.issuedAt) - nowMs
  if (!(Math.abs(skew) <= policy.freshnessSeconds * 1000)) {
    refuse('AUTH_INVALID_SIGNATURE', GENERIC_WIRE_MESSAGES.AUTH_INVALID_SIGNATURE, 'freshness', skew < 0 ? 'issued-too-long-ago' : 'issued-in-the-future', { detail: `${skew} ms` })
  }
}

/**
 * §6.1, §6.4: an Agent acts only under an `active` current Agent Card (`AUTH_FORBIDDEN`), with a key
 * its registered cards hold valid at the Command's signed time (`AUTH_INVALID_SIGNATURE`, stage
 * `admission`). The cards are folded state: a revocation registered through any Authority process
 * of a shared log holds here at once, whatever Registry this one verified the signature with.
 */
function checkStanding(command: Command, actor: ActorRef, state: AuthorityState): void {
  if (actor.type !== 'agent') return
  const refusal = standingRefusal(state, actor.id, command.signature.keyId, command.issuedAt)
  if (refusal !== undefined) throw refusal
}

/** §4.4, §6.3: an Agent Command carries exactly the Agent's current Session Epoch (0 before any session). */
function checkSession(command: Command, actor: ActorRef, rule: CommandRule, state: AuthorityState): void {
  if (actor.type !== 'agent' || !rule.requiredEpochs.agent.includes('session')) return
  const current = state.org.agents.get(actor.id)?.sessionEpoch ?? 0
  const epoch = requireEpoch(command.sessionEpoch, 'sessionEpoch', 'session')
  if (epoch !== current) refuse('AUTH_STALE_SESSION', 'The Session Epoch is not current.', 'session', epoch < current ? 'session-epoch-fenced' : 'session-epoch-not-issued')
}

function requireEpoch(value: number | undefined, name: string, stage: IngressStage): number {
  if (value === undefined) refuse('INVALID_COMMAND', `The Command must carry ${name}.`, stage, `${name}-missing`)
  return value
}

/**
 * §8, §15.1: the named Group must exist (except for the kinds that create it); an Agent or human
 * needs a Membership there, active or provisional, at exactly the envelope's epoch; a service is
 * authorized by Organization policy (the control plane list) instead.
 *
 * §17.2, §19: whoever never held a Membership in the Group learns nothing of it. Their Command is
 * answered exactly as one naming an absent Group (the same code, message and retryability, no
 * details), whatever its kind, its epochs and whether its issuer type may send it; and the answer
 * comes after the same work: a Group lookup, then one Membership lookup that an absent Group skips,
 * before anything else reads the Group. A service outside the control plane is refused before the
 * Group is looked up, so it gets `AUTH_FORBIDDEN` for any Group. A former member (an ended
 * Membership) and a member at a stale epoch knew the Group: they get `MEMBERSHIP_REQUIRED` and
 * `MEMBERSHIP_STALE`.
 */
function checkGroupAndMembership(command: Command, actor: ActorRef, key: string, rule: CommandRule, ctx: IngressContext): GroupState | undefined {
  // §15.1: an Organization-scoped kind names no Group, and the catalog asks no Membership Epoch of one.
  if (rule.scope !== 'group') return undefined
  if (command.groupId === undefined) refuse('INVALID_COMMAND', `${command.kind} is Group-scoped and needs a groupId.`, 'group', 'group-id-missing')
  // §8: Organization policy, not a Membership, authorizes a service; it names no Group.
  if (actor.type === 'service' && !ctx.policy.controlPlane.includes(actor.id)) {
    refuse('AUTH_FORBIDDEN', 'The service is not authorized by Organization policy.', 'membership', 'service-not-control-plane')
  }
  const group = ctx.state.groups.get(command.groupId)
  if (group === undefined) {
    if (CREATES_GROUP.has(command.kind)) return undefined
    groupNotFound('group', 'group-absent')
  }
  // The Group's creator holds no Membership in it yet; its handler refuses a taken Group ID.
  if (actor.type === 'service' || CREATES_GROUP.has(command.kind)) return group
  const id = group.membershipByMember.get(key)
  const membership = id === undefined ? undefined : group.memberships.get(id)
  if (membership === undefined) groupNotFound('membership', 'no-membership')
  if (!rule.requiredEpochs[actor.type].includes('membership')) return group
  const epoch = requireEpoch(command.membershipEpoch, 'membershipEpoch', 'membership')
  if (membership.state === 'ended') {
    if (epoch < membership.membershipEpoch) refuse('MEMBERSHIP_STALE', 'The Membership Epoch is fenced.', 'membership', 'membership-epoch-fenced')
    refuse('MEMBERSHIP_REQUIRED', 'No applicable Membership.', 'membership', 'membership-ended')
  }
  if (epoch !== membership.membershipEpoch) {
    refuse('MEMBERSHIP_STALE', 'The Membership Epoch is fenced.', 'membership', epoch < membership.membershipEpoch ? 'membership-epoch-fenced' : 'membership-epoch-not-issued')
  }
  return group
}

/** §17.2: the one answer for an absent Group and for one the caller may not know of; only the audit tells them apart. */
function groupNotFound(stage: IngressStage, reason: string): never {
  return refuse('GROUP_NOT_FOUND', 'group not found', stage, reason)
}

/**
 * §7.2, §15.1: a Command under the Coordinator lease (one carrying `coordinatorEpoch`, or a kind that
 * requires it) must come from the current Coordinator, at the current epoch, while its lease is live.
 * An epoch below the current one is fenced whoever carries it (`AUTH_STALE_COORDINATOR`); an actor
 * who is not the current Coordinator is not fenced but lacks the role (`AUTH_FORBIDDEN`, §19); the
 * current Coordinator at an epoch never issued, or past its lease, is fenced again. A Command that
 * carries no epoch and needs none here is not under the lease: a handler that would grant it the
 * Coordinator's authority refuses it (`isCurrentCoordinator`, `work-roles.ts`).
 */
function checkCoordinator(command: Command, actor: ActorRef, rule: CommandRule, group: GroupState | undefined, nowMs: number): void {
  const required = rule.coordinatorOnly || (actor.type !== 'service' && rule.requiredEpochs[actor.type].includes('coordinator'))
  if (command.coordinatorEpoch === undefined && !required) return
  const stale = (reason: string): never => refuse('AUTH_STALE_COORDINATOR', 'The Coordinator Epoch is fenced.', 'coordinator', reason)
  if (group === undefined) return stale('no-group')
  const current = group.mission.coordinator
  const epoch = requireEpoch(command.coordinatorEpoch, 'coordinatorEpoch', 'coordinator')
  if (epoch < current.coordinatorEpoch) stale('coordinator-epoch-fenced')
  if (actor.type !== 'agent' || actor.id !== current.agentId) refuse('AUTH_FORBIDDEN', 'Only the current Coordinator acts under the Coordinator lease.', 'coordinator', 'not-the-coordinator')
  if (epoch > current.coordinatorEpoch) stale('coordinator-epoch-not-issued')
  const lease = group.coordinatorLease
  // The lease in state carries a timestamp the Authority wrote.
  if (lease.state !== 'active' || !(knownTimestampMs(lease.expiresAt) > nowMs)) stale('coordinator-lease-expired')
}

/** §15.3: when the Command names an expected revision, it must equal the current revision of the kind's aggregate. */
function checkRevision(command: Command, rule: CommandRule, group: GroupState | undefined, state: AuthorityState): void {
  if (command.expectedRevision === undefined) return
  const current = currentRevision(command, rule, group, state)
  if (current !== command.expectedRevision) {
    refuse('REVISION_CONFLICT', 'The expected revision does not match the current revision.', 'revision', 'revision-mismatch', {
      details: { expectedRevision: command.expectedRevision, currentRevision: current },
    })
  }
}

/** The catalog's `aggregateIdAt` of each Command kind, compiled once (§15.1: the aggregate a Command targets). */
const AGGREGATE_IDS: ReadonlyMap<string, AggregateIdReader> = new Map(COMMAND_CATALOG.map((entry): [string, AggregateIdReader] => [entry.kind, aggregateIdReader(entry.aggregateIdAt)]))

/**
 * The current revision of the aggregate a Command targets (0 when it does not exist yet), the
 * aggregate found where the catalog's `aggregateIdAt` points. A Group aggregate's revision is the
 * one its Events advance (the same key, see `aggregateIdIn` in `../commit/transact.ts`); the
 * Organization's Agent Registry entry counts registered card versions and a session its epoch.
 */
export function currentRevision(command: Command, rule: CommandRule, group: GroupState | undefined, state: AuthorityState): number {
  const id = (AGGREGATE_IDS.get(rule.kind) as AggregateIdReader)(command)
  if (id === undefined) return 0
  switch (rule.aggregate) {
    case 'agent':
      return state.org.agents.get(id)?.cardVersions.length ?? 0
    case 'session':
      return state.org.agents.get(id)?.sessionEpoch ?? 0
    default:
      return group?.revisions.get(aggregateKey(rule.aggregate, id)) ?? 0
  }
}
