/**
 * Registry evidence for one Organization and key resolution from it: stage 4 of the Signed
 * Document Verification Profile (§6.4).
 *
 * §6.4 makes the evidence, not the requested key, the unit of validation: the Registry invariants
 * (immutable key-ID bindings, no public-key reuse, no key-ID alias, monotone validity history,
 * strict key points) hold Organization-wide or not at all, and "an invalid unrelated binding or
 * history record MUST cause stage 4 to fail". {@link Registry.fromEvidence} therefore validates
 * everything once, at construction, and an invalid Registry answers every
 * {@link Registry.resolve} with the same failure. The key ID only selects a record afterwards.
 *
 * A Registry value is one coherent revision (§6.4) and never changes. New evidence (a Principal's
 * key binding, an Agent Card version) makes the next revision: {@link Registry.withKeyBinding} and
 * {@link Registry.withAgentCard} check only the addition, against the indexes the revision keeps,
 * and refuse exactly what rebuilding from the whole evidence would refuse.
 * {@link createLiveRegistry} holds the current revision behind one {@link KeyResolver}, for a
 * deployment whose Registry grows while it verifies.
 *
 * What stays with the caller (`signed.ts`): the expected-signer comparison and the validity
 * interval at the protected signed time. A Registry that binds a key to another Principal, or
 * whose key is expired, is valid evidence; the document using it is what fails.
 * @module
 */
import type { AgentCard } from '@weft/spec'
import { decodeBase64url } from './bytes.js'
import { importPublicKey, isVerifiedPublicKey, type VerifiedPublicKey } from './ed25519.js'
import { UsageError } from './errors.js'
import { isAbsoluteUri } from './formats.js'
import type { SignedVerifier } from './signed.js'
import { compareTimestamps, parseTimestamp, type ProtocolTimestamp } from './timestamp.js'

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
  | 'public-key-wrong-length'
  | 'public-key-noncanonical'
  | 'public-key-negative-zero'
  | 'public-key-off-curve'
  | 'public-key-identity'
  | 'public-key-small-order'
  | 'public-key-mixed-order'
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

/** Thrown internally to stop validation at the first problem; never escapes this module. */
class EvidenceRejected {
  constructor(readonly problem: RegistryProblem) {}
}

function reject(fault: RegistryFault, path: string, detail: string): never {
  throw new EvidenceRejected({ fault, path, detail })
}

const PRINCIPAL_TYPES: readonly string[] = ['agent', 'human', 'service']
const EVIDENCE_MEMBERS = new Set(['organizationId', 'bindings'])
const BINDING_MEMBERS = new Set(['keyId', 'principal', 'algorithm', 'publicKey', 'validFrom', 'validityHistory'])
const PRINCIPAL_MEMBERS = new Set(['type', 'id'])
const RECORD_MEMBERS = new Set(['sequence', 'recordedAt', 'validUntil', 'revokedAt'])

/**
 * Reads a plain object, rejecting any member outside `allowed`: an unknown member might carry
 * meaning (a status, a revision) this model would otherwise silently ignore, so it fails closed.
 */
function objectAt(value: unknown, path: string, allowed: ReadonlySet<string>): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) reject('evidence-malformed', path, 'not an object')
  for (const name of Object.keys(value)) {
    if (!allowed.has(name)) reject('evidence-malformed', `${path}.${name}`, 'unknown member')
  }
  return value as Record<string, unknown>
}

function stringAt(object: Record<string, unknown>, name: string, path: string): string {
  const value = object[name]
  if (typeof value !== 'string') reject('evidence-malformed', `${path}.${name}`, value === undefined ? 'missing' : 'not a string')
  return value
}

function arrayAt(object: Record<string, unknown>, name: string, path: string): readonly unknown[] {
  const value = object[name]
  if (!Array.isArray(value)) reject('evidence-malformed', `${path}.${name}`, value === undefined ? 'missing' : 'not an array')
  return value
}

function timestampAt(text: string, fault: RegistryFault, path: string): ProtocolTimestamp {
  const parsed = parseTimestamp(text)
  if (parsed === undefined) reject(fault, path, 'outside the protocol timestamp profile (§2)')
  return parsed
}

/** A validated status record. */
interface StatusRecord {
  readonly sequence: number
  readonly recordedAt: ProtocolTimestamp
  readonly validUntil: ProtocolTimestamp | undefined
  readonly revokedAt: ProtocolTimestamp | undefined
}

