/**
 * The structured log of `weft serve`: one JSON object per line, so that log collectors and tests
 * read it without parsing prose. Also the adapters that log what the Authority and the WebSocket
 * binding do: every submission with its outcome, and the wire server's lines in the same form.
 * @module
 */
import type { WireLogEntry } from '@weft/authority/wire'
import { ProtocolError } from '@weft/codec'
import type { Receipt } from '@weft/client'
import type { ServedAuthority } from './backend.js'
import { causeText } from './internal-errors.js'

/** One line of the server log. */
export interface ServeLogEntry {
  readonly level: 'info' | 'warn' | 'error'
  /** What happened, a short fixed phrase (`listening`, `command accepted`, ...). */
  readonly msg: string
  /** Further members, flat where possible. */
  readonly [field: string]: unknown
}

/** Receives the server's log entries. */
export type ServeLog = (entry: ServeLogEntry) => void

/**
 * A {@link ServeLog} writing each entry as one JSON line, `time` first (ISO 8601 of `now()`).
 * @example
 * ```ts
 * const log = jsonLines((line) => process.stderr.write(line))
 * log({ level: 'info', msg: 'listening', url: 'wss://127.0.0.1:7443' })
 * // {"time":"2026-07-15T00:00:00.000Z","level":"info","msg":"listening","url":"wss://127.0.0.1:7443"}
 * ```
 */
export function jsonLines(write: (line: string) => void, now: () => number = Date.now): ServeLog {
  return (entry) => {
    write(`${JSON.stringify({ time: new Date(now()).toISOString(), ...entry })}\n`)
  }
}

/** The envelope members of a Command a log line names, read leniently: present only when readable. */
export interface EnvelopePeek {
  readonly kind?: string
  readonly actionId?: string
  readonly actorType?: string
  readonly actorId?: string
}

/** The largest Command text {@link peekEnvelope} reads when not told otherwise: the Authority's default Command limit. */
const DEFAULT_PEEK_BYTES = 1024 * 1024

/**
 * The {@link EnvelopePeek} of Command bytes that may be malformed (a refused Command is logged
 * whatever it holds). Nothing here is trusted: the Authority verifies the Command itself. Input
 * longer than `maxBytes` (the Authority refused it for its size) is not parsed and yields `{}`: a
 * peer that floods oversized Commands must not buy a megabyte parse for each of its log lines.
 */
export function peekEnvelope(bytes: string | Uint8Array, maxBytes: number = DEFAULT_PEEK_BYTES): EnvelopePeek {
  // A string's UTF-8 encoding is never shorter than its UTF-16 length.
  if ((typeof bytes === 'string' ? bytes.length : bytes.byteLength) > maxBytes) return {}
  let value: unknown
  try {
    value = JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'))
  } catch {
    return {}
  }
  if (typeof value !== 'object' || value === null) return {}
  const { kind, actionId, actor } = value as Record<string, unknown>
  const { type, id } = typeof actor === 'object' && actor !== null ? (actor as Record<string, unknown>) : {}
  const text = (member: unknown): string | undefined => (typeof member === 'string' ? member.slice(0, 300) : undefined)
  const peek: Record<string, string | undefined> = { kind: text(kind), actionId: text(actionId), actorType: text(type), actorId: text(id) }
  return Object.fromEntries(Object.entries(peek).filter(([, v]) => v !== undefined)) as EnvelopePeek
}

/** `authority` with every submission logged: accepted (its sequences), answered as a duplicate, or refused with its §19 code. */
export function loggedAuthority(authority: ServedAuthority, log: ServeLog, maxCommandBytes: number): ServedAuthority {
  const submit = async (bytes: string | Uint8Array): Promise<Receipt> => {
    let receipt: Receipt
    try {
      receipt = await authority.submit(bytes)
    } catch (thrown) {
      const error = ProtocolError.from(thrown)
      // §19: the peer learns only the code of an INTERNAL_ERROR; the log keeps its cause.
      const internal = error.code === 'INTERNAL_ERROR' ? { cause: causeText(thrown) } : {}
      log({ level: error.code === 'INTERNAL_ERROR' ? 'error' : 'info', msg: 'command refused', code: error.code, ...peekEnvelope(bytes, maxCommandBytes), ...internal })
      throw thrown
    }
    const sequences = receipt.events.flatMap((e) => (e.sequence === undefined ? [] : [e.sequence]))
    log({
      level: 'info',
      msg: receipt.duplicate ? 'command answered as duplicate' : 'command accepted',
      kind: receipt.kind,
      actionId: receipt.actionId,
      actorId: receipt.actor.id,
      ...(receipt.groupId === undefined ? {} : { groupId: receipt.groupId }),
      ...(sequences.length === 0 ? {} : { sequences: [sequences[0], sequences.at(-1)] }),
    })
    return receipt
  }
  // Everything else is read through to `authority` as it is at the time (its state may be replaced, not only changed).
  const own = { submit, submitCommand: (command: object) => submit(JSON.stringify(command)), connect: () => ({ submit: (_command: unknown, bytes: string) => submit(bytes) }) }
  return Object.freeze(Object.create(authority, Object.fromEntries(Object.entries(own).map(([name, value]) => [name, { value, enumerable: true }]))) as ServedAuthority)
}

/** A line of the wire server's log as a {@link ServeLog} entry. */
export function wireEntry(entry: WireLogEntry): Parameters<ServeLog>[0] {
  const { message, ...rest } = entry
  // The wire server's connection lines become the fixed phrases operators grep for.
  const msg = message.startsWith('connection from')
    ? 'connection opened'
    : message.startsWith('connection refused')
      ? 'connection refused'
      : message.startsWith('closed by the peer') || message.startsWith('closing')
        ? 'connection closed'
        : message
  return { ...rest, msg, ...(msg === message ? {} : { detail: message }) }
}
