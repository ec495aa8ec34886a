/**
 * The listeners of `weft serve`: the WebSocket binding (§17), the web console on the same port
 * (§5, `@weft/console`), and the control endpoint on 127.0.0.1 for human and service Commands.
 * They are opened in that order and, when one fails, the ones already open are closed again, so
 * nothing stays listening after a failed start.
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { timestampOf, type Clock, type Delivery } from '@weft/authority'
import { createWireServer, type WireServer } from '@weft/authority/wire'
import { ProtocolError } from '@weft/codec'
import { CONSOLE_PATHS, CONSOLE_PROTOCOL } from '@weft/console'
import { createConsoleServer, type ConsoleAdmission, type ConsoleServer } from '@weft/console/server'
import type { ServedAuthority } from './backend.js'
import { createControlEndpoint, type ControlEndpoint } from './control.js'
import { limitHellos, type ServeLimits } from './limits.js'
import { wireEntry, type ServeLog } from './log.js'
import type { Organization } from './organization.js'

/** The hosts a plain `ws` listener may serve (`--insecure-loopback`, §17.1). */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '::1', 'localhost'])

/** Hosts that mean every interface: no browser reaches the console under that name. */
const WILDCARD_HOSTS: ReadonlySet<string> = new Set(['0.0.0.0', '::', '[::]'])

/**
 * The origins a console served by this listener has by default: `https://HOST:PORT` with TLS,
 * `http://` on the insecure loopback; a loopback host under each of its names (127.0.0.1,
 * localhost, [::1]), since a browser may be pointed at any of them.
 */
export function consoleOrigins(host: string, port: number, tls: boolean): string[] {
  const scheme = tls ? 'https' : 'http'
  const names = LOOPBACK_HOSTS.has(host) ? ['127.0.0.1', 'localhost', '[::1]'] : [host.includes(':') ? `[${host}]` : host]
  return names.map((name) => `${scheme}://${name}:${port}`)
}

/** What the listener answers a plain HTTP request outside the console: the wire server's own answer. */
function refuseHttp(response: ServerResponse): void {
  response.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' }).end('This endpoint speaks the MissionWeaveProtocol WebSocket binding only.\n')
}

/** How the listeners are opened: the `startServer` options that concern them. */
export interface ListenerOptions {
  readonly host: string | undefined
  readonly port: number
  readonly tls: { readonly cert: string | Uint8Array; readonly key: string | Uint8Array } | undefined
  readonly insecureLoopback: boolean | undefined
  readonly controlPort: number | undefined
  /** Whether the web console is served. */
  readonly console: boolean
  readonly consoleOrigins: readonly string[] | undefined
  readonly consoleAppDir: string | undefined
}

/** What the listeners serve from: the Organization, the Authority (as stored and as logged) and its delivery. */
export interface ListenerSources {
  readonly organization: Organization
  readonly authority: ServedAuthority
  /** {@link authority} with every submission logged. */
  readonly logged: ServedAuthority
  readonly delivery: Delivery
  readonly limits: ServeLimits
  readonly clock: Clock
  readonly log: ServeLog
}

/** The open listeners. */
export interface Listeners {
  readonly wire: WireServer
  readonly control: ControlEndpoint | undefined
  readonly consoleServer: ConsoleServer | undefined
  /** The console's page at the first of its origins, when it is served. */
  readonly consoleUrl: string | undefined
}

/**
 * Opens the WebSocket binding, then the control endpoint, then the console.
 * @throws whatever opening one of them threw, after closing the ones already open.
 */
export async function openListeners(options: ListenerOptions, sources: ListenerSources): Promise<Listeners> {
  const { organization, authority, logged, limits, clock, log } = sources
  // §5: the console shares the listener. Its origins name the port, known once listening, so the
  // wire server is handed hooks that reach the console once it exists.
  let consoleServer: ConsoleServer | undefined
  const consoleHooks = !options.console
    ? {}
    : {
        http: (request: IncomingMessage, response: ServerResponse): void => {
          if (consoleServer?.handle(request, response) !== true) refuseHttp(response)
        },
        humanSessions: {
          path: CONSOLE_PATHS.socket,
          protocol: CONSOLE_PROTOCOL,
          admit: (request: IncomingMessage): ConsoleAdmission =>
            consoleServer?.gate.admit(request) ?? { ok: false, status: 503, error: new ProtocolError('RATE_LIMITED', 'The console is starting; retry shortly.', { retryAfterMs: 1000 }) },
        },
      }
  const wire = await createWireServer({
    ...consoleHooks,
    authority: limitHellos(logged, limits.maxHellosPerMinute, clock),
    registry: organization.registry,
    sessionIssuer: organization.controlPlane,
    delivery: sources.delivery,
    clock,
    log: (entry) => log(wireEntry(entry)),
    ...(options.host === undefined ? {} : { host: options.host }),
    port: options.port,
    maxConnections: limits.maxConnections,
    maxConnectionsPerPeer: limits.maxConnectionsPerPeer,
    maxOutboundBytes: limits.maxOutboundBytes,
    sendTimeoutMs: limits.sendTimeoutMs,
    maxFramesPerSecond: limits.maxFramesPerSecond,
    maxFrameBytes: limits.maxFrameBytes,
    ...(options.tls === undefined ? {} : { tls: options.tls }),
    ...(options.insecureLoopback === undefined ? {} : { insecureLoopback: options.insecureLoopback }),
  })
  let control: ControlEndpoint | undefined
  if (options.controlPort !== undefined) {
    control = await createControlEndpoint({
      submit: logged.submit,
      port: options.controlPort,
      maxBytes: limits.maxControlBodyBytes,
      maxConcurrent: limits.maxControlRequests,
      now: () => timestampOf(clock.now()),
    }).catch(async (error: unknown) => {
      await wire.close()
      throw error
    })
  }
  let consoleUrl: string | undefined
  if (options.console) {
    const host = options.host ?? '127.0.0.1'
    const allowedOrigins = options.consoleOrigins ?? consoleOrigins(host, wire.port, options.tls !== undefined)
    if (options.consoleOrigins === undefined && WILDCARD_HOSTS.has(host)) {
      log({
        level: 'warn',
        msg: 'console origin unknown',
        detail: `listening on every interface (${host}): browsers reach the console under a name this server does not know; give it with --console-origin https://NAME:PORT`,
      })
    }
    try {
      consoleServer = createConsoleServer({
        // The Registry the Authority verifies Commands with: whoever may sign one may sign in.
        registry: organization.registry,
        authority: {
          get state() {
            return authority.state
          },
        },
        allowedOrigins,
        clock,
        ...(options.consoleAppDir === undefined ? {} : { appDir: options.consoleAppDir }),
        log,
      })
    } catch (error) {
      // Bad consoleOrigins: nothing may stay listening.
      await control?.close()
      await wire.close()
      throw error
    }
    consoleServer.attach(wire)
    consoleUrl = `${new URL(allowedOrigins[0]!).origin}${CONSOLE_PATHS.app}`
  }
  return { wire, control, consoleServer, consoleUrl }
}
