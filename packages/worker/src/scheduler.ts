/**
 * The reference Worker's Scheduler (§11.1): stride scheduling across Groups for weighted
 * fairness, a static rank of urgency, deadline and age inside each Group, per-Group quotas and
 * risk gates. Pure bookkeeping: no clock, no I/O; the Worker feeds it from its per-Group
 * projections and asks it which WorkItem goes into the next free slot.
 * @module
 */
import { UsageError } from '@weft/codec'
import type { RequestedUrgency } from '@weft/spec'
import type { Scheduler, SchedulerItem, SchedulerOptions } from './contracts.js'
import { IndexedHeap } from './heap.js'

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

type ItemState = 'ready' | 'gated'

interface ItemNode {
  heapIndex: number
  item: SchedulerItem
  group: GroupNode
  rank: number
  /** Enqueue order: breaks rank ties first-come first-served; kept across re-enqueues. */
  readonly seq: number
  state: ItemState
  /** Whether the item may be picked: opened by {@link Scheduler.setRiskGate} or never gated. */
  gateOpen: boolean
}

interface GroupNode {
  heapIndex: number
  readonly groupId: string
  /** First-seen order: breaks ties between equal passes deterministically. */
  readonly order: number
  weight: number
  readonly quota: number
  /** Stride scheduling's virtual pass: advanced by 1 / weight per pick. */
  pass: number
  readonly ready: IndexedHeap<ItemNode>
  gated: number
  active: number
}

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

