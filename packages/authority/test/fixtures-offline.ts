/**
 * Fixtures for the bounded offline execution tests (§11.5): a binding built from the historical
 * Execution Lease a Worker held when it lost the Group service, and the `extensions` map that
 * carries it.
 */
import type { Command, Lease } from '@weft/spec'
import { BOUNDED_OFFLINE_EXECUTION, type OfflineBinding } from '../src/domain/offline.js'
import type { Usage } from '../src/domain/work-budget.js'
import { zeroUsage } from '../src/domain/budget-limits.js'

/** `base` plus `seconds`, as an RFC 3339 UTC text. */
export function later(base: string, seconds: number): string {
  return new Date(Date.parse(base) + seconds * 1000).toISOString()
}

/**
 * The binding of work done offline under `lease`: disconnected 60 s and buffered 120 s after the
 * lease was issued, a grace of 300 s past its expiry, no usage; `overrides` win.
 */
export function offlineBinding(lease: Lease, overrides: Partial<OfflineBinding> = {}, usage: Partial<Usage> = {}): OfflineBinding {
  const { groupId, sessionEpoch, workItemId, ownershipEpoch } = lease
  if (groupId === undefined || sessionEpoch === undefined || workItemId === undefined || ownershipEpoch === undefined) throw new Error(`lease ${lease.leaseId} is not a WorkItem Execution Lease`)
  return {
    agentId: lease.holderAgentId,
    groupId,
    workItemId,
    originalSessionEpoch: sessionEpoch,
    ownershipEpoch,
    executionLeaseId: lease.leaseId,
    disconnectedAt: later(lease.issuedAt, 60),
    bufferedAt: later(lease.issuedAt, 120),
    graceDeadline: later(lease.expiresAt, 300),
    historicalLeaseExpiresAt: lease.expiresAt,
    usageDelta: { ...zeroUsage(), ...usage },
    ...overrides,
  }
}

/** The `extensions` member carrying `data` as the binding (critical, version 1.0.0 unless given), plus `extra` entries. */
export function offlineExtensions(data: unknown, entry: { version?: string; critical?: boolean } = {}, extra: NonNullable<Command['extensions']> = {}): NonNullable<Command['extensions']> {
  return { ...extra, [BOUNDED_OFFLINE_EXECUTION]: { version: entry.version ?? '1.0.0', critical: entry.critical ?? true, data } }
}

/** A noncritical extension entry of a profile nobody here interprets (§18), with nested data to relay. */
export const FOREIGN_EXTENSION = {
  'urn:example:profile:trace': { version: '2.1.0', critical: false, data: { span: 'a1', tags: ['x', { depth: 2 }], ratio: 0.5, note: 'é' } },
} as const satisfies NonNullable<Command['extensions']>
