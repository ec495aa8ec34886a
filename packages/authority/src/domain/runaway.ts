/**
 * Runaway controls (§20): Organization limits on Message and proposal rates and on queued and
 * active WorkItems, and the one-shot Cooperation Override Grants that let one exact Command pass
 * one exceeded limit.
 *
 * Rates are counted in a sliding window on the Authority clock from a bounded per-actor ring of
 * recent acceptance times. Reducers feed the ring ({@link noteRate}) from each accepted Event's
 * `occurredAt`, so replay rebuilds it and a check costs the same however long the log is.
 *
 * A grant is consumed by the reducer of the target Command's first Event ({@link consumeOverride}):
 * the Event's cause is the target Action ID and its actor the beneficiary, so the consumption sits
 * in the same transaction as the accepted transition and links to that Event through its cause.
 * @module
 */
import { ProtocolError } from '@weft/codec/errors'
import type { Event } from '@weft/spec'
import { reject, type CommandOf, type HandlerContext } from '../commit/handler.js'
import { actorKey, type ActorRef, type AuthorityState, type GroupState, type OverrideRecord } from '../model.js'
import { sameActor } from './memberships.js'
import { parseInstant } from '@weft/codec/time'

/** The cooperation policies this Authority enforces, by their §20 policy names. */
export type CooperationLimit = 'message_rate' | 'proposal_rate' | 'queued_work_items' | 'active_work_items'

/** The rate policies, counted in a sliding window. */
export type RateLimit = Extract<CooperationLimit, 'message_rate' | 'proposal_rate'>

/** The length of the sliding rate window, in milliseconds (the policy limits are per minute). */
export const RATE_WINDOW_MS = 60_000

/** The most recent acceptance times kept per actor and rate; a per-minute limit may not exceed it. */
export const RATE_RING_CAPACITY = 1024

function targetKey(actor: ActorRef, actionId: string): string {
  return `${actorKey(actor)} ${actionId}`
}

/**
 * Reducer side of a rate: records that `event`'s actor had one more `rate` action accepted at the
 * Event's `occurredAt`. Times older than the window, and beyond {@link RATE_RING_CAPACITY}, are
 * dropped, so the ring stays bounded.
 */
export function noteRate(state: AuthorityState, event: Event, rate: RateLimit): void {
  const group = state.groups.get(event.groupId as string)
  if (group === undefined) return
  // `GroupState.rateWindows`: acceptance times per rate and actor, a fold of the log.
  let perGroup = group.rateWindows
  if (perGroup === undefined) group.rateWindows = perGroup = new Map()
  const key = `${rate} ${actorKey(event.actor as ActorRef)}`
  const at = parseInstant(event.occurredAt)
  let ring = perGroup.get(key)
  if (ring === undefined) perGroup.set(key, (ring = []))
  // The ring is private to this module, so it is pruned in place: no array per Message.
  let kept = 0
  for (let i = 0; i < ring.length; i++) {
    const t = ring[i]!
    if (t > at - RATE_WINDOW_MS) ring[kept++] = t
  }
  ring.length = kept
  ring.push(at)
  if (ring.length > RATE_RING_CAPACITY) ring.splice(0, ring.length - RATE_RING_CAPACITY)
}

/** How many `rate` actions of `actor` were accepted in the window ending now, oldest time first. */
export function recentActions(group: GroupState, actor: ActorRef, rate: RateLimit, nowMs: number): readonly number[] {
  const ring = group.rateWindows?.get(`${rate} ${actorKey(actor)}`) ?? []
  return ring.filter((t) => t > nowMs - RATE_WINDOW_MS && t <= nowMs)
}

/**
 * Reducer side of a grant: indexes a newly granted override by its beneficiary and target Action ID
 * (called by the `policy.cooperation_override.granted` reducer).
 */
export function indexOverride(group: GroupState, record: OverrideRecord): void {
  // `GroupState.overridesByTarget`, so consumption is a lookup, not a scan.
  let index = group.overridesByTarget
  if (index === undefined) group.overridesByTarget = index = new Map()
  index.set(targetKey(record.grant.beneficiary as ActorRef, record.grant.targetActionId), record.grant.grantId)
}

/**
 * Reducer side of consumption (§20): when `event` is caused by the Command a grant targets (same
 * Action ID, issued by the beneficiary), the grant is marked consumed by that Action. The first
 * Event of the transaction consumes it; later ones find it consumed. Any accepted target consumes
 * its grant, cited or not: the Action is then spent, so the grant could never match again.
 */
export function consumeOverride(state: AuthorityState, event: Event): void {
  if (event.cause.type !== 'command') return
  const group = state.groups.get(event.groupId as string)
  // Every Event of every kind passes here; a Group that never granted an override has nothing to spend.
  if (group === undefined || group.overrides.size === 0) return
  const grantId = group.overridesByTarget?.get(targetKey(event.actor as ActorRef, event.cause.id))
  const record = grantId === undefined ? undefined : group.overrides.get(grantId)
  if (record !== undefined && record.consumedByActionId === undefined) record.consumedByActionId = event.cause.id
}

/** The Command fields a limit check reads. */
export type LimitedCommand = Pick<CommandOf<never>, 'actor' | 'actionId' | 'cooperationOverrideGrantId'> & { readonly kind: string }

