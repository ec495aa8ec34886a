/**
 * The Authorization Service (§12): short-lived, least-privilege capability tokens for the current
 * owner of an `active` WorkItem, bound to its Execution Lease (§11.3).
 *
 * A token is an opaque bearer string, `wct_` and the unpadded base64url of a random 16-byte token
 * ID followed by an HMAC-SHA256 over that ID and the token's claims. The claims stay in the service,
 * so the string carries nothing readable, and a token whose claims were changed, or which another
 * key made, does not verify.
 *
 * Every {@link AuthorizationService.check} reads the Authority's current state again, so the §12
 * revocations need no call: cancellation, failure, Mission termination, session replacement,
 * reassignment and the end of the Execution Lease each stop the tokens bound to it.
 *
 * Codes, in the order the checks run:
 *
 * | what | code |
 * | --- | --- |
 * | a string that is no token, a forged or unknown one, a revoked or rotated one | `AUTH_FORBIDDEN` |
 * | the Mission is no longer `active`; the WorkItem was cancelled, failed or verified (§12: termination revokes) | `AUTH_FORBIDDEN` |
 * | the Agent's card is not active, or another Agent presents the token | `AUTH_FORBIDDEN` |
 * | the Agent opened a newer session than the token's (§6.3) | `AUTH_STALE_SESSION` |
 * | the token's Ownership Epoch is no longer current (§4.5) | `WORK_STALE_OWNERSHIP` |
 * | the token's Execution Lease ended: released, expired, revoked or superseded (§11.3) | `WORK_LEASE_EXPIRED` |
 * | the lease is still current but the token's own expiry passed | `AUTH_FORBIDDEN` |
 * | an operation or resource the token does not grant | `AUTH_FORBIDDEN` |
 * | a cost over the token's limits or over the authoritative remaining budget | `BUDGET_EXCEEDED` |
 *
 * Tokens live in this service's memory only: they are never written to an Event, a Message, an
 * Artifact or a Context Package (§12), and an Authority's log replays without them.
 * @module
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { canonicalizeOrThrow, decodeBase64url, deepFreeze, encodeBase64url, UsageError } from '@weft/codec'
import { USAGE_DIMENSIONS, type Lease, type ResourceBudget, type UsageDimension, type WorkItemState } from '@weft/spec'
import { TERMINAL_WORK_ITEM_STATES } from '@weft/spec/machines'
import { systemClock, systemRandom, timestampOf, type Clock, type RandomSource } from '@weft/codec/time'
import { requireCurrentExecution, requireOwner } from './domain/leases.js'
import { limitsOf, remainingBudget, requireUsageFits, usageOf, type Limits, type Usage } from './domain/work-budget.js'
import { reject as refuse } from './commit/handler.js'
import type { AuthorityPolicy } from './policy.js'
import type { AgentRecord, AuthorityState, GroupState, WorkItemRecord } from './model.js'

/** Where the service reads the authoritative state: an `Authority`, or any `{ state }`. */
export interface AuthorizationSource {
  readonly state: AuthorityState
}

/** Options of {@link createAuthorizationService}. */
export interface AuthorizationServiceOptions {
  readonly authority: AuthorizationSource
  /** Default: the wall clock. Give the Authority's clock so both agree on every expiry. */
  readonly clock?: Clock
  /** Random bytes for token IDs and, without {@link secret}, the MAC key. Default: `node:crypto`. */
  readonly random?: RandomSource
  /** The HMAC-SHA256 key, at least 32 bytes. Default: 32 bytes from {@link random}, so tokens die with the service. */
  readonly secret?: Uint8Array
  /** The Organization policy that may raise a WorkItem's execution approval to `policy_required` (as the Authority's). */
  readonly policy?: Pick<AuthorityPolicy, 'requiresExecutionApproval'>
}

/** What a token is bound to (§12): one Agent executing one WorkItem under one Execution Lease. */
export interface TokenBinding {
  /** The Agent the token is for: the WorkItem's owner. */
  readonly agentId: string
  readonly groupId: string
  readonly workItemId: string
  readonly ownershipEpoch: number
  /** The current Execution Lease of the WorkItem. */
  readonly executionLeaseId: string
}

