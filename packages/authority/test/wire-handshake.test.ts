/**
 * The HELLO challenge handshake of the WebSocket binding (§6.3, §17.1): a fresh Session Epoch per
 * verified handshake, refusals that close the connection, and fencing of older sessions.
 */
import { createClient } from '@weft/client'
import { connectWebSocket, helloTranscriptBytes, TransportUnavailableError } from '@weft/client/wire'
import { encodeBase64url, keyPairFromSeed, ProtocolError, UsageError } from '@weft/codec'
import { afterEach, describe, expect, it } from 'vitest'
import { createWireServer } from '../src/wire/index.js'
import { cast, refusal } from '@weft/testkit/fixtures'
import { rawSocket, rejection, until, wireWorld, type WireWorld } from './wire-world.js'
import { boot, createWorld } from '@weft/testkit/world'

let world: WireWorld | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

const epochOf = (ww: WireWorld, who: 'worker1' | 'worker2'): number | undefined => ww.w.authority.state.org.agents.get(cast[who].actor.id)?.sessionEpoch

describe('a verified handshake', () => {
  it('opens a new Session Epoch through the Authority and reports it in server_accept', async () => {
    world = await wireWorld()
    const before = epochOf(world, 'worker1')!
    const { conn } = await world.connect('worker1')
    expect(conn.sessionEpoch()).toBe(before + 1)
    expect(epochOf(world, 'worker1')).toBe(before + 1)
    // The epoch was opened by the control plane's signed session_open (§15.1), not invented by the server.
    const opened = world.w.authority.organizationEvents().at(-1)!
    expect([opened.kind, opened.actor.id, opened.payload['agentId']]).toEqual(['ext.missionweaveprotocol.identity.session_opened', cast.controlPlane.actor.id, cast.worker1.actor.id])
    expect(world.server.connections.map((c) => [c.agentId, c.sessionEpoch, c.status])).toEqual([[cast.worker1.actor.id, before + 1, 'open']])
  })

  it('answers each client_init with a fresh challenge bound to the client nonce', async () => {
    world = await wireWorld()
    const challenges = []
    for (let i = 0; i < 2; i++) {
      const raw = await rawSocket(world.server.url)
      raw.send({
        protocolVersion: '0.1',
        frameId: 'urn:weft:test:init',
        frameType: 'HELLO',
        phase: 'client_init',
        agentId: cast.worker1.actor.id,
        keyId: cast.worker1.key.keyId,
        clientNonce: 'c2FtZS1ub25jZQ',
        supportedVersions: ['0.1'],
      })
      const challenge = await raw.next()
      if (challenge.frameType !== 'HELLO' || challenge.phase !== 'server_challenge') return expect.fail(`got ${JSON.stringify(challenge)}`)
      expect([challenge.clientNonce, challenge.selectedVersion]).toEqual(['c2FtZS1ub25jZQ', '0.1'])
      challenges.push(challenge.challenge, challenge.serverNonce)
      raw.close()
    }
    expect(new Set(challenges).size).toBe(4)
  })
})

