/**
 * Checks that `weft serve` can listen where it is told to, before it opens and proves the store:
 * a port in use is the most common reason a server does not start, and saying so should not wait
 * for a long log proof, nor depend on how a library reports a failed `listen`.
 * @module
 */
import { createServer } from 'node:net'

/** A port `weft serve` cannot listen on: in use, privileged, or on an address this host lacks. */
export class PortUnavailableError extends Error {
  /** The `node:net` error code: `EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL`, `ENOTFOUND`, ... */
  readonly code: string

  constructor(message: string, code: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'PortUnavailableError'
    this.code = code
  }
}

/** What a failed `listen` means and what to do about it, for the listener named `what` set by `flag`. */
function advice(code: string, what: string, flag: string, address: string): string {
  switch (code) {
    case 'EADDRINUSE':
      return `${what} ${address} is in use (EADDRINUSE): stop the process listening there, or choose another ${flag} (0 picks a free port)`
    case 'EACCES':
      return `${what} ${address} may not be opened by this user (EACCES): ports below 1024 need privileges; choose another ${flag}`
    case 'EADDRNOTAVAIL':
      return `${what} ${address}: the host is not an address of this machine (EADDRNOTAVAIL); choose another --host`
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${what} ${address}: the host name does not resolve (${code}); choose another --host`
    default:
      return `${what} ${address} cannot be opened (${code})`
  }
}

/**
 * Listens on `host:port` and closes again at once; port 0 (any free port) needs no check.
 * Another process may still take the port before the server listens; that race is left to the
 * server's own `listen`.
 * @param what - The listener's name for the message, e.g. `the WebSocket port`.
 * @param flag - The option that sets the port, e.g. `--port`.
 * @throws PortUnavailableError naming the address, the cause and what to change.
 */
export async function checkPort(host: string, port: number, what: string, flag: string): Promise<void> {
  if (port === 0) return
  const server = createServer()
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen({ host, port, exclusive: true }, resolve)
    })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown'
    throw new PortUnavailableError(advice(code, what, flag, `${host.includes(':') ? `[${host}]` : host}:${port}`), code, { cause: error })
  }
  await new Promise<void>((resolve) => server.close(() => resolve()))
}
