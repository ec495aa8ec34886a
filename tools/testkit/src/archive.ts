/**
 * Archival fixtures (§7.4): a signed final snapshot of a world's Group as it stands, made by the
 * control plane (or any other signer) with the `snapshots.ts` builders.
 */
import type { GroupSnapshot } from '@weft/spec'
import { buildGroupSnapshot, signGroupSnapshot, type UnsignedGroupSnapshot } from '@weft/authority'
import { cast, type Cast } from './fixtures.js'
import type { World } from './world.js'

/** Options of {@link snapshotOf}. */
export interface SnapshotFixtureOptions {
  /** The signer, also named as `createdBy` (default: the control plane service). */
  readonly by?: Cast
  /** Changes made to the unsigned snapshot before it is signed (a forged but well-signed snapshot). */
  readonly change?: (snapshot: UnsignedGroupSnapshot) => UnsignedGroupSnapshot
}

/** A signed snapshot of `w`'s Group through its current head, created now. */
export function snapshotOf(w: World, options: SnapshotFixtureOptions = {}): GroupSnapshot {
  const by = options.by ?? cast.controlPlane
  const unsigned = buildGroupSnapshot(w.group(), w.authority.events(w.groupId), {
    snapshotId: w.fresh('urn:weft:test:snapshot'),
    createdBy: { type: 'service', id: by.actor.id },
    createdAt: new Date(w.clock.nowMs).toISOString(),
  })
  return signGroupSnapshot(options.change?.(unsigned) ?? unsigned, by.key)
}