/** What a token may be asked for (§12): one execution of one WorkItem, and exactly these rights. */
export interface TokenRequest extends TokenBinding {
  /** Operations asked for; each must be allowed on each asked resource by the Work Contract. */
  readonly operations: readonly string[]
  /** Resource IDs asked for. */
  readonly resources: readonly string[]
  /**
   * Spending limits per usage dimension (money in microunits, as the budget ledger counts it). A
   * dimension left out gets the most the caps allow, and stays unlimited only where nothing caps it.
   */
  readonly limits?: Limits
  /** Wanted lifetime; the token still ends with the Execution Lease when that comes first. */
  readonly ttlSeconds: number
}

/** What {@link AuthorizationService.rotate} may keep of the old token: only less, never more. */
export interface TokenNarrowing {
  readonly operations?: readonly string[]
  readonly resources?: readonly string[]
  readonly limits?: Limits
  /** At most the old token's lifetime. */
  readonly ttlSeconds?: number
}

/** What a token grants and what it is bound to (§12). Frozen; only the service holds the original. */
export interface CapabilityClaims extends TokenBinding {
  readonly tokenId: string
  /** The Session Epoch of the Execution Lease, the Agent's current one at issue. */
  readonly sessionEpoch: number
  readonly missionId: string
  readonly operations: readonly string[]
  readonly resources: readonly string[]
  /** What may be spent under the token and its rotations together, counted from the first issue. */
  readonly limits: Readonly<Limits>
  readonly issuedAt: string
  /** Never after the Execution Lease's expiry at issue. */
  readonly expiresAt: string
  /** The token this one replaced by rotation. */
  readonly parentTokenId?: string
  /** The Execution Approval the rights were granted under, when the WorkItem needs one. */
  readonly approvalId?: string
}

/** A freshly issued token: the bearer string (hand it only to {@link CapabilityClaims.agentId}) and its claims. */
export interface IssuedToken {
  readonly token: string
  readonly claims: CapabilityClaims
}

/** One use of a token, checked by {@link AuthorizationService.check}. */
export interface TokenUse {
  readonly operation: string
  readonly resource: string
  /** What the use will spend; checked against the token's limits and the remaining budget. */
  readonly cost?: Limits
  /** The authenticated Agent presenting the token, when known: it must be the token's Agent. */
  readonly agentId?: string
}

/** The Authorization Service of §12. */
export interface AuthorizationService {
  /**
   * Issues a token after acceptance and any approval gate (§12): `agentId` owns the WorkItem under
   * the current `ownershipEpoch`; `executionLeaseId` is the current, live Execution Lease, held
   * under the Agent's current Session Epoch; every asked operation is allowed on every asked
   * resource by the Work Contract and, when the WorkItem needs an Execution Approval, by a valid
   * approval for the epoch. Limits are capped by the contract budget, the remaining budget of the
   * WorkItem, its WorkItem ancestry and the Mission, and the approval budget.

   * @throws ProtocolError `GROUP_NOT_FOUND`, `INVALID_COMMAND` (unknown WorkItem, nothing asked),
   * the liveness codes of the module table, `AUTH_FORBIDDEN` (outside the contract),
   * `APPROVAL_REQUIRED`, `BUDGET_EXCEEDED`.
   * @throws UsageError on a malformed request.
   * @example
   * ```ts
   * const { token } = service.issue({ agentId, groupId, workItemId, ownershipEpoch, executionLeaseId,
   *   operations: ['write'], resources: ['urn:example:repo'], limits: { toolCalls: 5 }, ttlSeconds: 300 })
   * service.check(token, { operation: 'write', resource: 'urn:example:repo', cost: { toolCalls: 1 } })
   * ```
   */
  issue(request: TokenRequest): IssuedToken
  /**
   * A new token for the same Execution Lease (§11.3), with the old rights or fewer, and the old one
   * revoked. The old token must still pass every check but the use. Its expiry is recomputed from
   * now, still capped by the lease. The approval gate was passed at issue and is not asked again:
   * the new rights are a subset of rights it already covered.
   * @throws ProtocolError as {@link check}, or `AUTH_FORBIDDEN` when `narrower` widens anything.
   */
  rotate(token: string, narrower?: TokenNarrowing): IssuedToken
  /**
   * Checks one use of `token` against its claims and the current authoritative state (the table of
   * the module). Nothing is recorded: spending is what the usage ledger records.
   * @returns The token's claims.
   * @throws ProtocolError with the code of the first failing check.
   */
  check(token: string, use: TokenUse): CapabilityClaims
  /** Revokes one token; `false` when it is unknown or was already revoked. */
  revoke(token: string): boolean
  /** Revokes every token of a WorkItem; returns how many were live. */
  revokeForWorkItem(groupId: string, workItemId: string): number
  /** Revokes every token of an Agent; returns how many were live. */
  revokeForAgent(agentId: string): number
  /** Forgets revoked and expired tokens (afterwards they check as unknown, still `AUTH_FORBIDDEN`); returns how many. */
  prune(): number
}

