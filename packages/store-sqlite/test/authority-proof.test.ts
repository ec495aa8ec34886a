/**
 * The proof of a SQLite Authority file's log (`proveLog`, §6.4, §15.2, §16), against the file as an
 * attacker or a failing disk leaves it: one letter of a Message changed, a `membership.changed`
 * member swapped, a middle Event deleted, two Events swapped, the tail dropped, a tombstone or an
 * Event of another signer put in place, a lost WAL, a damaged page or head file. Each is refused
 * naming the Group, the sequence and the check; an unmodified file passes, checking the signatures
 * of the Events after the state checkpoint only.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chainLink, LOG_CHAIN_FORMAT, LogProofError, REDACTION_EXTENSION, type LogProofSummary } from '@weft/authority'
import { sign } from '@weft/codec'
import type { Event } from '@weft/spec'
import Database from 'better-sqlite3'
import { beforeAll, describe, expect, it } from 'vitest'
import { cast, GROUP } from '@weft/testkit/fixtures'
import { started, type World } from '@weft/testkit/world'
import { openSqliteAuthorityStore, type SqliteAuthorityStore } from '../src/index.js'
import { tempFiles } from './files.js'
import { post, restart } from '@weft/testkit/store-log'

const files = tempFiles('proof')
const authority = { type: 'service', id: cast.authority.actor.id } as const

/** The two files of a store: the database (closed, so its WAL is checkpointed in) and its head file. */
interface Saved {
  readonly db: Buffer
  readonly heads: Buffer
}

let world: World
/** A log of the Organization, the Group and 6 Messages, with a state checkpoint at its head. */
let checkpointed: Saved
/** The same log without a checkpoint. */
let plain: Saved
/** The stored Events of {@link GROUP} in sequence order. */
let events: Event[]

/** Grows a log in a file of a fresh directory and returns its files. */
async function grow(checkpoint: boolean): Promise<Saved> {
  const dir = mkdtempSync(join(tmpdir(), 'weft-proof-grow-'))
  const path = join(dir, 'authority.db')
  const store = openSqliteAuthorityStore(path)
  const w = await started({ store })
  for (let n = 1; n <= 6; n++) await w.as.worker1.messagePost(post(w, `hello-${n}`))
  if (checkpoint) w.authority.checkpoint()
  world = w
  events = [...store.groupEvents(GROUP)]
  store.close()
  const saved = { db: readFileSync(path), heads: readFileSync(`${path}.heads`) }
  rmSync(dir, { recursive: true, force: true })
  return saved
}

beforeAll(async () => {
  checkpointed = await grow(true)
  plain = await grow(false)
}, 60_000)

/** Writes `saved` into this test's directory, runs `edit` on the database (immutability lifted, as an attacker would) and opens the store. */
function restored(saved: Saved, edit: (db: Database.Database) => void = () => {}): SqliteAuthorityStore {
  const path = files.path('authority.db')
  writeFileSync(path, saved.db)
  writeFileSync(`${path}.heads`, saved.heads)
  const db = new Database(path)
  db.exec('DROP TRIGGER events_immutable_update; DROP TRIGGER events_immutable_delete')
  edit(db)
  db.exec("CREATE TRIGGER events_immutable_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'accepted Events are immutable'); END;")
  db.exec("CREATE TRIGGER events_immutable_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'accepted Events are immutable'); END;")
  db.close()
  return openSqliteAuthorityStore(path)
}

const prove = (store: SqliteAuthorityStore): LogProofSummary => store.proveLog({ registry: world.registry, authority })

/** The proof of `store` fails with exactly `message`. */
function expectRefusal(store: SqliteAuthorityStore, message: string): LogProofError {
  let caught: unknown
  try {
    prove(store)
  } catch (error) {
    caught = error
  } finally {
    store.close()
  }
  expect(caught).toBeInstanceOf(LogProofError)
  expect((caught as Error).message).toBe(message)
  return caught as LogProofError
}

const at = (sequence: number, check: string): string => `the log of group ${GROUP} fails its proof at sequence ${sequence}: ${check}`
const sequenceOf = (kind: string, text: string): number => events.find((e) => e.kind === kind && JSON.stringify(e).includes(text))!.sequence!

function edit(db: Database.Database, sequence: number, change: (body: string) => string): void {
  const body = db.prepare('SELECT body FROM events WHERE group_id = ? AND sequence = ?').pluck().get(GROUP, sequence) as string
  const changed = change(body)
  expect(changed).not.toBe(body)
  db.prepare('UPDATE events SET body = ? WHERE group_id = ? AND sequence = ?').run(changed, GROUP, sequence)
}

/** Recomputes every stored chain link from the stored text, as an attacker who knows the chain rule would. */
function relink(db: Database.Database): void {
  const last = new Map<string, string>()
  for (const [pos, groupId, body] of db.prepare('SELECT pos, group_id, body FROM events ORDER BY pos').raw().all() as [number, string | null, string][]) {
    const chain = chainLink(last.get(groupId ?? '') ?? LOG_CHAIN_FORMAT, body)
    last.set(groupId ?? '', chain)
    db.prepare('UPDATE events SET chain = ? WHERE pos = ?').run(chain, pos)
  }
}

