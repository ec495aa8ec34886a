/**
 * Malformed frames in a session (§17.1, §17.4, §19): each is answered with an `ERROR` and nothing
 * of it is acted on. A broken WebSocket framing (a binary or oversized message) ends the
 * connection; a broken frame inside an intact message (bad JSON, duplicate members, an unknown
 * frame type, a schema violation) leaves it usable.
 */
import { createClient } from '@weft/client'
import { afterEach, describe, expect, it } from 'vitest'
import { cast, GROUP, seededRandom } from '@weft/testkit/fixtures'
import type { WireServerOptions } from '../src/wire/index.js'
import { rawSocket, wireWorld, type RawSocket, type WireWorld } from './wire-world.js'

let world: WireWorld | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

/** What a test of one malformed frame works with. */
interface Session {
  readonly raw: RawSocket
  /** worker1's signed `message.post` bytes for `text`. */
  signed(text: string): string
  /** Nothing was appended and nothing refused reached the Authority's audit since the session opened. */
  unchanged(): void
  /** {@link unchanged}, and the connection still answers a PING with nothing else pending. */
  usable(): Promise<void>
}

/** Starts the world (with `server` options) and opens a raw socket with a session of worker1. */
async function session(server: Partial<WireServerOptions> = {}): Promise<Session> {
  const ww = world ?? (world = await wireWorld({ server }))
  const raw = await rawSocket(ww.server.url)
  const accept = await raw.hello('worker1')
  if (accept.frameType !== 'HELLO' || accept.phase !== 'server_accept') throw new Error(`no session: ${JSON.stringify(accept)}`)
  const client = createClient({
    actor: cast.worker1.actor,
    signingKey: cast.worker1.key,
    transport: { submit: () => Promise.reject(new Error('unused')) },
    groupId: GROUP,
    clock: { now: () => ww.w.clock.nowMs },
    random: seededRandom(3),
  })
  client.epochs.setSession(accept.sessionEpoch)
  client.observe(ww.w.authority.events(GROUP))
  const conversationId = ww.w.group().group.mainConversationId
  const head = ww.w.group().head
  const audited = ww.w.authority.audit().length
  const unchanged = (): void => {
    expect(ww.w.group().head).toBe(head)
    expect(ww.w.authority.audit()).toHaveLength(audited)
  }
  return {
    raw,
    signed: (text) => client.build('message.post', { messageId: `urn:weft:test:message:${text.length}`, conversationId, content: [{ type: 'text', text }] }).bytes,
    unchanged,
    async usable() {
      unchanged()
      expect(await raw.barrier()).toEqual([])
    },
  }
}

const command = (frameId: string, bytes: string): string => `{"protocolVersion":"0.1","frameId":"${frameId}","frameType":"COMMAND","command":${bytes}}`

