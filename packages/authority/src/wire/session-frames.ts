/**
 * The frames of an open session (§17.1): `COMMAND`s go to the Authority and come back as their
 * receipts' Events, `PING`s are answered (and may carry the Agent's Presence Record, §6.2),
 * `SUBSCRIBE` and `ACK` go to the connection's channels (`channels.ts`). Every refusal is an
 * `ERROR` frame and the session goes on; only its expiry ends it.
 * @module
 */
import { ProtocolError } from '@weft/codec'
import { newNonce, PROTOCOL_VERSION, receiptFrameId } from '@weft/client/wire'
import type { CommandFrame, PingFrame, WebSocketFrame } from '@weft/spec'
import type { Channels } from './channels.js'
import { sessionOf, type Session } from './lifecycle.js'
import { eventFrame, type ConnectionLink } from './link.js'

/** Handles one frame of the open session of `link`; `SUBSCRIBE` and `ACK` go to `channels`. */
export function createSessionFrames(link: ConnectionLink, channels: Channels): (frame: WebSocketFrame) => Promise<void> {
  const { ctx } = link
  /** Numbers the receipts of the connection (see `receiptFrameId`). */
  let receiptSerial = 0
  const session = (): Session => sessionOf(link.lifecycle())!

  const command = async ({ frameId, command }: CommandFrame): Promise<void> => {
    const related = { relatedFrameId: frameId, relatedActionId: command.actionId }
    // §17.1: one connection is one Agent's, or one person's; it carries no other Principal's Commands.
    const { actor } = session()
    if (command.actor.type !== actor.type || command.actor.id !== actor.id) {
      const whose = actor.type === 'agent' ? "its own Agent's" : "its own person's"
      return link.sendError(new ProtocolError('AUTH_FORBIDDEN', `This connection carries only ${whose} Commands.`), related)
    }
    let receipt
    try {
      receipt = await ctx.authority.submit(JSON.stringify(command))
    } catch (thrown) {
      return link.sendError(withCurrentEpoch(ProtocolError.from(thrown), command.sessionEpoch), related)
    }
    // §17.1 has no receipt frame: the receipt is the transaction's Events, each in an EVENT frame
    // whose frame ID places it in the receipt (see `receiptFrameId`).
    const serial = String(++receiptSerial)
    const count = receipt.events.length
    receipt.events.forEach((event, index) => {
      link.send(eventFrame(receiptFrameId({ serial, index, count, duplicate: receipt.duplicate }), event))
    })
  }

  /** §19: a stale fencing error is answered with the current epoch, so the sender rebuilds rather than retries. */
  const withCurrentEpoch = (error: ProtocolError, commandEpoch: number | undefined): ProtocolError => {
    const current = sessionOf(link.lifecycle())
    // A person has no Session Epoch to tell (§6.3), so their refusals go out as the Authority wrote them.
    if (error.code !== 'AUTH_STALE_SESSION' || current?.kind !== 'agent') return error
    const epoch = ctx.authority.state.org.agents.get(current.actor.id)?.sessionEpoch
    const details = { ...error.details, ...(epoch === undefined ? {} : { currentSessionEpoch: epoch }), ...(commandEpoch === undefined ? {} : { commandSessionEpoch: commandEpoch }) }
    return error.with({ retryable: false, details })
  }

  const ping = (frame: PingFrame): void => {
    const { presence } = frame
    if (presence !== undefined) {
      const current = session()
      // §6.2: Presence is an Agent's (its execution slots, its capabilities); a person's session reports none.
      if (current.kind !== 'agent')
        return link.sendError(new ProtocolError('AUTH_FORBIDDEN', "A Presence Record describes an Agent; a person's session carries none."), { relatedFrameId: frame.frameId })
      // §6.2: a Presence Record rides on the authenticated session; it speaks for this Agent and session only.
      if (presence.agentId !== current.actor.id)
        return link.sendError(new ProtocolError('AUTH_FORBIDDEN', 'A Presence Record may only describe the connected Agent.'), { relatedFrameId: frame.frameId })
      if (presence.sessionEpoch !== current.sessionEpoch) {
        return link.sendError(new ProtocolError('AUTH_STALE_SESSION', 'The Presence Record names another Session Epoch.', { details: { currentSessionEpoch: current.sessionEpoch } }), {
          relatedFrameId: frame.frameId,
        })
      }
      ctx.presence.set(current.actor.id, presence)
    }
    // A reply to a server PING needs no answer.
    if (frame.replyToNonce !== undefined) return
    link.send(JSON.stringify({ protocolVersion: PROTOCOL_VERSION, frameId: link.nextFrameId(), frameType: 'PING', nonce: newNonce(ctx.random), replyToNonce: frame.nonce, sentAt: link.now() }))
  }

  return async (frame) => {
    if (ctx.clock.now() >= session().expiresAtMs) return link.expire(frame.frameId)
    switch (frame.frameType) {
      case 'SUBSCRIBE':
        return channels.subscribe(frame)
      case 'COMMAND':
        return command(frame)
      case 'ACK':
        return channels.ack(frame)
      case 'PING':
        return ping(frame)
      case 'HELLO':
        return link.sendError(new ProtocolError('PROTOCOL_VIOLATION', 'The handshake is complete; HELLO frames are not accepted in a session.'), { relatedFrameId: frame.frameId })
      case 'EVENT':
        return link.sendError(new ProtocolError('PROTOCOL_VIOLATION', 'EVENT frames flow from the server; publish facts with a COMMAND.'), { relatedFrameId: frame.frameId })
      case 'ERROR':
        // An error is never answered with an error; it is only logged.
        return link.log('info', `client reported ${frame.error.code}: ${frame.error.message}`, frame.error.code)
    }
  }
}
