/**
 * What a Coordinator or a MissionOwner knows about the Groups it reads: the Worker runtime's
 * per-Group inbox and projection (§16: deduplicated, in sequence order, rebuildable by replay),
 * plus the Mission-level and review facts those agents need and a Worker does not fold
 * (submissions with their Evidence, published Artifact manifests, Memberships, the Coordinator
 * lease, the MissionOwner's decisions).
 *
 * Everything here is derived from accepted Events only, so a replacement Coordinator that reads
 * the same log reconciles to the same view (§7.2) before it issues anything.
 * @module
 */
import { ProtocolError } from '@weft/codec'
import type { EventFeed, FeedSubscription } from '@weft/client'
import { type Actor, type Approval, type Artifact, catalogued, type Event, eventInfo, type Evidence, type MissionState } from '@weft/spec'
import { createInbox, createMemoryWorkerStore, createProjection, type GroupView, type Inbox, type Projection, type TrackedWork, type WorkerStore } from '@weft/worker'

/** A submission of a WorkItem as its `work.submitted` Event recorded it (§13.2). */
export interface SubmissionFacts {
  readonly eventId: string
  readonly ownershipEpoch: number
  readonly artifactHashes: readonly string[]
  readonly evidence: readonly Evidence[]
}

/** What the log says about one WorkItem beyond the Worker projection. */
export interface WorkFacts {
  /** The latest submission, if any. */
  submission?: SubmissionFacts
  /** Published Artifact manifests of this WorkItem, by content hash (§13.1). */
  readonly artifacts: Map<string, Artifact>
  /** Whether any Execution Lease was ever started for it (§10.4 arrivals key on this). */
  started: boolean
  /** The Agent that last accepted it (§10.3), as of the last folded Event. */
  owner?: string
  /** Agents whose ownership of it ended without a verified result: fenced after a lapse, or failed. */
  readonly lapsed: Set<string>
  /** How many times it failed (§11.4: the contract bounds attempts). */
  failures: number
  /** The review Evidence the Coordinator's acceptance carried, once verified. */
  accepted?: readonly Evidence[]
}

/** One Membership as the last `membership.changed` / `membership.ended` left it (§8). */
export interface MemberFacts {
  readonly member: Actor
  readonly membershipId: string
  readonly role: string
  readonly state: string
  readonly membershipEpoch: number
}

/** Mission-level facts of one Group (§7). */
export interface GroupFacts {
  readonly groupId: string
  missionId: string
  missionState: MissionState
  /** The Mission aggregate's revision after its last Event (§15.3). */
  missionRevision: number
  missionOwner: Actor
  coordinatorAgentId: string
  coordinatorEpoch: number
  coordinatorLeaseExpiresAt: string
  /** The parent WorkItem for a child Mission (§14). */
  parent?: { readonly missionId: string; readonly workItemId: string }
  /** The pending submission while `awaiting_approval` (§7.3). */
  submission?: { readonly eventId: string; readonly missionRevision: number; readonly artifactHashes: readonly string[] }
  /** Every decision of the MissionOwner, oldest first. */
  readonly decisions: Approval[]
  /** Memberships by member key (`type id`). */
  readonly members: Map<string, MemberFacts>
}

/** Options of {@link createTracker}. */
export interface TrackerOptions {
  /** The reading Principal's ID (the projection judges "mine" against it). */
  readonly self: string
  readonly feed: EventFeed
  /** Called with each contiguous run of Events after it is folded. */
  readonly onApplied?: (events: readonly Event[]) => void
  /** Local log store; default in memory. */
  readonly store?: WorkerStore
}

