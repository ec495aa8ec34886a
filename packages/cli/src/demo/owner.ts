/**
 * The human MissionOwner's interface (§3, §7.1, §7.3): it creates the root Missions, watches
 * their Groups, and on each submission for approval reviews the exact revision and Artifact set
 * and signs a decision: an Approval (`mission.approve`) or a change request
 * (`mission.request_changes`). A Coordinator's review is never the final word (§4 invariant 10).
 *
 * Who decides is a {@link Decider}: {@link approveAll} (the `--yes` flag), {@link promptDecider}
 * (an interactive prompt on a terminal) or {@link requestChangesOnce}, which asks for one scripted
 * round of changes in chosen Missions before handing over to another decider.
 *
 * It is also where a replacement Coordinator is appointed (§7.2, `mission.assign_coordinator`).
 * @module
 */
import { ProtocolError, sign, UsageError, type SigningKey } from '@weft/codec'
import { createClient, newUrnUuid, systemRandom, type Client, type Clock, type EventFeed, type RandomSource, type Receipt, type Transport } from '@weft/client'
import type { Approval, CommandPayload, ContextPackage } from '@weft/spec'
import { createTracker, type GroupFacts, type Tracker } from './tracker.js'

/** What the MissionOwner sees of a pending submission (§7.3). */
export interface SubmissionView {
  readonly missionId: string
  readonly groupId: string
  readonly title: string
  readonly missionRevision: number
  readonly artifactHashes: readonly string[]
  /** WorkItems by state. */
  readonly workItems: Readonly<Record<string, number>>
  /** Review Evidence accepted by the Coordinator in this Group, to inspect before deciding (§13.2 step 5). */
  readonly acceptedEvidence: number
  /** Earlier decisions on this Mission, oldest first. */
  readonly earlierDecisions: readonly Approval['decision'][]
}

/** A MissionOwner's decision: approve, or request changes with feedback. */
export type OwnerDecision =
  | { readonly decision: 'approved'; readonly comments: string }
  | { readonly decision: 'changes_requested'; readonly comments: string; readonly conditions: readonly string[] }

/** Decides on one submission. */
export type Decider = (submission: SubmissionView) => OwnerDecision | Promise<OwnerDecision>

/** Approves every submission: the `--yes` flag. */
export function approveAll(comments = 'Approved: the submitted revision and Artifact set meet the definition of done.'): Decider {
  return () => ({ decision: 'approved', comments })
}

/**
 * Requests changes once in each Mission of `requests` (by Mission ID) at its first submission,
 * then lets `then` decide: the scripted change request of the demo (§22).
 */
export function requestChangesOnce(requests: Readonly<Record<string, { readonly comments: string; readonly conditions: readonly string[] }>>, then: Decider): Decider {
  return (s) => {
    const request = requests[s.missionId]
    if (request !== undefined && !s.earlierDecisions.includes('changes_requested')) return { decision: 'changes_requested', comments: request.comments, conditions: request.conditions }
    return then(s)
  }
}

/**
 * Asks a human on a terminal: `y` approves, `c` requests changes with typed feedback, anything
 * else asks again. `ask` is e.g. `question` of a `node:readline/promises` interface.
 */
export function promptDecider(ask: (prompt: string) => Promise<string>, write: (text: string) => void): Decider {
  return async (s) => {
    const states = Object.entries(s.workItems)
      .map(([state, n]) => `${n} ${state}`)
      .join(', ')
    write(`\nMission "${s.title}" (${s.missionId}) asks for approval of revision ${s.missionRevision}\n`)
    write(`  WorkItems: ${states}; accepted review Evidence: ${s.acceptedEvidence}\n`)
    for (const h of s.artifactHashes) write(`  Artifact ${h}\n`)
    for (;;) {
      const answer = (await ask('Approve? [y]es / [c]hanges: ')).trim().toLowerCase()
      if (answer === 'y' || answer === 'yes') return { decision: 'approved', comments: 'Approved at the terminal.' }
      if (answer === 'c' || answer === 'changes') {
        const feedback = (await ask('What must change? ')).trim() || 'Changes requested at the terminal.'
        return { decision: 'changes_requested', comments: feedback, conditions: [feedback] }
      }
    }
  }
}

/** Options of {@link createMissionOwner}. */
export interface MissionOwnerOptions {
  /** The human MissionOwner (§7.1: a root Mission's owner is human). */
  readonly actor: { readonly type: 'human'; readonly id: string }
  readonly signingKey: SigningKey
  readonly transport: Transport
  readonly feed: EventFeed
  readonly decide: Decider
  readonly clock?: Clock
  readonly random?: RandomSource
  /** The acceptance policy version decisions cite. Default `1.0.0`. */
  readonly acceptancePolicyVersion?: string
}

/** One decision the MissionOwner signed. */
export interface OwnerRecord {
  readonly atMs: number
  readonly missionId: string
  readonly missionRevision: number
  readonly decision: Approval['decision']
  readonly comments: string
}

