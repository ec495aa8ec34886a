/**
 * Recovery fixtures (§7.4, §11.4, §16): worlds whose store the test keeps, so a Group's retained
 * history can be read after its online log was compacted; snapshots made by the control plane
 * from that history; compaction and restart; failure reports in the shape the reference Worker
 * sends them.
 */
import type { Receipt } from '@weft/client'
import { sign } from '@weft/codec'
import type { Event, Evidence, GroupSnapshot } from '@weft/spec'
import { signedVerifier } from '@weft/validators/signed'
import { expect } from 'vitest'
import {
  buildGroupSnapshot,
  createAuthority,
  createMemoryStore,
  signGroupSnapshot,
  verifySnapshotImage,
  type Authority,
  type AuthorityStore,
  type RestorePoint,
  type SnapshotRecord,
} from '@weft/authority'
import { cast, seededRandom } from './fixtures.js'
import { ownerName, runningOf, started, type World } from './world.js'

/** A started world (see `started` of `world.ts`) over a memory store the test holds. */
export interface KeptWorld {
  readonly w: World
  readonly store: AuthorityStore
}

/** {@link started} over a store the caller keeps. */
export async function startedKept(): Promise<KeptWorld> {
  const store = createMemoryStore()
  return { w: await started({ store }), store }
}

/** The Group's retained history 1..head, compacted Events included, in sequence order. */
export function retained(store: AuthorityStore, groupId: string): Event[] {
  return [...store.allEvents()].filter((e) => e.groupId === groupId)
}

/** A control-plane snapshot of `w`'s Group at its head, built from the retained history, under `snapshotId`. */
export function headSnapshot(kept: KeptWorld, snapshotId: string, groupId = kept.w.groupId): GroupSnapshot {
  const group = kept.w.authority.group(groupId)!
  const unsigned = buildGroupSnapshot(group, retained(kept.store, groupId), {
    snapshotId,
    createdBy: { type: 'service', id: cast.controlPlane.actor.id },
    createdAt: new Date(kept.w.clock.nowMs).toISOString(),
  })
  return signGroupSnapshot(unsigned, cast.controlPlane.key)
}

/** Compacts the Group of `kept` behind a fresh snapshot at its head. */
export function compactHead(kept: KeptWorld, snapshotId: string, groupId = kept.w.groupId): SnapshotRecord {
  return kept.w.authority.compact(groupId, headSnapshot(kept, snapshotId, groupId))
}

/** A new Authority over `store`, as a restart would make it: same keys, Registry, clock and policy as the test worlds. */
export function restart(kept: KeptWorld, store: AuthorityStore = kept.store): Authority {
  return createAuthority({
    registry: kept.w.registry,
    keys: { authority: { type: 'service', id: cast.authority.actor.id }, signingKey: cast.authority.key },
    clock: { now: () => kept.w.clock.nowMs },
    random: seededRandom(),
    policy: { controlPlane: [cast.controlPlane.actor.id] },
    store,
  })
}

/** The Event IDs of every Event `authority` serves for `groupId` from `afterSequence`, with their sequences. */
export function served(authority: Authority, groupId: string, afterSequence: number): string[] {
  return authority.events(groupId, afterSequence).map((e) => `${e.sequence} ${e.eventId}`)
}

/** Expects every Event to verify under the `event` profile of §6.4 against the world's Registry. */
export function expectSigned(w: World, events: readonly Event[]): void {
  expect(events.filter((e) => !signedVerifier.verify('event', JSON.stringify(e), w.registry).ok).map((e) => e.eventId)).toEqual([])
}

/** `worker1` posts one Message in the main Conversation of `w`'s Group; resolves to its receipt. */
export function post(w: World, text = 'status'): Promise<Receipt> {
  return w.as.worker1.messagePost({ messageId: `urn:weft:test:message:${w.fresh('m')}`, conversationId: w.group().group.mainConversationId, content: [{ type: 'text', text }] })
}

/** Failure Evidence as the reference Worker reports it (§11.4, §13.2): a `failure_report` whose details name the code and attempts. */
export function failureReport(w: World, workItemId: string, details: Record<string, unknown>): Evidence {
  const by = cast[ownerName(w, workItemId)]
  return sign(
    'evidence',
    {
      evidenceId: `urn:weft:test:evidence:${w.fresh('failure')}`,
      missionId: w.group().missionId,
      groupId: w.groupId,
      workItemId,
      type: 'failure_report',
      subject: { type: 'work_item', id: workItemId },
      criterionIds: ['tests-pass'],
      method: 'Executor run under the contract retry policy.',
      result: 'failed',
      details,
      artifactHashes: [],
      generatedBy: by.actor,
      createdAt: new Date(w.clock.nowMs).toISOString(),
    },
    by.key,
  ) as unknown as Evidence
}

/** The owner of active WorkItem `id` reports its execution failed, with {@link failureReport} `details`. */
export function ownerFails(w: World, id: string, details: Record<string, unknown>): Promise<Receipt> {
  const { epoch, leaseId } = runningOf(w, id)
  const evidence = failureReport(w, id, details)
  return w.as[ownerName(w, id)].workFail({ workItemId: id, reason: `${String(details['code'] ?? 'FAILED')}: the run failed`, ownershipEpoch: epoch, executionLeaseId: leaseId, evidence: [evidence] })
}

/** What a Group's recipient processed: an Event, or a verified snapshot standing for sequences `from + 1 .. through`. */
export type Processed = { readonly event: Event } | { readonly from: number; readonly through: number }

/**
 * The recipient of §16, per Group (by index): it deduplicates by Event ID, processes each Group in
 * sequence order, buffers what arrives early, and its Cursor is its highest contiguous sequence.
 * Told `CURSOR_TOO_OLD`, it restores the snapshot it is handed when that verifies against
 * `registry` and lies ahead of its Cursor (§16).
 */
export function referenceRecipient(starts: readonly number[], registry: World['registry']) {
  const groups = starts.map((start) => ({ cursor: start, seen: new Set<string>(), processed: [] as Processed[], early: new Map<number, Event>() }))
  return {
    groups,
    /** The Events group `index` processed, in order. */
    events: (index: number): Event[] => groups[index]!.processed.flatMap((p) => ('event' in p ? [p.event] : [])),
    receive(index: number, event: Event): void {
      const g = groups[index]!
      if (g.seen.has(event.eventId) || event.sequence! <= g.cursor) return
      g.early.set(event.sequence!, event)
      for (let next = g.early.get(g.cursor + 1); next !== undefined; next = g.early.get(g.cursor + 1)) {
        g.early.delete(next.sequence!)
        g.seen.add(next.eventId)
        g.processed.push({ event: next })
        g.cursor = next.sequence!
      }
    },
    /** Restores `point` for group `index`: `false` when it does not verify, `true` otherwise (also when the Cursor is already past it). */
    restore(index: number, point: RestorePoint | undefined): boolean {
      const g = groups[index]!
      const restored = point === undefined ? undefined : verifySnapshotImage(point, registry)
      if (restored?.ok !== true) return false
      const through = restored.resumeAfterSequence
      if (through <= g.cursor) return true
      for (const sequence of g.early.keys()) if (sequence <= through) g.early.delete(sequence)
      g.processed.push({ from: g.cursor, through })
      g.cursor = through
      return true
    },
  }
}