/**
 * Point checks already made, by public-key text. Canonical base64url spells each byte string one
 * way, so the text is a sound key; a Map is one.
 */
interface KeyCache {
  get(publicKeyText: string): VerifiedPublicKey | { readonly reason: string } | undefined
  set(publicKeyText: string, key: VerifiedPublicKey | { readonly reason: string }): unknown
}

/** A binding after the per-binding checks of §6.4, before the Organization-wide ones. */
interface CheckedBinding {
  readonly path: string
  readonly keyId: string
  readonly principal: { readonly type: PrincipalType; readonly id: string }
  readonly algorithm: 'Ed25519'
  readonly publicKeyText: string
  readonly publicKey: VerifiedPublicKey
  readonly validFrom: ProtocolTimestamp
  readonly history: readonly StatusRecord[]
}

function sameInstant(a: ProtocolTimestamp | undefined, b: ProtocolTimestamp | undefined): boolean {
  return a === undefined || b === undefined ? a === b : compareTimestamps(a, b) === 0
}

/**
 * §6.4: a `validUntil` or `revokedAt` boundary may be added or moved earlier, never cleared or
 * moved later. Records are changes, so an absent member is no change (not a clearing); a present
 * one must not lie after any earlier present one.
 */
function checkMonotone(history: readonly StatusRecord[], path: string): void {
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

function checkHistory(records: readonly unknown[], path: string): StatusRecord[] {
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

/** Per-binding rules, in §6.4 order: identifiers, algorithm, key encoding and points, timestamps. */
function checkBinding(raw: unknown, path: string, keyCache: KeyCache): CheckedBinding {
  const binding = objectAt(raw, path, BINDING_MEMBERS)
  // URI rules apply to the exact received text (§2): no trimming, no normalization.
  const keyId = stringAt(binding, 'keyId', path)
  if (!isAbsoluteUri(keyId)) reject('key-id-not-absolute-uri', `${path}.keyId`, 'not an absolute URI')
  const principalRaw = objectAt(binding['principal'], `${path}.principal`, PRINCIPAL_MEMBERS)
  const type = stringAt(principalRaw, 'type', `${path}.principal`)
  if (!PRINCIPAL_TYPES.includes(type)) reject('principal-type-invalid', `${path}.principal.type`, 'not agent, human or service')
  const id = stringAt(principalRaw, 'id', `${path}.principal`)
  if (!isAbsoluteUri(id)) reject('principal-id-not-absolute-uri', `${path}.principal.id`, 'not an absolute URI')
  const algorithm = stringAt(binding, 'algorithm', path)
  if (algorithm !== 'Ed25519') reject('algorithm-unsupported', `${path}.algorithm`, 'v0.1 signing keys are Ed25519')

  const publicKeyText = stringAt(binding, 'publicKey', path)
  let publicKey = keyCache.get(publicKeyText)
  if (publicKey === undefined) {
    const bytes = decodeBase64url(publicKeyText)
    if (bytes === undefined) reject('public-key-not-canonical-base64url', `${path}.publicKey`, 'not canonical unpadded base64url')
    const imported = importPublicKey(bytes)
    publicKey = isVerifiedPublicKey(imported) ? imported : { reason: imported.reason }
    keyCache.set(publicKeyText, publicKey)
  }
  if (!isVerifiedPublicKey(publicKey)) reject(publicKey.reason as RegistryFault, `${path}.publicKey`, 'fails the strict Ed25519 point rules')

  const validFrom = timestampAt(stringAt(binding, 'validFrom', path), 'valid-from-invalid', `${path}.validFrom`)
  const history = checkHistory(arrayAt(binding, 'validityHistory', path), `${path}.validityHistory`)
  return {
    path,
    keyId,
    principal: Object.freeze({ type: type as PrincipalType, id }),
    algorithm: 'Ed25519',
    publicKeyText,
    publicKey,
    validFrom,
    history,
  }
}

/**
 * Folds a repeated declaration of the same logical binding into the first one (§6.4: "repeated
 * declarations of an identical binding ... are the same logical binding"). The first `validFrom`
 * is immutable, and a sequence number names one record, so both must agree; records only one
 * declaration retains are merged in.
 */
function mergeDeclaration(first: CheckedBinding, again: CheckedBinding): CheckedBinding {
  if (compareTimestamps(first.validFrom, again.validFrom) !== 0) {
    reject('valid-from-changed', `${again.path}.validFrom`, `differs from the declaration at ${first.path}`)
  }
  const bySequence = new Map(first.history.map((r) => [r.sequence, r]))
  for (const record of again.history) {
    const known = bySequence.get(record.sequence)
    if (known === undefined) {
      bySequence.set(record.sequence, record)
    } else if (
      !sameInstant(known.recordedAt, record.recordedAt) ||
      !sameInstant(known.validUntil, record.validUntil) ||
      !sameInstant(known.revokedAt, record.revokedAt)
    ) {
      reject('history-conflict', `${again.path}.validityHistory[sequence ${record.sequence}]`, `differs from the declaration at ${first.path}`)
    }
  }
  const history = [...bySequence.values()].sort((a, b) => a.sequence - b.sequence)
  checkMonotone(history, `${again.path}.validityHistory (merged with ${first.path})`)
  return { ...first, history }
}

function samePrincipal(a: CheckedBinding['principal'], b: CheckedBinding['principal']): boolean {
  return a.type === b.type && a.id === b.id
}

/** The earliest non-absent value of one boundary: its effective value (§6.4). */
function earliest(history: readonly StatusRecord[], field: 'validUntil' | 'revokedAt'): ProtocolTimestamp | undefined {
  let min: ProtocolTimestamp | undefined
  for (const record of history) {
    const value = record[field]
    if (value && (min === undefined || compareTimestamps(value, min) < 0)) min = value
  }
  return min
}

function toResolvedKey(organizationId: string, binding: CheckedBinding): ResolvedKey {
  const validUntil = earliest(binding.history, 'validUntil')
  const revokedAt = earliest(binding.history, 'revokedAt')
  return Object.freeze({
    organizationId,
    keyId: binding.keyId,
    principal: binding.principal,
    publicKey: binding.publicKey,
    validFrom: binding.validFrom,
    ...(validUntil ? { validUntil } : {}),
    ...(revokedAt ? { revokedAt } : {}),
  })
}


/**
 * The indexes one valid revision keeps (§6.4: "sufficient indexes and history to establish both
 * key-ID uniqueness and the absence of public-key or tuple aliases"): every binding by key ID and
 * by public key, merged across repeated declarations, and the latest Agent Card of each Agent.
 */
interface Index {
  readonly organizationId: string
  readonly byKeyId: Map<string, CheckedBinding>
  readonly byPublicKey: Map<string, CheckedBinding>
  /** How many bindings were declared, repeats included: the next one is `$.bindings[declared]`. */
  declared: number
  cards: ReadonlyMap<string, AgentCard>
}

function copyIndex(index: Index): Index {
  const { organizationId, byKeyId, byPublicKey, declared, cards } = index
  return { organizationId, byKeyId: new Map(byKeyId), byPublicKey: new Map(byPublicKey), declared, cards }
}

/**
 * The Organization-wide rules for one checked binding against every binding admitted before it;
 * returns the key ID it bound or merged into.
 */
function admit(index: Index, binding: CheckedBinding): string {
  const { byKeyId, byPublicKey } = index
  const known = byKeyId.get(binding.keyId)
  if (known !== undefined) {
    // One key ID is bound to exactly one Principal, one algorithm and one public key, forever.
    if (!samePrincipal(known.principal, binding.principal)) {
      reject('key-id-rebound', `${binding.path}.principal`, `key ID already bound to another Principal at ${known.path}`)
    }
    if (known.publicKeyText !== binding.publicKeyText) {
      reject('key-id-rebound', `${binding.path}.publicKey`, `key ID already bound to another public key at ${known.path}`)
    }
    const merged = mergeDeclaration(known, binding)
    byKeyId.set(binding.keyId, merged)
    byPublicKey.set(binding.publicKeyText, merged)
    return binding.keyId
  }
  const holder = byPublicKey.get(binding.publicKeyText)
  if (holder !== undefined) {
    // Same key under another key ID: an alias when the Principal and algorithm match too,
    // otherwise reuse of the key material across Principals.
    if (samePrincipal(holder.principal, binding.principal) && holder.algorithm === binding.algorithm) {
      reject('key-id-alias', `${binding.path}.keyId`, `same Principal, algorithm and public key as ${holder.path}`)
    }
    reject('public-key-reused', `${binding.path}.publicKey`, `public key already registered at ${holder.path}`)
  }
  byKeyId.set(binding.keyId, binding)
  byPublicKey.set(binding.publicKeyText, binding)
  return binding.keyId
}

/** Validates the whole evidence; returns its indexes or throws {@link EvidenceRejected}. */
function validate(evidence: unknown): Index {
  const root = objectAt(evidence, '$', EVIDENCE_MEMBERS)
  const organizationId = stringAt(root, 'organizationId', '$')
  if (!isAbsoluteUri(organizationId)) reject('organization-id-not-absolute-uri', '$.organizationId', 'not an absolute URI')
  const rawBindings = arrayAt(root, 'bindings', '$')

  // §6.4: strict point checks (and every other per-binding rule) come before the immutable
  // binding and Organization-wide uniqueness checks, so an invalid key is never compared.
  const keyCache = new Map<string, VerifiedPublicKey | { reason: string }>()
  const checked = rawBindings.map((raw, i) => checkBinding(raw, `$.bindings[${i}]`, keyCache))
  const index: Index = { organizationId, byKeyId: new Map(), byPublicKey: new Map(), declared: checked.length, cards: new Map() }
  for (const binding of checked) admit(index, binding)
  return index
}

/** A key cache over the bindings `index` admitted, so a repeated declaration costs no second point check. */
function cacheOver(index: Index): KeyCache {
  const fresh = new Map<string, VerifiedPublicKey | { readonly reason: string }>()
  return {
    get: (text) => index.byPublicKey.get(text)?.publicKey ?? fresh.get(text),
    set: (text, key) => fresh.set(text, key),
  }
}

const resolutionOf = (index: Index, binding: CheckedBinding): Resolution => Object.freeze({ ok: true, key: toResolvedKey(index.organizationId, binding) })

/** The problem a failed validation threw; anything but a rejection (a throwing getter, a Proxy) is unreadable evidence. */
function problemOf(e: unknown): RegistryProblem {
  return Object.freeze(e instanceof EvidenceRejected ? e.problem : { fault: 'evidence-unreadable' as const, path: '$', detail: 'reading the evidence threw' })
}

/** A binding as evidence again: the texts it was declared with and its merged history. */
function declarationOf(binding: CheckedBinding): RegistryBinding {
  return {
    keyId: binding.keyId,
    principal: { type: binding.principal.type, id: binding.principal.id },
    algorithm: binding.algorithm,
    publicKey: binding.publicKeyText,
    validFrom: binding.validFrom.text,
    validityHistory: binding.history.map((r) => ({
      sequence: r.sequence,
      recordedAt: r.recordedAt.text,
      ...(r.validUntil && { validUntil: r.validUntil.text }),
      ...(r.revokedAt && { revokedAt: r.revokedAt.text }),
    })),
  }
}

const CARD_KEY_MEMBERS = new Set(['keyId', 'algorithm', 'publicKey', 'validFrom', 'validUntil', 'revokedAt'])

/** One key entry of an Agent Card: its binding to the card's Agent and the boundaries the card states. */
interface CardKey {
  readonly binding: CheckedBinding
  readonly validUntil: ProtocolTimestamp | undefined
  readonly revokedAt: ProtocolTimestamp | undefined
}

function cardKey(raw: unknown, path: string, agentId: string, keyCache: KeyCache): CardKey {
  const entry = objectAt(raw, path, CARD_KEY_MEMBERS)
  const { keyId, algorithm, publicKey, validFrom } = entry
  const binding = checkBinding({ keyId, principal: { type: 'agent', id: agentId }, algorithm, publicKey, validFrom, validityHistory: [] }, path, keyCache)
  const boundary = (name: 'validUntil' | 'revokedAt') =>
    entry[name] === undefined ? undefined : timestampAt(stringAt(entry, name, path), 'history-timestamp-invalid', `${path}.${name}`)
  return { binding, validUntil: boundary('validUntil'), revokedAt: boundary('revokedAt') }
}

/**
 * The status record an Agent Card adds to a binding's history (§6.4: status changes are
 * append-only records): each boundary the card states that differs from the effective one,
 * numbered after the last record and recorded at the card's `issuedAt`. A boundary moved later
 * is recorded too, so that the history check refuses it; an absent one changes nothing.
 */
function cardStatus(history: readonly StatusRecord[], key: CardKey, recordedAt: ProtocolTimestamp, path: string): StatusRecord | undefined {
  const change = (field: 'validUntil' | 'revokedAt') => {
    const stated = key[field]
    const effective = earliest(history, field)
    return stated !== undefined && (effective === undefined || compareTimestamps(stated, effective) !== 0) ? stated : undefined
  }
  const validUntil = change('validUntil')
  const revokedAt = change('revokedAt')
  if (validUntil === undefined && revokedAt === undefined) return undefined
  const sequence = (history.at(-1)?.sequence ?? 0) + 1
  if (!Number.isSafeInteger(sequence)) reject('history-sequence-invalid', path, 'the binding history has no sequence number left')
  return { sequence, recordedAt, validUntil, revokedAt }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const member of Object.values(value)) deepFreeze(member)
  }
  return value
}