/** A token kept by the service. */
interface Entry {
  readonly claims: CapabilityClaims
  readonly ttlSeconds: number
  /** The WorkItem's own usage when the first token of the rotation chain was issued. */
  readonly baseline: Usage
  revoked?: string
}

/** The grant of an Execution Approval (the `approval.execution.granted` payload members the service needs). */
interface ApprovalScope {
  readonly approvalId: string
  readonly operations: readonly string[]
  readonly resources: readonly string[]
  readonly budget: ResourceBudget
}

const PREFIX = 'wct_'
const ID_BYTES = 16
const MAC_BYTES = 32
/** Domain separation: these MACs can never be mistaken for another use of the same key. */
const MAC_CONTEXT = new TextEncoder().encode('weft capability token v1\0')
/** §12: cancellation and failure revoke; a verified WorkItem has nothing left to execute. */
const ENDED_STATES: readonly WorkItemState[] = [...TERMINAL_WORK_ITEM_STATES, 'failed']

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex')

/**
 * Creates an {@link AuthorizationService} over an Authority's state.
 * @throws UsageError on bad options.
 */
export function createAuthorizationService(options: AuthorizationServiceOptions): AuthorizationService {
  const source = options?.authority
  if (typeof source?.state !== 'object' || source.state === null) throw new UsageError('authority must be an Authority or { state: AuthorityState }')
  if (options.clock !== undefined && typeof options.clock.now !== 'function') throw new UsageError('clock must be { now(): number }')
  if (options.random !== undefined && typeof options.random !== 'function') throw new UsageError('random must be a function (n) => Uint8Array')
  const clock = options.clock ?? systemClock
  const random = options.random ?? systemRandom
  const secret = Uint8Array.from(options.secret ?? random(32))
  if (secret.length < 32) throw new UsageError('secret must be at least 32 bytes')
  const entries = new Map<string, Entry>()

  const macOf = (id: Uint8Array, claims: CapabilityClaims): Uint8Array => createHmac('sha256', secret).update(MAC_CONTEXT).update(id).update(canonicalizeOrThrow(claims)).digest()

  function mint(claims: Omit<CapabilityClaims, 'tokenId' | 'issuedAt' | 'expiresAt'>, lease: { readonly expiresAt: string }, ttlSeconds: number, baseline: Usage): IssuedToken {
    const nowMs = clock.now()
    const id = random(ID_BYTES).slice(0, ID_BYTES)
    if (id.length < ID_BYTES) throw new UsageError('random returned fewer bytes than asked')
    // §11.3, §12: a token never outlives the Execution Lease it was issued under.
    const expiresMs = Math.min(nowMs + ttlSeconds * 1000, Date.parse(lease.expiresAt))
    const full: CapabilityClaims = deepFreeze({ ...claims, tokenId: `urn:weft:capability-token:${hex(id)}`, issuedAt: timestampOf(nowMs), expiresAt: timestampOf(expiresMs) })
    entries.set(hex(id), { claims: full, ttlSeconds, baseline: { ...baseline } })
    const token = PREFIX + encodeBase64url(Uint8Array.from([...id, ...macOf(id, full)]))
    return { token, claims: full }
  }

  /** The kept entry of a genuine, unrevoked token. */
  function open(token: string): Entry {
    const body = typeof token === 'string' && token.startsWith(PREFIX) ? decodeBase64url(token.slice(PREFIX.length)) : undefined
    if (body === undefined || body.length !== ID_BYTES + MAC_BYTES) refuse('AUTH_FORBIDDEN', 'not a capability token')
    const id = body.subarray(0, ID_BYTES)
    const entry = entries.get(hex(id))
    if (entry === undefined || !timingSafeEqual(macOf(id, entry.claims), body.subarray(ID_BYTES))) refuse('AUTH_FORBIDDEN', 'unknown capability token')
    if (entry.revoked !== undefined) refuse('AUTH_FORBIDDEN', `the capability token was revoked: ${entry.revoked}`)
    return entry
  }

  /** Checks a token is still bound to live authority (the liveness rows of the module table) and unexpired. */
  function live(entry: Entry, nowMs: number): Binding {
    const binding = requireLive(source.state, entry.claims, entry.claims.sessionEpoch, nowMs)
    if (nowMs >= Date.parse(entry.claims.expiresAt)) refuse('AUTH_FORBIDDEN', `the capability token expired at ${entry.claims.expiresAt}`)
    return binding
  }

  function revokeWhere(match: (claims: CapabilityClaims) => boolean, reason: string): number {
    let count = 0
    for (const entry of entries.values()) {
      if (entry.revoked !== undefined || !match(entry.claims)) continue
      entry.revoked = reason
      count++
    }
    return count
  }

  return Object.freeze({
    issue(request: TokenRequest): IssuedToken {
      checkRequest(request)
      const nowMs = clock.now()
      const { group, record, lease } = requireLive(source.state, request, undefined, nowMs)
      const operations = unique(request.operations)
      const resources = unique(request.resources)
      if (operations.length === 0 || resources.length === 0) refuse('INVALID_COMMAND', 'a capability token grants at least one operation on one resource')
      requireWithinContract(record, operations, resources)
      const approval = approvalFor(options.policy, group, record, request.ownershipEpoch, nowMs, operations, resources)
      const caps = capsOf(source.state, group, record, approval?.budget)
      const limits: Limits = { ...caps }
      for (const [dimension, asked] of Object.entries(request.limits ?? {}) as [UsageDimension, number][]) {
        const cap = caps[dimension]
        if (cap !== undefined && asked > cap) refuse('BUDGET_EXCEEDED', `${dimension} ${asked} exceeds what is left to spend (${cap})`, { dimension, limit: cap, requested: asked })
        limits[dimension] = asked
      }
      return mint(
        {
          agentId: request.agentId,
          sessionEpoch: lease.sessionEpoch,
          missionId: group.missionId,
          groupId: group.groupId,
          workItemId: record.doc.workItemId,
          ownershipEpoch: request.ownershipEpoch,
          executionLeaseId: lease.leaseId,
          operations,
          resources,
          limits: ordered(limits),
          ...(approval === undefined ? {} : { approvalId: approval.approvalId }),
        },
        lease,
        request.ttlSeconds,
        usageOf(record).own,
      )
    },

    rotate(token: string, narrower: TokenNarrowing = {}): IssuedToken {
      checkNarrowing(narrower)
      const entry = open(token)
      const { lease } = live(entry, clock.now())
      const parent = entry.claims
      const operations = narrower.operations === undefined ? parent.operations : unique(narrower.operations)
      const resources = narrower.resources === undefined ? parent.resources : unique(narrower.resources)
      const ttlSeconds = narrower.ttlSeconds ?? entry.ttlSeconds
      const wider = [
        ...operations.filter((op) => !parent.operations.includes(op)).map((op) => `operation ${op}`),
        ...resources.filter((r) => !parent.resources.includes(r)).map((r) => `resource ${r}`),
        ...widenedLimits(parent.limits, narrower.limits ?? {}),
        ...(ttlSeconds > entry.ttlSeconds ? [`lifetime ${ttlSeconds}s`] : []),
      ]
      if (wider.length > 0) refuse('AUTH_FORBIDDEN', `a rotation may only narrow a token; it widens ${wider.join(', ')}`, { widened: wider })
      if (operations.length === 0 || resources.length === 0) refuse('INVALID_COMMAND', 'a capability token grants at least one operation on one resource')
      const { tokenId, issuedAt: _issued, expiresAt: _expires, parentTokenId: _parent, ...kept } = parent
      const issued = mint({ ...kept, operations, resources, limits: ordered({ ...parent.limits, ...narrower.limits }), parentTokenId: tokenId }, lease, ttlSeconds, entry.baseline)
      entry.revoked = `rotated into ${issued.claims.tokenId}`
      return issued
    },

    check(token: string, use: TokenUse): CapabilityClaims {
      checkUse(use)
      const entry = open(token)
      const claims = entry.claims
      if (use.agentId !== undefined && use.agentId !== claims.agentId) refuse('AUTH_FORBIDDEN', 'the capability token belongs to another Agent')
      const { group, record } = live(entry, clock.now())
      if (!claims.operations.includes(use.operation)) refuse('AUTH_FORBIDDEN', `the capability token does not grant ${use.operation}`)
      if (!claims.resources.includes(use.resource)) refuse('AUTH_FORBIDDEN', `the capability token does not cover ${use.resource}`)
      if (use.cost !== undefined) {
        const own = usageOf(record).own
        for (const d of USAGE_DIMENSIONS) {
          const limit = claims.limits[d]
          const spent = own[d] - entry.baseline[d]
          const cost = use.cost[d] ?? 0
          if (limit !== undefined && cost > 0 && spent + cost > limit) refuse('BUDGET_EXCEEDED', `${d} would exceed the capability token's limit`, { dimension: d, limit, spent, cost })
        }
        // §12: the ledger is the authority; the token never lets the WorkItem, its ancestry or the Mission overrun.
        if (USAGE_DIMENSIONS.some((d) => (use.cost?.[d] ?? 0) > 0)) requireUsageFits(group, record, use.cost, source.state)
      }
      return claims
    },

    revoke(token: string): boolean {
      try {
        open(token).revoked = 'revoked by request'
        return true
      } catch {
        return false
      }
    },

    revokeForWorkItem: (groupId: string, workItemId: string): number => revokeWhere((c) => c.groupId === groupId && c.workItemId === workItemId, `WorkItem ${workItemId} revoked`),

    revokeForAgent: (agentId: string): number => revokeWhere((c) => c.agentId === agentId, `Agent ${agentId} revoked`),

    prune(): number {
      const nowMs = clock.now()
      let count = 0
      for (const [key, entry] of entries) {
        if (entry.revoked === undefined && nowMs < Date.parse(entry.claims.expiresAt)) continue
        entries.delete(key)
        count++
      }
      return count
    },
  })
}

