/**
 * The notification channel of a shared log: one dedicated connection per Authority that LISTENs on
 * the schema's channel, and comes back after the connection drops. A notification only says "look
 * again": the Authority folds by transaction number, so a look after a reconnect covers whatever
 * was notified while the connection was down.
 * @module
 */
import pg from 'pg'

/** Options of {@link listenForCommits}. */
export interface ListenerOptions {
  /** How to open the dedicated connection (a URL's or a pool's configuration). */
  readonly config: pg.ClientConfig
  /** The channel, a quoted identifier for `LISTEN`. */
  readonly channel: string
  /** Told each notification's payload. */
  onNotification(payload: string): void
  /** Told after every successful `LISTEN`, the first included: look for what was missed. */
  onListening(): void
  /** Told when the connection dropped or could not be opened again. */
  onLost(error: unknown): void
}

/** A running listener. */
export interface Listener {
  /** Ends the connection; nothing is heard afterwards. */
  close(): Promise<void>
}

/** The first and the largest pause before opening the connection again. */
const BACKOFF_MS = [100, 5000] as const

/**
 * Opens the dedicated connection and LISTENs; resolves once listening.
 * @throws the database's error when the first connection fails.
 */
export async function listenForCommits(options: ListenerOptions): Promise<Listener> {
  let client: pg.Client | undefined
  let closed = false
  let timer: NodeJS.Timeout | undefined
  let pause: number = BACKOFF_MS[0]

  async function open(): Promise<void> {
    const next = new pg.Client(options.config)
    // An 'error' without a listener would end the process; a drop is handled by reconnecting.
    next.on('error', (error) => lost(next, error))
    next.on('end', () => lost(next, new Error('the notification connection ended')))
    next.on('notification', (message) => {
      if (client === next) options.onNotification(message.payload ?? '')
    })
    try {
      await next.connect()
      await next.query(`LISTEN ${options.channel}`)
    } catch (error) {
      next.removeAllListeners('end')
      await next.end().catch(() => {})
      throw error
    }
    if (closed) {
      await next.end().catch(() => {})
      return
    }
    client = next
    pause = BACKOFF_MS[0]
    options.onListening()
  }

  function lost(which: pg.Client, error: unknown): void {
    if (client !== which || closed) return
    client = undefined
    which.removeAllListeners('end')
    void which.end().catch(() => {})
    options.onLost(error)
    again()
  }

  function again(): void {
    if (closed || timer !== undefined) return
    timer = setTimeout(() => {
      timer = undefined
      open().catch((error: unknown) => {
        options.onLost(error)
        pause = Math.min(pause * 2, BACKOFF_MS[1])
        again()
      })
    }, pause)
    timer.unref()
  }

  await open()
  return {
    async close() {
      closed = true
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      const last = client
      client = undefined
      if (last !== undefined) {
        last.removeAllListeners('end')
        await last.end().catch(() => {})
      }
    },
  }
}
