/**
 * How much of a refused Command the Authority keeps or sends back. A refused Command may carry
 * members of any size up to `maxCommandBytes` (an `actionId` of a megabyte fails the Command
 * schema, but only after it was read), so neither its audit entry (§6.4: the failing stage and its
 * reason are retained for auditors) nor its answer (§19: identify the related Action ID "without
 * exposing unauthorized data") may hold such a member whole: the audit would grow by the size of
 * every refusal, and an answer would echo the input back.
 * @module
 */
import { isAbsoluteUri, ProtocolError } from '@weft/codec'

/**
 * The characters of a text from a refused Command an audit entry keeps, and an error's `details`
 * echo: a longer text is cut to this many and marked (see {@link truncated}).
 */
export const MAX_ECHO_CHARS = 256

/** The items of an array an error's `details` echo; the rest are left out (see {@link boundedDetails}). */
export const MAX_ECHO_ITEMS = 32

/** `common.schema.json#/$defs/id`: at most 512 characters. */
const MAX_ID_CHARS = 512

/**
 * `text` when it has at most `max` characters, else its first `max` followed by the marker
 * `…[<n> chars]` with its full length `n`. The result shares no storage with `text`: V8 keeps the
 * whole string a slice was taken from alive for as long as the slice, so a kept slice of a member of
 * a megabyte-sized Command would keep the megabyte.
 */
export function truncated(text: string, max = MAX_ECHO_CHARS): string {
  const kept = text.length <= max ? text : `${text.slice(0, max)}…[${text.length} chars]`
  // V8 makes no sliced string shorter than 13 characters; a round trip through bytes is a flat copy.
  return kept.length < 13 ? kept : Buffer.from(kept, 'utf16le').toString('utf16le')
}

/** Whether `value` may stand where `error.schema.json` names an `id` (`relatedActionId`, `relatedFrameId`). */
export function isWireId(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_ID_CHARS && isAbsoluteUri(value)
}

/**
 * `details` with every text cut by {@link truncated} (member names too) and every array to its
 * first {@link MAX_ECHO_ITEMS} items. Schema issues carry JSON Pointers into the Command, whose
 * member names are the sender's; the same goes for extension profile names.
 */
export function boundedDetails(details: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return bounded(details) as Record<string, unknown>
}

function bounded(value: unknown): unknown {
  if (typeof value === 'string') return value.length <= MAX_ECHO_CHARS ? value : truncated(value)
  if (Array.isArray(value)) return value.slice(0, MAX_ECHO_ITEMS).map(bounded)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([name, member]) => [bounded(name), bounded(member)]))
}

/** `error` with its `details` bounded by {@link boundedDetails}; `error` itself when it has none. */
export function boundedError(error: ProtocolError): ProtocolError {
  return error.details === undefined ? error : error.with({ details: boundedDetails(error.details) })
}
