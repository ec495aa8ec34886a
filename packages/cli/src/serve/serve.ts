/**
 * `weft serve`: a Group Authority on the WebSocket binding (§17) for the Organization of a data
 * directory, over a durable SQLite store or a PostgreSQL database shared with other `weft serve`
 * processes.
 *
 * A data directory holds `organization.json` ({@link loadOrganization}) and, unless the log is in
 * PostgreSQL, `authority.db` (the Event log, receipts, ACK Cursors and Artifact blobs of
 * `@weft/store-sqlite`). The SQLite store commits with `synchronous = FULL` and PostgreSQL with its
 * durable defaults: a receipt leaves only after its Events are committed, so an acknowledged Command
 * survives a kill of the process, and a restart folds the log back into the same state.
 *
 * Here: opening the store and the Authority on it. The listeners are opened by `listeners.ts`,
 * closed by `shutdown.ts`; the command line is `command.ts`.
 * @module
 */
import { join } from 'node:path'
import { createDelivery, DEFAULT_POLICY, systemClock, timestampOf, type AuthorityPolicy, type Clock } from '@weft/authority'
import { createClient } from '@weft/client'
import { ProtocolError, UsageError } from '@weft/codec'
import type { AgentCard } from '@weft/spec'
import { openPostgresBackend, openSqliteBackend, type Backend, type PostgresTarget, type ServedAuthority } from './backend.js'
import { loggedDelivery } from './internal-errors.js'
import { FRAME_OVERHEAD_BYTES, SERVE_LIMITS, type ServeLimits } from './limits.js'
import { openListeners } from './listeners.js'
import { lockDataDir } from './lock.js'
import { loggedAuthority, type ServeLog } from './log.js'
import { cardsToRegister, loadOrganization, ORGANIZATION_FILE, readableByOthers, type Organization } from './organization.js'
import { checkPort } from './ports.js'
import { closeServer } from './shutdown.js'

/** The default TCP port of the WebSocket binding. */
export const DEFAULT_PORT = 7443

/** Authority policy limits a deployment may set (§20); the control plane always comes from the Organization. */
export type ServePolicy = Partial<Omit<AuthorityPolicy, 'controlPlane' | 'requiresExecutionApproval'>>

/** Options of {@link startServer}. */
export interface ServeOptions {
  /** The data directory: `organization.json` is read from it and, without {@link postgres}, `authority.db` kept in it. */
  readonly dataDir: string
  /**
   * Keep the log in this PostgreSQL database instead of `authority.db`: every `weft serve` process
   * started with the same database and schema (and the same `organization.json`) serves one
   * Organization, each one's subscribers receiving every process's Events live (`@weft/store-postgres`).
   */
  readonly postgres?: PostgresTarget
  /** Interface of the WebSocket binding. Default `127.0.0.1`. */
  readonly host?: string
  /** Port of the WebSocket binding; 0 picks a free one. Default {@link DEFAULT_PORT}. */
  readonly port?: number
  /** PEM certificate chain and key: `wss` with TLS 1.3 (§17.1). */
  readonly tls?: { readonly cert: string | Uint8Array; readonly key: string | Uint8Array }
  /** Plain `ws` on a loopback host, for development and tests. */
  readonly insecureLoopback?: boolean
  /** Port of the control endpoint on 127.0.0.1 (human and service Commands); absent: none. */
  readonly controlPort?: number
  /** Authority limits (§20); `maxMessagesPerMinute` and `maxProposalsPerMinute` default to {@link SERVE_LIMITS}. */
  readonly policy?: ServePolicy
  /** Sessions one Agent may open per sliding minute; more HELLOs are refused with `RATE_LIMITED`. Default {@link SERVE_LIMITS}. */
  readonly maxHellosPerMinute?: number
  /** WebSocket connections open at once; more upgrades are refused (HTTP 503, `RATE_LIMITED`). Default {@link SERVE_LIMITS}. */
  readonly maxConnections?: number
  /** WebSocket connections open at once from one peer address; more are refused (HTTP 429, `RATE_LIMITED`). Default {@link SERVE_LIMITS}. */
  readonly maxConnectionsPerPeer?: number
  /** Refused Commands the Authority's audit record keeps (§6.4), the newest. Default {@link SERVE_LIMITS}. */
  readonly maxAuditEntries?: number
  /** Largest control endpoint request body in bytes; a longer one is refused (HTTP 413) before it is read. Default: `policy.maxCommandBytes`. */
  readonly maxControlBodyBytes?: number
  /** Control endpoint requests handled at once; one more is refused (HTTP 503, `RATE_LIMITED`) before its body is read. Default {@link SERVE_LIMITS}. */
  readonly maxControlRequests?: number
  /**
   * Bytes one WebSocket connection may hold for its peer (§17.3): Event frames are written only
   * while its socket drains, and when its queued answers (PING replies, `ERROR` frames, receipts)
   * would pass this, it gets a fatal `BACKPRESSURE` and close code 1013. Default {@link SERVE_LIMITS}.
   */
  readonly maxOutboundBytes?: number
  /** Milliseconds a WebSocket connection's socket may take none of the bytes waiting for it before it is closed the same way. Default {@link SERVE_LIMITS}. */
  readonly sendTimeoutMs?: number
  /** Frames one WebSocket connection may send per second, with bursts of as many; a faster peer is read no further until its allowance refills (TCP holds it back). Default {@link SERVE_LIMITS}. */
  readonly maxFramesPerSecond?: number
  /** Largest WebSocket message a peer may send, in bytes; a longer one closes its connection (1009). Default: `policy.maxCommandBytes` and 64 KiB. */
  readonly maxFrameBytes?: number
  /**
   * The web console (§5 human interface, `@weft/console`) on the WebSocket binding's listener,
   * under `/console/`. Default `true`.
   */
  readonly console?: boolean
  /**
   * The origins the console's pages are served from, as browsers send them in `Origin` (e.g.
   * `https://weft.example.com` behind a reverse proxy). Default: the listener's own, see
   * {@link consoleOrigins}.
   */
  readonly consoleOrigins?: readonly string[]
  /** The built console app (`index.html`, `manifest.json`, ...). Default: `dist/app/` of `@weft/console`. */
  readonly consoleAppDir?: string
  /** Receives the structured log. Default: none. */
  readonly log?: ServeLog
  /** Default: the wall clock. */
  readonly clock?: Clock
}

