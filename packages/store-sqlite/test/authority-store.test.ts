/**
 * What only a durable store can show: an Authority restarted over the file has the state it had
 * (state = fold(log), §15.2), retries after a restart still answer the stored receipt (§15.1), ACK
 * Cursors persist (§16), and the database refuses gaps, forks and rewrites (§7.4) even to SQL that
 * bypasses this package.
 */
import { createDelivery } from '@weft/authority'
import { ProtocolError, UsageError } from '@weft/codec'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { cast, GROUP } from '@weft/testkit/fixtures'
import { reach } from '@weft/testkit/world'
import { openSqliteAuthorityStore, openSqliteWorkerStore } from '../src/index.js'
import { post, restart, scenario } from '@weft/testkit/store-log'
import { tempFiles } from './files.js'

const files = tempFiles('store')
/** The test's main file. */
const file = (): string => files.path('authority.db')

describe('an Authority restarted over its SQLite file', () => {
  it('starts from the fold of the stored log, answers retries from stored receipts and continues the log', async () => {
    const store = openSqliteAuthorityStore(file())
    const w = await scenario(store)
    // One more Command whose exact bytes are kept for a retry after the restart.
    const built = w.as.worker1.build('message.post', post(w, 'kept'))
    const first = await w.authority.submit(built.bytes)
    const original = w.authority.replayState()
    expect(original).toEqual(w.authority.state)
    const heads = [...w.authority.state.groups].map(([g, s]) => [g, s.head])
    store.close()

    const reopened = openSqliteAuthorityStore(file())
    const again = restart(w, reopened)
    expect(again.state).toEqual(original)
    expect(again.replayState()).toEqual(original)

    // §15.1: the exact retry answers the original receipt and appends nothing ...
    expect(await again.submit(built.bytes)).toEqual({ ...first, duplicate: true })
    expect([...again.state.groups].map(([g, s]) => [g, s.head])).toEqual(heads)
    // ... and other content under the same Action ID collides.
    const other = w.as.worker1.build('message.post', post(w, 'other'), { actionId: built.command.actionId })
    await expect(again.submit(other.bytes)).rejects.toMatchObject({ code: 'ACTION_ID_COLLISION' })

    // New work continues the Group's sequence where the file left it.
    const head = again.group(GROUP)?.head as number
    const receipt = await again.submit(w.as.worker2.build('message.post', post(w, 'after')).bytes)
    expect(receipt.events.map((e) => e.sequence)).toEqual([head + 1])
    expect(again.events(GROUP).map((e) => e.sequence)).toEqual(again.events(GROUP).map((_, i) => i + 1))
    reopened.close()
  })

  it('keeps ACK Cursors across a restart (§16)', async () => {
    const store = openSqliteAuthorityStore(file())
    const w = await scenario(store)
    const delivery = createDelivery(w.authority, { cursorStore: store.cursorStore })
    const head = w.group().head
    delivery.ack(cast.worker1.actor, [{ groupId: GROUP, sequence: head - 1 }])
    delivery.close()
    store.close()

    const reopened = openSqliteAuthorityStore(file())
    const again = createDelivery(restart(w, reopened), { cursorStore: reopened.cursorStore })
    expect(again.cursor(cast.worker1.actor, GROUP)).toBe(head - 1)
    expect(again.cursor(cast.worker2.actor, GROUP)).toBe(0)
    // Replay without a position resumes after the stored Cursor.
    expect(again.replay(cast.worker1.actor, GROUP).events.map((e) => e.sequence)).toEqual([head])
    again.close()
    reopened.close()
  })
})

