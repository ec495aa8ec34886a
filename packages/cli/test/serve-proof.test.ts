/**
 * `weft serve` proves its stored log before it serves it (§6.4, §15.2, §16): a data directory whose
 * `authority.db` was edited after a clean stop (one letter of a Message, the member of a
 * `membership.changed` swapped for an outsider, a middle Event deleted, the tail dropped), or whose
 * WAL was lost after a kill, refuses to start with one line naming the Group, the sequence and the
 * failed check, and exit code 3; `weft inspect --verify` reports the same line; an unmodified log
 * opens. Real processes throughout: the server and inspect run through the `weft` bin's command
 * line, and the file is edited with better-sqlite3 between runs, as an attacker would.
 */
import { cp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Receipt } from '@weft/client'
import { connectWebSocket } from '@weft/client/wire'
import type { Event, EventPayload } from '@weft/spec'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { STORE_FILE } from '../src/serve/organization.js'
import { runWeft, type WeftRun } from './cli-run.js'
import { dataDir, groupOf, openMission, party, people, removeTemporaryDirs, startServe, stop, temporaryDir, type LogLine } from './serve-world.js'

const GROUP = groupOf('proof')
const OUTSIDER = 'urn:weft:serve-test:agent:outsider'

const serveArgs = (dir: string): string[] => ['serve', '--data', dir, '--port', '0', '--insecure-loopback']

/** The stderr of a refused run: exactly one line, not a JSON log line and no stack trace. */
function oneLine(run: WeftRun): string {
  const lines = run.stderr.split('\n').filter((l) => l !== '')
  expect(lines, run.stderr).toHaveLength(1)
  return lines[0]!
}

/** The data directory of the clean run, copied for each case. */
let clean: string
/** The stored Events of the Group, by sequence, as the clean run left them. */
let stored: { sequence: number; kind: string; body: string }[]

beforeAll(async () => {
  clean = await dataDir()
  const server = await startServe(clean)
  const p = party(server, GROUP)
  const created: Receipt = await openMission(p, await p.connect('coordinator'), 'proof')
  const conversationId = (created.events[0]!.payload as EventPayload<'mission.created'>).conversation.conversationId
  const worker = await p.connect('worker1')
  for (let n = 1; n <= 4; n++) {
    const messageId = `urn:weft:serve-test:message:proof-${n}`
    await worker.messagePost({ messageId, conversationId, content: [{ type: 'text', text: `Hello ${n}.` }] })
  }
  await p.close()
  expect(await stop(server, 'SIGTERM')).toEqual({ code: 0, signal: null })
  const db = new Database(join(clean, STORE_FILE), { readonly: true })
  stored = db.prepare('SELECT sequence, kind, body FROM events WHERE group_id = ? ORDER BY sequence').all(GROUP) as typeof stored
  db.close()
}, 60_000)

afterAll(removeTemporaryDirs)

/** A copy of the clean data directory, with `edit` run on its database (immutability triggers dropped first, as an attacker would). */
async function tampered(edit: (db: Database.Database) => void): Promise<string> {
  const dir = await temporaryDir()
  await cp(clean, dir, { recursive: true })
  const db = new Database(join(dir, STORE_FILE))
  db.exec('DROP TRIGGER events_immutable_update; DROP TRIGGER events_immutable_delete')
  edit(db)
  db.close()
  return dir
}

/** The sequence of the first stored Event of `kind` whose body contains `text`. */
function sequenceOf(kind: string, text: string): number {
  const row = stored.find((e) => e.kind === kind && e.body.includes(text))
  if (row === undefined) throw new Error(`no ${kind} holding ${text}`)
  return row.sequence
}

function replaceIn(db: Database.Database, sequence: number, from: string, to: string): void {
  const body = db.prepare('SELECT body FROM events WHERE group_id = ? AND sequence = ?').pluck().get(GROUP, sequence) as string
  expect(body).toContain(from)
  db.prepare('UPDATE events SET body = ? WHERE group_id = ? AND sequence = ?').run(body.replace(from, to), GROUP, sequence)
}

/** Starts the server and runs `inspect --verify` on `dir`: both refuse with the same line, which matches `expected`. */
async function expectRefused(dir: string, expected: RegExp): Promise<void> {
  const [served, inspected] = [await runWeft(serveArgs(dir)), await runWeft(['inspect', '--data', dir, '--verify'])]
  expect(served.listening, served.stderr).toBe(false)
  expect(served.code, served.stderr).toBe(3)
  const line = oneLine(served)
  expect(line).toMatch(/^weft serve: /)
  expect(line).toMatch(expected)
  expect(inspected.code, inspected.stderr).toBe(3)
  expect(oneLine(inspected)).toBe(line.replace(/^weft serve: /, 'weft inspect: '))
}

/** The check of an Event edited after a clean stop: the state checkpoint's chain covers it (`log-proof.ts`). */
const CHANGED = "the Event's text does not match its stored chain hash: it was changed after it was stored$"

const at = (sequence: number, check: string): RegExp => new RegExp(`^weft serve: the log of group ${GROUP.replaceAll('.', '\\.')} fails its proof at sequence ${sequence}: ${check}`)

