/**
 * The binding over TLS (§17.1: `wss` with TLS 1.3), with a self-signed certificate the client
 * trusts as its CA.
 */
import { connect as tlsConnect } from 'node:tls'
import { TransportUnavailableError } from '@weft/client/wire'
import { afterEach, describe, expect, it } from 'vitest'
import { cast, GROUP } from '@weft/testkit/fixtures'
import { TEST_TLS_CERT, TEST_TLS_KEY } from './fixtures-wire-tls.js'
import { wireWorld, type WireWorld } from './wire-world.js'

let world: WireWorld | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

/** The TLS version a handshake with `maxVersion` negotiates, or the error that ends it. */
function negotiate(port: number, maxVersion: 'TLSv1.2' | 'TLSv1.3'): Promise<string> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca: TEST_TLS_CERT, maxVersion, minVersion: 'TLSv1.2' }, () => {
      resolve(socket.getProtocol() ?? 'none')
      socket.end()
    })
    socket.on('error', (error) => resolve(`error: ${(error as NodeJS.ErrnoException).code ?? error.message}`))
  })
}

describe('wss with TLS 1.3 (§17.1)', () => {
  it('authenticates, carries Commands and receipts, and negotiates TLS 1.3 only', async () => {
    world = await wireWorld({ server: { tls: { cert: TEST_TLS_CERT, key: TEST_TLS_KEY }, insecureLoopback: false } })
    expect(world.server.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+$/)
    const { conn, client } = await world.connect('worker1', { ca: TEST_TLS_CERT })
    const receipt = await client.messagePost({ messageId: 'urn:weft:test:message:tls', conversationId: world.w.group().group.mainConversationId, content: [{ type: 'text', text: 'Over TLS.' }] })
    expect(receipt.events.map((e) => [e.kind, e.groupId])).toEqual([['message.posted', GROUP]])
    expect(conn.sessionEpoch()).toBe(world.w.authority.state.org.agents.get(cast.worker1.actor.id)?.sessionEpoch)
    expect(await negotiate(world.server.port, 'TLSv1.3')).toBe('TLSv1.3')
    expect(await negotiate(world.server.port, 'TLSv1.2')).toMatch(/^error: /)
  })

  it('refuses a server certificate the client does not trust', async () => {
    world = await wireWorld({ server: { tls: { cert: TEST_TLS_CERT, key: TEST_TLS_KEY }, insecureLoopback: false } })
    await expect(world.connect('worker1')).rejects.toBeInstanceOf(TransportUnavailableError)
    expect(world.server.connections).toEqual([])
  })
})
