/**
 * The structured log of `weft serve`: one JSON object per line, so that log collectors and tests
 * read it without parsing prose.
 * @module
 */

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
