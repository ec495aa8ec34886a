import { UsageError } from '@weft/codec'
import { REQUESTED_URGENCIES } from '@weft/spec'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Scheduler, SchedulerItem, SchedulerOptions } from './seams.js'
import { createScheduler, MAX_URGENCY, schedulerRank, urgencyLevel } from './scheduler.js'

const T0 = Date.parse('2026-07-15T00:00:00.000Z')
const AGING = 60_000

/** `count` ready items of `groupId`, ids `${groupId}/${i}`, one ms apart. */
function fill(s: Scheduler, groupId: string, count: number, extra: Partial<SchedulerItem> = {}): void {
  for (let i = 0; i < count; i++) s.enqueue({ id: `${groupId}/${i}`, groupId, urgency: 0, readyAtMs: T0 + i, ...extra })
}

/** Picks `n` times, releasing each pick at once; returns how many picks each Group got. */
function pickReleasing(s: Scheduler, n: number): Map<string, number> {
  const counts = new Map<string, number>()
  for (let i = 0; i < n; i++) {
    const item = s.pick(T0 + i)
    if (item === undefined) break
    counts.set(item.groupId, (counts.get(item.groupId) ?? 0) + 1)
    s.release(item.id)
  }
  return counts
}

function pickIds(s: Scheduler, n: number): string[] {
  const ids: string[] = []
  for (let i = 0; i < n; i++) {
    const item = s.pick(T0)
    if (item === undefined) break
    ids.push(item.id)
  }
  return ids
}

/** Asserts each Group's share of `counts` is within `tolerance` (relative) of its weight share. */
function expectShares(counts: Map<string, number>, weights: Record<string, number>, tolerance: number): void {
  const total = [...counts.values()].reduce((a, b) => a + b, 0)
  const weightSum = Object.values(weights).reduce((a, b) => a + b, 0)
  for (const [groupId, weight] of Object.entries(weights)) {
    const expected = (total * weight) / weightSum
    expect(Math.abs((counts.get(groupId) ?? 0) - expected) / expected).toBeLessThanOrEqual(tolerance)
  }
}

describe('urgencyLevel', () => {
  it('maps the requested urgencies in order to 0..MAX_URGENCY and refuses anything else', () => {
    expect(REQUESTED_URGENCIES.map(urgencyLevel)).toEqual([0, 1, 2, 3])
    expect(urgencyLevel('critical')).toBe(MAX_URGENCY)
    for (const bad of ['', 'urgent', 'Critical', 'toString', '__proto__']) expect(() => urgencyLevel(bad)).toThrow(UsageError)
  })
})

describe('options and items are checked', () => {
  it('refuses bad agingMs, weights, quotas, items and clocks with UsageError', () => {
    for (const agingMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => createScheduler({ agingMs })).toThrow(UsageError)
    for (const weight of [0, -2, Number.NaN, Number.POSITIVE_INFINITY]) {
      const s = createScheduler({ weightOf: () => weight })
      expect(() => fill(s, 'g', 1)).toThrow(UsageError)
      expect(s.size).toBe(0)
      expect(() => createScheduler().setWeight('g', weight)).toThrow(UsageError)
    }
    for (const quota of [-1, 1.5, Number.NaN]) expect(() => fill(createScheduler({ quotaOf: () => quota }), 'g', 1)).toThrow(UsageError)
    const s = createScheduler()
    const good: SchedulerItem = { id: 'a', groupId: 'g', urgency: 1, readyAtMs: T0 }
    for (const bad of [{ id: '' }, { groupId: '' }, { urgency: -1 }, { urgency: 4 }, { urgency: Number.NaN }, { readyAtMs: Number.NaN }, { deadlineMs: Number.POSITIVE_INFINITY }]) {
      expect(() => s.enqueue({ ...good, ...bad })).toThrow(UsageError)
    }
    expect(s.size).toBe(0)
    expect(() => s.pick(Number.NaN)).toThrow(UsageError)
  })
})

