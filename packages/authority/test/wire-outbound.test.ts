/**
 * Bounded outbound buffering of the WebSocket binding (§17.3): a peer that stops reading its socket
 * cannot make the server hold more than `maxOutboundBytes` for it, whatever it sends (SUBSCRIBE
 * again and again, ACKs of the head, a flood of PINGs); past the bound it gets `BACKPRESSURE` and
 * the close code 1013; a peer whose socket takes nothing for `sendTimeoutMs` likewise. A peer that
 * reads gets every Event in order, as before. The bound is asserted on the server's counters
 * (`stats()`), never on time.
 */
import type { FeedHandlers } from '@weft/client'
import { CLOSE_CODES } from '@weft/client/wire'
import type { ProtocolError } from '@weft/codec'
import type { ErrorFrame, Event, WebSocketFrame } from '@weft/spec'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Delivery } from '../src/delivery/delivery.js'
import { createDelivery } from '../src/delivery/delivery.js'
import type { WireLogEntry } from '../src/wire/index.js'
import { cast, GROUP } from '@weft/testkit/fixtures'
import { GROUP_TWO, rawSocket, sequencesByGroup, wireWorld, withSecondGroup, type RawSocket, type WireWorld } from './wire-world.js'
import { started, type World } from '@weft/testkit/world'

let world: WireWorld | undefined
const sockets: RawSocket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.close()
  await world?.close()
  world = undefined
})

/** The server's bound in these tests: small, so that a few Events fill it. */
const LIMIT = 64 * 1024
/** Text of each posted Message: an Event frame is a little more. */
const TEXT = 4096
/** Generous room for the one frame the server writes while under its high-water mark. */
const FRAME = 2 * TEXT

/** The MissionOwner posts `n` Messages of {@link TEXT} characters in `w`'s Group; returns the head after. */
async function postLarge(w: World, n: number): Promise<number> {
  const conversationId = w.group().group.mainConversationId
  for (let i = 0; i < n; i++) {
    await w.as.owner.messagePost({ messageId: `urn:weft:test:message:${w.fresh('big')}`, conversationId, content: [{ type: 'text', text: 'x'.repeat(TEXT) }] })
  }
  return w.group().head
}

/** A delivery that counts the subscriptions made through it and the pages it reads of the log. */
function countingDelivery(w: World): Delivery & { readonly subscribed: () => number; readonly pagesRead: () => number } {
  let pages = 0
  const eventPage = w.authority.eventPage.bind(w.authority)
  const inner = createDelivery(
    Object.create(w.authority, {
      eventPage: { value: (...args: Parameters<typeof eventPage>) => (pages++, eventPage(...args)) },
    }) as typeof w.authority,
  )
  let n = 0
  return {
    ...inner,
    subscribe(...args) {
      n++
      return inner.subscribe(...args)
    },
    subscribed: () => n,
    pagesRead: () => pages,
  }
}

/**
 * A server over `w` with the small bound, whose log is watched: when it closes a connection for
 * `BACKPRESSURE` the paused raw socket starts reading again, so it receives what was written
 * before the close, the close frame included.
 */
async function boundedWorld(w: World, server: Record<string, unknown> = {}) {
  const delivery = countingDelivery(w)
  const log: WireLogEntry[] = []
  let onBackpressure = (): void => undefined
  world = await wireWorld({
    world: w,
    server: {
      delivery,
      maxOutboundBytes: LIMIT,
      sendTimeoutMs: 0,
      // These peers flood to fill the outbound bound; the inbound allowance (wire-frame-rate.test.ts) would only slow them.
      maxFramesPerSecond: 0,
      ...server,
      log: (entry) => {
        log.push(entry)
        if (entry.code === 'BACKPRESSURE' && entry.message.startsWith('closing')) onBackpressure()
      },
    },
  })
  const raw = await rawSocket(world.server.url)
  sockets.push(raw)
  expect(await raw.hello('worker1')).toMatchObject({ phase: 'server_accept' })
  raw.pause()
  onBackpressure = () => raw.resume()
  return { ww: world, delivery, raw, log }
}

let frames = 0
const frameId = (): string => `urn:weft:test:frame:outbound-${++frames}`
const subscribe = (groupId: string, afterSequence: number) => ({
  protocolVersion: '0.1',
  frameId: frameId(),
  frameType: 'SUBSCRIBE',
  subscriptionId: `urn:weft:test:sub:${frames}`,
  groups: [{ groupId, afterSequence }],
})
const ping = () => ({ protocolVersion: '0.1', frameId: frameId(), frameType: 'PING', nonce: 'AAAAAAAAAAAAAAAAAAAAAA', sentAt: '2026-07-15T00:00:00Z' })
const ack = (groupId: string, sequence: number) => ({ protocolVersion: '0.1', frameId: frameId(), frameType: 'ACK', acknowledgements: [{ groupId, sequence }], sentAt: '2026-07-15T00:00:00Z' })

