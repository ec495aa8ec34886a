/**
 * §17.3 bounded buffering through the real bin: an Agent that stops reading its socket and sends
 * SUBSCRIBE from the start again and again, then a flood of PINGs, leaves the memory of `weft
 * serve` bounded (its resident set, read from /proc) and ends with a fatal `BACKPRESSURE` and close
 * code 1013 once `--max-outbound-bytes` is passed; an Agent that reads, on the same server, receives
 * every Event in order meanwhile.
 */
import { readFileSync } from 'node:fs'
import { connectWebSocket } from '@weft/client/wire'
import type { Event, EventPayload } from '@weft/spec'
import { afterAll, describe, expect, it } from 'vitest'
import { dataDir, groupOf, openMission, party, people, rawSession, startServe, tearDown, type Party, type ServeProcess } from './serve-world.js'

const servers: ServeProcess[] = []
const parties: Party[] = []
afterAll(() => tearDown(servers, parties))

/** The resident set of process `pid` in MB (`VmRSS` of /proc). */
function rssMb(pid: number): number {
  const line = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return Number(line?.[1] ?? 0) / 1024
}

let frameIds = 0
const frameId = (): string => `urn:weft:serve-test:frame:outbound-${++frameIds}`

/** Each posted Message's text: a replay of the Group is about 5 MB. */
const TEXT = 16 * 1024
const MESSAGES = 300
/** The bound of the test server: small, so that a few Events fill it. */
const LIMIT = 256 * 1024
/** How much the server's resident set may grow under the attack, in MB. Unbounded buffering of the SUBSCRIBE loop alone holds some 300 MB. */
const GROWTH_MB = 120

describe('weft serve under an Agent that does not read (§17.3)', () => {
  it('stays bounded through a re-SUBSCRIBE loop and a PING flood, ends them with BACKPRESSURE and 1013, and serves a reader every Event', async () => {
    const server = await startServe(await dataDir(), ['--max-outbound-bytes', String(LIMIT), '--send-timeout-ms', '30000'])
    servers.push(server)
    expect(server.log.find((l) => l.msg === 'listening')?.['limits']).toMatchObject({ maxOutboundBytes: LIMIT, sendTimeoutMs: 30_000 })
    const p = party(server, groupOf('outbound'))
    parties.push(p)
    const created = await openMission(p, await p.connect('coordinator'), 'outbound')
    const conversationId = (created.events[0]!.payload as EventPayload<'mission.created'>).conversation.conversationId
    for (let i = 0; i < MESSAGES; i++) {
      await p.owner.messagePost({ messageId: `urn:weft:serve-test:message:outbound-${i}`, conversationId, content: [{ type: 'text', text: 'x'.repeat(TEXT) }] })
    }

    // The reader: the reviewer, over the client of @weft/client/wire.
    const reader = await connectWebSocket({ url: server.url, actor: people.reviewer.actor, signingKey: people.reviewer.key, reconnect: false, heartbeatMs: 0 })
    const read: Event[] = []
    const readErrors: string[] = []
    reader.feed.subscribe([{ groupId: groupOf('outbound'), afterSequence: 0 }], { onEvent: (e) => read.push(e), onError: (e) => readErrors.push(e.code) })

    const pid = server.child.pid!
    const baseline = rssMb(pid)
    let peak = baseline
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 20)
    try {
      const hostile = await rawSession(server.url, 'worker1')
      hostile.socket.pause()
      const closing = server.waitLog((l) => l.msg === 'connection closed' && l['code'] === 'BACKPRESSURE' && l['agentId'] === people.worker1.actor.id)
      let decided = false
      closing.then(
        () => {
          decided = true
          // The test reads again once the server gave up on it, to see how it was told.
          hostile.socket.resume()
        },
        () => undefined,
      )
      for (let i = 0; i < 60; i++) {
        hostile.socket.send(
          JSON.stringify({
            protocolVersion: '0.1',
            frameId: frameId(),
            frameType: 'SUBSCRIBE',
            subscriptionId: `urn:weft:serve-test:sub:${i}`,
            groups: [{ groupId: groupOf('outbound'), afterSequence: 0 }],
          }),
        )
      }
      // PINGs until the server closes, or until unbounded buffering shows in its memory; at most 100,000.
      for (let sent = 0; !decided && peak - baseline <= GROWTH_MB && sent < 100_000; sent += 200) {
        for (let i = 0; i < 200; i++)
          hostile.socket.send(JSON.stringify({ protocolVersion: '0.1', frameId: frameId(), frameType: 'PING', nonce: 'AAAAAAAAAAAAAAAAAAAAAA', sentAt: '2026-07-15T00:00:00Z' }))
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      expect(peak - baseline).toBeLessThanOrEqual(GROWTH_MB)
      expect(await hostile.closed).toBe(1013)
      expect(hostile.frames.at(-1)).toMatchObject({
        frameType: 'ERROR',
        error: { code: 'BACKPRESSURE', retryable: true, fatal: true, retryAfterMs: 1000, details: { reason: 'outbound-queue-full', maxOutboundBytes: LIMIT } },
      })
      // Each SUBSCRIBE replaced the one before: far fewer Events reached the socket than 60 replays.
      expect(hostile.frames.filter((f) => f.frameType === 'EVENT').length).toBeLessThan(MESSAGES * 20)

      // The reader meanwhile: every Event of the Group, in order, once.
      const head = (await p.owner.messagePost({ messageId: 'urn:weft:serve-test:message:outbound-last', conversationId, content: [{ type: 'text', text: 'Done.' }] })).events[0]!.sequence!
      await reader.ping()
      await expect.poll(() => read.at(-1)?.sequence, { timeout: 60_000, interval: 50 }).toBe(head)
      // From the reviewer's visibility start (§8: it joined after the Mission opened) to the head.
      const first = read[0]!.sequence!
      expect(head - first).toBeGreaterThanOrEqual(MESSAGES)
      expect(read.map((e) => e.sequence)).toEqual(Array.from({ length: head - first + 1 }, (_, i) => first + i))
      expect(readErrors).toEqual([])
    } finally {
      clearInterval(sampler)
      await reader.close()
    }
  })
})
