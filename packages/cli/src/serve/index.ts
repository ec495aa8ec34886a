/**
 * `@weft/cli/serve`: a Group Authority over the WebSocket binding on a durable SQLite store or a
 * PostgreSQL database shared by several servers, as `weft serve` runs it, and `weft inspect`'s
 * reading of a log. A separate entry point so that importing `@weft/cli` never loads the native
 * SQLite module (nor `pg`, which is loaded only for a PostgreSQL log).
 *
 * @example
 * ```ts
 * import { startServer, inspectData, inspectionText } from '@weft/cli/serve'
 *
 * const server = await startServer({ dataDir: 'data', insecureLoopback: true, port: 0 })
 * console.log(inspectionText(await inspectData('data')))
 * await server.close()
 * ```
 * @packageDocumentation
 */
export { startServer, DEFAULT_PORT } from './serve.js'
export type { ServeOptions, ServePolicy, RunningServer } from './serve.js'
export { serveCommand } from './command.js'
export type { SignalSource } from './shutdown.js'
export { consoleOrigins } from './listeners.js'
export { postgresTarget } from './backend.js'
export type { ServedAuthority, PostgresTarget } from './backend.js'
// What startServer rejects with when another server holds the data directory, or a port is taken.
export { DataDirInUseError, DATA_DIR_IN_USE_EXIT, LOCK_FILE } from './lock.js'
export type { LockHolder } from './lock.js'
export { PortUnavailableError } from './ports.js'
export { inspectData, inspectionText, inspectCommand } from './inspect.js'
export type { Inspection, InspectOptions, GroupReport, EventLine, LeaseLine, WorkItemLine, LedgerCell, LedgerLine, AgentLine } from './inspect.js'
export { createControlEndpoint, controlTransport, COMMANDS_PATH } from './control.js'
export type { ControlEndpoint, ControlEndpointOptions } from './control.js'
export { newOrganization, writeOrganization, loadOrganization, registryEvidence, ORGANIZATION_FORMAT, ORGANIZATION_FILE, STORE_FILE } from './organization.js'
export type { OrganizationFile, Organization, Service, ServiceEntry, PrincipalEntry, CardTemplate } from './organization.js'
export { readKeyFile, KEY_FILE_FORMAT } from '../principal.js'
export type { KeyFile, LoadedKey } from '../principal.js'
