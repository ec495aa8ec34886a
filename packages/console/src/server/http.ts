/**
 * The HTTP side of the console server: an answer as a value ({@link Answer}), written with the
 * headers every console answer carries (§5: a strict Content-Security-Policy, no sniffing, no
 * referrer, no cross-origin use), and the bounded reading of a request.
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ProtocolError } from '@weft/codec'

/** §5: the console's page may load its own scripts, styles and images, and talk to its own origin; nothing else. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** The headers of every console answer, app files, API and errors alike. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

/** A request's answer, written by {@link writeAnswer}. */
export interface Answer {
  readonly status: number
  readonly headers?: Readonly<Record<string, string>>
  /** JSON-serialized with `application/json`, unless a Buffer or string with its own content type. */
  readonly body?: unknown
  /** Ends the connection after the answer (a body left unread). */
  readonly close?: boolean
}

/** A refusal: `status` with the §19 error object of `error`, as it stood at `at`, for its body. */
export function refusal(status: number, error: ProtocolError, at: string, headers?: Record<string, string>): Answer {
  return { status, body: { error: error.toWire(at) }, ...(headers === undefined ? {} : { headers }) }
}

/** `ms` as the timestamp of an answer. */
export function stamp(ms: number): string {
  return new Date(ms).toISOString()
}

/** The single value of header `name`, or `undefined` when absent or given more than once. */
export function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name]
  return typeof value === 'string' ? value : undefined
}

/** Whether the request declares a body longer than `max` (`Content-Length`), so none of it need be read. */
export function declaresMore(request: IncomingMessage, max: number): boolean {
  const declared = request.headers['content-length']
  return declared !== undefined && /^\d+$/.test(declared) && Number(declared) > max
}

/**
 * Reads the request body if it has at most `max` bytes; `undefined` as soon as it has more, after
 * which nothing more of it is read (the stream is paused and its data no longer taken).
 */
export function readBody(request: IncomingMessage, max: number): Promise<Uint8Array | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const take = (chunk: Buffer): void => {
      size += chunk.byteLength
      if (size <= max) {
        chunks.push(chunk)
        return
      }
      request.off('data', take)
      request.pause()
      chunks.length = 0
      resolve(undefined)
    }
    request.on('data', take)
    request.once('end', () => resolve(Buffer.concat(chunks)))
    request.once('error', reject)
  })
}

/** Writes `answer` with the console's headers (and `Cache-Control: no-store` on an API answer), unless an answer was written already. */
export function writeAnswer(request: IncomingMessage, response: ServerResponse, answer: Answer, isApi: boolean): void {
  if (response.headersSent) return
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value)
  // HSTS only where the answer itself came over TLS: a plain listener cannot promise https.
  if ((request.socket as { encrypted?: boolean }).encrypted === true) response.setHeader('strict-transport-security', 'max-age=31536000')
  if (isApi) response.setHeader('cache-control', 'no-store')
  for (const [name, value] of Object.entries(answer.headers ?? {})) response.setHeader(name, value)
  if (answer.close === true) {
    // The body was left unread: the connection cannot carry another request.
    response.shouldKeepAlive = false
    response.setHeader('connection', 'close')
    response.once('finish', () => request.socket.destroySoon())
  }
  let bytes: Buffer | undefined
  if (Buffer.isBuffer(answer.body)) bytes = answer.body
  else if (typeof answer.body === 'string') bytes = Buffer.from(answer.body)
  else if (answer.body !== undefined) {
    response.setHeader('content-type', 'application/json')
    bytes = Buffer.from(JSON.stringify(answer.body))
  }
  if (bytes !== undefined && answer.status !== 304) response.setHeader('content-length', bytes.byteLength)
  response.writeHead(answer.status)
  response.end(request.method === 'HEAD' || answer.status === 304 ? undefined : bytes)
}