/** The live records a token is bound to. */
interface Binding {
  readonly group: GroupState
  readonly record: WorkItemRecord
  readonly lease: Lease
  readonly agent: AgentRecord
}

/**
 * Checks the binding of a token (or a request for one) against the current state, in the order of
 * the module table. `sessionEpoch` is the token's; a request has none and takes the lease's.
 */
function requireLive(state: AuthorityState, b: TokenBinding, sessionEpoch: number | undefined, nowMs: number): Binding {
  const group = state.groups.get(b.groupId) ?? refuse('GROUP_NOT_FOUND', 'group not found')
  const record = group.workItems.get(b.workItemId) ?? refuse('INVALID_COMMAND', `unknown WorkItem ${b.workItemId}`, { workItemId: b.workItemId })
  // §12: cancellation or emergency termination revokes every token of the Mission or WorkItem.
  if (group.mission.state !== 'active') refuse('AUTH_FORBIDDEN', `the Mission is ${group.mission.state}`, { missionState: group.mission.state })
  if (ENDED_STATES.includes(record.doc.state)) refuse('AUTH_FORBIDDEN', `WorkItem ${b.workItemId} is ${record.doc.state}`, { state: record.doc.state })
  const agent = state.org.agents.get(b.agentId)
  if (agent === undefined || agent.card.status !== 'active') refuse('AUTH_FORBIDDEN', `Agent ${b.agentId} is not an active registered Agent`)
  // §6.3: a newer session fences everything bound to an older one, tokens included.
  if (sessionEpoch !== undefined && sessionEpoch !== agent.sessionEpoch)
    refuse('AUTH_STALE_SESSION', `Session Epoch ${sessionEpoch} is fenced`, { sessionEpoch, currentSessionEpoch: agent.sessionEpoch })
  const actor = { type: 'agent', id: b.agentId } as const
  requireOwner(record, actor, b.ownershipEpoch)
  // §11.3: checkpoint, block and submission release the Execution Lease; nothing is left to bind to.
  if (record.doc.state !== 'active') refuse('WORK_LEASE_EXPIRED', `WorkItem ${b.workItemId} has no Execution Lease while ${record.doc.state}`, { executionLeaseId: b.executionLeaseId })
  const lease = requireCurrentExecution(group, record, actor, b.ownershipEpoch, b.executionLeaseId, nowMs)
  // §12: bound to the Agent's current Session Epoch.
  if (lease.sessionEpoch !== agent.sessionEpoch)
    refuse('AUTH_STALE_SESSION', `Execution Lease ${lease.leaseId} belongs to Session Epoch ${lease.sessionEpoch}`, { currentSessionEpoch: agent.sessionEpoch })
  return { group, record, lease, agent }
}

