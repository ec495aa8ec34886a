/**
 * The inbound frame allowance of the WebSocket binding (§17.3, §20): a connection's frames are
 * handled at `maxFramesPerSecond` at most, with a burst of as many, so a PING flood buys the
 * server no more work than that; nothing is refused for it (every PING gets its reply, in order),
 * and another connection is served meanwhile. Timing is asserted only from below: the allowance
 * can make a flood slower, never faster.
 */
import { createWireServer } from '@weft/authority/wire'
import type { WebSocketFrame } from '@weft/spec'
import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_MAX_FRAMES_PER_SECOND } from '../src/wire/index.js'
import { cast } from '@weft/testkit/fixtures'
import { rawSocket, wireWorld, type RawSocket, type WireWorld } from './wire-world.js'

let world: WireWorld | undefined
const sockets: RawSocket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.close()
  await world?.close()
  world = undefined
})

let pings = 0
const ping = (nonce: string) => ({ protocolVersion: '0.1', frameId: `urn:weft:test:frame:rate-${++pings}`, frameType: 'PING', nonce, sentAt: '2026-07-15T00:00:00Z' })
/** A distinct 16-byte nonce (base64url, 22 characters) for PING `i`. */
const nonceOf = (i: number): string => `${String(i).padStart(6, '0')}AAAAAAAAAAAAAAAA`

async function session(w: WireWorld, who: 'worker1' | 'reviewer'): Promise<RawSocket> {
  const raw = await rawSocket(w.server.url)
  sockets.push(raw)
  expect(await raw.hello(who)).toMatchObject({ frameType: 'HELLO', phase: 'server_accept' })
  return raw
}

/** Reads `n` frames of `raw`. */
async function frames(raw: RawSocket, n: number): Promise<WebSocketFrame[]> {
  const read: WebSocketFrame[] = []
  while (read.length < n) read.push(await raw.next())
  return read
}

describe('the inbound frame allowance (maxFramesPerSecond)', () => {
  it('answers every PING of a flood, in order, no faster than the allowance, while another connection is served at once', async () => {
    const rate = 40
    world = await wireWorld({ server: { maxFramesPerSecond: rate } })
    const flooder = await session(world, 'worker1')
    const other = await session(world, 'reviewer')
    // Sent at once, in one write or a few: the server may read them together but handles them at the rate.
    const count = 120
    const started = performance.now()
    for (let i = 0; i < count; i++) flooder.send(ping(nonceOf(i)))
    // The other connection has an allowance of its own: its PING is answered while the flood waits.
    const otherStarted = performance.now()
    expect(await other.barrier()).toEqual([])
    const otherMs = performance.now() - otherStarted
    const replies = await frames(flooder, count)
    const elapsed = performance.now() - started
    expect(replies.map((f) => (f.frameType === 'PING' ? f.replyToNonce : f.frameType))).toEqual(Array.from({ length: count }, (_, i) => nonceOf(i)))
    // The handshake spent two frames of the burst; the rest of the PINGs past the burst come at `rate` a second.
    expect(elapsed).toBeGreaterThanOrEqual(((count - rate) / rate) * 1000 - 50)
    expect(otherMs).toBeLessThan(elapsed / 2)
    // The flooder's socket is paused for its allowance now: a shutdown still ends it within its grace, with the close code sent.
    const closing = performance.now()
    await world.close()
    world = undefined
    expect(performance.now() - closing).toBeLessThan(5000)
    expect(await flooder.closed).toBe(1001)
  })

  it('applies no allowance at 0, defaults to 2000 frames a second, and refuses a setting that is no non-negative integer', async () => {
    expect(DEFAULT_MAX_FRAMES_PER_SECOND).toBe(2000)
    world = await wireWorld({ server: { maxFramesPerSecond: 0 } })
    const flooder = await session(world, 'worker1')
    for (let i = 0; i < 300; i++) flooder.send(ping(nonceOf(i)))
    expect((await frames(flooder, 300)).every((f) => f.frameType === 'PING')).toBe(true)
    for (const bad of [-1, 1.5, Number.NaN]) {
      await expect(
        createWireServer({
          authority: world.w.authority,
          registry: world.w.registry,
          sessionIssuer: { actor: { type: 'service', id: cast.controlPlane.actor.id }, signingKey: cast.controlPlane.key },
          insecureLoopback: true,
          maxFramesPerSecond: bad,
        }),
      ).rejects.toThrow(/maxFramesPerSecond must be a non-negative integer/)
    }
  })
})
