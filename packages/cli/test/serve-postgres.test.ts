/**
 * Two `weft serve --postgres` processes on one database and schema (§15.2, §16, §17), started
 * through the real command line and reached over real sockets: a subscriber on one server
 * receives, live and without a gap, what the other accepted; clients of both racing on one Group
 * leave one contiguous log holding every acknowledged receipt once; `kill -9` of one server under
 * load loses no acknowledged Event while the other keeps serving; an ACK Cursor stored through one
 * server is where a subscriber resumes on the other. Each test has a schema of its own.
 */
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import type { Client, Receipt } from '@weft/client'
import { connectWebSocket, type WebSocketConnection } from '@weft/client/wire'
import { ProtocolError } from '@weft/codec'
import type { Event, EventPayload } from '@weft/spec'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { main, type CliIo } from '../src/bin.js'
import type { Inspection } from '../src/serve/inspect.js'
import { STORE_FILE } from '../src/serve/organization.js'
import { checkLog, dataDir, groupOf, openMission, party, people, postLoad, removeTemporaryDirs, stop, type LogLine, type Party, type ServeProcess, type Who } from './serve-world.js'
import { freshSchema, mergeLoads, postMany, runWeft, startServePostgres, storedCursor, storedLog, testServer, until } from './serve-postgres-world.js'

let db: ReturnType<typeof testServer>
const servers: ServeProcess[] = []
const parties: Party[] = []
const connections: WebSocketConnection[] = []

beforeAll(() => {
  db = testServer()
})
afterEach(async () => {
  await Promise.all(connections.splice(0).map((c) => c.close()))
  await Promise.all(parties.splice(0).map((p) => p.close()))
  await Promise.all(servers.splice(0).map((s) => (s.child.exitCode === null && s.child.signalCode === null ? stop(s, 'SIGKILL') : undefined)))
})
afterAll(async () => {
  await removeTemporaryDirs()
  db?.stop()
})

/** Two servers started at the same time on one fresh schema, for one data directory's Organization. */
async function pair(): Promise<{ dir: string; schema: string; a: ServeProcess; b: ServeProcess }> {
  const dir = await dataDir()
  const schema = freshSchema()
  const [a, b] = await Promise.all([startServePostgres(dir, db.url, schema), startServePostgres(dir, db.url, schema)])
  servers.push(a, b)
  return { dir, schema, a, b }
}

/** A {@link Party} on `server` for `groupId` that learns the epochs of the stored log first. */
async function partyOn(server: ServeProcess, schema: string, groupId: string): Promise<Party> {
  const p = party(server, groupId, await storedLog(db.url, schema, groupId))
  parties.push(p)
  return p
}

/** The Main Conversation of a Group, from its stored `mission.created`. */
function conversationOf(log: readonly Event[]): string {
  return (log[0]!.payload as EventPayload<'mission.created'>).conversation.conversationId
}

/** Connects `who` as a subscriber only: its Events, in arrival order. */
async function subscriber(server: ServeProcess, who: Exclude<Who, 'owner'>, groupId: string, afterSequence: number): Promise<{ conn: WebSocketConnection; got: Event[] }> {
  const conn = await connectWebSocket({ url: server.url, actor: people[who].actor, signingKey: people[who].key, reconnect: false, heartbeatMs: 0 })
  connections.push(conn)
  const got: Event[] = []
  conn.feed.subscribe([{ groupId, afterSequence }], { onEvent: (event) => void got.push(event) })
  return { conn, got }
}

const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i)
const sequences = (events: readonly Event[]): number[] => events.map((e) => e.sequence!)

