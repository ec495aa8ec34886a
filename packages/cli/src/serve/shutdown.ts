/**
 * How `weft serve` stops: on SIGINT or SIGTERM ({@link stopSignal}), it stops taking Commands,
 * lets the ones under way finish, stores the pending ACK Cursors and closes the store
 * ({@link closeServer}). Every Command answered before is committed already.
 * @module
 */
import type { Delivery } from '@weft/authority'
import type { Backend } from './backend.js'
import type { Listeners } from './listeners.js'
import type { DataDirLock } from './lock.js'
import type { ServeLog } from './log.js'

/** How long {@link closeServer} waits for peers to finish their WebSocket close handshake. */
const CLOSE_GRACE_MS = 5000

/** The process `weft serve` runs in (`process` in the command): where it waits for its stop signals. */
export interface SignalSource {
  once(signal: 'SIGINT' | 'SIGTERM', listener: (signal: NodeJS.Signals) => void): unknown
  off(signal: 'SIGINT' | 'SIGTERM', listener: (signal: NodeJS.Signals) => void): unknown
  /** Sets the file mode creation mask and returns the previous one (`process.umask`); absent, the mask is left alone. */
  umask?(mask: number): number
}

/** The first SIGINT or SIGTERM `signals` receives, and how to stop listening for one. */
export interface StopSignal {
  readonly received: Promise<NodeJS.Signals>
  /** Stops listening (the default handlers apply again). */
  detach(): void
}

/** Listens for SIGINT and SIGTERM on `signals` from now on, until the first one or {@link StopSignal.detach}. */
export function stopSignal(signals: SignalSource): StopSignal {
  let detach = (): void => undefined
  const received = new Promise<NodeJS.Signals>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      detach()
      resolve(signal)
    }
    detach = () => {
      signals.off('SIGINT', stop)
      signals.off('SIGTERM', stop)
    }
    signals.once('SIGINT', stop)
    signals.once('SIGTERM', stop)
  })
  return { received, detach: () => detach() }
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

/** What a running server closes, in the order {@link closeServer} closes it. */
export interface ServerParts {
  readonly listeners: Listeners
  readonly delivery: Delivery
  readonly backend: Backend
  /** The data directory's lock, for a SQLite log (§15.2). */
  readonly lock: DataDirLock | undefined
}

/**
 * Stops accepting connections and Commands, lets the ones under way finish, stores the pending
 * ACK Cursors, then closes the store and releases the data directory.
 */
export async function closeServer(parts: ServerParts, log: ServeLog): Promise<void> {
  const { control, consoleServer, wire } = parts.listeners
  // Stop taking Commands first; each one already taken is committed before the store closes.
  await control?.close()
  // Signed-in people's tokens end with the process: they were only ever in memory.
  consoleServer?.close()
  for (const c of wire.connections) log({ level: 'info', msg: 'connection closed', connectionId: c.id, ...(c.agentId === undefined ? {} : { agentId: c.agentId }), detail: 'server shutting down' })
  await bounded(wire.close(), CLOSE_GRACE_MS)
  parts.delivery.close()
  try {
    await parts.backend.close()
  } catch (error) {
    // §16: an ACK Cursor not stored leaves the older one, from which delivery replays; nothing accepted is lost.
    log({ level: 'warn', msg: 'store closed with an error', detail: (error as Error).message })
  }
  parts.lock?.release()
  log({ level: 'info', msg: 'stopped' })
}
