/**
 * Losing and regaining the Group service (§11.5): every Command goes through a transport that marks
 * the Worker offline when the link fails, and the first round after the link is back reconciles
 * before anything else: the buffered Commands are rebased onto the current session and resubmitted
 * in order, then each running slot settles its lost answers (§19), starts again if a buffered
 * checkpoint released its lease, and charges its offline usage.
 * @module
 */
import type { Client, Clock, Receipt, Transport } from '@weft/client'
import type { Command } from '@weft/spec'
import { isTransportUnavailable, type OfflineBuffer } from './offline.js'
import type { Queue } from './worker-queue.js'
import type { WorkerParts, WorkerState } from './worker-state.js'

/** `transport`, except that a transport failure marks `offline` disconnected (and calls `wake`) before it is rethrown. */
export function offlineAwareTransport(transport: Transport, offline: OfflineBuffer, clock: Clock, wake: () => void): Transport {
  return {
    submit: async (command, bytes) => {
      try {
        return await transport.submit(command, bytes)
      } catch (error) {
        if (isTransportUnavailable(error)) {
          offline.markDisconnected(clock.now())
          wake()
        }
        throw error
      }
    },
  }
}

/** Rebases a buffered Command onto the current session: new Action ID, `issuedAt` and epochs; same payload and binding. */
function resubmit(client: Client, command: Command): Promise<Receipt> {
  const built = client.build(command.kind as never, command.payload as never, {
    ...(command.groupId === undefined ? {} : { groupId: command.groupId }),
    ...(command.workItemId === undefined ? {} : { workItemId: command.workItemId }),
    correlationId: command.correlationId,
    ...(command.extensions === undefined ? {} : { extensions: command.extensions }),
  })
  return client.resend(built)
}

/**
 * §11.5: reconciles the offline buffer and, when it is done, brings every running slot back online
 * and re-syncs the queues. A link that fails again leaves the rest for the next round.
 */
export async function reconnect(parts: WorkerParts, state: WorkerState, queue: Queue, nowMs: number): Promise<void> {
  const { offline, log, client } = parts
  const report = await offline.reconcile((command) => resubmit(client, command))
  for (const r of report.refused) log({ level: 'warn', message: `buffered ${r.entry.kind} refused on reconciliation: ${r.error.message}`, workItemId: r.entry.workItemId, code: r.error.code })
  if (!report.complete) return
  const checkpointed = new Set(report.accepted.filter((a) => a.entry.kind === 'work.checkpoint').map((a) => a.entry.workItemId))
  for (const r of [...state.running.values()]) await r.slot.reconnected(checkpointed.has(r.slot.work.workItemId))
  queue.resyncAll(nowMs)
  parts.wake()
}
