/**
 * What `weft serve` holds of refused input, through the real bin: megabyte-sized refused Commands
 * on the control endpoint leave the server's memory where it was (a bounded audit record, no
 * member kept whole) and are answered without the megabyte; a request body over the control
 * endpoint's limit is refused with HTTP 413 and the §19 error before the rest of it is read; on
 * the WebSocket binding a frame larger than the largest Command and 64 KiB closes its connection
 * unread (1009), and a connection's frames are read at `--max-frames-per-second` at most.
 */
import { execFile } from 'node:child_process'
import { request } from 'node:http'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { dataDir, groupOf, party, people, rawSession, removeTemporaryDirs, startServe, stop, type ServeProcess } from './serve-world.js'

const servers: ServeProcess[] = []
afterAll(async () => {
  await Promise.all(servers.filter((s) => s.child.exitCode === null).map((s) => stop(s, 'SIGKILL')))
  await removeTemporaryDirs()
})

async function serve(extra: readonly string[] = []): Promise<ServeProcess> {
  const server = await startServe(await dataDir(), extra)
  servers.push(server)
  return server
}

/** The resident set of the server process in MB. */
async function rssMb(server: ServeProcess): Promise<number> {
  const { stdout } = await promisify(execFile)('ps', ['-o', 'rss=', '-p', String(server.child.pid)])
  return Number(stdout.trim()) / 1024
}

/** The owner's `mission.cancel` with an `actionId` of `size` characters: under 1 MiB in all, refused by the Command schema. */
function hugeCommand(size: number, n: number): string {
  return JSON.stringify({
    protocolVersion: '0.1',
    actionId: `urn:weft:serve-test:action:${n}:${'x'.repeat(size)}`,
    actor: people.owner.actor,
    kind: 'mission.cancel',
    groupId: groupOf('bounds'),
    membershipEpoch: 1,
    correlationId: 'urn:weft:serve-test:correlation:1',
    issuedAt: new Date().toISOString(),
    payload: { reason: 'Not needed.' },
    signature: { algorithm: 'Ed25519', keyId: people.owner.key.keyId, createdAt: new Date().toISOString(), value: 'AA' },
  })
}

/** A POST of `body` to the control endpoint: its status and JSON answer. */
async function post(server: ServeProcess, body: string): Promise<{ status: number; text: string }> {
  const response = await fetch(new URL('/commands', server.controlUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  return { status: response.status, text: await response.text() }
}

/**
 * A POST declaring `declared` bytes of body (chunked when absent) that writes `sent` bytes and then
 * waits, never ending the body: resolves with the answer the server gives meanwhile.
 */
function partialPost(server: ServeProcess, sent: number, declared?: number): Promise<{ status: number; connection: string | undefined; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL('/commands', server.controlUrl), { method: 'POST', headers: declared === undefined ? {} : { 'content-length': String(declared) } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: JSON.parse(text) as Record<string, unknown> }))
    })
    // A socket closed under the request before any answer is a refusal without the §19 error.
    req.on('error', reject)
    req.setTimeout(20_000, () => req.destroy(new Error('no answer while the body was still coming')))
    req.write(Buffer.alloc(sent, 0x20))
  })
}

