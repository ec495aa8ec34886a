/**
 * The failure suite's ingress faults, each injected and judged in one step ({@link instant}): an
 * Event delivered again to a Worker (§16), an Action ID reused with other content (§15.1), and
 * usage beyond a WorkItem's budget (§12). Each must leave no trace but its refusal.
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import { agentIdOf, instant, labelOf, outcomeCode, titleOf, workItems, worldOf, type Fault, type Suite } from './fault-context.js'

/** §16, §4 invariant 8: Events a Worker already processed come again; its inbox drops them. */
export function duplicateDelivery(s: Suite): Fault {
  return instant(
    'duplicate-event-delivery',
    'The Worker deduplicates by Event ID: its projection, Cursor and ACKs do not change (§16).',
    'a Worker that processed at least six Events of a Group',
    async () => {
      for (const [name, worker] of worldOf(s).workers) {
        const tap = s.taps.get(name)
        const store = s.stores.get(name)
        for (const [groupId, delivered] of tap?.delivered ?? []) {
          const handlers = tap?.handlers.get(groupId)
          const view = worker.projection.group(groupId)
          if (tap === undefined || store === undefined || handlers === undefined || view === undefined || delivered.length < 6 || view.head < 6) continue
          // The oldest and the three latest Events: a replay from far back and a redelivery around a reconnect.
          const again = [delivered[0]!, ...delivered.slice(-3)]
          const before = { view: structuredClone(view), acks: tap.acks, cursor: store.cursor(groupId) }
          for (const event of again) handlers.onEvent(event)
          const after = { view: worker.projection.group(groupId), acks: tap.acks, cursor: store.cursor(groupId) }
          const held = isDeepStrictEqual(before, after)
          return {
            announce: `feeding ${name} ${again.length} ${labelOf(s, groupId)} Events it already processed (sequences ${again.map((e) => e.sequence).join(', ')})`,
            outcome: {
              held,
              observed: held
                ? `${name}'s inbox dropped all ${again.length}: projection unchanged at sequence ${view.head}, Cursor ${after.cursor}, no new ACK`
                : `${name} changed: projection ${isDeepStrictEqual(before.view, after.view) ? 'unchanged' : 'changed'}, Cursor ${before.cursor} → ${after.cursor}, ACKs ${before.acks} → ${after.acks}`,
            },
          }
        }
      }
      return undefined
    },
  )
}

/** §15.1: an accepted Action ID reused with other content is refused; the exact retry answers the original receipt. */
export function actionIdCollision(s: Suite): Fault {
  const expected = 'The exact retry returns the original receipt; other content under the same Action ID is refused with ACTION_ID_COLLISION and appends nothing (§15.1).'
  return instant('action-id-collision', expected, 'a running Coordinator', async () => {
    const w = worldOf(s)
    const coordinator = [...w.coordinators.values()].find((c) => c.status() === 'running')
    if (coordinator === undefined) return undefined
    const groupId = coordinator.plan.groupId
    const built = coordinator.client.build('mission.renew_coordinator', { leaseSeconds: 14_400 }, { groupId })
    const first = await coordinator.client.resend(built)
    const retry = await coordinator.client.resend(built)
    const head = w.authority.group(groupId)?.head ?? 0
    const code = await outcomeCode(() => coordinator.client.send('mission.renew_coordinator', { leaseSeconds: 14_340 }, { groupId, actionId: built.command.actionId }))
    const appended = (w.authority.group(groupId)?.head ?? 0) - head
    return {
      announce: `${labelOf(s, groupId)}'s Coordinator renews its lease, retries the same Command, then reuses its Action ID ${built.command.actionId} for another lease length`,
      outcome: {
        held: first.events.length > 0 && retry.duplicate && code === 'ACTION_ID_COLLISION' && appended === 0,
        observed: `retry: ${retry.duplicate ? 'original receipt (duplicate)' : 'a new receipt'}; other content: ${code}; ${appended} Event(s) appended`,
      },
    }
  })
}

/** §12: usage beyond a WorkItem's budget is refused as a whole; nothing is applied. */
export function budgetOverflow(s: Suite): Fault {
  const expected = 'The usage record is refused with BUDGET_EXCEEDED and the Group state is exactly as before (§12: no partial Event or state change).'
  return instant('budget-overflow', expected, 'active work under a live Execution Lease', async () => {
    const w = worldOf(s)
    for (const [name, worker] of w.workers) {
      const agentId = agentIdOf(s, name)
      for (const { groupId, record } of workItems(s)) {
        const lease = record.executionLease
        const owner = record.doc.owner
        const limit = record.doc.contract.budget.modelTokenLimit
        if (record.doc.state !== 'active' || lease?.state !== 'active' || lease.holderAgentId !== agentId || limit === undefined || owner === undefined) continue
        const workItemId = record.doc.workItemId
        const before = structuredClone(w.authority.group(groupId))
        const usageDelta = { modelTokens: limit + 1 }
        const code = await outcomeCode(() =>
          worker.client.send(
            'ext.missionweaveprotocol.core.resource_usage_record',
            { workItemId, ownershipEpoch: owner.ownershipEpoch, executionLeaseId: lease.leaseId, usageDelta },
            { groupId, workItemId },
          ),
        )
        const unchanged = isDeepStrictEqual(before, w.authority.group(groupId))
        return {
          announce: `${name} records ${usageDelta.modelTokens} model tokens against ${titleOf(s, workItemId)}, whose budget allows ${limit}`,
          outcome: { held: code === 'BUDGET_EXCEEDED' && unchanged, observed: `${code}; Group state ${unchanged ? 'unchanged' : 'changed'}` },
        }
      }
    }
    return undefined
  })
}
