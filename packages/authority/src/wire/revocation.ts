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
  const at = parseTimestamp(timestampOf(nowMs))!
  for (const connection of [...connections]) {
    if (connection.agentId !== agentId || !connection.open) continue
    const refusal = standingRefusal(state, agentId, connection.keyId, at)
    if (refusal !== undefined) connection.revoke(refusal)
  }
}
