// SQLite store benchmark, against in-memory baselines measured in the same run:
//
//   rebuild   a Worker's queues rebuilt from a 100,000-Event log: the log read back from a reopened
//             SQLite Worker store (and, as baseline, from the memory store) and replayed through
//             `createInbox(...).rebuild()` into a fresh `createProjection(self)`; the bare read of
//             the SQLite log (`store.events`) is shown on its own
//   append    Authority-store transactions per second (`appendTransaction`, 1 to 3 Events and a
//             receipt each) into SQLite at synchronous FULL and NORMAL, and into the memory store
//
// The log is `fabricateLog` of worker-ingest.mjs. WEFT_BENCH_REBUILD_EVENTS sets its size (default
// 100000) and WEFT_BENCH_APPENDS the transactions per append round (default 1000: at synchronous
// FULL each one waits for an fsync).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMemoryStore } from '@weft/authority'
import { openSqliteAuthorityStore, openSqliteWorkerStore } from '@weft/store-sqlite'
import { createInbox, createMemoryWorkerStore, createProjection } from '@weft/worker'
import { fabricateLog } from './worker-ingest.mjs'
import { fmt, median } from './table.mjs'

const EVENTS = Number(process.env.WEFT_BENCH_REBUILD_EVENTS ?? 100_000)
const GROUPS = 4
const APPENDS = Number(process.env.WEFT_BENCH_APPENDS ?? 1_000)
const ROUNDS = 3
const SELF = 'urn:weft:bench:agent:worker-1'
const TARGETS = { rebuildMs: 2_000 }

/** The Events of `log` by Group, each in sequence order. */
function byGroup(log) {
  const groups = new Map()
  for (const event of log) {
    let events = groups.get(event.groupId)
    if (events === undefined) groups.set(event.groupId, (events = []))
    events.push(event)
  }
  for (const events of groups.values()) events.sort((a, b) => a.sequence - b.sequence)
  return groups
}

/** Fills a Worker store with `groups`' Events, a thousand per `appendEvents` call, as an inbox would. */
function fill(store, groups) {
  for (const [groupId, events] of groups) for (let i = 0; i < events.length; i += 1000) store.appendEvents(groupId, events.slice(i, i + 1000))
}

/** Milliseconds `run()` took. */
function timed(run) {
  const start = performance.now()
  const result = run()
  return { ms: performance.now() - start, result }
}

/** One rebuild: a fresh projection fed the whole stored log through an inbox over `store`. */
function rebuild(store) {
  const projection = createProjection(SELF)
  const { ms, result } = timed(() => createInbox({ store, projection }).rebuild())
  return { ms, applied: result }
}

/**
 * Authority transactions cut from `log`: runs of 1 to 3 consecutive Events of one Group, each
 * with a receipt under a fresh Action ID. Sequences are the log's, so appending the transactions
 * in order continues every Group's log exactly.
 */
function transactions(groups, count) {
  const out = []
  const cursors = new Map([...groups.keys()].map((g) => [g, 0]))
  for (let n = 0; out.length < count; n++) {
    const groupId = [...groups.keys()][n % groups.size]
    const events = groups.get(groupId)
    const at = cursors.get(groupId)
    if (at >= events.length) break
    const taken = events.slice(at, at + 1 + (n % 3))
    cursors.set(groupId, at + taken.length)
    const first = taken[0]
    out.push({
      events: taken,
      receipt: { actionId: `urn:weft:bench:action:${n}`, actor: first.actor, kind: 'message.post', groupId, commandHash: `sha256:${'0'.repeat(64)}`, events: taken, acceptedAt: first.occurredAt },
    })
  }
  return out
}

/** Transactions per second of appending `txs` to a store `open()` makes. */
function appendRate(open, txs) {
  const store = open()
  const { ms } = timed(() => {
    for (const t of txs) store.appendTransaction(t.events, t.receipt)
  })
  store.close?.()
  return (txs.length * 1000) / ms
}

/** @param {{ log: (line: string) => void }} options */
export async function sqliteRebuildCases({ log }) {
  const dir = mkdtempSync(join(tmpdir(), 'weft-bench-sqlite-'))
  try {
    const groups = byGroup(fabricateLog(EVENTS, GROUPS))
    const total = [...groups.values()].reduce((n, events) => n + events.length, 0)
    const file = join(dir, 'worker.db')
    log(`  writing ${total} Events to ${file}`)
    const writer = openSqliteWorkerStore(file)
    const fillMs = timed(() => fill(writer, groups)).ms
    writer.close()
    const memory = createMemoryWorkerStore()
    fill(memory, groups)

    const samples = { sqlite: [], memory: [], read: [] }
    let applied = 0
    for (let i = 0; i < ROUNDS; i++) {
      // A reopened file each round: the rebuild reads from a cold connection, as after a restart.
      const store = openSqliteWorkerStore(file)
      samples.read.push(timed(() => [...groups.keys()].reduce((n, g) => n + store.events(g).length, 0)).ms)
      const run = rebuild(store)
      store.close()
      applied = run.applied
      samples.sqlite.push(run.ms)
      samples.memory.push(rebuild(memory).ms)
      log(`  rebuild round ${i + 1} of ${ROUNDS}`)
    }

    const txs = transactions(groups, APPENDS)
    const rates = { memory: [], full: [], normal: [] }
    for (let i = 0; i < ROUNDS; i++) {
      rates.memory.push(appendRate(createMemoryStore, txs))
      rates.full.push(appendRate(() => openSqliteAuthorityStore(join(dir, `full-${i}.db`), { synchronous: 'full' }), txs))
      rates.normal.push(appendRate(() => openSqliteAuthorityStore(join(dir, `normal-${i}.db`), { synchronous: 'normal' }), txs))
      log(`  append round ${i + 1} of ${ROUNDS}`)
    }

    const rebuildMs = median(samples.sqlite)
    const summary = {
      events: total,
      applied,
      fillMs: Math.round(fillMs),
      rebuildSqliteMs: Math.round(rebuildMs),
      rebuildMemoryMs: Math.round(median(samples.memory)),
      readSqliteMs: Math.round(median(samples.read)),
      appendTransactions: txs.length,
      appendMemoryPerSec: Math.round(median(rates.memory)),
      appendSqliteFullPerSec: Math.round(median(rates.full)),
      appendSqliteNormalPerSec: Math.round(median(rates.normal)),
      targets: TARGETS,
    }
    const rows = [
      [`rebuild ${total} Events from SQLite`, `${summary.rebuildSqliteMs} ms`, `< ${TARGETS.rebuildMs} ms`],
      [`read the same log alone (store.events)`, `${summary.readSqliteMs} ms`, ''],
      [`rebuild ${total} Events from memory (baseline)`, `${summary.rebuildMemoryMs} ms`, ''],
      [`append to SQLite, synchronous FULL`, `${fmt(summary.appendSqliteFullPerSec)} tx/s`, ''],
      [`append to SQLite, synchronous NORMAL`, `${fmt(summary.appendSqliteNormalPerSec)} tx/s`, ''],
      [`append to memory (baseline)`, `${fmt(summary.appendMemoryPerSec)} tx/s`, ''],
    ]
    const missed = rebuildMs < TARGETS.rebuildMs ? [] : [`SQLite rebuild ${Math.round(rebuildMs)} ms >= ${TARGETS.rebuildMs} ms`]
    return { rows, summary, missed }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
