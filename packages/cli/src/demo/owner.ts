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
import { systemClock, timestampOf } from '@weft/codec/time'
import { createClient, newUrnUuid, systemRandom, type Client, type Clock, type EventFeed, type RandomSource, type Receipt, type Transport } from '@weft/client'
import type { Approval, CommandPayload, ContextPackage, Evidence } from '@weft/spec'
import { createInterface } from 'node:readline/promises'
import { deliverableOf } from './review.js'
import { createTracker, type GroupFacts, type Tracker } from './tracker.js'
import type { TrackedWork } from '@weft/worker'

/** One Evidence record that cites a submitted Artifact (§13.2). */
export interface ArtifactEvidence {
  readonly type: Evidence['type']
  readonly result: Evidence['result']
  /** `submitted`: it came with the WorkItem's submission; `review`: the Coordinator's acceptance carried it. */
  readonly source: 'submitted' | 'review'
}

/** The Evidence of one acceptance criterion that cites a given Artifact. */
export interface CriterionEvidence {
  readonly criterionId: string
  /** Empty when no Evidence for the criterion cites the Artifact. */
  readonly evidence: readonly ArtifactEvidence[]
}

/** A submitted Artifact as the MissionOwner reviews it: what it is and what backs it. */
export interface SubmittedArtifact {
  readonly hash: string
  /** The WorkItem whose manifest published it; absent when the manifest is unknown. */
  readonly workItemId?: string
  /** The Work Contract deliverable it delivers; absent when none matches or the manifest is unknown. */
  readonly deliverableId?: string
  /** From its manifest; absent when no manifest for the hash was published in the Group. */
  readonly mediaType?: string
  /** The producing WorkItem's acceptance criteria, each with the Evidence citing this Artifact. */
  readonly criteria: readonly CriterionEvidence[]
}

/** What the MissionOwner sees of a pending submission (§7.3). */
export interface SubmissionView {
  readonly missionId: string
  readonly groupId: string
  readonly title: string
  readonly missionRevision: number
  /** The exact Artifact set the decision is signed over, in submission order. */
  readonly artifactHashes: readonly string[]
  /** The same Artifacts, described: one entry per hash, in the same order. */
  readonly artifacts: readonly SubmittedArtifact[]
  /** WorkItems by state. */
  readonly workItems: Readonly<Record<string, number>>
  /** Review Evidence accepted by the Coordinator in this Group, to inspect before deciding (§13.2 step 5). */
  readonly acceptedEvidence: number
  /** Earlier decisions on this Mission, oldest first. */
  readonly earlierDecisions: readonly Approval['decision'][]
}

/** A MissionOwner's decision: approve, or request changes with feedback. */
export type OwnerDecision = { readonly decision: 'approved'; readonly comments: string } | { readonly decision: 'changes_requested'; readonly comments: string; readonly conditions: readonly string[] }

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
 * `text` safe to print on a terminal: protocol text (titles, deliverable IDs) comes from other
 * principals, and a control or bidirectional-override character in it could rewrite the screen
 * or disguise what is being approved; a line break could fake another line of the prompt. Each
 * one becomes U+FFFD.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, '\ufffd')
}

/** `sha256:abcdef0123…`: enough of a hash to tell the Artifacts of one submission apart. */
export function shortHash(hash: string): string {
  const colon = hash.indexOf(':') + 1
  return hash.length <= colon + 10 ? hash : `${hash.slice(0, colon + 10)}…`
}

function artifactLines(a: SubmittedArtifact): string {
  const what =
    a.mediaType === undefined ? '(no manifest in this Group)' : `${a.deliverableId ?? '(no matching deliverable)'} (${a.mediaType})${a.workItemId === undefined ? '' : ` of ${a.workItemId}`}`
  const lines = [`  Artifact ${printable(shortHash(a.hash))} ${printable(what)}\n`]
  for (const c of a.criteria) {
    const evidence = c.evidence.length === 0 ? 'no Evidence cites this Artifact' : c.evidence.map((e) => `${e.type} ${e.result} (${e.source})`).join(', ')
    lines.push(`      ${printable(`${c.criterionId}: ${evidence}`)}\n`)
  }
  return lines.join('')
}

/**
 * Asks a human on a terminal: `y` approves, `c` requests changes with typed feedback, anything
 * else asks again. Before asking it shows each submitted Artifact by deliverable and media type
 * with the Evidence per acceptance criterion that cites it, so the decision is not made over bare
 * hashes. `ask` is e.g. {@link terminalQuestion}.
 */
