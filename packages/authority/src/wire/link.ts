/**
 * What the parts of one server connection (`handshake.ts`, `session-frames.ts`, `channels.ts`)
 * need of it: its context, where its lifecycle stands, and how it answers and ends. The connection
 * (`connection.ts`) implements it; the parts hold no socket of their own.
 * @module
 */
import type { ProtocolError } from '@weft/codec'
import { PROTOCOL_VERSION, type ErrorFrameOptions } from '@weft/client/wire'
import type { Event } from '@weft/spec'
import type { ConnectionLifecycle, LifecycleInput } from './lifecycle.js'
import type { ConnectionContext, WireLogEntry } from './types.js'

/** One connection as its parts see it. */
export interface ConnectionLink {
  readonly ctx: ConnectionContext
  /** Where the connection's lifecycle stands now. */
  lifecycle(): ConnectionLifecycle
  /** Moves the lifecycle (see `transition` in `lifecycle.ts`) and returns where it stands then. */
  advance(input: LifecycleInput): ConnectionLifecycle
  /** A new frame ID of this connection. */
  nextFrameId(): string
  /** The server's time as a protocol timestamp. */
  now(): string
  log(level: WireLogEntry['level'], message: string, code?: string): void
  /** Sends an answer; every frame but an Event goes out this way, so it counts against the connection's bound (§17.3). */
  send(text: string): void
  /** Answers with an `ERROR` frame; the connection goes on. */
  sendError(error: ProtocolError, options?: ErrorFrameOptions): void
  /** Ends the connection: the `ERROR` frame (marked fatal), then the close with `closeCode`. */
  fatal(error: ProtocolError, closeCode: number, options?: ErrorFrameOptions): void
  /** The session's time is over: a fatal `AUTH_REQUIRED`, close 4408 (a new session may be opened). */
  expire(relatedFrameId?: string): void
}

/** Every Event's JSON text is built once, however many subscribers it goes to. */
const eventText = new WeakMap<Event, string>()

/** The text of an `EVENT` frame carrying `event` under `frameId`. */
export function eventFrame(frameId: string, event: Event): string {
  let text = eventText.get(event)
  if (text === undefined) eventText.set(event, (text = JSON.stringify(event)))
  return `{"protocolVersion":"${PROTOCOL_VERSION}","frameId":"${frameId}","frameType":"EVENT","event":${text}}`
}