describe('the log laws, kept by the database', () => {
  /** A file holding the scenario's log, and a raw connection to it that bypasses this package. */
  async function raw(): Promise<Database.Database> {
    const store = openSqliteAuthorityStore(file())
    await scenario(store)
    store.close()
    return new Database(file())
  }
  const insert = (db: Database.Database, sequence: number, eventId: string) =>
    db.prepare("INSERT INTO events (group_id, sequence, event_id, kind, body) VALUES (?, ?, ?, 'message.posted', '{}')").run(GROUP, sequence, eventId)

  it('refuses a gap and a fork inserted with raw SQL (§15.2)', async () => {
    const db = await raw()
    const head = db.prepare('SELECT max(sequence) FROM events WHERE group_id = ?').pluck().get(GROUP) as number
    expect(() => insert(db, head + 2, 'urn:raw:gap')).toThrow(/does not continue its head/)
    expect(() => insert(db, head, 'urn:raw:fork')).toThrow(/does not continue its head/)
    expect(() => insert(db, 0, 'urn:raw:zero')).toThrow()
    expect(() => db.prepare("INSERT INTO events (group_id, sequence, event_id, kind, body) VALUES (?, NULL, 'urn:raw:null', 'k', '{}')").run(GROUP)).toThrow()
    insert(db, head + 1, 'urn:raw:next')
    expect(db.prepare('SELECT max(sequence) FROM events WHERE group_id = ?').pluck().get(GROUP)).toBe(head + 1)
    db.close()
  })

  it('refuses rewriting or deleting accepted Events and receipts (§7.4)', async () => {
    const db = await raw()
    expect(() => db.prepare("UPDATE events SET body = '{}' WHERE sequence = 1").run()).toThrow(/immutable/)
    expect(() => db.prepare('UPDATE events SET sequence = sequence + 100').run()).toThrow(/immutable/)
    expect(() => db.prepare('DELETE FROM events WHERE group_id = ?').run(GROUP)).toThrow(/immutable/)
    expect(() => db.prepare('DELETE FROM receipts').run()).toThrow(/immutable/)
    db.close()
  })

  it('refuses an Event ID twice', async () => {
    const db = await raw()
    const [group, head, eventId] = db.prepare('SELECT group_id, sequence, event_id FROM events WHERE group_id IS NOT NULL ORDER BY pos DESC LIMIT 1').raw().get() as [string, number, string]
    expect(() => db.prepare("INSERT INTO events (group_id, sequence, event_id, kind, body) VALUES (?, ?, ?, 'k', '{}')").run(group, head + 1, eventId)).toThrow(/UNIQUE/)
    db.close()
  })
})

describe('opening files', () => {
  it('keeps the file in WAL mode at either synchronous level', () => {
    const modes = (['full', 'normal', undefined] as const).map((synchronous, i) => {
      const path = files.path(`${i}.db`)
      openSqliteAuthorityStore(path, synchronous === undefined ? {} : { synchronous }).close()
      // The journal mode is a property of the file, so a second connection reads it.
      const db = new Database(path)
      const mode = db.pragma('journal_mode', { simple: true })
      db.close()
      return mode
    })
    expect(modes).toEqual(['wal', 'wal', 'wal'])
  })

  it('refuses a Worker file, a foreign database and bad options with UsageError', () => {
    openSqliteWorkerStore(files.path('worker.db')).close()
    expect(() => openSqliteAuthorityStore(files.path('worker.db'))).toThrow(UsageError)
    const foreign = new Database(files.path('foreign.db'))
    foreign.exec('CREATE TABLE notes (text TEXT)')
    foreign.close()
    expect(() => openSqliteAuthorityStore(files.path('foreign.db'))).toThrow(UsageError)
    expect(() => openSqliteAuthorityStore('')).toThrow(UsageError)
    expect(() => openSqliteAuthorityStore(file(), { synchronous: 'off' as 'full' })).toThrow(UsageError)
    expect(() => openSqliteAuthorityStore(file(), { readBatch: 0 })).toThrow(UsageError)
  })

  it('streams a log longer than one read batch in acceptance order', async () => {
    const store = openSqliteAuthorityStore(file(), { readBatch: 3 })
    const w = await scenario(store)
    await reach(w, 'verified')
    const ids = [...store.allEvents()].map((e) => e.eventId)
    expect(ids.length).toBeGreaterThan(9)
    // The oracle: one query over the file through a connection of its own.
    const db = new Database(file(), { readonly: true })
    expect(ids).toEqual(db.prepare('SELECT event_id FROM events ORDER BY pos').pluck().all())
    expect(new Set(ids).size).toBe(w.authority.organizationEvents().length + [...w.authority.state.groups.keys()].reduce((n, g) => n + w.authority.events(g).length, 0))
    db.close()
    store.close()
  })
})

describe('errors', () => {
  it('a refused append is a plain Error, never a ProtocolError (the pipeline reports it as INTERNAL_ERROR)', () => {
    const store = openSqliteAuthorityStore(':memory:')
    const receipt = { actionId: 'urn:a', actor: { type: 'agent', id: 'urn:b' }, kind: 'message.post', commandHash: `sha256:${'0'.repeat(64)}`, acceptedAt: '2026-07-15T00:00:00Z', events: [] } as never
    store.appendTransaction([], receipt)
    const refused = (() => {
      try {
        store.appendTransaction([], receipt)
      } catch (error) {
        return error
      }
    })()
    expect(refused).toBeInstanceOf(Error)
    expect(refused).not.toBeInstanceOf(ProtocolError)
    expect((refused as Error).message).toMatch(/^store: /)
    store.close()
  })
})
