/**
 * The test world of `weft serve --postgres`: a PostgreSQL server, `weft serve` processes on one
 * database and schema started through the real command line, and reads of the shared database.
 *
 * The vitest process of this package resolves `pg` under conditions that break it, so nothing here
 * loads `pg` in the test process: servers and `weft inspect` run as child processes, and the
 * database is read by a small child script (`postgres-query.mjs`).
 */
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import type { Client } from '@weft/client'
import type { Event } from '@weft/spec'
import { testServer } from '../../store-postgres/test/pg-server.js'
import { startServe, WEFT, type Load, type ServeProcess } from './serve-world.js'
export { until } from '../../store-postgres/test/pg-server.js'

const CLI = fileURLToPath(new URL('..', import.meta.url))

export { testServer }

/** A schema name no other test uses: each test gets an empty log. */
export function freshSchema(): string {
  return `serve_${randomBytes(6).toString('hex')}`
}

/**
 * Starts `weft serve --data dir --postgres url --pg-schema schema` on free loopback ports (plain
 * `ws`, with a control endpoint) and resolves once it logs `listening`; rejects with its stderr
 * when it exits first.
 */
export function startServePostgres(dir: string, url: string, schema: string): Promise<ServeProcess> {
  return startServe(dir, ['--postgres', url, '--pg-schema', schema])
}

/** Runs `weft …args` to its end as a child process. */
export function runWeft(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...WEFT, ...args], { cwd: CLI }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr })
    })
  })
}

/** The rows of one SQL statement on the database at `url`. */
export function pgQuery<T>(url: string, sql: string, params: readonly unknown[] = []): Promise<T[]> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['test/postgres-query.mjs', url, sql, JSON.stringify(params)], { cwd: CLI }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${sql}: ${stderr || error.message}`))
      else resolve(JSON.parse(stdout) as T[])
    })
  })
}

/** The Group's Events as stored in the shared log of `schema`, in sequence order. */
export async function storedLog(url: string, schema: string, groupId: string): Promise<Event[]> {
  const rows = await pgQuery<{ body: string }>(url, `SELECT body FROM "${schema}".events WHERE group_id = $1 ORDER BY sequence`, [groupId])
  return rows.map((r) => JSON.parse(r.body) as Event)
}

/** The stored ACK Cursor of Agent `agentId` in `groupId`, or `undefined`. */
export async function storedCursor(url: string, schema: string, agentId: string, groupId: string): Promise<number | undefined> {
  const rows = await pgQuery<{ sequence: number }>(url, `SELECT sequence::int FROM "${schema}".cursors WHERE subscriber = $1 AND group_id = $2`, [`agent:${agentId}`, groupId])
  return rows[0]?.sequence
}

/**
 * Posts `count` Messages in `conversationId` as `client`, four in flight at a time, every one
 * expected to be accepted; the {@link Load} `checkLog` of `serve-world.ts` checks against the log.
 */
export async function postMany(client: Client, conversationId: string, count: number): Promise<Load> {
  const load: Load = { sent: new Map(), acknowledged: new Map(), unanswered: new Set(), refused: new Map() }
  const tag = randomBytes(4).toString('hex')
  const built = Array.from({ length: count }, (_, n) =>
    client.build('message.post', { messageId: `urn:weft:serve-test:message:${tag}-${n}`, conversationId, content: [{ type: 'text', text: `Load ${tag} ${n}.` }] }),
  )
  for (const b of built) load.sent.set(b.command.actionId, b)
  for (let at = 0; at < count; at += 4) {
    for (const receipt of await Promise.all(built.slice(at, at + 4).map((b) => client.resend(b)))) load.acknowledged.set(receipt.actionId, receipt)
  }
  return load
}

/** One {@link Load} of several, for `checkLog`. */
export function mergeLoads(...loads: readonly Load[]): Load {
  const all: Load = { sent: new Map(), acknowledged: new Map(), unanswered: new Set(), refused: new Map() }
  for (const load of loads) {
    for (const [id, built] of load.sent) all.sent.set(id, built)
    for (const [id, receipt] of load.acknowledged) all.acknowledged.set(id, receipt)
    for (const id of load.unanswered) all.unanswered.add(id)
    for (const [id, code] of load.refused) all.refused.set(id, code)
  }
  return all
}
