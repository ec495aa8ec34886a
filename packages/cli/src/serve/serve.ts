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
 * @module
 */
import { access, readFile } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { dirname, join, resolve } from 'node:path'
import { createSecureContext } from 'node:tls'
import { parseArgs } from 'node:util'
import { createDelivery, DEFAULT_POLICY, LogProofError, systemClock, timestampOf, type AuthorityPolicy, type Clock } from '@weft/authority'
import { createWireServer, type WireLogEntry } from '@weft/authority/wire'
import { createClient, type Receipt } from '@weft/client'
import { ProtocolError, UsageError } from '@weft/codec'
import { CONSOLE_PATHS, CONSOLE_PROTOCOL } from '@weft/console'
import { createConsoleServer, type ConsoleAdmission, type ConsoleServer } from '@weft/console/server'
import type { AgentCard } from '@weft/spec'
import { fileProblem } from '../failures.js'
import { LOG_PROOF_EXIT, openPostgresBackend, openSqliteBackend, postgresTarget, type Backend, type PostgresTarget, type ServedAuthority } from './backend.js'
import { createControlEndpoint, type ControlEndpoint } from './control.js'
import { causeText, loggedDelivery } from './internal-errors.js'
import { createPrivateDir } from './files.js'
import { DATA_DIR_IN_USE_EXIT, DataDirInUseError, lockDataDir } from './lock.js'
import { checkPort, PortUnavailableError } from './ports.js'
import { FRAME_OVERHEAD_BYTES, LIMIT_FLAGS, limitHellos, SERVE_LIMITS, type ServeLimits } from './limits.js'
import { jsonLines, peekEnvelope, type ServeLog } from './log.js'
import { principalCommand } from '../principal.js'
import { cardsToRegister, loadOrganization, newOrganization, ORGANIZATION_FILE, readableByOthers, registryEvidence, writeOrganization, type Organization } from './organization.js'

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

/** Hosts that mean every interface: no browser reaches the console under that name. */
const WILDCARD_HOSTS: ReadonlySet<string> = new Set(['0.0.0.0', '::', '[::]'])

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

/** How long {@link RunningServer.close} waits for peers to finish their WebSocket close handshake. */
const CLOSE_GRACE_MS = 5000

/** `authority` with every submission logged: accepted (its sequences), answered as a duplicate, or refused with its §19 code. */
function loggedAuthority(authority: ServedAuthority, log: ServeLog, maxCommandBytes: number): ServedAuthority {
  const submit = async (bytes: string | Uint8Array): Promise<Receipt> => {
    let receipt: Receipt
    try {
      receipt = await authority.submit(bytes)
    } catch (thrown) {
      const error = ProtocolError.from(thrown)
      // §19: the peer learns only the code of an INTERNAL_ERROR; the log keeps its cause.
      const internal = error.code === 'INTERNAL_ERROR' ? { cause: causeText(thrown) } : {}
      log({ level: error.code === 'INTERNAL_ERROR' ? 'error' : 'info', msg: 'command refused', code: error.code, ...peekEnvelope(bytes, maxCommandBytes), ...internal })
      throw thrown
    }
    const sequences = receipt.events.flatMap((e) => (e.sequence === undefined ? [] : [e.sequence]))
    log({
      level: 'info',
      msg: receipt.duplicate ? 'command answered as duplicate' : 'command accepted',
      kind: receipt.kind,
      actionId: receipt.actionId,
      actorId: receipt.actor.id,
      ...(receipt.groupId === undefined ? {} : { groupId: receipt.groupId }),
      ...(sequences.length === 0 ? {} : { sequences: [sequences[0], sequences.at(-1)] }),
    })
    return receipt
  }
  // Everything else is read through to `authority` as it is at the time (its state may be replaced, not only changed).
  const own = { submit, submitCommand: (command: object) => submit(JSON.stringify(command)), connect: () => ({ submit: (_command: unknown, bytes: string) => submit(bytes) }) }
  return Object.freeze(Object.create(authority, Object.fromEntries(Object.entries(own).map(([name, value]) => [name, { value, enumerable: true }]))) as ServedAuthority)
}