describe('weft serve --postgres: two processes on one log', () => {
  it("start together, register each Agent Card once, and hand a subscriber on one the other's Events live, without a gap", { timeout: 120_000 }, async () => {
    const GROUP = groupOf('live')
    const { dir, schema, a, b } = await pair()
    // §6.1: a card the other process registered first is no failure; each is registered once.
    const registered = [...a.log, ...b.log].filter((l) => l.msg === 'agent card registered').map((l) => l['agentId'])
    expect(registered.sort()).toEqual([people.coordinator, people.reviewer, people.worker1, people.worker2].map((x) => x.actor.id).sort())
    for (const server of [a, b]) expect(server.log.find((l) => l.msg === 'store opened')).toMatchObject({ backend: 'postgres', schema, database: expect.stringContaining('127.0.0.1') })
    expect(existsSync(join(dir, STORE_FILE))).toBe(false)

    const onB = await partyOn(b, schema, GROUP)
    await openMission(onB, await onB.connect('coordinator'), 'live')
    const { got } = await subscriber(a, 'worker2', GROUP, 0)
    const worker1 = await onB.connect('worker1')
    const conversationId = conversationOf(await storedLog(db.url, schema, GROUP))
    const posted: Receipt[] = []
    for (let n = 0; n < 20; n++) posted.push(await worker1.messagePost({ messageId: `urn:weft:serve-test:message:live-${n}`, conversationId, content: [{ type: 'text', text: `Live ${n}.` }] }))
    const head = posted.at(-1)!.events[0]!.sequence!
    await until(() => got.at(-1)?.sequence === head)
    // Every Event the subscriber may see, once each, in the Group's order: exactly the stored log from its first one.
    const log = await storedLog(db.url, schema, GROUP)
    expect(sequences(got)).toEqual(range(got[0]!.sequence!, head))
    expect(got.map((e) => e.eventId)).toEqual(log.slice(got[0]!.sequence! - 1).map((e) => e.eventId))
    expect(posted.flatMap((r) => r.events.map((e) => e.eventId)).every((id) => got.some((e) => e.eventId === id))).toBe(true)
    // Delivered by a and accepted by b: a's log shows b's Commands as none of its own.
    expect(a.log.filter((l) => l.msg === 'command accepted' && l['kind'] === 'message.post')).toEqual([])
  })

  it('race Commands from clients of both servers to one Group: one contiguous log, every acknowledged receipt once', { timeout: 120_000 }, async () => {
    const GROUP = groupOf('race')
    const { dir, schema, a, b } = await pair()
    const onA = await partyOn(a, schema, GROUP)
    await openMission(onA, await onA.connect('coordinator'), 'race')
    const onB = await partyOn(b, schema, GROUP)
    const [wA, wB] = [await onA.connect('worker1'), await onB.connect('worker2')]
    const conversationId = conversationOf(await storedLog(db.url, schema, GROUP))
    const loads = await Promise.all([postMany(wA, conversationId, 40), postMany(wB, conversationId, 40)])
    const log = await storedLog(db.url, schema, GROUP)
    checkLog(log, onA.receipts, mergeLoads(...loads))
    // The two servers' Commands interleave in the Group's order: they did race.
    const fromA = new Set(loads[0].acknowledged.keys())
    const order = log.filter((e) => e.kind === 'message.posted').map((e) => fromA.has(e.cause.id))
    expect(order.filter((mine, i) => i > 0 && mine !== order[i - 1]).length).toBeGreaterThan(1)

    // weft inspect reads the same log from the database while both servers run.
    const inspected = await runWeft('inspect', '--data', dir, '--postgres', db.url, '--pg-schema', schema, '--group', GROUP, '--json')
    expect({ code: inspected.code, stderr: inspected.stderr }).toEqual({ code: 0, stderr: '' })
    const report = (JSON.parse(inspected.stdout) as Inspection).groups[0]!
    expect([report.groupId, report.head, report.events.map((e) => e.sequence)]).toEqual([GROUP, log.length, range(1, log.length)])
  })

  it('loses no acknowledged Event when one server is killed with SIGKILL under load, while the other keeps serving', { timeout: 180_000 }, async () => {
    const GROUP = groupOf('kill')
    const { dir, schema, a, b } = await pair()
    const onA = await partyOn(a, schema, GROUP)
    await openMission(onA, await onA.connect('coordinator'), 'kill')
    const known = [...onA.receipts]
    const onB = await partyOn(b, schema, GROUP)
    const [wA, wB] = [await onA.connect('worker1'), await onB.connect('worker2')]
    const conversationId = conversationOf(await storedLog(db.url, schema, GROUP))

    let killed = false
    const [onKilled, duringKill] = await Promise.all([
      postLoad(wA, conversationId, (n) => {
        if (n < 30 || killed) return
        killed = true
        a.child.kill('SIGKILL')
      }),
      postMany(wB, conversationId, 60),
    ])
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' })
    expect(onKilled.refused).toEqual(new Map())
    // The other server went on: everything sent to it was accepted, and it takes more.
    const after = await postMany(wB, conversationId, 8)
    const before = await storedLog(db.url, schema, GROUP)
    const landed = checkLog(before, known, mergeLoads(onKilled, duringKill, after))

    // The killed server comes back on the same log; an unchanged resend of an unanswered Command
    // answers its original receipt if it landed, and is fenced (its Session Epoch is gone) if not (§15.1).
    const restarted = await startServePostgres(dir, db.url, schema)
    servers.push(restarted)
    expect(restarted.log.find((l) => l.msg === 'store opened')).toMatchObject({ groups: 1, groupEvents: before.length })
    const again = await partyOn(restarted, schema, GROUP)
    const worker = await again.connect('worker1')
    for (const id of onKilled.unanswered) {
      const answer = await worker.resend(onKilled.sent.get(id)!).then(
        (receipt) => receipt,
        (error: unknown) => error as ProtocolError,
      )
      if (landed.has(id)) {
        expect(answer).toMatchObject({ duplicate: true, actionId: id })
        onKilled.acknowledged.set(id, answer as Receipt)
      } else expect(answer).toMatchObject({ code: 'AUTH_STALE_SESSION' })
    }
    const next = await worker.messagePost({ messageId: 'urn:weft:serve-test:message:kill-after', conversationId, content: [{ type: 'text', text: 'Back.' }] })
    expect(next.events.map((e) => e.sequence)).toEqual([before.length + 1])
    checkLog(await storedLog(db.url, schema, GROUP), [...known, next], mergeLoads(onKilled, duringKill, after))
  })

  it('keeps an ACK Cursor stored through one server, from which a subscriber resumes on the other', { timeout: 120_000 }, async () => {
    const GROUP = groupOf('ack')
    const { schema, a, b } = await pair()
    const onA = await partyOn(a, schema, GROUP)
    await openMission(onA, await onA.connect('coordinator'), 'ack')
    const poster: Client = await onA.connect('worker1')
    const conversationId = conversationOf(await storedLog(db.url, schema, GROUP))
    await postMany(poster, conversationId, 6)
    const head = (await storedLog(db.url, schema, GROUP)).length

    const first = await subscriber(a, 'worker2', GROUP, 0)
    await until(() => first.got.at(-1)?.sequence === head)
    const acked = head - 3
    first.conn.feed.ack(GROUP, acked)
    // §16: the Cursor is durable once the server's write-through committed it.
    await until(async () => (await storedCursor(db.url, schema, people.worker2.actor.id, GROUP)) === acked)
    await first.conn.close()

    // Committed on the other server while the subscriber is away.
    const onB = await partyOn(b, schema, GROUP)
    await postMany(await onB.connect('reviewer'), conversationId, 4)
    const cursor = (await storedCursor(db.url, schema, people.worker2.actor.id, GROUP))!
    const second = await subscriber(b, 'worker2', GROUP, cursor)
    const later = (await storedLog(db.url, schema, GROUP)).length
    await until(() => second.got.at(-1)?.sequence === later)
    expect(sequences(second.got)).toEqual(range(acked + 1, later))
    // Then live: a Command accepted by the first server reaches the subscriber on the second.
    await poster.messagePost({ messageId: 'urn:weft:serve-test:message:ack-live', conversationId, content: [{ type: 'text', text: 'Live.' }] })
    await until(() => second.got.at(-1)?.sequence === later + 1)
    expect(sequences(second.got)).toEqual(range(acked + 1, later + 1))

    // An ACK on the second server moves the same Cursor; it survives that server's graceful stop.
    second.conn.feed.ack(GROUP, later + 1)
    // Frames are handled in order: once the server logged the close, it has taken the ACK.
    const closes = (): number => b.log.filter((l) => l.msg === 'connection closed' && l['agentId'] === people.worker2.actor.id).length
    const closedBefore = closes()
    await second.conn.close()
    await until(() => closes() > closedBefore)
    expect(await stop(b, 'SIGTERM')).toEqual({ code: 0, signal: null })
    expect(await storedCursor(db.url, schema, people.worker2.actor.id, GROUP)).toBe(later + 1)
  })
})