/** Least privilege (§12, §4.11): every asked operation must be allowed on every asked resource by the contract. */
function requireWithinContract(record: WorkItemRecord, operations: readonly string[], resources: readonly string[]): void {
  const grants = record.doc.contract.allowedResources
  const outside = resources.flatMap((resource) => operations.filter((op) => !grants.some((g) => g.resource === resource && g.operations.includes(op))).map((op) => `${op} on ${resource}`))
  if (outside.length > 0) refuse('AUTH_FORBIDDEN', `the Work Contract does not allow ${outside.join(', ')}`, { outside })
}

/**
 * The Execution Approval the request is granted under, when the WorkItem needs one (§12: the token
 * is withheld until the approval gate is satisfied): valid now, for the Ownership Epoch, and
 * covering every asked operation and resource.
 * @throws ProtocolError `APPROVAL_REQUIRED` when no approval does.
 */
function approvalFor(
  policy: AuthorizationServiceOptions['policy'],
  group: GroupState,
  record: WorkItemRecord,
  ownershipEpoch: number,
  nowMs: number,
  operations: readonly string[],
  resources: readonly string[],
): ApprovalScope | undefined {
  const mode = record.doc.contract.executionApproval
  const required = mode !== 'not_required' || policy?.requiresExecutionApproval?.(group, record.doc.workItemId) === true
  if (!required) return undefined
  const valid = record.executionApprovals.filter((a) => a.ownershipEpoch === ownershipEpoch && nowMs < Date.parse(a.expiresAt))
  for (const approval of valid) {
    const scope: ApprovalScope = approval
    if (scope !== undefined && operations.every((op) => scope.operations.includes(op)) && resources.every((r) => scope.resources.includes(r))) return scope
  }
  return refuse(
    'APPROVAL_REQUIRED',
    valid.length === 0
      ? `WorkItem ${record.doc.workItemId} needs a valid execution approval for Ownership Epoch ${ownershipEpoch}`
      : `no valid execution approval of WorkItem ${record.doc.workItemId} covers the asked operations and resources`,
  )
}

