/**
 * The types the wire server and each of its connections share, in a module of their own so that
 * `connection.ts` needs nothing of `server.ts` (which builds on it): no import cycle.
 * @module
 */
import type { DeliverySource } from '../delivery/delivery.js'
import type { Authority } from '../commit/pipeline.js'

/** One line of the server's log. */
export interface WireLogEntry {
  readonly level: 'info' | 'warn' | 'error'
  readonly message: string
  readonly connectionId?: string
  readonly agentId?: string
  /** The §19 code of a refusal, when the entry reports one. */
  readonly code?: string
}

/**
 * What the binding needs of an Authority: Command submission (its own `session_open` Commands
 * included), the Agents' current Session Epochs, and what delivery reads (a {@link DeliverySource}).
 * Any Authority with these members can be served, whatever keeps its log.
 */
export type WireAuthority = Pick<Authority, 'submit' | 'connect' | 'state'> & DeliverySource
