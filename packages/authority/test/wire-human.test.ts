/**
 * Human sessions on the wire server (§5 human interface, §6.3, §8, §17): a gate admits a person's
 * WebSocket at the upgrade (here a stub: a token in a subprotocol names a session), and the
 * session then speaks the ordinary frames without HELLO and without a Session Epoch. Also the
 * listener's plain HTTP requests, which an `http` handler answers instead of 426.
 */
import type { IncomingMessage } from 'node:http'
import { createClient } from '@weft/client'
import { CLOSE_CODES, parseReceiptFrameId } from '@weft/client/wire'
import { keyPairFromSeed, ProtocolError, type KeyResolver } from '@weft/codec'
import type { ErrorFrame, EventFrame, WebSocketFrame } from '@weft/spec'
import { afterEach, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import type { HumanAdmission, HumanSessionGate, WireServerOptions } from '../src/wire/index.js'
import { cast, type Cast } from '@weft/testkit/fixtures'
import { started } from '@weft/testkit/world'
import { rawSocket, wireWorld, type RawSocket, type WireWorld } from './wire-world.js'

const PATH = '/console/ws'
const PROTOCOL = 'weft-console.v1'
const TOKEN = 'weft-session.'

/** A person the Registry binds who is a member of no Group. */
const STRANGER: Cast = { actor: { type: 'human', id: 'urn:weft:test:human:stranger' }, key: { keyId: 'urn:weft:test:key:stranger', pair: keyPairFromSeed(new Uint8Array(32).fill(40)) } }

type Admitted = Extract<HumanAdmission, { ok: true }>

/** The stub gate: `sessions` maps a token to its admission; every other upgrade is refused 401. */
interface StubGate extends HumanSessionGate {
  readonly sessions: Map<string, Omit<Admitted, 'ok'>>
  /** How often `admit` ran. */
  calls: number
}

function stubGate(): StubGate {
  const gate: StubGate = {
    path: PATH,
    protocol: PROTOCOL,
    sessions: new Map(),
    calls: 0,
    admit(request: IncomingMessage): HumanAdmission {
      gate.calls++
      const offered = String(request.headers['sec-websocket-protocol'] ?? '')
        .split(',')
        .map((p) => p.trim())
      const token = offered.find((p) => p.startsWith(TOKEN))?.slice(TOKEN.length)
      const session = token === undefined ? undefined : gate.sessions.get(token)
      if (session === undefined) return { ok: false, status: 401, error: new ProtocolError('AUTH_REQUIRED', 'Sign in first.') }
      return { ok: true, ...session }
    },
  }
  return gate
}

let world: WireWorld | undefined
const sockets: RawSocket[] = []
afterEach(async () => {
  for (const s of sockets.splice(0)) s.close()
  await world?.close()
  world = undefined
})

/** A wire world with the stub gate (and STRANGER bound in the Registry). */
async function humanWorld(server: Partial<WireServerOptions> = {}): Promise<{ ww: WireWorld; gate: StubGate }> {
  const gate = stubGate()
  world = await wireWorld({ world: await started({ principals: [STRANGER] }), server: { humanSessions: gate, ...server } })
  return { ww: world, gate }
}

let sessionSerial = 0
/** Gives `who` a console session in `gate` and returns its token and session ID. */
function signIn(ww: WireWorld, gate: StubGate, who: Cast, options: { sessionId?: string; ttlMs?: number } = {}): { token: string; sessionId: string } {
  const token = `token${++sessionSerial}`
  const sessionId = options.sessionId ?? `urn:weft:test:console-session:${sessionSerial}`
  gate.sessions.set(token, { principal: { type: 'human', id: who.actor.id }, keyId: who.key.keyId, sessionId, expiresAtMs: ww.w.clock.nowMs + (options.ttlMs ?? 3_600_000) })
  return { token, sessionId }
}

/** Opens the person's WebSocket with `token` and takes the server's first frame. */
async function openHuman(ww: WireWorld, token: string): Promise<{ raw: RawSocket; first: WebSocketFrame }> {
  const raw = await rawSocket(`${ww.server.url}${PATH}?v=1`, [PROTOCOL, `${TOKEN}${token}`])
  sockets.push(raw)
  return { raw, first: await raw.next() }
}

/** The answer to an upgrade that must be refused: status, headers, body, and whether a socket ever opened. */
function refusedUpgrade(url: string, protocols: readonly string[]): Promise<{ status: number; headers: Record<string, unknown>; body: unknown; opened: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, [...protocols], { perMessageDeflate: false })
    let opened = false
    socket.on('open', () => {
      opened = true
      socket.close()
    })
    socket.on('error', () => undefined)
    socket.on('close', () => (opened ? resolve({ status: 101, headers: {}, body: undefined, opened }) : undefined))
    socket.once('unexpected-response', (_request, response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (body += chunk))
      response.on('end', () => {
        try {
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(body), opened })
        } catch (thrown) {
          reject(thrown as Error)
        }
        socket.terminate()
      })
    })
  })
}

