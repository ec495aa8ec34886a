/**
 * `@weft/console/server`: the server side of the web console (§5), as `weft serve` mounts it on
 * the listener of its WebSocket binding: the built app, the sign-in API and the admission of
 * signed-in people's WebSockets. See {@link createConsoleServer}.
 *
 * @example
 * ```ts
 * import { createConsoleServer } from '@weft/console/server'
 *
 * const consoleServer = createConsoleServer({ registry, authority, allowedOrigins: ['http://127.0.0.1:7443'] })
 * const wire = await createWireServer({ ...wireOptions, http: (request, response) => { if (!consoleServer.handle(request, response)) response.writeHead(426).end() }, humanSessions: consoleServer.gate })
 * consoleServer.attach(wire)
 * ```
 * @packageDocumentation
 */
export { createConsoleServer, CONSOLE_LIMITS } from './console-server.js'
export { CONSOLE_CSP } from './http.js'
// The bounded reading of a request body, for a host serving its own endpoints beside the console
// (`weft serve`'s control endpoint): a refused request costs at most `max` bytes of memory.
export { declaresMore, readBody } from './http.js'
export type { ConsoleServer, ConsoleServerOptions, ConsoleLimits, ConsoleGate, ConsoleAdmission, ConsoleLogEntry, HumanSessionHost } from './console-server.js'
// For those who serve the app themselves.
export { loadApp, AppUnavailableError, APP_MANIFEST, APP_INDEX } from './app-files.js'
export type { AppFile, LoadedApp } from './app-files.js'