function checkItem(item: SchedulerItem): void {
  const refuse = (needs: string): never => {
    throw new UsageError(`Scheduler.enqueue: the item needs ${needs}: ${JSON.stringify(item)}`)
  }
  if (typeof item.id !== 'string' || item.id === '') refuse('an id')
  if (typeof item.groupId !== 'string' || item.groupId === '') refuse('a groupId')
  // The starvation bound of schedulerRank holds only for urgencies within 0..MAX_URGENCY.
  if (!(Number.isFinite(item.urgency) && item.urgency >= 0 && item.urgency <= MAX_URGENCY)) refuse(`an urgency in 0..${MAX_URGENCY}`)
  if (!Number.isFinite(item.readyAtMs)) refuse('a finite readyAtMs')
  if (item.deadlineMs !== undefined && !Number.isFinite(item.deadlineMs)) refuse('a finite deadlineMs')
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
 * grows with the number of Groups ever served, not only those with work.
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

  /** Queued items by ID. */
  const waiting = new Map<string, ItemNode>()
  /** Picked and not yet released items by ID; kept apart so that release touches a small map. */
  const running = new Map<string, ItemNode>()
  const groups = new Map<string, GroupNode>()
  /** Groups with a ready item and a free quota slot, by pass. */
  const eligible = new IndexedHeap<GroupNode>()
  /** The pass of the latest pick: the global virtual time that re-entering Groups are lifted to. */
  let virtualTime = 0
  let nextSeq = 0
  let queuedTotal = 0
  /** Ready items in all Groups and the summed weight of the Groups holding them: the load {@link estimatedPosition} shares out. */
  let readyTotal = 0
  let loadWeight = 0

  function groupOf(groupId: string, weight?: number): GroupNode {
    let group = groups.get(groupId)
    if (group === undefined) {
      group = {
        heapIndex: -1,
        groupId,
        order: groups.size,
        weight: weight ?? checkWeight(groupId, weightOf(groupId)),
        quota: checkQuota(groupId, quotaOf(groupId)),
        pass: virtualTime,
        ready: new IndexedHeap<ItemNode>(),
        gated: 0,
        active: 0,
      }
      groups.set(groupId, group)
    }
    return group
  }

  /** Puts `group` into or takes it out of the eligible heap after its counts changed. */
  function refresh(group: GroupNode): void {
    const isEligible = group.ready.size > 0 && group.active < group.quota
    if (isEligible === eligible.has(group)) return
    if (isEligible) {
      // §11.1 weighted fairness: no credit for time spent with nothing to run.
      if (group.pass < virtualTime) group.pass = virtualTime
      eligible.push(group, group.pass, group.order)
    } else {
      eligible.remove(group)
    }
  }

  function addReady(node: ItemNode): void {
    const group = node.group
    if (group.ready.size === 0) loadWeight += group.weight
    group.ready.push(node, node.rank, node.seq)
    readyTotal++
    node.state = 'ready'
  }

  function dropReady(node: ItemNode): void {
    const group = node.group
    group.ready.remove(node)
    readyTotal--
    if (group.ready.size === 0) loadWeight -= group.weight
    // Summing and subtracting fractional weights drifts; an empty load is exactly zero.
    if (readyTotal === 0) loadWeight = 0
  }

  /** Files a queued node as ready or gated by its gate; counts it as queued. */
  function file(node: ItemNode): void {
    queuedTotal++
    if (node.gateOpen) addReady(node)
    else {
      node.state = 'gated'
      node.group.gated++
    }
  }

  /** Takes a queued node out of its Group's ready heap or gated count; uncounts it as queued. */
  function unfile(node: ItemNode): void {
    queuedTotal--
    if (node.state === 'ready') dropReady(node)
    else node.group.gated--
  }

  function enqueue(item: SchedulerItem): void {
    checkItem(item)
    const previousActive = running.get(item.id)
    const previous = previousActive ?? waiting.get(item.id)
    const group = groupOf(item.groupId)
    const rank = schedulerRank(item, agingMs)
    const gated = item.riskGated === true
    const node: ItemNode = {
      heapIndex: -1,
      item,
      group,
      rank,
      seq: previous?.seq ?? nextSeq++,
      state: 'ready',
      // A re-enqueue that keeps the risk flag keeps a gate the Worker already opened or closed.
      gateOpen: previous !== undefined && (previous.item.riskGated === true) === gated ? previous.gateOpen : !gated,
    }
    if (previous !== undefined) {
      const oldGroup = previous.group
      // §11.3 step 4-5: an item cannot run and wait at once; re-queueing it frees its slot.
      if (previousActive === undefined) unfile(previous)
      else {
        running.delete(item.id)
        oldGroup.active--
      }
      if (oldGroup !== group) refresh(oldGroup)
    }
    waiting.set(item.id, node)
    file(node)
    refresh(group)
  }

  function remove(id: string): boolean {
    const node = waiting.get(id)
    if (node === undefined) return false
    unfile(node)
    waiting.delete(id)
    refresh(node.group)
    return true
  }

  function pick(nowMs: number): SchedulerItem | undefined {
    if (!Number.isFinite(nowMs)) throw new UsageError(`Scheduler.pick: nowMs must be finite, got ${nowMs}`)
    const group = eligible.peek()
    if (group === undefined) return undefined
    const node = group.ready.peek()!
    unfile(node)
    waiting.delete(node.item.id)
    running.set(node.item.id, node)
    group.active++
    virtualTime = group.pass
    group.pass += 1 / group.weight
    if (group.ready.size > 0 && group.active < group.quota) eligible.rekey(group, group.pass, group.order)
    else eligible.remove(group)
    return node.item
  }

  function release(id: string): void {
    const node = running.get(id)
    // Releasing twice (a lease lost and then reported finished) is harmless.
    if (node === undefined) return
    running.delete(id)
    node.group.active--
    refresh(node.group)
  }

  function setRiskGate(id: string, open: boolean): void {
    const node = waiting.get(id)
    if (node === undefined || node.gateOpen === open) return
    unfile(node)
    node.gateOpen = open
    file(node)
    refresh(node.group)
  }

  function setWeight(groupId: string, weight: number): void {
    checkWeight(groupId, weight)
    const group = groups.get(groupId)
    if (group === undefined) {
      groupOf(groupId, weight)
      return
    }
    if (group.ready.size > 0) loadWeight += weight - group.weight
    group.weight = weight
  }

  function estimatedPosition(id: string): number | undefined {
    const node = waiting.get(id)
    if (node === undefined) return undefined
    const group = node.group
    let ahead = 0
    group.ready.forEachBefore(node.rank, node.seq, () => void ahead++)
    // §11.2: the other Groups enter only as totals of weight and ready work. While this Group
    // serves `ahead + 1` items, stride scheduling lets the rest run about `weight share` times as many.
    const ownWeight = group.ready.size > 0 ? group.weight : 0
    const otherWeight = Math.max(0, loadWeight - ownWeight)
    const otherReady = readyTotal - group.ready.size
    const interleaved = Math.min(otherReady, ((ahead + 1) * otherWeight) / group.weight)
    return ahead + Math.floor(interleaved)
  }

  return {
    enqueue,
    remove,
    has: (id) => waiting.has(id),
    pick,
    release,
    setRiskGate,
    setWeight,
    get size() {
      return queuedTotal
    },
    queued: (groupId) => {
      const group = groups.get(groupId)
      return group === undefined ? 0 : group.ready.size + group.gated
    },
    active: (groupId) => groups.get(groupId)?.active ?? 0,
    estimatedPosition,
  }
}
