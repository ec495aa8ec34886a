/**
 * The control endpoint of `weft serve`: where humans and Organization services hand in signed
 * Commands. The WebSocket binding (§17) is an Agent's: its handshake authenticates an Agent and
 * opens an Agent Session Epoch (§6.3), and §6.3 says human and service Commands carry no Session
 * Epoch. Their Commands are still individually signed and verified by the Authority like any
 * other (§6.4, §15.1); this endpoint only carries the bytes. It listens on the loopback interface
 * only, over plain HTTP:
 *
 * - `POST /commands` with the exact signed Command text: `200` and the receipt as JSON, or `400`
 *   and `{ "error": <error.schema.json object> }` for a refusal (`403` for an Agent's Command,
 *   which belongs on the Agent's session; `413` beyond the body limit); `503` while shutting down.
 *
 * The body limit is applied before anything is parsed or kept: a declared `Content-Length` over it
 * is refused before a byte of the body is read, and a body that grows past it (chunked) as soon as
 * it does. Either way nothing more of it is read: the `413` goes out with `Connection: close` and
 * the connection ends after it.
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { declaresMore, readBody } from '@weft/console/server'
import type { Receipt, Transport } from '@weft/client'
import { TransportUnavailableError } from '@weft/client/wire'
import { isErrorCode, ProtocolError, type WireError } from '@weft/codec'
import { peekEnvelope } from './log.js'

/** The path Commands are posted to. */
export const COMMANDS_PATH = '/commands'

/** Options of {@link createControlEndpoint}. */
export interface ControlEndpointOptions {
  /** Submits the exact bytes to the Authority. */
  readonly submit: (bytes: Uint8Array) => Promise<Receipt>
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  readonly port: number
  /** Largest accepted request body in bytes; `weft serve` defaults it to the Authority's `maxCommandBytes`. */
  readonly maxBytes: number
  /** The `occurredAt` of error objects. */
  readonly now: () => string
  /**
   * Requests handled at once (each may hold up to `maxBytes` of body); one more is refused with
   * `503`, `Retry-After` and a retryable `RATE_LIMITED` before its body is read. Default 16.
   */
  readonly maxConcurrent?: number
}

/** Default of {@link ControlEndpointOptions.maxConcurrent}. */
export const DEFAULT_MAX_CONTROL_REQUESTS = 16

/** A listening control endpoint. */
export interface ControlEndpoint {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string
  /** Refuses new requests (503), lets the ones under way finish, and stops listening. */
  close(): Promise<void>
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

/** Starts the control endpoint on 127.0.0.1. */
export async function createControlEndpoint(options: ControlEndpointOptions): Promise<ControlEndpoint> {
  let closing = false
  const refuse = (response: ServerResponse, status: number, error: ProtocolError): void => reply(response, status, { error: error.toWire(options.now()) })
  /** §19: `413` with the error object; the rest of the body stays unread, so the connection ends after the answer. */
  const tooLarge = (request: IncomingMessage, response: ServerResponse): void => {
    response.shouldKeepAlive = false
    response.setHeader('connection', 'close')
    response.once('finish', () => request.socket.destroySoon())
    refuse(response, 413, new ProtocolError('PROTOCOL_VIOLATION', `The request body exceeds ${options.maxBytes} bytes.`, { details: { reason: 'body-too-large', maxBytes: options.maxBytes } }))
  }

  const maxConcurrent = options.maxConcurrent ?? DEFAULT_MAX_CONTROL_REQUESTS
  /** Requests past the method check and not yet answered: what bounds the bodies held at once. */
  let active = 0
  /** §19, §20: a retryable `RATE_LIMITED`; the body stays unread, so the connection ends after the answer. */
  const busy = (request: IncomingMessage, response: ServerResponse): void => {
    response.shouldKeepAlive = false
    response.setHeader('connection', 'close')
    response.setHeader('retry-after', '1')
    response.once('finish', () => request.socket.destroySoon())
    refuse(response, 503, new ProtocolError('RATE_LIMITED', `More than ${maxConcurrent} control requests are under way; retry shortly.`, { retryAfterMs: 1000, details: { maxConcurrent } }))
  }

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    if (closing) return reply(response, 503, { message: 'shutting down' })
    if (request.url !== COMMANDS_PATH) return reply(response, 404, { message: `not found; POST signed Commands to ${COMMANDS_PATH}` })
    if (request.method !== 'POST') return reply(response, 405, { message: 'POST only' })
    if (declaresMore(request, options.maxBytes)) return tooLarge(request, response)
    if (active >= maxConcurrent) return busy(request, response)
    active++
    try {
      await submitBody(request, response)
    } finally {
      active--
    }
  }

  const submitBody = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const body = await readBody(request, options.maxBytes)
    if (body === undefined) return tooLarge(request, response)
    // §6.3, §17.1: an Agent's Commands go over its authenticated, fenced session.
    if (peekEnvelope(body).actorType === 'agent') return refuse(response, 403, new ProtocolError('AUTH_FORBIDDEN', 'Agents send Commands over their WebSocket session, not the control endpoint.'))
    try {
      reply(response, 200, await options.submit(body))
    } catch (thrown) {
      refuse(response, 400, ProtocolError.from(thrown))
    }
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) reply(response, 500, { message: 'internal failure' })
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  let closed: Promise<void> | undefined
  return {
    url: `http://127.0.0.1:${port}`,
    close() {
      closing = true
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeIdleConnections()
      })
      return closed
    },
  }
}

/** The `ProtocolError` an error object of the endpoint stands for. */
function errorOf(wire: WireError): ProtocolError {
  const code = isErrorCode(wire.code) ? wire.code : 'INTERNAL_ERROR'
  return new ProtocolError(code, wire.message, {
    retryable: wire.retryable,
    ...(wire.relatedActionId === undefined ? {} : { relatedActionId: wire.relatedActionId }),
    ...(wire.details === undefined ? {} : { details: wire.details }),
  })
}

/**
 * A `Transport` for `createClient` that posts each signed Command to a `weft serve` control
 * endpoint: for humans and Organization services, who hold no Agent session (§6.3).
 * Refusals reject with their `ProtocolError`; an unreachable or stopping server with a
 * `TransportUnavailableError`, after which an unchanged resend is safe (§15.1).
 * @example
 * ```ts
 * const owner = createClient({ actor: { type: 'human', id: ownerId }, signingKey, transport: controlTransport('http://127.0.0.1:7444') })
 * await owner.missionCreate(payload, { groupId })
 * ```
 */
export function controlTransport(url: string): Transport {
  const target = new URL(COMMANDS_PATH, url)
  return {
    async submit(_command, bytes) {
      let response: Response
      try {
        response = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bytes })
      } catch (error) {
        throw new TransportUnavailableError(`the control endpoint ${url} cannot be reached`, { cause: error })
      }
      const body = (await response.json().catch(() => undefined)) as { error?: WireError } | Receipt | undefined
      if (response.status === 200 && body !== undefined) return body as Receipt
      const wire = (body as { error?: WireError } | undefined)?.error
      if (wire !== undefined) throw errorOf(wire)
      throw new TransportUnavailableError(`the control endpoint answered ${response.status}`)
    },
  }
}
