/**
 * The ingress checks of a Group Authority, in the order of a Command's walk (ARCHITECTURE): size,
 * the six §6.4 stages (strict parse, schema, signature), the payload schema, freshness, an Agent's
 * card and key standing, idempotency by (actor, Action ID), Session, Membership and Coordinator
 * Epochs, issuer type, and `expectedRevision`. Each check reads the state and throws a `ProtocolError` with the most
 * specific §19 code; none writes anything. The first failing check decides the answer.
 *
 * Every refusal carries a protected {@link Diagnostic} as its `cause`: which check failed and why.
 * The Authority keeps it in its audit record and never sends it (§6.4).
 * @module
 */
import {
  canonicalize,
  createVerifier,
  GENERIC_WIRE_MESSAGES,
  isDocumentKind,
  parseTimestamp,
  ProtocolError,
  signingHash,
  type DocumentKind,
  type ErrorCode,
  type KeyResolver,
  type SignedVerifier,
  type Stage,
  type VerifyResult,
} from '@weft/codec'
import { BOUNDED_OFFLINE_EXECUTION, COMMAND_CATALOG, CommandPayloads, type Command, type CommandInfo, type CommandKind } from '@weft/spec'
import { validators } from '@weft/validators'
import { commandPayloads } from '@weft/validators/payloads'
import { schemaCheckForKind } from '@weft/validators/signed'
import type { AnyCommand, HandlerContext } from '../commit/handler.js'
import type { AuthorityPolicy } from '../policy.js'
import { actorKey, aggregateKey, type ActorRef, type AuthorityState, type GroupState } from '../model.js'
import type { AuthorityStore, StoredReceipt } from '../log/store.js'
import { parseInstant } from '@weft/codec/time'
import { standingRefusal } from './standing.js'

/** Where in the ingress a Command was refused; kept in the audit record, never sent (§6.4). */
export type IngressStage =
  | 'size'
  | Stage
  | 'kind'
  | 'payload'
  | 'extensions'
  | 'freshness'
  | 'admission'
  | 'card'
  | 'idempotency'
  | 'session'
  | 'group'
  | 'membership'
  | 'coordinator'
  | 'role'
  | 'revision'
  | 'handler'
  | 'commit'

/**
 * The protected diagnostic of a refusal: the check (`stage`), a stable kebab-case `reason`, and
 * free text. For an embedded Signed Document the stage reads `<document kind>:<§6.4 stage>`.
 */
export interface Diagnostic {
  readonly stage: string
  readonly reason: string
  readonly detail?: string
}

/** Throws the refusal `code` with a wire `message` and the protected diagnostic as its cause. */
export function refuse(code: ErrorCode, message: string, stage: IngressStage, reason: string, options: { detail?: string; details?: Record<string, unknown> } = {}): never {
  const cause: Diagnostic = options.detail === undefined ? { stage, reason } : { stage, reason, detail: options.detail }
  throw new ProtocolError(code, message, options.details === undefined ? { cause } : { cause, details: options.details })
}

/** The diagnostic a refusal carries, or one made up for an error thrown without one (a handler's). */
export function diagnosticOf(error: ProtocolError, fallbackStage: IngressStage): Diagnostic {
  const cause = error.cause as Partial<Diagnostic> | undefined
  if (typeof cause?.stage === 'string' && typeof cause.reason === 'string') return cause as Diagnostic
  const detail = cause instanceof Error ? cause.message : undefined
  return detail === undefined ? { stage: fallbackStage, reason: error.message } : { stage: fallbackStage, reason: error.message, detail }
}

/** A Command that passed the signature stages (or the trusted path) with its §6.4 signing hash (which the trusted path computes on first read). */
export interface Decoded {
  readonly command: Command
  readonly commandHash: string
  /** The signing hash if it is known already; reading it never computes it. */
  readonly knownHash: string | undefined
}

/** A §6.4 verifier whose strict parser admits Commands up to `maxCommandBytes`. */
export function commandVerifier(maxCommandBytes: number): SignedVerifier {
  return createVerifier({ validate: schemaCheckForKind, json: { maxBytes: maxCommandBytes } })
}

