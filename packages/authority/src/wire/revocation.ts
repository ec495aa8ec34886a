/**
 * The WebSocket binding's part in an Agent's revocation (§6.1, §6.3, §6.4): once an Agent Card is
 * folded that stops the Agent, whichever Authority process accepted it, the Agent's open sessions
 * on this server end as fenced sessions, each with the refusal its next Command would get. A
 * person's session ends likewise once the Registry no longer holds the key they signed in with, and
 * at its expiry.
 * @module
 */
import { parseTimestamp, ProtocolError, withinInterval, type KeyResolver } from '@weft/codec'
import { type Event, payloadOf } from '@weft/spec'
import { timestampOf } from '@weft/codec/time'
import type { AuthorityState } from '../model.js'
import { standingRefusal } from '../ingress/standing.js'
import type { ServerConnection } from './types.js'

const CARD_REGISTERED = 'ext.missionweaveprotocol.registry.agent_card_registered'

/**
 * Called with each folded Event (`state` already holds it): when it registered an Agent Card,
 * revokes every open connection of that Agent whose card is no longer active, or whose handshake
 * key is past a boundary the cards state, at `nowMs`. A boundary still ahead ends nothing yet; the
 * Agent's Commands after it are refused by the Authority.
 */
export function endRevokedSessions(event: Event, connections: Iterable<ServerConnection>, state: AuthorityState, nowMs: number): void {
  const card = payloadOf(event, CARD_REGISTERED)?.card
  if (card !== undefined) endSessionsPastStanding(connections, state, nowMs, card.agentId)
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
    if (!connection.open || connection.humanSessionId !== undefined || connection.agentId === undefined || (agentId !== undefined && connection.agentId !== agentId)) continue
    const refusal = standingRefusal(state, connection.agentId, connection.keyId, at)
    if (refusal !== undefined) connection.revoke(refusal)
  }
}

/** How often the server looks for sessions whose key validity ended meanwhile: a second, a map lookup per connection. */
export const STANDING_SWEEP_MS = 1000

/**
 * Ends every open human session that may no longer go on at `nowMs`: its expiry passed (a clock
 * that jumps, or a session that sends nothing), or the key the person signed in with no longer
 * resolves in `registry` to that person, or is outside its validity interval (§6.4: revoked or
 * expired). Each gets the refusal its next Command would get from the Authority's key check.
 */
export function endHumanSessionsPastStanding(connections: Iterable<ServerConnection>, registry: KeyResolver, nowMs: number): void {
  const at = parseTimestamp(timestampOf(nowMs))!
  for (const connection of [...connections]) {
    if (!connection.open || connection.humanSessionId === undefined) continue
    connection.closeIfExpired()
    if (!connection.open) continue
    const keyId = connection.keyId!
    const resolved = registry.resolve(keyId)
    const valid = resolved.ok && resolved.key.principal.type === 'human' && resolved.key.principal.id === connection.principal?.id && withinInterval(at, resolved.key)
    if (!valid) connection.revoke(new ProtocolError('AUTH_INVALID_SIGNATURE', 'The key this session signed in with is no longer valid; sign in again.'))
  }
}
