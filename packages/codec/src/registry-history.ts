/**
 * The validity history of a key binding (§6.4): its status records, their order, the rule that a
 * boundary only moves earlier, and the effective validity window the records leave.
 *
 * Records are changes, not snapshots: one without `validUntil` leaves the earlier boundary in
 * force, so the effective `validUntil` and `revokedAt` are the earliest any record states
 * ({@link earliest}). Held apart from the binding rules because a repeated declaration and an
 * Agent Card (§6.1) add records to a history that is already checked, under the same rules.
 * @module
 */
import { objectAt, reject, stringAt, timestampAt } from './registry-reading.js'
import { compareTimestamps, type ProtocolTimestamp } from './timestamp.js'

const RECORD_MEMBERS = new Set(['sequence', 'recordedAt', 'validUntil', 'revokedAt'])

/** A validated status record. */
export interface StatusRecord {
  readonly sequence: number
  readonly recordedAt: ProtocolTimestamp
  readonly validUntil: ProtocolTimestamp | undefined
  readonly revokedAt: ProtocolTimestamp | undefined
}

/** Whether two optional instants are both absent or the same instant (§2: compared as instants, not as texts). */
export function sameInstant(a: ProtocolTimestamp | undefined, b: ProtocolTimestamp | undefined): boolean {
  return a === undefined || b === undefined ? a === b : compareTimestamps(a, b) === 0
}

/**
 * §6.4: a `validUntil` or `revokedAt` boundary may be added or moved earlier, never cleared or
 * moved later. Records are changes, so an absent member is no change (not a clearing); a present
 * one must not lie after any earlier present one.
 */
export function checkMonotone(history: readonly StatusRecord[], path: string): void {
  let until: ProtocolTimestamp | undefined
  let revoked: ProtocolTimestamp | undefined
  for (const record of history) {
    if (record.validUntil) {
      if (until && compareTimestamps(record.validUntil, until) > 0) {
        reject('history-boundary-moved-later', `${path}[sequence ${record.sequence}].validUntil`, 'validUntil moved later')
      }
      until = record.validUntil
    }
    if (record.revokedAt) {
      if (revoked && compareTimestamps(record.revokedAt, revoked) > 0) {
        reject('history-boundary-moved-later', `${path}[sequence ${record.sequence}].revokedAt`, 'revokedAt moved later')
      }
      revoked = record.revokedAt
    }
  }
}

/** Reads and checks a binding's `validityHistory` (§6.4): strictly increasing sequences, §2 timestamps, boundaries that only move earlier. */
export function checkHistory(records: readonly unknown[], path: string): StatusRecord[] {
  const history: StatusRecord[] = []
  let previous = 0
  records.forEach((raw, i) => {
    const at = `${path}[${i}]`
    const record = objectAt(raw, at, RECORD_MEMBERS)
    const sequence = record['sequence']
    if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence) || sequence < 1) {
      reject('history-sequence-invalid', `${at}.sequence`, 'not an integer from 1 to 2^53 - 1')
    }
    // The sequence orders the history; a repeated or decreasing one leaves the order of changes,
    // and so the effective boundaries, undetermined.
    if (sequence <= previous) reject('history-sequence-not-increasing', `${at}.sequence`, `sequence ${sequence} after ${previous}`)
    previous = sequence
    const recordedAt = timestampAt(stringAt(record, 'recordedAt', at), 'history-timestamp-invalid', `${at}.recordedAt`)
    let validUntil: ProtocolTimestamp | undefined
    let revokedAt: ProtocolTimestamp | undefined
    if (record['validUntil'] !== undefined) {
      validUntil = timestampAt(stringAt(record, 'validUntil', at), 'history-timestamp-invalid', `${at}.validUntil`)
    }
    if (record['revokedAt'] !== undefined) {
      revokedAt = timestampAt(stringAt(record, 'revokedAt', at), 'history-timestamp-invalid', `${at}.revokedAt`)
    }
    history.push({ sequence, recordedAt, validUntil, revokedAt })
  })
  checkMonotone(history, path)
  return history
}

/** The earliest non-absent value of one boundary: its effective value (§6.4). */
export function earliest(history: readonly StatusRecord[], field: 'validUntil' | 'revokedAt'): ProtocolTimestamp | undefined {
  let min: ProtocolTimestamp | undefined
  for (const record of history) {
    const value = record[field]
    if (value && (min === undefined || compareTimestamps(value, min) < 0)) min = value
  }
  return min
}
