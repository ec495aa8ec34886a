/**
 * What `weft serve` does by default that an operator expects, through the real bin: a data
 * directory readable by its owner only, whatever the umask; and §20 limits on Messages, proposals,
 * HELLOs per Agent and connections (global and per peer address), each refused with `RATE_LIMITED`
 * and each changed by its flag.
 */
import { execFile } from 'node:child_process'
import { readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { Client } from '@weft/client'
import { ProtocolError } from '@weft/codec'
import type { EventPayload } from '@weft/spec'
import { afterAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { ORGANIZATION_FILE, type OrganizationFile } from '../src/serve/organization.js'
import { dataDir, groupOf, handshakeOutcome, openMission, party, people, principalEntry, startServe, tearDown, temporaryDir, UMASK_000, WEFT, type Party, type ServeProcess } from './serve-world.js'

const CLI = fileURLToPath(new URL('..', import.meta.url))

const servers: ServeProcess[] = []
const parties: Party[] = []
afterAll(() => tearDown(servers, parties))

async function serve(dir: string, extra: readonly string[] = [], node: readonly string[] = []): Promise<ServeProcess> {
  const server = await startServe(dir, extra, node)
  servers.push(server)
  return server
}

/** A raw WebSocket from `localAddress` (any 127.x.y.z reaches the loopback listener): open, or the HTTP refusal of its upgrade. */
type Raw = { readonly socket: WebSocket } | { readonly status: number; readonly retryAfter: string | undefined; readonly error: Record<string, unknown> }

function raw(url: string, localAddress = '127.0.0.1'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { localAddress })
    socket.once('open', () => resolve({ socket }))
    socket.once('unexpected-response', (request, response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (body += chunk))
      response.on('end', () => {
        request.destroy()
        resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'], error: JSON.parse(body) as Record<string, unknown> })
      })
    })
    socket.once('error', reject)
  })
}

function opened(r: Raw): WebSocket {
  if (!('socket' in r)) throw new Error(`refused with HTTP ${r.status}: ${JSON.stringify(r.error)}`)
  return r.socket
}

/** Posts `n` Messages as `client` in the Mission's conversation, one at a time; the §19 code of the first refusal and how many were accepted before it. */
async function post(client: Client, conversationId: string, n: number): Promise<{ accepted: number; refusal?: ProtocolError }> {
  for (let i = 0; i < n; i++) {
    try {
      await client.messagePost({ messageId: `urn:weft:serve-test:message:limits-${conversationId.length}-${Date.now()}-${i}`, conversationId, content: [{ type: 'text', text: `Note ${i}.` }] })
    } catch (error) {
      return { accepted: i, refusal: error as ProtocolError }
    }
  }
  return { accepted: n }
}

const modeOf = async (path: string): Promise<number> => (await stat(path)).mode & 0o777

describe('weft serve under umask 000', () => {
  it('creates the data directory 0700 and every file in it 0600, and applies the default limits', async () => {
    const data = join(await temporaryDir(), 'data')
    await promisify(execFile)(process.execPath, [...UMASK_000, ...WEFT, 'serve', '--init', '--data', data], { cwd: CLI })
    expect(await modeOf(data)).toBe(0o700)
    expect(await modeOf(join(data, ORGANIZATION_FILE))).toBe(0o600)
    // Register the cast as a user would, editing the file in place.
    const path = join(data, ORGANIZATION_FILE)
    const file = JSON.parse(await readFile(path, 'utf8')) as OrganizationFile
    await writeFile(path, JSON.stringify({ ...file, createdAt: '2020-01-01T00:00:00Z', principals: Object.values(people).map(principalEntry) }))

    const server = await serve(data, [], UMASK_000)
    const p = party(server, groupOf('umask'))
    parties.push(p)
    await openMission(p, await p.connect('coordinator'), 'umask')
    const files = await readdir(data)
    expect(files).toEqual(expect.arrayContaining(['authority.db', 'authority.db-shm', 'authority.db-wal', ORGANIZATION_FILE]))
    for (const name of files) expect([name, await modeOf(join(data, name))]).toEqual([name, 0o600])
    expect(await modeOf(data)).toBe(0o700)

    expect(server.log.find((l) => l.msg === 'listening')?.['limits']).toEqual({
      maxMessagesPerMinute: 1000,
      maxProposalsPerMinute: 120,
      maxHellosPerMinute: 60,
      maxConnections: 1000,
      maxConnectionsPerPeer: 100,
      maxAuditEntries: 10_000,
      maxControlBodyBytes: 1024 * 1024,
      maxControlRequests: 16,
      maxOutboundBytes: 4 * 1024 * 1024,
      sendTimeoutMs: 60_000,
      maxFramesPerSecond: 2000,
      maxFrameBytes: 1024 * 1024 + 64 * 1024,
    })
    // The Coordinator holds one connection from 127.0.0.1; 99 more fit, the next does not.
    const sockets = (await Promise.all(Array.from({ length: 99 }, () => raw(server.url)))).map(opened)
    expect(await raw(server.url)).toMatchObject({ status: 429, error: { code: 'RATE_LIMITED', retryable: true } })
    for (const s of sockets) s.terminate()
  })
})