describe('weighted fairness across Groups (§11.1)', () => {
  it('gives two saturated Groups of weights 3:1 their 3:1 share of 10,000 picks within 2%', () => {
    const weights = { a: 3, b: 1 }
    const s = createScheduler({ weightOf: (g) => weights[g as keyof typeof weights] })
    fill(s, 'a', 20_000)
    fill(s, 'b', 20_000)
    const counts = pickReleasing(s, 10_000)
    expectShares(counts, weights, 0.02)
    expect(s.size).toBe(30_000)
  })

  it('gives three saturated Groups of weights 5:3:1 their share within 2%', () => {
    const weights = { a: 5, b: 3, c: 1 }
    const s = createScheduler({ weightOf: (g) => weights[g as keyof typeof weights] })
    for (const g of Object.keys(weights)) fill(s, g, 10_000)
    expectShares(pickReleasing(s, 10_000), weights, 0.02)
  })

  it('orders by urgency inside a Group, yet a Group flooding critical work gets only its weight share', () => {
    const s = createScheduler()
    fill(s, 'flood', 5_000, { urgency: 3 })
    fill(s, 'calm', 5_000, { urgency: 0 })
    expectShares(pickReleasing(s, 4_000), { flood: 1, calm: 1 }, 0.02)

    const one = createScheduler()
    one.enqueue({ id: 'routine', groupId: 'g', urgency: 0, readyAtMs: T0 })
    one.enqueue({ id: 'high', groupId: 'g', urgency: 2, readyAtMs: T0 })
    one.enqueue({ id: 'critical', groupId: 'g', urgency: 3, readyAtMs: T0 })
    one.enqueue({ id: 'normal', groupId: 'g', urgency: 1, readyAtMs: T0 })
    expect(pickIds(one, 4)).toEqual(['critical', 'high', 'normal', 'routine'])
  })

  it('does not let a Group bank credit while idle', () => {
    const s = createScheduler()
    fill(s, 'busy', 3_000)
    fill(s, 'idle', 10)
    expect(pickReleasing(s, 1_020)).toEqual(
      new Map([
        ['busy', 1_010],
        ['idle', 10],
      ]),
    )
    fill(s, 'idle', 1_000)
    // Had the idle Group kept its pass of 0 it would take all of the next 200 picks.
    const after = pickReleasing(s, 200)
    expect(after.get('idle')).toBeGreaterThanOrEqual(99)
    expect(after.get('idle')).toBeLessThanOrEqual(101)
  })

  it('takes a weight change into account from the next pick on', () => {
    const s = createScheduler()
    fill(s, 'a', 5_000)
    fill(s, 'b', 5_000)
    expectShares(pickReleasing(s, 1_000), { a: 1, b: 1 }, 0.01)
    s.setWeight('a', 4)
    expectShares(pickReleasing(s, 2_000), { a: 4, b: 1 }, 0.02)
  })

  it('applies a weight set before the Group has any work', () => {
    const s = createScheduler()
    s.setWeight('heavy', 2)
    fill(s, 'heavy', 900)
    fill(s, 'light', 900)
    expectShares(pickReleasing(s, 900), { heavy: 2, light: 1 }, 0.02)
  })
})

