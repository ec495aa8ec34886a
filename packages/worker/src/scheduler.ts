/**
 * The reference Worker's Scheduler (§11.1): stride scheduling across Groups for weighted
 * fairness, a static rank of urgency, deadline and age inside each Group, per-Group quotas and
 * risk gates. Pure bookkeeping: no clock, no I/O; the Worker feeds it from its per-Group
 * projections and asks it which WorkItem goes into the next free slot.
 * @module
 */
import { UsageError } from '@weft/codec'
import type { RequestedUrgency } from '@weft/spec'
import type { Scheduler, SchedulerItem, SchedulerOptions } from './seams.js'
import { grownArray, SlotHeaps, type SlotTable } from './heap.js'

/** The highest urgency level {@link urgencyLevel} yields and {@link SchedulerItem.urgency} accepts. */
export const MAX_URGENCY = 3

/** The default {@link SchedulerOptions.agingMs}: one minute of waiting weighs as much as one urgency level. */
export const DEFAULT_AGING_MS = 60_000

const URGENCY_LEVELS: Readonly<Record<RequestedUrgency, number>> = { routine: 0, normal: 1, high: 2, critical: 3 }

/**
 * Maps a Work Contract's `requestedUrgency` (`routine`, `normal`, `high`, `critical`) to the
 * Scheduler's level 0..{@link MAX_URGENCY}. The level orders work inside its Group only (§11.1).
 * @throws UsageError for any other string.
 * @example
 * ```ts
 * scheduler.enqueue({ id, groupId, urgency: urgencyLevel(contract.requestedUrgency), readyAtMs: now })
 * ```
 */
export function urgencyLevel(contractUrgency: string): number {
  const level = Object.hasOwn(URGENCY_LEVELS, contractUrgency) ? URGENCY_LEVELS[contractUrgency as RequestedUrgency] : undefined
  if (level === undefined) throw new UsageError(`urgencyLevel: unknown requested urgency ${JSON.stringify(contractUrgency)}`)
  return level
}

/**
 * The static rank of an item inside its Group (lower starts first), in epoch ms.
 *
 * - Age and urgency: `readyAtMs - urgency * agingMs`. Each urgency level is worth `agingMs` of
 *   waiting, so an item that has waited `W` ms is passed only by later arrivals whose urgency
 *   exceeds its own by more than `W / agingMs` levels; once it has waited
 *   `MAX_URGENCY * agingMs` nothing that arrives afterwards passes it (anti-starvation, §11.1).
 * - Deadline: an item with a deadline ranks no later than `deadlineMs - (MAX_URGENCY + 1) * agingMs`,
 *   as though it had waited at the lowest urgency since then; from `agingMs` before its deadline
 *   it therefore outranks every fresh arrival, even a critical one.
 *
 * Neither term depends on the current time, so keys never need re-keying as time passes.
 */
export function schedulerRank(item: SchedulerItem, agingMs: number): number {
  const byAge = item.readyAtMs - item.urgency * agingMs
  return item.deadlineMs === undefined ? byAge : Math.min(byAge, item.deadlineMs - (MAX_URGENCY + 1) * agingMs)
}

/**
 * Where an item slot stands when it sits in no heap, kept in its position entry of the item
 * {@link SlotTable} (a ready slot's entry holds its position in its Group's heap, >= 0): one
 * array holds both, so a pick writes the state in the cache line the heap just wrote.
 */
const GATED = -2
const ACTIVE = -3
const FREE = -4

/** Item slots (and Group indices) the arrays hold before their first growth. */
const INITIAL_SLOTS = 64

function checkWeight(groupId: string, weight: number): number {
  if (!(Number.isFinite(weight) && weight > 0)) throw new UsageError(`Scheduler: the weight of Group ${groupId} must be a finite number > 0, got ${weight}`)
  return weight
}

function checkQuota(groupId: string, quota: number): number {
  if (!(quota === Number.POSITIVE_INFINITY || (Number.isSafeInteger(quota) && quota >= 0))) {
    throw new UsageError(`Scheduler: the quota of Group ${groupId} must be a whole number >= 0 or Infinity, got ${quota}`)
  }
  return quota
}

/** What `item` lacks to be queued; `undefined` when it is well formed. */
function lackOf(item: SchedulerItem): string | undefined {
  if (typeof item.id !== 'string' || item.id === '') return 'an id'
  if (typeof item.groupId !== 'string' || item.groupId === '') return 'a groupId'
  // The starvation bound of schedulerRank holds only for urgencies within 0..MAX_URGENCY.
  if (!(Number.isFinite(item.urgency) && item.urgency >= 0 && item.urgency <= MAX_URGENCY)) return `an urgency in 0..${MAX_URGENCY}`
  if (!Number.isFinite(item.readyAtMs)) return 'a finite readyAtMs'
  if (item.deadlineMs !== undefined && !Number.isFinite(item.deadlineMs)) return 'a finite deadlineMs'
  return undefined
}

