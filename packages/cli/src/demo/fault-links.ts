/**
 * The failure suite's faults of a Worker out of touch with its Group (§11.5): its link cut while
 * it works, and a stall past its Execution Lease. Offline it may go on only within its lease and
 * reconcile on reconnect; once the lease lapsed its WorkItem goes to another Worker under a higher
 * Ownership Epoch and its late result is refused (§4 invariant 5).
 * @module
 */
import { sign } from '@weft/codec'
import { newUrnUuid, type Client } from '@weft/client'
import { type Evidence, isEventOf, payloadOf } from '@weft/spec'
import type { Worker } from '@weft/worker'
import { seededRandom } from './clock.js'
import { agentIdOf, clockText, durationText, MINUTE, nowOf, outcomeCode, recordOf, RESOLVE_WITHIN_MS, soleRuns, stageOf, titleOf, worldOf, type Fault, type Suite } from './fault-context.js'
import { canTake, type StageSpec } from './mission-plan.js'
import { CAPABILITIES } from './plans.js'
import { WORKER_SPECS } from './run.js'

/** The codes a stale owner's late result may get (§4 invariant 5, §11.3). */
const FENCED_OWNER: ReadonlySet<string> = new Set(['WORK_STALE_OWNERSHIP', 'WORK_LEASE_EXPIRED'])

/** A Worker a fault took hold of, the WorkItem it was running, and when. */
interface Seized {
  readonly name: string
  readonly worker: Worker
  readonly groupId: string
  readonly workItemId: string
  readonly atMs: number
}

/** A Worker whose link is cut while it runs a WorkItem under a lease that expires at `leaseExpiresMs`. */
interface Cut extends Seized {
  readonly leaseExpiresMs: number
}

/** §11.5: a Worker's link is cut during active work; it buffers a signed checkpoint and reconciles it on reconnect. */
export function groupDisconnection(s: Suite): Fault {
  let st: Cut | undefined
  return {
    name: 'group-disconnection',
    expected:
      'Offline the Worker goes on only within its lease, starts nothing new, buffers a signed checkpoint with the bounded-offline binding; on reconnect the Authority accepts it and nothing buffered is refused (§11.5).',
    waitsFor: 'a Worker running exactly one WorkItem under a freshly renewed Execution Lease',
    async inject() {
      const now = nowOf(s)
      const fresh = soleRuns(s).find(({ lease }) => now - Date.parse(lease.lastRenewedAt ?? lease.startsAt) <= MINUTE && Date.parse(lease.expiresAt) - now >= 8 * MINUTE)
      if (fresh === undefined) return undefined
      const { name, worker, groupId, record, lease } = fresh
      worldOf(s).links.get(name)!.up = false
      // The run pauses at its next safe point (§11.3), which comes within one chunk of work.
      worker.preempt(record.doc.workItemId)
      st = { name, worker, groupId, workItemId: record.doc.workItemId, atMs: now, leaseExpiresMs: Date.parse(lease.expiresAt) }
      return `${name}'s link to the Group service is cut while it runs ${titleOf(s, st.workItemId)}; it is asked to pause at its next safe point`
    },
    async observe() {
      const r = st!
      const w = worldOf(s)
      const store = s.stores.get(r.name)!
      const buffered = store.buffered()
      const checkpoint = buffered.find((b) => b.workItemId === r.workItemId && b.kind === 'work.checkpoint')
      const late = nowOf(s) >= r.leaseExpiresMs - 90_000
      // Reconnect once the checkpoint is buffered and time has moved on, so the reconciliation is visibly later.
      if (!late && (checkpoint === undefined || nowOf(s) <= checkpoint.bufferedAtMs)) return undefined
      const reconnectMs = nowOf(s)
      w.links.get(r.name)!.up = true
      await r.worker.tick()
      const agentId = agentIdOf(s, r.name)
      const log = w.authority.events(r.groupId)
      const accepted = log.find((e) => e.actor.id === agentId && payloadOf(e, 'work.checkpointed')?.workItemId === r.workItemId && Date.parse(e.occurredAt) >= reconnectMs)
      const checkpointed = payloadOf(accepted, 'work.checkpointed')
      const createdMs = checkpointed === undefined ? undefined : Date.parse(checkpointed.checkpoint.createdAt)
      const startedOffline = log.filter((e) => e.kind === 'work.started' && e.actor.id === agentId && Date.parse(e.occurredAt) > r.atMs && Date.parse(e.occurredAt) < reconnectMs).length
      const refused = w.authority.audit().filter((a) => a.actor?.id === agentId && Date.parse(a.at) >= reconnectMs).length
      const left = store.buffered().length
      const held = checkpoint !== undefined && createdMs !== undefined && createdMs < reconnectMs && startedOffline === 0 && refused === 0 && left === 0
      return {
        held,
        observed:
          checkpoint === undefined
            ? `no checkpoint was buffered before the lease ran short; reconnected at ${clockText(reconnectMs - s.startMs)}`
            : `worked ${durationText(checkpoint.bufferedAtMs - r.atMs)} offline and buffered ${buffered.length} signed Command(s), a checkpoint among them ${accepted === undefined ? 'that was never accepted' : `accepted on reconnect ${durationText(reconnectMs - (createdMs ?? reconnectMs))} after it was made`}; ${refused} refused, ${left} left in the buffer, ${startedOffline} WorkItem(s) started offline`,
      }
    },
  }
}