/**
 * Registers the Agent Cards `organization.json` states that the Registry lacks or states otherwise
 * (§6.1). A card refused because another process sharing the log registered the same one first is
 * no failure: the Registry then says what the file says.
 */
async function registerCards(authority: ServedAuthority, logged: ServedAuthority, organization: Organization, clock: Clock, orgPath: string, log: ServeLog): Promise<void> {
  const registrar = createClient({ actor: organization.controlPlane.actor, signingKey: organization.controlPlane.signingKey, transport: logged.connect(), clock: () => clock.now() })
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

function wireEntry(entry: WireLogEntry): Parameters<ServeLog>[0] {
  const { message, ...rest } = entry
  // The wire server's connection lines become the fixed phrases operators grep for.
  const msg = message.startsWith('connection from')
    ? 'connection opened'
    : message.startsWith('connection refused')
      ? 'connection refused'
      : message.startsWith('closed by the peer') || message.startsWith('closing')
        ? 'connection closed'
        : message
  return { ...rest, msg, ...(msg === message ? {} : { detail: message }) }
}

/** What the listener answers a plain HTTP request outside the console: the wire server's own answer. */
function refuseHttp(response: ServerResponse): void {
  response.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' }).end('This endpoint speaks the MissionWeaveProtocol WebSocket binding only.\n')
}

/** Resolves after `promise` or `ms`, whichever is first. */
function bounded(promise: Promise<void>, ms: number): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(done, ms)
    timer.unref()
    const finish = (): void => {
      clearTimeout(timer)
      done()
    }
    promise.then(finish, finish)
  })
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
    log({ level: 'info', msg: 'store opened', ...backend.where, ...(lock === undefined ? {} : { lock: lock.path }), groups: heads.length, groupEvents: heads.reduce((a, b) => a + b, 0), organizationId: organization.organizationId })
    const logged = loggedAuthority(authority, log, options.policy?.maxCommandBytes ?? DEFAULT_POLICY.maxCommandBytes)
    await registerCards(authority, logged, organization, clock, orgPath, log)
    const delivery = loggedDelivery(createDelivery(authority, { cursorStore: backend.cursorStore, controlPlane }), log)
    // §5: the console shares the listener. Its origins name the port, known once listening, so the
    // wire server is handed hooks that reach the console once it exists.
    let consoleServer: ConsoleServer | undefined
    const consoleHooks =
      options.console === false
        ? {}
        : {
            http: (request: IncomingMessage, response: ServerResponse): void => {
              if (consoleServer?.handle(request, response) !== true) refuseHttp(response)
            },
            humanSessions: {
              path: CONSOLE_PATHS.socket,
              protocol: CONSOLE_PROTOCOL,
              admit: (request: IncomingMessage): ConsoleAdmission => consoleServer?.gate.admit(request) ?? { ok: false, status: 503, error: new ProtocolError('RATE_LIMITED', 'The console is starting; retry shortly.', { retryAfterMs: 1000 }) },
            },
          }
    const wire = await createWireServer({
      ...consoleHooks,
      authority: limitHellos(logged, limits.maxHellosPerMinute, clock),
      registry: organization.registry,
      sessionIssuer: organization.controlPlane,
      delivery,
      clock,
      log: (entry) => log(wireEntry(entry)),
      ...(options.host === undefined ? {} : { host: options.host }),
      port: options.port ?? DEFAULT_PORT,
      maxConnections: limits.maxConnections,
      maxConnectionsPerPeer: limits.maxConnectionsPerPeer,
      maxOutboundBytes: limits.maxOutboundBytes,
      sendTimeoutMs: limits.sendTimeoutMs,
      maxFramesPerSecond: limits.maxFramesPerSecond,
      maxFrameBytes: limits.maxFrameBytes,
      ...(options.tls === undefined ? {} : { tls: options.tls }),
      ...(options.insecureLoopback === undefined ? {} : { insecureLoopback: options.insecureLoopback }),
    }).catch((error: unknown) => {
      delivery.close()
      throw error
    })
    let control: ControlEndpoint | undefined
    if (options.controlPort !== undefined) {
      control = await createControlEndpoint({ submit: logged.submit, port: options.controlPort, maxBytes: limits.maxControlBodyBytes, maxConcurrent: limits.maxControlRequests, now: () => timestampOf(clock.now()) }).catch(async (error: unknown) => {
        await wire.close()
        delivery.close()
        throw error
      })
    }
    let consoleUrl: string | undefined
    if (options.console !== false) {
      const host = options.host ?? '127.0.0.1'
      const allowedOrigins = options.consoleOrigins ?? consoleOrigins(host, wire.port, options.tls !== undefined)
      if (options.consoleOrigins === undefined && WILDCARD_HOSTS.has(host)) {
        log({ level: 'warn', msg: 'console origin unknown', detail: `listening on every interface (${host}): browsers reach the console under a name this server does not know; give it with --console-origin https://NAME:PORT` })
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
        delivery.close()
        throw error
      }
      consoleServer.attach(wire)
      consoleUrl = `${new URL(allowedOrigins[0]!).origin}${CONSOLE_PATHS.app}`
    }
    log({ level: 'info', msg: 'listening', url: wire.url, ...(control === undefined ? {} : { controlUrl: control.url }), ...(consoleUrl === undefined ? {} : { consoleUrl }), limits })
    let closing: Promise<void> | undefined
    return {
      url: wire.url,
      controlUrl: control?.url,
      consoleUrl,
      organization,
      authority,
      close() {
        closing ??= (async () => {
          // Stop taking Commands first; each one already taken is committed before the store closes.
          await control?.close()
          // Signed-in people's tokens end with the process: they were only ever in memory.
          consoleServer?.close()
          for (const c of wire.connections) log({ level: 'info', msg: 'connection closed', connectionId: c.id, ...(c.agentId === undefined ? {} : { agentId: c.agentId }), detail: 'server shutting down' })
          await bounded(wire.close(), CLOSE_GRACE_MS)
          delivery.close()
          try {
            await backend.close()
          } catch (error) {
            // §16: an ACK Cursor not stored leaves the older one, from which delivery replays; nothing accepted is lost.
            log({ level: 'warn', msg: 'store closed with an error', detail: (error as Error).message })
          }
          lock?.release()
          log({ level: 'info', msg: 'stopped' })
        })()
        return closing
      },
    }
  } catch (error) {
    await backend.close().catch(() => {})
    lock?.release()
    throw error
  }
}

