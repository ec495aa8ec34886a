/**
 * Indexed 4-ary min-heaps keyed by a pair of numbers: each entry's position is recorded outside
 * the heap, so an entry can be removed or re-keyed in O(log n) without a search. The Scheduler
 * keeps its per-Group heaps (item slots by rank, then arrival) in one {@link SlotHeaps} and its
 * heap across Groups (Group indices by virtual pass, then first-seen order) in another;
 * {@link IndexedHeap} puts objects in one.
 * @module
 */
import { UsageError } from '@weft/codec'

/** A value an {@link IndexedHeap} can hold: the heap records in `heapIndex` where it keeps the node, -1 while outside any heap. */
export interface HeapNode {
  heapIndex: number
}

const INITIAL_CAPACITY = 8

/**
 * Children per entry. Four halves the depth of a binary heap, and with it the entries a sift moves
 * (each move writes that entry's recorded position, a cache miss in a large queue), for a few more
 * comparisons of adjacent numbers.
 */
const ARITY = 4

/** Numbers per heap entry: key, slot. */
const STRIDE = 2

/** Entries in the smallest region of the pool; regions hold this many times a power of two. */
const MIN_REGION = 16

/** Pool entries below which idle regions are left where they are rather than compacted away. */
const COMPACT_FLOOR = 4_096

/** A copy of `array` resized to `capacity` entries: cut short, or with zeros added. */
export function grownArray<A extends Float64Array | Int32Array | Uint8Array>(array: A, capacity: number): A {
  const copy = new (array.constructor as new (length: number) => A)(capacity)
  copy.set(array.subarray(0, Math.min(array.length, capacity)))
  return copy
}

/**
 * What {@link SlotHeaps} know of each slot of one numbering, indexed by slot: its position in the
 * heap holding it (-1 once it leaves), and its tie-breaker, which must not change while the slot
 * sits in a heap. A heap takes any negative position for "in no heap", so the owner may keep codes
 * of its own below -1 for such slots. The owner of the numbering grows both arrays as it hands out
 * more slots; the heaps read them afresh on every use.
 */
export interface SlotTable {
  position: Int32Array
  tie: Float64Array
}

/** The size class of a region of `capacity` entries: `capacity` is `MIN_REGION << class`. */
function sizeClass(capacity: number): number {
  return 31 - Math.clz32(capacity / MIN_REGION)
}

/** Options of {@link SlotHeaps}. */
export interface SlotHeapsOptions {
  /**
   * How many of each heap's first slots are kept apart in a short sorted run, 0..8 (default 0):
   * pops then take from the run, one cache line, and only every `run`-th pop refills it from the
   * heap proper, whose upper levels the refill's first pop brings into cache for the rest. Worth it
   * where many heaps take turns and each is cold when its turn comes; a heap re-keyed often (the
   * Scheduler's heap of Groups) goes without.
   */
  readonly run?: number
}

/**
 * A family of 4-ary min-heaps of slots (small non-negative integers, indices into arrays the owner
 * keeps), each ordered by key and then by the slot's tie-breaker in a shared {@link SlotTable}
 * (both numbers, smaller first). Heaps are numbered by {@link create}; a slot sits in at most one.
 *
 * All heaps share one typed array, each in a region of a power-of-two size that moves when the
 * heap outgrows it or shrinks to a quarter of it. Entries hold key and slot side by side, so a
 * level of a sift reads the four children from one or two cache lines and writes the parent where
 * the previous level already read; tie-breakers are fetched only when keys are equal. Reaching a
 * heap costs no object of its own: what keeps a pick cheap when a Worker holds a hundred thousand
 * queued items across a thousand Groups, each Group's heap cold in cache when its turn comes (see
 * also {@link SlotHeapsOptions.run}). Regions freed by moves are reused by size; once they add up
 * to half the pool it is compacted.
 * @throws UsageError from the constructor when `run` is not a whole number in 0..8.
 * @example
 * ```ts
 * const table: SlotTable = { position: new Int32Array(16), tie: new Float64Array(16) }
 * const heaps = new SlotHeaps(table)
 * const urgent = heaps.create()
 * heaps.push(urgent, 3, 10)
 * heaps.push(urgent, 7, 5)
 * heaps.pop(urgent) // 7
 * ```
 */