const letter = (): number => sequenceOf('message.posted', 'hello-3')
const swapLetter = (body: string): string => body.replace('hello-3', 'hallo-3')
const membership = (): number => sequenceOf('membership.changed', cast.worker1.actor.id)
const swapMember = (body: string): string => body.replace(`"id":"${cast.worker1.actor.id}"`, '"id":"urn:weft:test:agent:outsider"')

describe('the proof of an unmodified SQLite log', () => {
  it('passes, proving the Events up to the state checkpoint by their chains and checking no signature there', () => {
    const store = restored(checkpointed)
    const summary = prove(store)
    expect(summary).toMatchObject({ groups: 1, signatures: 0, anchoredAt: summary.events })
    expect(summary.events).toBeGreaterThan(events.length)
    expect(summary.heads).toEqual(store.logHeads())
    store.close()
  })

  it('passes without a checkpoint, checking every signature', () => {
    const store = restored(plain)
    const summary = prove(store)
    expect(summary).toMatchObject({ groups: 1, anchoredAt: 0, signatures: summary.events })
    store.close()
  })

  it('checks the signatures of the Events after the checkpoint only, and goes on from there after a restart', async () => {
    const store = restored(checkpointed)
    const head = store.logHeads()
    const w = world
    // A new Authority over the file appends two more Messages past the checkpoint.
    const again = restart(w, store)
    await again.submit(w.as.worker1.build('message.post', post(w, 'after-1')).bytes)
    await again.submit(w.as.worker1.build('message.post', post(w, 'after-2')).bytes)
    const summary = prove(store)
    expect(summary.signatures).toBe(2)
    expect(summary.heads).not.toEqual(head)
    store.close()
  })
})