/**
 * Ingress steps 1–4 for received bytes: the size limit (`PROTOCOL_VIOLATION`), then all six stages
 * of §6.4 (strict parse, Command schema, signature envelope, key resolution, JCS, Ed25519), each
 * failing with its stage's wire code and the one generic message of that code.
 */
export function decodeSigned(input: string | Uint8Array, verifier: SignedVerifier, registry: KeyResolver, maxCommandBytes: number): Decoded {
  checkSize(input, maxCommandBytes)
  return decodedOf(verifier.verify('command', input, registry))
}

/**
 * {@link decodeSigned} with the Ed25519 equation on the libuv threadpool: the size limit and §6.4
 * stages 1–5 run before it returns, stage 6 on another thread (see `verifyAsync` of @weft/codec).
 * Resolves to the same Decoded, or rejects with the same `ProtocolError`, as {@link decodeSigned}.
 * @throws ProtocolError when the size limit or a stage before the signature refuses the input.
 */
export function decodeSignedAsync(input: string | Uint8Array, verifier: SignedVerifier, registry: KeyResolver, maxCommandBytes: number): Promise<Decoded> {
  checkSize(input, maxCommandBytes)
  return verifier.verifyAsync('command', input, registry).then(decodedOf)
}

/** Ingress step 1: text or bytes within the size limit, else `PROTOCOL_VIOLATION`. */
function checkSize(input: unknown, maxCommandBytes: number): asserts input is string | Uint8Array {
  if (typeof input !== 'string' && !(input instanceof Uint8Array)) refuse('PROTOCOL_VIOLATION', GENERIC_WIRE_MESSAGES.PROTOCOL_VIOLATION, 'size', 'not-text-or-bytes')
  // A UTF-16 code unit takes one to three UTF-8 bytes, so only a text in between needs a count: a
  // text longer than the limit is refused without one (counting megabytes is a refusal's main cost).
  if (typeof input === 'string' && input.length > maxCommandBytes) refuse('PROTOCOL_VIOLATION', 'The Command exceeds the size limit.', 'size', 'command-too-large', { detail: `at least ${input.length} bytes` })
  const size = typeof input !== 'string' ? input.byteLength : input.length * 3 <= maxCommandBytes ? 0 : Buffer.byteLength(input, 'utf8')
  if (size > maxCommandBytes) refuse('PROTOCOL_VIOLATION', 'The Command exceeds the size limit.', 'size', 'command-too-large', { detail: `${size} bytes` })
}

/** A verified Command with its signing hash, or the codec's error (generic wire message, stage diagnostic as cause). */
function decodedOf(result: VerifyResult): Decoded {
  if (!result.ok) throw result.error
  const commandHash = result.verified.signingHash
  return { command: result.verified.document as unknown as Command, commandHash, knownHash: commandHash }
}

/**
 * The trusted path's steps 2–3: no bytes, so no size limit or strict parse, and no signature stages;
 * the Command schema still applies. The §6.4 signing hash is computed on first read of
 * `commandHash` and kept: the caller promises not to change the Command, so the hash read later is
 * the full RFC 8785 hash of exactly the Command accepted. Idempotency reads it only when the
 * (actor, Action ID) pair was seen before; otherwise the first reader is an Event's signing (or
 * whoever reads a `commandHash` member first, with deferred Event signatures).
 */
export function decodeTrusted(command: unknown): Decoded {
  if (!validators.command.check(command)) {
    refuse('SCHEMA_VALIDATION_FAILED', GENERIC_WIRE_MESSAGES.SCHEMA_VALIDATION_FAILED, 'schema', 'schema-invalid', {
      details: { issues: validators.command.errors(command, { maxErrors: 8 }) },
    })
  }
  return new TrustedCommand(command)
}

/** A trusted Command whose signing hash is computed on the first read of `commandHash` (see {@link decodeTrusted}). */
class TrustedCommand implements Decoded {
  readonly command: Command
  #hash: string | undefined

  constructor(command: Command) {
    this.command = command
  }

