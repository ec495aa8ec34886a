/**
 * The `weft serve` command line: its flags and `--config` file become {@link ServeOptions} (a flag
 * wins over the file, the file over the defaults), `--init` writes a new Organization, and the
 * server runs until SIGINT or SIGTERM. Every problem a person can fix is one line on stderr with
 * its own exit code.
 * @module
 */
import { parseArgs } from 'node:util'
import { LogProofError } from '@weft/authority'
import { UsageError } from '@weft/codec'
import { LOG_PROOF_EXIT, postgresTarget } from './backend.js'
import { consoleOrigin, port, positive, readConfig, readTls, SERVER_LIMITS } from './config.js'
import { FIRST_HUMAN, initOrganization } from './init.js'
import { LIMIT_FLAGS, type ServeLimits } from './limits.js'
import { LOOPBACK_HOSTS } from './listeners.js'
import { DATA_DIR_IN_USE_EXIT, DataDirInUseError } from './lock.js'
import { jsonLines } from './log.js'
import { PortUnavailableError } from './ports.js'
import { DEFAULT_PORT, startServer, type RunningServer, type ServeOptions } from './serve.js'
import { stopSignal, type SignalSource } from './shutdown.js'

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
export async function serveCommand(
  args: readonly string[],
  io: { readonly stdout: (text: string) => void; readonly stderr: (text: string) => void },
  signals: SignalSource = process,
): Promise<number> {
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
      await initOrganization(values.data, io.stdout, values['no-human'] === true ? undefined : (values.human ?? FIRST_HUMAN))
      return 0
    }
    for (const flag of ['human', 'no-human'] as const) if (values[flag] !== undefined) throw new UsageError(`--${flag} goes with --init`)
    if (values['no-console'] === true && (values['console-origin'] !== undefined || values['console-app'] !== undefined))
      throw new UsageError('--no-console excludes --console-origin and --console-app')
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

/** `record` without its `undefined` members (`exactOptionalPropertyTypes`). */
function definedOnly<T extends Record<string, number | undefined>>(record: T): { [K in keyof T]?: number } {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: number }
}

/** Starts the server, prints where the console is, and waits for SIGINT or SIGTERM to close it. */
async function run(options: ServeOptions, signals: SignalSource, print: (text: string) => void): Promise<number> {
  const log = options.log ?? (() => undefined)
  // Listen for signals before starting: one that arrives while the server starts (after it logged
  // `listening`, say) must still end in a graceful stop, never in the default kill.
  const stop = stopSignal(signals)
  let server: RunningServer
  try {
    server = await startServer(options)
  } catch (error) {
    stop.detach()
    // Each of these is one line of its own in serveCommand, saying what to change.
    if (error instanceof UsageError || error instanceof LogProofError || error instanceof DataDirInUseError || error instanceof PortUnavailableError) throw error
    log({ level: 'error', msg: 'failed to start', detail: (error as Error).message })
    return 1
  }
  // The one line for a person rather than a log collector: where to point the browser.
  if (server.consoleUrl !== undefined) print(`console: ${server.consoleUrl}\n`)
  const signal = await stop.received
  log({ level: 'info', msg: 'shutting down', signal })
  await server.close()
  return 0
}
