/**
 * An Agent's standing in the Agent Registry (§6.1, §6.4): whether its current Agent Card lets it
 * act, and whether a key it signs with is still inside the boundaries its cards state. Ingress
 * reads it for every Agent Command, the WebSocket binding for every handshake and after every
 * folded card, and the lease guards for an owner. The cards are folded state, so a revocation any
 * process registered holds on every process that folds the log, whatever Registry it started with.
 * @module
 */
import { compareTimestamps, GENERIC_WIRE_MESSAGES, parseTimestamp, ProtocolError, type ProtocolTimestamp } from '@weft/codec'
import type { AgentCard, PublicKey } from '@weft/spec'
import type { AgentRecord, AuthorityState } from '../model.js'

/** A boundary after which a key signs nothing (§6.4), with what it is. */
export interface KeyEnd {
  readonly at: ProtocolTimestamp
  /** `card-key-revoked` (its `revokedAt`) or `card-key-expired` (its `validUntil`). */
  readonly reason: 'card-key-revoked' | 'card-key-expired'
}

/**
 * §6.1: whether the Agent's current card lets it act. Only an `active` card does; `deprecated` and
 * `revoked` stop sessions, Commands, offers and capability tokens alike. An Agent without a card is
 * not judged here (the Registry's key binding and `session_open` decide about it).
 */
export function cardActive(agent: AgentRecord | undefined): boolean {
  return agent === undefined || agent.card.status === 'active'
}

/**
 * The earliest boundary any registered card of the Agent states for `keyId`: §6.4 takes the
 * earliest `validUntil` or `revokedAt` in the validity history as effective, so a later card
 * cannot clear or postpone one. `undefined` when no card states one.
 */
export function keyEnd(agent: AgentRecord, keyId: string): KeyEnd | undefined {
  let end: KeyEnd | undefined
  for (const card of agent.cardVersions) {
    for (const key of card.publicKeys) {
      if (key.keyId !== keyId) continue
      end = earlier(end, key.revokedAt, 'card-key-revoked')
      end = earlier(end, key.validUntil, 'card-key-expired')
    }
  }
  return end
}

function earlier(end: KeyEnd | undefined, text: string | undefined, reason: KeyEnd['reason']): KeyEnd | undefined {
  const at = text === undefined ? undefined : parseTimestamp(text)
  // At the same instant a revocation is the better-known reason.
  return at === undefined || (end !== undefined && compareTimestamps(end.at, at) <= 0) ? end : { at, reason }
}

/**
 * §6.4 half-open boundaries: the key signs nothing dated at or after its end. The end `keyId` has
 * reached at `at` (a §2 timestamp, read only when a card states a boundary), or `undefined`.
 */
export function keyEndedBy(agent: AgentRecord | undefined, keyId: string, at: ProtocolTimestamp | string): KeyEnd | undefined {
  const end = agent === undefined ? undefined : keyEnd(agent, keyId)
  if (end === undefined) return undefined
  const t = typeof at === 'string' ? parseTimestamp(at) : at
  return t !== undefined && compareTimestamps(t, end.at) >= 0 ? end : undefined
}

/**
 * Why a card version may not follow the Agent's registered ones, or `undefined`: after a `revoked`
 * card only `revoked` ones (a revocation is final; another runtime of the Organization with an older
 * file must not undo it), and no key boundary cleared or moved later (§6.4).
 */
export function cardSuccessionFault(agent: AgentRecord, card: AgentCard): { readonly code: 'INVALID_STATE_TRANSITION' | 'INVALID_COMMAND'; readonly message: string } | undefined {
  if (agent.card.status === 'revoked' && card.status !== 'revoked') {
    return { code: 'INVALID_STATE_TRANSITION', message: `the agent card is revoked; a later version cannot be ${card.status}` }
  }
  for (const key of card.publicKeys) {
    const end = keyEnd(agent, key.keyId)
    if (end === undefined) continue
    const stated = statedEnd(key)
    if (stated === undefined || compareTimestamps(stated, end.at) > 0)
      return { code: 'INVALID_COMMAND', message: `the card clears or postpones the boundary ${end.at.text} of key ${key.keyId} (§6.4)` }
  }
  return undefined
}

/** The earlier of a key's `validUntil` and `revokedAt`, as the card states them. */
function statedEnd(key: PublicKey): ProtocolTimestamp | undefined {
  return earlier(earlier(undefined, key.revokedAt, 'card-key-revoked'), key.validUntil, 'card-key-expired')?.at
}

/**
 * Why the Agent may not act with key `keyId` at `at`, or `undefined`: the key is past a boundary its
 * cards state (`AUTH_INVALID_SIGNATURE` with the generic wire message, the reason kept for the audit
 * only, §6.4), or its current card is not active (`AUTH_FORBIDDEN`, §6.1, §19). Ingress answers an
 * Agent Command with it (`at` is the Command's signed time); the WebSocket binding ends a session
 * with it (`at` is now). The `cause` is the refusal's protected diagnostic.
 */
export function standingRefusal(state: AuthorityState, agentId: string, keyId: string | undefined, at: ProtocolTimestamp | string): ProtocolError | undefined {
  const agent = state.org.agents.get(agentId)
  if (agent === undefined) return undefined
  const ended = keyId === undefined ? undefined : keyEndedBy(agent, keyId, at)
  if (ended !== undefined) return new ProtocolError('AUTH_INVALID_SIGNATURE', GENERIC_WIRE_MESSAGES.AUTH_INVALID_SIGNATURE, { cause: { stage: 'admission', reason: ended.reason } })
  if (!cardActive(agent)) return new ProtocolError('AUTH_FORBIDDEN', `The Agent Card is ${agent.card.status}.`, { cause: { stage: 'card', reason: `agent-card-${agent.card.status}` } })
  return undefined
}
