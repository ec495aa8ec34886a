/**
 * The one error of the WebSocket binding that is not the Authority's answer: the Authority could
 * not be reached. Kept apart from `ProtocolError` (§19 codes are the server's refusals) so that a
 * caller can tell "refused" from "not heard" and knows when resending the same bytes is the remedy.
 * @module
 */

const transportBrand = Symbol.for('@weft/TransportUnavailableError')

/**
 * The Authority could not be reached: the connection is down, reconnecting, or closed. It is never
 * a `ProtocolError`: a Command rejected with it was not refused. It may or may not have been
 * applied if it was already sent; an unchanged retry of the same signed bytes (same Action ID)
 * after the connection is back is always safe and answers the original receipt if it was (§15.1).
 */
export class TransportUnavailableError extends Error {
  constructor(message: string, options: { readonly cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'TransportUnavailableError'
    Object.defineProperty(this, transportBrand, { value: true })
  }

  /** True for any TransportUnavailableError, including one made by another copy of this package. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[transportBrand] === true
  }
}
