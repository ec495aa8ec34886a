/**
 * The audit record and the answers of refused Commands stay bounded whatever the Commands carry
 * (§6.4: diagnostics are retained for auditors; §19: an answer names the related Action ID without
 * echoing what is not one): a ring of the newest entries, each with its texts cut and marked, the
 * bytes' hash instead of the bytes, and no megabyte sent back, in process and over the WebSocket
 * binding.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { sha256Tagged } from '@weft/codec'
import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_MAX_AUDIT_ENTRIES } from '../src/commit/pipeline.js'
import { MAX_ECHO_CHARS } from '../src/ingress/bounded.js'
import { cast, command, testClock, refusal, signed } from '@weft/testkit/fixtures'
import { bootstrap, inGroup, testAuthority } from './fixtures-pipeline.js'
import { rawSocket, wireWorld, type RawSocket, type WireWorld } from './wire-world.js'

/** Room for one entry's members at {@link MAX_ECHO_CHARS} characters each, their markers and the rest. */
const ENTRY_CHARS = 12 * (MAX_ECHO_CHARS + 24)

/** A `mission.cancel` of the owner whose envelope members are each `size` characters long (so the Command schema refuses it). */
function oversized(clock: ReturnType<typeof testClock>, tag: string, size: number): string {
  const long = (prefix: string): string => `${prefix}${tag}:${'x'.repeat(size)}`
  const doc = command('mission.cancel', { reason: 'r' }, cast.owner, inGroup(cast.owner), clock) as unknown as Record<string, unknown>
  return JSON.stringify({
    ...doc,
    actionId: long('urn:weft:test:action:'),
    kind: long('ext.huge.'),
    groupId: long('urn:weft:test:group:'),
    correlationId: long('urn:c:'),
    actor: { type: 'human', id: long('urn:weft:test:human:') },
  })
}

async function startedWith(options: { maxAuditEntries?: number } = {}) {
  const clock = testClock()
  const authority = testAuthority(clock, options)
  await bootstrap(authority, clock)
  return { clock, authority }
}