let frames = 0
const frameId = (): string => `urn:weft:test:frame:human-${++frames}`
const subscribe = (groupId: string, id = frameId()) => ({
  protocolVersion: '0.1',
  frameId: id,
  frameType: 'SUBSCRIBE',
  subscriptionId: `urn:weft:test:subscription:${frames}`,
  groups: [{ groupId, afterSequence: 0 }],
})
const commandFrame = (command: object) => ({ protocolVersion: '0.1', frameId: frameId(), frameType: 'COMMAND', command })
const message = (ww: WireWorld, text = 'From the console.') => ({
  messageId: `urn:weft:test:message:human-${++frames}`,
  conversationId: ww.w.group().group.mainConversationId,
  content: [{ type: 'text' as const, text }],
})
const withoutVolatile = (frame: ErrorFrame): string => {
  const { frameId: _f, error, ...rest } = frame
  const { occurredAt: _o, ...stable } = error
  return JSON.stringify({ ...rest, error: stable })
}

const ping = (nonce = 'AAAAAAAAAAAAAAAAAAAAAA', extra: object = {}) => ({ protocolVersion: '0.1', frameId: frameId(), frameType: 'PING', nonce, sentAt: '2026-07-15T00:00:00Z', ...extra })

describe('the admission of a human session (§5)', () => {
  it('selects the gate subprotocol, opens as the person without a Session Epoch, and sends a PING first', async () => {
    const { ww, gate } = await humanWorld()
    const { token } = signIn(ww, gate, cast.owner)
    const { raw, first } = await openHuman(ww, token)
    expect(raw.protocol).toBe(PROTOCOL)
    expect(first).toMatchObject({ frameType: 'PING', nonce: expect.any(String) })
    expect(first).not.toHaveProperty('replyToNonce')
    expect(ww.server.connections).toEqual([
      expect.objectContaining({ principal: { type: 'human', id: cast.owner.actor.id }, agentId: undefined, sessionEpoch: undefined, status: 'open', groupIds: [] }),
    ])
    // The session answers PINGs at once: no HELLO was needed.
    expect(await raw.barrier()).toEqual([])
  })

  it('refuses an admission the gate refuses with its status and a { error } JSON body, before any socket exists', async () => {
    const { ww, gate } = await humanWorld()
    const refused = await refusedUpgrade(`${ww.server.url}${PATH}`, [PROTOCOL, `${TOKEN}forged`])
    expect(refused).toMatchObject({ status: 401, opened: false, body: { error: { code: 'AUTH_REQUIRED', message: 'Sign in first.', retryable: false, occurredAt: expect.any(String) } } })
    expect(Object.keys(refused.body as object)).toEqual(['error'])
    expect(refused.headers).toMatchObject({ 'content-type': 'application/json', 'cache-control': 'no-store' })
    expect(gate.calls).toBe(1)
    expect(ww.server.connections).toEqual([])
    expect(ww.server.stats().connections).toBe(0)
  })

  it('refuses an upgrade to the human path that does not offer the subprotocol (400), without asking the gate', async () => {
    const { ww, gate } = await humanWorld()
    const { token } = signIn(ww, gate, cast.owner)
    for (const protocols of [[`${TOKEN}${token}`], []]) {
      const refused = await refusedUpgrade(`${ww.server.url}${PATH}`, protocols)
      expect(refused).toMatchObject({ status: 400, opened: false, body: { error: { code: 'PROTOCOL_VIOLATION' } } })
      expect(refused.headers).toMatchObject({ 'cache-control': 'no-store' })
    }
    expect(gate.calls).toBe(0)
    expect(ww.server.connections).toEqual([])
  })

  it('keeps every other path an Agent session with the HELLO handshake', async () => {
    const { ww, gate } = await humanWorld()
    const { token } = signIn(ww, gate, cast.owner)
    // A token on another path is nothing: the server waits for HELLO there.
    const raw = await rawSocket(`${ww.server.url}/`, ['some.protocol', `${TOKEN}${token}`])
    sockets.push(raw)
    expect(raw.protocol).toBe('some.protocol')
    raw.send(ping())
    await raw.nextError('AUTH_REQUIRED')
    expect(await raw.closed).toBe(CLOSE_CODES.authenticationFailed)
    const agent = await rawSocket(ww.server.url)
    sockets.push(agent)
    expect(await agent.hello('worker1')).toMatchObject({ frameType: 'HELLO', phase: 'server_accept' })
    expect(gate.calls).toBe(0)
  })

  it('counts human sessions against maxConnections', async () => {
    const { ww, gate } = await humanWorld({ maxConnections: 1 })
    const { token } = signIn(ww, gate, cast.owner)
    await openHuman(ww, token)
    // A second person's upgrade gets the RATE_LIMITED refusal in the { error } body; an Agent's the bare one as always.
    expect(await refusedUpgrade(`${ww.server.url}${PATH}`, [PROTOCOL, `${TOKEN}${token}`])).toMatchObject({ status: 503, body: { error: { code: 'RATE_LIMITED', retryable: true } } })
    expect(await refusedUpgrade(ww.server.url, [])).toMatchObject({ status: 503, body: { code: 'RATE_LIMITED', retryable: true } })
  })
})

