// Open benchmark of the durable Authority store (§6.4, §15.2, §16): the time from opening a SQLite
// file to a running Authority over it, with the proof of its log that `weft serve` runs first
// (`proveLog`: PRAGMA quick_check, the chain of every Event, the signatures after the state
// checkpoint, the heads of the head file) and without it, in the same run, on the same file:
//
//   checkpoint   the file as `weft serve` leaves it after a clean stop: a state checkpoint at the
//                head, so the proof checks every Event by its chain and no signature, and the
//                Authority resumes from the checkpoint
//   no checkpoint the same file without its checkpoint (as after a crash before the first clean
//                stop): the proof checks every Event's signature, the Authority folds the whole log
//
// The log is grown with Messages through trusted Commands (deferred Event signatures, signed as
// the store writes them), one Event each. WEFT_BENCH_OPEN_EVENTS sets its length (default 100000).
// `node bench/open.mjs` runs the suite alone over the last build.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { openSqliteAuthorityStore } from '@weft/store-sqlite'
import Database from 'better-sqlite3'
import { authorityOn, cast, createWorld, GROUP, registry } from './authority-world.mjs'
import { fmt, median, table } from './table.mjs'

const EVENTS = Number(process.env.WEFT_BENCH_OPEN_EVENTS ?? 100_000)
const ROUNDS = 3
/** After a clean stop the proof reads and hashes every Event once: at most as long again as the open itself, plus half. */
const TARGETS = { checkpointRatio: 2.5 }

// Each open begins as a restart does, without the garbage of the one before.
setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc')

/** Grows a SQLite log at `path` to at least {@link EVENTS} Events and saves a checkpoint at its head, as a clean stop does. */
async function grow(path, log) {
  const store = openSqliteAuthorityStore(path, { synchronous: 'normal' })
  const world = await createWorld({ trusted: true, authority: { store, deferEventSignatures: true } })
  const head = () => world.authority.group(GROUP).head
  const began = performance.now()
  while (head() < EVENTS) {
    await world.post()
    if (head() % 20_000 === 0) log(`  open: ${head()} Events (${((performance.now() - began) / 1000).toFixed(0)} s)`)
  }
  world.authority.checkpoint()
  const reached = head()
  store.close()
  return reached
}

/** Opens the file and starts an Authority over it, after proving its log when `prove`; seconds and the proof's summary. */
function openOnce(path, prove, head) {
  collectGarbage()
  const began = performance.now()
  const store = openSqliteAuthorityStore(path)
  const proof = prove ? store.proveLog({ registry: registry(), authority: cast.authority.actor }) : undefined
  const authority = authorityOn(
    { nowMs: Date.now() },
    {
      store,
      onWarning: (warning) => {
        throw new Error(`open: ${warning.message}`)
      },
    },
  )
  const seconds = (performance.now() - began) / 1000
  if (authority.group(GROUP).head !== head) throw new Error('open: the Authority does not reach the head')
  store.close()
  return { seconds, proof }
}

/** Medians of {@link ROUNDS} opens with and without the proof, alternating. */
function measure(path, head) {
  const proved = []
  const plain = []
  let proof
  for (let i = 0; i < ROUNDS; i++) {
    const run = openOnce(path, true, head)
    proved.push(run.seconds)
    proof = run.proof
    plain.push(openOnce(path, false, head).seconds)
  }
  return { proved: median(proved), plain: median(plain), proof }
}

/**
 * Runs the open cases and returns the table, a summary for the JSON line and the targets missed.
 * @param {{ log: (line: string) => void }} options
 */
export async function run({ log }) {
  const dir = mkdtempSync(join(tmpdir(), 'weft-bench-open-'))
  try {
    const path = join(dir, 'authority.db')
    log(`open: growing a SQLite log to ${EVENTS} Events`)
    const head = await grow(path, log)
    const bare = join(dir, 'no-checkpoint.db')
    copyFileSync(path, bare)
    copyFileSync(`${path}.heads`, `${bare}.heads`)
    const db = new Database(bare)
    db.exec('DELETE FROM checkpoints')
    db.close()

    log('open: after a clean stop (checkpoint at the head), with and without the proof')
    const clean = measure(path, head)
    log('open: without a checkpoint, with and without the proof')
    const crashed = measure(bare, head)

    const ratio = (m) => m.proved / m.plain
    const missed = []
    if (ratio(clean) > TARGETS.checkpointRatio) missed.push(`open with the proof after a clean stop ${ratio(clean).toFixed(2)}x > ${TARGETS.checkpointRatio}x`)
    const row = (name, m, target) => [name, m.proved.toFixed(2), m.plain.toFixed(2), `${ratio(m).toFixed(2)}x`, `${fmt(m.proof.signatures)} / ${fmt(m.proof.events)}`, target]
    const table_ = table(
      ['open a SQLite log of ' + fmt(head) + ' Events (s)', 'with proof', 'without', 'ratio', 'signatures / Events', 'target'],
      [row('after a clean stop: checkpoint at the head', clean, `<= ${TARGETS.checkpointRatio}x`), row('without a checkpoint: every signature, full fold', crashed, '')],
    )
    const summary = {
      events: head,
      checkpointProvedSeconds: +clean.proved.toFixed(3),
      checkpointPlainSeconds: +clean.plain.toFixed(3),
      checkpointRatio: +ratio(clean).toFixed(3),
      fullProvedSeconds: +crashed.proved.toFixed(3),
      fullPlainSeconds: +crashed.plain.toFixed(3),
      fullRatio: +ratio(crashed).toFixed(3),
      targets: TARGETS,
      missed,
    }
    return { table: table_, summary, missed }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

// Run alone: `node bench/open.mjs` (after `npm run build`).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await run({ log: (line) => console.error(line) })
  console.log(result.table)
  console.log(JSON.stringify({ suite: 'open', ...result.summary }))
  if (result.missed.length) console.error(`targets missed: ${result.missed.join('; ')}`)
}
