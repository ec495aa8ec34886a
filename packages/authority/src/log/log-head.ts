/**
 * Where one hash chain of a stored log stands (§15.2, §16). The stores report their heads
 * (`store.ts`), the log proof checks them (`log-proof.ts`) and the state checkpoint signs them
 * (`checkpoint.ts`). The shape lives here, importing nothing, so the store interface need not
 * import the proof that reads the store.
 * @module
 */

/** Where one chain of a log stands: a Group's (with `groupId`), or the Organization log's (without). */
export interface LogHead {
  /** The Group; absent for the Organization-scoped Events. */
  readonly groupId?: string
  /** The Group sequence of the last Event; for the Organization log, how many Events it holds. */
  readonly sequence: number
  /** The chain hash through that Event (`chainLink` of `log-proof.ts`). */
  readonly chain: string
}
