/**
 * State checkpoint fixtures (§7.4, §16): a world whose every fold table holds entries, a
 * comparison of fold tables between two states, stores that record how they were read, and
 * re-signed manifests for the negative cases.
 */
import type { Receipt } from '@weft/client'
import { expect } from 'vitest'
import { foldTables } from '../src/log/checkpoint-tables.js'
import { signCheckpointManifest } from '../src/log/checkpoint.js'
import type { AuthorityState } from '../src/model.js'
import type { AuthorityStore, CheckpointManifest, StateCheckpoint } from '../src/log/store.js'
import { snapshotOf } from './fixtures-archive.js'
import { ownerFails, post } from './fixtures-recovery.js'
import { cast } from './fixtures.js'
import { enrol, MEMBERS, openMission, reach, reachMission, runningOf, started, type World } from './world.js'

/** The second Group of {@link foldedWorld}: a finished, archived Mission. */
export const ARCHIVED_GROUP = 'urn:weft:test:group:archived'

/**
 * A started world over `store` whose fold tables all hold entries: Message rates and a Cooperation
 * Override Grant (§20), a budget charge (§12), a classified failure with its closed leases
 * (§11.4), a pending submission (§13.2), and a second Group archived against its snapshot (§7.4).
 */
export async function foldedWorld(store: AuthorityStore): Promise<World> {
  const w = await started({ store, policy: { maxMessagesPerMinute: 100 } })
  await post(w)
  await w.as.owner.policyGrantCooperationOverride({
    grantId: 'urn:weft:test:override:burst',
    policyName: 'message_rate',
    beneficiary: cast.worker1.actor,
    targetCommandKind: 'message.post',
    targetActionId: 'urn:weft:test:action:burst',
    reason: 'A burst of status notes.',
    expiresAt: new Date(w.clock.nowMs + 3_600_000).toISOString(),
  })
  const charged = await reach(w, 'active')
  await charge(w, charged)
  await ownerFails(w, await reach(w, 'active'), { code: 'TRANSIENT', attempts: 1, stopped: 'retry-budget' })
  await reach(w, 'submitted')
  const archived = w.in(ARCHIVED_GROUP)
  await openMission(archived)
  await enrol(archived, MEMBERS)
  await reachMission(archived, 'approved')
  await archived.as.controlPlane.coreGroupArchive({ snapshot: snapshotOf(archived) }, { groupId: ARCHIVED_GROUP })
  return w
}

/** The owner of active WorkItem `id` records a small resource usage against it (§12). */
function charge(w: World, id: string): Promise<Receipt> {
  const { epoch, leaseId } = runningOf(w, id)
  return w.as.worker1.coreResourceUsageRecord({ workItemId: id, ownershipEpoch: epoch, executionLeaseId: leaseId, usageDelta: { toolCalls: 1, modelTokens: 100 } })
}

/**
 * Every fold-table entry of `state`, by table, Group and WorkItem: what `toEqual` on the state
 * cannot see. An entry holding nothing (zero usage, an empty list) reads as no entry: the budget
 * ledgers make one the first time a handler reads them, so a live state has some a fresh fold has not.
 */
export function foldTableEntries(state: AuthorityState): Record<string, unknown> {
  const entries: Record<string, unknown> = {}
  const keep = (key: string, value: unknown): void => {
    if (!holdsNothing(value)) entries[key] = value
  }
  for (const t of foldTables()) {
    for (const [groupId, group] of state.groups) {
      if (t.keyedBy === 'group' && t.table.has(group)) keep(`${t.name} ${groupId}`, t.table.get(group))
      for (const [workItemId, record] of group.workItems) if (t.keyedBy === 'workItem' && t.table.has(record)) keep(`${t.name} ${workItemId}`, t.table.get(record))
    }
  }
  return entries
}

function holdsNothing(value: unknown): boolean {
  if (value === 0 || value === undefined) return true
  if (value instanceof Map || value instanceof Set) return value.size === 0
  if (typeof value === 'object' && value !== null) return Object.values(value).every(holdsNothing)
  return false
}

/** Expects `state` to be `expected`, fold tables included. */
export function expectSameFold(state: AuthorityState, expected: AuthorityState): void {
  expect(state).toEqual(expected)
  expect(foldTableEntries(state)).toEqual(foldTableEntries(expected))
}

/** `store` counting the full reads of its retained history (`allEvents`). */
export function countingFolds<S extends AuthorityStore>(store: S): S & { readonly folds: () => number } {
  let folds = 0
  return {
    ...store,
    allEvents() {
      folds++
      return store.allEvents()
    },
    folds: () => folds,
  }
}

/** `store` answering `checkpoint()` with `checkpoint` instead of what it keeps. */
export function withCheckpoint(store: AuthorityStore, checkpoint: StateCheckpoint): AuthorityStore {
  return { ...store, checkpoint: () => checkpoint }
}

/** `checkpoint` with its manifest changed by `change` and signed again by the Authority's own key: an authentic checkpoint. */
export function resigned(checkpoint: StateCheckpoint, change: (manifest: Omit<CheckpointManifest, 'signature'>) => Omit<CheckpointManifest, 'signature'>, image = checkpoint.image): StateCheckpoint {
  const { signature: _signature, ...unsigned } = checkpoint.manifest
  return { manifest: signCheckpointManifest(change(unsigned), cast.authority.key), image }
}