// ---------------------------------------------------------------------------------------------
// The command line
// ---------------------------------------------------------------------------------------------

/** The members of a `--config` file. */
interface ConfigFile {
  host?: string
  port?: number
  controlPort?: number
  insecureLoopback?: boolean
  tls?: { cert: string; key: string }
  policy?: ServePolicy
  maxHellosPerMinute?: number
  maxConnections?: number
  maxConnectionsPerPeer?: number
  maxAuditEntries?: number
  maxControlBodyBytes?: number
  maxControlRequests?: number
  maxOutboundBytes?: number
  sendTimeoutMs?: number
  maxFramesPerSecond?: number
  maxFrameBytes?: number
}

/** The limits a `--config` file sets at its top level; the rates of Messages and proposals are `policy` limits. */
const SERVER_LIMITS = ['maxHellosPerMinute', 'maxConnections', 'maxConnectionsPerPeer', 'maxAuditEntries', 'maxControlBodyBytes', 'maxControlRequests', 'maxOutboundBytes', 'sendTimeoutMs', 'maxFramesPerSecond', 'maxFrameBytes'] as const

/** `value` (a flag's text or a config member) as a positive integer. */
function positive(value: unknown, name: string): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw new UsageError(`${name} must be a positive integer`)
  return n
}

const POLICY_LIMITS = ['freshnessSeconds', 'maxCommandBytes', 'maxMissionDepth', 'maxDelegationDepth', 'maxMessagesPerMinute', 'maxProposalsPerMinute', 'maxQueuedWorkItems', 'maxActiveWorkItems'] as const

