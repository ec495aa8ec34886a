/**
 * The failure suite's runtime faults: a Coordinator that crashes and is replaced under the next
 * Coordinator Epoch (§7.2), and a Worker that restarts under a new Session Epoch without its
 * local projection (§11.1, §11.3). Both must carry on from the log, and the old runtime must be
 * fenced.
 * @module
 */
import { isDeepStrictEqual } from 'node:util'
import { deliveryFeed } from '@weft/authority'
import type { Worker } from '@weft/worker'
import { isEventOf } from '@weft/spec'
import { seededRandom } from './clock.js'
import { createCoordinator, type Coordinator } from './coordinator.js'
import { agentIdOf, controlPlane, HELD_STATES, heldBy, labelOf, MINUTE, nowOf, outcomeCode, RESOLVE_WITHIN_MS, titleOf, workItems, worldOf, type Fault, type Suite } from './fault-context.js'
import { CAPABILITIES } from './plans.js'
import { WORKER_SPECS } from './run.js'

/** How long a crashed Coordinator stays silent before its MissionOwner appoints another. */
const DETECTION_MS = 10 * MINUTE
/** The codes that fence a replaced Coordinator's runtime (§7.2, §8). */
const FENCED_COORDINATOR: ReadonlySet<string> = new Set(['AUTH_STALE_COORDINATOR', 'MEMBERSHIP_REQUIRED', 'MEMBERSHIP_STALE'])

/** §7.2: a Coordinator crashes; the MissionOwner appoints another under the next Coordinator Epoch. */
export function coordinatorReplacement(s: Suite): Fault {
  const crashed = 'beacon'
  const successor = 'lark'
  let state: { failed: Coordinator; groupId: string; atMs: number; epoch: number; pkg: ReturnType<Coordinator['handover']> } | undefined
  let replacement: Coordinator | undefined
  return {
    name: 'coordinator-replacement',
    expected: `The replacement holds the next Coordinator Epoch and finishes the Mission; the crashed runtime's Commands are refused (§7.2: AUTH_STALE_COORDINATOR, or MEMBERSHIP_REQUIRED once its seat ended).`,
    waitsFor: 'the search Coordinator running with a verified WorkItem',
    async inject() {
      const w = worldOf(s)
      const failed = w.coordinators.get(crashed)
      const groupId = failed?.plan.groupId
      const group = groupId === undefined ? undefined : w.authority.group(groupId)
      if (failed?.status() !== 'running' || group === undefined || ![...group.workItems.values()].some((r) => r.doc.state === 'verified')) return undefined
      // The last Context Package it published before crashing is what its successor receives.
      const pkg = failed.handover(`Handover of ${failed.plan.title} after the Coordinator runtime stopped answering.`)
      failed.close()
      w.coordinators.delete(crashed)
      state = { failed, groupId: groupId!, atMs: nowOf(s), epoch: group.mission.coordinator.coordinatorEpoch, pkg }
      return `${crashed}, Coordinator of ${labelOf(s, groupId!)} under epoch ${state.epoch}, crashes; it stays silent for ${DETECTION_MS / MINUTE} minutes`
    },
    async observe() {
      const st = state!
      if (nowOf(s) < st.atMs + DETECTION_MS) return undefined
      const w = worldOf(s)
      const agent = w.principals.agents.get(successor)!
      const actor = { type: 'agent' as const, id: agent.actor.id }
      replacement = createCoordinator({
        actor,
        signingKey: agent.key,
        sessionEpoch: 1,
        transport: w.authority.connect(),
        feed: deliveryFeed(w.delivery, actor),
        plan: st.failed.plan,
        directory: Object.entries(WORKER_SPECS).map(([n, spec]) => ({ agentId: agentIdOf(s, n), capabilities: spec.capabilities.map((c) => CAPABILITIES[c]) })),
        blobs: w.blobs,
        clock: w.clock,
        random: seededRandom(s.seed, `${successor}:${st.groupId}`),
        logger: (entry) => {
          if (entry.level === 'warn' && s.warnings.length < 200) s.warnings.push(`${successor} (replacement): ${entry.message}`)
        },
      })
      w.coordinators.set(`${successor}:${labelOf(s, st.groupId)}`, replacement)
      await w.owner.appointCoordinator(st.groupId, actor.id, st.pkg, `Coordinator ${crashed} stopped answering; ${successor} takes over from its Context Package.`)
      const group = w.authority.group(st.groupId)!
      const epoch = group.mission.coordinator.coordinatorEpoch
      const head = group.head
      // The crashed runtime comes back and acts on what it knew (§7.2: it is fenced).
      const code = await outcomeCode(() => st.failed.client.missionRenewCoordinator({ leaseSeconds: 14_400 }))
      const appended = group.head - head
      const held = epoch === st.epoch + 1 && group.mission.coordinator.agentId === actor.id && FENCED_COORDINATOR.has(code) && appended === 0
      return {
        held,
        observed: `${successor} appointed under epoch ${epoch} after ${DETECTION_MS / MINUTE} min of silence; the crashed runtime's lease renewal was refused with ${code}, ${appended} Event(s) appended`,
      }
    },
    confirm(outcome) {
      const w = worldOf(s)
      const groupId = state!.groupId
      const submitted = w.authority.events(groupId).filter((e) => e.kind === 'mission.submitted_for_approval')
      const byReplacement = submitted.filter((e) => e.actor.id === replacement?.actor.id).length
      const done = w.authority.group(groupId)?.mission.state === 'approved' && byReplacement > 0
      return {
        held: outcome.held && done,
        observed: `${outcome.observed}; the replacement took ${replacement?.decisions().length ?? 0} decision(s) and submitted ${byReplacement} revision(s), Mission ${w.authority.group(groupId)?.mission.state}`,
      }
    },
  }
}

