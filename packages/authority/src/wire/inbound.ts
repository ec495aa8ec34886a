/**
 * The inbound side of one server connection: §17.3 bounded buffering, and the frame allowance of
 * §17.3 and §20. The socket is not read while more than a frame's worth of messages waits to be
 * handled (Commands wait on the store), so TCP holds the peer back. The connections take turns
 * (deficit round robin): each turn of the event loop gives a connection one share of bytes to read,
 * and one that read more waits for as many turns as it overdrew, so a flood (PINGs, megabyte frames)
 * on one connection delays the frames of the others by about one share, while an idle server turns
 * quickly and lets it go on. Messages are handled one at a time, in arrival order, so answers leave
 * in the order their frames came.
 * @module
 */
import type { WebSocket } from 'ws'

/** Bytes of messages a connection may read per turn of the event loop when others are waiting too (fairness between connections). */
const TURN_SHARE_BYTES = 16 * 1024

/** What the reader needs of its connection. */
export interface InboundHandlers {
  /** Largest accepted message; more than half of it waiting stops the reading. */
  readonly maxFrameBytes: number
  /** Frames the peer may send per second, with bursts of as many; 0: no limit. */
  readonly maxFramesPerSecond: number
  /** Whether the connection ended: nothing more is read then. */
  closed(): boolean
  /** Handles one message; the next waits until it settles. */
  receive(data: Buffer, isBinary: boolean): Promise<void>
  /** `receive` failed unexpectedly. */
  failed(thrown: unknown): void
}

/** The reader of one connection. */
export interface Inbound {
  /** The most bytes of received messages ever waiting at once to be handled. */
  readonly peak: number
  /** The connection ended: the allowance's timer stops. */
  close(): void
}

/** Reads the messages of `socket` within the bounds above and hands each to `handlers.receive`. */
export function readInbound(socket: WebSocket, handlers: InboundHandlers): Inbound {
  const { maxFrameBytes } = handlers
  let chain: Promise<void> = Promise.resolve()
  /** Bytes of received messages not yet handled, and the most ever. */
  let inbound = 0
  let peakInbound = 0
  /** Bytes this connection may still read in this turn; below zero, the turns it owes. */
  let credit = TURN_SHARE_BYTES
  let refilling = false
  // The frame allowance (a token bucket of `maxFramesPerSecond`, as full as that at first): a
  // peer over it is read no further until it refills, which bounds what a flood of small frames
  // (PINGs, ACKs) costs however fast the peer writes. Refilled by the monotonic clock, as timers run.
  const frameRate = handlers.maxFramesPerSecond
  let frameTokens = frameRate
  let tokensAt = performance.now()
  let tokenTimer: ReturnType<typeof setTimeout> | undefined
  const refreshTokens = (): void => {
    const at = performance.now()
    frameTokens = Math.min(frameRate, frameTokens + ((at - tokensAt) * frameRate) / 1000)
    tokensAt = at
  }
  const readAgain = (): void => {
    if (!socket.isPaused || credit <= 0 || inbound > maxFrameBytes / 2) return
    if (frameRate > 0) {
      refreshTokens()
      if (frameTokens < 1) return waitForTokens()
    }
    socket.resume()
  }
  /** Resolves at `due` (by `performance.now()`), or at once when the connection closed meanwhile. */
  const untilDue = (due: number): Promise<void> =>
    new Promise((resolve) => {
      const wait = due - performance.now()
      if (wait <= 0 || handlers.closed()) return resolve()
      setTimeout(resolve, Math.ceil(wait)).unref?.()
    })
  const waitForTokens = (): void => {
    if (tokenTimer !== undefined || handlers.closed()) return
    tokenTimer = setTimeout(
      () => {
        tokenTimer = undefined
        readAgain()
      },
      Math.ceil(((1 - frameTokens) * 1000) / frameRate),
    )
    tokenTimer.unref?.()
  }
  const refill = (): void => {
    credit = Math.min(TURN_SHARE_BYTES, credit + TURN_SHARE_BYTES)
    readAgain()
    if (credit < TURN_SHARE_BYTES) setImmediate(refill)
    else refilling = false
  }
  socket.on('message', (data, isBinary) => {
    // What a closed connection's peer still sends is not read (it may flood until the close completes).
    if (handlers.closed()) return
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data)
    inbound += bytes.byteLength
    peakInbound = Math.max(peakInbound, inbound)
    credit -= bytes.byteLength
    if (!refilling) {
      refilling = true
      setImmediate(refill)
    }
    if (frameRate > 0) {
      refreshTokens()
      frameTokens -= 1
    }
    const overRate = frameRate > 0 && frameTokens < 1
    if (credit <= 0 || inbound > maxFrameBytes || overRate) socket.pause()
    if (overRate) waitForTokens()
    // A frame beyond the allowance (one TCP read can hold hundreds of PINGs, all parsed before the
    // pause takes effect) waits its turn before it is handled; one within it adds no step.
    const due = frameTokens < 0 ? tokensAt + (-frameTokens * 1000) / frameRate : 0
    const ready = due === 0 ? chain : chain.then(() => untilDue(due))
    chain = ready
      .then(() => handlers.receive(bytes, isBinary))
      .catch((thrown: unknown) => handlers.failed(thrown))
      .then(() => {
        inbound -= bytes.byteLength
        readAgain()
      })
  })
  return {
    get peak() {
      return peakInbound
    },
    close() {
      clearTimeout(tokenTimer)
    },
  }
}