describe('a refused handshake closes the connection with the §19 code', () => {
  it('refuses a key bound to another Principal and a signature by the wrong key: AUTH_INVALID_SIGNATURE', async () => {
    world = await wireWorld()
    const before = epochOf(world, 'worker1')
    const base = { url: world.server.url, actor: cast.worker1.actor, heartbeatMs: 0, reconnect: false as const }
    // worker2's key ID does not belong to worker1.
    expect((await refusal(connectWebSocket({ ...base, signingKey: cast.worker2.key }))).code).toBe('AUTH_INVALID_SIGNATURE')
    // worker1's key ID, signed with a key the Registry does not bind to it.
    const forged = { keyId: cast.worker1.key.keyId, pair: keyPairFromSeed(new Uint8Array(32).fill(99)) }
    expect((await refusal(connectWebSocket({ ...base, signingKey: forged }))).code).toBe('AUTH_INVALID_SIGNATURE')
    // A key the Registry does not know.
    expect((await refusal(connectWebSocket({ ...base, signingKey: { keyId: 'urn:weft:test:key:unknown', pair: forged.pair } }))).code).toBe('AUTH_INVALID_SIGNATURE')
    expect(epochOf(world, 'worker1')).toBe(before)
    expect(world.server.connections).toEqual([])
  })

  it('refuses a response replayed from another connection (its challenge was not this one) and closes with 4401', async () => {
    world = await wireWorld()
    const first = await rawSocket(world.server.url)
    const accepted = await first.hello('worker1')
    expect(accepted.frameType === 'HELLO' && accepted.phase).toBe('server_accept')
    const epoch = epochOf(world, 'worker1')
    // Record a valid response to a challenge of the second connection... then send it on a third.
    const second = await rawSocket(world.server.url)
    const init = {
      protocolVersion: '0.1',
      frameId: 'urn:weft:test:init:2',
      frameType: 'HELLO',
      phase: 'client_init',
      agentId: cast.worker1.actor.id,
      keyId: cast.worker1.key.keyId,
      clientNonce: 'cmVwbGF5ZWQtbm9uY2U',
      supportedVersions: ['0.1'],
    }
    second.send(init)
    const challenge = await second.next()
    if (challenge.frameType !== 'HELLO' || challenge.phase !== 'server_challenge') return expect.fail('no challenge')
    const transcript = { agentId: init.agentId, keyId: init.keyId, selectedVersion: '0.1', clientNonce: init.clientNonce, serverNonce: challenge.serverNonce, challenge: challenge.challenge }
    const response = {
      protocolVersion: '0.1',
      frameId: 'urn:weft:test:response',
      frameType: 'HELLO',
      phase: 'client_response',
      agentId: init.agentId,
      keyId: init.keyId,
      clientNonce: init.clientNonce,
      serverNonce: challenge.serverNonce,
      challengeSignature: encodeBase64url(cast.worker1.key.pair.sign(helloTranscriptBytes(transcript))),
    }
    second.close()
    const third = await rawSocket(world.server.url)
    third.send({ ...init, frameId: 'urn:weft:test:init:3' })
    await third.next()
    third.send(response)
    const refused = await third.nextError('AUTH_INVALID_SIGNATURE')
    expect([refused.error.fatal, refused.error.retryable]).toEqual([true, false])
    expect(await third.closed).toBe(4401)
    expect(epochOf(world, 'worker1')).toBe(epoch)
    first.close()
  })

  it('refuses an unsupported version [error UNSUPPORTED_VERSION], a frame before HELLO [error AUTH_REQUIRED] and a HELLO out of order', async () => {
    world = await wireWorld()
    const versions = await rawSocket(world.server.url)
    versions.send({
      protocolVersion: '0.1',
      frameId: 'urn:weft:test:init',
      frameType: 'HELLO',
      phase: 'client_init',
      agentId: cast.worker1.actor.id,
      keyId: cast.worker1.key.keyId,
      clientNonce: 'bm9uY2U',
      supportedVersions: ['0.2'],
    })
    expect((await versions.nextError('UNSUPPORTED_VERSION')).error.details).toEqual({ supportedVersions: ['0.1'] })
    expect(await versions.closed).toBe(4401)

    const early = await rawSocket(world.server.url)
    early.send({ protocolVersion: '0.1', frameId: 'urn:weft:test:sub', frameType: 'SUBSCRIBE', subscriptionId: 'urn:weft:test:s', groups: [{ groupId: world.w.groupId, afterSequence: 0 }] })
    expect((await early.nextError('AUTH_REQUIRED')).error.relatedFrameId).toBe('urn:weft:test:sub')
    expect(await early.closed).toBe(4401)

    const disorder = await rawSocket(world.server.url)
    disorder.send({
      protocolVersion: '0.1',
      frameId: 'urn:weft:test:resp',
      frameType: 'HELLO',
      phase: 'client_response',
      agentId: cast.worker1.actor.id,
      keyId: cast.worker1.key.keyId,
      clientNonce: 'bm9uY2U',
      serverNonce: 'bm9uY2U',
      challengeSignature: 'c2ln',
    })
    await disorder.nextError('PROTOCOL_VIOLATION')
    expect(await disorder.closed).toBe(4401)
  })

  it('refuses an Agent without a registered Agent Card (AUTH_FORBIDDEN) and a service key (AUTH_INVALID_SIGNATURE)', async () => {
    const w = createWorld()
    await boot(w, ['coordinator', 'worker1'])
    world = await wireWorld({ world: w })
    // worker3's key is in the Registry, so the transcript verifies, but the Organization never
    // registered its card: the Authority refuses its session_open.
    expect((await refusal(connectWebSocket({ url: world.server.url, actor: cast.worker3.actor, signingKey: cast.worker3.key, heartbeatMs: 0 }))).code).toBe('AUTH_FORBIDDEN')
    expect(w.authority.audit().at(-1)?.kind).toBe('ext.missionweaveprotocol.identity.session_open')
    // The control plane's key verifies too, but it is bound to a service, not to an Agent.
    const service = await rawSocket(world.server.url)
    const answer = await service.hello('controlPlane')
    expect(answer.frameType === 'ERROR' && answer.error.code).toBe('AUTH_INVALID_SIGNATURE')
  })
})

