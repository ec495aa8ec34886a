/**
 * The failure suite's seams in the Worker fleet (§11.1, §16): each Worker gets a local store kept
 * across its restarts, a feed the suite can replay already delivered Events from, and executors
 * whose every side-effect attempt is recorded as executed, answered from the ledger, or refused.
 * A run that reached the outside repeats its operations once (duplicates) and a run that lost its
 * lease tries one more (stale) side effect, so "stale or duplicate side effects refused" is tested,
 * not assumed.
 * @module
 */
import { ProtocolError } from '@weft/codec'
import type { EventFeed } from '@weft/client'
import { createMemoryWorkerStore, type Executor, type ExecutorFn, type SideEffectOptions, type SlotContext, type WorkerOptions } from '@weft/worker'
import { codeOf, holdsLiveLease, nowOf, type Suite, type Tap } from './fault-context.js'

/** The operation a run that lost its lease tries anyway (§11.3: it must be refused). */
export const STALE_PROBE_OPERATION = 'weft.faults:after-lease-loss'

/** Wraps a Worker's feed so the suite can hand it an already delivered Event again (§16). */
function tapped(s: Suite, name: string, feed: EventFeed): EventFeed {
  const tap: Tap = { handlers: new Map(), delivered: new Map(), acks: 0 }
  s.taps.set(name, tap)
  return {
    subscribe(groups, handlers) {
      for (const g of groups) tap.handlers.set(g.groupId, handlers)
      return feed.subscribe(groups, {
        ...handlers,
        onEvent(event) {
          if (event.groupId !== undefined) {
            const list = tap.delivered.get(event.groupId) ?? []
            list.push(event)
            tap.delivered.set(event.groupId, list)
          }
          handlers.onEvent(event)
        },
      })
    },
    ack(groupId, sequence) {
      tap.acks++
      return feed.ack(groupId, sequence)
    },
  }
}

/** Runs one side-effect attempt through the slot and records what became of it (§16). */
async function attempt<T>(
  s: Suite,
  runtime: string,
  agentId: string,
  ctx: SlotContext,
  operationId: string,
  fn: (key: string) => T | Promise<T>,
  options: SideEffectOptions | undefined,
  probe?: 'stale' | 'duplicate',
): Promise<T> {
  const base = {
    worker: runtime,
    workItemId: ctx.item.workItemId,
    ownershipEpoch: ctx.item.ownershipEpoch,
    operationId,
    key: ctx.sideEffectKey(operationId),
    atMs: nowOf(s),
    ...(probe === undefined ? {} : { probe }),
  }
  let executed = false
  try {
    const value = await ctx.sideEffect(
      operationId,
      (key) => {
        executed = true
        s.attempts.push({ ...base, key, outcome: 'executed', current: holdsLiveLease(s, agentId, ctx.item) })
        return fn(key)
      },
      options,
    )
    if (!executed) s.attempts.push({ ...base, outcome: 'replayed' })
    return value
  } catch (error) {
    if (!executed) s.attempts.push({ ...base, outcome: 'refused', code: codeOf(error) })
    throw error
  }
}

/**
 * An executor whose side effects are audited: every attempt is recorded, the operations of a run
 * that reached the outside are repeated once (the ledger must answer them), and a run that lost
 * its lease tries one more side effect (the slot must refuse it).
 */
function audited(s: Suite, runtime: string, agentId: string, executor: Executor): Executor {
  const inner: ExecutorFn = typeof executor === 'function' ? executor : executor.run
  const run: ExecutorFn = async (item, ctx) => {
    s.runs.push({ runtime, workItemId: item.workItemId, ownershipEpoch: item.ownershipEpoch, resumed: ctx.resumeState !== undefined, atMs: nowOf(s) })
    const operations = new Map<string, { fn: (key: string) => unknown; options: SideEffectOptions | undefined }>()
    const counted: SlotContext = {
      ...ctx,
      sideEffect: (operationId, fn, options) => {
        operations.set(operationId, { fn, options })
        return attempt(s, runtime, agentId, ctx, operationId, fn, options)
      },
    }
    try {
      const result = await inner(item, counted)
      // §16: the same operation again under the same Ownership Epoch is a duplicate.
      for (const [operationId, op] of operations) await attempt(s, runtime, agentId, ctx, operationId, op.fn, op.options, 'duplicate')
      return result
    } catch (error) {
      // §11.3: after the lease is lost, no side effect may leave the slot.
      if (ctx.signal.aborted && ctx.signal.reason instanceof ProtocolError) {
        await attempt(s, runtime, agentId, ctx, STALE_PROBE_OPERATION, () => 'performed after the lease was lost', { reversible: true }, 'stale').catch(() => {})
      }
      throw error
    }
  }
  return typeof executor === 'function' ? run : { ...executor, run }
}

/** The `worker` hook: one local store per Worker name (kept across restarts), a tapped feed, audited executors. */
export function workerHook(s: Suite, name: string, options: WorkerOptions): WorkerOptions {
  const store = s.stores.get(name) ?? createMemoryWorkerStore()
  s.stores.set(name, store)
  const runtime = `${name}#${options.sessionEpoch}`
  const executors = options.executors === undefined ? {} : { executors: Object.fromEntries(Object.entries(options.executors).map(([id, e]) => [id, audited(s, runtime, options.actor.id, e)])) }
  return { ...options, ...executors, store, feed: tapped(s, name, options.feed) }
}