describe('the audit record of refused Commands', () => {
  it('keeps the newest maxAuditEntries, oldest first, each within a fixed size however large the Command', async () => {
    const { clock, authority } = await startedWith({ maxAuditEntries: 50 })
    const tags: string[] = []
    for (let i = 0; i < 120; i++) {
      tags.push(String(i))
      const error = await refusal(authority.submit(oversized(clock, String(i), 100_000)))
      expect(error.code).toBe('SCHEMA_VALIDATION_FAILED')
    }
    const audit = authority.audit()
    expect(audit).toHaveLength(50)
    expect(audit.map((a) => a.actionId!.split(':')[4])).toEqual(tags.slice(-50))
    expect(JSON.stringify(audit).length).toBeLessThan(50 * ENTRY_CHARS)
    const [last] = audit.slice(-1)
    expect(last).toMatchObject({ code: 'SCHEMA_VALIDATION_FAILED', stage: 'schema', actor: { type: 'human' } })
    expect(last!.actionId).toBe(`urn:weft:test:action:119:${'x'.repeat(MAX_ECHO_CHARS - 'urn:weft:test:action:119:'.length)}…[100025 chars]`)
    for (const member of ['kind', 'groupId', 'correlationId'] as const) expect(last![member]!.length).toBeLessThan(MAX_ECHO_CHARS + 24)
    expect(last!.actor!.id.length).toBeLessThan(MAX_ECHO_CHARS + 24)
  })

  it('keeps 10,000 entries by default, each with the hash of the bytes refused; 0 keeps none', async () => {
    const { clock, authority } = await startedWith()
    const bytes = oversized(clock, 'one', 150_000)
    await refusal(authority.submit(bytes))
    expect(authority.audit()).toHaveLength(1)
    expect(authority.audit()[0]!.bytesHash).toBe(sha256Tagged(new TextEncoder().encode(bytes)))
    expect(JSON.stringify(authority.audit()).length).toBeLessThan(ENTRY_CHARS)
    expect(DEFAULT_MAX_AUDIT_ENTRIES).toBe(10_000)
    const none = await startedWith({ maxAuditEntries: 0 })
    await refusal(none.authority.submit(oversized(none.clock, 'two', 10)))
    expect(none.authority.audit()).toEqual([])
    expect(() => testAuthority(clock, { maxAuditEntries: -1 })).toThrow(/maxAuditEntries/)
  })

  it('refuses input over maxCommandBytes at the size stage without reading it: no hash, no envelope', async () => {
    const { clock, authority } = await startedWith()
    // 1.2 million characters of text, as a flooding peer sends them.
    const bytes = oversized(clock, 'big', 240_000)
    const error = await refusal(authority.submit(bytes))
    expect(error.code).toBe('PROTOCOL_VIOLATION')
    const [entry] = authority.audit()
    expect(entry).toMatchObject({ code: 'PROTOCOL_VIOLATION', stage: 'size', reason: 'command-too-large', detail: `at least ${bytes.length} bytes` })
    expect(entry!.bytesHash).toBeUndefined()
    expect(entry!.actionId).toBeUndefined()
    // Within the limit, the same kind of input is hashed as before.
    await refusal(authority.submit(oversized(clock, 'small', 1000)))
    expect(authority.audit()[1]!.bytesHash).toMatch(/^sha256:[0-9a-f]{64}$/)
  })

  it('retains no storage of the refused Commands: the heap stays flat over a hundred megabyte-sized refusals', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const { clock, authority } = await startedWith()
    const heap = (): number => {
      gc()
      return process.memoryUsage().heapUsed
    }
    const before = heap()
    // Members past the schema's limits but under maxCommandBytes (1 MiB): each Command is read whole.
    for (let i = 0; i < 100; i++) await refusal(authority.submit(oversized(clock, String(i), 190_000)))
    expect(authority.audit()).toHaveLength(100)
    // Kept whole (or as slices of their source), the members would hold some 75 MB.
    expect((heap() - before) / 1e6).toBeLessThan(20)
  })
})

describe('the answer to a refused Command', () => {
  it('names the Action ID only when it is a schema id, and echoes no member whole', async () => {
    const { clock, authority } = await startedWith()
    const huge = await refusal(authority.submit(oversized(clock, 'echo', 150_000)))
    expect(huge.relatedActionId).toBeUndefined()
    expect(JSON.stringify(huge.toWire('2026-07-15T00:00:00Z')).length).toBeLessThan(2000)
    // A payload member whose name is 200k characters: the payload schema's issue points at it.
    const named = signed('mission.cancel', { reason: 'r', [`m${'y'.repeat(200_000)}`]: 1 } as never, cast.owner, inGroup(cast.owner), clock)
    const issues = await refusal(authority.submit(named))
    expect(issues.code).toBe('SCHEMA_VALIDATION_FAILED')
    expect(issues.relatedActionId).toMatch(/^urn:weft:test:action:/)
    expect(JSON.stringify(issues.details).length).toBeLessThan(8 * ENTRY_CHARS)
    expect(JSON.stringify(issues.details)).toContain('…[200')
    // Critical extensions by the hundred, each with a name of the longest id: the list is cut too.
    const extensions = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`urn:weft:test:profile:${i}:${'z'.repeat(450)}`, { version: '1.0.0', critical: true, data: {} }]))
    const critical = await refusal(authority.submit(signed('mission.cancel', { reason: 'r' }, cast.owner, inGroup(cast.owner, { extensions }), clock)))
    expect(critical.code).toBe('UNKNOWN_CRITICAL_EXTENSION')
    expect(JSON.stringify(critical.details).length).toBeLessThan(32 * (MAX_ECHO_CHARS + 40))
  })

  it('on the trusted path too, with the hash of the JSON text', async () => {
    const { clock, authority } = await startedWith()
    const doc = command('mission.cancel', { reason: 'r' }, cast.owner, inGroup(cast.owner, { groupId: `urn:weft:test:group:${'g'.repeat(1000)}` }), clock)
    expect(() => authority.submitTrusted(doc)).toThrow()
    const [entry] = authority.audit().slice(-1)
    expect(entry).toMatchObject({ code: 'SCHEMA_VALIDATION_FAILED', bytesHash: sha256Tagged(new TextEncoder().encode(JSON.stringify(doc))) })
    expect(entry!.groupId!.length).toBeLessThan(MAX_ECHO_CHARS + 24)
  })
})