/** Sends PINGs, a batch at a time, until the server closed the socket; returns the close code and every frame received. */
async function pingUntilClosed(raw: RawSocket): Promise<{ code: number; frames: WebSocketFrame[] }> {
  let code: number | undefined
  void raw.closed.then((c) => (code = c))
  // Bounded: the server's bound is reached after LIMIT / (one PONG) PINGs at most.
  for (let batch = 0; code === undefined && batch < 1000; batch++) {
    for (let i = 0; i < 100; i++) raw.send(ping())
    await new Promise((resolve) => setImmediate(resolve))
  }
  // A server that never closes answers `undefined` here rather than hanging the test.
  const settled = await Promise.race([raw.closed, new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined)))])
  return { code: settled ?? -1, frames: raw.taken() }
}

/** The last frame, which must be the fatal `BACKPRESSURE` the server closed with. */
function lastBackpressure(frames: readonly WebSocketFrame[]): ErrorFrame['error'] {
  const last = frames.at(-1)
  expect(last?.frameType).toBe('ERROR')
  const error = (last as ErrorFrame).error
  expect(error).toMatchObject({ code: 'BACKPRESSURE', retryable: true, fatal: true, retryAfterMs: expect.any(Number) })
  return error
}

describe('a peer that does not read (§17.3 bounded buffering)', () => {
  it('holds the replay of a re-SUBSCRIBE loop in the delivery, not the socket: each one replaces the last, the bound holds, and a PING flood ends it with BACKPRESSURE and 1013', async () => {
    const w = await started()
    const head = await postLarge(w, 200)
    const { ww, delivery, raw } = await boundedWorld(w)
    // 40 replays of the whole Group, about 32 MB if each were written out.
    for (let i = 0; i < 40; i++) raw.send(subscribe(GROUP, 0))
    await vi.waitFor(() => expect(delivery.subscribed()).toBe(40), { timeout: 60_000, interval: 20 })
    expect(ww.server.stats().peakOutboundBytes).toBeLessThanOrEqual(LIMIT + FRAME)
    expect(ww.server.connections[0]!.groupIds).toEqual([GROUP])
    // Behind the full socket a SUBSCRIBE does not even read its replay from the log: only the ones
    // before it filled (the kernel's buffers take a few replays) did.
    expect(delivery.pagesRead()).toBeLessThan(20)

    const { code, frames } = await pingUntilClosed(raw)
    expect(code).toBe(CLOSE_CODES.tryAgainLater)
    expect(lastBackpressure(frames).details).toMatchObject({ reason: 'outbound-queue-full', maxOutboundBytes: LIMIT })
    expect(ww.server.stats().peakOutboundBytes).toBeLessThanOrEqual(LIMIT + FRAME)
    // What reached the socket before it filled is a prefix of some replays; far less than 40 of them.
    const events = frames.filter((f) => f.frameType === 'EVENT')
    expect(events.length).toBeLessThan(head * 20)
    // Memory comes back: nothing is held for a closed connection.
    expect(ww.server.stats()).toMatchObject({ connections: 0, outboundBytes: 0 })
  })

  it('lets blind ACKs of the head open the window without writing past the bound', async () => {
    const w = await started()
    const { ww, delivery, raw } = await boundedWorld(w, { maxUnackedPerGroup: 50 })
    raw.send(subscribe(GROUP, w.group().head))
    // Each round commits 50 Events (one window) and ACKs the head unread: 40 windows, about 8 MB.
    for (let round = 0; round < 40; round++) {
      const head = await postLarge(w, 50)
      raw.send(ack(GROUP, head))
    }
    const head = w.group().head
    await vi.waitFor(() => expect(delivery.cursor(cast.worker1.actor, GROUP)).toBe(head), { timeout: 60_000, interval: 20 })
    expect(ww.server.stats().peakOutboundBytes).toBeLessThanOrEqual(LIMIT + FRAME)
    const { code, frames } = await pingUntilClosed(raw)
    expect(code).toBe(CLOSE_CODES.tryAgainLater)
    lastBackpressure(frames)
  })

  it('counts PING replies and ERROR frames against the bound, then answers BACKPRESSURE and closes with 1013', async () => {
    const w = await started()
    const { ww, raw, log } = await boundedWorld(w)
    // Refused frames are answered with ERROR frames: they count as the PING replies do.
    for (let i = 0; i < 200; i++)
      raw.send({
        protocolVersion: '0.1',
        frameId: frameId(),
        frameType: 'SUBSCRIBE',
        subscriptionId: 'urn:weft:test:sub:hidden',
        groups: [{ groupId: 'urn:weft:test:group:hidden', afterSequence: 0 }],
      })
    const { code, frames } = await pingUntilClosed(raw)
    expect(code).toBe(CLOSE_CODES.tryAgainLater)
    expect(lastBackpressure(frames)).toMatchObject({ retryAfterMs: 1000, details: { reason: 'outbound-queue-full' } })
    expect(ww.server.stats().peakOutboundBytes).toBeLessThanOrEqual(LIMIT + FRAME)
    expect(frames.filter((f) => f.frameType === 'ERROR').length).toBeGreaterThan(1)
    expect(log.filter((e) => e.code === 'BACKPRESSURE').map((e) => e.level)).toEqual(['warn'])
    expect(ww.server.stats()).toMatchObject({ connections: 0, outboundBytes: 0 })
  })

  it('closes a connection whose socket takes nothing for sendTimeoutMs with BACKPRESSURE and 1013', { timeout: 30_000 }, async () => {
    const w = await started()
    // About 6 MB: more than the kernel's socket buffers take from a peer that never read.
    await postLarge(w, 1200)
    const { ww, raw } = await boundedWorld(w, { sendTimeoutMs: 200 })
    raw.send(subscribe(GROUP, 0))
    expect(await raw.closed).toBe(CLOSE_CODES.tryAgainLater)
    expect(lastBackpressure(raw.taken()).details).toMatchObject({ reason: 'send-stalled', sendTimeoutMs: 200 })
    expect(ww.server.stats().peakOutboundBytes).toBeLessThanOrEqual(LIMIT + FRAME)
  })
})

