/**
 * The Worker when the link loses the answer to a Command the Authority applied (§19), and when its
 * feed lags the receipts of its own Commands: a stand-in Authority over a fabricated Group log
 * answers the Worker's Commands, and the test delivers the log's Events to the feed by hand.
 */
import { keyPairFromSeed, ProtocolError } from '@weft/codec'
import type { EventFeed, FeedHandlers, Receipt, Transport } from '@weft/client'
import type { Command, Event } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { groupLog, SELF, T0_MS, type GroupLog } from '../test/events.js'
import type { SlotContext } from './executor.js'
import type { WorkerLogEntry } from './worker.js'
import { createWorker, type Worker } from './worker.js'

const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

/**
 * A Worker on Group `alpha`, offered WorkItem `a1`. Its Authority applies accept, start and
 * checkpoint to `log`, answers a repeated Action ID with the first receipt, and loses the next
 * answer to each kind in `dropAnswerTo` (the Command is applied; the Worker gets a transport
 * error). `deliver(n)` hands the feed the log's Events up to sequence `n` (default: all).
 */
function world(executor: (ctx: SlotContext) => Promise<never>) {
  const log: GroupLog = groupLog('alpha').genesis().authorize('a1').offer('a1', [SELF])
  const answered = new Map<string, Receipt>()
  const dropAnswerTo = new Set<string>()
  const transport: Transport = {
    submit: async (sent) => {
      const command = sent as unknown as Command
      let receipt = answered.get(command.actionId)
      if (receipt === undefined) {
        const before = log.events.length
        if (command.kind === 'work.accept_offer') log.accept('a1')
        else if (command.kind === 'work.start') log.start('a1')
        else if (command.kind === 'work.checkpoint') log.checkpoint('a1')
        else throw new ProtocolError('INVALID_COMMAND', `the stand-in Authority does not take ${command.kind}`)
        const events = log.events.slice(before)
        receipt = {
          actionId: command.actionId,
          actor: command.actor,
          kind: command.kind,
          groupId: log.groupId,
          commandHash: 'sha256:00',
          events,
          acceptedAt: events[0]!.occurredAt,
          duplicate: false,
        } as Receipt
        answered.set(command.actionId, receipt)
      }
      if (dropAnswerTo.delete(command.kind)) throw new Error('ECONNRESET: the answer was lost')
      return receipt
    },
  }
  let handlers: FeedHandlers | undefined
  let delivered = 0
  const feed: EventFeed = { subscribe: (_groups, h) => ((handlers = h), { close: () => {} }), ack: () => {} }
  const leases: string[] = []
  const logs: WorkerLogEntry[] = []
  const worker: Worker = createWorker({
    actor: { type: 'agent', id: SELF },
    signingKey: { keyId: 'urn:weft:test:key:worker-1', pair: keyPairFromSeed(new Uint8Array(32).fill(3)) },
    sessionEpoch: 1,
    transport,
    feed,
    slots: 1,
    executor: async (_item, ctx) => executor(ctx),
    tokenFor: (scope) => leases.push(scope.executionLeaseId),
    logger: (entry) => logs.push(entry),
    // The log's own clock: ten seconds per Event.
    clock: { now: () => T0_MS + log.events.length * 10_000 },
  })
  // §8: a Member of the Group (the fabricated log carries no Membership Event).
  worker.client.epochs.setMembership(log.groupId, 1)
  worker.join([log.groupId])
  const deliver = (upTo = log.events.length): void => {
    for (const event of log.events.slice(delivered, upTo)) handlers!.onEvent(event)
    delivered = Math.max(delivered, upTo)
  }
  /** A round with everything so far delivered first, then time for the runs to go on. */
  const round = async (): Promise<void> => {
    await worker.tick()
    await settle()
  }
  const started = (): Event[] => log.events.filter((e) => e.kind === 'work.started')
  return { log, worker, dropAnswerTo, deliver, round, leases, logs, started }
}

const forever = new Promise<never>(() => {})

describe('a Worker whose link loses answers (§19)', () => {
  it('starts once when the answer to its start is lost, and runs under the lease that start named', async () => {
    const w = world(async (ctx) => {
      await ctx.token()
      return forever
    })
    w.deliver()
    await w.round() // accepts the offer
    w.deliver()
    w.dropAnswerTo.add('work.start')
    await w.round() // starts: applied, unanswered
    expect(w.worker.offline).toBe(true)
    expect(w.leases).toEqual([])
    // The feed shows the WorkItem active under a lease the Worker never heard of.
    w.deliver()
    await w.round() // reconnects, sends the same start again, gets its first receipt
    expect(w.started()).toHaveLength(1)
    expect(w.leases).toEqual([(w.started()[0]!.payload as { executionLease: { leaseId: string } }).executionLease.leaseId])
  })
})

describe('a Worker whose feed lags its own receipts', () => {
  it('keeps a lease its projection has not seen yet, though the projection shows the one before it closed', async () => {
    let resume!: () => void
    const gate = new Promise<void>((resolve) => (resume = resolve))
    const w = world(async (ctx) => {
      // The checkpoint releases the lease; the slot starts the next one at once.
      await ctx.checkpoint({ step: 1 })
      await gate
      await ctx.token()
      return forever
    })
    w.deliver()
    await w.round() // accepts the offer
    w.deliver()
    await w.round() // starts a1, checkpoints and starts again
    expect(w.started()).toHaveLength(2)
    // The feed brings the checkpoint, not yet the start after it: a1 looks queued, its lease closed.
    const checkpoint = w.log.events.findLast((e) => e.kind === 'work.checkpointed')!
    w.deliver(checkpoint.sequence)
    await w.round()
    expect(w.logs.filter((l) => l.code !== undefined)).toEqual([])
    resume()
    await settle()
    expect(w.leases).toEqual([(w.started()[1]!.payload as { executionLease: { leaseId: string } }).executionLease.leaseId])
  })
})