function port(value: unknown, name: string): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0 || n > 65535) throw new UsageError(`${name} must be a port number from 0 to 65535`)
  return n
}

/** Reads a `--config` file; relative TLS paths are resolved from its directory. */
async function readConfig(path: string): Promise<ConfigFile> {
  let value: unknown
  try {
    value = JSON.parse(await readFile(path, 'utf8'))
  } catch (error) {
    throw new UsageError(`--config ${path}: ${(error as Error).message}`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`--config ${path}: the file must hold one JSON object`)
  const raw = value as Record<string, unknown>
  const unknown = Object.keys(raw).filter((k) => !['host', 'port', 'controlPort', 'insecureLoopback', 'tls', 'policy', ...SERVER_LIMITS].includes(k))
  if (unknown.length > 0) throw new UsageError(`--config ${path}: unknown member(s) ${unknown.join(', ')}`)
  const config: ConfigFile = {}
  if (raw['host'] !== undefined) {
    if (typeof raw['host'] !== 'string') throw new UsageError(`--config ${path}: host must be a string`)
    config.host = raw['host']
  }
  if (raw['port'] !== undefined) config.port = port(raw['port'], 'port')
  for (const name of SERVER_LIMITS) if (raw[name] !== undefined) config[name] = positive(raw[name], `--config ${path}: ${name}`)
  if (raw['controlPort'] !== undefined) config.controlPort = port(raw['controlPort'], 'controlPort')
  if (raw['insecureLoopback'] !== undefined) {
    if (typeof raw['insecureLoopback'] !== 'boolean') throw new UsageError(`--config ${path}: insecureLoopback must be true or false`)
    config.insecureLoopback = raw['insecureLoopback']
  }
  const tls = raw['tls'] as Record<string, unknown> | undefined
  if (tls !== undefined) {
    if (typeof tls?.['cert'] !== 'string' || typeof tls['key'] !== 'string') throw new UsageError(`--config ${path}: tls must be { "cert": file, "key": file }`)
    config.tls = { cert: resolve(dirname(path), tls['cert']), key: resolve(dirname(path), tls['key']) }
  }
  const policy = raw['policy'] as Record<string, unknown> | undefined
  if (policy !== undefined) {
    const limits: Record<string, number> = {}
    if (typeof policy !== 'object' || policy === null) throw new UsageError(`--config ${path}: policy must be an object of limits`)
    for (const [name, limit] of Object.entries(policy)) {
      if (!(POLICY_LIMITS as readonly string[]).includes(name)) throw new UsageError(`--config ${path}: policy.${name} is not a settable limit (${POLICY_LIMITS.join(', ')})`)
      limits[name] = positive(limit, `--config ${path}: policy.${name}`)
    }
    config.policy = limits
  }
  return config
}

/** The process `weft serve` runs in (`process` in the command): where it waits for its stop signals. */
export interface SignalSource {
  once(signal: 'SIGINT' | 'SIGTERM', listener: (signal: NodeJS.Signals) => void): unknown
  off(signal: 'SIGINT' | 'SIGTERM', listener: (signal: NodeJS.Signals) => void): unknown
  /** Sets the file mode creation mask and returns the previous one (`process.umask`); absent, the mask is left alone. */
  umask?(mask: number): number
}

/** The name of the human `--init` adds unless told `--human NAME` or `--no-human`. */
const FIRST_HUMAN = 'owner'

/** The names `weft principal add` takes: they become a file name and the last segment of an ID. */
const PRINCIPAL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  )
}