/** A stalled Worker; its late result cites `epoch` and `leaseId`, the assignment it held. */
interface Stall extends Seized {
  readonly agentId: string
  readonly epoch: number
  readonly leaseId: string
}

/** §11.5, §4 invariant 5: a Worker stalls past its lease; the WorkItem is reassigned and the late result refused. */
export function leaseExpiry(s: Suite): Fault {
  let st: Stall | undefined
  return {
    name: 'lease-expiry-reassignment',
    expected:
      'After the lease lapses the Coordinator reassigns under a higher Ownership Epoch; the stale owner’s late result is refused, kept in the audit log and never completes the WorkItem (§11.5, §4 invariant 5).',
    waitsFor: 'a Worker running exactly one WorkItem that another Worker of the fleet could take over',
    async inject() {
      const w = worldOf(s)
      // §10.3: only a stage the Coordinator may offer to any capable Agent can go to another Worker.
      const canTakeOver = (name: string, stage: StageSpec): boolean =>
        canTake(
          WORKER_SPECS[name]!.capabilities.map((c) => CAPABILITIES[c]),
          stage,
        )
      const stalled = soleRuns(s).find(({ name, record }) => {
        const stage = stageOf(s, record.doc.workItemId)
        return stage !== undefined && stage.candidates === undefined && stage.promote === undefined && [...w.workers.keys()].some((n) => n !== name && canTakeOver(n, stage))
      })
      const owner = stalled?.record.doc.owner
      if (stalled === undefined || owner === undefined) return undefined
      const { name, worker, groupId, record, lease } = stalled
      // A stall: no ticks (so no renewals) and nothing reaches the Group service.
      w.links.get(name)!.up = false
      w.workers.delete(name)
      st = { name, worker, agentId: owner.agentId, groupId, workItemId: record.doc.workItemId, epoch: owner.ownershipEpoch, leaseId: lease.leaseId, atMs: nowOf(s) }
      return `${name} stalls while running ${titleOf(s, st.workItemId)} under ownership epoch ${st.epoch}: no renewals, nothing reaches the Group service`
    },
    async observe() {
      const r = st!
      const w = worldOf(s)
      const record = recordOf(s, r.groupId, r.workItemId)
      const owner = record?.doc.owner
      const reassigned = owner !== undefined && owner.ownershipEpoch > r.epoch && record?.doc.state === 'active'
      const timedOut = nowOf(s) > r.atMs + RESOLVE_WITHIN_MS
      if (!reassigned && !timedOut) return undefined
      // The stalled Worker wakes up and delivers its result late, under the epoch it knew.
      w.links.get(r.name)!.up = true
      w.workers.set(r.name, r.worker)
      const late = lateSubmission(s, r)
      const code = await outcomeCode(() => r.worker.client.resend(late))
      const audited = w.authority.audit().some((a) => a.actionId === late.command.actionId && a.kind === 'work.submit')
      const newOwner = Object.entries(WORKER_SPECS).find(([n]) => agentIdOf(s, n) === owner?.agentId)?.[0] ?? owner?.agentId
      const held = reassigned && FENCED_OWNER.has(code) && audited && record?.doc.state !== 'verified'
      return {
        held,
        observed: reassigned
          ? `reassigned ${durationText(nowOf(s) - r.atMs)} into the stall to ${newOwner} under ownership epoch ${owner!.ownershipEpoch}; ${r.name}'s late result: ${code}, ${audited ? 'kept in the audit log' : 'not in the audit log'}`
          : `not reassigned within ${RESOLVE_WITHIN_MS / MINUTE} min; late result: ${code}`,
      }
    },
    confirm(outcome) {
      const r = st!
      const log = worldOf(s).authority.events(r.groupId)
      const submissions = log.flatMap((e) => (isEventOf(e, 'work.submitted') && e.payload.workItemId === r.workItemId ? [e.payload] : []))
      const accepted = log.some((e) => payloadOf(e, 'work.result.accepted')?.workItemId === r.workItemId)
      const stale = submissions.filter((p) => p.ownershipEpoch <= r.epoch).length
      const final = submissions.at(-1)
      const held = outcome.held && accepted && stale === 0 && final !== undefined && final.ownershipEpoch > r.epoch
      return { held, observed: `${outcome.observed}; completed ${accepted ? `by the epoch ${final?.ownershipEpoch} submission` : 'never'}, ${stale} stale submission(s) in the log` }
    },
  }
}