describe('ordering inside a Group', () => {
  it('bounds starvation: a routine item under a steady stream of critical arrivals starts within the aging bound', () => {
    const stepMs = 1_000
    const arrivalsPerPick = 2
    const s = createScheduler({ agingMs: AGING })
    s.enqueue({ id: 'patient', groupId: 'g', urgency: 0, readyAtMs: T0 })
    // Critical items arriving after T0 + MAX_URGENCY * agingMs rank behind it, so at most the
    // arrivals of that window go first; each pick consumes one of them.
    const bound = arrivalsPerPick * Math.ceil((MAX_URGENCY * AGING) / stepMs) + 1
    let startedAt: number | undefined
    for (let pickNo = 1; pickNo <= 10 * bound && startedAt === undefined; pickNo++) {
      const now = T0 + (pickNo - 1) * stepMs
      for (let k = 0; k < arrivalsPerPick; k++) s.enqueue({ id: `urgent-${pickNo}-${k}`, groupId: 'g', urgency: 3, readyAtMs: now })
      const item = s.pick(now)
      if (item?.id === 'patient') startedAt = pickNo
      else if (item !== undefined) s.release(item.id)
    }
    expect(startedAt).toBeDefined()
    expect(startedAt!).toBeLessThanOrEqual(bound)
    // Urgency still counted: the critical arrivals of the first aging window went first.
    expect(startedAt!).toBeGreaterThan((MAX_URGENCY * AGING) / stepMs)
  })

  it('pulls an item ahead as its deadline nears, and not when it is far', () => {
    const item: SchedulerItem = { id: 'x', groupId: 'g', urgency: 0, readyAtMs: T0 }
    expect(schedulerRank(item, AGING)).toBe(T0)
    expect(schedulerRank({ ...item, urgency: 2 }, AGING)).toBe(T0 - 2 * AGING)
    expect(schedulerRank({ ...item, deadlineMs: T0 + 3_600_000 }, AGING)).toBe(T0)
    expect(schedulerRank({ ...item, deadlineMs: T0 + AGING }, AGING)).toBe(T0 + AGING - (MAX_URGENCY + 1) * AGING)

    const s = createScheduler({ agingMs: AGING })
    const now = T0 + 10 * AGING
    s.enqueue({ id: 'due-soon', groupId: 'g', urgency: 0, readyAtMs: now, deadlineMs: now + AGING / 2 })
    s.enqueue({ id: 'due-later', groupId: 'g', urgency: 0, readyAtMs: now, deadlineMs: now + 100 * AGING })
    s.enqueue({ id: 'fresh-critical', groupId: 'g', urgency: 3, readyAtMs: now })
    expect(pickIds(s, 3)).toEqual(['due-soon', 'fresh-critical', 'due-later'])
  })

  it('re-enqueueing reorders at once (§11.3), keeps first-come order on equal rank, and may move Groups', () => {
    const s = createScheduler()
    for (const id of ['a', 'b', 'c']) s.enqueue({ id, groupId: 'g', urgency: 1, readyAtMs: T0 })
    s.enqueue({ id: 'c', groupId: 'g', urgency: 3, readyAtMs: T0 })
    s.enqueue({ id: 'a', groupId: 'g', urgency: 1, readyAtMs: T0 })
    expect(s.size).toBe(3)
    expect(s.queued('g')).toBe(3)
    expect(pickIds(s, 3)).toEqual(['c', 'a', 'b'])

    const t = createScheduler()
    t.enqueue({ id: 'm', groupId: 'one', urgency: 0, readyAtMs: T0 })
    t.enqueue({ id: 'm', groupId: 'two', urgency: 0, readyAtMs: T0 })
    expect([t.queued('one'), t.queued('two'), t.size]).toEqual([0, 1, 1])
    expect(t.pick(T0)?.groupId).toBe('two')
  })
})