describe('weft serve --postgres options', () => {
  /** Runs `weft …` in this process (only for what fails before the database is reached). */
  async function weft(...argv: string[]): Promise<{ code: number; err: string }> {
    let err = ''
    const io: CliIo = { stdout: () => undefined, stderr: (t) => void (err += t), interactive: false }
    return { code: await main(argv, io), err }
  }

  it('refuses a bad URL, a bad schema name and --pg-schema alone with exit code 2', { timeout: 60_000 }, async () => {
    const dir = await dataDir()
    const cases: [string[], string][] = [
      [['serve', '--data', dir, '--postgres', 'mysql://db/weft'], '--postgres must be a postgres:// connection URL, got a mysql: URL'],
      [['serve', '--data', dir, '--postgres', 'not a url'], '--postgres must be a postgres:// connection URL'],
      [['serve', '--data', dir, '--pg-schema', 'weft'], '--pg-schema goes with --postgres URL'],
      [['inspect', '--data', dir, '--pg-schema', 'weft'], '--pg-schema goes with --postgres URL'],
    ]
    for (const [argv, message] of cases) {
      const { code, err } = await weft(...argv)
      expect([argv.join(' '), code]).toEqual([argv.join(' '), 2])
      expect(err).toContain(message)
    }
    const badSchema = await runWeft('serve', '--data', dir, '--postgres', db.url, '--pg-schema', 'Robert"; DROP', '--port', '0', '--insecure-loopback')
    expect(badSchema.code).toBe(2)
    expect(badSchema.stderr).toContain('--pg-schema: schema must match')
  })

  it('answers an unreachable database with a clear error and exit code 1, the password left out', { timeout: 60_000 }, async () => {
    const dir = await dataDir()
    const port = await closedPort()
    const url = `postgres://weft:s3cret@127.0.0.1:${port}/weft`
    const served = await runWeft('serve', '--data', dir, '--postgres', url, '--port', '0', '--insecure-loopback')
    expect(served.code).toBe(1)
    const lines = served.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as LogLine)
    expect(lines.at(-1)).toMatchObject({
      level: 'error',
      msg: 'failed to start',
      detail: expect.stringMatching(new RegExp(`^the PostgreSQL database postgres://weft:\\*\\*\\*@127\\.0\\.0\\.1:${port}/weft \\(schema weft\\) cannot be used: .*ECONNREFUSED`)),
    })
    expect(served.stderr).not.toContain('s3cret')
    const inspected = await runWeft('inspect', '--data', dir, '--postgres', url)
    expect(inspected.code).toBe(1)
    expect(inspected.stderr).toMatch(/^weft inspect: the PostgreSQL database postgres:\/\/weft:\*\*\*@.* cannot be read: .*ECONNREFUSED.*\n$/)
    // A schema without a log is a usage error, and inspection creates nothing.
    const empty = await runWeft('inspect', '--data', dir, '--postgres', db.url, '--pg-schema', freshSchema())
    expect(empty.code).toBe(2)
    expect(empty.stderr).toMatch(/holds no Authority log/)
  })
})

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}
