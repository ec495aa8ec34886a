// Recovery benchmark of the Group Authority (§7.4, §16), each figure beside a baseline measured
// in the same process and run:
//
//   replay     a fresh subscriber of createDelivery catching up on a Group log of RECOVERY_EVENTS
//              Events (Events delivered per second), against a bare loop handing the same Events
//              from an array to the same handler
//   restore    a new Authority started over the store after the log was compacted behind a signed
//              Group Snapshot at its head: the fold of the retained history with the snapshot
//              verified at its sequence (seconds), against JSON.parse of that history as a durable
//              store would read it back
//
// The log is grown with Messages through trusted Commands (deferred Event signatures), one Event
// each. WEFT_BENCH_RECOVERY_EVENTS sets its length (default 100000) for quicker local runs.
import { buildGroupSnapshot, createAuthority, createDelivery, createMemoryStore, signGroupSnapshot } from '@weft/authority'
import { cast, createWorld, GROUP, registry, SEED, seeded } from './authority-world.mjs'
import { fmt, median } from './table.mjs'

const EVENTS = Number(process.env.WEFT_BENCH_RECOVERY_EVENTS ?? 100_000)
const ROUNDS = 5
const TARGETS = { replayEventsPerSec: 200_000, restoreSeconds: 1 }

/** A world over `store` whose Group log holds at least {@link EVENTS} Events. */
async function grownWorld(store, log) {
  const world = await createWorld({ trusted: true, authority: { store, deferEventSignatures: true } })
  const head = () => world.authority.group(GROUP).head
  const began = performance.now()
  while (head() < EVENTS) {
    await world.post()
    if (head() % 20_000 === 0) log(`  recovery: ${head()} Events (${((performance.now() - began) / 1000).toFixed(0)} s)`)
  }
  return world
}

/** One catch-up of a fresh subscriber from sequence 0 to the head; Events per second. */
function replayOnce(authority, subscriber) {
  const delivery = createDelivery(authority, { pageSize: 500 })
  let delivered = 0
  const began = performance.now()
  const subscription = delivery.subscribe(subscriber, [{ groupId: GROUP, afterSequence: 0 }], { onEvent: () => void delivered++ })
  const elapsedMs = performance.now() - began
  subscription.close()
  delivery.close()
  return { delivered, perSec: (delivered * 1000) / elapsedMs }
}

/** The baseline of {@link replayOnce}: the same handler over the same Events, from an array. */
function arrayOnce(events) {
  let delivered = 0
  const onEvent = () => void delivered++
  const began = performance.now()
  for (const event of events) onEvent(event)
  return { delivered, perSec: (delivered * 1000) / (performance.now() - began) }
}

/** A new Authority over `store`, as a restart makes it; seconds. */
function restoreOnce(store, head) {
  const began = performance.now()
  const authority = createAuthority({
    registry: registry(),
    keys: { authority: cast.authority.actor, signingKey: cast.authority.key },
    random: seeded(SEED),
    policy: { controlPlane: [cast.controlPlane.actor.id] },
    store,
  })
  const seconds = (performance.now() - began) / 1000
  if (authority.group(GROUP).head !== head) throw new Error('restore: the restored Group does not reach the head')
  return seconds
}

/** The baseline of {@link restoreOnce}: parsing the retained history's JSON text; seconds. */
function parseOnce(text) {
  const began = performance.now()
  const parsed = JSON.parse(text)
  const seconds = (performance.now() - began) / 1000
  if (!Array.isArray(parsed)) throw new Error('parse: not an array')
  return seconds
}

/**
 * Runs the recovery cases and returns table rows (`[case, weft, baseline, ratio, target]`), a
 * summary for the JSON line, and the targets missed.
 * @param {{ log: (line: string) => void }} options
 */
export async function recoveryCases({ log }) {
  log(`recovery: growing a Group log to ${EVENTS} Events`)
  const store = createMemoryStore()
  const world = await grownWorld(store, log)
  const authority = world.authority
  const head = authority.group(GROUP).head
  const events = authority.events(GROUP)
  const subscriber = cast.workers[0].actor

  log('recovery: replay to a fresh subscriber, and the array baseline')
  const replays = []
  const arrays = []
  for (let i = 0; i < ROUNDS; i++) {
    const r = replayOnce(authority, subscriber)
    if (r.delivered < head - 50) throw new Error(`replay delivered ${r.delivered} of ${head} Events`)
    replays.push(r.perSec)
    arrays.push(arrayOnce(events.slice(head - r.delivered)).perSec)
  }

  log('recovery: compacting behind a signed snapshot at the head, then restoring')
  const snapshot = signGroupSnapshot(
    buildGroupSnapshot(authority.group(GROUP), events, {
      snapshotId: 'urn:weft:bench:snapshot:1',
      createdBy: { type: 'service', id: cast.controlPlane.actor.id },
      createdAt: new Date(world.clock.nowMs).toISOString(),
    }),
    cast.controlPlane.key,
  )
  authority.compact(GROUP, snapshot)
  const history = JSON.stringify([...store.allEvents()])
  const restores = []
  const parses = []
  for (let i = 0; i < ROUNDS; i++) {
    restores.push(restoreOnce(store, head))
    parses.push(parseOnce(history))
  }

  const replay = median(replays)
  const array = median(arrays)
  const restore = median(restores)
  const parse = median(parses)
  const missed = []
  if (replay < TARGETS.replayEventsPerSec) missed.push(`replay ${fmt(replay)} Events/s < ${fmt(TARGETS.replayEventsPerSec)}`)
  if (restore >= TARGETS.restoreSeconds) missed.push(`restore ${restore.toFixed(2)} s >= ${TARGETS.restoreSeconds} s at ${fmt(head)} Events`)
  const rows = [
    [`replay to a fresh subscriber, ${fmt(head)} Events (Events/s)`, fmt(replay), fmt(array), `${((100 * replay) / array).toFixed(1)}%`, `>= ${fmt(TARGETS.replayEventsPerSec)}`],
    ['bare loop over the same Events, baseline (Events/s)', fmt(array), '', '', ''],
    [`restore after compaction, ${fmt(head)} Events (s)`, restore.toFixed(2), parse.toFixed(2), `${(restore / parse).toFixed(1)}x`, `< ${TARGETS.restoreSeconds}`],
    [`JSON.parse of the retained history, ${(history.length / 1e6).toFixed(0)} MB, baseline (s)`, parse.toFixed(2), '', '', ''],
  ]
  const summary = {
    recoveryEvents: head,
    replayEventsPerSec: Math.round(replay),
    arrayBaselineEventsPerSec: Math.round(array),
    restoreSeconds: +restore.toFixed(3),
    parseBaselineSeconds: +parse.toFixed(3),
    historyBytes: history.length,
    targets: TARGETS,
    missed,
  }
  return { rows, summary, missed }
}