/**
 * `--init`: a new Organization and, unless `human` is `undefined`, its first human, whose private
 * key goes to `DATA/NAME.key.json` (mode 0600, never overwritten) as `weft principal add` writes
 * it: the person who signs in to the console first (§5) and owns the first Missions.
 */
async function init(dataDir: string, write: (text: string) => void, human: string | undefined): Promise<void> {
  if (human !== undefined && !PRINCIPAL_NAME.test(human)) throw new UsageError(`--human must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit; got ${JSON.stringify(human)}`)
  await createPrivateDir(dataDir)
  const file = newOrganization()
  const path = join(dataDir, ORGANIZATION_FILE)
  const keyPath = human === undefined ? undefined : join(dataDir, `${human}.key.json`)
  // Refused before anything is written: a key file is never overwritten (nor an Organization, below).
  if (keyPath !== undefined && !(await exists(path)) && (await exists(keyPath))) throw new UsageError(`${keyPath} exists already; a key file is never overwritten (move it away, or choose --human NAME or --no-human)`)
  await writeOrganization(path, file)
  const evidence = registryEvidence(file)
  let first: { readonly id: string; readonly keyId: string } | undefined
  if (human !== undefined && keyPath !== undefined) {
    let refused = ''
    const code = await principalCommand(['add', 'human', '--data', dataDir, '--name', human, '--key-out', keyPath], { stdout: () => undefined, stderr: (text) => void (refused += text) })
    if (code !== 0) throw new UsageError(`${path} was written, but its first human was not: ${refused.replace(/^weft principal: /, '').trim()}`)
    first = (await loadOrganization(path)).file.principals.find((p) => p.type === 'human')
  }
  write(
    `Created ${path} (mode 600: it holds the private keys of two services).\n\n` +
      `Organization ${file.organizationId}\n` +
      `  Authority      ${file.authority.id}  key ${file.authority.keyId}\n` +
      `  control plane  ${file.controlPlane.id}  key ${file.controlPlane.keyId}\n` +
      (first === undefined ? '' : `  first human    ${first.id}  key ${first.keyId}\n`) +
      '\n' +
      'Agents verify the Authority\'s Event signatures with these Registry bindings:\n' +
      `${JSON.stringify(evidence, null, 2)}\n\n` +
      `Next, register your ${first === undefined ? '' : 'other '}people and Agents, each with a key pair of its own (the private key goes to a\n` +
      'file of its own, mode 600, never into the organization file):\n' +
      `  weft principal add human --data ${shellWord(dataDir)} --name NAME\n` +
      `  weft principal add agent --data ${shellWord(dataDir)} --name NAME --capability ID@VERSION\n` +
      `or add one entry per Principal to "principals" in ${path} by hand,\n` +
      '  { "type": "human", "id": URI, "keyId": URI, "publicKey": base64url }\n' +
      '  { "type": "agent", "id": URI, "keyId": URI, "publicKey": base64url, "card": { "displayName", "owner", "endpoints", "capabilities", "maxConcurrency" } }\n' +
      '  (a key may also state "validFrom", "validUntil" and "revokedAt", RFC 3339 times: §6.4)\n' +
      'then start the server. On this machine, for development: plain ws on 127.0.0.1, on a free port\n' +
      '(the "listening" log line gives its URL; --port N for a fixed one):\n' +
      `  weft serve --data ${shellWord(dataDir)} --insecure-loopback --port 0\n` +
      'For Agents on other machines: wss with TLS 1.3 (§17.1) on port 7443, with your certificate and key:\n' +
      `  weft serve --data ${shellWord(dataDir)} --host 0.0.0.0 --tls-cert cert.pem --tls-key key.pem\n` +
      (first === undefined || keyPath === undefined
        ? ''
        : '\n' +
          'The web console is on the same port, at /console/; the server prints its address when it starts\n' +
          '("console: http://127.0.0.1:PORT/console/" for the development command above). Sign in there as\n' +
          `${first.id} by loading the key file\n` +
          `  ${keyPath}\n` +
          '(mode 600: that person\'s private key, and nowhere else). The page signs with it in the browser; the key\n' +
          'never leaves it. Behind a reverse proxy, name the address people open with --console-origin https://NAME.\n'),
  )
}