describe('a broken frame inside an intact message is refused and the connection goes on', () => {
  it('invalid JSON: PROTOCOL_VIOLATION', async () => {
    const { raw, signed, usable } = await session()
    raw.send(command('urn:weft:test:f:1', signed('half')).slice(0, -5))
    const refused = await raw.nextError('PROTOCOL_VIOLATION')
    expect([refused.error.details?.['reason'], refused.error.fatal]).toEqual(['syntax', undefined])
    await usable()
  })

  it('duplicate member names, even in a validly signed Command: PROTOCOL_VIOLATION before any schema (§17.4)', async () => {
    const { raw, signed, unchanged } = await session()
    const bytes = signed('twice')
    // The same member twice, with the signed value last: a parser keeping the last one would accept it.
    raw.send(command('urn:weft:test:f:2', `{"kind":"work.cancel",${bytes.slice(1)}`))
    expect((await raw.nextError('PROTOCOL_VIOLATION')).error.details?.['reason']).toBe('duplicate-member')
    raw.send(`{"frameType":"PING","frameType":"PING","protocolVersion":"0.1","frameId":"urn:weft:test:f:3","nonce":"bm9uY2U","sentAt":"2026-07-15T00:00:00Z"}`)
    expect((await raw.nextError('PROTOCOL_VIOLATION')).error.details?.['reason']).toBe('duplicate-member')
    unchanged()
    // The same Command without the duplicate is accepted on the same connection.
    raw.send(command('urn:weft:test:f:4', bytes))
    const receipt = await raw.next()
    expect(receipt.frameType === 'EVENT' && receipt.frameId).toMatch(/^urn:weft:receipt:accepted:1-of-1:/)
  })

  it('an unknown frame type: PROTOCOL_VIOLATION naming the frame', async () => {
    const { raw, usable } = await session()
    raw.send({ protocolVersion: '0.1', frameId: 'urn:weft:test:f:5', frameType: 'STREAM', chunk: 'partial' })
    const refused = await raw.nextError('PROTOCOL_VIOLATION')
    expect([refused.error.relatedFrameId, refused.error.details?.['reason']]).toEqual(['urn:weft:test:f:5', 'unknown-frame-type'])
    await usable()
  })

  it('a known frame off its schema: SCHEMA_VALIDATION_FAILED with bounded issues', async () => {
    const { raw, signed, usable } = await session()
    raw.send({ protocolVersion: '0.1', frameId: 'urn:weft:test:f:6', frameType: 'SUBSCRIBE', subscriptionId: 'urn:weft:test:s', groups: [] })
    expect((await raw.nextError('SCHEMA_VALIDATION_FAILED')).error.relatedFrameId).toBe('urn:weft:test:f:6')
    const stripped = JSON.parse(signed('no signature')) as Record<string, unknown>
    delete stripped['signature']
    raw.send({ protocolVersion: '0.1', frameId: 'urn:weft:test:f:7', frameType: 'COMMAND', command: stripped })
    const issues = (await raw.nextError('SCHEMA_VALIDATION_FAILED')).error.details?.['issues'] as { path: string }[]
    expect(issues.length).toBeLessThanOrEqual(8)
    expect(issues.some((i) => i.path.startsWith('/command'))).toBe(true)
    await usable()
  })

  it('a number outside finite binary64: PROTOCOL_VIOLATION', async () => {
    const { raw, signed, usable } = await session()
    raw.send(command('urn:weft:test:f:8', signed('huge').replace('"content":', '"huge":1e400,"content":')))
    expect((await raw.nextError('PROTOCOL_VIOLATION')).error.details?.['reason']).toBe('non-finite-number')
    await usable()
  })

  it('frames a client never sends (EVENT, a second HELLO): PROTOCOL_VIOLATION', async () => {
    const { raw, usable } = await session()
    const event = world!.w.authority.events(GROUP)[0]!
    raw.send({ protocolVersion: '0.1', frameId: 'urn:weft:test:f:9', frameType: 'EVENT', event })
    expect((await raw.nextError('PROTOCOL_VIOLATION')).error.relatedFrameId).toBe('urn:weft:test:f:9')
    raw.send({
      protocolVersion: '0.1',
      frameId: 'urn:weft:test:f:10',
      frameType: 'HELLO',
      phase: 'client_init',
      agentId: cast.worker1.actor.id,
      keyId: cast.worker1.key.keyId,
      clientNonce: 'bm9uY2U',
      supportedVersions: ['0.1'],
    })
    await raw.nextError('PROTOCOL_VIOLATION')
    await usable()
  })
})

describe('a broken WebSocket framing ends the connection', () => {
  it('a binary message: PROTOCOL_VIOLATION, fatal, close 1003 (§17.1)', async () => {
    const { raw, signed, unchanged } = await session()
    raw.send(new TextEncoder().encode(command('urn:weft:test:f:11', signed('binary'))), true)
    const refused = await raw.nextError('PROTOCOL_VIOLATION')
    expect([refused.error.fatal, refused.error.details?.['reason']]).toEqual([true, 'binary-message'])
    expect(await raw.closed).toBe(1003)
    unchanged()
  })

  it('a message over maxFrameBytes: PROTOCOL_VIOLATION, fatal, close 1009; far over it the socket is cut unread', async () => {
    const { raw, signed, unchanged } = await session({ maxFrameBytes: 4096 })
    raw.send(command('urn:weft:test:f:12', signed('x'.repeat(5000))))
    expect((await raw.nextError('PROTOCOL_VIOLATION')).error.details).toEqual({ reason: 'too-large', maxFrameBytes: 4096 })
    expect(await raw.closed).toBe(1009)
    const second = await session()
    second.raw.send(command('urn:weft:test:f:13', second.signed('x'.repeat(20_000))))
    expect(await second.raw.closed).toBe(1009)
    unchanged()
  })
})