describe('weft serve limits and their flags (§20)', () => {
  it('refuses HELLOs beyond --max-hellos-per-minute per Agent, and Messages beyond --max-messages-per-minute, with RATE_LIMITED', async () => {
    const dir = await dataDir()
    const server = await serve(dir, ['--max-messages-per-minute', '5', '--max-proposals-per-minute', '2', '--max-hellos-per-minute', '3'])
    expect(server.log.find((l) => l.msg === 'listening')?.['limits']).toMatchObject({ maxMessagesPerMinute: 5, maxProposalsPerMinute: 2, maxHellosPerMinute: 3 })

    expect([await handshakeOutcome(server, 'reviewer'), await handshakeOutcome(server, 'reviewer'), await handshakeOutcome(server, 'reviewer')]).toEqual(['open', 'open', 'open'])
    expect(await handshakeOutcome(server, 'reviewer')).toBe('RATE_LIMITED')
    await server.waitLog((l) => l.msg === 'connection closed' && l['code'] === 'RATE_LIMITED')
    expect(server.log.filter((l) => l['code'] === 'RATE_LIMITED').map((l) => l.msg)).toEqual([expect.stringMatching(/^session_open refused: hello_rate/), 'connection closed'])
    // The refused HELLO appended nothing: three Session Epochs, not four (§6.3).
    const sessions = server.log.filter((l) => l.msg === 'command accepted' && l['kind'] === 'ext.missionweaveprotocol.identity.session_open')
    expect(sessions).toHaveLength(3)

    // Another Agent's HELLOs are counted apart.
    const p = party(server, groupOf('limits'))
    parties.push(p)
    const created = await openMission(p, await p.connect('coordinator'), 'limits')
    const worker = await p.connect('worker1')
    const conversationId = (created.events[0]!.payload as EventPayload<'mission.created'>).conversation.conversationId
    const { accepted, refusal } = await post(worker, conversationId, 6)
    expect(accepted).toBe(5)
    expect(refusal).toBeInstanceOf(ProtocolError)
    expect(refusal).toMatchObject({ code: 'RATE_LIMITED', retryable: true, details: { policyName: 'message_rate', limit: 5 } })
  })

  it('refuses a connection beyond --max-connections-per-peer (HTTP 429) or --max-connections (HTTP 503) at the upgrade, with RATE_LIMITED', async () => {
    const dir = await dataDir()
    const server = await serve(dir, ['--max-connections', '3', '--max-connections-per-peer', '2'])
    const first = [opened(await raw(server.url)), opened(await raw(server.url))]
    const perPeer = await raw(server.url)
    expect(perPeer).toMatchObject({ status: 429, retryAfter: expect.stringMatching(/^\d+$/), error: { code: 'RATE_LIMITED', retryable: true } })
    // Another peer address still gets in, up to the global limit.
    const other = opened(await raw(server.url, '127.0.0.2'))
    expect(await raw(server.url, '127.0.0.3')).toMatchObject({ status: 503, error: { code: 'RATE_LIMITED', retryable: true } })
    // A closed connection frees its place.
    first[0]!.close()
    await server.waitLog((l) => l.msg === 'connection closed')
    const again = opened(await raw(server.url))
    for (const s of [first[1]!, other, again]) s.terminate()
    expect(server.log.filter((l) => l.msg === 'connection refused').map((l) => l['code'])).toEqual(['RATE_LIMITED', 'RATE_LIMITED'])
  })
})
