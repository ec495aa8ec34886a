import { UsageError } from '@weft/codec'
import type { GroupSnapshot } from '@weft/spec'
import { describe, expect, it } from 'vitest'
import { compactHead, post, restart, startedKept, type KeptWorld } from '@weft/testkit/recovery'
import { cast } from '@weft/testkit/fixtures'
import { signGroupSnapshot } from './snapshots.js'
import type { AuthorityStore, SnapshotRecord } from './store.js'

/** A compacted world with Messages on both sides of the compaction point. */
async function compacted(): Promise<KeptWorld> {
  const kept = await startedKept()
  await post(kept.w)
  compactHead(kept, 'urn:weft:test:snapshot:restore')
  await post(kept.w)
  return kept
}

/** `store` with its snapshot record of every Group changed by `change`. */
function withRecord(store: AuthorityStore, change: (record: SnapshotRecord) => SnapshotRecord): AuthorityStore {
  return { ...store, snapshot: (groupId) => (store.snapshot?.(groupId) === undefined ? undefined : change(store.snapshot(groupId)!)) }
}

describe('restore from a compacted store (§7.4, §16)', () => {
  it('verifies each stored snapshot on the way and ends in the state the live Authority holds', async () => {
    const kept = await compacted()
    const restored = restart(kept)
    expect(restored.state).toEqual(kept.w.authority.state)
    expect(restored.replayState()).toEqual(kept.w.authority.state)
    expect(restored.snapshot(kept.w.groupId)).toEqual(kept.w.authority.snapshot(kept.w.groupId))
    const through = restored.snapshot(kept.w.groupId)!.throughSequence
    expect(restored.events(kept.w.groupId, through)).toEqual(kept.w.authority.events(kept.w.groupId, through))
  })

  it('refuses a store whose snapshot, reference, state image or history was tampered with', async () => {
    const kept = await compacted()
    const { snapshot } = kept.store.snapshot!(kept.w.groupId)!
    const { signature: _signature, ...unsigned } = snapshot
    const tampered: [(record: SnapshotRecord) => SnapshotRecord, RegExp][] = [
      // A snapshot signed by a key the Registry does not bind to its creator.
      [(r) => ({ ...r, snapshot: signGroupSnapshot(unsigned, cast.worker1.key) }), /signature/],
      [(r) => ({ ...r, snapshot: signGroupSnapshot({ ...unsigned, stateHash: `sha256:${'e'.repeat(64)}` }, cast.controlPlane.key) as GroupSnapshot }), /state hash/],
      [(r) => ({ ...r, snapshotHash: `sha256:${'e'.repeat(64)}` }), /reference/],
      [(r) => ({ ...r, image: r.image.replace(kept.w.groupId, 'urn:weft:test:group:elsewhere') }), /state image/],
    ]
    for (const [change, reason] of tampered) {
      expect(() => restart(kept, withRecord(kept.store, change))).toThrow(UsageError)
      expect(() => restart(kept, withRecord(kept.store, change))).toThrow(reason)
    }
    // A retained history cut short of the snapshot sequence.
    const cut: AuthorityStore = { ...kept.store, allEvents: () => [...kept.store.allEvents()].filter((e) => e.groupId !== kept.w.groupId || e.sequence! < 3) }
    expect(() => restart(kept, cut)).toThrow(/does not reach its snapshot sequence/)
  })
})
