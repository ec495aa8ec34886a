/**
 * Commands and the HELLO handshake signed with an asynchronous key (issue 24): a WebCrypto
 * Ed25519 key (`webCryptoKeyPair`, non-extractable, as a browser holds it) signs the same bytes a
 * synchronous key does, through `signAsync` (§6.4); the synchronous `build` refuses such a key
 * with a UsageError instead of encoding a promise.
 */
import { keyPairFromSeed, UsageError, webCryptoKeyPair, type AsyncSigningKey, type SigningKey } from '@weft/codec'
import { signedVerifier } from '@weft/validators/signed'
import { afterEach, describe, expect, it } from 'vitest'
import { buildCommand, buildCommandAsync, createClient, createEpochs, type EnvelopeSource } from '../src/index.js'
import { connectWebSocket, type WebSocketConnection } from '../src/wire/index.js'
import { cast, clientOf, counterRandom, fakeAuthority, GROUP, lastCommand, registry, T0_MS } from './fixtures.js'
import { fakeServer } from './wire-fake-server.js'

/** The seeds `fixtures.ts` derives the cast's keys from. */
const SEEDS = { owner: 11, worker: 13 } as const

/** `who`'s key, held by WebCrypto: the seed goes in, the private key never comes out. */
async function webKey(who: 'owner' | 'worker'): Promise<AsyncSigningKey> {
  const pair = await webCryptoKeyPair(new Uint8Array(32).fill(SEEDS[who]), cast[who].key.pair.publicKey)
  return { keyId: cast[who].key.keyId, pair }
}

const post = { messageId: 'urn:weft:client-test:message:1', conversationId: 'urn:weft:client-test:conversation:1', content: [{ type: 'text' as const, text: 'Hello.' }] }

function source(signingKey: SigningKey | AsyncSigningKey): EnvelopeSource {
  const epochs = createEpochs(cast.owner.actor)
  epochs.setMembership(GROUP, 3)
  return { actor: cast.owner.actor, groupId: GROUP, epochs, signingKey, clock: { now: () => T0_MS }, random: counterRandom() }
}