/** Options of {@link Registry.withAgentCard}. */
export interface AgentCardOptions {
  /**
   * Verifies the card through the six stages of §6.4 against the Registry it is added to:
   * `signedVerifier` of `@weft/validators/signed` (the normative schema at stage 2), or any
   * {@link SignedVerifier} of `createVerifier`.
   */
  readonly verifier: Pick<SignedVerifier, 'verify'>
  /**
   * §6.4: whether the card's signer, an Organization service Principal, may issue Agent Cards
   * for the Organization (checked after cryptographic verification). Defaults to every service
   * Principal the Registry binds.
   */
  readonly isIssuer?: (principal: ResolvedKey['principal']) => boolean
}

/** The outcome of adding evidence to a {@link Registry}: the next revision, or why the addition is refused. */
export type RegistryUpdate = { readonly ok: true; readonly registry: Registry } | { readonly ok: false; readonly problem: RegistryProblem }

/**
 * The Registry of one Organization, built from complete evidence (§6.4) and validated once.
 *
 * Rules applied to every binding, related to the requested key or not: absolute-URI
 * `organizationId`, key IDs and Principal IDs, exactly as received; Principal type; algorithm
 * `Ed25519`; canonical base64url public key of 32 bytes passing the strict point rules; §2
 * timestamps; a validity history ordered by strictly increasing sequence whose boundaries only
 * move earlier. Then, Organization-wide: a key ID keeps one Principal and one public key (an
 * identical repeated declaration is the same binding, merged), and a public key appears under
 * one key ID only (a key-ID alias or reuse under another Principal fails).
 *
 * A Registry never changes: {@link withKeyBinding} and {@link withAgentCard} return the next
 * revision, so one verification always sees one coherent revision (§6.4).
 *
 * @example
 * ```ts
 * const registry = Registry.fromEvidence(JSON.parse(evidenceText))
 * const found = registry.resolve(signature.keyId)
 * if (!found.ok) return fail('key-resolution', found.reason)
 * ```
 */