/** `text` as one word of a POSIX shell command line: quoted when it holds anything but safe characters. */
function shellWord(text: string): string {
  return /^[\w./:@%+=,-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`
}

/** The hosts a plain `ws` listener may serve (`--insecure-loopback`, §17.1). */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', '::1', 'localhost'])

/** Where the PEM files come from, for messages: the flags, or the `--config` file's members. */
interface TlsSource {
  readonly cert: string
  readonly key: string
  readonly certName: string
  readonly keyName: string
}

/**
 * Reads the PEM certificate chain and key and checks that they make a TLS context, so that a
 * missing file or a key that does not match says so on one line before anything starts.
 * @throws UsageError naming the option, the file and the problem.
 */
async function readTls(source: TlsSource): Promise<{ cert: Buffer; key: Buffer }> {
  const read = async (path: string, name: string): Promise<Buffer> => {
    try {
      return await readFile(path)
    } catch (error) {
      throw new UsageError(`${name} ${path}: ${fileProblem(error)}`)
    }
  }
  const cert = await read(source.cert, source.certName)
  const key = await read(source.key, source.keyName)
  try {
    createSecureContext({ cert, key })
  } catch (error) {
    throw new UsageError(`${source.certName} ${source.cert} and ${source.keyName} ${source.key} are not a PEM certificate chain and its private key: ${(error as Error).message}`)
  }
  return { cert, key }
}

/**
 * `weft serve` on its command-line arguments: `--init` writes a new Organization; otherwise the
 * server runs until SIGINT or SIGTERM, then shuts down gracefully and resolves with exit code 0.
 * `--postgres URL [--pg-schema NAME]` keeps the log in PostgreSQL (see {@link ServeOptions.postgres}).
 * Log lines go to `stderr`, one JSON object each.
 * @returns 0 after a clean stop or `--init`; 1 when the server could not start (a port in use:
 * one line; anything after the store opened: the `failed to start` log line); 2 for bad arguments;
 * 3 ({@link LOG_PROOF_EXIT}) when the stored log fails its proof (tampered with or damaged);
 * 4 ({@link DATA_DIR_IN_USE_EXIT}) when another running server holds the data directory.
 */
export async function serveCommand(args: readonly string[], io: { readonly stdout: (text: string) => void; readonly stderr: (text: string) => void }, signals: SignalSource = process): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: false,
    options: {
      data: { type: 'string' },
      init: { type: 'boolean' },
      port: { type: 'string' },
      host: { type: 'string' },
      'control-port': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'insecure-loopback': { type: 'boolean' },
      config: { type: 'string' },
      postgres: { type: 'string' },
      'pg-schema': { type: 'string' },
      'max-messages-per-minute': { type: 'string' },
      'max-proposals-per-minute': { type: 'string' },
      'max-hellos-per-minute': { type: 'string' },
      'max-connections': { type: 'string' },
      'max-connections-per-peer': { type: 'string' },
      'max-audit-entries': { type: 'string' },
      'max-control-body-bytes': { type: 'string' },
      'max-control-requests': { type: 'string' },
      'max-outbound-bytes': { type: 'string' },
      'send-timeout-ms': { type: 'string' },
      'max-frames-per-second': { type: 'string' },
      'max-frame-bytes': { type: 'string' },
      'no-console': { type: 'boolean' },
      'console-origin': { type: 'string', multiple: true },
      'console-app': { type: 'string' },
      human: { type: 'string' },
      'no-human': { type: 'boolean' },
    },
  })
  // Like PostgreSQL, the server keeps what it creates to its owner, files its libraries create
  // included: 077 joins the umask it was started with.
  if (signals.umask !== undefined) signals.umask(signals.umask(0o077) | 0o077)
  try {
    if (values.data === undefined) throw new UsageError('--data DIR is required')
    if (values.init === true) {
      if (values.human !== undefined && values['no-human'] === true) throw new UsageError('--human NAME and --no-human exclude each other')
      await init(values.data, io.stdout, values['no-human'] === true ? undefined : (values.human ?? FIRST_HUMAN))
      return 0
    }
    for (const flag of ['human', 'no-human'] as const) if (values[flag] !== undefined) throw new UsageError(`--${flag} goes with --init`)
    if (values['no-console'] === true && (values['console-origin'] !== undefined || values['console-app'] !== undefined)) throw new UsageError('--no-console excludes --console-origin and --console-app')
    const consoleOriginList = values['console-origin']?.map(consoleOrigin)
    const postgres = postgresTarget(values.postgres, values['pg-schema'])
    const config = values.config === undefined ? {} : await readConfig(values.config)
    if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined)) throw new UsageError('--tls-cert and --tls-key go together')
    const flagTls = values['tls-cert'] !== undefined && values['tls-key'] !== undefined ? { cert: values['tls-cert'], key: values['tls-key'], certName: '--tls-cert', keyName: '--tls-key' } : undefined
    if (flagTls !== undefined && values['insecure-loopback'] === true) throw new UsageError('--insecure-loopback and --tls-cert/--tls-key exclude each other: plain ws or wss, choose one')
    // A way to listen given on the command line wins over the other way in --config.
    const configTls = config.tls === undefined ? undefined : { ...config.tls, certName: `--config ${values.config}: tls.cert`, keyName: `--config ${values.config}: tls.key` }
    const tlsFiles = flagTls ?? (values['insecure-loopback'] === true ? undefined : configTls)
    const insecureLoopback = values['insecure-loopback'] ?? (flagTls === undefined ? config.insecureLoopback : undefined)
    const controlPort = values['control-port'] === undefined ? config.controlPort : port(values['control-port'], '--control-port')
    const host = values.host ?? config.host
    // Each limit: its flag, else the --config file, else the default of startServer.
    const flagged = (name: keyof ServeLimits): number | undefined => {
      const text = values[LIMIT_FLAGS[name]]
      return typeof text === 'string' ? positive(text, `--${LIMIT_FLAGS[name]}`) : undefined
    }
    const rates = { maxMessagesPerMinute: flagged('maxMessagesPerMinute'), maxProposalsPerMinute: flagged('maxProposalsPerMinute') }
    const policy = { ...config.policy, ...definedOnly(rates) }
    const serverLimits = definedOnly(Object.fromEntries(SERVER_LIMITS.map((name) => [name, flagged(name) ?? config[name]])))
    const wsPort = values.port === undefined ? (config.port ?? DEFAULT_PORT) : port(values.port, '--port')
    // §17.1: wss with TLS 1.3, or plain ws on a loopback host for development. Checked here, after
    // every value given was read, so the message names the flags rather than library options.
    if (tlsFiles === undefined && insecureLoopback !== true) {
      throw new UsageError(
        'say how to listen: --tls-cert FILE --tls-key FILE for wss with TLS 1.3 (§17.1), or --insecure-loopback for plain ws on a loopback host, for development (in a --config file: "tls": { "cert", "key" } or "insecureLoopback": true)',
      )
    }
    if (tlsFiles !== undefined && insecureLoopback === true) throw new UsageError(`--config ${values.config}: tls and insecureLoopback exclude each other: plain ws or wss, choose one`)
    if (insecureLoopback === true && !LOOPBACK_HOSTS.has(host ?? '127.0.0.1')) {
      throw new UsageError(`--insecure-loopback serves loopback hosts only (127.0.0.1, ::1, localhost), not --host ${host}; listen there with --tls-cert and --tls-key`)
    }
    const options: ServeOptions = {
      dataDir: values.data,
      port: wsPort,
      log: jsonLines(io.stderr),
      ...(host === undefined ? {} : { host }),
      ...(tlsFiles === undefined ? {} : { tls: await readTls(tlsFiles) }),
      ...(insecureLoopback === undefined ? {} : { insecureLoopback }),
      ...(controlPort === undefined ? {} : { controlPort }),
      ...(Object.keys(policy).length === 0 ? {} : { policy }),
      ...serverLimits,
      ...(postgres === undefined ? {} : { postgres }),
      ...(values['no-console'] === true ? { console: false } : {}),
      ...(consoleOriginList === undefined ? {} : { consoleOrigins: consoleOriginList }),
      ...(values['console-app'] === undefined ? {} : { consoleAppDir: values['console-app'] }),
    }
    return await run(options, signals, io.stdout)
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`weft serve: ${error.message}\n`)
      return 2
    }
    // A tampered or damaged log: one line naming the Group, the sequence and the failed check.
    if (error instanceof LogProofError) {
      io.stderr(`weft serve: ${error.message}\n`)
      return LOG_PROOF_EXIT
    }
    if (error instanceof DataDirInUseError) {
      io.stderr(`weft serve: ${error.message}\n`)
      return DATA_DIR_IN_USE_EXIT
    }
    if (error instanceof PortUnavailableError) {
      io.stderr(`weft serve: ${error.message}\n`)
      return 1
    }
    throw error
  }
}

/** `--console-origin URL` as the origin browsers send (`https://host[:port]`); a path or query is refused, not dropped. */
function consoleOrigin(text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new UsageError(`--console-origin ${text}: not a URL; give the address people open the console at, like https://weft.example.com`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`--console-origin ${text}: must be https:// (or http:// on a loopback host)`)
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new UsageError(`--console-origin ${text}: an origin is scheme, host and port only (${url.origin}); the console is always at /console/`)
  }
  return url.origin
}

/** `record` without its `undefined` members (`exactOptionalPropertyTypes`). */
function definedOnly<T extends Record<string, number | undefined>>(record: T): { [K in keyof T]?: number } {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: number }
}

