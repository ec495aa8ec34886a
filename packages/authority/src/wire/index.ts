/**
 * @weft/authority/wire: the server side of the MissionWeaveProtocol 0.1 WebSocket binding (§6.3,
 * §17). {@link createWireServer} puts a Group Authority on `wss` (TLS 1.3): Agents authenticate
 * with the HELLO challenge handshake, send signed Commands and receive every Group they read over
 * one connection. The client side is `connectWebSocket` of `@weft/client/wire`. The same listener
 * can serve people (§5 human interface): a {@link HumanSessionGate} admits a console's WebSocket at
 * the upgrade, and plain HTTP requests go to an `http` handler.
 *
 * @example
 * ```ts
 * import { createAuthority } from '@weft/authority'
 * import { createWireServer } from '@weft/authority/wire'
 *
 * const authority = createAuthority({ registry, keys, policy: { controlPlane: [controlPlane.actor.id] } })
 * const server = await createWireServer({ authority, registry, sessionIssuer: controlPlane, tls: { cert, key }, port: 7443 })
 * ```
 * @packageDocumentation
 */
export { createWireServer, DEFAULT_MAX_FRAMES_PER_SECOND, DEFAULT_MAX_OUTBOUND_BYTES, DEFAULT_SEND_TIMEOUT_MS } from './server.js'
export type { WireServer, WireServerOptions, WireServerStats, WireConnectionInfo, SessionIssuer, WireLogEntry, WireAuthority } from './server.js'
export type { HumanAdmission, HumanSessionGate } from './human-sessions.js'
