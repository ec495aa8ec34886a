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
 *
 * The parts live beside this module: the public types in `registry-types.ts`, strict reading in
 * `registry-reading.ts`, the validity history in `registry-history.ts`, the per-binding rules in
 * `registry-binding.ts` and the Organization-wide indexes in `registry-index.ts`.
 * @module
 */
import type { AgentCard } from '@weft/spec'
import { UsageError } from './errors.js'
import { isAbsoluteUri } from './formats.js'
import { deepFreeze } from './frozen.js'
import { cardKey, cardStatus, checkBinding, declarationOf, type CheckedBinding } from './registry-binding.js'
import { admit, cacheOver, copyIndex, resolutionOf, validate, type Index } from './registry-index.js'
import { arrayAt, problemOf, reject, stringAt } from './registry-reading.js'
import type { KeyResolver, RegistryEvidence, RegistryProblem, Resolution, ResolvedKey } from './registry-types.js'
import type { SignedVerifier } from './signed.js'

export type {
  KeyResolver,
  PrincipalType,
  RegistryBinding,
  RegistryEvidence,
  RegistryFault,
  RegistryProblem,
  Resolution,
  ResolvedKey,
  ValidityStatusRecord,
} from './registry-types.js'

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