export class Registry implements KeyResolver {
  /** The Organization, when the evidence is valid; `undefined` otherwise. */
  readonly organizationId: string | undefined
  /** Why the evidence was rejected, or `undefined` when it is valid. */
  readonly problem: RegistryProblem | undefined
  readonly #index: Index | undefined
  readonly #keys: ReadonlyMap<string, Resolution>
  readonly #invalid: Resolution | undefined

  private constructor(index: Index | undefined, keys: ReadonlyMap<string, Resolution>, problem: RegistryProblem | undefined) {
    this.organizationId = index?.organizationId
    this.problem = problem
    this.#index = index
    this.#keys = keys
    this.#invalid = problem && Object.freeze({ ok: false, reason: `${problem.fault} at ${problem.path}: ${problem.detail}` })
    Object.freeze(this)
  }

  /**
   * Validates `evidence` (§6.4) and builds the Registry. Never throws: invalid or unreadable
   * evidence yields a Registry whose every {@link resolve} fails closed with the reason.
   */
  static fromEvidence(evidence: unknown): Registry {
    try {
      const index = validate(evidence)
      const resolutions = new Map<string, Resolution>()
      for (const [keyId, binding] of index.byKeyId) resolutions.set(keyId, resolutionOf(index, binding))
      return new Registry(index, resolutions, undefined)
    } catch (e) {
      return new Registry(undefined, new Map(), problemOf(e))
    }
  }

