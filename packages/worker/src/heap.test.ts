import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { IndexedHeap } from './heap.js'

interface Node {
  heapIndex: number
  key: number
  /** Also the tie-breaker. */
  id: number
}

const byKey = (a: Node, b: Node): boolean => a.key < b.key || (a.key === b.key && a.id < b.id)
const node = (id: number, key: number): Node => ({ heapIndex: -1, key, id })
const sorted = (nodes: readonly Node[]): number[] => [...nodes].sort((a, b) => (byKey(a, b) ? -1 : byKey(b, a) ? 1 : 0)).map((n) => n.id)

function drain(heap: IndexedHeap<Node>): number[] {
  const out: number[] = []
  for (let n = heap.pop(); n !== undefined; n = heap.pop()) out.push(n.id)
  return out
}

describe('IndexedHeap', () => {
  it('pops in key order after pushes, removals and re-keyings in any order', () => {
    // Invariant: whatever was pushed, minus what was removed, leaves in order of its latest key.
    const op = fc.oneof(
      fc.record({ kind: fc.constant('push' as const), id: fc.nat(30), key: fc.integer({ min: -50, max: 50 }) }),
      fc.record({ kind: fc.constant('remove' as const), id: fc.nat(30) }),
      fc.record({ kind: fc.constant('rekey' as const), id: fc.nat(30), key: fc.integer({ min: -50, max: 50 }) }),
    )
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120, size: 'max' }), (ops) => {
        const heap = new IndexedHeap<Node>()
        const live = new Map<number, Node>()
        for (const o of ops) {
          const existing = live.get(o.id)
          if (o.kind === 'push' && existing === undefined) {
            const n = node(o.id, o.key)
            live.set(o.id, n)
            heap.push(n, n.key, n.id)
          } else if (o.kind === 'remove') {
            expect(existing === undefined ? false : heap.remove(existing)).toBe(existing !== undefined)
            live.delete(o.id)
          } else if (o.kind === 'rekey' && existing !== undefined) {
            existing.key = o.key
            heap.rekey(existing, o.key, o.id)
          }
          expect(heap.size).toBe(live.size)
        }
        const expected = sorted([...live.values()])
        expect(heap.peek()?.id).toBe(expected[0])
        expect(drain(heap)).toEqual(expected)
        for (const n of live.values()) expect(n.heapIndex).toBe(-1)
      }),
      { numRuns: 200, seed: 42 },
    )
  })

  it('keeps its order while its key arrays grow to a burst and shrink back', () => {
    const heap = new IndexedHeap<Node>()
    // Keys scattered by a multiplicative hash, so sifts run both ways.
    const nodes = Array.from({ length: 1_000 }, (_, i) => node(i, Math.imul(i, 0x9e3779b1) >>> 20))
    for (const n of nodes) heap.push(n, n.key, n.id)
    const expected = sorted(nodes)
    const popped: number[] = []
    for (let i = 0; i < 990; i++) popped.push(heap.pop()!.id)
    expect(popped).toEqual(expected.slice(0, 990))
    const late = node(5_000, -1)
    heap.push(late, late.key, late.id)
    expect(drain(heap)).toEqual([5_000, ...expected.slice(990)])
  })

  it('knows its own nodes and ignores removal or update of a stranger', () => {
    const heap = new IndexedHeap<Node>()
    const other = new IndexedHeap<Node>()
    const a = node(1, 1)
    const b = node(2, 2)
    heap.push(a, 1, 1)
    other.push(b, 2, 2)
    expect(heap.has(a)).toBe(true)
    expect(heap.has(b)).toBe(false)
    expect(heap.remove(b)).toBe(false)
    heap.rekey(b, 0, 0)
    expect(other.peek()).toBe(b)
    expect(drain(heap)).toEqual([1])
    expect(heap.pop()).toBeUndefined()
  })

  it('forEachBefore visits exactly the nodes ordered before the probe key, whether a node holds it or not', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 1000 }), { maxLength: 60, size: 'max' }), fc.integer({ min: 0, max: 1000 }), (keys, probeKey) => {
        const heap = new IndexedHeap<Node>()
        const nodes = keys.map((k, i) => node(i, k))
        for (const n of nodes) heap.push(n, n.key, 0)
        const seen: number[] = []
        heap.forEachBefore(probeKey, 0, (n) => seen.push(n.id))
        expect(seen.sort((x, y) => x - y)).toEqual(nodes.filter((n) => n.key < probeKey).map((n) => n.id))
      }),
      { numRuns: 200, seed: 7 },
    )
  })
})