/** The MissionOwner's interface. */
export interface MissionOwner {
  readonly client: Client
  readonly tracker: Tracker
  /** Creates a root Mission (§7.1) and subscribes to its Group. */
  createMission(groupId: string, payload: CommandPayload<'mission.create'>): Promise<Receipt>
  /** Decides on every pending submission of its Missions; resolves when the decisions are answered. */
  tick(): Promise<void>
  /** Appoints a Coordinator under the next Coordinator Epoch with the Context Package it receives (§7.2). */
  appointCoordinator(groupId: string, coordinatorAgentId: string, contextPackage: ContextPackage, reason: string, leaseSeconds?: number): Promise<Receipt>
  records(): readonly OwnerRecord[]
  close(): void
}

/**
 * Creates the MissionOwner's interface.
 * @throws UsageError on malformed options.
 */
export function createMissionOwner(options: MissionOwnerOptions): MissionOwner {
  if (options?.actor?.type !== 'human') throw new UsageError('createMissionOwner: a root Mission’s owner is a human (§7.1)')
  if (typeof options.decide !== 'function') throw new UsageError('createMissionOwner: decide must be a function')
  const clock = options.clock ?? Date.now
  const random = options.random ?? systemRandom
  const client = createClient({ actor: options.actor, signingKey: options.signingKey, transport: options.transport, clock, random })
  const tracker = createTracker({ self: options.actor.id, feed: options.feed, onApplied: (events) => client.observe(events) })
  const titles = new Map<string, string>()
  const decided = new Set<string>()
  const log: OwnerRecord[] = []
  let chain: Promise<void> = Promise.resolve()

  function viewOf(g: GroupFacts, submission: NonNullable<GroupFacts['submission']>): SubmissionView {
    const items = [...(tracker.view(g.groupId)?.work.values() ?? [])]
    const counts: Record<string, number> = {}
    for (const w of items) counts[w.state] = (counts[w.state] ?? 0) + 1
    return {
      missionId: g.missionId,
      groupId: g.groupId,
      title: titles.get(g.groupId) ?? g.missionId,
      missionRevision: submission.missionRevision,
      artifactHashes: submission.artifactHashes,
      workItems: counts,
      acceptedEvidence: items.reduce((n, w) => n + (tracker.facts(w.workItemId).accepted?.length ?? 0), 0),
      earlierDecisions: g.decisions.map((d) => d.decision),
    }
  }

  async function decideOn(g: GroupFacts): Promise<void> {
    const submission = g.submission
    if (g.missionState !== 'awaiting_approval' || submission === undefined || decided.has(submission.eventId)) return
    decided.add(submission.eventId)
    const verdict = await options.decide(viewOf(g, submission))
    // §7.3: a signed decision on exactly this revision and Artifact set.
    const approval = sign(
      'approval',
      {
        approvalId: newUrnUuid(random),
        kind: 'mission_final',
        decision: verdict.decision,
        missionId: g.missionId,
        groupId: g.groupId,
        missionRevision: submission.missionRevision,
        artifactHashes: [...submission.artifactHashes],
        acceptancePolicyVersion: options.acceptancePolicyVersion ?? '1.0.0',
        approver: options.actor,
        comments: verdict.comments,
        conditions: verdict.decision === 'changes_requested' ? [...verdict.conditions] : [],
        occurredAt: new Date(clock()).toISOString(),
      },
      options.signingKey,
    ) as unknown as Approval
    const to = client.withGroup(g.groupId)
    try {
      await (verdict.decision === 'approved' ? to.missionApprove({ approval }) : to.missionRequestChanges({ approval }))
      log.push({ atMs: clock(), missionId: g.missionId, missionRevision: submission.missionRevision, decision: verdict.decision, comments: verdict.comments })
    } catch (error) {
      // A refused decision (e.g. a newer submission superseded it) is taken again on the next tick.
      decided.delete(submission.eventId)
      throw ProtocolError.from(error)
    }
  }

  async function round(): Promise<void> {
    for (const groupId of titles.keys()) {
      const g = tracker.group(groupId)
      if (g !== undefined) await decideOn(g)
    }
  }

  return {
    client,
    tracker,
    async createMission(groupId, payload) {
      const receipt = await client.missionCreate(payload, { groupId })
      titles.set(groupId, payload.title)
      tracker.subscribe(groupId)
      return receipt
    },
    tick() {
      const next = chain.then(round)
      chain = next.catch(() => {})
      return next
    },
    appointCoordinator(groupId, coordinatorAgentId, contextPackage, reason, leaseSeconds = 14_400) {
      return client.withGroup(groupId).missionAssignCoordinator({ coordinatorAgentId, leaseSeconds, contextPackage, reason })
    },
    records: () => [...log],
    close: () => tracker.close(),
  }
}