describe('quotas, risk gates, removal and bookkeeping', () => {
  it('never lets a Group hold more active items than its quota, and frees the slot on release', () => {
    const s = createScheduler({ quotaOf: (g) => (g === 'limited' ? 2 : Number.POSITIVE_INFINITY) })
    fill(s, 'limited', 10)
    fill(s, 'open', 5)
    const picked = pickIds(s, 100)
    expect(picked.filter((id) => id.startsWith('limited/'))).toEqual(['limited/0', 'limited/1'])
    expect(picked).toHaveLength(7)
    expect(s.active('limited')).toBe(2)
    expect(s.active('open')).toBe(5)
    expect(s.pick(T0)).toBeUndefined()
    expect([s.size, s.queued('limited'), s.queued('open')]).toEqual([8, 8, 0])
    s.release('limited/0')
    s.release('limited/0')
    expect(s.active('limited')).toBe(1)
    expect(s.pick(T0)?.id).toBe('limited/2')
    expect(s.pick(T0)).toBeUndefined()
  })

  it('holds risk-gated items until their gate opens, and keeps an opened gate across a re-enqueue with the same flag', () => {
    const s = createScheduler()
    s.enqueue({ id: 'risky', groupId: 'g', urgency: 3, readyAtMs: T0, riskGated: true })
    expect(s.pick(T0)).toBeUndefined()
    expect([s.size, s.queued('g'), s.has('risky')]).toEqual([1, 1, true])
    s.enqueue({ id: 'plain', groupId: 'g', urgency: 0, readyAtMs: T0 + 1 })
    s.setRiskGate('risky', true)
    s.enqueue({ id: 'risky', groupId: 'g', urgency: 3, readyAtMs: T0, riskGated: true })
    expect(s.pick(T0)?.id).toBe('risky')
    s.release('risky')

    s.setRiskGate('plain', false)
    expect(s.pick(T0)).toBeUndefined()
    s.setRiskGate('plain', true)
    // A re-enqueue that raises the risk flag closes the gate again.
    s.enqueue({ id: 'plain', groupId: 'g', urgency: 0, readyAtMs: T0 + 1, riskGated: true })
    expect(s.pick(T0)).toBeUndefined()
    expect(s.estimatedPosition('plain')).toBe(0)
    s.setRiskGate('plain', true)
    expect(s.pick(T0)?.id).toBe('plain')
    s.setRiskGate('plain', false)
    s.setRiskGate('nobody', true)
    expect([s.size, s.active('g')]).toEqual([0, 1])
  })

  it('removes queued items only, and keeps size, queued and active exact', () => {
    const s = createScheduler()
    fill(s, 'a', 3)
    fill(s, 'b', 2, { riskGated: true })
    expect([s.size, s.queued('a'), s.queued('b'), s.queued('none')]).toEqual([5, 3, 2, 0])
    expect(s.remove('b/0')).toBe(true)
    expect(s.remove('b/0')).toBe(false)
    const first = s.pick(T0)!
    expect(s.has(first.id)).toBe(false)
    expect(s.remove(first.id)).toBe(false)
    expect([s.size, s.queued('a'), s.queued('b'), s.active('a')]).toEqual([3, 2, 1, 1])
    // Re-enqueueing an active item puts it back in the queue and frees its slot (§11.3 step 5).
    s.enqueue(first)
    expect([s.size, s.queued('a'), s.active('a'), s.has(first.id)]).toEqual([4, 3, 0, true])
    expect(s.estimatedPosition('missing')).toBeUndefined()
  })
})

describe('estimatedPosition (§11.2)', () => {
  it('grows with rank inside the Group and with the weight of the other load', () => {
    const mixed = (): Scheduler => {
      const s = createScheduler()
      for (let i = 0; i < 20; i++) s.enqueue({ id: `m${i}`, groupId: 'mine', urgency: i % 4, readyAtMs: T0 + i })
      return s
    }
    // The pick order of an identical Scheduler: positions must rise along it.
    const order = pickIds(mixed(), 20)
    const s = mixed()
    const positions = order.map((id) => s.estimatedPosition(id)!)
    expect(positions[0]).toBe(0)
    for (let i = 1; i < positions.length; i++) expect(positions[i]!).toBeGreaterThan(positions[i - 1]!)

    const last = order.at(-1)!
    const alone = s.estimatedPosition(last)!
    fill(s, 'other', 100)
    const shared = s.estimatedPosition(last)!
    expect(shared).toBe(alone + 20)
    s.setWeight('other', 2)
    expect(s.estimatedPosition(last)).toBe(alone + 40)
    s.remove(order[0]!)
    expect(s.estimatedPosition(last)).toBeLessThan(alone + 40)
  })

  it('depends on other Groups only through their weights and counts, never their items', () => {
    const build = (otherUrgency: number, otherPrefix: string): Scheduler => {
      const s = createScheduler()
      fill(s, 'mine', 10)
      for (let i = 0; i < 30; i++) s.enqueue({ id: `${otherPrefix}${i}`, groupId: i % 2 ? 'x' : 'y', urgency: otherUrgency, readyAtMs: T0 - i * 1000 })
      return s
    }
    const one = build(0, 'secret-a-')
    const two = build(3, 'other-b-')
    for (let i = 0; i < 10; i++) {
      const position = one.estimatedPosition(`mine/${i}`)
      expect(Number.isInteger(position)).toBe(true)
      expect(position).toBe(two.estimatedPosition(`mine/${i}`))
    }
  })
})

// ---------------------------------------------------------------------------------------------
// A naive model: linear scans over every item and Group, stride passes kept by hand.
// ---------------------------------------------------------------------------------------------

const GROUPS = ['g0', 'g1', 'g2', 'g3'] as const
const WEIGHTS: Record<string, number> = { g0: 1, g1: 2, g2: 3, g3: 0.5 }
const QUOTAS: Record<string, number> = { g0: 1, g1: 2, g2: Number.POSITIVE_INFINITY, g3: Number.POSITIVE_INFINITY }
const MODEL_OPTIONS: SchedulerOptions = { weightOf: (g) => WEIGHTS[g]!, quotaOf: (g) => QUOTAS[g]!, agingMs: 1_000 }

