/**
 * Crash safety: a child process appends transactions and prints each one after its append
 * returned; it is killed with SIGKILL mid-stream. Reopened, the file must hold every printed
 * transaction exactly once with its Events and its receipt, at most the one append the kill
 * interrupted after its commit besides, and contiguous Group logs (§15.1, §15.2).
 *
 * WEFT_CRASH_COMMITS sets how many printed commits the test waits for before the kill (default 200).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSqliteAuthorityStore, type Synchronous } from '../src/index.js'
import { runUntilKilled } from './files.js'
import { scenarioLog } from '@weft/testkit/store-log'

const COMMITS = Number(process.env['WEFT_CRASH_COMMITS'] ?? 200)

let dir: string
let templates: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'weft-crash-'))
  templates = join(dir, 'templates.json')
  writeFileSync(templates, JSON.stringify(await scenarioLog()))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Runs the child on `file` until it has printed {@link COMMITS} lines, kills it, and returns every line it printed. */
function appendUntilKilled(file: string, synchronous: Synchronous): Promise<{ lines: string[]; signal: NodeJS.Signals | null; stderr: string }> {
  return runUntilKilled('crash-child.mjs', [file, templates, synchronous], COMMITS)
}

describe.each(['full', 'normal'] as const)('a store at synchronous %s killed with SIGKILL mid-append', (synchronous) => {
  it('keeps every printed transaction exactly once, with its Events, and contiguous Group logs', async () => {
    const file = join(dir, `${synchronous}.db`)
    const { lines, signal, stderr } = await appendUntilKilled(file, synchronous)
    expect({ signal, stderr }).toEqual({ signal: 'SIGKILL', stderr: '' })
    expect(lines.length).toBeGreaterThanOrEqual(COMMITS)

    const store = openSqliteAuthorityStore(file)
    const db = new Database(file, { readonly: true })
    const actorOf = new Map(db.prepare('SELECT action_id, actor_key FROM receipts').raw().all() as [string, string][])
    const printed = lines.map((line) => line.split(' ') as [string, string])
    const missing = printed.filter(([actionId, count]) => {
      const receipt = store.receipt(actorOf.get(actionId) ?? '', actionId)
      const n = actionId.split(':').at(-1)
      return receipt?.events.length !== Number(count) || receipt.events.some((e, i) => e.eventId !== `urn:weft:crash:event:${n}:${i}`)
    })
    expect(missing).toEqual([])

    // Every stored transaction is one the child started: the printed ones, plus at most the one
    // whose append had returned when the kill arrived before its line was written.
    const numbers = [...actorOf.keys()].map((a) => Number(a.split(':').at(-1))).sort((a, b) => a - b)
    expect(numbers).toEqual(numbers.map((_, i) => i + 1))
    expect(numbers.length - printed.length).toBeGreaterThanOrEqual(0)
    expect(numbers.length - printed.length).toBeLessThanOrEqual(1)
    // No Event without its receipt, none twice, and every Group log runs 1, 2, 3, ...
    expect(db.prepare('SELECT count(*) FROM events').pluck().get()).toBe(db.prepare('SELECT sum(event_count) FROM receipts').pluck().get())
    const groups = db.prepare('SELECT group_id, count(*), min(sequence), max(sequence) FROM events WHERE group_id IS NOT NULL GROUP BY group_id').raw().all() as [string, number, number, number][]
    expect(groups.length).toBeGreaterThanOrEqual(2)
    for (const [groupId, count, min, max] of groups) expect([groupId, min, max]).toEqual([groupId, 1, count])
    db.close()
    store.close()
  })
})