async function run(options: ServeOptions, signals: SignalSource, print: (text: string) => void): Promise<number> {
  const log = options.log ?? (() => undefined)
  // Listen for signals before starting: one that arrives while the server starts (after it logged
  // `listening`, say) must still end in a graceful stop, never in the default kill.
  let detach = (): void => undefined
  const stopped = new Promise<NodeJS.Signals>((resolve) => {
    const stop = (received: NodeJS.Signals): void => {
      detach()
      resolve(received)
    }
    detach = () => {
      signals.off('SIGINT', stop)
      signals.off('SIGTERM', stop)
    }
    signals.once('SIGINT', stop)
    signals.once('SIGTERM', stop)
  })
  let server: RunningServer
  try {
    server = await startServer(options)
  } catch (error) {
    detach()
    // Each of these is one line of its own in serveCommand, saying what to change.
    if (error instanceof UsageError || error instanceof LogProofError || error instanceof DataDirInUseError || error instanceof PortUnavailableError) throw error
    log({ level: 'error', msg: 'failed to start', detail: (error as Error).message })
    return 1
  }
  // The one line for a person rather than a log collector: where to point the browser.
  if (server.consoleUrl !== undefined) print(`console: ${server.consoleUrl}\n`)
  const signal = await stopped
  log({ level: 'info', msg: 'shutting down', signal })
  await server.close()
  return 0
}