describe('a human session (§8, §15, §17)', () => {
  it('streams the Events of a Group where the person is a member, and records ACKs', async () => {
    const { ww, gate } = await humanWorld()
    const { raw } = await openHuman(ww, signIn(ww, gate, cast.owner).token)
    const history = ww.w.authority.events(ww.w.groupId)
    raw.send(subscribe(ww.w.groupId))
    const replayed = (await raw.barrier()) as EventFrame[]
    expect(replayed.map((f) => f.frameType)).toEqual(history.map(() => 'EVENT'))
    expect(replayed.map((f) => f.event)).toEqual(history)
    // Live: what another member posts reaches the person.
    await ww.w.as.worker1.messagePost(message(ww))
    const live = (await raw.next()) as EventFrame
    expect(live).toMatchObject({ frameType: 'EVENT', event: { kind: 'message.posted', sequence: ww.w.group().head, actor: cast.worker1.actor } })
    raw.send({ protocolVersion: '0.1', frameId: frameId(), frameType: 'ACK', acknowledgements: [{ groupId: ww.w.groupId, sequence: ww.w.group().head }], sentAt: '2026-07-15T00:00:00Z' })
    expect(await raw.barrier()).toEqual([])
    expect(ww.delivery.cursor(cast.owner.actor, ww.w.groupId)).toBe(ww.w.group().head)
    expect(ww.server.connections[0]!.groupIds).toEqual([ww.w.groupId])
  })

  it("answers a non-member's SUBSCRIBE with the same GROUP_NOT_FOUND as for an absent Group", async () => {
    const { ww, gate } = await humanWorld()
    const { raw } = await openHuman(ww, signIn(ww, gate, STRANGER).token)
    const absent = 'urn:weft:test:group:absent'
    const sameId = frameId()
    raw.send(subscribe(ww.w.groupId, sameId))
    const hidden = await raw.nextError('GROUP_NOT_FOUND')
    raw.send(subscribe(absent, sameId))
    const missing = await raw.nextError('GROUP_NOT_FOUND')
    // Byte for byte, apart from the frame ID, the time and the Group the frame names.
    expect(withoutVolatile(hidden).replace(ww.w.groupId, '<group>')).toBe(withoutVolatile(missing).replace(absent, '<group>'))
    expect(hidden.error.relatedFrameId).toBe(sameId)
    // Nothing of the Group reached the stranger, and the session goes on.
    expect(await raw.barrier()).toEqual([])
    expect(ww.server.connections[0]!.groupIds).toEqual([])
  })

  it("submits the person's own signed Command and answers with its receipt as EVENT frames", async () => {
    const { ww, gate } = await humanWorld()
    const { raw } = await openHuman(ww, signIn(ww, gate, cast.owner).token)
    const head = ww.w.group().head
    const { command } = ww.w.as.owner.build('message.post', message(ww))
    // §6.3: a person's Command carries no Session Epoch.
    expect(command).not.toHaveProperty('sessionEpoch')
    raw.send(commandFrame(command))
    const receipt = (await raw.next()) as EventFrame
    expect(receipt.frameType).toBe('EVENT')
    expect(parseReceiptFrameId(receipt.frameId)).toEqual({ serial: '1', index: 0, count: 1, duplicate: false })
    expect(receipt.event).toMatchObject({ kind: 'message.posted', sequence: head + 1, actor: cast.owner.actor, cause: { id: command.actionId } })
    expect(ww.w.group().head).toBe(head + 1)
    // An exact retry is a duplicate receipt (§15.1), as for an Agent.
    raw.send(commandFrame(command))
    expect(parseReceiptFrameId(((await raw.next()) as EventFrame).frameId)).toEqual({ serial: '2', index: 0, count: 1, duplicate: true })
  })

  it("refuses another Principal's Command with AUTH_FORBIDDEN and goes on", async () => {
    const { ww, gate } = await humanWorld()
    const { raw } = await openHuman(ww, signIn(ww, gate, cast.owner).token)
    const head = ww.w.group().head
    const stranger = createClient({
      actor: STRANGER.actor,
      signingKey: STRANGER.key,
      transport: { submit: () => Promise.reject(new Error('not sent')) },
      groupId: ww.w.groupId,
      clock: { now: () => ww.w.clock.nowMs },
    })
    stranger.epochs.setMembership(ww.w.groupId, 1)
    const others = [
      ww.w.as.worker1.build('message.post', message(ww)),
      stranger.build('message.post', message(ww)),
      ww.w.as.controlPlane.build('ext.missionweaveprotocol.identity.session_open', { agentId: cast.worker1.actor.id }),
    ]
    for (const { command } of others) {
      raw.send(commandFrame(command))
      const refused = await raw.nextError('AUTH_FORBIDDEN')
      expect(refused.error).toMatchObject({ relatedActionId: command.actionId })
      expect(refused.error.fatal).toBeUndefined()
    }
    expect(ww.w.group().head).toBe(head)
    expect(await raw.barrier()).toEqual([])
  })

  it('refuses a HELLO like an Agent session does, and a Presence Record (§6.2: Presence is an Agent’s)', async () => {
    const { ww, gate } = await humanWorld()
    const { raw } = await openHuman(ww, signIn(ww, gate, cast.owner).token)
    raw.send({
      protocolVersion: '0.1',
      frameId: frameId(),
      frameType: 'HELLO',
      phase: 'client_init',
      agentId: cast.worker1.actor.id,
      keyId: cast.worker1.key.keyId,
      clientNonce: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      supportedVersions: ['0.1'],
    })
    expect((await raw.nextError('PROTOCOL_VIOLATION')).error.fatal).toBeUndefined()
    // It names the person, so only the rule that Presence is an Agent's refuses it (not the Agent-ID or epoch checks).
    const presence = {
      agentId: cast.owner.actor.id,
      sessionEpoch: 1,
      status: 'online',
      capacity: { maxSlots: 2, activeSlots: 1, availableSlots: 1, queuedItems: 0 },
      capabilityAvailability: [],
      lastHeartbeat: '2026-07-15T00:00:00Z',
      expiresAt: '2026-07-15T00:05:00Z',
    }
    raw.send(ping('BBBBBBBBBBBBBBBBBBBBBB', { presence }))
    // Refused, and not answered as a PING either.
    expect((await raw.nextError('AUTH_FORBIDDEN')).error.fatal).toBeUndefined()
    expect(await raw.barrier()).toEqual([])
    expect(ww.server.presence(cast.owner.actor.id)).toBeUndefined()
    expect(ww.server.connections[0]).toMatchObject({ status: 'open', sessionEpoch: undefined })
  })
})

