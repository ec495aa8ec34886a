/**
 * One signing-key binding of Registry evidence (§6.4): the rules each binding must pass on its
 * own, the merge of a repeated declaration, and the binding seen as a resolved key or as evidence
 * again. An Agent Card's key entry (§6.1) is checked here too, as a binding of the card's Agent.
 *
 * §6.4 orders the checks: every binding's own rules (identifiers exactly as received, algorithm,
 * canonical key encoding and strict point rules, timestamps, history) come before any
 * Organization-wide comparison, so an invalid key is never compared. This module holds the
 * first part; `registry-index.ts` holds the second.
 * @module
 */
import { decodeBase64url } from './bytes.js'
import { importPublicKey, isVerifiedPublicKey, type VerifiedPublicKey } from './ed25519.js'
import { isAbsoluteUri } from './formats.js'
import { checkHistory, checkMonotone, earliest, sameInstant, type StatusRecord } from './registry-history.js'
import { arrayAt, objectAt, reject, stringAt, timestampAt } from './registry-reading.js'
import type { PrincipalType, RegistryBinding, RegistryFault, ResolvedKey } from './registry-types.js'
import { compareTimestamps, type ProtocolTimestamp } from './timestamp.js'

const PRINCIPAL_TYPES: readonly string[] = ['agent', 'human', 'service']
const BINDING_MEMBERS = new Set(['keyId', 'principal', 'algorithm', 'publicKey', 'validFrom', 'validityHistory'])
const PRINCIPAL_MEMBERS = new Set(['type', 'id'])

/**
 * Point checks already made, by public-key text. Canonical base64url spells each byte string one
 * way, so the text is a sound key; a Map is one.
 */
export interface KeyCache {
  get(publicKeyText: string): VerifiedPublicKey | { readonly reason: string } | undefined
  set(publicKeyText: string, key: VerifiedPublicKey | { readonly reason: string }): unknown
}

/** A binding after the per-binding checks of §6.4, before the Organization-wide ones. */
export interface CheckedBinding {
  readonly path: string
  readonly keyId: string
  readonly principal: { readonly type: PrincipalType; readonly id: string }
  readonly algorithm: 'Ed25519'
  readonly publicKeyText: string
  readonly publicKey: VerifiedPublicKey
  readonly validFrom: ProtocolTimestamp
  readonly history: readonly StatusRecord[]
}

/** Per-binding rules, in §6.4 order: identifiers, algorithm, key encoding and points, timestamps. */
export function checkBinding(raw: unknown, path: string, keyCache: KeyCache): CheckedBinding {
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
export function mergeDeclaration(first: CheckedBinding, again: CheckedBinding): CheckedBinding {
  if (compareTimestamps(first.validFrom, again.validFrom) !== 0) {
    reject('valid-from-changed', `${again.path}.validFrom`, `differs from the declaration at ${first.path}`)
  }
  const bySequence = new Map(first.history.map((r) => [r.sequence, r]))
  for (const record of again.history) {
    const known = bySequence.get(record.sequence)
    if (known === undefined) {
      bySequence.set(record.sequence, record)
    } else if (!sameInstant(known.recordedAt, record.recordedAt) || !sameInstant(known.validUntil, record.validUntil) || !sameInstant(known.revokedAt, record.revokedAt)) {
      reject('history-conflict', `${again.path}.validityHistory[sequence ${record.sequence}]`, `differs from the declaration at ${first.path}`)
    }
  }
  const history = [...bySequence.values()].sort((a, b) => a.sequence - b.sequence)
  checkMonotone(history, `${again.path}.validityHistory (merged with ${first.path})`)
  return { ...first, history }
}

/** Whether two bindings name the same Principal (type and ID, compared exactly). */
export function samePrincipal(a: CheckedBinding['principal'], b: CheckedBinding['principal']): boolean {
  return a.type === b.type && a.id === b.id
}

/** The key a checked binding resolves to, with its effective validity window (§6.4). */
export function toResolvedKey(organizationId: string, binding: CheckedBinding): ResolvedKey {
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

/** A binding as evidence again: the texts it was declared with and its merged history. */
export function declarationOf(binding: CheckedBinding): RegistryBinding {
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
export interface CardKey {
  readonly binding: CheckedBinding
  readonly validUntil: ProtocolTimestamp | undefined
  readonly revokedAt: ProtocolTimestamp | undefined
}

/** Checks one `publicKeys` entry of an Agent Card by the binding rules, as a key of the card's Agent. */
export function cardKey(raw: unknown, path: string, agentId: string, keyCache: KeyCache): CardKey {
  const entry = objectAt(raw, path, CARD_KEY_MEMBERS)
  const { keyId, algorithm, publicKey, validFrom } = entry
  const binding = checkBinding({ keyId, principal: { type: 'agent', id: agentId }, algorithm, publicKey, validFrom, validityHistory: [] }, path, keyCache)
  const boundary = (name: 'validUntil' | 'revokedAt') => (entry[name] === undefined ? undefined : timestampAt(stringAt(entry, name, path), 'history-timestamp-invalid', `${path}.${name}`))
  return { binding, validUntil: boundary('validUntil'), revokedAt: boundary('revokedAt') }
}

/**
 * The status record an Agent Card adds to a binding's history (§6.4: status changes are
 * append-only records): each boundary the card states that differs from the effective one,
 * numbered after the last record and recorded at the card's `issuedAt`. A boundary moved later
 * is recorded too, so that the history check refuses it; an absent one changes nothing.
 */
export function cardStatus(history: readonly StatusRecord[], key: CardKey, recordedAt: ProtocolTimestamp, path: string): StatusRecord | undefined {
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