describe('building with an asynchronous key', () => {
  it('buildCommandAsync signs the very bytes buildCommand signs with the same key held synchronously (Ed25519 is deterministic)', async () => {
    const viaWebCrypto = await buildCommandAsync(source(await webKey('owner')), 'message.post', post)
    const viaSync = buildCommand(source(cast.owner.key), 'message.post', post)
    expect(viaWebCrypto.bytes).toBe(viaSync.bytes)
    expect(signedVerifier.verify('command', viaWebCrypto.bytes, registry).ok).toBe(true)
    // And with a synchronous key, buildCommandAsync is buildCommand.
    expect((await buildCommandAsync(source(cast.owner.key), 'message.post', post)).bytes).toBe(viaSync.bytes)
  })

  it('buildCommand and client.build refuse an asynchronous key with a UsageError naming the way out', async () => {
    const key = await webKey('owner')
    expect(() => buildCommand(source(key), 'message.post', post)).toThrow(UsageError)
    expect(() => buildCommand(source(key), 'message.post', post)).toThrow(/buildCommandAsync/)
    const client = createClient({ actor: cast.owner.actor, signingKey: key, transport: fakeAuthority().transport, groupId: GROUP })
    expect(() => client.build('message.post', post)).toThrow(/asynchronously/)
  })

  it('buildCommandAsync rejects (never throws) the misuses buildCommand refuses', async () => {
    const key = await webKey('owner')
    const promise = buildCommandAsync(source(key), 'message.post', post, { groupId: 'urn:weft:client-test:group:unknown' })
    expect(promise).toBeInstanceOf(Promise)
    await expect(promise).rejects.toThrow(/Membership Epoch/)
  })

  it('client.send and the typed builders sign with the async key; the Authority verifies the Command (§6.4)', async () => {
    const authority = fakeAuthority(() => [{ kind: 'message.posted', payload: {} }])
    const owner = createClient({ actor: cast.owner.actor, signingKey: await webKey('owner'), transport: authority.transport, groupId: GROUP, clock: { now: () => T0_MS }, random: counterRandom() })
    owner.epochs.setMembership(GROUP, 3)
    const receipt = await owner.messagePost(post)
    const built = await owner.buildAsync('message.post', post)
    expect(receipt.events).toHaveLength(1)
    expect(lastCommand(authority.submissions)).toMatchObject({ actor: cast.owner.actor, membershipEpoch: 3 })
    expect(signedVerifier.verify('command', built.bytes, registry).ok).toBe(true)
  })

  it('a key whose sign is no async function but returns a promise is found out on first use: send still signs, build refuses', async () => {
    const sync = cast.owner.key.pair
    let calls = 0
    const sneaky: AsyncSigningKey = {
      keyId: cast.owner.key.keyId,
      pair: {
        publicKey: sync.publicKey,
        sign: (message) => {
          calls++
          return Promise.resolve(sync.sign(message))
        },
      },
    }
    const authority = fakeAuthority(() => [{ kind: 'message.posted', payload: {} }])
    const owner = createClient({ actor: cast.owner.actor, signingKey: sneaky, transport: authority.transport, groupId: GROUP, clock: { now: () => T0_MS }, random: counterRandom() })
    owner.epochs.setMembership(GROUP, 3)
    await owner.messagePost(post)
    // One signature wasted finding out, one for the Command; afterwards it is known to be asynchronous.
    expect(calls).toBe(2)
    await owner.messagePost({ ...post, messageId: 'urn:weft:client-test:message:2' })
    expect(calls).toBe(3)
    expect(authority.submissions).toHaveLength(2)
    expect(() => owner.build('message.post', post)).toThrow(UsageError)
  })

  it('a synchronous key keeps the synchronous path: client.build returns the built Command, not a promise', () => {
    const built = clientOf(cast.owner, fakeAuthority().transport).withGroup(GROUP)
    built.epochs.setMembership(GROUP, 1)
    const result = built.build('message.post', post)
    expect(result).not.toBeInstanceOf(Promise)
    expect(typeof result.bytes).toBe('string')
    expect(() => createClient({ actor: cast.owner.actor, signingKey: { keyId: 'k', pair: { publicKey: new Uint8Array(32) } } as never, transport: fakeAuthority().transport })).toThrow(UsageError)
    expect(keyPairFromSeed(new Uint8Array(32).fill(SEEDS.owner)).publicKey).toEqual(cast.owner.key.pair.publicKey)
  })
})

describe('the HELLO handshake with an asynchronous key (§6.3)', () => {
  let conn: WebSocketConnection | undefined
  let server: Awaited<ReturnType<typeof fakeServer>> | undefined
  afterEach(async () => {
    await conn?.close()
    await server?.close()
    conn = server = undefined
  })

  it('signs the transcript with the WebCrypto key; the server verifies it and Commands flow', async () => {
    server = await fakeServer()
    const signingKey = await webKey('worker')
    conn = await connectWebSocket({ url: server.url, actor: cast.worker.actor, signingKey, heartbeatMs: 0, reconnect: false })
    expect([server.last.verified, conn.sessionEpoch()]).toEqual([true, 1])
    const worker = createClient({ actor: cast.worker.actor, signingKey, transport: conn.transport, groupId: GROUP })
    worker.epochs.set({ session: conn.sessionEpoch(), groupId: GROUP, membership: 1 })
    const receipt = await worker.messagePost(post)
    expect(receipt.events.map((e) => e.kind)).toEqual(['message.posted'])
    expect(server.received('COMMAND')[0]!.command).toMatchObject({ sessionEpoch: 1, membershipEpoch: 1 })
  })

  it('a key whose signature rejects fails the handshake with that error', async () => {
    server = await fakeServer()
    const broken: AsyncSigningKey = { keyId: cast.worker.key.keyId, pair: { publicKey: cast.worker.key.pair.publicKey, sign: async () => Promise.reject(new Error('token unplugged')) } }
    await expect(connectWebSocket({ url: server.url, actor: cast.worker.actor, signingKey: broken, heartbeatMs: 0, reconnect: false })).rejects.toThrow(/token unplugged/)
  })
})
