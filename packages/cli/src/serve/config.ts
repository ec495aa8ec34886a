/**
 * The settings of `weft serve` as its command line and its `--config` file give them: positive
 * limits and port numbers, the `--config` file (a JSON object; relative TLS paths from its
 * directory), the TLS certificate and key, and console origins. Each problem is a one-line
 * `UsageError` that names the flag or the file member to change.
 * @module
 */
import { readFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { createSecureContext } from 'node:tls'
import { UsageError } from '@weft/codec'
import { fileProblem } from '../failures.js'
import type { ServePolicy } from './serve.js'

/** The members of a `--config` file. */
export interface ConfigFile {
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
export const SERVER_LIMITS = [
  'maxHellosPerMinute',
  'maxConnections',
  'maxConnectionsPerPeer',
  'maxAuditEntries',
  'maxControlBodyBytes',
  'maxControlRequests',
  'maxOutboundBytes',
  'sendTimeoutMs',
  'maxFramesPerSecond',
  'maxFrameBytes',
] as const

/** `value` (a flag's text or a config member) as a positive integer. */
export function positive(value: unknown, name: string): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw new UsageError(`${name} must be a positive integer`)
  return n
}

/** The Authority policy limits a `--config` file may set under `policy` (§20). */
const POLICY_LIMITS = [
  'freshnessSeconds',
  'maxCommandBytes',
  'maxMissionDepth',
  'maxDelegationDepth',
  'maxMessagesPerMinute',
  'maxProposalsPerMinute',
  'maxQueuedWorkItems',
  'maxActiveWorkItems',
] as const

/** `value` (a flag's text or a config member) as a TCP port number; 0 picks a free one. */
export function port(value: unknown, name: string): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0 || n > 65535) throw new UsageError(`${name} must be a port number from 0 to 65535`)
  return n
}

/** Reads a `--config` file; relative TLS paths are resolved from its directory. */
export async function readConfig(path: string): Promise<ConfigFile> {
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

/** Where the PEM files come from, for messages: the flags, or the `--config` file's members. */
export interface TlsSource {
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
export async function readTls(source: TlsSource): Promise<{ cert: Buffer; key: Buffer }> {
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

/** `--console-origin URL` as the origin browsers send (`https://host[:port]`); a path or query is refused, not dropped. */
export function consoleOrigin(text: string): string {
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
