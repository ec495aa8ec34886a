/**
 * An indexed 4-ary min-heap keyed by a pair of numbers: each node records its own slot, so a node
 * can be removed or re-keyed in O(log n) without a search. The Scheduler keeps one per Group (items
 * by rank, then arrival) and one across Groups (Groups by virtual pass, then first-seen order).
 * @module
 */

/** A value an {@link IndexedHeap} can hold: the heap keeps `heapIndex` current, -1 while outside any heap. */
export interface HeapNode {
  heapIndex: number
}

const INITIAL_CAPACITY = 8

/**
 * Children per slot. Four halves the depth of a binary heap, and with it the nodes a sift moves
 * (each move writes that node's `heapIndex`, a cache miss in a large queue), for a few more
 * comparisons of adjacent numbers.
 */
const ARITY = 4

/**
 * A 4-ary min-heap over nodes that carry their own position, ordered by `key` and then by `tie`
 * (both numbers, smaller first). Keys sit in typed arrays beside the nodes, so sifting compares
 * contiguous numbers instead of chasing each node's fields through memory: what keeps a pick cheap
 * when a Worker holds a hundred thousand queued items. A node belongs to at most one heap at a
 * time, since it has one `heapIndex`.
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
  #nodes: T[] = []
  #keys = new Float64Array(INITIAL_CAPACITY)
  #ties = new Float64Array(INITIAL_CAPACITY)

  /** How many nodes the heap holds. */
  get size(): number {
    return this.#nodes.length
  }

  /** Whether `node` sits in this heap. */
  has(node: T): boolean {
    return node.heapIndex >= 0 && this.#nodes[node.heapIndex] === node
  }

  /** The first node, left in place; `undefined` when empty. */
  peek(): T | undefined {
    return this.#nodes[0]
  }

  /** Adds a node that is in no heap, with its key and tie-breaker. */
  push(node: T, key: number, tie: number): void {
    const index = this.#nodes.length
    if (index === this.#keys.length) this.#resize(2 * index)
    this.#nodes.push(node)
    this.#up(index, node, key, tie)
  }

  /** Removes and returns the first node; `undefined` when empty. */
  pop(): T | undefined {
    const top = this.#nodes[0]
    if (top !== undefined) this.#removeAt(0)
    return top
  }

  /** Removes `node`; `false` when it was not in this heap. */
  remove(node: T): boolean {
    if (!this.has(node)) return false
    this.#removeAt(node.heapIndex)
    return true
  }

  /** Gives `node` a new key and tie-breaker, in either direction; ignored when it is not in this heap. */
  rekey(node: T, key: number, tie: number): void {
    if (!this.has(node)) return
    const index = this.#up(node.heapIndex, node, key, tie)
    this.#down(index, node, key, tie)
  }

  /**
   * Visits every node ordered before (`key`, `tie`), in no particular order. Subtrees whose root is
   * not before it are skipped whole, so the cost is proportional to the number of nodes visited,
   * not to the heap size.
   */
  forEachBefore(key: number, tie: number, visit: (node: T) => void): void {
    const n = this.#nodes.length
    const stack: number[] = [0]
    for (let i = stack.pop(); i !== undefined; i = stack.pop()) {
      if (i >= n || !this.#before(i, key, tie)) continue
      visit(this.#nodes[i]!)
      for (let c = ARITY * i + 1; c <= ARITY * i + ARITY; c++) stack.push(c)
    }
  }

  /** Whether the node at `index` comes before (`key`, `tie`). */
  #before(index: number, key: number, tie: number): boolean {
    const k = this.#keys[index]!
    return k < key || (k === key && this.#ties[index]! < tie)
  }

  /** Copies the keys into arrays of `capacity` slots. */
  #resize(capacity: number): void {
    const n = this.#nodes.length
    const keys = new Float64Array(capacity)
    const ties = new Float64Array(capacity)
    keys.set(this.#keys.subarray(0, n))
    ties.set(this.#ties.subarray(0, n))
    this.#keys = keys
    this.#ties = ties
  }

  #removeAt(index: number): void {
    const nodes = this.#nodes
    const gone = nodes[index]!
    const lastIndex = nodes.length - 1
    const last = nodes.pop()!
    const key = this.#keys[lastIndex]!
    const tie = this.#ties[lastIndex]!
    gone.heapIndex = -1
    // A Group's burst of work must not pin its peak memory for the life of the Worker.
    if (lastIndex > INITIAL_CAPACITY && 4 * lastIndex < this.#keys.length) this.#resize(2 * lastIndex)
    if (index === lastIndex) return
    this.#down(this.#up(index, last, key, tie), last, key, tie)
  }

  #place(index: number, node: T, key: number, tie: number): void {
    this.#nodes[index] = node
    this.#keys[index] = key
    this.#ties[index] = tie
    node.heapIndex = index
  }

  /** Settles `node` (with its key) at `index` or above it; returns its final slot. */
  #up(index: number, node: T, key: number, tie: number): number {
    while (index > 0) {
      const parent = ((index - 1) / ARITY) | 0
      const parentKey = this.#keys[parent]!
      if (parentKey < key || (parentKey === key && this.#ties[parent]! <= tie)) break
      this.#place(index, this.#nodes[parent]!, parentKey, this.#ties[parent]!)
      index = parent
    }
    this.#place(index, node, key, tie)
    return index
  }

  /** Settles `node` (with its key), now at `index`, at or below it. */
  #down(index: number, node: T, key: number, tie: number): void {
    const n = this.#nodes.length
    const keys = this.#keys
    const ties = this.#ties
    for (;;) {
      const first = ARITY * index + 1
      if (first >= n) break
      // The children of a slot are adjacent in the key arrays: one cache line holds them all.
      let child = first
      const last = Math.min(first + ARITY, n)
      for (let c = first + 1; c < last; c++) {
        if (keys[c]! < keys[child]! || (keys[c] === keys[child] && ties[c]! < ties[child]!)) child = c
      }
      if (!this.#before(child, key, tie)) break
      this.#place(index, this.#nodes[child]!, keys[child]!, ties[child]!)
      index = child
    }
    this.#place(index, node, key, tie)
  }
}
