// Recovery benchmark of the Group Authority (§7.4, §16), each figure beside a baseline measured
// in the same process and run:
//
//   replay     a fresh subscriber of createDelivery catching up on a Group log of RECOVERY_EVENTS
//              Events (Events delivered per second), against a bare loop handing the same Events
//              from an array to the same handler
//   restore    a new Authority started over the store after the log was compacted behind a signed
//              Group Snapshot at its head, which saved a state checkpoint: the checkpoint's
//              signature, image hash, position and snapshot record verified, the image read, the
//              Events after it folded (seconds), against the full fold a store without checkpoints
//              gets: every retained Event, the snapshot verified at its sequence
//
// The log is grown with Messages through trusted Commands (deferred Event signatures), one Event
// each. WEFT_BENCH_RECOVERY_EVENTS sets its length (default 100000) for quicker local runs.
// `node bench/authority-recovery.mjs` runs these cases alone over the last build.
import { pathToFileURL } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { buildGroupSnapshot, createAuthority, createDelivery, createMemoryStore, signGroupSnapshot } from '@weft/authority'
import { cast, createWorld, GROUP, registry, SEED, seeded } from './authority-world.mjs'
import { fmt, median, table } from './table.mjs'

const EVENTS = Number(process.env.WEFT_BENCH_RECOVERY_EVENTS ?? 100_000)
const ROUNDS = 5
const TARGETS = { replayEventsPerSec: 200_000, restoreSeconds: 1 }

// A restart begins in a fresh process, without the garbage of the cases run before it: each timed
// restore (checkpoint and full fold alike) starts after a full collection.
setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc')

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

/** A new Authority over `store`, as a restart makes it; seconds. A checkpoint it cannot use is an error here. */
function restoreOnce(store, head) {
  collectGarbage()
  const began = performance.now()
  const authority = createAuthority({
    registry: registry(),
    keys: { authority: cast.authority.actor, signingKey: cast.authority.key },
    random: seeded(SEED),
    policy: { controlPlane: [cast.controlPlane.actor.id] },
    store,
    onWarning: (warning) => {
      throw new Error(`restore: ${warning.message}`)
    },
  })
  const seconds = (performance.now() - began) / 1000
  if (authority.group(GROUP).head !== head) throw new Error('restore: the restored Group does not reach the head')
  return seconds
}

/** `store` as one without checkpoints: what the full-fold baseline restores from. */
function withoutCheckpoints(store) {
  const { eventsAfter: _eventsAfter, checkpoint: _checkpoint, saveCheckpoint: _saveCheckpoint, ...plain } = store
  return plain
}

/** `store` refusing a full read of its history: the checkpoint restore must not need one. */
function checkpointOnly(store) {
  return {
    ...store,
    allEvents() {
      throw new Error('restore: the checkpoint restore read the whole retained history')
    },
  }
}

/**
 * Runs the recovery cases and returns table rows (`[case, weft, baseline, ratio, target]`), a
 * summary for the JSON line, and the targets missed.
 * @param {{ log: (line: string) => void }} options
 */
export async function recoveryCases({ log }) {
  log(`recovery: growing a Group log to ${EVENTS} Events`)
  const store = createMemoryStore({ checkpoints: true })
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

  log('recovery: compacting behind a signed snapshot at the head (a checkpoint follows), then restoring')
  const snapshot = signGroupSnapshot(
    buildGroupSnapshot(authority.group(GROUP), events, {
      snapshotId: 'urn:weft:bench:snapshot:1',
      createdBy: { type: 'service', id: cast.controlPlane.actor.id },
      createdAt: new Date(world.clock.nowMs).toISOString(),
    }),
    cast.controlPlane.key,
  )
  let began = performance.now()
  authority.compact(GROUP, snapshot)
  const compactSeconds = (performance.now() - began) / 1000
  if (store.checkpoint()?.manifest.snapshots.length !== 1) throw new Error('compact: no checkpoint naming the snapshot was saved')
  began = performance.now()
  const manifest = authority.checkpoint()
  const checkpointSeconds = (performance.now() - began) / 1000
  const restores = []
  const folds = []
  for (let i = 0; i < ROUNDS; i++) {
    restores.push(restoreOnce(checkpointOnly(store), head))
    folds.push(restoreOnce(withoutCheckpoints(store), head))
  }

  const replay = median(replays)
  const array = median(arrays)
  const restore = median(restores)
  const fold = median(folds)
  const missed = []
  if (replay < TARGETS.replayEventsPerSec) missed.push(`replay ${fmt(replay)} Events/s < ${fmt(TARGETS.replayEventsPerSec)}`)
  if (restore >= TARGETS.restoreSeconds) missed.push(`restore ${restore.toFixed(2)} s >= ${TARGETS.restoreSeconds} s at ${fmt(head)} Events`)
  const rows = [
    [`replay to a fresh subscriber, ${fmt(head)} Events (Events/s)`, fmt(replay), fmt(array), `${((100 * replay) / array).toFixed(1)}%`, `>= ${fmt(TARGETS.replayEventsPerSec)}`],
    ['bare loop over the same Events, baseline (Events/s)', fmt(array), '', '', ''],
    [`restore from the checkpoint after compaction, ${fmt(head)} Events (s)`, restore.toFixed(2), fold.toFixed(2), `${(restore / fold).toFixed(2)}x`, `< ${TARGETS.restoreSeconds}`],
    [`restore by folding the whole retained history, baseline (s)`, fold.toFixed(2), '', '', ''],
    [`checkpoint of the state, ${(manifest.imageBytes / 1e6).toFixed(0)} MB image (s)`, checkpointSeconds.toFixed(2), '', '', ''],
  ]
  const summary = {
    recoveryEvents: head,
    replayEventsPerSec: Math.round(replay),
    arrayBaselineEventsPerSec: Math.round(array),
    restoreSeconds: +restore.toFixed(3),
    fullFoldBaselineSeconds: +fold.toFixed(3),
    compactSeconds: +compactSeconds.toFixed(3),
    checkpointSeconds: +checkpointSeconds.toFixed(3),
    checkpointImageBytes: manifest.imageBytes,
    targets: TARGETS,
    missed,
  }
  return { rows, summary, missed }
}

// Run alone: `node bench/authority-recovery.mjs` (after `npm run build`).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { rows, summary, missed } = await recoveryCases({ log: (line) => console.error(line) })
  console.log(table(['authority recovery', 'weft', 'baseline', 'ratio', 'target'], rows))
  console.log(JSON.stringify({ suite: 'authority-recovery', ...summary }))
  if (missed.length) console.error(`targets missed: ${missed.join('; ')}`)
}
