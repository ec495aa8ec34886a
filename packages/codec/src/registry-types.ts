/**
 * The shapes of Registry evidence and of a key resolved from it: the public types of stage 4 of
 * the Signed Document Verification Profile (§6.4).
 *
 * The evidence types restate the shape of the protocol's Registry fixtures (a binding and its
 * validity history, §6.4); the resolution types are the seam a deployment implements
 * ({@link KeyResolver}). Types only, so that every module of the Registry shares them without
 * importing the class; `registry.ts` re-exports them, and the package exports them from there.
 * @module
 */
import type { PublicKeyFault, VerifiedPublicKey } from './ed25519.js'
import type { ProtocolTimestamp } from './timestamp.js'

/** A Principal type that can own a signing key (§6.4: every type that can be an expected signer). */
export type PrincipalType = 'agent' | 'human' | 'service'

/**
 * One validity-status record of a binding (§6.4 validity history). Records are changes, not
 * snapshots: a record without `validUntil` leaves the earlier boundary in force.
 */
export interface ValidityStatusRecord {
  /** Position in the binding's history; strictly increasing, from 1. */
  readonly sequence: number
  /** When the Registry recorded the change (§2 timestamp). */
  readonly recordedAt: string
  /** A new expiry boundary (exclusive); may only add or move the boundary earlier. */
  readonly validUntil?: string
  /** A revocation boundary (exclusive); may only add or move the boundary earlier. */
  readonly revokedAt?: string
}

/** One signing-key binding as the Registry declares it (§6.4; shape of the protocol's Registry fixtures). */
export interface RegistryBinding {
  /** The key ID, an absolute URI (§2), compared exactly. */
  readonly keyId: string
  /** The Principal the key is bound to. */
  readonly principal: { readonly type: PrincipalType; readonly id: string }
  /** Always `Ed25519` in v0.1. */
  readonly algorithm: string
  /** The 32-byte public key, canonical unpadded base64url (§2). */
  readonly publicKey: string
  /** The first registered start of validity (inclusive); immutable. */
  readonly validFrom: string
  /** Every retained status change, oldest first. */
  readonly validityHistory: readonly ValidityStatusRecord[]
}

/** Registry evidence for exactly one Organization (§6.4): complete, one coherent revision. */
export interface RegistryEvidence {
  /** The Organization, an absolute URI (§2). */
  readonly organizationId: string
  /** Every signing-key binding of the Organization. */
  readonly bindings: readonly RegistryBinding[]
}

/** A key selected from valid Registry evidence, with its effective validity interval (§6.4). */
export interface ResolvedKey {
  /** The Organization whose Registry bound the key. */
  readonly organizationId: string
  /** The key ID, exactly as registered. */
  readonly keyId: string
  /** The Principal bound to the key. */
  readonly principal: { readonly type: PrincipalType; readonly id: string }
  /** The strictly checked public key. */
  readonly publicKey: VerifiedPublicKey
  /** Start of validity (inclusive). */
  readonly validFrom: ProtocolTimestamp
  /** The earliest non-absent `validUntil` of the history (exclusive), if any. */
  readonly validUntil?: ProtocolTimestamp
  /** The earliest non-absent `revokedAt` of the history (exclusive), if any. */
  readonly revokedAt?: ProtocolTimestamp
}

/** The outcome of resolving a key ID: the key, or why stage 4 of §6.4 fails. */
export type Resolution = { readonly ok: true; readonly key: ResolvedKey } | { readonly ok: false; readonly reason: string }

/**
 * The key-resolution seam of §6.4: a trusted deployment adapter that selects a key ID's binding
 * from complete, current, Organization-scoped Registry evidence, or fails closed (unknown key,
 * unavailable or incomplete evidence alike). {@link Registry} is the in-memory implementation.
 * A custom resolver must build its keys with `importPublicKey`.
 */
export interface KeyResolver {
  /** Selects the binding of `keyId`, or reports why it cannot. Never throws. */
  resolve(keyId: string): Resolution
}

/** Stable names of the ways Registry evidence (or a resolution from it) fails stage 4 (§6.4). */
export type RegistryFault =
  | 'evidence-unreadable'
  | 'evidence-malformed'
  | 'organization-id-not-absolute-uri'
  | 'key-id-not-absolute-uri'
  | 'principal-type-invalid'
  | 'principal-id-not-absolute-uri'
  | 'algorithm-unsupported'
  | 'public-key-not-canonical-base64url'
  // The strict point rules of a key, named as `checkPublicKeyEncoding` names them.
  | PublicKeyFault
  | 'valid-from-invalid'
  | 'history-sequence-invalid'
  | 'history-sequence-not-increasing'
  | 'history-timestamp-invalid'
  | 'history-boundary-moved-later'
  | 'history-conflict'
  | 'valid-from-changed'
  | 'key-id-rebound'
  | 'public-key-reused'
  | 'key-id-alias'
  | 'unknown-key'
  | 'agent-card-unverified'
  | 'agent-card-organization-mismatch'
  | 'agent-card-issuer-unauthorized'
  | 'agent-card-version-not-above'

/**
 * Why evidence was rejected (a protected stage-4 diagnostic, §6.4; never for the wire): the
 * fault, where (a JSON-path-like location) and a human note.
 */
export interface RegistryProblem {
  readonly fault: RegistryFault
  readonly path: string
  readonly detail: string
}