describe('over the WebSocket binding', () => {
  let world: WireWorld | undefined
  afterEach(async () => {
    await world?.close()
    world = undefined
  })

  /** A raw socket with a session of worker1, and worker1's signed `message.post` text with `extra` payload members. */
  async function session(): Promise<{ raw: RawSocket; post: (extra: Record<string, unknown>, envelope?: Record<string, unknown>) => string }> {
    world = await wireWorld()
    const raw = await rawSocket(world.server.url)
    const accept = await raw.hello('worker1')
    if (accept.frameType !== 'HELLO' || accept.phase !== 'server_accept') throw new Error(`no session: ${JSON.stringify(accept)}`)
    const w = world.w
    const post = (extra: Record<string, unknown>, envelope: Record<string, unknown> = {}): string => {
      const payload = { messageId: `urn:weft:test:message:${w.fresh('bounded')}`, conversationId: w.group().group.mainConversationId, content: [{ type: 'text', text: 'hi' }], ...extra }
      const doc = command('message.post', payload as never, cast.worker1, { groupId: w.groupId, sessionEpoch: accept.sessionEpoch, membershipEpoch: 1 }, w.clock) as unknown as Record<string, unknown>
      return JSON.stringify({ protocolVersion: '0.1', frameId: `urn:weft:test:frame:${w.fresh('f')}`, frameType: 'COMMAND', command: { ...doc, ...envelope } })
    }
    return { raw, post }
  }

  it('answers a Command whose payload member name is 200k characters with a bounded ERROR, and audits it bounded', async () => {
    const { raw, post } = await session()
    const audited = world!.w.authority.audit().length
    const frame = post({ [`m${'y'.repeat(200_000)}`]: 1 })
    raw.send(frame)
    const refused = await raw.nextError('SCHEMA_VALIDATION_FAILED')
    expect(JSON.stringify(refused).length).toBeLessThan(8 * ENTRY_CHARS)
    expect(refused.error.relatedActionId).toMatch(/^urn:weft:test:action:/)
    expect(world!.w.authority.audit()).toHaveLength(audited + 1)
    expect(JSON.stringify(world!.w.authority.audit().at(-1)).length).toBeLessThan(ENTRY_CHARS)
  })

  it('answers a frame off its schema with bounded issues: an envelope member name of 200k characters is not echoed', async () => {
    const { raw, post } = await session()
    const audited = world!.w.authority.audit().length
    raw.send(post({}, { [`x${'q'.repeat(200_000)}`]: 1 }))
    const refused = await raw.nextError('SCHEMA_VALIDATION_FAILED')
    expect(JSON.stringify(refused).length).toBeLessThan(8 * ENTRY_CHARS)
    // Refused by the frame schema: the Authority never saw it, so there is nothing to audit.
    expect(world!.w.authority.audit()).toHaveLength(audited)
    // Over maxFrameBytes, the whole message is refused unread, fatally, with a fixed answer.
    raw.send(post({}, { actionId: `urn:weft:test:action:${'a'.repeat(3 * 1024 * 1024)}` }))
    const fatal = await raw.nextError('PROTOCOL_VIOLATION')
    expect([fatal.error.fatal, JSON.stringify(fatal).length < 1000]).toEqual([true, true])
    expect(world!.w.authority.audit()).toHaveLength(audited)
  })
})