interface ModelItem {
  item: SchedulerItem
  seq: number
  state: 'queued' | 'active'
  open: boolean
}

class Model {
  readonly items = new Map<string, ModelItem>()
  readonly groups = new Map<string, { order: number; weight: number; pass: number }>()
  virtual = 0
  seq = 0

  group(groupId: string, weight = WEIGHTS[groupId]!) {
    let g = this.groups.get(groupId)
    if (g === undefined) this.groups.set(groupId, (g = { order: this.groups.size, weight, pass: this.virtual }))
    return g
  }

  ready(groupId: string): ModelItem[] {
    return [...this.items.values()].filter((m) => m.item.groupId === groupId && m.state === 'queued' && m.open)
  }

  activeCount(groupId: string): number {
    return [...this.items.values()].filter((m) => m.item.groupId === groupId && m.state === 'active').length
  }

  isEligible(groupId: string): boolean {
    return this.ready(groupId).length > 0 && this.activeCount(groupId) < QUOTAS[groupId]!
  }

  /** Runs `change`, then lifts every Group that just became eligible to the global virtual time. */
  step<R>(change: () => R): R {
    const before = new Set(GROUPS.filter((g) => this.isEligible(g)))
    const result = change()
    for (const g of GROUPS) if (!before.has(g) && this.isEligible(g)) this.group(g).pass = Math.max(this.group(g).pass, this.virtual)
    return result
  }

  enqueue(item: SchedulerItem): void {
    const previous = this.items.get(item.id)
    this.group(item.groupId)
    const sameFlag = previous !== undefined && (previous.item.riskGated === true) === (item.riskGated === true)
    this.items.set(item.id, { item, seq: previous?.seq ?? this.seq++, state: 'queued', open: sameFlag ? previous.open : item.riskGated !== true })
  }

  pick(): SchedulerItem | undefined {
    const rank = (m: ModelItem) => Math.min(m.item.readyAtMs - m.item.urgency * 1_000, (m.item.deadlineMs ?? Infinity) - 4 * 1_000)
    const groupIds = GROUPS.filter((g) => this.isEligible(g)).sort((a, b) => this.group(a).pass - this.group(b).pass || this.group(a).order - this.group(b).order)
    const chosen = groupIds[0]
    if (chosen === undefined) return undefined
    const best = this.ready(chosen).sort((a, b) => rank(a) - rank(b) || a.seq - b.seq)[0]!
    best.state = 'active'
    const g = this.group(chosen)
    this.virtual = g.pass
    g.pass += 1 / g.weight
    return best.item
  }
}

type Op =
  | { kind: 'enqueue'; item: SchedulerItem }
  | { kind: 'remove' | 'release'; id: string }
  | { kind: 'pick' }
  | { kind: 'burst'; picks: number }
  | { kind: 'gate'; id: string; open: boolean }
  | { kind: 'weight'; groupId: string; weight: number }

const IDS = Array.from({ length: 32 }, (_, i) => `w${i}`)
const anyId = fc.constantFrom(...IDS)
const anyOp: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record({
        id: anyId,
        groupId: fc.constantFrom(...GROUPS),
        urgency: fc.integer({ min: 0, max: 3 }),
        readyAtMs: fc.integer({ min: 0, max: 20_000 }),
        deadlineMs: fc.option(fc.integer({ min: 0, max: 30_000 }), { nil: undefined }),
        riskGated: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
      })
      .map(({ deadlineMs, ...rest }): Op => ({ kind: 'enqueue', item: deadlineMs === undefined ? rest : { ...rest, deadlineMs } })),
  },
  { weight: 4, arbitrary: fc.constant<Op>({ kind: 'pick' }) },
  // Runs of pick-and-release move the virtual time on while other Groups sit idle.
  { weight: 2, arbitrary: fc.integer({ min: 2, max: 24 }).map((picks): Op => ({ kind: 'burst', picks })) },
  { weight: 1, arbitrary: anyId.map((id): Op => ({ kind: 'remove', id })) },
  { weight: 2, arbitrary: anyId.map((id): Op => ({ kind: 'release', id })) },
  { weight: 2, arbitrary: fc.record({ id: anyId, open: fc.boolean() }).map((r): Op => ({ kind: 'gate', ...r })) },
  { weight: 1, arbitrary: fc.record({ groupId: fc.constantFrom(...GROUPS), weight: fc.constantFrom(0.5, 1, 2, 5) }).map((r): Op => ({ kind: 'weight', ...r })) },
)