/** §11.1, §11.3: a Worker restarts with a new Session Epoch and without its local projection. */
export function workerRestart(s: Suite): Fault {
  const name = 'ada'
  let st: { atMs: number; sessionEpoch: number; running: string[]; revoked: string[]; checkpointed: Set<string>; groups: string[]; next: Worker; rebuilt?: string } | undefined
  return {
    name: 'worker-restart',
    expected:
      'Opening the new Session Epoch revokes the old runtime’s Execution Leases; the new runtime rebuilds its queues by replay from the Authority and resumes every revoked WorkItem from its checkpoint (§11.1, §11.3).',
    waitsFor: `the urgent preemption done, and ${name} running checkpointed work with more work held`,
    async inject() {
      const w = worldOf(s)
      const worker = w.workers.get(name)
      const agentId = agentIdOf(s, name)
      if (!s.preemptionSeen || worker === undefined) return undefined
      const held = heldBy(s, agentId)
      const running = [...workItems(s)].filter(({ record }) => record.doc.state === 'active' && record.executionLease?.holderAgentId === agentId)
      if (held.size < 2 || !running.some(({ record }) => record.lastCheckpoint !== undefined)) return undefined
      const groups = [...worker.projection.view.groups.keys()]
      await worker.stop()
      w.workers.delete(name)
      // §11.1: the projection log goes; checkpoints and the side-effect ledger are durable and stay.
      s.stores.get(name)?.clearProjectionLog()
      const control = controlPlane(s)
      const receipt = await control.identitySessionOpen({ agentId })
      const sessionEpoch = receipt.events.find((e) => isEventOf(e, 'ext.missionweaveprotocol.identity.session_opened'))?.payload.sessionEpoch ?? 0
      const revoked = receipt.events.filter((e) => isEventOf(e, 'ext.missionweaveprotocol.core.work_execution_lease_revoked')).map((e) => e.payload.workItemId)
      const checkpointed = new Set(revoked.filter((id) => [...workItems(s)].some(({ record }) => record.doc.workItemId === id && record.lastCheckpoint !== undefined)))
      const next = w.spawnWorker(name, sessionEpoch)
      w.workers.set(name, next)
      st = { atMs: nowOf(s), sessionEpoch, running: running.map(({ record }) => record.doc.workItemId), revoked, checkpointed, groups, next }
      return `${name} stops with ${running.length} running and ${held.size - running.length} more held; its local projection is dropped and Session Epoch ${sessionEpoch} opened`
    },
    async observe() {
      const r = st!
      const w = worldOf(s)
      const agentId = agentIdOf(s, name)
      if (r.rebuilt === undefined) {
        const caughtUp = r.groups.every((g) => r.next.projection.group(g)?.head === w.authority.group(g)?.head)
        if (!caughtUp) return nowOf(s) > r.atMs + RESOLVE_WITHIN_MS ? { held: false, observed: 'the new runtime never caught up with the Group logs' } : undefined
        const mine = new Set<string>()
        for (const g of r.groups) for (const t of r.next.projection.group(g)?.work.values() ?? []) if (t.owner === agentId && HELD_STATES.has(t.state)) mine.add(t.workItemId)
        const authoritative = heldBy(s, agentId)
        if (!isDeepStrictEqual(mine, authoritative)) return { held: false, observed: `the replayed projection holds ${mine.size} WorkItem(s), the Authority ${authoritative.size}` }
        const events = r.groups.reduce((n, g) => n + (r.next.projection.group(g)?.head ?? 0), 0)
        r.rebuilt = `replayed ${events} Events of ${r.groups.length} Group(s): ${mine.size} held WorkItem(s), the same as the Authority's`
      }
      const runtime = `${name}#${r.sessionEpoch}`
      const restarts = r.revoked.map((id) => s.runs.find((run) => run.runtime === runtime && run.workItemId === id))
      if (restarts.some((x) => x === undefined)) return nowOf(s) > r.atMs + RESOLVE_WITHIN_MS ? { held: false, observed: `${r.rebuilt}; not every revoked WorkItem restarted` } : undefined
      const resumed = r.revoked.filter((id, i) => restarts[i]!.resumed && r.checkpointed.has(id))
      const notResumed = [...r.checkpointed].filter((id) => !resumed.includes(id))
      const fresh = r.revoked.length - r.checkpointed.size
      const held = r.revoked.length > 0 && r.running.every((id) => r.revoked.includes(id)) && notResumed.length === 0
      return {
        held,
        observed:
          `${r.revoked.length} Execution Lease(s) revoked; ${r.rebuilt}; every revoked WorkItem restarted, ${resumed.length} of ${r.checkpointed.size} checkpointed one(s) from the checkpoint` +
          `${fresh > 0 ? ` (${fresh} had no checkpoint yet and started over)` : ''}${notResumed.length > 0 ? `; not resumed: ${notResumed.map((id) => titleOf(s, id)).join(', ')}` : ''}`,
      }
    },
  }
}