/** A folded view of the Groups an agent reads. */
export interface Tracker {
  readonly projection: Projection
  /** Subscribes to `groupId` once; `false` while the feed refuses it (no Membership yet, §8). */
  subscribe(groupId: string): boolean
  /** Whether {@link subscribe} succeeded for `groupId` and the feed still delivers it. */
  subscribed(groupId: string): boolean
  /** Whether the feed ended `groupId` because this reader lost its access (§8, §17.2 `GROUP_NOT_FOUND`). */
  lost(groupId: string): boolean
  group(groupId: string): GroupFacts | undefined
  view(groupId: string): GroupView | undefined
  work(workItemId: string): TrackedWork | undefined
  /** Facts of a WorkItem (an empty record before its first Event). */
  facts(workItemId: string): WorkFacts
  /** The stored log of `groupId`, in sequence order. */
  events(groupId: string): readonly Event[]
  /** Closes every subscription. */
  close(): void
}

/** The key of a member in {@link GroupFacts.members}. */
export function memberKey(actor: Actor): string {
  return `${actor.type} ${actor.id}`
}

/**
 * Creates a tracker. Subscriptions start after the Cursor of the local store, so a tracker over
 * a kept store resumes where it stopped and one over a fresh store replays from the start.
 */
export function createTracker(options: TrackerOptions): Tracker {
  const store = options.store ?? createMemoryWorkerStore()
  const projection = createProjection(options.self)
  const groups = new Map<string, GroupFacts>()
  const work = new Map<string, WorkFacts>()
  const subscriptions = new Map<string, FeedSubscription>()
  const lostAccess = new Set<string>()

  const factsOf = (workItemId: string): WorkFacts => {
    let f = work.get(workItemId)
    if (f === undefined) work.set(workItemId, (f = { artifacts: new Map(), started: false, lapsed: new Set(), failures: 0 }))
    return f
  }

  const inbox: Inbox = createInbox({
    store,
    projection,
    onApplied: (events) => {
      for (const event of events) fold(event)
      const last = events.at(-1)
      if (last?.groupId !== undefined && last.sequence !== undefined) {
        // §16: the ACK only permits delivery cleanup; a refused ACK is repeated with the next run.
        void Promise.resolve(options.feed.ack(last.groupId, last.sequence)).catch(() => {})
      }
      options.onApplied?.(events)
    },
  })
  inbox.rebuild()

  /** Whoever owned `workItemId` loses it without a verified result. */
  function lapse(workItemId: string): void {
    const f = factsOf(workItemId)
    if (f.owner !== undefined) f.lapsed.add(f.owner)
  }

  function fold(event: Event): void {
    const g = event.groupId === undefined ? undefined : groups.get(event.groupId)
    if (g !== undefined && eventInfo(event.kind)?.aggregate === 'mission' && event.aggregateRevision !== undefined) g.missionRevision = event.aggregateRevision
    const e = catalogued(event)
    switch (e.kind) {
      case 'mission.created':
      case 'mission.follow_up.created': {
        const p = e.payload
        const m = p.mission
        const facts: GroupFacts = {
          groupId: m.groupId,
          missionId: m.missionId,
          missionState: m.state,
          missionRevision: event.aggregateRevision ?? m.revision,
          missionOwner: m.missionOwner,
          coordinatorAgentId: m.coordinator.agentId,
          coordinatorEpoch: m.coordinator.coordinatorEpoch,
          coordinatorLeaseExpiresAt: p.coordinatorLease.expiresAt,
          ...(m.parent === undefined ? {} : { parent: { missionId: m.parent.missionId, workItemId: m.parent.workItemId } }),
          decisions: [],
          members: new Map(),
        }
        for (const ms of p.memberships)
          facts.members.set(memberKey(ms.member), { member: ms.member, membershipId: ms.membershipId, role: ms.role, state: ms.state, membershipEpoch: ms.membershipEpoch })
        groups.set(m.groupId, facts)
        return
      }
      case 'mission.coordinator.assigned': {
        const p = e.payload
        if (g === undefined) return
        g.coordinatorAgentId = p.coordinator.agentId
        g.coordinatorEpoch = p.coordinator.coordinatorEpoch
        g.coordinatorLeaseExpiresAt = p.coordinatorLease.expiresAt
        return
      }
      case 'mission.coordinator.renewed':
        if (g !== undefined) g.coordinatorLeaseExpiresAt = e.payload.leaseExpiresAt
        return
      case 'mission.submitted_for_approval': {
        const p = e.payload
        if (g === undefined) return
        g.missionState = 'awaiting_approval'
        g.submission = { eventId: event.eventId, missionRevision: p.missionRevision, artifactHashes: p.artifactHashes }
        return
      }
      case 'mission.approved':
      case 'mission.changes_requested': {
        if (g === undefined) return
        g.decisions.push(e.payload.approval)
        g.missionState = e.kind === 'mission.approved' ? 'approved' : 'active'
        delete g.submission
        return
      }
      case 'mission.cancelled':
      case 'mission.terminated':
        if (g !== undefined) g.missionState = e.kind === 'mission.cancelled' ? 'cancelled' : 'failed'
        return
      case 'membership.changed': {
        const m = e.payload.membership
        g?.members.set(memberKey(m.member), { member: m.member, membershipId: m.membershipId, role: m.role, state: m.state, membershipEpoch: m.membershipEpoch })
        return
      }
      case 'membership.ended': {
        const p = e.payload
        const known = g?.members.get(memberKey(p.member))
        if (known !== undefined) g?.members.set(memberKey(p.member), { ...known, state: 'ended' })
        return
      }
      case 'work.started':
        factsOf(e.payload.workItemId).started = true
        return
      case 'artifact.published': {
        const a = e.payload.artifact
        factsOf(a.workItemId).artifacts.set(a.contentHash, a)
        return
      }
      case 'work.submitted': {
        const p = e.payload
        factsOf(p.workItemId).submission = { eventId: event.eventId, ownershipEpoch: p.ownershipEpoch, artifactHashes: p.artifactHashes, evidence: p.evidence }
        return
      }
      case 'work.result.accepted': {
        const p = e.payload
        factsOf(p.workItemId).accepted = p.evidence
        return
      }
      case 'work.offer.accepted': {
        const p = e.payload
        factsOf(p.workItemId).owner = p.assigneeId
        return
      }
      case 'work.failed': {
        const { workItemId } = e.payload
        lapse(workItemId)
        factsOf(workItemId).failures += 1
        return
      }
      case 'work.offer.created': {
        // §10.2: an offer over a lapsed owner fences it.
        const p = e.payload
        if (p.fencedOwnershipEpoch !== undefined) lapse(p.workItemId)
        return
      }
      default:
        return
    }
  }

  return {
    projection,
    subscribe(groupId) {
      if (subscriptions.has(groupId)) return true
      try {
        const subscription = options.feed.subscribe([{ groupId, afterSequence: inbox.cursor(groupId) }], {
          onEvent: (event) => {
            inbox.receive(event)
          },
          onError: (error) => {
            // The Group stopped flowing: access lost, or backpressure (§17.3). Either way the next
            // subscribe resumes after the local Cursor; a lost access is remembered.
            subscriptions.get(groupId)?.close()
            subscriptions.delete(groupId)
            if (error.code === 'GROUP_NOT_FOUND') lostAccess.add(groupId)
          },
        })
        subscriptions.set(groupId, subscription)
        lostAccess.delete(groupId)
        return true
      } catch (error) {
        // §8, §17.2: no Membership (yet) reads as an absent Group; the caller tries again later.
        if (error instanceof ProtocolError && error.code === 'GROUP_NOT_FOUND') return false
        throw error
      }
    },
    subscribed: (groupId) => subscriptions.has(groupId),
    lost: (groupId) => lostAccess.has(groupId),
    group: (groupId) => groups.get(groupId),
    view: (groupId) => projection.group(groupId),
    work: (workItemId) => projection.work(workItemId),
    facts: factsOf,
    events: (groupId) => store.events(groupId),
    close() {
      for (const s of subscriptions.values()) s.close()
      subscriptions.clear()
    },
  }
}
