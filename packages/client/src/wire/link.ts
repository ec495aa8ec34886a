/**
 * One socket of a connection and what it owes its callers: Commands sent on it and awaiting their
 * receipt, and `PING`s awaiting their reply (§17.3). An answer names the frame it answers
 * (`relatedFrameId` of an `ERROR`, `replyToNonce` of a `PING`) or, for a receipt, the Command's
 * Action ID (`cause.id` of its Events), so the tables are per socket: a frame of a closed socket
 * is answered on no other.
 * @module
 */
import { signingHash, type ProtocolError } from '@weft/codec'
import type { Command, CommandKind, Event, EventFrame, WebSocketFrame } from '@weft/spec'
import type { Receipt } from '../sender.js'
import { parseReceiptFrameId, PROTOCOL_VERSION } from './frames.js'
import type { WireSocket } from './socket.js'

/** A Command sent, or waiting to be sent, and its caller. */
export interface PendingCommand {
  /** The `COMMAND` frame that carries it, once sent. */
  frameId?: string
  readonly command: Readonly<Record<string, unknown>>
  readonly bytes: string
  readonly actionId: string
  resolve(receipt: Receipt): void
  reject(error: Error): void
}

/** A `PING` of ours awaiting its reply. */
export interface PendingPing {
  readonly frameId: string
  resolve(): void
  reject(error: Error): void
}

/** One live socket, from its handshake on. */
export interface Link {
  readonly socket: WireSocket
  /** Resolves once the socket reported its close. */
  readonly closed: Promise<void>
  /** `COMMAND` frames sent on this socket and not yet answered, by frame ID. */
  readonly commands: Map<string, PendingCommand>
  /** The same, by Action ID, oldest first: receipts name the Action ID (`cause.id`), not the frame. */
  readonly byAction: Map<string, PendingCommand[]>
  /** Receipt `EVENT` frames collected so far, by receipt serial. */
  readonly receipts: Map<string, Event[]>
  /** `PING`s awaiting their reply, by nonce. */
  readonly pings: Map<string, PendingPing>
  /** The last `fatal` ERROR the server sent before closing. */
  fatal: ProtocolError | undefined
  /** The liveness `PING`s of the open session (§17.3). */
  heartbeat: ReturnType<typeof setInterval> | undefined
  /** The nonce of the last liveness `PING`, until its reply arrives. */
  heartbeatNonce: string | undefined
}

/** A link over `socket`, owing nothing yet. */
export function createLink(socket: WireSocket, closed: Promise<void>): Link {
  return { socket, closed, commands: new Map(), byAction: new Map(), receipts: new Map(), pings: new Map(), fatal: undefined, heartbeat: undefined, heartbeatNonce: undefined }
}

/** Sends a frame (or its exact text) if the socket is open; returns whether it was sent. */
export function sendFrame(link: Link, frame: WebSocketFrame | string): boolean {
  if (!link.socket.isOpen) return false
  link.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame))
  return true
}

/** The text of the `COMMAND` frame of a signed Command: the `command` member is exactly the text that was signed. */
export function commandFrameText(frameId: string, bytes: string): string {
  return `{"protocolVersion":"${PROTOCOL_VERSION}","frameId":"${frameId}","frameType":"COMMAND","command":${bytes}}`
}

/** Records a Command just sent in the `COMMAND` frame `frameId`, to be answered by receipt or `ERROR`. */
export function trackCommand(link: Link, p: PendingCommand, frameId: string): void {
  p.frameId = frameId
  link.commands.set(frameId, p)
  const queue = link.byAction.get(p.actionId)
  if (queue === undefined) link.byAction.set(p.actionId, [p])
  else queue.push(p)
}

function settle(link: Link, p: PendingCommand): void {
  if (p.frameId !== undefined) link.commands.delete(p.frameId)
  const queue = link.byAction.get(p.actionId)
  const at = queue?.indexOf(p) ?? -1
  if (queue !== undefined && at >= 0) queue.splice(at, 1)
  if (queue?.length === 0) link.byAction.delete(p.actionId)
}

/**
 * Takes an `EVENT` frame that is part of a receipt (its frame ID says so), resolving the Command
 * once every part arrived; returns `false` for any other `EVENT` (one of a subscription).
 */
export function takeReceiptPart(link: Link, frame: EventFrame): boolean {
  const part = parseReceiptFrameId(frame.frameId)
  if (part === undefined) return false
  const events = link.receipts.get(part.serial) ?? []
  link.receipts.set(part.serial, events)
  events[part.index] = frame.event
  if (events.length < part.count || events.some((e) => e === undefined)) return true
  link.receipts.delete(part.serial)
  const first = events[0]!
  const p = link.byAction.get(first.cause.id)?.[0]
  if (p === undefined) return true
  settle(link, p)
  p.resolve(receiptOf(p.command, events, part.duplicate))
  return true
}

/** Rejects the Command or `PING` an `ERROR` answers (by `relatedFrameId`); returns `false` when it answers neither. */
export function takeRefusal(link: Link, error: ProtocolError): boolean {
  const related = error.relatedFrameId === undefined ? undefined : link.commands.get(error.relatedFrameId)
  if (related !== undefined) {
    settle(link, related)
    related.reject(error)
    return true
  }
  const ping = [...link.pings].find(([, waiting]) => waiting.frameId === error.relatedFrameId)
  if (ping !== undefined) {
    link.pings.delete(ping[0])
    ping[1].reject(error)
    return true
  }
  return false
}

/** Takes the server's reply to one of our `PING`s (its `replyToNonce`): the heartbeat's, or a caller's. */
export function takePong(link: Link, replyToNonce: string): void {
  if (replyToNonce === link.heartbeatNonce) link.heartbeatNonce = undefined
  const waiting = link.pings.get(replyToNonce)
  if (waiting === undefined) return
  link.pings.delete(replyToNonce)
  waiting.resolve()
}

/** The socket closed: everything it owed is rejected with `error`, and it owes nothing more. */
export function failAll(link: Link, error: Error): void {
  for (const p of link.commands.values()) p.reject(error)
  for (const waiting of link.pings.values()) waiting.reject(error)
  link.commands.clear()
  link.byAction.clear()
  link.pings.clear()
}

/** The {@link Receipt} of `command` from the Events of its receipt frames. */
function receiptOf(command: Readonly<Record<string, unknown>>, events: readonly Event[], duplicate: boolean): Receipt {
  const c = command as unknown as Command
  const first = events[0]!
  return {
    actionId: c.actionId,
    actor: c.actor,
    kind: c.kind as CommandKind,
    ...(c.groupId === undefined ? {} : { groupId: c.groupId }),
    commandHash: first.commandHash ?? signingHash(c),
    events,
    acceptedAt: first.occurredAt,
    duplicate,
  }
}
