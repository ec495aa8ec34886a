/**
 * Signed Group Snapshots (§7.4, §16): what a Group's log folds into through one sequence, reduced
 * to its decisions, WorkItems, approvals and Artifact references, committed to by a state hash and
 * signed by an Organization service. Archival rests on one; a recipient told `CURSOR_TOO_OLD`
 * restores one and resumes after its sequence.
 *
 * The state hash is a function of the folded {@link GroupState} alone, so the Authority can check a
 * snapshot against its live state without reading the log; the Event IDs and the Policy Log are
 * checked against the log by {@link verifyGroupSnapshot} wherever the log is at hand.
 * @module
 */
import { canonicalizeOrThrow, sha256Tagged, sign, UsageError, type KeyResolver, type SigningKey } from '@weft/codec'
import { EVENT_CATALOG, type Event, type EventKind, type GroupSnapshot, type PolicyLogEntry, type SnapshotCreator } from '@weft/spec'
import { signedVerifier } from '@weft/validators/signed'
import type { GroupState } from './model.js'

/** A Group Snapshot before its creator signs it. */
export type UnsignedGroupSnapshot = Omit<GroupSnapshot, 'signature'>

/** Who makes a snapshot, when, and under which ID. */
export interface SnapshotOptions {
  readonly snapshotId: string
  /** §6.4: only an Organization service creates a Group Snapshot. */
  readonly createdBy: SnapshotCreator
  readonly createdAt: string
}

/**
 * The Event kinds the Policy Log of a snapshot records as decisions (§7.4 "decisions", §20): Mission
 * and policy decisions, authorizations and closures of work, delegation, approvals and redactions.
 */
const DECISION_KINDS: ReadonlySet<EventKind> = new Set<EventKind>([
  ...EVENT_CATALOG.filter((e) => e.aggregate === 'mission' || e.aggregate === 'policy').map((e) => e.kind),
  'membership.delegation.granted',
  'message.redacted',
  'work.authorized',
  'work.contract.revised',
  'work.result.accepted',
  'work.failed',
  'work.cancelled',
  'approval.execution.granted',
])

const SUMMARIES = new Map<string, string>(EVENT_CATALOG.map((e) => [e.kind, e.summary]))

/**
 * The content a snapshot's `stateHash` commits to: the Mission and Group documents, every WorkItem
 * document, Mission and execution approvals, Artifact references (never bytes, §13.1), Memberships,
 * Delegation Grants and override grants, each list in identifier order so the hash is stable.
 */
export function snapshotContent(group: GroupState): Record<string, unknown> {
  const byKey = <T>(map: ReadonlyMap<string, T>): T[] => [...map.keys()].sort().map((k) => map.get(k) as T)
  return {
    groupId: group.groupId,
    throughSequence: group.head,
    mission: group.mission,
    group: group.group,
    memberships: byKey(group.memberships),
    delegationGrants: byKey(group.grants).map((g) => g.grant),
    workItems: byKey(group.workItems).map((r) => ({
      workItem: r.doc,
      dependencyIds: [...r.dependencyIds].sort(),
      executionApprovals: r.executionApprovals,
    })),
    approvals: byKey(group.approvals),
    artifacts: byKey(group.artifacts).map((a) => ({
      artifactId: a.manifest.artifactId,
      contentHash: a.manifest.contentHash,
      eventId: a.eventId,
      ownershipEpoch: a.ownershipEpoch,
    })),
    overrides: byKey(group.overrides).map((o) => ({ grant: o.grant, consumedByActionId: o.consumedByActionId ?? null })),
  }
}

/** The `stateHash` of a snapshot of `group` at its current head: SHA-256 of the canonical {@link snapshotContent}. */
export function groupStateHash(group: GroupState): string {
  return sha256Tagged(canonicalizeOrThrow(snapshotContent(group)))
}

/** The Policy Log of a Group log: one entry per decision Event, keyed by its Event ID (§7.4, §20). */
export function policyLogOf(events: readonly Event[]): PolicyLogEntry[] {
  return events
    .filter((e) => DECISION_KINDS.has(e.kind as EventKind))
    .map((e) => ({
      entryId: e.eventId,
      decision: SUMMARIES.get(e.kind) ?? e.kind,
      actor: e.actor,
      occurredAt: e.occurredAt,
      details: { kind: e.kind, sequence: e.sequence as number, aggregateRevision: e.aggregateRevision as number },
    }))
}

/**
 * Builds the unsigned snapshot of `group` through its head from the Group's whole log `events`
 * (sequences 1..head, in order).
 * @throws UsageError when `events` is not exactly that log.
 * @example
 * const snapshot = signGroupSnapshot(buildGroupSnapshot(group, authority.events(groupId), { snapshotId, createdBy, createdAt }), key)
 */