  get commandHash(): string {
    return (this.#hash ??= signingHash(this.command))
  }

  get knownHash(): string | undefined {
    return this.#hash
  }
}

/**
 * `HandlerContext.verifyDocument`: the six §6.4 stages for an embedded Signed Document, given as its
 * canonical JSON; with `registry` undefined (the trusted path) only its schema. There, a document
 * that is a payload member of the Command being handled (`handling`), which the payload schema
 * checked against the document's own schema at admission, is not checked a second time.
 */
export function documentVerifier(verifier: SignedVerifier, registry: KeyResolver | undefined, handling?: () => Command | undefined): HandlerContext['verifyDocument'] {
  return (kind, document) => {
    if (registry === undefined) {
      const command = handling?.()
      if (command !== undefined && checkedWithPayload(command, kind, document)) return
      if (!schemaCheckForKind(kind, document as never)) throw documentError('SCHEMA_VALIDATION_FAILED', kind, 'schema', 'schema-invalid')
      return
    }
    // The document was parsed out of a verified Command, so its JSON text is one the six stages
    // read back to the same value; the native serializer saves a canonicalization the verifier
    // repeats anyway. Anything it cannot write gets the canonical form's own diagnosis.
    const text = jsonText(document)
    if (text === undefined) {
      const jcs = canonicalize(document)
      throw documentError('PROTOCOL_VIOLATION', kind, 'canonicalization', jcs.ok ? 'jcs-unsupported-value' : `jcs-${jcs.reason}`)
    }
    const result = verifier.verify(kind, text, registry)
    if (!result.ok) throw documentError(result.error.code as keyof typeof GENERIC_WIRE_MESSAGES, kind, result.stage, result.reason, result.detail)
  }
}

/** A payload member whose schema is a Signed Document's own (`$ref` to it), or a list of such documents (`each`). */
interface PayloadDocument {
  readonly member: string
  readonly kind: string
  readonly each: boolean
}

/**
 * Per Command kind, the payload members its schema checks with a Signed Document's schema, read off
 * the spec's payload schemas: the validators are generated from the same schemas, so the payload
 * check runs the very check a document's schema stage runs.
 */
const PAYLOAD_DOCUMENTS: ReadonlyMap<string, readonly PayloadDocument[]> = new Map(
  Object.entries(CommandPayloads as Readonly<Record<string, { readonly properties?: Readonly<Record<string, SchemaRef>> }>>).map(([kind, schema]) => [
    kind,
    Object.entries(schema.properties ?? {}).flatMap(([member, property]): PayloadDocument[] => {
      const each = property.type === 'array'
      const document = documentKindOf(each ? property.items?.$ref : property.$ref)
      return document === undefined ? [] : [{ member, kind: document, each }]
    }),
  ]),
)

/** The part of a payload member's schema {@link PAYLOAD_DOCUMENTS} reads. */
interface SchemaRef {
  readonly $ref?: string
  readonly type?: string
  readonly items?: { readonly $ref?: string }
}

/** The Signed Document kind a `$ref` names (`evidence.schema.json` -> `evidence`), or `undefined`. */
function documentKindOf(ref: string | undefined): string | undefined {
  const kind = ref?.endsWith('.schema.json') === true ? ref.slice(0, -'.schema.json'.length) : undefined
  return kind !== undefined && isDocumentKind(kind) ? kind : undefined
}

/** Whether `document` is a payload member of `command` that its payload schema checked as a `kind` document. */
export function checkedWithPayload(command: Command, kind: string, document: unknown): boolean {
  const members = PAYLOAD_DOCUMENTS.get(command.kind)
  if (members === undefined) return false
  const payload = command.payload as Readonly<Record<string, unknown>>
  for (const m of members) {
    if (m.kind !== kind) continue
    const value = payload[m.member]
    if (value === document || (m.each && Array.isArray(value) && value.includes(document))) return true
  }
  return false
}

/** `JSON.stringify` of a value, or `undefined` when it has no JSON text (a cycle, a bigint, `undefined` itself). */
export function jsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value) as string | undefined
  } catch {
    return undefined
  }
}