/**
 * The Cooperation Override Grant the Command cites, checked against every binding §20 lists except
 * the policy name: it exists in this Group's Policy Log, is unconsumed and unexpired, and names this
 * Mission, Group, actor, Command kind and Action ID. `undefined` when the Command cites none.
 * @throws ProtocolError `AUTH_FORBIDDEN` for a cited grant that does not fit the Command.
 */
export function citedOverride(command: LimitedCommand, group: GroupState, nowMs: number): OverrideRecord | undefined {
  const grantId = command.cooperationOverrideGrantId
  if (grantId === undefined) return undefined
  const record = group.overrides.get(grantId) ?? reject('AUTH_FORBIDDEN', `no cooperation override grant ${grantId} in this group`, { grantId })
  const g = record.grant
  if (record.consumedByActionId !== undefined) reject('AUTH_FORBIDDEN', `cooperation override grant ${grantId} was already consumed`, { grantId, consumedByActionId: record.consumedByActionId })
  if (parseInstant(g.expiresAt) <= nowMs) reject('AUTH_FORBIDDEN', `cooperation override grant ${grantId} expired at ${g.expiresAt}`, { grantId })
  const mismatched = [
    g.missionId === group.missionId ? undefined : 'missionId',
    g.groupId === group.groupId ? undefined : 'groupId',
    sameActor(g.beneficiary as ActorRef, command.actor as ActorRef) ? undefined : 'beneficiary',
    g.targetCommandKind === command.kind ? undefined : 'targetCommandKind',
    g.targetActionId === command.actionId ? undefined : 'targetActionId',
  ].filter((m) => m !== undefined)
  if (mismatched.length > 0) reject('AUTH_FORBIDDEN', `cooperation override grant ${grantId} does not match this command`, { grantId, mismatched })
  return record
}

/**
 * Passes when the limit is not configured or `used < limit`; otherwise only a cited grant for
 * exactly this limit lets the Command through (§20). A cited grant is checked either way.
 */
function within(command: LimitedCommand, ctx: HandlerContext, group: GroupState, policyName: CooperationLimit, used: number, limit: number | undefined, refusal: () => ProtocolError): void {
  const grant = citedOverride(command, group, ctx.nowMs)
  if (limit === undefined || used < limit) return
  if (grant?.grant.policyName === policyName) return
  throw refusal()
}

/**
 * §20 rate limit: refuses with a retryable `RATE_LIMITED` (details: policy name, limit, window and
 * `retryAfterMs`, when the oldest counted action leaves the window) when `command.actor` already
 * had `limit` `rate` actions accepted in the last minute, unless it cites a grant for `rate`.
 */
export function requireWithinRate(command: LimitedCommand, ctx: HandlerContext, group: GroupState, rate: RateLimit, limit: number | undefined): void {
  const recent = limit === undefined ? [] : recentActions(group, command.actor as ActorRef, rate, ctx.nowMs)
  within(command, ctx, group, rate, recent.length, limit, () => {
    const oldest = recent[recent.length - (limit ?? 0)] ?? ctx.nowMs
    const retryAfterMs = Math.max(1, oldest + RATE_WINDOW_MS - ctx.nowMs + 1)
    return new ProtocolError('RATE_LIMITED', `${rate}: ${recent.length} in the last minute reaches the limit of ${String(limit)}`, {
      details: { policyName: rate, limit, windowSeconds: RATE_WINDOW_MS / 1000, retryAfterMs },
    })
  })
}

/**
 * §20 count limit (queued or active WorkItems): refuses with a non-retryable `RATE_LIMITED` when
 * the count already reaches `limit`; waiting does not help by itself, so the remedy is a Cooperation
 * Override Grant for `policyName` cited by a new Command, or less work in flight.
 * @param countOf - Counts the WorkItems in question; called only when `limit` is set, since a count
 * walks the Group's WorkItems and an unconfigured limit must not make a Command cost grow with history.
 */
export function requireWithinCount(
  command: LimitedCommand,
  ctx: HandlerContext,
  group: GroupState,
  policyName: Exclude<CooperationLimit, RateLimit>,
  countOf: () => number,
  limit: number | undefined,
): void {
  const count = limit === undefined ? 0 : countOf()
  within(
    command,
    ctx,
    group,
    policyName,
    count,
    limit,
    () =>
      new ProtocolError('RATE_LIMITED', `${policyName}: ${count} reaches the limit of ${String(limit)}`, {
        retryable: false,
        details: { policyName, limit, count, remedy: 'cooperation_override' },
      }),
  )
}

/** WorkItems of the Group that wait to run (§20 `queued_work_items`): `open`, `offered` or `queued`. */
export function queuedWorkItems(group: GroupState): number {
  let n = 0
  for (const record of group.workItems.values()) if (record.doc.state === 'open' || record.doc.state === 'offered' || record.doc.state === 'queued') n++
  return n
}

/** WorkItems `agentId` owns and has not finished (§20 `active_work_items`): `queued`, `active` or `blocked`. */
export function activeWorkItemsOf(group: GroupState, agentId: string): number {
  let n = 0
  for (const record of group.workItems.values()) {
    const s = record.doc.state
    if (record.doc.owner?.agentId === agentId && (s === 'queued' || s === 'active' || s === 'blocked')) n++
  }
  return n
}
