/**
 * Revoking an Agent through the real `weft serve` bin (§6.1, §6.3, §6.4, §19): a card registered
 * with `status: "revoked"` on the control endpoint closes the Agent's open WebSocket session at
 * once and its Commands are refused; with two servers on one PostgreSQL log, revoking in
 * `organization.json` (a card `status` or a key's `revokedAt`) and restarting one server ends the
 * Agent's session on the other, which folds the registration from the shared log.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createClient, type Client } from '@weft/client'
import { connectWebSocket, type WebSocketConnection } from '@weft/client/wire'
import { ProtocolError, sign } from '@weft/codec'
import type { AgentCard, EventPayload } from '@weft/spec'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { controlTransport } from '../src/serve/control.js'
import { loadOrganization, ORGANIZATION_FILE, type OrganizationFile } from '../src/serve/organization.js'
import { freshSchema, runWeft, startServePostgres, storedLog, testServer } from './serve-postgres-world.js'
import { dataDir, groupOf, handshakeOutcome, iso, openMission, party, people, principalEntry, removeTemporaryDirs, startServe, stop, type Party, type ServeProcess } from './serve-world.js'

const servers: ServeProcess[] = []
const parties: Party[] = []
const connections: WebSocketConnection[] = []
afterEach(async () => {
  await Promise.all(connections.splice(0).map((c) => c.close()))
  await Promise.all(parties.splice(0).map((p) => p.close()))
  await Promise.all(servers.splice(0).map((s) => (s.child.exitCode === null && s.child.signalCode === null ? stop(s, 'SIGKILL') : undefined)))
})
afterAll(removeTemporaryDirs)

type Agent = 'worker1' | 'worker2'

/** An Agent's own connection to `server`, its client, and the error its connection ends with. */
interface Session {
  readonly client: Client
  readonly conn: WebSocketConnection
  /** Resolves with the error of the close once the connection closed. */
  readonly ended: Promise<Error | undefined>
}

/** Connects `who` to `server` for the Group of Mission `name`, learning its epochs from `p`'s receipts. */
async function session(server: ServeProcess, p: Party, who: Agent, name: string): Promise<Session> {
  const { actor, key } = people[who]
  const conn = await connectWebSocket({ url: server.url, actor, signingKey: key, reconnect: false, heartbeatMs: 0 })
  connections.push(conn)
  const ended = new Promise<Error | undefined>((resolve) => conn.on('state', (s) => s.status === 'closed' && resolve(s.error)))
  const client = createClient({ actor, signingKey: key, transport: conn.transport, groupId: groupOf(name) })
  for (const receipt of p.receipts) client.observe(receipt.events)
  client.epochs.setSession(conn.sessionEpoch())
  return { client, conn, ended }
}

let posts = 0
/** `client` posts a Message in `conversationId`: `accepted`, or the §19 code of its refusal. */
function post(client: Client, conversationId: string): Promise<string> {
  const content = [{ type: 'text' as const, text: 'Progress.' }]
  return client.messagePost({ messageId: `urn:weft:serve-test:message:revocation-${process.pid}-${++posts}`, conversationId, content }).then(
    () => 'accepted',
    (e: unknown) => (e instanceof ProtocolError ? e.code : String(e)),
  )
}

/** Opens Mission `name` on `server` (the Coordinator connected there) and returns its party and Main Conversation. */
async function mission(server: ServeProcess, name: string): Promise<{ p: Party; conversationId: string }> {
  const p = party(server, groupOf(name))
  parties.push(p)
  const created = await openMission(p, await p.connect('coordinator'), name)
  return { p, conversationId: (created.events[0]!.payload as EventPayload<'mission.created'>).conversation.conversationId }
}

/** Rewrites `organization.json` of `dir`, changing the principal of `who` with `change`. */
async function editPrincipal(dir: string, who: Agent, change: (entry: OrganizationFile['principals'][number]) => object): Promise<void> {
  const path = join(dir, ORGANIZATION_FILE)
  const file = JSON.parse(await readFile(path, 'utf8')) as OrganizationFile
  await writeFile(path, JSON.stringify({ ...file, principals: file.principals.map((e) => (e.id === people[who].actor.id ? change(e) : e)) }))
}

