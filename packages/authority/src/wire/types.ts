/**
 * The types the wire server, its connections and its revocation sweeps share, in a module of their
 * own that imports nothing of this folder: `connection.ts`, `revocation.ts` and `server.ts` each
 * depend on it, and on no one of them for a type.
 * @module
 */
import type { KeyResolver, ProtocolError } from '@weft/codec'
import type { PresenceRecord } from '@weft/spec'
import type { Clock, RandomSource } from '@weft/codec/time'
import type { Delivery, DeliverySource } from '../delivery/delivery.js'
import type { Authority } from '../commit/pipeline.js'
import type { ActorRef } from '../model.js'

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

/** What every connection of a server shares. */
export interface ConnectionContext {
  readonly authority: WireAuthority
  readonly delivery: Delivery
  readonly registry: KeyResolver
  readonly clock: Clock
  readonly random: RandomSource
  readonly maxFrameBytes: number
  readonly maxUnackedPerGroup: number
  readonly retryAfterMs: number
  readonly handshakeTimeoutMs: number
  readonly idleTimeoutMs: number
  readonly sessionTtlMs: number
  /** Bytes one connection may hold for its peer (§17.3 bounded buffering; see `outbox.ts`). */
  readonly maxOutboundBytes: number
  /** Frames a connection may send per second, with bursts of as many; 0: no limit. */
  readonly maxFramesPerSecond: number
  /** Milliseconds a connection's socket may take nothing while frames wait for it; 0: no limit. */
  readonly sendTimeoutMs: number
  /** Outbound counters of the server: the most bytes a closed connection held, and the connections closed for `BACKPRESSURE`. */
  readonly outbound: { peak: number; peakInbound: number; backpressureCloses: number }
  /** Opens the next Session Epoch of `agentId` through the Authority (§6.3) and returns it. */
  openSession(agentId: string): Promise<number>
  readonly presence: Map<string, PresenceRecord>
  log(entry: WireLogEntry): void
  /** The connection ended; the server forgets it. */
  forget(connection: ServerConnection): void
}

/** A connection as the server sees it. */
export interface ServerConnection {
  readonly id: string
  /** The Agent (once it sent `client_init`); `undefined` for a person. */
  readonly agentId: string | undefined
  /** Who the connection speaks for: the Agent once it sent `client_init`, or the admitted person. */
  readonly principal: ActorRef | undefined
  /** The console session a person's connection was admitted with; `undefined` for an Agent. */
  readonly humanSessionId: string | undefined
  readonly sessionEpoch: number | undefined
  readonly open: boolean
  readonly groupIds: readonly string[]
  /** Bytes held for the peer: written to the socket and not yet sent, plus queued answers. */
  readonly outboundBytes: number
  /** The most bytes ever held for the peer at once. */
  readonly peakOutboundBytes: number
  /** The most bytes of received messages ever waiting at once to be handled. */
  readonly peakInboundBytes: number
  /** A newer Session Epoch of the same Agent exists (§6.3): refuse everything and close. */
  fence(currentEpoch: number): void
  /** The key the Agent authenticated with, once it sent `client_init`, or the one the person signed in with. */
  readonly keyId: string | undefined
  /**
   * The Agent or person may no longer hold this session (§6.1 a card not active, §6.4 a key past
   * its boundary, a sign-out): `error` goes out as a fatal `ERROR` and the connection closes, an
   * Agent's as a fenced one (4409), a person's as an ended one (4401: signing in again is needed).
   */
  revoke(error: ProtocolError): void
  /** Ends a person's session whose expiry passed by the server's clock; Agents' sessions end at their next frame. */
  closeIfExpired(): void
  /** Closes for a server shutdown. */
  shutdown(): void
  /** Drops the socket without a close handshake. */
  terminate(): void
}
