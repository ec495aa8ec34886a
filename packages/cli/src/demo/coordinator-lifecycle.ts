/**
 * Where a Coordinator stands in its Mission's lifecycle, as a small machine: each round reads its
 * seat in the Group from the log ({@link SeatReading}) and {@link nextStatus} says where that
 * leaves it. Only a `running` Coordinator issues Commands; a runtime that once held the seat and
 * lost it is `replaced` (§7.2), never back on `standby`.
 * @module
 */
import type { MissionState } from '@weft/spec'

/** Where the Coordinator stands. */
export type CoordinatorStatus =
  /** Its Group is not readable yet, or another Agent holds the Coordinator lease. */
  | 'standby'
  | 'running'
  | 'awaiting_approval'
  | 'approved'
  | 'cancelled'
  | 'failed'
  /** It held the lease and a higher Coordinator Epoch replaced it (§7.2). */
  | 'replaced'

/** What one round reads from the log about the Coordinator's seat in its Group. */
export type SeatReading =
  /** The Group has no Event it can read yet (§14: a child Mission's Group exists only once promoted). */
  | { readonly seat: 'unreadable' }
  /** Its Membership ended with its Coordinator Epoch, and its feed with it (§7.2, §8); read once it has held the seat. */
  | { readonly seat: 'lost' }
  /** Another Agent, or another Coordinator Epoch, holds the Coordinator lease (§7.2). */
  | { readonly seat: 'other' }
  /** It holds the lease under the Coordinator Epoch its client knows; the Mission is in `missionState` (§7.1). */
  | { readonly seat: 'held'; readonly missionState: MissionState }

/** Whether a Coordinator in `status` has held its seat at some point: a later loss then means replacement. */
export function hasHeld(status: CoordinatorStatus): boolean {
  return status !== 'standby'
}

/** The status a Coordinator in `status` moves to on `reading`. */
export function nextStatus(status: CoordinatorStatus, reading: SeatReading): CoordinatorStatus {
  switch (reading.seat) {
    case 'unreadable':
      return status
    case 'lost':
      return 'replaced'
    case 'other':
      return hasHeld(status) ? 'replaced' : 'standby'
    case 'held':
      // §7.1: the Mission's own state, once it left `active`, is where the Coordinator stands.
      return reading.missionState === 'active' ? 'running' : reading.missionState
  }
}
