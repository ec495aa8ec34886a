/**
 * `createAuthority`: a Group Authority over the domain handlers and reducers.
 * @module
 */
import { handlers, reducers } from './domain/compose.js'
import { createPipeline, type Authority, type AuthorityOptions } from './commit/pipeline.js'

/**
 * Starts a Group Authority: the signed Command pipeline over the domain handlers, an Event store
 * (in memory unless one is given) and the state folded from it.
 *
 * Commands are admitted and committed one at a time, in the order submitted, so every handler
 * decides on a state no other Command can change meanwhile; the compare-and-set rules of §15.3 hold
 * without locks. Only the signature checks of Commands submitted together overlap, on the threadpool
 * (see `Authority.submit`).
 * @throws UsageError on bad options (no registry, a signing key the registry does not bind to the Authority, ...).
 * @example
 * ```ts
 * const authority = createAuthority({ registry, keys: { authority: { type: 'service', id }, signingKey } })
 * const receipt = await authority.submit(signedCommandText)
 * receipt.events // the signed Events of the transaction
 * ```
 */
export function createAuthority(options: AuthorityOptions): Authority {
  return createPipeline({ ...options, handlers, reducers })
}
