/**
 * The outbound side of one server connection: §17.3 bounded buffering. A frame is written to the
 * socket only while what the socket holds unsent (`bufferedAmount`: written, not yet taken by the
 * operating system) is under a high-water mark, an eighth of the connection's bound.
 *
 * Event frames are never queued here. An Event that finds the socket full stays in the delivery
 * (its per-Group buffer, else the log) while its Group is paused, and flows again when the socket
 * drains; so a peer that stops reading holds at most the high-water mark of Events, whatever it
 * subscribes to. Answers (handshake frames, PING replies, `ERROR` frames, a Command's receipt) are
 * queued in order behind a full socket, and they count against the bound: when the queue would
 * pass it, or when the socket takes nothing for the send timeout while something waits, the
 * connection is told it overflowed, and it ends.
 * @module
 */
import type { WebSocket } from 'ws'

/** Why an {@link Outbox} cannot keep its bound: too many bytes wait, or the socket stopped taking any. */
export type OverflowReason = 'outbound-queue-full' | 'send-stalled'

/** Options of {@link createOutbox}. */
export interface OutboxOptions {
  /** Bytes the connection may hold for its peer: unsent socket bytes plus queued answers. */
  readonly maxBytes: number
  /** Milliseconds the socket may take nothing while something waits; 0: no limit. */
  readonly sendTimeoutMs: number
  /** The socket drained below half its high-water mark after something had to wait: paused Groups may flow again. */
  onDrain(): void
  /** The bound cannot be kept; called once, and the outbox writes nothing more until {@link Outbox.last}. */
  onOverflow(reason: OverflowReason): void
}

/** The outbound queue of one connection. */
export interface Outbox {
  /** Bytes held for the peer now: unsent socket bytes and queued answers. */
  readonly bytes: number
  /** The most bytes ever held at once. */
  readonly peak: number
  /** Whether an Event frame may be written now: no answer waits and the socket is under its high-water mark. */
  readonly writable: boolean
  /** Writes an answer, or queues it behind the ones waiting; when the queue would pass the bound, overflows instead. */
  answer(text: string): void
  /** Writes an Event frame; the caller checked {@link writable}. */
  event(text: string): void
  /** An Event found the outbox not {@link writable}: {@link OutboxOptions.onDrain} is called once the socket drained. */
  wait(): void
  /**
   * Writes the frame a closing connection ends with, after the queued answers unless `dropQueued`
   * (an overflow: the peer is not reading them), whatever the bound; nothing is written after it.
   */
  last(text: string, dropQueued: boolean): void
  /** Drops whatever waits; nothing is written afterwards. */
  close(): void
}

/**
 * The outbox of `socket`. Progress comes from the callbacks of the socket's own writes: each one
 * that completes may have made room, so no timer polls `bufferedAmount`.
 */
export function createOutbox(socket: WebSocket, options: OutboxOptions): Outbox {
  const highWater = Math.max(1, Math.floor(options.maxBytes / 8))
  const queue: string[] = []
  let queuedBytes = 0
  let peak = 0
  /** An Event was refused or an answer queued: {@link OutboxOptions.onDrain} is owed. */
  let waiting = false
  let done = false
  let stall: NodeJS.Timeout | undefined

  const held = (): number => socket.bufferedAmount + queuedBytes
  const note = (): void => {
    const bytes = held()
    if (bytes > peak) peak = bytes
  }
  const open = (): boolean => !done && socket.readyState === socket.OPEN

  const overflow = (reason: OverflowReason): void => {
    if (done) return
    done = true
    stopStall()
    options.onOverflow(reason)
  }

  const startStall = (): void => {
    if (options.sendTimeoutMs === 0 || stall !== undefined) return
    stall = setTimeout(() => overflow('send-stalled'), options.sendTimeoutMs)
    stall.unref?.()
  }
  const stopStall = (): void => {
    clearTimeout(stall)
    stall = undefined
  }

  const written = (): void => {
    if (done) return
    // Any completed write is progress: a slow reader is not a stalled one.
    stall?.refresh()
    if (waiting && socket.bufferedAmount <= highWater / 2) flush()
  }
  const write = (text: string): void => {
    socket.send(text, written)
    note()
  }

  /** Writes queued answers while there is room; once all are out, the paused Groups may flow. */
  const flush = (): void => {
    while (queue.length > 0 && socket.bufferedAmount < highWater) {
      const text = queue.shift()!
      queuedBytes -= Buffer.byteLength(text)
      if (open()) write(text)
    }
    if (queue.length > 0 || socket.bufferedAmount >= highWater) return
    waiting = false
    stopStall()
    options.onDrain()
  }

  const outbox: Outbox = {
    get bytes() {
      return held()
    },
    get peak() {
      return peak
    },
    get writable() {
      return open() && queue.length === 0 && socket.bufferedAmount < highWater
    },
    answer(text) {
      if (!open()) return
      if (outbox.writable) return write(text)
      const size = Buffer.byteLength(text)
      if (held() + size > options.maxBytes) return overflow('outbound-queue-full')
      queue.push(text)
      queuedBytes += size
      note()
      waiting = true
      startStall()
    },
    event(text) {
      if (open()) write(text)
    },
    wait() {
      if (!open()) return
      waiting = true
      startStall()
    },
    last(text, dropQueued) {
      const queued = dropQueued ? [] : queue.slice()
      outbox.close()
      if (socket.readyState !== socket.OPEN) return
      for (const answer of queued) socket.send(answer)
      socket.send(text)
    },
    close() {
      done = true
      stopStall()
      queue.length = 0
      queuedBytes = 0
    },
  }
  return outbox
}