describe('the proof of a tampered SQLite log', () => {
  it('refuses a Message with one letter changed: by its chain before the checkpoint, by its signature after', () => {
    expectRefusal(
      restored(checkpointed, (db) => edit(db, letter(), swapLetter)),
      at(letter(), "the Event's text does not match its stored chain hash: it was changed after it was stored"),
    )
    expectRefusal(
      restored(plain, (db) => edit(db, letter(), swapLetter)),
      at(letter(), 'signature does not verify'),
    )
  })

  it('refuses an edit whose chain links were recomputed, at the head the checkpoint signed', () => {
    const head = events.length
    expectRefusal(
      restored(checkpointed, (db) => {
        edit(db, letter(), swapLetter)
        relink(db)
      }),
      at(head, 'the chain does not reach the head the state checkpoint signed'),
    )
  })

  it('refuses a membership.changed whose member was swapped for an outsider', () => {
    expectRefusal(
      restored(checkpointed, (db) => edit(db, membership(), swapMember)),
      at(membership(), "the Event's text does not match its stored chain hash: it was changed after it was stored"),
    )
    expectRefusal(
      restored(plain, (db) => edit(db, membership(), swapMember)),
      at(membership(), 'signature does not verify'),
    )
  })

  it('refuses a log with a middle Event deleted', () => {
    const gone = letter()
    const remove = (db: Database.Database): unknown => db.prepare('DELETE FROM events WHERE group_id = ? AND sequence = ?').run(GROUP, gone)
    expectRefusal(restored(checkpointed, remove), at(gone, `the Event is missing (the next one stored is sequence ${gone + 1})`))
    expectRefusal(restored(plain, remove), at(gone, `the Event is missing (the next one stored is sequence ${gone + 1})`))
  })

  it('refuses two Events swapped in place', () => {
    const [a, b] = [letter(), letter() + 1]
    const swap = (db: Database.Database): void => {
      db.prepare('UPDATE events SET sequence = 1000000 WHERE group_id = ? AND sequence = ?').run(GROUP, a)
      db.prepare('UPDATE events SET sequence = ? WHERE group_id = ? AND sequence = ?').run(a, GROUP, b)
      db.prepare('UPDATE events SET sequence = ? WHERE group_id = ? AND sequence = 1000000').run(b, GROUP)
    }
    expectRefusal(restored(checkpointed, swap), at(a, `the Event is missing (the next one stored is sequence ${b})`))
    const other = events[b - 1]!.eventId
    // Without a checkpoint the Event's own signed sequence tells the filing is wrong.
    const swapped = restored(plain, swap)
    expectRefusal(swapped, at(b, `the row holds Event ${events[a - 1]!.eventId} of group ${GROUP} at sequence ${a}`))
    expect(other).not.toBe(events[a - 1]!.eventId)
  })

  it('refuses a dropped tail: the checkpoint signed it, the head file remembers it', () => {
    const head = events.length
    const drop = (db: Database.Database): unknown => db.prepare('DELETE FROM events WHERE group_id = ? AND sequence > ?').run(GROUP, head - 2)
    expectRefusal(restored(checkpointed, drop), at(head - 1, `the Event is missing: the state checkpoint signed the log through sequence ${head}`))
    expectRefusal(restored(plain, drop), at(head - 1, `the Event is missing: the head file remembers sequence ${head} as acknowledged`))
  })

  it('refuses a redaction tombstone in place of the stored Event, and an Event another signer accepted', () => {
    const at3 = letter()
    const original = events[at3 - 1]!
    const { signature, ...envelope } = JSON.parse(JSON.stringify(original)) as Event
    const tombstone = sign(
      'event',
      { ...envelope, extensions: { [REDACTION_EXTENSION]: { version: '1.0.0', critical: false, data: { redactionMessageId: 'urn:weft:test:message:r', originalSignature: signature.value } } } },
      cast.authority.key,
    )
    expectRefusal(
      restored(plain, (db) => edit(db, at3, () => JSON.stringify(tombstone))),
      at(at3, 'a redaction tombstone stands where the accepted Event belongs'),
    )
    const forged = sign('event', { ...envelope, acceptedBy: cast.coordinator.actor }, cast.coordinator.key)
    expectRefusal(
      restored(plain, (db) => edit(db, at3, () => JSON.stringify(forged))),
      at(at3, `the Event was accepted by ${cast.coordinator.actor.id}, not by this Authority`),
    )
  })

  it('refuses a file whose WAL was lost: the head file remembers the acknowledged Events', async () => {
    const path = files.path('authority.db')
    writeFileSync(path, plain.db)
    writeFileSync(`${path}.heads`, plain.heads)
    const store = openSqliteAuthorityStore(path)
    const w = restart(world, store)
    const head = store.logHeads().find((h) => h.groupId === GROUP)!.sequence
    // The commit lives in the WAL until SQLite checkpoints it (at 1000 pages, or when the file is closed).
    await w.submit(world.as.worker1.build('message.post', post(world, 'in-wal')).bytes)
    const lost = `${path}.lost`
    copyFileSync(path, lost)
    store.close()
    // The copy of the database file alone: what remains when the WAL is deleted or damaged.
    copyFileSync(lost, path)
    for (const suffix of ['-wal', '-shm']) if (existsSync(`${path}${suffix}`)) rmSync(`${path}${suffix}`)
    expectRefusal(openSqliteAuthorityStore(path), at(head + 1, `the Event is missing: the head file remembers sequence ${head + 1} as acknowledged`))
  })

  it('refuses a damaged database page and a damaged head file, naming the file', () => {
    const path = files.path('authority.db')
    const pages = Buffer.from(plain.db)
    const size = pages.readUInt16BE(16) === 1 ? 65536 : pages.readUInt16BE(16)
    // Garble the b-tree page header of every page past the schema: the log's own pages.
    for (let page = 2; page < pages.byteLength / size; page++) for (let i = 0; i < 12; i++) pages[page * size + i] = 0x5a
    writeFileSync(path, pages)
    let caught: unknown
    try {
      const store = openSqliteAuthorityStore(path)
      try {
        prove(store)
      } finally {
        store.close()
      }
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(LogProofError)
    expect((caught as Error).message).toMatch(new RegExp(`^the database ${path} fails its proof: `))

    expectRefusal(
      restored(plain, () => writeFileSync(`${path}.heads`, `${plain.heads.toString('utf8')}{"sequence":"two"}\n`)),
      `the head file ${path}.heads fails its proof: line ${plain.heads.toString('utf8').split('\n').length} is damaged`,
    )
  })

  it('refuses a state checkpoint whose signed heads were edited', () => {
    const store = restored(checkpointed, (db) => {
      const manifest = JSON.parse(db.prepare('SELECT manifest FROM checkpoints').pluck().get() as string) as { logHeads: { chain: string }[] }
      manifest.logHeads[0]!.chain = `sha256:${'0'.repeat(64)}`
      db.prepare('UPDATE checkpoints SET manifest = ?').run(JSON.stringify(manifest))
    })
    expectRefusal(store, 'the state checkpoint fails its proof: signature: the signature does not verify')
  })
})

describe('a file of an earlier build, without chain links', () => {
  it('gains them when opened, and its proof checks every signature', () => {
    const path = files.path('authority.db')
    writeFileSync(path, checkpointed.db)
    const db = new Database(path)
    db.exec('DROP TRIGGER events_immutable_update; DROP TRIGGER events_immutable_delete; ALTER TABLE events DROP COLUMN chain')
    // The checkpoint of an earlier build signs no heads.
    db.exec('DELETE FROM checkpoints')
    db.exec("CREATE TRIGGER events_immutable_update BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'accepted Events are immutable'); END;")
    db.exec("CREATE TRIGGER events_immutable_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'accepted Events are immutable'); END;")
    db.close()
    const store = openSqliteAuthorityStore(path)
    const summary = prove(store)
    expect(summary.signatures).toBe(summary.events)
    expect(store.logHeads()).toEqual(summary.heads)
    store.close()
    const raw = new Database(path)
    expect(raw.prepare('SELECT count(*) FROM events WHERE chain IS NULL').pluck().get()).toBe(0)
    expect(() => raw.prepare('UPDATE events SET chain = NULL').run()).toThrow()
    raw.close()
  })
})