describe('Session Epoch fencing (§4.4, §6.3)', () => {
  it('fences the older connection of an Agent when a newer session opens: AUTH_STALE_SESSION, closed for good', async () => {
    world = await wireWorld()
    const older = await world.connect('worker1')
    const states: string[] = []
    older.conn.on('state', (s) => states.push(s.status))
    const newer = await world.connect('worker1')
    await until(older.conn, 'closed')
    expect(states).toEqual(['closed'])
    expect(newer.conn.sessionEpoch()).toBe(older.conn.sessionEpoch() + 1)
    // The fenced runtime does not reconnect (it would fence the newer one in turn) and its
    // Commands are refused as stale, never reported as a mere disconnection.
    const stale = await refusal(
      older.client.messagePost({ messageId: 'urn:weft:test:message:stale', conversationId: world.w.group().group.mainConversationId, content: [{ type: 'text', text: 'Still here?' }] }),
    )
    expect([stale.code, stale.details?.['currentSessionEpoch']]).toEqual(['AUTH_STALE_SESSION', newer.conn.sessionEpoch()])
    expect(world.server.connections.map((c) => c.sessionEpoch)).toEqual([newer.conn.sessionEpoch()])
    await newer.client.messagePost({ messageId: 'urn:weft:test:message:fresh', conversationId: world.w.group().group.mainConversationId, content: [{ type: 'text', text: 'Taking over.' }] })
  })

  it('fences a wire session when the control plane opens one in process', async () => {
    world = await wireWorld()
    const { conn } = await world.connect('worker2')
    const control = createClient({ actor: cast.controlPlane.actor, signingKey: cast.controlPlane.key, transport: world.w.authority.connect(), clock: { now: () => world!.w.clock.nowMs } })
    await control.identitySessionOpen({ agentId: cast.worker2.actor.id })
    await until(conn, 'closed')
    await expect(conn.ping()).rejects.toMatchObject({ code: 'AUTH_STALE_SESSION' })
  })
})

describe('options', () => {
  it('refuses plain sockets off loopback and without the insecure flag; the client refuses ws:// off loopback', async () => {
    world = await wireWorld()
    const base = { authority: world.w.authority, registry: world.w.registry, sessionIssuer: { actor: { type: 'service' as const, id: cast.controlPlane.actor.id }, signingKey: cast.controlPlane.key } }
    await expect(createWireServer(base)).rejects.toBeInstanceOf(UsageError)
    await expect(createWireServer({ ...base, insecureLoopback: true, host: '0.0.0.0' })).rejects.toBeInstanceOf(UsageError)
    await expect(connectWebSocket({ url: 'ws://authority.example:80', actor: cast.worker1.actor, signingKey: cast.worker1.key })).rejects.toBeInstanceOf(UsageError)
    await expect(connectWebSocket({ url: world.server.url, actor: cast.owner.actor, signingKey: cast.owner.key })).rejects.toBeInstanceOf(UsageError)
  })

  it('rejects the first connection to an unreachable server with TransportUnavailableError', async () => {
    world = await wireWorld()
    const url = world.server.url
    await world.server.close()
    const failure = await rejection(connectWebSocket({ url, actor: cast.worker1.actor, signingKey: cast.worker1.key, heartbeatMs: 0 }))
    expect(failure).toBeInstanceOf(TransportUnavailableError)
    expect(failure).not.toBeInstanceOf(ProtocolError)
  })
})