describe('weft serve over a tampered or damaged authority.db', () => {
  it('opens an unmodified log, and inspect --verify passes it', async () => {
    const dir = await tampered(() => {})
    const served = await runWeft(serveArgs(dir))
    expect(served.listening, served.stderr).toBe(true)
    expect(served.code).toBe(0)
    const inspected = await runWeft(['inspect', '--data', dir, '--verify'])
    expect(inspected.code, inspected.stderr).toBe(0)
    expect(inspected.stdout).toMatch(/^log verified: \d+ Events in 1 Group and the Organization log/)
  }, 60_000)

  it('refuses a Message with one letter changed', async () => {
    const sequence = sequenceOf('message.posted', 'Hello 2.')
    await expectRefused(await tampered((db) => replaceIn(db, sequence, 'Hello 2.', 'Hallo 2.')), at(sequence, CHANGED))
  }, 60_000)

  it('refuses a membership.changed whose member was swapped for an outsider', async () => {
    const sequence = sequenceOf('membership.changed', people.worker1.actor.id)
    await expectRefused(await tampered((db) => replaceIn(db, sequence, `"id":"${people.worker1.actor.id}"`, `"id":"${OUTSIDER}"`)), at(sequence, CHANGED))
  }, 60_000)

  it('refuses a log with a middle Event deleted', async () => {
    const sequence = sequenceOf('message.posted', 'Hello 1.')
    await expectRefused(
      await tampered((db) => db.prepare('DELETE FROM events WHERE group_id = ? AND sequence = ?').run(GROUP, sequence)),
      at(sequence, `the Event is missing \\(the next one stored is sequence ${sequence + 1}\\)$`),
    )
  }, 60_000)

  it('refuses a log whose tail was dropped', async () => {
    const head = stored.length
    await expectRefused(
      await tampered((db) => db.prepare('DELETE FROM events WHERE group_id = ? AND sequence > ?').run(GROUP, head - 2)),
      at(head - 1, `the Event is missing: the state checkpoint signed the log through sequence ${head}$`),
    )
  }, 60_000)

  it('refuses a log whose WAL was lost after a kill: the head file remembers what was acknowledged', async () => {
    const dir = await tampered(() => {})
    const server = await startServe(dir)
    const p = party(
      server,
      GROUP,
      stored.map((e) => JSON.parse(e.body) as Event),
    )
    const worker = await p.connect('worker1')
    const conversationId = (JSON.parse(stored[0]!.body) as { payload: EventPayload<'mission.created'> }).payload.conversation.conversationId
    let last: Receipt | undefined
    for (let n = 5; n <= 7; n++) last = await worker.messagePost({ messageId: `urn:weft:serve-test:message:proof-${n}`, conversationId, content: [{ type: 'text', text: `Hello ${n}.` }] })
    await p.close()
    // The acknowledged Commands live in the WAL until SQLite checkpoints it; a kill leaves them there.
    expect(await stop(server, 'SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' })
    await rm(join(dir, `${STORE_FILE}-wal`), { force: true })
    await rm(join(dir, `${STORE_FILE}-shm`), { force: true })
    await expectRefused(dir, at(stored.length + 1, `the Event is missing: the head file remembers sequence ${last!.events[0]!.sequence} as acknowledged$`))
  }, 60_000)
})

describe('weft inspect and weft serve on a damaged file or a missing directory', () => {
  it('print one line each, never a stack trace', async () => {
    const dir = await tampered(() => {})
    const path = join(dir, STORE_FILE)
    await writeFile(path, Buffer.alloc(8192, 0x5a))
    for (const args of [['inspect', '--data', dir], ['inspect', '--data', dir, '--verify'], serveArgs(dir)]) {
      const run = await runWeft(args)
      expect(run.code, run.stderr).toBe(3)
      expect(oneLine(run)).toBe(`weft ${args[0]}: the database ${path} fails its proof: file is not a database`)
    }
    const missing = join(dir, 'no-such-dir')
    const run = await runWeft(['inspect', '--data', missing, '--verify'])
    expect(run.code, run.stderr).toBe(2)
    expect(oneLine(run)).toMatch(/^weft inspect: .*no-such-dir/)
  }, 60_000)
})

describe('weft serve answering INTERNAL_ERROR', () => {
  it('logs the cause of every INTERNAL_ERROR it answers, on one JSON line', async () => {
    const dir = await tampered(() => {})
    const server = await startServe(dir)
    const conn = await connectWebSocket({ url: server.url, actor: people.worker1.actor, signingKey: people.worker1.key, reconnect: false, heartbeatMs: 0 })
    // The file is damaged under the running server: a Message's stored text is no longer JSON.
    const db = new Database(join(dir, STORE_FILE))
    db.prepare('UPDATE events SET body = substr(body, 1, 40) WHERE group_id = ? AND sequence = ?').run(GROUP, sequenceOf('message.posted', 'Hello 3.'))
    db.close()
    const refused = new Promise<string>((resolve) => conn.feed.subscribe([{ groupId: GROUP, afterSequence: 0 }], { onEvent: () => {}, onError: (error) => resolve(error.code) }))
    expect(await refused).toBe('INTERNAL_ERROR')
    const line: LogLine = await server.waitLog((l) => l.level === 'error' && l.msg === 'internal error')
    expect(line).toMatchObject({ groupId: GROUP, agentId: people.worker1.actor.id })
    expect(String(line['cause'])).toMatch(/JSON/)
    await conn.close()
    expect(await stop(server, 'SIGTERM')).toEqual({ code: 0, signal: null })
  }, 60_000)
})