export function promptDecider(ask: (prompt: string) => Promise<string>, write: (text: string) => void): Decider {
  return async (s) => {
    const states = Object.entries(s.workItems)
      .map(([state, n]) => `${n} ${state}`)
      .join(', ')
    write(printable(`\nMission "${s.title}" (${s.missionId}) asks for approval of revision ${s.missionRevision}`) + '\n')
    write(`  WorkItems: ${states}; accepted review Evidence: ${s.acceptedEvidence}\n`)
    write(`  ${s.artifacts.length} Artifact(s), with the Evidence per acceptance criterion that cites each:\n`)
    for (const a of s.artifacts) write(artifactLines(a))
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

/** Options of {@link terminalQuestion}. */
export interface TerminalQuestionOptions {
  /**
   * How long input is read and thrown away before the prompt is shown. Default
   * {@link TYPE_AHEAD_SETTLE_MS}.
   */
  readonly settleMs?: number
  /** Whether the input is a terminal with line editing (readline's `terminal`); default: whether `output` is a TTY. */
  readonly terminal?: boolean
}

/**
 * How long {@link terminalQuestion} discards input before it prompts. Lines a terminal buffered
 * while the run printed progress arrive at once when reading resumes, well within this; and no
 * one answers a prompt before it is shown, so nothing typed in reply is lost.
 */
export const TYPE_AHEAD_SETTLE_MS = 100

/** The parts of a TTY input stream {@link discardPending} uses; plain streams have none of them. */
interface RawCapable {
  readonly isTTY?: boolean
  readonly isRaw?: boolean
  setRawMode?(raw: boolean): unknown
}

/**
 * Reads and throws away whatever `input` delivers within `settleMs`: the lines typed ahead and,
 * on a terminal (put in raw mode meanwhile, so the kernel hands over a line not yet ended), a
 * half-typed line too. Nothing is echoed.
 * @returns How many lines were dropped, a half line counting as one.
 */
async function discardPending(input: NodeJS.ReadableStream, settleMs: number): Promise<number> {
  const tty = input as NodeJS.ReadableStream & RawCapable
  const raw = tty.isTTY === true && typeof tty.setRawMode === 'function'
  const wasRaw = tty.isRaw === true
  let text = ''
  const drop = (chunk: Buffer | string): void => {
    text += chunk.toString()
  }
  if (raw) tty.setRawMode!(true)
  input.on('data', drop)
  input.resume()
  try {
    await new Promise((resolve) => setTimeout(resolve, settleMs))
  } finally {
    input.off('data', drop)
    input.pause()
    if (raw) tty.setRawMode!(wasRaw)
  }
  if (text === '') return 0
  const lines = text.split(/\r\n|\r|\n/)
  return lines.length - 1 + (lines.at(-1) === '' ? 0 : 1)
}

/**
 * A question function over a terminal that only takes input typed after its prompt appeared.
 * Anything typed before (a stray Enter, an answer typed too early, text pasted while the run
 * scrolled by) is read and discarded first, and the person is told how much was dropped: an
 * Approval or change request is signed on the person's behalf, so it must answer the question on
 * the screen. Each call opens and closes its own readline interface, so the process can exit
 * between questions.
 * @example
 * ```ts
 * const decide = promptDecider(terminalQuestion(process.stdin, process.stdout), (t) => process.stdout.write(t))
 * ```
 */
export function terminalQuestion(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, options: TerminalQuestionOptions = {}): (prompt: string) => Promise<string> {
  const settleMs = options.settleMs ?? TYPE_AHEAD_SETTLE_MS
  return async (prompt) => {
    const dropped = await discardPending(input, settleMs)
    if (dropped > 0) output.write(`\n(ignored ${dropped} line(s) typed before this question)\n`)
    // Created only now, synchronously with the prompt: nothing can arrive in between.
    const rl = createInterface({ input, output, prompt: '', ...(options.terminal === undefined ? {} : { terminal: options.terminal }) })
    try {
      return await rl.question(prompt)
    } finally {
      rl.close()
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
  const clock = options.clock ?? systemClock
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
      artifacts: submission.artifactHashes.map((hash) => describeArtifact(hash, items)),
      workItems: counts,
      acceptedEvidence: items.reduce((n, w) => n + (tracker.facts(w.workItemId).accepted?.length ?? 0), 0),
      earlierDecisions: g.decisions.map((d) => d.decision),
    }
  }

  /** A submitted hash with its manifest, deliverable and the Evidence that cites it, from the Group's WorkItems. */
  function describeArtifact(hash: string, items: readonly TrackedWork[]): SubmittedArtifact {
    for (const w of items) {
      const facts = tracker.facts(w.workItemId)
      const manifest = facts.artifacts.get(hash)
      if (manifest === undefined) continue
      const cites = (source: ArtifactEvidence['source'], list: readonly Evidence[] | undefined): { e: Evidence; source: ArtifactEvidence['source'] }[] =>
        (list ?? []).filter((e) => e.artifactHashes.includes(hash)).map((e) => ({ e, source }))
      const evidence = [...cites('submitted', facts.submission?.evidence), ...cites('review', facts.accepted)]
      // The contract's criteria in its order, then any other criterion the Evidence names.
      const ids = [...new Set([...(w.contract?.acceptanceCriteria.map((c) => c.criterionId) ?? []), ...evidence.flatMap(({ e }) => e.criterionIds)])]
      const deliverable = deliverableOf(w.contract, manifest)
      return {
        hash,
        workItemId: w.workItemId,
        ...(deliverable === undefined ? {} : { deliverableId: deliverable.deliverableId }),
        mediaType: manifest.mediaType,
        criteria: ids.map((criterionId) => ({
          criterionId,
          evidence: evidence.filter(({ e }) => e.criterionIds.includes(criterionId)).map(({ e, source }) => ({ type: e.type, result: e.result, source })),
        })),
      }
    }
    return { hash, criteria: [] }
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
        occurredAt: timestampOf(clock.now()),
      },
      options.signingKey,
    ) as unknown as Approval
    const to = client.withGroup(g.groupId)
    try {
      await (verdict.decision === 'approved' ? to.missionApprove({ approval }) : to.missionRequestChanges({ approval }))
      log.push({ atMs: clock.now(), missionId: g.missionId, missionRevision: submission.missionRevision, decision: verdict.decision, comments: verdict.comments })
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