/** A running server. */
export interface RunningServer {
  /** `wss://host:port`, or `ws://` on the insecure loopback. */
  readonly url: string
  /** `http://127.0.0.1:port` of the control endpoint, when there is one. */
  readonly controlUrl: string | undefined
  /** The web console's page (`http://127.0.0.1:port/console/`, or at the first `consoleOrigins`), unless it is off. */
  readonly consoleUrl: string | undefined
  readonly organization: Organization
  readonly authority: ServedAuthority
  /**
   * Stops accepting connections and Commands, lets the ones under way finish, stores the pending
   * ACK Cursors, then closes the store. Every Command answered before is committed already.
   */
  close(): Promise<void>
}

/**
 * Registers the Agent Cards `organization.json` states that the Registry lacks or states otherwise
 * (§6.1). A card refused because another process sharing the log registered the same one first is
 * no failure: the Registry then says what the file says.
 */
async function registerCards(authority: ServedAuthority, logged: ServedAuthority, organization: Organization, clock: Clock, orgPath: string, log: ServeLog): Promise<void> {
  const registrar = createClient({ actor: organization.controlPlane.actor, signingKey: organization.controlPlane.signingKey, transport: logged.connect(), clock })
  // Read from the state each time: with PostgreSQL it is replaced after a failed commit.
  const unstated = (): AgentCard[] => cardsToRegister(organization, (id) => authority.state.org.agents.get(id)?.card, timestampOf(clock.now()))
  for (const card of unstated()) {
    try {
      await registrar.registryAgentCardRegister({ card })
    } catch (error) {
      // The refused submission folded the shared log first: the state shows a peer's registration.
      if (!unstated().some((c) => c.agentId === card.agentId)) {
        log({ level: 'info', msg: 'agent card already registered', agentId: card.agentId, cardVersion: authority.state.org.agents.get(card.agentId)?.card.cardVersion })
        continue
      }
      throw new UsageError(`${orgPath}: the Agent Card of ${card.agentId} was refused (${ProtocolError.from(error).code}: ${(error as Error).message})`)
    }
    log({ level: 'info', msg: 'agent card registered', agentId: card.agentId, cardVersion: card.cardVersion })
  }
}

