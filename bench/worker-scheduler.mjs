// Worker Scheduler benchmark cases: the cost of one pick of the reference Worker's Scheduler
// (§11.1) at two queue sizes, each measured in the same run so the ratio speaks for the growth.
//
//   large    100,000 queued items across 1,000 Groups
//   small      1,000 queued items across    10 Groups (the baseline)
//   gated    100,000 queued items across 1,000 Groups, 900 of which hold only risk-gated items:
//            gated items and idle Groups must cost a pick nothing
//   floor    the same streams of items kept in a Map by ID and a first-in first-out ring: the
//            bookkeeping any Scheduler addressed by ID pays, and how much of it grows with size
//            in this process (cache and collector) rather than with the Scheduler's heaps
//
// One timed step is pick, release of the picked item and enqueue of a fresh item into the same
// Group, so the queue keeps its size and shape for the whole round. Weights vary 1..4 across
// Groups and urgencies 0..3 across items, the same every run. The figure is µs per step, median
// of rounds; the cases take turns within a round, so machine load reaches them alike, and each is
// built afresh for its turn, so no case is timed beside another's live heap.
import { createScheduler } from '@weft/worker'
import { median } from './table.mjs'

const ROUNDS = 7
const PICKS = Number(process.env.WEFT_BENCH_SCHEDULER_PICKS ?? 50_000)
/** Untimed steps before each timed run: the JIT settles and the previous case's garbage is collected. */
const WARMUP_PICKS = 20_000
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

/**
 * A timed step over `items` queued items: `take()` removes the next item, `put(item)` queues one.
 * Returns `steps(picks)`: that many take, then put of a fresh item of the same Group; µs per step.
 */
function stepper(items, { make, initial }, take, put) {
  // Only `make` stays reachable from the returned closure: the initial items live in the queue alone.
  for (const item of initial) put(item)
  let next = items
  let now = T0 + items
  return (picks) => {
    const began = performance.now()
    for (let i = 0; i < picks; i++) {
      const item = take(++now)
      if (item === undefined) throw new Error('scheduler bench: nothing to pick from a loaded queue')
      put(make(next++, item.groupId, now))
    }
    return ((performance.now() - began) * 1000) / picks
  }
}

/** The Scheduler loaded as `shape` says; each step is pick, release and a fresh enqueue. */
function loaded(shape) {
  const scheduler = createScheduler({ weightOf: (groupId) => 1 + (Number(groupId.slice(1)) % 4) })
  const take = (now) => {
    const item = scheduler.pick(now)
    if (item !== undefined) scheduler.release(item.id)
    return item
  }
  const steps = stepper(shape.items, itemSource(shape), take, (item) => scheduler.enqueue(item))
  return (picks) => {
    const us = steps(picks)
    if (scheduler.size !== shape.items) throw new Error(`scheduler bench: queue drifted to ${scheduler.size} items`)
    return us
  }
}

/** The floor for `shape`: a Map by ID and a ring, first in first out, with the same items. */
function floor(shape) {
  const byId = new Map()
  const ring = new Array(shape.items)
  let head = 0
  let tail = 0
  const take = () => {
    const item = ring[head]
    head = (head + 1) % shape.items
    byId.delete(item.id)
    return item
  }
  const put = (item) => {
    byId.set(item.id, item)
    ring[tail] = item
    tail = (tail + 1) % shape.items
  }
  return stepper(shape.items, itemSource(shape), take, put)
}

/**
 * The Scheduler cases of the Worker benchmark. Rows follow the suite header
 * `['worker', 'weft', 'baseline', 'ratio', 'target']`.
 * @param {{ log: (line: string) => void }} options
 * @returns {Promise<{ rows: string[][], summary: object, missed: string[] }>}
 */
export async function schedulerCases({ log }) {
  log(`worker scheduler: loading 100,000 and 1,000 items; ${ROUNDS} rounds of ${PICKS} picks`)
  const large = { items: 100_000, groups: 1_000 }
  const small = { items: 1_000, groups: 10 }
  const cases = {
    large: () => loaded(large),
    small: () => loaded(small),
    gated: () => loaded({ ...large, gatedFrom: 100 }),
    floorLarge: () => floor(large),
    floorSmall: () => floor(small),
  }
  const samples = Object.fromEntries(Object.keys(cases).map((name) => [name, []]))
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, build] of Object.entries(cases)) {
      // Built afresh and dropped after its turn: the small queue is not timed while the large
      // ones stay live in the same heap, where the collector would charge it for their size.
      const steps = build()
      steps(WARMUP_PICKS)
      samples[name].push(steps(PICKS))
    }
    log(`  round ${r + 1} of ${ROUNDS}`)
  }
  const us = Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, median(s)]))
  const ratio = us.large / us.small
  const floorRatio = us.floorLarge / us.floorSmall

  const missed = []
  if (us.large > TARGETS.pickUsLarge) missed.push(`scheduler step at 100k items ${us.large.toFixed(2)} µs > ${TARGETS.pickUsLarge} µs`)
  if (ratio > TARGETS.largeVsSmallRatio) missed.push(`scheduler step 100k/1k ${ratio.toFixed(2)}x > ${TARGETS.largeVsSmallRatio}x (floor ${floorRatio.toFixed(2)}x)`)

  const fmtUs = (x) => `${x.toFixed(2)} µs`
  const times = (x) => `${x.toFixed(2)}x`
  const rows = [
    ['scheduler pick+release+enqueue, 100k items / 1,000 Groups', fmtUs(us.large), fmtUs(us.small), times(ratio), `< ${TARGETS.pickUsLarge} µs, <= ${TARGETS.largeVsSmallRatio}x`],
    ['scheduler pick+release+enqueue, 1k items / 10 Groups, baseline', fmtUs(us.small), '', '', ''],
    ['scheduler pick+release+enqueue, 100k items, 900 Groups gated', fmtUs(us.gated), fmtUs(us.large), times(us.gated / us.large), ''],
    ['floor: Map by ID + FIFO ring, 100k items', fmtUs(us.floorLarge), fmtUs(us.floorSmall), times(floorRatio), ''],
  ]
  const summary = {
    schedulerPicksPerRound: PICKS,
    schedulerStepUsLarge: +us.large.toFixed(3),
    schedulerStepUsSmall: +us.small.toFixed(3),
    schedulerStepUsGated: +us.gated.toFixed(3),
    schedulerLargeVsSmall: +ratio.toFixed(3),
    schedulerFloorUsLarge: +us.floorLarge.toFixed(3),
    schedulerFloorUsSmall: +us.floorSmall.toFixed(3),
    schedulerFloorLargeVsSmall: +floorRatio.toFixed(3),
    schedulerTargets: TARGETS,
    schedulerTargetsMet: missed.length === 0,
  }
  return { rows, summary, missed }
}