  /** Whether the evidence passed every check. */
  get valid(): boolean {
    return this.problem === undefined
  }

  /**
   * Selects the binding of `keyId` (exact string match) with its effective validity interval.
   * Fails with the evidence problem when the evidence is invalid, whatever the key ID, and with
   * `unknown-key` when valid evidence has no such binding.
   */
  resolve(keyId: string): Resolution {
    if (this.#invalid) return this.#invalid
    return (typeof keyId === 'string' && this.#keys.get(keyId)) || UNKNOWN_KEY
  }

  /**
   * The next revision with one more signing-key binding of a Principal (a {@link RegistryBinding}),
   * checked by the rules of {@link fromEvidence} as the binding after the declared ones: refused,
   * with the same {@link RegistryProblem}, exactly when rebuilding from the evidence plus this
   * binding would be invalid. Only the new key's point is checked; an identical repeated
   * declaration is the same binding, and may add validity-status records to its history.
   * Never throws; this Registry is unchanged either way.
   * @example
   * ```ts
   * const next = registry.withKeyBinding({ keyId, principal, algorithm: 'Ed25519', publicKey, validFrom, validityHistory: [] })
   * if (!next.ok) console.log(next.problem.fault) // e.g. 'public-key-reused'
   * ```
   */
  withKeyBinding(binding: unknown): RegistryUpdate {
    return this.#next((index) => {
      const checked = checkBinding(binding, `$.bindings[${index.declared}]`, cacheOver(index))
      index.declared += 1
      return [admit(index, checked)]
    })
  }