export function buildGroupSnapshot(group: GroupState, events: readonly Event[], options: SnapshotOptions): UnsignedGroupSnapshot {
  const gap = events.findIndex((e, i) => e.groupId !== group.groupId || e.sequence !== i + 1)
  if (gap >= 0 || events.length !== group.head || events.length === 0) {
    throw new UsageError(`buildGroupSnapshot: expected the ${group.head} Events of Group ${group.groupId} in sequence order`)
  }
  return {
    snapshotId: options.snapshotId,
    groupId: group.groupId,
    throughSequence: group.head,
    eventIds: events.map((e) => e.eventId),
    stateHash: groupStateHash(group),
    policyLog: policyLogOf(events),
    createdBy: { type: 'service', id: options.createdBy.id },
    createdAt: options.createdAt,
  }
}

/** Signs a snapshot with its creator's key under the `group-snapshot` profile (§6.4: signed time `createdAt`). */
export function signGroupSnapshot(snapshot: UnsignedGroupSnapshot, key: SigningKey): GroupSnapshot {
  return sign('group-snapshot', snapshot, key) as GroupSnapshot
}

/** The content hash a `group.snapshot.created` Event references the stored snapshot by (§7.4). */
export function snapshotArtifactHash(snapshot: GroupSnapshot): string {
  return sha256Tagged(canonicalizeOrThrow(snapshot))
}

/**
 * Why `snapshot` does not describe `group` as it stands (Group, head sequence, Event count and
 * state hash), or `undefined` when it does. Reads the folded state only, so a handler may call it.
 */
export function snapshotMismatch(snapshot: Pick<GroupSnapshot, 'groupId' | 'throughSequence' | 'eventIds' | 'stateHash'>, group: GroupState): string | undefined {
  if (snapshot.groupId !== group.groupId) return `the snapshot is of Group ${String(snapshot.groupId)}, not ${group.groupId}`
  if (snapshot.throughSequence !== group.head) return `the snapshot runs through sequence ${String(snapshot.throughSequence)}, the Group head is ${group.head}`
  if (snapshot.eventIds?.length !== group.head) return `the snapshot lists ${String(snapshot.eventIds?.length)} Event IDs for ${group.head} Events`
  if (snapshot.stateHash !== groupStateHash(group)) return 'the snapshot state hash does not match the Group state'
  return undefined
}

/** What {@link verifyGroupSnapshot} checks a snapshot against. */
export interface SnapshotVerifyOptions {
  /** Resolves the creator's key (§6.4), e.g. the Organization Registry. */
  readonly registry: KeyResolver
  /** The Group's log from sequence 1 on (at least through the snapshot's sequence). */
  readonly events: readonly Event[]
  /** The Group state at the snapshot's sequence, to recompute `stateHash` from; skipped when absent. */
  readonly group?: GroupState
}

/** The outcome of {@link verifyGroupSnapshot}: the sequence to resume after, or why the snapshot is refused. */
export type SnapshotVerification =
  | { readonly ok: true; readonly snapshot: GroupSnapshot; readonly resumeAfterSequence: number }
  | { readonly ok: false; readonly reason: string }

/**
 * Verifies a Signed Group Snapshot for restore (§16): all six stages of §6.4 under the
 * `group-snapshot` profile, then that its Event IDs and Policy Log are exactly those of the log
 * through `throughSequence`, and (given the state) that `stateHash` matches. On success the
 * recipient resumes after `resumeAfterSequence`.
 */
export function verifyGroupSnapshot(input: string | Uint8Array | GroupSnapshot, options: SnapshotVerifyOptions): SnapshotVerification {
  const bytes = typeof input === 'string' || input instanceof Uint8Array ? input : JSON.stringify(input)
  const checked = signedVerifier.verify('group-snapshot', bytes, options.registry)
  if (!checked.ok) return { ok: false, reason: `signature: ${checked.error.message}` }
  const snapshot = JSON.parse(typeof bytes === 'string' ? bytes : new TextDecoder().decode(bytes)) as GroupSnapshot
  const log = options.events.filter((e) => e.groupId === snapshot.groupId && (e.sequence as number) <= snapshot.throughSequence)
  if (log.length !== snapshot.throughSequence || log.some((e, i) => e.sequence !== i + 1)) return { ok: false, reason: 'the log does not reach the snapshot sequence without a gap' }
  if (canonicalHash(log.map((e) => e.eventId)) !== canonicalHash(snapshot.eventIds)) return { ok: false, reason: 'the snapshot Event IDs differ from the log' }
  if (canonicalHash(policyLogOf(log)) !== canonicalHash(snapshot.policyLog)) return { ok: false, reason: 'the snapshot Policy Log differs from the decisions in the log' }
  if (options.group !== undefined) {
    const mismatch = snapshotMismatch(snapshot, options.group)
    if (mismatch !== undefined) return { ok: false, reason: mismatch }
  }
  return { ok: true, snapshot, resumeAfterSequence: snapshot.throughSequence }
}

function canonicalHash(value: unknown): string {
  return sha256Tagged(canonicalizeOrThrow(value))
}