function applyToModel(model: Model, op: Op): string | undefined {
  if (op.kind === 'burst')
    return burst(
      op.picks,
      () => applyToModel(model, { kind: 'pick' }),
      (id) => applyToModel(model, { kind: 'release', id }),
    )
  return model.step(() => {
    const m = 'id' in op ? model.items.get(op.id) : undefined
    switch (op.kind) {
      case 'enqueue':
        model.enqueue(op.item)
        return undefined
      case 'pick':
        return model.pick()?.id
      case 'remove':
      case 'release':
        if (m !== undefined && (m.state === 'queued') === (op.kind === 'remove')) model.items.delete(op.id)
        return undefined
      case 'gate':
        if (m?.state === 'queued') m.open = op.open
        return undefined
      case 'weight':
        model.group(op.groupId, op.weight).weight = op.weight
        return undefined
    }
  })
}

/** Up to `picks` picks, each released at once; the picked IDs joined. */
function burst(picks: number, pick: () => string | undefined, release: (id: string) => unknown): string {
  const ids: string[] = []
  for (let i = 0; i < picks; i++) {
    const id = pick()
    if (id === undefined) break
    ids.push(id)
    release(id)
  }
  return ids.join(' ')
}

function applyToScheduler(s: Scheduler, op: Op): string | undefined {
  switch (op.kind) {
    case 'enqueue':
      s.enqueue(op.item)
      return undefined
    case 'pick':
      return s.pick(0)?.id
    case 'burst':
      return burst(
        op.picks,
        () => s.pick(0)?.id,
        (id) => s.release(id),
      )
    case 'remove':
      s.remove(op.id)
      return undefined
    case 'release':
      s.release(op.id)
      return undefined
    case 'gate':
      s.setRiskGate(op.id, op.open)
      return undefined
    case 'weight':
      s.setWeight(op.groupId, op.weight)
      return undefined
  }
}

/** size, per-Group queued and active counts, and per-ID queued state of the Scheduler, as text. */
function bookkeeping(s: Scheduler): string {
  const groups = GROUPS.map((g) => `${g}:${s.queued(g)}/${s.active(g)}`)
  const ids = IDS.filter((id) => s.has(id) && s.estimatedPosition(id) !== undefined)
  return `${s.size} ${groups.join(' ')} ${ids.join(',')}`
}

/** The same text, recounted from the model. */
function modelBookkeeping(model: Model): string {
  const queued = [...model.items.values()].filter((m) => m.state === 'queued')
  const groups = GROUPS.map((g) => `${g}:${queued.filter((m) => m.item.groupId === g).length}/${model.activeCount(g)}`)
  const ids = IDS.filter((id) => model.items.get(id)?.state === 'queued')
  return `${queued.length} ${groups.join(' ')} ${ids.join(',')}`
}

describe('against a naive model', () => {
  it('agrees on every pick and on size, queued, active and has after any sequence of operations', () => {
    // Invariant: pick takes the best-ranked ready item of the eligible Group with the smallest
    // pass (ties to the first-seen Group), and the counts match a linear recount.
    fc.assert(
      fc.property(fc.array(anyOp, { minLength: 1, maxLength: 200, size: 'max' }), (ops) => {
        const s = createScheduler(MODEL_OPTIONS)
        const model = new Model()
        for (const op of ops) {
          expect(applyToScheduler(s, op)).toBe(applyToModel(model, op))
          // One comparison per step keeps the run fast; the strings name what differs.
          expect(bookkeeping(s)).toBe(modelBookkeeping(model))
          for (const g of GROUPS) expect(s.active(g)).toBeLessThanOrEqual(QUOTAS[g]!)
        }
      }),
      { numRuns: 120, seed: 20260715 },
    )
  })
})