/**
 * Starts a Group Authority for the data directory `options.dataDir`: loads the Organization,
 * folds the stored log, registers the Agent Cards the file declares that the Registry lacks or
 * states otherwise (§6.1), and listens on the WebSocket binding (and the control endpoint when
 * asked).
 * @throws UsageError for a missing or malformed `organization.json`, a card the Authority refuses,
 * or bad listening options; DataDirInUseError when another server holds the SQLite data directory
 * (`lock.ts`); PortUnavailableError when a port cannot be listened on (`ports.ts`).
 * @example
 * ```ts
 * const server = await startServer({ dataDir: 'data', port: 0, insecureLoopback: true, controlPort: 0 })
 * console.log(server.url, server.controlUrl)
 * await server.close()
 * ```
 */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? (() => undefined)
  const clock = options.clock ?? systemClock
  const orgPath = join(options.dataDir, ORGANIZATION_FILE)
  const organization = await loadOrganization(orgPath)
  if (await readableByOthers(orgPath)) log({ level: 'warn', msg: 'organization file readable by others', path: orgPath, detail: 'it holds private keys; chmod 600' })
  const controlPlane = [organization.controlPlane.actor.id]
  const limits: ServeLimits = {
    maxMessagesPerMinute: options.policy?.maxMessagesPerMinute ?? SERVE_LIMITS.maxMessagesPerMinute,
    maxProposalsPerMinute: options.policy?.maxProposalsPerMinute ?? SERVE_LIMITS.maxProposalsPerMinute,
    maxHellosPerMinute: options.maxHellosPerMinute ?? SERVE_LIMITS.maxHellosPerMinute,
    maxConnections: options.maxConnections ?? SERVE_LIMITS.maxConnections,
    maxConnectionsPerPeer: options.maxConnectionsPerPeer ?? SERVE_LIMITS.maxConnectionsPerPeer,
    maxAuditEntries: options.maxAuditEntries ?? SERVE_LIMITS.maxAuditEntries,
    // A Command the Authority would take must fit in a request.
    maxControlBodyBytes: options.maxControlBodyBytes ?? options.policy?.maxCommandBytes ?? SERVE_LIMITS.maxControlBodyBytes,
    maxControlRequests: options.maxControlRequests ?? SERVE_LIMITS.maxControlRequests,
    maxOutboundBytes: options.maxOutboundBytes ?? SERVE_LIMITS.maxOutboundBytes,
    sendTimeoutMs: options.sendTimeoutMs ?? SERVE_LIMITS.sendTimeoutMs,
    maxFramesPerSecond: options.maxFramesPerSecond ?? SERVE_LIMITS.maxFramesPerSecond,
    // A frame carries one Command and its own few members: more can only be refused.
    maxFrameBytes: options.maxFrameBytes ?? (options.policy?.maxCommandBytes === undefined ? SERVE_LIMITS.maxFrameBytes : options.policy.maxCommandBytes + FRAME_OVERHEAD_BYTES),
  }
  const policy = { ...options.policy, maxMessagesPerMinute: limits.maxMessagesPerMinute, maxProposalsPerMinute: limits.maxProposalsPerMinute, controlPlane }
  const opening = { dataDir: options.dataDir, organization, clock, policy, log, maxAuditEntries: limits.maxAuditEntries }
  // §15.2: a SQLite log has one writer, or two Authorities would hand out the same sequences. With
  // PostgreSQL the database orders every server's commits, so there is nothing to lock.
  const lock = options.postgres === undefined ? lockDataDir(options.dataDir) : undefined
  let backend: Backend
  try {
    // Before the log is opened and proved, which takes a while on a long log: a port in use is the
    // likeliest reason not to start, and the lock above reports a second server on this directory first.
    await checkPort(options.host ?? '127.0.0.1', options.port ?? DEFAULT_PORT, 'the WebSocket port', '--port')
    if (options.controlPort !== undefined) await checkPort('127.0.0.1', options.controlPort, 'the control port', '--control-port')
    backend = options.postgres === undefined ? openSqliteBackend(opening) : await openPostgresBackend(options.postgres, opening)
  } catch (error) {
    lock?.release()
    throw error
  }
  try {
    const { authority } = backend
    const heads = [...authority.state.groups.values()].map((g) => g.head)
    log({
      level: 'info',
      msg: 'store opened',
      ...backend.where,
      ...(lock === undefined ? {} : { lock: lock.path }),
      groups: heads.length,
      groupEvents: heads.reduce((a, b) => a + b, 0),
      organizationId: organization.organizationId,
    })
    const logged = loggedAuthority(authority, log, options.policy?.maxCommandBytes ?? DEFAULT_POLICY.maxCommandBytes)
    await registerCards(authority, logged, organization, clock, orgPath, log)
    const delivery = loggedDelivery(createDelivery(authority, { cursorStore: backend.cursorStore, controlPlane }), log)
    const listenerOptions = {
      host: options.host,
      port: options.port ?? DEFAULT_PORT,
      tls: options.tls,
      insecureLoopback: options.insecureLoopback,
      controlPort: options.controlPort,
      console: options.console !== false,
      consoleOrigins: options.consoleOrigins,
      consoleAppDir: options.consoleAppDir,
    }
    const listeners = await openListeners(listenerOptions, { organization, authority, logged, delivery, limits, clock, log }).catch((error: unknown) => {
      delivery.close()
      throw error
    })
    const { wire, control, consoleUrl } = listeners
    log({ level: 'info', msg: 'listening', url: wire.url, ...(control === undefined ? {} : { controlUrl: control.url }), ...(consoleUrl === undefined ? {} : { consoleUrl }), limits })
    let closing: Promise<void> | undefined
    return {
      url: wire.url,
      controlUrl: control?.url,
      consoleUrl,
      organization,
      authority,
      close() {
        closing ??= closeServer({ listeners, delivery, backend, lock }, log)
        return closing
      },
    }
  } catch (error) {
    await backend.close().catch(() => {})
    lock?.release()
    throw error
  }
}