describe('the end of a human session', () => {
  it('endHumanSessions closes every socket of the session with a fatal ERROR and 4401, and no other', async () => {
    const { ww, gate } = await humanWorld()
    const a = signIn(ww, gate, cast.owner)
    const { raw: one } = await openHuman(ww, a.token)
    const { raw: two } = await openHuman(ww, a.token)
    const b = signIn(ww, gate, cast.owner)
    const { raw: other } = await openHuman(ww, b.token)
    expect(ww.server.endHumanSessions('urn:weft:test:console-session:none')).toBe(0)
    expect(ww.server.endHumanSessions(a.sessionId)).toBe(2)
    for (const raw of [one, two]) {
      expect((await raw.nextError('AUTH_REQUIRED')).error).toMatchObject({ message: 'The session ended.', fatal: true })
      expect(await raw.closed).toBe(CLOSE_CODES.authenticationFailed)
    }
    expect(await other.barrier()).toEqual([])
    expect(ww.server.endHumanSessions(a.sessionId)).toBe(0)
    // A caller's own reason goes out instead.
    expect(ww.server.endHumanSessions(b.sessionId, new ProtocolError('AUTH_FORBIDDEN', 'Your access was withdrawn.'))).toBe(1)
    expect((await other.nextError('AUTH_FORBIDDEN')).error).toMatchObject({ message: 'Your access was withdrawn.', fatal: true })
    expect(await other.closed).toBe(CLOSE_CODES.authenticationFailed)
    expect(ww.server.connections).toEqual([])
  })

  it('refuses a frame after the expiry with a fatal AUTH_REQUIRED and closes 4408', async () => {
    const { ww, gate } = await humanWorld()
    const { raw } = await openHuman(ww, signIn(ww, gate, cast.owner, { ttlMs: 60_000 }).token)
    expect(await raw.barrier()).toEqual([])
    ww.w.clock.advance(60)
    raw.send(subscribe(ww.w.groupId))
    const expired = await raw.nextError('AUTH_REQUIRED')
    expect(expired.error.fatal).toBe(true)
    expect(await raw.closed).toBe(CLOSE_CODES.sessionExpired)
    // Nothing of the Group was sent.
    expect(raw.taken()).toEqual([])
  })

  it('closes an idle session at its expiry', async () => {
    const { ww, gate } = await humanWorld()
    const { raw } = await openHuman(ww, signIn(ww, gate, cast.owner, { ttlMs: 60_000 }).token)
    ww.w.clock.advance(61)
    expect((await raw.nextError('AUTH_REQUIRED')).error.fatal).toBe(true)
    expect(await raw.closed).toBe(CLOSE_CODES.sessionExpired)
  })

  it('closes an idle session at its expiry by the wall clock too', async () => {
    const { ww, gate } = await humanWorld({ clock: { now: () => Date.now() } })
    const token = 'wall'
    const expiresAtMs = Date.now() + 300
    gate.sessions.set(token, { principal: { type: 'human', id: cast.owner.actor.id }, keyId: cast.owner.key.keyId, sessionId: 'urn:weft:test:console-session:wall', expiresAtMs })
    const { raw } = await openHuman(ww, token)
    expect((await raw.nextError('AUTH_REQUIRED')).error.fatal).toBe(true)
    expect(await raw.closed).toBe(CLOSE_CODES.sessionExpired)
    // Not a moment before its expiry.
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAtMs)
  })

  it('ends a session whose key the Registry no longer holds valid (§6.4)', async () => {
    const w = await started({ principals: [STRANGER] })
    const withdrawn = new Set<string>()
    const registry: KeyResolver = { resolve: (keyId) => (withdrawn.has(keyId) ? { ok: false, reason: 'key-unknown' } : w.registry.resolve(keyId)) }
    const gate = stubGate()
    world = await wireWorld({ world: w, server: { humanSessions: gate, registry } })
    const { raw } = await openHuman(world, signIn(world, gate, cast.owner).token)
    const { raw: stranger } = await openHuman(world, signIn(world, gate, STRANGER).token)
    withdrawn.add(cast.owner.key.keyId)
    expect((await raw.nextError('AUTH_INVALID_SIGNATURE')).error.fatal).toBe(true)
    expect(await raw.closed).toBe(CLOSE_CODES.authenticationFailed)
    expect(await stranger.barrier()).toEqual([])
  })

  it('closes on server shutdown with 1001', async () => {
    const { ww, gate } = await humanWorld()
    const { raw } = await openHuman(ww, signIn(ww, gate, cast.owner).token)
    await ww.server.close()
    expect(await raw.closed).toBe(CLOSE_CODES.goingAway)
  })
})

describe('plain HTTP on the listener', () => {
  it('goes to the http handler when one is given', async () => {
    const seen: string[] = []
    const { ww } = await humanWorld({
      http: (request, response) => {
        seen.push(`${request.method} ${request.url}`)
        if (request.url === '/console/fail') throw new Error('the handler broke')
        response.writeHead(200, { 'content-type': 'text/plain' }).end('console')
      },
    })
    const base = ww.server.url.replace('ws://', 'http://')
    const answer = await fetch(`${base}/console/app?x=1`)
    expect([answer.status, await answer.text()]).toEqual([200, 'console'])
    expect((await fetch(`${base}/console/fail`)).status).toBe(500)
    expect(seen).toEqual(['GET /console/app?x=1', 'GET /console/fail'])
    // Upgrades still go to the binding.
    const agent = await rawSocket(ww.server.url)
    sockets.push(agent)
    expect(await agent.hello('worker1')).toMatchObject({ phase: 'server_accept' })
  })

  it('is answered 426 without one', async () => {
    const { ww } = await humanWorld()
    const answer = await fetch(`${ww.server.url.replace('ws://', 'http://')}/console/app`)
    expect(answer.status).toBe(426)
    expect(answer.headers.get('upgrade')).toBe('websocket')
  })
})