function checkItem(item: SchedulerItem): void {
  const needs = lackOf(item)
  if (needs !== undefined) throw new UsageError(`Scheduler.enqueue: the item needs ${needs}: ${JSON.stringify(item)}`)
}

/**
 * Creates the Worker-owned {@link Scheduler} (§11.1).
 *
 * Across Groups it runs stride scheduling: every Group has a virtual pass, the pick goes to the
 * eligible Group with the smallest pass (ready item, under quota), and that Group's pass then grows
 * by `1 / weight`, so saturated Groups are served in proportion to their weights. A Group that
 * becomes eligible again (after idling, waiting on quota or on risk gates) resumes at no less than
 * the pass of the latest pick, so it cannot bank credit while it had nothing to run. Only eligible
 * Groups sit in the Group heap, so blocked and idle Groups cost a pick nothing.
 *
 * Inside a Group it orders by {@link schedulerRank}; a Coordinator's urgency never reaches the
 * cross-Group order. Risk-gated items wait outside the Group's heap until their gate opens.
 *
 * Ranks are fixed when an item is queued, so the `nowMs` given to {@link Scheduler.pick} never
 * changes the order; it is only checked to be finite. Every operation but
 * {@link Scheduler.estimatedPosition} is O(log n); that one costs O(k) for the k items ahead of
 * the asked one in its Group. A Group's record (weight, quota, pass) is kept once seen, so memory
 * grows with the number of Groups ever served, not only those with work. Items live in slots of
 * arrays that released and removed items hand back for reuse; those arrays keep the capacity of
 * the most items ever held at once (some 35 bytes a slot), while the items themselves are let go.
 *
 * Lenient by design where the Worker's view can race: releasing an item that is not active,
 * gating an item that is not queued and removing an active item do nothing.
 * @throws UsageError when `agingMs` is not a finite number > 0. Weights and quotas returned by
 * the option callbacks are checked when read and refused with UsageError in the same way.
 * @example
 * ```ts
 * const scheduler = createScheduler({ weightOf: (g) => (g === premium ? 3 : 1), quotaOf: () => 2 })
 * scheduler.enqueue({ id, groupId, urgency: urgencyLevel('high'), readyAtMs: clock.now() })
 * const next = scheduler.pick(clock.now())
 * // ... run it, then
 * if (next) scheduler.release(next.id)
 * ```
 */
