/**
 * The SQLite Worker store beyond the shared contract suite (worker-contract.test.ts): real signed
 * Events read back exactly, contiguity kept by the database itself (§16), ACKs and log starts
 * across clearProjectionLog (§8, §11.1), undefined side-effect results, and file kinds.
 */
import { UsageError } from '@weft/codec'
import type { Event } from '@weft/spec'
import Database from 'better-sqlite3'
import { beforeAll, describe, expect, it } from 'vitest'
import { openSqliteAuthorityStore, openSqliteWorkerStore } from '../src/index.js'
import { scenarioLog } from '@weft/testkit/store-log'
import { tempFiles } from './files.js'

const files = tempFiles('worker')
/** The test's main file. */
const file = (): string => files.path('worker.db')
/** Real Group Events by Group, from an Authority run. */
let logs: Map<string, Event[]>
let a: string
let b: string

beforeAll(async () => {
  logs = new Map()
  for (const t of await scenarioLog()) for (const e of t.events) if (e.groupId !== undefined) logs.set(e.groupId, [...(logs.get(e.groupId) ?? []), e])
  ;[a, b] = [...logs.keys()] as [string, string]
})

const first = (groupId: string, n: number): Event[] => (logs.get(groupId) as Event[]).slice(0, n)
const range = (groupId: string, from: number, to: number): Event[] => (logs.get(groupId) as Event[]).slice(from - 1, to)

describe('the SQLite Worker store: the Event log', () => {
  it('appends contiguous Events, advances the cursor, and reads windows of them', () => {
    const store = openSqliteWorkerStore(':memory:')
    expect([store.cursor(a), store.groups(), store.events(a)]).toEqual([0, [], []])
    store.appendEvents(a, first(a, 3))
    store.appendEvents(b, first(b, 2))
    store.appendEvents(a, range(a, 4, 6))
    expect([store.cursor(a), store.cursor(b), store.groups()]).toEqual([6, 2, [a, b]])
    expect(store.events(a)).toEqual(first(a, 6))
    expect(store.events(a, 2, 3).map((e) => e.sequence)).toEqual([3, 4, 5])
    expect(store.events(a, 6)).toEqual([])
    // Fresh objects per read: what one reader does to them never reaches the store or another reader.
    ;(store.events(a)[0]!.payload as Record<string, unknown>)['changed'] = true
    expect(store.events(a)).toEqual(first(a, 6))
    store.close()
  })

  it('keeps its log contiguous against raw SQL too (§16: no Cursor over a gap)', () => {
    const store = openSqliteWorkerStore(file())
    store.startAfter('late', 4)
    store.close()
    const db = new Database(file())
    const insert = (groupId: string, sequence: number) => db.prepare("INSERT INTO events (group_id, sequence, body) VALUES (?, ?, '{}')").run(groupId, sequence)
    expect(() => insert('g', 2)).toThrow(/does not continue/)
    insert('g', 1)
    expect(() => insert('g', 1)).toThrow()
    // A late joiner's log (§8) continues its visibility start, not sequence 1.
    expect(() => insert('late', 1)).toThrow(/does not continue its cursor 4/)
    insert('late', 5)
    db.close()
  })

  it('records ACKs without ever lowering them, and forgets logs and starts but not ACKs on clearProjectionLog', () => {
    const store = openSqliteWorkerStore(':memory:')
    store.appendEvents(a, first(a, 4))
    store.appendEvents(b, first(b, 2))
    store.setAcked(b, 2)
    store.setAcked(b, 1)
    store.setAcked(a, 0)
    expect([store.acked(a), store.acked(b), store.acked('urn:weft:test:group:none')]).toEqual([0, 2, 0])
    expect(() => store.setAcked(a, -1)).toThrow(UsageError)
    expect(() => store.setAcked(a, 1.5)).toThrow(UsageError)
    store.startAfter('urn:weft:test:group:late', 7)
    store.recordSideEffect('kept', { ok: true })
    store.clearProjectionLog()
    expect([store.cursor(a), store.cursor(b), store.cursor('urn:weft:test:group:late'), store.events(a), store.groups(), store.acked(b)]).toEqual([0, 0, 0, [], [b], 2])
    expect(store.sideEffect('kept')).toEqual({ result: { ok: true } })
    // A rebuild by replay starts again at sequence 1.
    store.appendEvents(a, first(a, 1))
    expect(store.groups()).toEqual([b, a])
    store.close()
  })
})

describe('the SQLite Worker store: side effects', () => {
  it('records each side effect once under its idempotency key (§16)', () => {
    const store = openSqliteWorkerStore(':memory:')
    expect(store.sideEffect('k1')).toBeUndefined()
    store.recordSideEffect('k1', { status: 201, id: 'x' })
    store.recordSideEffect('k2', null)
    store.recordSideEffect('k3', undefined)
    expect(() => store.recordSideEffect('k1', 'again')).toThrow(/already recorded/)
    expect([store.sideEffect('k1'), store.sideEffect('k2'), store.sideEffect('k3')]).toEqual([{ result: { status: 201, id: 'x' } }, { result: null }, { result: undefined }])
    store.close()
  })
})

describe('the SQLite Worker store across a reopen', () => {
  it('gives back real signed Events exactly as written', () => {
    const store = openSqliteWorkerStore(file())
    store.appendEvents(a, first(a, 5))
    store.appendEvents(b, first(b, 3))
    store.close()
    const reopened = openSqliteWorkerStore(file())
    expect([reopened.events(a), reopened.events(b)]).toEqual([first(a, 5), first(b, 3)])
    expect(reopened.events(a).map((e) => JSON.stringify(e))).toEqual(first(a, 5).map((e) => JSON.stringify(e)))
    reopened.close()
  })

  it('refuses an Authority file and bad options with UsageError', () => {
    openSqliteAuthorityStore(files.path('authority.db')).close()
    expect(() => openSqliteWorkerStore(files.path('authority.db'))).toThrow(UsageError)
    expect(() => openSqliteWorkerStore(file(), { synchronous: 'extra' as 'full' })).toThrow(UsageError)
  })
})