export class SlotHeaps {
  readonly #table: SlotTable
  /** Entries at the head of every region that hold the run; heap entry `i` sits at region entry `run + i`. */
  readonly #run: number
  #pool = new Float64Array(STRIDE * 4 * MIN_REGION)
  /** Pool entries handed out to regions so far, in use or idle. */
  #end = 0
  /** Idle regions by size class: offsets of regions of `MIN_REGION << class` entries. */
  readonly #idle: number[][] = []
  /** Entries in idle regions. */
  #idleEntries = 0
  #count = 0
  /**
   * Per heap: the first pool entry of its region, the region's entries (0 before the first push),
   * the entries of its heap proper and of its run (kept in descending order, the first slot last).
   */
  #offset = new Int32Array(4)
  #capacity = new Int32Array(4)
  #heapSize = new Int32Array(4)
  #runSize = new Int32Array(4)

  /** An empty family over the slots of `table`. */
  constructor(table: SlotTable, options: SlotHeapsOptions = {}) {
    const run = options.run ?? 0
    // The run lives at the head of each region: even the smallest must keep room for the heap proper.
    if (!(Number.isInteger(run) && run >= 0 && run <= MIN_REGION / 2)) {
      throw new UsageError(`SlotHeaps: run must be a whole number in 0..${MIN_REGION / 2}, got ${run}`)
    }
    this.#table = table
    this.#run = run
  }

  /** Adds an empty heap; returns its number (0, 1, 2, ... in order of creation). */
  create(): number {
    const heap = this.#count++
    if (heap === this.#offset.length) {
      this.#offset = grownArray(this.#offset, 2 * heap)
      this.#capacity = grownArray(this.#capacity, 2 * heap)
      this.#heapSize = grownArray(this.#heapSize, 2 * heap)
      this.#runSize = grownArray(this.#runSize, 2 * heap)
    }
    return heap
  }

  /** How many slots `heap` holds. */
  size(heap: number): number {
    return this.#runSize[heap]! + this.#heapSize[heap]!
  }

  /** Whether `slot` sits in `heap`. */
  has(heap: number, slot: number): boolean {
    const index = this.#table.position[slot] ?? -1
    const held = index < this.#run ? this.#runSize[heap]! : this.#run + this.#heapSize[heap]!
    return index >= 0 && index < held && this.#pool[STRIDE * (this.#offset[heap]! + index) + 1] === slot
  }

  /** The first slot of `heap`, left in place; `undefined` when it is empty. */
  peek(heap: number): number | undefined {
    const r = this.#runSize[heap]!
    if (r > 0) return this.#pool[STRIDE * (this.#offset[heap]! + r - 1) + 1]
    // Without a run the heap proper holds everything; with one, an empty run means an empty heap.
    return this.#heapSize[heap]! > 0 ? this.#pool[STRIDE * (this.#offset[heap]! + this.#run) + 1] : undefined
  }