/**
 * What a token may spend at most per dimension (§12: capped by the Work Contract and the
 * authoritative remaining budget): the least of what is left at every level of the complete
 * ancestry (WorkItems, Mission, across child-Mission links to the root) and the approval budget.
 * Absent: nothing caps it.
 */
function capsOf(state: AuthorityState, group: GroupState, record: WorkItemRecord, approvalBudget: ResourceBudget | undefined): Limits {
  const caps: Limits = { ...remainingBudget(group, record, state) }
  if (approvalBudget !== undefined) {
    for (const [d, limit] of Object.entries(limitsOf(approvalBudget)) as [UsageDimension, number][]) caps[d] = Math.min(caps[d] ?? limit, limit)
  }
  return caps
}

/** The dimensions `narrower` sets above the parent's limit (a dimension the parent leaves unlimited may be limited freely). */
function widenedLimits(parent: Readonly<Limits>, narrower: Limits): string[] {
  return USAGE_DIMENSIONS.filter((d) => {
    const want = narrower[d]
    const had = parent[d]
    return want !== undefined && had !== undefined && want > had
  }).map((d) => `limit ${d}`)
}

/** `limits` with its dimensions in ledger order, so equal claims have equal MAC input. */
function ordered(limits: Limits): Limits {
  const out: Limits = {}
  for (const d of USAGE_DIMENSIONS) if (limits[d] !== undefined) out[d] = limits[d]
  return out
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)]
}

