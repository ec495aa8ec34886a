// Worker Scheduler benchmark cases: the cost of a pick of the reference Worker's Scheduler
// (§11.1) at two queue sizes, each measured in the same run so the ratio speaks for the growth.
//
//   large    100,000 queued items across 1,000 Groups
//   small      1,000 queued items across    10 Groups (the baseline)
//   gated    100,000 queued items across 1,000 Groups, 900 of which hold only risk-gated items:
//            gated items and idle Groups must cost a pick nothing
//   floor    the same streams of items kept in a Map by ID and a first-in first-out ring (a take
//            reads the ring and deletes from the Map, a put sets both): the bookkeeping any
//            Scheduler addressed by ID pays, and how much of it grows with size in this process
//            (cache and collector) rather than with the Scheduler's heaps
//
// Two ways of timing, the same number of rounds and of timed picks per round for every case:
//
//   pick alone  what the target names ("pick cost"). Batches of BATCH picks are timed and
//               nothing else; after each batch, untimed, every picked item is released and a
//               fresh item of its Group is queued. The same batch size for both sizes keeps the
//               large queue within [99,500, 100,000] items and the small one within [500, 1,000],
//               never below half. The figure is the timed total over the picks.
//   step        pick, release of the picked item and enqueue of a fresh item into the same Group,
//               all timed, so the queue keeps its size and shape for the whole round.
//
// Weights vary 1..4 across Groups and urgencies 0..3 across items, the same every run. Figures are
// µs per pick (or step), median of rounds; the cases take turns within a round, so machine load
// reaches them alike, and each is built afresh for its turn, so no case is timed beside another's
// live heap. Every case runs the same untimed warm-up before its timed picks.
import { createScheduler } from '@weft/worker'
import { median } from './table.mjs'

const ROUNDS = 7
const PICKS = Number(process.env.WEFT_BENCH_SCHEDULER_PICKS ?? 50_000)
/** Untimed picks before each timed run: the JIT settles and the previous case's garbage is collected. */
const WARMUP_PICKS = 20_000
/** Picks per timed batch of the pick-alone cases: half the small queue. */
const BATCH = 500
const T0 = Date.parse('2026-07-15T00:00:00.000Z')
const TARGETS = { pickUsLarge: 20, largeVsSmallRatio: 3 }

/**
 * Items spread evenly over `groups` Groups; `make(n, groupId, readyAtMs)` builds item `n`. Its
 * urgency is the top two bits of a multiplicative hash of `n`: scattered, yet the same every run.
 */
function itemSource({ items, groups, gatedFrom = groups }) {
  const make = (n, groupId, readyAtMs, riskGated = false) => ({ id: `i${n}`, groupId, urgency: Math.imul(n, 0x9e3779b1) >>> 30, readyAtMs, riskGated })
  const initial = Array.from({ length: items }, (_, n) => make(n, `g${n % groups}`, T0 + n, n % groups >= gatedFrom))
  return { make, initial }
}

/** A Scheduler seen as a queue: `take(now)` picks, `release(item)` frees its slot, `put(item)` queues, `size()` counts. */
function schedulerQueue() {
  const scheduler = createScheduler({ weightOf: (groupId) => 1 + (Number(groupId.slice(1)) % 4) })
  return {
    take: (now) => scheduler.pick(now),
    release: (item) => scheduler.release(item.id),
    put: (item) => scheduler.enqueue(item),
    size: () => scheduler.size,
  }
}

/** The floor for `shape`: a Map by ID and a ring, first in first out; a release costs it nothing. */
function floorQueue(shape) {
  const byId = new Map()
  const ring = new Array(shape.items)
  let head = 0
  let tail = 0
  return {
    take: () => {
      const item = ring[head]
      head = (head + 1) % shape.items
      byId.delete(item.id)
      return item
    },
    release: () => {},
    put: (item) => {
      byId.set(item.id, item)
      ring[tail] = item
      tail = (tail + 1) % shape.items
    },
    size: () => byId.size,
  }
}

/**
 * `queue` loaded with the items of `shape`, and a run of `picks` picks timed one of two ways
 * (`timing` 'step' or 'pick', see the header); the run returns µs per pick. Only `make` and the
 * queue stay reachable from the run: the initial items live in the queue alone.
 */
function loaded(queue, shape, timing) {
  const { make, initial } = itemSource(shape)
  for (const item of initial) queue.put(item)
  let next = shape.items
  let now = T0 + shape.items
  const take = () => {
    const item = queue.take(++now)
    if (item === undefined) throw new Error('scheduler bench: nothing to pick from a loaded queue')
    return item
  }
  const replace = (item) => {
    queue.release(item)
    queue.put(make(next++, item.groupId, now))
  }
  const steps = (picks) => {
    const began = performance.now()
    for (let i = 0; i < picks; i++) replace(take())
    return performance.now() - began
  }
  const picked = new Array(BATCH)
  const batches = (picks) => {
    let ms = 0
    for (let done = 0; done < picks; done += BATCH) {
      const n = Math.min(BATCH, picks - done)
      const began = performance.now()
      for (let i = 0; i < n; i++) picked[i] = take()
      ms += performance.now() - began
      for (let i = 0; i < n; i++) replace(picked[i])
    }
    return ms
  }
  const timed = timing === 'step' ? steps : batches
  return (picks) => {
    const us = (timed(picks) * 1000) / picks
    if (queue.size() !== shape.items) throw new Error(`scheduler bench: queue drifted to ${queue.size()} items`)
    return us
  }
}