describe('weft serve: revoking an Agent on the control endpoint', () => {
  it('closes its open session at once with AUTH_FORBIDDEN and refuses its message.post and its next HELLO', { timeout: 120_000 }, async () => {
    const dir = await dataDir()
    const server = await startServe(dir)
    servers.push(server)
    const { p, conversationId } = await mission(server, 'revoke-control')
    const worker = await session(server, p, 'worker1', 'revoke-control')
    expect(await post(worker.client, conversationId)).toBe('accepted')
    // The control plane signs card version 2 of worker1, revoked (§6.1), and registers it as any service Command.
    const org = await loadOrganization(join(dir, ORGANIZATION_FILE))
    const { card: template, keyId, publicKey } = principalEntry(people.worker1)
    const card = sign(
      'agent-card',
      {
        agentId: people.worker1.actor.id,
        organizationId: org.organizationId,
        cardVersion: 2,
        ...template!,
        status: 'revoked',
        protocolVersions: ['0.1'],
        publicKeys: [{ keyId, algorithm: 'Ed25519', publicKey, validFrom: org.file.createdAt }],
        issuedAt: iso(Date.now()),
      },
      org.controlPlane.signingKey,
    ) as unknown as AgentCard
    const control = createClient({ actor: org.controlPlane.actor, signingKey: org.controlPlane.signingKey, transport: controlTransport(server.controlUrl) })
    await control.registryAgentCardRegister({ card })
    expect((await worker.ended) as ProtocolError).toMatchObject({ code: 'AUTH_FORBIDDEN' })
    await server.waitLog((l) => l.msg === 'connection closed' && l['agentId'] === people.worker1.actor.id && l['code'] === 'AUTH_FORBIDDEN')
    expect(await post(worker.client, conversationId)).toBe('AUTH_FORBIDDEN')
    expect(await handshakeOutcome(server, 'worker1')).toBe('AUTH_FORBIDDEN')
  })
})

describe('weft serve --postgres: revoking an Agent in organization.json and restarting one server', () => {
  let db: ReturnType<typeof testServer>
  beforeAll(() => {
    db = testServer()
  })
  afterAll(() => db?.stop())

  it("ends the Agent's session on the other server, which refuses its Commands and its HELLO", { timeout: 180_000 }, async () => {
    const dir = await dataDir()
    const schema = freshSchema()
    const [a, b] = await Promise.all([startServePostgres(dir, db.url, schema), startServePostgres(dir, db.url, schema)])
    servers.push(a, b)
    const { p, conversationId } = await mission(b, 'revoke-shared')
    const revoked = await session(b, p, 'worker1', 'revoke-shared')
    const rekeyed = await session(b, p, 'worker2', 'revoke-shared')
    expect(await post(revoked.client, conversationId)).toBe('accepted')
    expect(await post(rekeyed.client, conversationId)).toBe('accepted')
    // Revoke worker1's card and worker2's key in the shared file, then restart server A alone.
    const before = await readFile(join(dir, ORGANIZATION_FILE), 'utf8')
    await editPrincipal(dir, 'worker1', (e) => ({ ...e, card: { ...e.card, status: 'revoked' } }))
    await editPrincipal(dir, 'worker2', (e) => ({ ...e, revokedAt: iso(Date.now()) }))
    expect(await stop(a, 'SIGTERM')).toMatchObject({ code: 0 })
    const restarted = await startServePostgres(dir, db.url, schema)
    servers.push(restarted)
    expect(restarted.log.filter((l) => l.msg === 'agent card registered').map((l) => [l['agentId'], l['cardVersion']])).toEqual([
      [people.worker1.actor.id, 2],
      [people.worker2.actor.id, 2],
    ])
    // Server B folds the registrations from the shared log and ends both sessions as fenced ones.
    expect((await revoked.ended) as ProtocolError).toMatchObject({ code: 'AUTH_FORBIDDEN' })
    expect((await rekeyed.ended) as ProtocolError).toMatchObject({ code: 'AUTH_INVALID_SIGNATURE' })
    expect(await post(revoked.client, conversationId)).toBe('AUTH_FORBIDDEN')
    // B still holds the Registry it loaded before the revocation; the folded card is what refuses the key.
    expect(await handshakeOutcome(b, 'worker1')).toBe('AUTH_FORBIDDEN')
    expect(await handshakeOutcome(b, 'worker2')).toBe('AUTH_INVALID_SIGNATURE')
    await b.waitLog((l) => l.msg === 'handshake refused: key is not valid now (card-key-revoked)')
    // Nothing was appended for them after the revocation.
    const log = await storedLog(db.url, schema, groupOf('revoke-shared'))
    expect(log.filter((e) => e.kind === 'message.posted').map((e) => e.actor.id)).toEqual([people.worker1.actor.id, people.worker2.actor.id])
    // A server started with the file as it was cannot lift the revocation: it refuses to start.
    await writeFile(join(dir, ORGANIZATION_FILE), before)
    const stale = await runWeft('serve', '--data', dir, '--postgres', db.url, '--pg-schema', schema, '--port', '0', '--insecure-loopback')
    expect([stale.code, stale.stderr]).toEqual([2, expect.stringContaining(`the Agent Card of ${people.worker1.actor.id} was refused (INVALID_STATE_TRANSITION`)])
  })
})
