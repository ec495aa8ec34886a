/**
 * Compaction and state checkpoints in the SQLite file (§7.4, §16): an Authority restarted over a
 * compacted, checkpointed file resumes from the checkpoint without folding the whole history, and
 * the database keeps the compaction point's laws even against raw SQL.
 */
import { buildGroupSnapshot, createDelivery, signGroupSnapshot, type Authority, type AuthorityStore, type AuthorityWarning } from '@weft/authority'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { countingFolds, expectSameFold, foldedWorld } from '@weft/testkit/checkpoint'
import { compactHead } from '@weft/testkit/recovery'
import { cast, GROUP } from '@weft/testkit/fixtures'
import { runningOf, type World } from '@weft/testkit/world'
import { openSqliteAuthorityStore } from '../src/index.js'
import { tempFiles } from './files.js'
import { post, restart as restartWorld, scenario } from '@weft/testkit/store-log'

const files = tempFiles('checkpoint')
const file = (): string => files.path('authority.db')

/** A new Authority over `store` as the world's would restart, with the folded world's policy, its warnings kept in `warnings`. */
function restart(w: World, store: AuthorityStore, warnings: AuthorityWarning[]): Authority {
  return restartWorld(w, store, { policy: { maxMessagesPerMinute: 100 }, onWarning: (warning) => void warnings.push(warning) })
}

describe('an Authority restarted over a compacted SQLite file', () => {
  it('resumes from the checkpoint the compaction saved, folding only the Events after it, and goes on', async () => {
    const store = openSqliteAuthorityStore(file())
    const w = await foldedWorld(store)
    const record = compactHead({ w, store }, 'urn:weft:test:snapshot:sqlite')
    const kept = w.as.worker1.build('message.post', post(w, 'kept'))
    const first = await w.authority.submit(kept.bytes)
    const original = w.authority.state
    store.close()

    const reopened = countingFolds(openSqliteAuthorityStore(file()))
    const warnings: AuthorityWarning[] = []
    const again = restart(w, reopened, warnings)
    expect(reopened.folds()).toBe(0)
    expect(warnings).toEqual([])
    expectSameFold(again.state, original)
    expectSameFold(again.state, again.replayState())
    expect(again.snapshot(GROUP)).toEqual(record)
    // §15.1: a retry after the restart answers the stored receipt.
    expect(await again.submit(kept.bytes)).toEqual({ ...first, duplicate: true })
    // §16: below the compaction point, CURSOR_TOO_OLD with the reference; above it, the online log.
    expect(() => again.events(GROUP)).toThrow(
      expect.objectContaining({ code: 'CURSOR_TOO_OLD', details: expect.objectContaining({ snapshotHash: record.snapshotHash, throughSequence: record.throughSequence }) }),
    )
    const delivery = createDelivery(again)
    expect(delivery.replay(cast.worker1.actor, GROUP, record.throughSequence).events.map((e) => e.sequence)).toEqual([record.throughSequence + 1])
    delivery.close()
    // New work continues the sequence and the fold tables: the charged WorkItem's ledger goes on.
    const head = again.group(GROUP)!.head
    const charged = [...again.group(GROUP)!.workItems.values()].find((r) => r.doc.state === 'active')!.doc.workItemId
    const { epoch, leaseId } = runningOf(w, charged)
    const receipt = await again.submit(
      w.as.worker1.build('ext.missionweaveprotocol.core.resource_usage_record', { workItemId: charged, ownershipEpoch: epoch, executionLeaseId: leaseId, usageDelta: { toolCalls: 1 } }).bytes,
    )
    expect(receipt.events.map((e) => e.sequence)).toEqual([head + 1])
    expect(receipt.events[0]!.payload).toMatchObject({ cumulativeUsage: { toolCalls: 2 } })
    expectSameFold(again.state, again.replayState())
    const after = again.state
    reopened.close()

    // A third start, from the same checkpoint and the longer tail, ends in the same state.
    const third = openSqliteAuthorityStore(file())
    expectSameFold(restart(w, third, warnings).state, after)
    expect(warnings).toEqual([])
    third.close()
  })

  it('checkpoints on demand without compaction, and resumes from the latest', async () => {
    const store = openSqliteAuthorityStore(file())
    const w = await scenario(store)
    const manifest = w.authority.checkpoint()
    expect(store.checkpoint()?.manifest).toEqual(manifest)
    store.close()
    const reopened = countingFolds(openSqliteAuthorityStore(file()))
    const warnings: AuthorityWarning[] = []
    expectSameFold(restart(w, reopened, warnings).state, w.authority.state)
    expect(reopened.folds()).toBe(0)
    reopened.close()
  })
})

