/**
 * Where an envelope names its aggregate (§15.1, §15.2): every Command and Event catalog entry
 * lists, as data, the JSON Pointers (RFC 6901) into the envelope whose first string value is the
 * ID of the aggregate the Command targets (`expectedRevision`, §15.3) or the Event advances
 * (`aggregateRevision`). The Authority keys revisions by it and a replay derives the same key
 * from the log, so the rule lives here once instead of in each reader.
 * @module
 */

/**
 * A JSON Pointer into a Command or Event envelope: `/groupId`, `/workItemId` or a path into
 * `/payload`. Segments are plain member names (no `~0`/`~1` escapes: no protocol member needs them).
 */
export type EnvelopePointer = `/${string}`

/** Reads the aggregate ID of one envelope: the first pointer that reaches a string, else `undefined`. */
export type AggregateIdReader = (envelope: object) => string | undefined

/**
 * Compiles an entry's `aggregateIdAt` pointers into a reader. The segments are split once here
 * because readers run for every Command and every Event draft the Authority handles.
 * @example
 * ```ts
 * const read = aggregateIdReader(['/workItemId', '/payload/workItemId'])
 * read({ payload: { workItemId: 'urn:uuid:…' } }) // 'urn:uuid:…'
 * ```
 */
export function aggregateIdReader(pointers: readonly EnvelopePointer[]): AggregateIdReader {
  const paths = pointers.map((pointer) => pointer.slice(1).split('/'))
  return (envelope) => {
    for (const path of paths) {
      let at: unknown = envelope
      for (const segment of path) {
        if (typeof at !== 'object' || at === null) {
          at = undefined
          break
        }
        at = (at as Record<string, unknown>)[segment]
      }
      if (typeof at === 'string') return at
    }
    return undefined
  }
}