/** The stalled owner's result under its old Ownership Epoch and Execution Lease, signed by it. */
function lateSubmission(s: Suite, r: Stall): ReturnType<Client['build']> {
  const w = worldOf(s)
  const key = w.principals.agents.get(r.name)!.key
  const random = seededRandom(s.seed, `faults:${r.name}:late`)
  const published = w.authority
    .events(r.groupId)
    .flatMap((e) => (isEventOf(e, 'artifact.published') ? [e.payload] : []))
    .filter((p) => p.artifact.workItemId === r.workItemId && p.ownershipEpoch === r.epoch)
  const evidence = sign(
    'evidence',
    {
      evidenceId: newUrnUuid(random),
      missionId: w.authority.group(r.groupId)!.missionId,
      groupId: r.groupId,
      workItemId: r.workItemId,
      type: 'deterministic_test',
      subject: { type: 'work_item', id: r.workItemId },
      criterionIds: [recordOf(s, r.groupId, r.workItemId)!.doc.contract.acceptanceCriteria[0]!.criterionId],
      method: 'The stalled run finished and reports its result.',
      result: 'passed',
      artifactHashes: published.map((p) => p.artifact.contentHash),
      generatedBy: { type: 'agent', id: r.agentId },
      createdAt: new Date(nowOf(s)).toISOString(),
    },
    key,
  ) as unknown as Evidence
  const artifactIds = published.length > 0 ? published.map((p) => p.artifact.artifactId) : [newUrnUuid(random)]
  return r.worker.client.build(
    'work.submit',
    { workItemId: r.workItemId, ownershipEpoch: r.epoch, executionLeaseId: r.leaseId, artifactIds, evidence: [evidence] },
    { groupId: r.groupId, workItemId: r.workItemId },
  )
}
