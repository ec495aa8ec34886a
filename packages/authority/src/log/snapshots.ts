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
import { canonicalizeOrThrow, createVerifier, sha256Tagged, sign, UsageError, utf8Encode, type KeyResolver, type SigningKey } from '@weft/codec'
import { EVENT_CATALOG, type Event, type EventKind, type GroupSnapshot, type PolicyLogEntry, type SnapshotCreator } from '@weft/spec'
import { schemaCheckForKind } from '@weft/validators/signed'
import type { GroupState } from '../model.js'

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

/**
 * The state image of `group` at its current head: the RFC 8785 text of its {@link snapshotContent}.
 * Its SHA-256 is {@link groupStateHash}, so a snapshot's signed `stateHash` vouches for it (§16:
 * the recipient verifies the hash before it resumes).
 */
export function snapshotImage(group: GroupState): string {
  return new TextDecoder().decode(canonicalizeOrThrow(snapshotContent(group)))
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
 * (sequences 1..head, in order). For a sequence below the head, or a Group whose online log was
 * compacted, `Authority.buildSnapshot` folds the retained history and calls this.
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
export type SnapshotVerification = { readonly ok: true; readonly snapshot: GroupSnapshot; readonly resumeAfterSequence: number } | SnapshotRefusal

/**
 * Why a snapshot is refused, and at which check: its §6.4 signature, its Event IDs and Policy Log
 * against the log, or its content against the state (hash, Group, sequence).
 */
export interface SnapshotRefusal {
  readonly ok: false
  readonly stage: 'signature' | 'log' | 'state'
  readonly reason: string
}

/**
 * Verifies a Signed Group Snapshot for restore (§16): all six stages of §6.4 under the
 * `group-snapshot` profile, then that its Event IDs and Policy Log are exactly those of the log
 * through `throughSequence`, and (given the state) that `stateHash` matches. On success the
 * recipient resumes after `resumeAfterSequence`.
 */
export function verifyGroupSnapshot(input: string | Uint8Array | GroupSnapshot, options: SnapshotVerifyOptions): SnapshotVerification {
  const signed = signedSnapshot(input, options.registry)
  if (!signed.ok) return signed
  const { snapshot } = signed
  const log = options.events.filter((e) => e.groupId === snapshot.groupId && (e.sequence as number) <= snapshot.throughSequence)
  if (log.length !== snapshot.throughSequence || log.some((e, i) => e.sequence !== i + 1)) return { ok: false, stage: 'log', reason: 'the log does not reach the snapshot sequence without a gap' }
  if (canonicalHash(log.map((e) => e.eventId)) !== canonicalHash(snapshot.eventIds)) return { ok: false, stage: 'log', reason: 'the snapshot Event IDs differ from the log' }
  if (canonicalHash(policyLogOf(log)) !== canonicalHash(snapshot.policyLog)) return { ok: false, stage: 'log', reason: 'the snapshot Policy Log differs from the decisions in the log' }
  if (options.group !== undefined) {
    const mismatch = snapshotMismatch(snapshot, options.group)
    if (mismatch !== undefined) return { ok: false, stage: 'state', reason: mismatch }
  }
  return { ok: true, snapshot, resumeAfterSequence: snapshot.throughSequence }
}

/** A snapshot and the state image it vouches for: what a subscriber told `CURSOR_TOO_OLD` restores (§16). */
export interface RestorePoint {
  /** The Signed Group Snapshot (or its exact JSON text). */
  readonly snapshot: GroupSnapshot | string
  /** The state image: the RFC 8785 text of the snapshot content ({@link snapshotImage}). */
  readonly image: string
}

/** The outcome of {@link verifySnapshotImage}: the restored content and where to resume, or why not. */
export type ImageVerification = { readonly ok: true; readonly snapshot: GroupSnapshot; readonly content: Record<string, unknown>; readonly resumeAfterSequence: number } | SnapshotRefusal

/**
 * Verifies what a subscriber restores after `CURSOR_TOO_OLD` (§16), without the log it no longer
 * has: the snapshot's six §6.4 stages under the `group-snapshot` profile, then that the image
 * hashes to the signed `stateHash` and describes the snapshot's Group at its sequence. The
 * subscriber then resubscribes after `resumeAfterSequence`.
 * @example
 * ```ts
 * const restored = verifySnapshotImage(delivery.snapshot(me, groupId)!, registry)
 * if (restored.ok) delivery.subscribe(me, [{ groupId, afterSequence: restored.resumeAfterSequence }], handlers)
 * ```
 */
export function verifySnapshotImage(point: RestorePoint, registry: KeyResolver): ImageVerification {
  const signed = signedSnapshot(point.snapshot, registry)
  if (!signed.ok) return signed
  const { snapshot } = signed
  if (typeof point.image !== 'string' || sha256Tagged(utf8Encode(point.image)) !== snapshot.stateHash)
    return { ok: false, stage: 'state', reason: 'the state image does not hash to the snapshot state hash' }
  const content = JSON.parse(point.image) as Record<string, unknown>
  if (content['groupId'] !== snapshot.groupId || content['throughSequence'] !== snapshot.throughSequence)
    return { ok: false, stage: 'state', reason: 'the state image is not of the snapshot Group and sequence' }
  return { ok: true, snapshot, content, resumeAfterSequence: snapshot.throughSequence }
}

/**
 * The largest snapshot text verified: a snapshot lists every Event ID of its Group (about 60 bytes
 * each), so the 1 MiB default of the strict parser would stop at some 15,000 Events. 64 MiB holds
 * a million, and still bounds what a hostile text can make the parser hold.
 */
const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024

const snapshotVerifier = createVerifier({ validate: schemaCheckForKind, json: { maxBytes: MAX_SNAPSHOT_BYTES } })

/** The snapshot after the six stages of §6.4 under the `group-snapshot` profile, or why it fails them. */
function signedSnapshot(input: string | Uint8Array | GroupSnapshot, registry: KeyResolver): { readonly ok: true; readonly snapshot: GroupSnapshot } | SnapshotRefusal {
  const bytes = typeof input === 'string' || input instanceof Uint8Array ? input : JSON.stringify(input)
  const checked = snapshotVerifier.verify('group-snapshot', bytes, registry)
  if (!checked.ok) return { ok: false, stage: 'signature', reason: `signature: ${checked.error.message}` }
  return { ok: true, snapshot: checked.verified.document as unknown as GroupSnapshot }
}

function canonicalHash(value: unknown): string {
  return sha256Tagged(canonicalizeOrThrow(value))
}