describe('compaction and checkpoint laws, kept by the database', () => {
  it('refuses moving a compaction point back or past the head, deleting a record, or a checkpoint beyond the history', async () => {
    const store = openSqliteAuthorityStore(file())
    const w = await scenario(store)
    compactHead({ w, store }, 'urn:weft:test:snapshot:laws')
    store.close()
    const db = new Database(file())
    const point = db.prepare('SELECT through_sequence FROM snapshots WHERE group_id = ?').pluck().get(GROUP) as number
    expect(() => db.prepare('UPDATE snapshots SET through_sequence = ? WHERE group_id = ?').run(point - 1, GROUP)).toThrow(/only moves forward/)
    expect(() => db.prepare('UPDATE snapshots SET through_sequence = ? WHERE group_id = ?').run(point + 1, GROUP)).toThrow(/only moves forward/)
    expect(() => db.prepare('DELETE FROM snapshots').run()).toThrow(/kept/)
    expect(() => db.prepare("INSERT INTO snapshots VALUES ('urn:weft:test:group:none', 1, '{}')").run()).toThrow(/beyond its Group head/)
    expect(() => db.prepare('UPDATE checkpoints SET position = position + 1000').run()).toThrow(/beyond the retained history/)
    db.close()
  })

  it('compacts in the middle of the log from buildSnapshot, reads the history below it, and restarts over it [error CURSOR_TOO_OLD]', async () => {
    const store = openSqliteAuthorityStore(file())
    const w = await scenario(store)
    const head = w.authority.group(GROUP)!.head
    const through = Math.floor(head / 2)
    const unsigned = w.authority.buildSnapshot(GROUP, through, {
      snapshotId: 'urn:weft:test:snapshot:middle',
      createdBy: { type: 'service', id: cast.controlPlane.actor.id },
      createdAt: new Date(w.clock.nowMs).toISOString(),
    })
    const record = w.authority.compact(GROUP, signGroupSnapshot(unsigned, cast.controlPlane.key))
    const history = [...store.allEvents()].filter((e) => e.groupId === GROUP)
    store.close()

    const reopened = openSqliteAuthorityStore(file())
    const again = restart(w, reopened, [])
    expect(again.snapshot(GROUP)).toEqual(record)
    expect(() => again.events(GROUP, through - 1)).toThrow(expect.objectContaining({ code: 'CURSOR_TOO_OLD', snapshotArtifactHash: record.snapshotHash }))
    expect(again.events(GROUP, through).map((e) => e.sequence)).toEqual(history.slice(through).map((e) => e.sequence))
    expect(again.history(GROUP, 0, head).events).toEqual(history)
    expect(again.history(GROUP, through - 2, 2).events).toEqual(history.slice(through - 2, through))
    reopened.close()
  })

  it('opens a file written before the compaction tables, adding them', async () => {
    const store = openSqliteAuthorityStore(file())
    const w = await scenario(store)
    store.close()
    const db = new Database(file())
    db.exec('DROP TABLE snapshots; DROP TABLE checkpoints')
    db.close()
    const reopened = openSqliteAuthorityStore(file())
    expect(reopened.snapshot(GROUP)).toBeUndefined()
    expect(reopened.checkpoint()).toBeUndefined()
    const again = restart(w, reopened, [])
    const unsigned = buildGroupSnapshot(
      again.group(GROUP)!,
      [...reopened.allEvents()].filter((e) => e.groupId === GROUP),
      {
        snapshotId: 'urn:weft:test:snapshot:upgraded',
        createdBy: { type: 'service', id: cast.controlPlane.actor.id },
        createdAt: new Date(w.clock.nowMs).toISOString(),
      },
    )
    const record = again.compact(GROUP, signGroupSnapshot(unsigned, cast.controlPlane.key))
    expect(reopened.snapshot(GROUP)).toEqual(record)
    expect(reopened.checkpoint()?.manifest.snapshots).toEqual([{ groupId: GROUP, throughSequence: record.throughSequence, snapshotHash: record.snapshotHash }])
    reopened.close()
  })

  it('streams from a position by counting when the file holds positions not written by this package', async () => {
    const store = openSqliteAuthorityStore(file())
    await scenario(store)
    store.close()
    const db = new Database(file())
    const last = db.prepare('SELECT max(pos) FROM events').pluck().get() as number
    db.prepare("INSERT INTO events (pos, group_id, sequence, event_id, kind, body) VALUES (?, NULL, NULL, 'urn:raw:a', 'k', '{\"eventId\":\"urn:raw:a\"}')").run(last + 10)
    db.prepare("INSERT INTO events (group_id, sequence, event_id, kind, body) VALUES (NULL, NULL, 'urn:raw:b', 'k', '{\"eventId\":\"urn:raw:b\"}')").run()
    db.close()
    const reopened = openSqliteAuthorityStore(file())
    const all = [...reopened.allEvents()].map((e) => e.eventId)
    for (const position of [0, last - 1, last, last + 1, last + 2, last + 5]) expect([...reopened.eventsAfter(position)].map((e) => e.eventId)).toEqual(all.slice(position))
    reopened.close()
  })
})
