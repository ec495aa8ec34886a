/**
 * State checkpoint fixtures (§7.4, §16): a world whose every ledger holds entries, the ledgers of
 * a state by Group and WorkItem, stores that record how they were read, and
 * re-signed manifests for the negative cases.
 */
import type { Receipt } from '@weft/client'
import { expect } from 'vitest'
import { signCheckpointManifest, type AuthorityState, type AuthorityStore, type CheckpointManifest, type StateCheckpoint } from '@weft/authority'
import { snapshotOf } from './archive.js'
import { cast } from './fixtures.js'
import { ownerFails, post } from './recovery.js'
import { enrol, MEMBERS, openMission, reach, reachMission, runningOf, started, type World } from './world.js'

/** The second Group of {@link foldedWorld}: a finished, archived Mission. */
export const ARCHIVED_GROUP = 'urn:weft:test:group:archived'

/**
 * A started world over `store` whose ledgers all hold entries: Message rates and a Cooperation
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

/** The ledger members of the Authority state (its `model.ts`): folds of the log a checkpoint image carries beside the body. */
export const LEDGERS = {
  group: ['missionUsage', 'overridesByTarget', 'rateWindows', 'snapshots'],
  workItem: ['closedLeases', 'retryLedger', 'submissionFacts', 'usage'],
} as const

/**
 * Every ledger of `state` that holds something, by member, Group and WorkItem (`member id`): what
 * a checkpoint had to carry. An empty or zero ledger reads as none.
 */
export function foldTableEntries(state: AuthorityState): Record<string, unknown> {
  const entries: Record<string, unknown> = {}
  const keep = (key: string, value: unknown): void => {
    if (!holdsNothing(value)) entries[key] = value
  }
  for (const [groupId, group] of state.groups) {
    for (const member of LEDGERS.group) keep(`${member} ${groupId}`, group[member])
    for (const [workItemId, record] of group.workItems) for (const member of LEDGERS.workItem) keep(`${member} ${workItemId}`, record[member])
  }
  return entries
}

function holdsNothing(value: unknown): boolean {
  if (value === 0 || value === undefined) return true
  if (value instanceof Map || value instanceof Set) return value.size === 0
  if (typeof value === 'object' && value !== null) return Object.values(value).every(holdsNothing)
  return false
}

/** Expects `state` to be `expected`, ledgers and derived indexes included (they are members of the state). */
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
