/**
 * The options of a pipeline, checked once when it is built: local misuse is a `UsageError`, never
 * a wire error.
 * @module
 */
import { UsageError } from '@weft/codec'
import { DEFAULT_POLICY, type AuthorityPolicy } from '../policy.js'
import { RATE_RING_CAPACITY } from '../domain/runaway.js'
import type { PipelineOptions } from './api.js'

/** The policy of `overrides` over {@link DEFAULT_POLICY}, checked and frozen. @throws UsageError on a bad value. */
export function resolvePolicy(overrides: Partial<AuthorityPolicy> = {}): AuthorityPolicy {
  const policy: AuthorityPolicy = { ...DEFAULT_POLICY, ...overrides }
  for (const name of ['freshnessSeconds', 'maxCommandBytes', 'maxMissionDepth', 'maxDelegationDepth'] as const) {
    const value = policy[name]
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new UsageError(`policy.${name} must be a non-negative finite number, got ${String(value)}`)
  }
  // §20: cooperation limits are opt-in; a per-minute rate is bounded by the ring the reducers keep.
  for (const name of ['maxMessagesPerMinute', 'maxProposalsPerMinute', 'maxQueuedWorkItems', 'maxActiveWorkItems'] as const) {
    const value = policy[name]
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) throw new UsageError(`policy.${name} must be a non-negative integer, got ${String(value)}`)
    if (value !== undefined && name.endsWith('PerMinute') && value > RATE_RING_CAPACITY) throw new UsageError(`policy.${name} may not exceed ${RATE_RING_CAPACITY}`)
  }
  if (!Array.isArray(policy.controlPlane) || !policy.controlPlane.every((id) => typeof id === 'string')) throw new UsageError('policy.controlPlane must be an array of service Principal IDs')
  return Object.freeze({ ...policy, controlPlane: Object.freeze([...policy.controlPlane]) })
}

/** `options`, after checking what a pipeline needs of them. @throws UsageError on a bad option. */
export function checkOptions(options: PipelineOptions): PipelineOptions {
  if (typeof options?.registry?.resolve !== 'function') throw new UsageError('createAuthority needs a registry (a KeyResolver such as Registry.fromEvidence(...))')
  const { authority, signingKey } = options.keys ?? {}
  if (authority?.type !== 'service' || typeof authority.id !== 'string') throw new UsageError("keys.authority must be the Authority's service Principal { type: 'service', id }")
  if (typeof signingKey?.keyId !== 'string' || typeof signingKey.pair?.sign !== 'function') throw new UsageError('keys.signingKey must be a SigningKey { keyId, pair }')
  const bound = options.registry.resolve(signingKey.keyId)
  // Subscribers verify every Event against the Registry (§6.4 `acceptedBy`), so an unbound key could never be checked.
  if (!bound.ok || bound.key.principal.type !== 'service' || bound.key.principal.id !== authority.id) {
    throw new UsageError(`keys.signingKey (${signingKey.keyId}) is not bound to ${authority.id} in the registry`)
  }
  if (options.clock !== undefined && typeof options.clock.now !== 'function') throw new UsageError('clock must be { now(): number }')
  if (options.random !== undefined && typeof options.random !== 'function') throw new UsageError('random must be a function (n) => Uint8Array')
  const entries = options.maxAuditEntries
  if (entries !== undefined && (!Number.isSafeInteger(entries) || entries < 0)) throw new UsageError(`maxAuditEntries must be a non-negative integer, got ${String(entries)}`)
  return options
}
