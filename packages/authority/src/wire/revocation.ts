/**
 * The WebSocket binding's part in an Agent's revocation (§6.1, §6.3, §6.4): once an Agent Card is
 * folded that stops the Agent, whichever Authority process accepted it, the Agent's open sessions
 * on this server end as fenced sessions, each with the refusal its next Command would get.
 * @module
 */
import { parseTimestamp } from '@weft/codec'
import type { Event, EventPayload } from '@weft/spec'
import { timestampOf } from '../clock.js'
import type { AuthorityState } from '../model.js'
import { standingRefusal } from '../standing.js'
import type { ServerConnection } from './connection.js'

const CARD_REGISTERED = 'ext.missionweaveprotocol.registry.agent_card_registered'

/**
 * Called with each folded Event (`state` already holds it): when it registered an Agent Card,
 * revokes every open connection of that Agent whose card is no longer active, or whose handshake
 * key is past a boundary the cards state, at `nowMs`. A boundary still ahead ends nothing yet; the
 * Agent's Commands after it are refused by the Authority.
 */
export function endRevokedSessions(event: Event, connections: Iterable<ServerConnection>, state: AuthorityState, nowMs: number): void {
  if (event.kind !== CARD_REGISTERED) return
  const { agentId } = (event.payload as EventPayload<typeof CARD_REGISTERED>).card
  endSessionsPastStanding(connections, state, nowMs, agentId)
}

/**
 * Revokes every open connection (of `agentId` only, when given) whose Agent may no longer act at
 * `nowMs`: its card is not active, or its handshake key reached the `validUntil` or `revokedAt` a
 * card stated ahead of time (§6.4). The server runs it every {@link STANDING_SWEEP_MS}, so that a
 * boundary that arrives ends the session it passes, not only the Commands after it.
 */
export function endSessionsPastStanding(connections: Iterable<ServerConnection>, state: AuthorityState, nowMs: number, agentId?: string): void {
  const at = parseTimestamp(timestampOf(nowMs))!
  for (const connection of [...connections]) {
    if (!connection.open || connection.agentId === undefined || (agentId !== undefined && connection.agentId !== agentId)) continue
    const refusal = standingRefusal(state, connection.agentId, connection.keyId, at)
    if (refusal !== undefined) connection.revoke(refusal)
  }
}

/** How often the server looks for sessions whose key validity ended meanwhile: a second, a map lookup per connection. */
export const STANDING_SWEEP_MS = 1000