  /** Adds a slot that is in no heap to `heap`, with its key; its tie-breaker is read from the table. */
  push(heap: number, slot: number, key: number): void {
    const capacity = this.#capacity[heap]!
    if (capacity === 0 || this.#heapSize[heap]! === capacity - this.#run) this.#move(heap, Math.max(MIN_REGION, 2 * capacity))
    const r = this.#runSize[heap]!
    const region = STRIDE * this.#offset[heap]!
    // The run holds the first slots: a slot before its largest one (kept first) belongs in it, and
    // any slot does while the heap proper is empty and the run has room.
    const intoRun = this.#run > 0 && (r === 0 || this.#before(key, slot, this.#pool[region]!, this.#pool[region + 1]!) || (r < this.#run && this.#heapSize[heap] === 0))
    if (!intoRun) {
      this.#heapPush(heap, slot, key)
      return
    }
    if (r === this.#run) {
      const lastKey = this.#pool[region]!
      const last = this.#pool[region + 1]!
      this.#runRemoveAt(heap, 0)
      this.#heapPush(heap, last, lastKey)
    }
    this.#runInsert(heap, slot, key)
  }

  /** Removes and returns the first slot of `heap`; `undefined` when it is empty. */
  pop(heap: number): number | undefined {
    const top = this.peek(heap)
    if (top !== undefined) this.#removeAt(heap, this.#table.position[top]!)
    return top
  }

  /** Removes `slot` from `heap`; `false` when it was not there. */
  remove(heap: number, slot: number): boolean {
    if (!this.has(heap, slot)) return false
    this.#removeAt(heap, this.#table.position[slot]!)
    return true
  }

  /**
   * Gives `slot` a new key in `heap`, in either direction, and takes up its tie-breaker anew (so the
   * owner may change it in the table just before); ignored when the slot is not in that heap.
   */
  rekey(heap: number, slot: number, key: number): void {
    if (!this.has(heap, slot)) return
    if (this.#run > 0) {
      this.remove(heap, slot)
      this.push(heap, slot, key)
      return
    }
    const base = STRIDE * this.#offset[heap]!
    this.#down(base, this.#heapSize[heap]!, this.#up(base, this.#table.position[slot]!, slot, key), slot, key)
  }

  /**
   * Visits every slot of `heap` ordered before (`key`, `tie`), in no particular order. Subtrees
   * whose root is not before it are skipped whole, so the cost is proportional to the number of
   * slots visited, not to the heap size.
   */
  forEachBefore(heap: number, key: number, tie: number, visit: (slot: number) => void): void {
    const region = STRIDE * this.#offset[heap]!
    const visitIf = (at: number): boolean => {
      const k = this.#pool[at]!
      const slot = this.#pool[at + 1]!
      if (!(k < key || (k === key && this.#table.tie[slot]! < tie))) return false
      visit(slot)
      return true
    }
    for (let j = 0; j < this.#runSize[heap]!; j++) visitIf(region + STRIDE * j)
    const n = this.#heapSize[heap]!
    const base = region + STRIDE * this.#run
    const stack: number[] = [0]
    for (let i = stack.pop(); i !== undefined; i = stack.pop()) {
      if (i >= n || !visitIf(base + STRIDE * i)) continue
      for (let c = ARITY * i + 1; c <= ARITY * i + ARITY; c++) stack.push(c)
    }
  }

  /** Whether `slot` with `key` comes strictly before `other` with `otherKey`. */
  #before(key: number, slot: number, otherKey: number, other: number): boolean {
    return key < otherKey || (key === otherKey && this.#table.tie[slot]! < this.#table.tie[other]!)
  }

  /** Takes the entry at region entry `index` (run or heap proper) out of `heap`, then refills or shrinks. */
  #removeAt(heap: number, index: number): void {
    const slot = this.#pool[STRIDE * (this.#offset[heap]! + index) + 1]!
    if (index < this.#run) this.#runRemoveAt(heap, index)
    else this.#heapRemoveAt(heap, index - this.#run)
    this.#table.position[slot] = -1
    if (this.#runSize[heap] === 0 && this.#heapSize[heap]! > 0 && this.#run > 0) this.#refill(heap)
    // A Group's burst of work must not pin its peak memory for the life of the Worker.
    const capacity = this.#capacity[heap]!
    if (capacity > MIN_REGION && 4 * this.size(heap) < capacity) this.#move(heap, capacity / 2)
  }

  /** Moves the first slots of the heap proper into the empty run, the first one last. */
  #refill(heap: number): void {
    const m = Math.min(this.#run, this.#heapSize[heap]!)
    const region = STRIDE * this.#offset[heap]!
    for (let j = m - 1; j >= 0; j--) {
      const key = this.#pool[region + STRIDE * this.#run]!
      const slot = this.#pool[region + STRIDE * this.#run + 1]!
      this.#heapRemoveAt(heap, 0)
      this.#place(region, j, slot, key)
    }
    this.#runSize[heap] = m
  }

  /** Inserts into the run of `heap`, which has room, keeping it in descending order. */
  #runInsert(heap: number, slot: number, key: number): void {
    const region = STRIDE * this.#offset[heap]!
    let j = this.#runSize[heap]!
    this.#runSize[heap] = j + 1
    for (; j > 0; j--) {
      const at = region + STRIDE * (j - 1)
      if (!this.#before(this.#pool[at]!, this.#pool[at + 1]!, key, slot)) break
      this.#place(region, j, this.#pool[at + 1]!, this.#pool[at]!)
    }
    this.#place(region, j, slot, key)
  }

  /** Closes the gap left by run entry `index` of `heap`; the leaving slot's position is the caller's to record. */
  #runRemoveAt(heap: number, index: number): void {
    const region = STRIDE * this.#offset[heap]!
    const r = this.#runSize[heap]! - 1
    this.#runSize[heap] = r
    for (let j = index; j < r; j++) this.#place(region, j, this.#pool[region + STRIDE * (j + 1) + 1]!, this.#pool[region + STRIDE * (j + 1)]!)
  }

  #heapPush(heap: number, slot: number, key: number): void {
    const n = this.#heapSize[heap]!
    this.#heapSize[heap] = n + 1
    this.#up(STRIDE * this.#offset[heap]!, n, slot, key)
  }

  /** Closes the gap left by entry `index` of the heap proper; the leaving slot's position is the caller's to record. */
  #heapRemoveAt(heap: number, index: number): void {
    const region = STRIDE * this.#offset[heap]!
    const n = this.#heapSize[heap]! - 1
    this.#heapSize[heap] = n
    if (index === n) return
    const at = region + STRIDE * (this.#run + n)
    const key = this.#pool[at]!
    const last = this.#pool[at + 1]!
    this.#down(region, n, this.#up(region, index, last, key), last, key)
  }

  /** Moves `heap` into a region of `capacity` entries (a power-of-two multiple of MIN_REGION). */
  #move(heap: number, capacity: number): void {
    const from = this.#offset[heap]!
    const oldCapacity = this.#capacity[heap]!
    const to = this.#take(capacity)
    // Positions count from the start of a heap's region, so moving it rewrites none of them.
    this.#pool.copyWithin(STRIDE * to, STRIDE * from, STRIDE * (from + this.#run + this.#heapSize[heap]!))
    this.#offset[heap] = to
    this.#capacity[heap] = capacity
    if (oldCapacity > 0) {
      const idle = (this.#idle[sizeClass(oldCapacity)] ??= [])
      idle.push(from)
      this.#idleEntries += oldCapacity
      if (this.#end > COMPACT_FLOOR && 2 * this.#idleEntries > this.#end) this.#compact()
    }
  }

  /** A region of `capacity` entries: an idle one of that size, else a new one at the end of the pool. */
  #take(capacity: number): number {
    const reused = this.#idle[sizeClass(capacity)]?.pop()
    if (reused !== undefined) {
      this.#idleEntries -= capacity
      return reused
    }
    const offset = this.#end
    this.#end += capacity
    if (STRIDE * this.#end > this.#pool.length) this.#pool = grownArray(this.#pool, 2 * STRIDE * this.#end)
    return offset
  }

  /** Packs the regions in use into a fresh pool, in heap order, leaving no idle region. */
  #compact(): void {
    let end = 0
    for (let heap = 0; heap < this.#count; heap++) end += this.#capacity[heap]!
    const pool = new Float64Array(2 * STRIDE * end)
    let offset = 0
    for (let heap = 0; heap < this.#count; heap++) {
      const from = STRIDE * this.#offset[heap]!
      pool.set(this.#pool.subarray(from, from + STRIDE * (this.#run + this.#heapSize[heap]!)), STRIDE * offset)
      this.#offset[heap] = offset
      offset += this.#capacity[heap]!
    }
    this.#pool = pool
    this.#end = end
    this.#idle.length = 0
    this.#idleEntries = 0
  }

  /** Writes `slot` with its key at entry `index` of the region starting at pool number `region`, and records its position. */
  #place(region: number, index: number, slot: number, key: number): void {
    this.#pool[region + STRIDE * index] = key
    this.#pool[region + STRIDE * index + 1] = slot
    this.#table.position[slot] = index
  }

  /** Settles `slot` (with its key) at heap-proper entry `index` or above it; returns its final entry. */
  #up(region: number, index: number, slot: number, key: number): number {
    const pool = this.#pool
    const base = region + STRIDE * this.#run
    while (index > 0) {
      const parent = ((index - 1) / ARITY) | 0
      const parentKey = pool[base + STRIDE * parent]!
      const parentSlot = pool[base + STRIDE * parent + 1]!
      if (!this.#before(key, slot, parentKey, parentSlot)) break
      this.#place(region, this.#run + index, parentSlot, parentKey)
      index = parent
    }
    this.#place(region, this.#run + index, slot, key)
    return index
  }

  /** Settles `slot` (with its key), now at heap-proper entry `index` of `n`, at or below it. */
  #down(region: number, n: number, index: number, slot: number, key: number): void {
    const pool = this.#pool
    const base = region + STRIDE * this.#run
    for (;;) {
      const first = ARITY * index + 1
      if (first >= n) break
      // The children of an entry are adjacent: their keys share one or two cache lines.
      let child = first
      let childKey = pool[base + STRIDE * first]!
      const last = Math.min(first + ARITY, n)
      for (let c = first + 1; c < last; c++) {
        const k = pool[base + STRIDE * c]!
        if (k < childKey || (k === childKey && this.#before(k, pool[base + STRIDE * c + 1]!, childKey, pool[base + STRIDE * child + 1]!))) {
          child = c
          childKey = k
        }
      }
      const childSlot = pool[base + STRIDE * child + 1]!
      if (!this.#before(childKey, childSlot, key, slot)) break
      this.#place(region, this.#run + index, childSlot, childKey)
      index = child
    }
    this.#place(region, this.#run + index, slot, key)
  }
}

/**
 * A 4-ary min-heap of objects, ordered by `key` and then by `tie`: one of {@link SlotHeaps} over
 * slots the heap hands out to its nodes, each node keeping its slot in `heapIndex`. The slots of
 * popped and removed nodes are reused; the table of nodes keeps the length of the most held at once.
 * @example
 * ```ts
 * const heap = new IndexedHeap<{ heapIndex: number }>()
 * const node = { heapIndex: -1 }
 * heap.push(node, 5, 0)
 * heap.rekey(node, 1, 0)
 * heap.pop() // node
 * ```
 */
export class IndexedHeap<T extends HeapNode> {
  readonly #table: SlotTable = { position: new Int32Array(INITIAL_CAPACITY), tie: new Float64Array(INITIAL_CAPACITY) }
  readonly #heaps = new SlotHeaps(this.#table)
  readonly #heap = this.#heaps.create()
  readonly #nodes: (T | undefined)[] = []
  readonly #free: number[] = []

  /** How many nodes the heap holds. */
  get size(): number {
    return this.#heaps.size(this.#heap)
  }

  /** Whether `node` sits in this heap. */
  has(node: T): boolean {
    return node.heapIndex >= 0 && this.#nodes[node.heapIndex] === node
  }

  /** The first node, left in place; `undefined` when empty. */
  peek(): T | undefined {
    const slot = this.#heaps.peek(this.#heap)
    return slot === undefined ? undefined : this.#nodes[slot]
  }

  /** Adds a node that is in no heap, with its key and tie-breaker. */
  push(node: T, key: number, tie: number): void {
    let slot = this.#free.pop()
    if (slot === undefined) {
      slot = this.#nodes.length
      this.#nodes.push(node)
      if (slot === this.#table.tie.length) {
        this.#table.position = grownArray(this.#table.position, 2 * slot)
        this.#table.tie = grownArray(this.#table.tie, 2 * slot)
      }
    } else this.#nodes[slot] = node
    node.heapIndex = slot
    this.#table.tie[slot] = tie
    this.#heaps.push(this.#heap, slot, key)
  }

  /** Removes and returns the first node; `undefined` when empty. */
  pop(): T | undefined {
    const slot = this.#heaps.pop(this.#heap)
    return slot === undefined ? undefined : this.#letGo(slot)
  }

  /** Removes `node`; `false` when it was not in this heap. */
  remove(node: T): boolean {
    if (!this.has(node)) return false
    this.#heaps.remove(this.#heap, node.heapIndex)
    this.#letGo(node.heapIndex)
    return true
  }

  /** Gives `node` a new key and tie-breaker, in either direction; ignored when it is not in this heap. */
  rekey(node: T, key: number, tie: number): void {
    if (!this.has(node)) return
    this.#table.tie[node.heapIndex] = tie
    this.#heaps.rekey(this.#heap, node.heapIndex, key)
  }

  /** Visits every node ordered before (`key`, `tie`), in no particular order; see {@link SlotHeaps.forEachBefore}. */
  forEachBefore(key: number, tie: number, visit: (node: T) => void): void {
    this.#heaps.forEachBefore(this.#heap, key, tie, (slot) => visit(this.#nodes[slot]!))
  }

  /** Frees the slot of a node that left the heap; returns the node. */
  #letGo(slot: number): T {
    const node = this.#nodes[slot]!
    this.#nodes[slot] = undefined
    this.#free.push(slot)
    node.heapIndex = -1
    return node
  }
}
