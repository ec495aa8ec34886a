/**
 * Vocabulary shared by the Command, Event and error catalogs.
 * @module
 */

/** Who can sign a Command or be named as an Event actor (§3, §6.3). */
export type IssuerType = 'agent' | 'human' | 'service'

/**
 * An epoch a Command envelope can carry (§15.1): the Agent Session Epoch (§6.3), the Membership
 * Epoch (§8) and the Coordinator Epoch (§7.2).
 */
export type EpochName = 'session' | 'membership' | 'coordinator'

/**
 * Where a Command or Event lives: inside one Group's ordered history, or at Organization level
 * with no Group ID, sequence or aggregate revision (§15.1, §15.2).
 */
export type CatalogScope = 'group' | 'organization'

/**
 * The aggregate a Command targets or an Event advances. `workItem` also covers open Work
 * Proposals (§10.2), `policy` the Cooperation Override Grants of the Policy Log (§20), `agent` the
 * Agent Registry entry (§6.1) and `session` an Agent's Session Epoch (§6.3).
 */
export type AggregateType = 'mission' | 'membership' | 'message' | 'workItem' | 'artifact' | 'approval' | 'policy' | 'group' | 'agent' | 'session'

/** A section reference into PROTOCOL.md, spelled `§10.2` or `§16`. */
export type SectionRef = `§${number}`

/** The `kind` members of a catalog tuple, as a tuple of the same length and order. */
export type KindsOf<T extends readonly { readonly kind: string }[]> = {
  readonly [I in keyof T]: T[I] extends { readonly kind: infer K } ? K : never
}

/** Lists the `kind` of every entry of a catalog, keeping the tuple type. */
export function kindsOf<const T extends readonly { readonly kind: string }[]>(catalog: T): KindsOf<T> {
  return catalog.map((entry) => entry.kind) as unknown as KindsOf<T>
}

/** `true` when `A` and `B` are the identical type (order and readonliness of tuples included). */
export type Same<A, B> = (<V>() => V extends A ? 1 : 2) extends <V>() => V extends B ? 1 : 2 ? true : false

/** Compiles only when `T` is `true`; used to pin a catalog to a normative list at compile time. */
export type AssertTrue<T extends true> = T

/**
 * Freezes a catalog and everything in it. The catalogs are the one place the packages read the
 * protocol's facts from at run time (the Authority's issuer, epoch and compare-and-set checks, the
 * client's envelopes, the Worker's reducers), so no caller may alter them for everybody else.
 */
export function frozenCatalog<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) frozenCatalog(member)
    Object.freeze(value)
  }
  return value
}