describe('weft serve under refused input', () => {
  // Three hundred megabyte POSTs, each parsed and refused: a time limit generous for a loaded machine.
  it('answers 300 refused Commands with megabyte actionIds without echoing them, and its memory stays flat', async () => {
    const server = await serve()
    const size = 1_000_000
    // Warm up: the first requests grow the heap to its working size.
    for (let i = 0; i < 20; i++) expect((await post(server, hugeCommand(size, i))).status).toBe(400)
    const before = await rssMb(server)
    for (let i = 20; i < 300; i++) {
      const answer = await post(server, hugeCommand(size, i))
      expect(answer.status).toBe(400)
      // §19: no relatedActionId that is no schema id, and nothing else of the megabyte either.
      expect(answer.text.length).toBeLessThan(2000)
      expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'SCHEMA_VALIDATION_FAILED' } })
    }
    const grown = (await rssMb(server)) - before
    // Kept whole, 280 actionIds of a megabyte hold some 280 MB; the bounded audit holds about 1 MB.
    expect(grown).toBeLessThan(120)
  }, 180_000)

  it('refuses a body over --max-control-body-bytes with 413 and the §19 error, declared or streamed, reading no further', async () => {
    const server = await serve(['--max-control-body-bytes', '65536', '--max-audit-entries', '5'])
    expect(server.log.find((l) => l.msg === 'listening')?.['limits']).toMatchObject({ maxControlBodyBytes: 65536, maxAuditEntries: 5 })
    const refused = { status: 413, connection: 'close', body: { error: { code: 'PROTOCOL_VIOLATION', retryable: false, details: { reason: 'body-too-large', maxBytes: 65536 } } } }
    // A declared length over the limit is refused before the body comes; a streamed body once it passes the limit.
    expect(await partialPost(server, 1024, 100 * 1024 * 1024)).toMatchObject(refused)
    expect(await partialPost(server, 70_000)).toMatchObject(refused)
    const whole = await post(server, hugeCommand(100_000, 0))
    expect([whole.status, whole.text.length < 2000]).toEqual([413, true])
    // A Command under the limit is still served.
    const p = party(server, groupOf('bounds'))
    const receipt = await p.owner.missionCancel({ reason: 'No such Mission.' }, { membershipEpoch: 1 }).catch((error: unknown) => error as { code?: string })
    expect(receipt).toMatchObject({ code: 'GROUP_NOT_FOUND' })
    await p.close()
  })

  it('handles --max-control-requests at once and refuses one more with 503 and a retryable RATE_LIMITED, its body unread', async () => {
    const server = await serve(['--max-control-requests', '2'])
    expect(server.log.find((l) => l.msg === 'listening')?.['limits']).toMatchObject({ maxControlRequests: 2 })
    // Two requests whose bodies never end hold both places.
    const held = [0, 1].map(() => {
      const req = request(new URL('/commands', server.controlUrl), { method: 'POST', headers: { 'content-length': '500000' } })
      req.on('error', () => undefined)
      req.write(Buffer.alloc(1000, 0x20))
      return req
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    const refused = await partialPost(server, 10, 500_000)
    expect(refused).toMatchObject({ status: 503, connection: 'close', body: { error: { code: 'RATE_LIMITED', retryable: true, retryAfterMs: 1000, details: { maxConcurrent: 2 } } } })
    for (const req of held) req.destroy()
    // Once they are gone, requests are served again.
    await expect.poll(async () => (await post(server, hugeCommand(10, 1))).status, { timeout: 10_000, interval: 100 }).toBe(400)
  })

  /** A COMMAND frame of worker1 whose Command carries a Message of `size` characters (unsigned: refused whatever else happens). */
  const commandFrame = (size: number): string =>
    JSON.stringify({
      protocolVersion: '0.1',
      frameId: `urn:weft:serve-test:frame:big-${size}`,
      frameType: 'COMMAND',
      command: {
        ...JSON.parse(hugeCommand(10, 0)),
        actor: people.worker1.actor,
        kind: 'message.post',
        payload: { messageId: 'urn:weft:serve-test:message:big', conversationId: 'urn:weft:serve-test:conversation:x', content: [{ type: 'text', text: 'z'.repeat(size) }] },
      },
    })

  it('closes a connection whose frame passes the largest Command and 64 KiB (1009), unread; --max-frame-bytes lets it be refused alone', async () => {
    const limit = 1024 * 1024 + 64 * 1024
    const server = await serve()
    expect(server.log.find((l) => l.msg === 'listening')?.['limits']).toMatchObject({ maxFrameBytes: limit, maxFramesPerSecond: 2000 })
    const session = await rawSession(server.url, 'worker1')
    session.socket.send(commandFrame(1_200_000))
    expect(await session.next()).toMatchObject({ frameType: 'ERROR', error: { code: 'PROTOCOL_VIOLATION', fatal: true, details: { reason: 'too-large', maxFrameBytes: limit } } })
    expect(await session.closed).toBe(1009)

    // Under a frame limit that lets it in, the same frame is one refused Command, and the session goes on.
    const roomy = await serve(['--max-frame-bytes', String(2 * 1024 * 1024)])
    const other = await rawSession(roomy.url, 'worker1')
    other.socket.send(commandFrame(1_200_000))
    const refusal = await other.next()
    // Read whole, the frame fails its schema (a Message text is bounded): that Command alone is refused.
    expect(refusal).toMatchObject({ frameType: 'ERROR', error: { code: 'SCHEMA_VALIDATION_FAILED' } })
    expect((refusal['error'] as { fatal?: boolean }).fatal).not.toBe(true)
    other.socket.send(JSON.stringify({ protocolVersion: '0.1', frameId: 'urn:weft:serve-test:frame:after', frameType: 'PING', nonce: 'AAAAAAAAAAAAAAAAAAAAAA', sentAt: '2026-07-15T00:00:00Z' }))
    expect(await other.next()).toMatchObject({ frameType: 'PING', replyToNonce: 'AAAAAAAAAAAAAAAAAAAAAA' })
    other.socket.close()
  })

  it('reads a PING flood at --max-frames-per-second: every PING answered, none faster than the allowance', async () => {
    const rate = 50
    const server = await serve(['--max-frames-per-second', String(rate)])
    expect(server.log.find((l) => l.msg === 'listening')?.['limits']).toMatchObject({ maxFramesPerSecond: rate })
    const session = await rawSession(server.url, 'worker1')
    // The handshake spent two frames of the first second's allowance; 150 more PINGs need two seconds at least.
    const count = 150
    const started = performance.now()
    for (let i = 0; i < count; i++)
      session.socket.send(
        JSON.stringify({ protocolVersion: '0.1', frameId: `urn:weft:serve-test:frame:ping-${i}`, frameType: 'PING', nonce: 'AAAAAAAAAAAAAAAAAAAAAA', sentAt: '2026-07-15T00:00:00Z' }),
      )
    await expect.poll(() => session.frames.length, { timeout: 30_000, interval: 20 }).toBe(count)
    const elapsed = performance.now() - started
    expect(session.frames.every((f) => f.frameType === 'PING')).toBe(true)
    expect(elapsed).toBeGreaterThanOrEqual(((count - rate) / rate) * 1000 - 100)
    session.socket.close()
  })
})