function requireStrings(value: unknown, name: string): void {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new UsageError(`${name} must be an array of strings`)
}

function requireLimits(value: unknown, name: string): void {
  if (value === undefined) return
  if (typeof value !== 'object' || value === null) throw new UsageError(`${name} must be an object of usage dimensions`)
  for (const [dimension, amount] of Object.entries(value)) {
    if (!(USAGE_DIMENSIONS as readonly string[]).includes(dimension)) throw new UsageError(`${name}.${dimension} is not a usage dimension (${USAGE_DIMENSIONS.join(', ')})`)
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0) throw new UsageError(`${name}.${dimension} must be a non-negative safe integer`)
  }
}

function requireTtl(value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) throw new UsageError('ttlSeconds must be a positive number')
}

function checkRequest(r: TokenRequest): void {
  for (const name of ['agentId', 'groupId', 'workItemId', 'executionLeaseId'] as const) {
    if (typeof r?.[name] !== 'string') throw new UsageError(`${name} must be a string`)
  }
  if (!Number.isSafeInteger(r.ownershipEpoch) || r.ownershipEpoch < 1) throw new UsageError('ownershipEpoch must be a positive safe integer')
  requireStrings(r.operations, 'operations')
  requireStrings(r.resources, 'resources')
  requireLimits(r.limits, 'limits')
  requireTtl(r.ttlSeconds)
}

function checkNarrowing(n: TokenNarrowing): void {
  if (typeof n !== 'object' || n === null) throw new UsageError('narrower must be an object')
  if (n.operations !== undefined) requireStrings(n.operations, 'operations')
  if (n.resources !== undefined) requireStrings(n.resources, 'resources')
  requireLimits(n.limits, 'limits')
  if (n.ttlSeconds !== undefined) requireTtl(n.ttlSeconds)
}

function checkUse(u: TokenUse): void {
  if (typeof u?.operation !== 'string' || typeof u.resource !== 'string') throw new UsageError('a use names an operation and a resource')
  requireLimits(u.cost, 'cost')
}

/** A run of token text: the `wct_` prefix and enough base64url to be a token or most of one. */
const TOKEN_PATTERN = /wct_[A-Za-z0-9_-]{16,}/

/** Window length of {@link containsTokenMaterial}: 16 base64url characters are 96 bits, 16 hex digits 64. */
const WINDOW = 16

/** Known secret material for {@link containsTokenMaterial} to look for. */
export interface TokenMaterial {
  /** Issued bearer strings: each is looked for whole and as any 16-character run of its body or MAC. */
  readonly tokens?: Iterable<string>
  /** MAC keys: looked for as any 16-character run of their base64url, base64 and hex spellings. */
  readonly secrets?: Iterable<Uint8Array>
}

/**
 * Whether `text` holds capability-token material (§12: tokens and secrets never appear in
 * Messages, Agent Cards, Context Packages, Artifacts or Group Events): anything shaped like a
 * token, and, when given, any 16-character run of a known token's body or MAC, or of a secret, in
 * the spellings they could leak in.
 * @example
 * ```ts
 * expect(containsTokenMaterial(JSON.stringify(authority.events(groupId)), { tokens: issued })).toBe(false)
 * ```
 */
export function containsTokenMaterial(text: string, known: TokenMaterial = {}): boolean {
  if (TOKEN_PATTERN.test(text)) return true
  const spellings: string[] = []
  for (const token of known.tokens ?? []) {
    const body = token.startsWith(PREFIX) ? token.slice(PREFIX.length) : token
    const mac = decodeBase64url(body)?.subarray(ID_BYTES)
    spellings.push(body, ...(mac === undefined ? [] : spellingsOf(mac)))
  }
  for (const secret of known.secrets ?? []) spellings.push(...spellingsOf(secret))
  return spellings.some((spelling) => windowsOf(spelling).some((w) => text.includes(w)))
}

function spellingsOf(bytes: Uint8Array): string[] {
  const buffer = Buffer.from(bytes)
  return [buffer.toString('base64url'), buffer.toString('base64'), buffer.toString('hex')]
}

function windowsOf(text: string): string[] {
  if (text.length <= WINDOW) return [text]
  return Array.from({ length: text.length - WINDOW + 1 }, (_, i) => text.slice(i, i + WINDOW))
}