function documentError(code: keyof typeof GENERIC_WIRE_MESSAGES, kind: DocumentKind, stage: Stage, reason: string, detail?: string): ProtocolError {
  const cause: Diagnostic = { stage: `${kind}:${stage}`, reason, ...(detail === undefined ? {} : { detail }) }
  return new ProtocolError(code, GENERIC_WIRE_MESSAGES[code], { cause })
}

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
  [
    BOUNDED_OFFLINE_EXECUTION,
    new Set(['work.checkpoint', 'ext.missionweaveprotocol.core.work_execution_lease_renew', 'message.post']),
  ],
])

/** An RFC 3339 text as epoch milliseconds (fraction digits past the millisecond kept as a fraction). */
export function epochMs(text: string): number {
  const t = parseTimestamp(text)
  if (t === undefined) return Number.NaN
  return t.seconds * 1000 + (t.fraction === '' ? 0 : Number(`0.${t.fraction}`) * 1000)
}

/** {@link epochMs}'s value of each millisecond fraction `.000`–`.999`, float rounding included. */
const FRACTION_MS: readonly number[] = Array.from({ length: 1000 }, (_, i) => {
  const digits = String(i).padStart(3, '0').replace(/0+$/, '')
  return digits === '' ? 0 : Number(`0.${digits}`) * 1000
})

/**
 * {@link epochMs} of a text already known to be a §2 timestamp (it passed a schema, or the Authority
 * wrote it), to the last bit. Its most common form, `YYYY-MM-DDTHH:MM:SS.sssZ` (what `toISOString`
 * writes), is exactly the ECMAScript date-time string format, which `Date.parse` reads natively
 * (here through {@link parseInstant}); the fraction is then added as {@link epochMs} adds it.
 */
export function knownEpochMs(text: string): number {
  if (text.length !== 24 || text.charCodeAt(23) !== 0x5a || text.charCodeAt(19) !== 0x2e) return epochMs(text)
  const ms = parseInstant(text)
  const fraction = ((ms % 1000) + 1000) % 1000
  return ms - fraction + FRACTION_MS[fraction]!
}

/** §6.4: a newly presented Command must fall within the bounded freshness window; failure is AUTH_INVALID_SIGNATURE (§19). */
function checkFreshness(command: Command, policy: AuthorityPolicy, nowMs: number): void {
  // The Command schema (checked before admission, on both paths) made `issuedAt` a §2 timestamp.
  const skew = knownEpochMs(command.issuedAt) - nowMs
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
  if (lease.state !== 'active' || !(knownEpochMs(lease.expiresAt) > nowMs)) stale('coordinator-lease-expired')
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

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/**
 * The current revision of the aggregate a Command targets (0 when it does not exist yet). Group
 * aggregates are identified as their Events are (see `aggregateIdOf` in `../commit/transact.ts`); the
 * Organization's Agent Registry entry counts registered card versions and a session its epoch.
 */
export function currentRevision(command: Command, rule: CommandRule, group: GroupState | undefined, state: AuthorityState): number {
  const p = command.payload as Record<string, unknown>
  let id: string | undefined
  switch (rule.aggregate) {
    case 'agent':
      return state.org.agents.get(text((p['card'] as Record<string, unknown> | undefined)?.['agentId']) ?? '')?.cardVersions.length ?? 0
    case 'session':
      return state.org.agents.get(text(p['agentId']) ?? '')?.sessionEpoch ?? 0
    case 'workItem':
      id = text(p['workItemId']) ?? text(p['parentWorkItemId']) ?? text(p['proposalId']) ?? command.workItemId
      break
    case 'membership':
      id = text(p['membershipId']) ?? text(p['grantId'])
      break
    case 'message':
      id = text(p['targetMessageId']) ?? text(p['messageId'])
      break
    case 'approval':
      id = text(p['approvalId'])
      break
    case 'artifact':
      id = text((p['artifact'] as Record<string, unknown> | undefined)?.['artifactId'])
      break
    default:
      id = command.groupId
  }
  return id === undefined ? 0 : (group?.revisions.get(aggregateKey(rule.aggregate, id)) ?? 0)
}