  /**
   * The next revision with an Agent Card version registered (§6.1) and its public keys bound to
   * its Agent. In order, refused with the first failing check:
   *
   * 1. `agent-card-unverified`: the card fails one of the six stages of §6.4 against this
   *    Registry (signed by an Organization service Principal's key, valid at `issuedAt`);
   * 2. `agent-card-organization-mismatch`: its `organizationId` is not this Registry's;
   * 3. `agent-card-issuer-unauthorized`: {@link AgentCardOptions.isIssuer} refuses the signer;
   * 4. `agent-card-version-not-above`: its `cardVersion` is not above the Agent's registered
   *    one (assignments pin versions, so a version is never reissued);
   * 5. each entry of `publicKeys`, as a binding of the Agent, under the rules of
   *    {@link withKeyBinding} (faults and paths name the card: `$.publicKeys[0].publicKey`).
   *    A key an earlier card or the evidence declared is the same logical binding; a
   *    `validUntil` or `revokedAt` the card states that differs from the effective one becomes a
   *    status record at the card's `issuedAt`, so it may move a boundary earlier, never later.
   *
   * All or nothing: a refused card adds no key. Never throws for bad input.
   * @param card - The signed Agent Card: its JSON text or bytes as received, or the parsed object.
   * @throws UsageError when `options.verifier` has no `verify` method.
   */
  withAgentCard(card: unknown, options: AgentCardOptions): RegistryUpdate {
    if (typeof options?.verifier?.verify !== 'function') throw new UsageError('withAgentCard needs a verifier (e.g. signedVerifier of @weft/validators/signed)')
    return this.#next((index) => {
      let text: string | Uint8Array | undefined
      try {
        text = typeof card === 'string' || card instanceof Uint8Array ? card : JSON.stringify(card)
      } catch {
        reject('evidence-unreadable', '$', 'the card cannot be written as JSON')
      }
      if (text === undefined) reject('evidence-malformed', '$', 'not a JSON document')
      const result = options.verifier.verify('agent-card', text, this)
      if (!result.ok) reject('agent-card-unverified', '$', `${result.stage}: ${result.reason}`)
      // Stage 2 made the verified document an object; its members are read as strictly as evidence.
      const document = result.verified.document as Record<string, unknown>
      const organizationId = stringAt(document, 'organizationId', '$')
      if (organizationId !== index.organizationId) {
        reject('agent-card-organization-mismatch', '$.organizationId', `a card of ${organizationId} for the Registry of ${index.organizationId}`)
      }
      const signer = result.verified.key.principal
      let authorized: boolean
      try {
        authorized = options.isIssuer === undefined || options.isIssuer(signer) === true
      } catch {
        authorized = false
      }
      if (!authorized) reject('agent-card-issuer-unauthorized', '$.signature.keyId', `${signer.id} may not issue Agent Cards`)

      const agentId = stringAt(document, 'agentId', '$')
      if (!isAbsoluteUri(agentId)) reject('principal-id-not-absolute-uri', '$.agentId', 'not an absolute URI')
      const cardVersion = document['cardVersion']
      if (typeof cardVersion !== 'number' || !Number.isSafeInteger(cardVersion) || cardVersion < 1) reject('evidence-malformed', '$.cardVersion', 'not a positive integer')
      const registered = index.cards.get(agentId)?.cardVersion
      if (registered !== undefined && cardVersion <= registered) {
        reject('agent-card-version-not-above', '$.cardVersion', `card version ${cardVersion} is not above the registered version ${registered}`)
      }

      // §6.4: every entry's own rules before any Organization-wide comparison, as in fromEvidence.
      const keyCache = cacheOver(index)
      const keys = arrayAt(document, 'publicKeys', '$').map((raw, i) => cardKey(raw, `$.publicKeys[${i}]`, agentId, keyCache))
      const touched = keys.map((key) => {
        const { binding } = key
        const record = cardStatus(index.byKeyId.get(binding.keyId)?.history ?? [], key, result.verified.protectedTime, binding.path)
        return admit(index, record === undefined ? binding : { ...binding, history: [record] })
      })
      index.cards = new Map(index.cards).set(agentId, deepFreeze(document as unknown as AgentCard))
      return touched
    })
  }

  /** The latest Agent Card registered for `agentId` through {@link withAgentCard}, if any. */
  agentCard(agentId: string): AgentCard | undefined {
    return this.#index?.cards.get(agentId)
  }

  /**
   * The evidence of this revision, one binding per key ID with its merged history: what
   * {@link fromEvidence} rebuilds an equal Registry from (Agent Cards aside), e.g. to persist a
   * Registry grown by additions. `undefined` when the evidence is invalid.
   */
  toEvidence(): RegistryEvidence | undefined {
    const index = this.#index
    if (index === undefined) return undefined
    return deepFreeze({ organizationId: index.organizationId, bindings: [...index.byKeyId.values()].map(declarationOf) })
  }

  /** Applies `change` to a copy of the indexes; the next revision, or the first problem it threw. */
  #next(change: (index: Index) => readonly string[]): RegistryUpdate {
    // An invalid Registry stays invalid: nothing added to it could make its evidence sound.
    if (this.#index === undefined) return { ok: false, problem: this.problem as RegistryProblem }
    const index = copyIndex(this.#index)
    let touched: readonly string[]
    try {
      touched = change(index)
    } catch (e) {
      return { ok: false, problem: problemOf(e) }
    }
    const keys = new Map(this.#keys)
    for (const keyId of touched) keys.set(keyId, resolutionOf(index, index.byKeyId.get(keyId) as CheckedBinding))
    return { ok: true, registry: new Registry(index, keys, undefined) }
  }
}

const UNKNOWN_KEY: Resolution = Object.freeze({ ok: false, reason: 'unknown-key' })

/**
 * A {@link KeyResolver} over the current revision of a growing Registry: each addition that
 * passes replaces the revision at once, so every later verification (an Authority's, a
 * verifier's) sees the added keys, and each verification resolves against one coherent revision
 * (§6.4: a superseded state is never presented as current).
 */
export interface LiveRegistry extends KeyResolver {
  /** The current revision. */
  readonly current: Registry
  /** {@link Registry.withKeyBinding} on the current revision; adopts the result when it passes. */
  addKeyBinding(binding: unknown): RegistryUpdate
  /** {@link Registry.withAgentCard} on the current revision; adopts the result when it passes. */
  addAgentCard(card: unknown, options: AgentCardOptions): RegistryUpdate
}

/**
 * Holds `initial` as the current revision of a {@link LiveRegistry}.
 * @throws UsageError when `initial` is not a {@link Registry}.
 * @example
 * ```ts
 * const registry = createLiveRegistry(Registry.fromEvidence(evidence))
 * const authority = createAuthority({ registry, ... }) // resolves through the current revision
 * const added = registry.addKeyBinding(binding) // the Authority verifies with the new key from now on
 * ```
 */
export function createLiveRegistry(initial: Registry): LiveRegistry {
  if (!(initial instanceof Registry)) throw new UsageError('createLiveRegistry needs a Registry (Registry.fromEvidence(...))')
  let current = initial
  const adopt = (update: RegistryUpdate): RegistryUpdate => {
    if (update.ok) current = update.registry
    return update
  }
  return Object.freeze({
    get current() {
      return current
    },
    resolve: (keyId: string) => current.resolve(keyId),
    addKeyBinding: (binding: unknown) => adopt(current.withKeyBinding(binding)),
    addAgentCard: (card: unknown, options: AgentCardOptions) => adopt(current.withAgentCard(card, options)),
  })
}