describe('a peer that sends faster than its Commands are handled (§17.3 bounded buffering)', () => {
  it('is not read while a frame of its messages waits, so the server holds no more of them', async () => {
    const w = await started()
    // An Authority whose every submission waits for I/O, as a networked store's does.
    const submit = w.authority.submit.bind(w.authority)
    const authority = Object.create(w.authority, {
      submit: { value: async (bytes: string | Uint8Array) => new Promise((resolve) => setTimeout(resolve, 5)).then(() => submit(bytes)) },
    }) as typeof w.authority
    const maxFrameBytes = 256 * 1024
    world = await wireWorld({ world: w, server: { authority, maxFrameBytes } })
    const raw = await rawSocket(world.server.url)
    sockets.push(raw)
    expect(await raw.hello('worker1')).toMatchObject({ phase: 'server_accept' })
    // Commands of 200 kB, over the Authority's limit once it reads them, each in one frame under the frame bound.
    const conversationId = w.group().group.mainConversationId
    const n = 100
    for (let i = 0; i < n; i++) {
      const { command } = w.as.worker1.build('message.post', { messageId: `urn:weft:test:message:${w.fresh('flood')}`, conversationId, content: [{ type: 'text', text: 'y'.repeat(200_000) }] })
      raw.send({ protocolVersion: '0.1', frameId: frameId(), frameType: 'COMMAND', command })
    }
    for (let i = 0; i < n; i++) expect((await raw.next()).frameType).toBe('ERROR')
    // The one frame being handled and at most a frame's worth waiting behind it; 20 MB arrived.
    expect(world.server.stats().peakInboundBytes).toBeLessThanOrEqual(3 * maxFrameBytes)
  })
})

describe('a peer that reads (§16, §17.3)', () => {
  it('gets every Event of every Group in order, without a gap or a repeat, through a small bound', async () => {
    const w = await started()
    const two = await withSecondGroup(w)
    await postLarge(w, 60)
    await postLarge(two, 60)
    world = await wireWorld({ world: w, server: { maxOutboundBytes: 16 * 1024, sendTimeoutMs: 0 } })
    const { conn } = await world.connect('worker1')
    const events: Event[] = []
    const errors: ProtocolError[] = []
    const handlers: FeedHandlers = {
      onEvent(event) {
        events.push(event)
        if (events.length % 25 === 0) void conn.feed.ack(event.groupId!, event.sequence!)
      },
      onError: (error) => errors.push(error),
    }
    conn.feed.subscribe(
      [
        { groupId: GROUP, afterSequence: 0 },
        { groupId: GROUP_TWO, afterSequence: 0 },
      ],
      handlers,
    )
    // Committed while the replays are still on their way.
    await postLarge(w, 20)
    await postLarge(two, 20)
    const ww = world
    const visible = (groupId: string): number[] => ww.delivery.replay(cast.worker1.actor, groupId, 0).events.map((e) => e.sequence!)
    const expected = { [GROUP]: visible(GROUP), [GROUP_TWO]: visible(GROUP_TWO) }
    expect(expected[GROUP]!.at(-1)).toBe(w.group().head)
    await vi.waitFor(() => expect(sequencesByGroup(events)).toEqual(expected), { timeout: 60_000, interval: 20 })
    await conn.ping()
    expect(sequencesByGroup(events)).toEqual(expected)
    expect(errors).toEqual([])
    expect(conn.status).toBe('open')
  })
})