export function createScheduler(options: SchedulerOptions = {}): Scheduler {
  const agingMs = options.agingMs ?? DEFAULT_AGING_MS
  if (!(Number.isFinite(agingMs) && agingMs > 0)) throw new UsageError(`createScheduler: agingMs must be a finite number > 0, got ${agingMs}`)
  const weightOf = options.weightOf ?? (() => 1)
  const quotaOf = options.quotaOf ?? (() => Number.POSITIVE_INFINITY)

  // Every queued or active item holds a slot and every Group an index: indices into the typed
  // arrays below. A hundred thousand items then cost array entries and one Map entry each, not
  // objects, and a pick reaches its Group's heap without touching an object of that Group.
  /** The slot of every queued or active item, by ID. */
  const slotById = new Map<string, number>()
  /** The item as the caller gave it: what pick returns. */
  const items: (SchedulerItem | undefined)[] = []
  /**
   * Each slot's position in its Group's heap while ready, else its state (GATED, ACTIVE, FREE),
   * and its enqueue order (`tie`): that order breaks rank ties first-come first-served and is
   * kept across re-enqueues.
   */
  const itemTable: SlotTable = { position: new Int32Array(INITIAL_SLOTS), tie: new Float64Array(INITIAL_SLOTS) }
  let ranks = new Float64Array(INITIAL_SLOTS)
  let groupOfSlot = new Int32Array(INITIAL_SLOTS)
  /** 1 when the item may be picked: opened by {@link Scheduler.setRiskGate} or never gated. */
  let gateOpen = new Uint8Array(INITIAL_SLOTS)
  /** Slots of released and removed items, reused last-freed first while still in cache. */
  const freeSlots: number[] = []

  /** Group indices by ID; an index is also the first-seen order that breaks ties of pass. */
  const groupById = new Map<string, number>()
  /**
   * Heap `g` holds the ready slots of Group `g`, by rank, then enqueue order. With a thousand
   * Groups taking turns each heap is cold when picked; the run lets most picks read one line.
   */
  const ready = new SlotHeaps(itemTable, { run: 8 })
  let weights = new Float64Array(INITIAL_SLOTS)
  let quotas = new Float64Array(INITIAL_SLOTS)
  /** Stride scheduling's virtual pass of each Group: advanced by 1 / weight per pick. */
  let passes = new Float64Array(INITIAL_SLOTS)
  /** Queued items of each Group held back by a closed risk gate, outside its heap. */
  let gatedCounts = new Int32Array(INITIAL_SLOTS)
  /** Items of each Group picked and not yet released. */
  let activeCounts = new Int32Array(INITIAL_SLOTS)
  /** Each Group's position in the eligible heap, and its index as tie-breaker. */
  const groupTable: SlotTable = { position: new Int32Array(INITIAL_SLOTS), tie: new Float64Array(INITIAL_SLOTS) }
  const eligibleHeaps = new SlotHeaps(groupTable)
  /** The Groups with a ready item and a free quota slot, by pass. */
  const eligible = eligibleHeaps.create()
  /** The pass of the latest pick: the global virtual time that re-entering Groups are lifted to. */
  let virtualTime = 0
  let nextSeq = 0
  let queuedTotal = 0
  /** Ready items in all Groups and the summed weight of the Groups holding them: the load {@link estimatedPosition} shares out. */
  let readyTotal = 0
  let loadWeight = 0

  function groupOf(groupId: string, weight?: number): number {
    let g = groupById.get(groupId)
    if (g === undefined) {
      const groupWeight = weight ?? checkWeight(groupId, weightOf(groupId))
      const quota = checkQuota(groupId, quotaOf(groupId))
      g = ready.create()
      if (g === weights.length) {
        const capacity = 2 * g
        weights = grownArray(weights, capacity)
        quotas = grownArray(quotas, capacity)
        passes = grownArray(passes, capacity)
        gatedCounts = grownArray(gatedCounts, capacity)
        activeCounts = grownArray(activeCounts, capacity)
        groupTable.position = grownArray(groupTable.position, capacity)
        groupTable.tie = grownArray(groupTable.tie, capacity)
      }
      weights[g] = groupWeight
      quotas[g] = quota
      passes[g] = virtualTime
      groupTable.tie[g] = g
      groupById.set(groupId, g)
    }
    return g
  }

  function allocate(item: SchedulerItem): number {
    const reused = freeSlots.pop()
    if (reused !== undefined) {
      items[reused] = item
      return reused
    }
    const slot = items.length
    if (slot === ranks.length) {
      const capacity = 2 * slot
      ranks = grownArray(ranks, capacity)
      groupOfSlot = grownArray(groupOfSlot, capacity)
      gateOpen = grownArray(gateOpen, capacity)
      itemTable.position = grownArray(itemTable.position, capacity)
      itemTable.tie = grownArray(itemTable.tie, capacity)
    }
    items.push(item)
    return slot
  }

  function free(slot: number, id: string): void {
    slotById.delete(id)
    items[slot] = undefined
    itemTable.position[slot] = FREE
    freeSlots.push(slot)
  }

  /** The slot of `id` while it is queued (ready or gated); `undefined` when absent or active. */
  function queuedSlot(id: string): number | undefined {
    const slot = slotById.get(id)
    if (slot === undefined) return undefined
    const state = itemTable.position[slot]!
    return state >= 0 || state === GATED ? slot : undefined
  }

  /** Puts Group `g` into or takes it out of the eligible heap after its counts changed. */
  function refresh(g: number): void {
    const isEligible = ready.size(g) > 0 && activeCounts[g]! < quotas[g]!
    if (isEligible === eligibleHeaps.has(eligible, g)) return
    if (isEligible) {
      // §11.1 weighted fairness: no credit for time spent with nothing to run.
      if (passes[g]! < virtualTime) passes[g] = virtualTime
      eligibleHeaps.push(eligible, g, passes[g]!)
    } else {
      eligibleHeaps.remove(eligible, g)
    }
  }

  /** Uncounts a slot that just left the heap of Group `g`. */
  function leftReady(g: number): void {
    readyTotal--
    if (ready.size(g) === 0) loadWeight -= weights[g]!
    // Summing and subtracting fractional weights drifts; an empty load is exactly zero.
    if (readyTotal === 0) loadWeight = 0
  }

  /** Files a queued slot in Group `g` as ready or gated by its gate; counts it as queued. */
  function file(slot: number, g: number): void {
    queuedTotal++
    if (gateOpen[slot] === 1) {
      if (ready.size(g) === 0) loadWeight += weights[g]!
      ready.push(g, slot, ranks[slot]!)
      readyTotal++
    } else {
      itemTable.position[slot] = GATED
      gatedCounts[g]!++
    }
  }

  /** Takes a queued slot out of the heap or gated count of Group `g`; uncounts it as queued. */
  function unfile(slot: number, g: number): void {
    queuedTotal--
    if (itemTable.position[slot]! >= 0) {
      ready.remove(g, slot)
      leftReady(g)
    } else gatedCounts[g]!--
  }

  function enqueue(item: SchedulerItem): void {
    checkItem(item)
    // Looked up first: a Group refused for its weight or quota leaves nothing half-changed.
    const g = groupOf(item.groupId)
    const gated = item.riskGated === true
    let slot = slotById.get(item.id)
    if (slot === undefined) {
      slot = allocate(item)
      slotById.set(item.id, slot)
      itemTable.tie[slot] = nextSeq++
      gateOpen[slot] = gated ? 0 : 1
    } else {
      const previousGroup = groupOfSlot[slot]!
      // A re-enqueue that keeps the risk flag keeps a gate the Worker already opened or closed.
      if ((items[slot]!.riskGated === true) !== gated) gateOpen[slot] = gated ? 0 : 1
      // §11.3 step 4-5: an item cannot run and wait at once; re-queueing it frees its slot.
      if (itemTable.position[slot] === ACTIVE) activeCounts[previousGroup]!--
      else unfile(slot, previousGroup)
      items[slot] = item
      if (previousGroup !== g) refresh(previousGroup)
    }
    ranks[slot] = schedulerRank(item, agingMs)
    groupOfSlot[slot] = g
    file(slot, g)
    refresh(g)
  }

  function remove(id: string): boolean {
    const slot = queuedSlot(id)
    if (slot === undefined) return false
    const g = groupOfSlot[slot]!
    unfile(slot, g)
    free(slot, id)
    refresh(g)
    return true
  }

  function pick(nowMs: number): SchedulerItem | undefined {
    if (!Number.isFinite(nowMs)) throw new UsageError(`Scheduler.pick: nowMs must be finite, got ${nowMs}`)
    const g = eligibleHeaps.peek(eligible)
    if (g === undefined) return undefined
    const slot = ready.pop(g)!
    // Read now, not on return: the load (a cache miss in a large queue) overlaps the bookkeeping.
    const item = items[slot]
    leftReady(g)
    queuedTotal--
    itemTable.position[slot] = ACTIVE
    const active = ++activeCounts[g]!
    const pass = passes[g]!
    virtualTime = pass
    passes[g] = pass + 1 / weights[g]!
    if (ready.size(g) > 0 && active < quotas[g]!) eligibleHeaps.rekey(eligible, g, passes[g]!)
    else eligibleHeaps.remove(eligible, g)
    return item
  }

  function release(id: string): void {
    const slot = slotById.get(id)
    // Releasing twice (a lease lost and then reported finished) is harmless.
    if (slot === undefined || itemTable.position[slot] !== ACTIVE) return
    const g = groupOfSlot[slot]!
    activeCounts[g]!--
    free(slot, id)
    refresh(g)
  }

  function setRiskGate(id: string, open: boolean): void {
    const slot = queuedSlot(id)
    if (slot === undefined || (gateOpen[slot] === 1) === open) return
    const g = groupOfSlot[slot]!
    unfile(slot, g)
    gateOpen[slot] = open ? 1 : 0
    file(slot, g)
    refresh(g)
  }

  function setWeight(groupId: string, weight: number): void {
    checkWeight(groupId, weight)
    const g = groupById.get(groupId)
    if (g === undefined) {
      groupOf(groupId, weight)
      return
    }
    if (ready.size(g) > 0) loadWeight += weight - weights[g]!
    weights[g] = weight
  }

  function estimatedPosition(id: string): number | undefined {
    const slot = queuedSlot(id)
    if (slot === undefined) return undefined
    const g = groupOfSlot[slot]!
    const own = ready.size(g)
    let ahead = 0
    ready.forEachBefore(g, ranks[slot]!, itemTable.tie[slot]!, () => void ahead++)
    // §11.2: the other Groups enter only as totals of weight and ready work. While this Group
    // serves `ahead + 1` items, stride scheduling lets the rest run about `weight share` times as many.
    const ownWeight = own > 0 ? weights[g]! : 0
    const otherWeight = Math.max(0, loadWeight - ownWeight)
    const interleaved = Math.min(readyTotal - own, ((ahead + 1) * otherWeight) / weights[g]!)
    return ahead + Math.floor(interleaved)
  }

  return {
    enqueue,
    remove,
    has: (id) => queuedSlot(id) !== undefined,
    pick,
    release,
    setRiskGate,
    setWeight,
    get size() {
      return queuedTotal
    },
    queued: (groupId) => {
      const g = groupById.get(groupId)
      return g === undefined ? 0 : ready.size(g) + gatedCounts[g]!
    },
    active: (groupId) => {
      const g = groupById.get(groupId)
      return g === undefined ? 0 : activeCounts[g]!
    },
    estimatedPosition,
  }
}
