/**
 * The indexes of one valid Registry revision and the Organization-wide rules checked against them
 * (§6.4): a key ID keeps one Principal and one public key for ever, and a public key stands under
 * one key ID only.
 *
 * Building from whole evidence ({@link validate}) and each later addition go through the same
 * {@link admit}, so an addition is refused exactly when rebuilding from the evidence plus the
 * addition would be: the indexes, kept with every revision, are what makes that check cheap.
 * @module
 */
import type { AgentCard } from '@weft/spec'
import type { VerifiedPublicKey } from './ed25519.js'
import { isAbsoluteUri } from './formats.js'
import { checkBinding, mergeDeclaration, samePrincipal, toResolvedKey, type CheckedBinding, type KeyCache } from './registry-binding.js'
import { arrayAt, objectAt, reject, stringAt } from './registry-reading.js'
import type { Resolution } from './registry-types.js'

const EVIDENCE_MEMBERS = new Set(['organizationId', 'bindings'])

/**
 * The indexes one valid revision keeps (§6.4: "sufficient indexes and history to establish both
 * key-ID uniqueness and the absence of public-key or tuple aliases"): every binding by key ID and
 * by public key, merged across repeated declarations, and the latest Agent Card of each Agent.
 */
export interface Index {
  readonly organizationId: string
  readonly byKeyId: Map<string, CheckedBinding>
  readonly byPublicKey: Map<string, CheckedBinding>
  /** How many bindings were declared, repeats included: the next one is `$.bindings[declared]`. */
  declared: number
  cards: ReadonlyMap<string, AgentCard>
}

/** A copy of `index` that a change may grow without touching the revision it came from. */
export function copyIndex(index: Index): Index {
  const { organizationId, byKeyId, byPublicKey, declared, cards } = index
  return { organizationId, byKeyId: new Map(byKeyId), byPublicKey: new Map(byPublicKey), declared, cards }
}

/**
 * The Organization-wide rules for one checked binding against every binding admitted before it;
 * returns the key ID it bound or merged into.
 */
export function admit(index: Index, binding: CheckedBinding): string {
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
export function validate(evidence: unknown): Index {
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
export function cacheOver(index: Index): KeyCache {
  const fresh = new Map<string, VerifiedPublicKey | { readonly reason: string }>()
  return {
    get: (text) => index.byPublicKey.get(text)?.publicKey ?? fresh.get(text),
    set: (text, key) => fresh.set(text, key),
  }
}

/** The resolution of a binding admitted to `index`, frozen: one value answers every resolve of its key ID. */
export const resolutionOf = (index: Index, binding: CheckedBinding): Resolution => Object.freeze({ ok: true, key: toResolvedKey(index.organizationId, binding) })