/**
 * The Scheduler cases of the Worker benchmark. Rows follow the suite header
 * `['worker', 'weft', 'baseline', 'ratio', 'target']`; the targets apply to the pick-alone row.
 * @param {{ log: (line: string) => void }} options
 * @returns {Promise<{ rows: string[][], summary: object, missed: string[] }>}
 */
export async function schedulerCases({ log }) {
  log(`worker scheduler: loading 100,000 and 1,000 items; ${ROUNDS} rounds of ${PICKS} picks per case`)
  const large = { items: 100_000, groups: 1_000 }
  const small = { items: 1_000, groups: 10 }
  const cases = {
    pickLarge: () => loaded(schedulerQueue(), large, 'pick'),
    pickSmall: () => loaded(schedulerQueue(), small, 'pick'),
    stepLarge: () => loaded(schedulerQueue(), large, 'step'),
    stepSmall: () => loaded(schedulerQueue(), small, 'step'),
    gated: () => loaded(schedulerQueue(), { ...large, gatedFrom: 100 }, 'step'),
    floorPickLarge: () => loaded(floorQueue(large), large, 'pick'),
    floorPickSmall: () => loaded(floorQueue(small), small, 'pick'),
    floorStepLarge: () => loaded(floorQueue(large), large, 'step'),
    floorStepSmall: () => loaded(floorQueue(small), small, 'step'),
  }
  const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]))
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, build] of Object.entries(cases)) {
      // Built afresh and dropped after its turn: the small queue is not timed while the large
      // ones stay live in the same heap, where the collector would charge it for their size.
      const run = build()
      run(WARMUP_PICKS)
      samples[name].push(run(PICKS))
    }
    log(`  round ${r + 1} of ${ROUNDS}`)
  }
  const us = Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, median(s)]))
  const ratio = (name) => us[`${name}Large`] / us[`${name}Small`]

  const missed = []
  if (us.pickLarge > TARGETS.pickUsLarge) missed.push(`scheduler pick at 100k items ${us.pickLarge.toFixed(2)} µs > ${TARGETS.pickUsLarge} µs`)
  if (ratio('pick') > TARGETS.largeVsSmallRatio) {
    missed.push(`scheduler pick 100k/1k ${ratio('pick').toFixed(2)}x > ${TARGETS.largeVsSmallRatio}x (floor ${ratio('floorPick').toFixed(2)}x)`)
  }

  const fmtUs = (x) => `${x.toFixed(2)} µs`
  const times = (x) => `${x.toFixed(2)}x`
  const pair = (name) => [fmtUs(us[`${name}Large`]), fmtUs(us[`${name}Small`]), times(ratio(name))]
  const rows = [
    ['scheduler pick alone, 100k items / 1,000 Groups', ...pair('pick'), `< ${TARGETS.pickUsLarge} µs, <= ${TARGETS.largeVsSmallRatio}x`],
    ['scheduler pick alone, 1k items / 10 Groups, baseline', fmtUs(us.pickSmall), '', '', ''],
    ['scheduler pick+release+enqueue, 100k items / 1,000 Groups', ...pair('step'), ''],
    ['scheduler pick+release+enqueue, 1k items / 10 Groups, baseline', fmtUs(us.stepSmall), '', '', ''],
    ['scheduler pick+release+enqueue, 100k items, 900 Groups gated', fmtUs(us.gated), fmtUs(us.stepLarge), times(us.gated / us.stepLarge), ''],
    ['floor: Map by ID + FIFO ring, take alone, 100k items / 1k', ...pair('floorPick'), ''],
    ['floor: Map by ID + FIFO ring, take+put, 100k items / 1k', ...pair('floorStep'), ''],
  ]
  const figure = (x) => +x.toFixed(3)
  const summary = {
    schedulerPicksPerRound: PICKS,
    schedulerPickBatch: BATCH,
    schedulerPickUsLarge: figure(us.pickLarge),
    schedulerPickUsSmall: figure(us.pickSmall),
    schedulerPickLargeVsSmall: figure(ratio('pick')),
    schedulerStepUsLarge: figure(us.stepLarge),
    schedulerStepUsSmall: figure(us.stepSmall),
    schedulerStepUsGated: figure(us.gated),
    schedulerStepLargeVsSmall: figure(ratio('step')),
    schedulerFloorPickUsLarge: figure(us.floorPickLarge),
    schedulerFloorPickUsSmall: figure(us.floorPickSmall),
    schedulerFloorPickLargeVsSmall: figure(ratio('floorPick')),
    schedulerFloorUsLarge: figure(us.floorStepLarge),
    schedulerFloorUsSmall: figure(us.floorStepSmall),
    schedulerFloorLargeVsSmall: figure(ratio('floorStep')),
    schedulerTargets: TARGETS,
    schedulerTargetsMet: missed.length === 0,
  }
  return { rows, summary, missed }
}
