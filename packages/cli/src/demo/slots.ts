/**
 * What the demo hands each Worker slot, and the audit of what the slot did with it: capability
 * tokens bound to the slot's own Execution Lease from the Organization's Authorization Service
 * (§12), and a record of every executor run (context, tokens, side-effect keys) for the slot
 * isolation check (§11.1, §16, `verify.ts`).
 * @module
 */
import { createAuthorizationService, type Authority, type CapabilityClaims } from '@weft/authority'
import type { RandomSource } from '@weft/client'
import type { ExecutorSpec, SlotContext, TokenScope, WorkSnapshot } from '@weft/worker'
import type { RunScope, SlotInvocation } from './verify.js'

/** The capability token lifetime asked for; the Authorization Service caps it at the Execution Lease (§12). */
const TOKEN_TTL_SECONDS = 600

/** The Group of a WorkItem in the Authority's state. */
export function groupOfItem(authority: Authority, workItemId: string): string | undefined {
  for (const [groupId, g] of authority.state.groups) if (g.workItems.has(workItemId)) return groupId
  return undefined
}

/** Capability tokens for the Workers' slots, and the claims of each token issued. */
export interface SlotTokens {
  /** The `tokenFor` option of the Worker of `agentId`: a token for the scope's lease, or `undefined` when the Authority holds no such lease. */
  tokenFor(agentId: string): (scope: TokenScope) => string | undefined
  /** The claims a token was issued with, if it was issued here. */
  claimsOf(token: unknown): CapabilityClaims | undefined
}

/** §12: the Organization's Authorization Service hands each slot a token bound to its own lease. */
export function slotTokens(authority: Authority, now: () => number, random: RandomSource): SlotTokens {
  const authorization = createAuthorizationService({ authority, clock: { now }, random })
  const issued = new Map<string, CapabilityClaims>()
  return {
    tokenFor:
      (agentId) =>
      (scope): string | undefined => {
        const groupId = groupOfItem(authority, scope.workItemId)
        const allowed = groupId === undefined ? undefined : authority.group(groupId)?.workItems.get(scope.workItemId)?.doc.contract.allowedResources
        if (groupId === undefined || allowed === undefined) return undefined
        try {
          const { token, claims } = authorization.issue({
            agentId,
            groupId,
            workItemId: scope.workItemId,
            ownershipEpoch: scope.ownershipEpoch,
            executionLeaseId: scope.executionLeaseId,
            operations: [...new Set(allowed.flatMap((r) => r.operations))],
            resources: allowed.map((r) => r.resource),
            ttlSeconds: TOKEN_TTL_SECONDS,
          })
          issued.set(token, claims)
          return token
        } catch {
          // A lease the Authority no longer holds (a cut link, a stopped Worker) gets no token; the run fails on its own.
          return undefined
        }
      },
    claimsOf: (token) => (typeof token === 'string' ? issued.get(token) : undefined),
  }
}

/** What the slot audit reads from the run: the clock, where the Authority holds a WorkItem, what a token is bound to. */
export interface AuditSources {
  now(): number
  scopeOf(workItemId: string): RunScope | undefined
  claimsOf(token: unknown): CapabilityClaims | undefined
}

/** The slot audit: executors wrapped so that each run is recorded, and the records so far. */
export interface SlotAudit {
  /** `spec` with its runs recorded as runs of `worker` (`name#sessionEpoch`) for `agentId`. */
  observed(worker: string, agentId: string, spec: ExecutorSpec): ExecutorSpec
  /** Every run recorded so far, as copies. */
  runs(): readonly SlotInvocation[]
}

/** A {@link SlotInvocation} while its run goes on. */
type OpenInvocation = { -readonly [K in keyof SlotInvocation]: SlotInvocation[K] } & { tokens: (RunScope & { tokenId: string })[]; sideEffects: { operationId: string; key: string }[] }

/**
 * The slot audit (§11.1): wraps executors so every run records what its slot handed it. Context
 * objects are numbered through a WeakMap, so the audit keeps no slot object alive.
 */
export function slotAudit(sources: AuditSources): SlotAudit {
  const contexts = new WeakMap<object, number>()
  const lanes = new Map<string, Set<number>>()
  const records: OpenInvocation[] = []
  const scopeOfItem = (w: WorkSnapshot): RunScope => ({ groupId: w.groupId, missionId: w.missionId, workItemId: w.workItemId })
  return {
    observed: (worker, agentId, spec) => ({
      ...spec,
      async run(item: WorkSnapshot, ctx: SlotContext) {
        let contextId = contexts.get(ctx)
        if (contextId === undefined) contexts.set(ctx, (contextId = records.length + 1))
        const busy = lanes.get(worker) ?? new Set<number>()
        lanes.set(worker, busy)
        let lane = 0
        while (busy.has(lane)) lane++
        busy.add(lane)
        const expected = sources.scopeOf(item.workItemId)
        const record: OpenInvocation = {
          worker,
          agentId,
          lane,
          startMs: sources.now(),
          endMs: undefined,
          contextId,
          ownershipEpoch: item.ownershipEpoch,
          seen: [scopeOfItem(item), scopeOfItem(ctx.item)],
          expected,
          tokens: [],
          sideEffects: [],
        }
        records.push(record)
        const note = (token: unknown): void => {
          const c = sources.claimsOf(token)
          if (c !== undefined && !record.tokens.some((t) => t.tokenId === c.tokenId)) record.tokens.push({ tokenId: c.tokenId, groupId: c.groupId, missionId: c.missionId, workItemId: c.workItemId })
        }
        const held = async (): Promise<void> => {
          // A slot whose lease is already gone holds no token; the run finds out at its next safe point.
          note(await ctx.token().catch(() => undefined))
        }
        const audited: SlotContext = {
          ...ctx,
          token: async () => {
            const token = await ctx.token()
            note(token)
            return token
          },
          sideEffect: async (operationId, fn, options) => {
            record.sideEffects.push({ operationId, key: ctx.sideEffectKey(operationId) })
            await held()
            return ctx.sideEffect(operationId, fn, options)
          },
        }
        await held()
        try {
          return await spec.run(item, audited)
        } finally {
          record.endMs = sources.now()
          busy.delete(lane)
        }
      },
    }),
    runs: () => records.map((r) => ({ ...r, seen: [...r.seen], tokens: [...r.tokens], sideEffects: [...r.sideEffects] })),
  }
}
