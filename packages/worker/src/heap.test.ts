import { UsageError } from '@weft/codec'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { IndexedHeap, SlotHeaps, type SlotTable } from './heap.js'

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

// ---------------------------------------------------------------------------------------------
// SlotHeaps: heaps of slots sharing one pool and one table, checked against sorted arrays.
// ---------------------------------------------------------------------------------------------

const SLOTS = 40
const HEAPS = 3

/** A table for `slots` slots, every position -1 ("in no heap"). */
const slotTable = (slots: number): SlotTable => ({ position: new Int32Array(slots).fill(-1), tie: new Float64Array(slots) })

type HeapOp =
  | { kind: 'push'; heap: number; slot: number; key: number; tie: number }
  | { kind: 'pop'; heap: number }
  | { kind: 'remove'; heap: number; slot: number }
  | { kind: 'rekey'; slot: number; key: number; tie: number }

// Few keys and ties, so equal keys (and equal pairs) are common.
const anyHeap = fc.nat(HEAPS - 1)
const anySlot = fc.nat(SLOTS - 1)
const anyKey = fc.integer({ min: 0, max: 12 })
const anyTie = fc.integer({ min: 0, max: 3 })
const anyHeapOp: fc.Arbitrary<HeapOp> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('push' as const), heap: anyHeap, slot: anySlot, key: anyKey, tie: anyTie }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('pop' as const), heap: anyHeap }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), heap: anyHeap, slot: anySlot }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('rekey' as const), slot: anySlot, key: anyKey, tie: anyTie }) },
)

/** The model's first entry of a heap: smallest key, then smallest tie, then (as the heaps do not promise more) any. */
function modelFirst(entries: Map<number, number>, table: SlotTable): { key: number; tie: number } | undefined {
  let best: { key: number; tie: number } | undefined
  for (const [slot, key] of entries) {
    const tie = table.tie[slot]!
    if (best === undefined || key < best.key || (key === best.key && tie < best.tie)) best = { key, tie }
  }
  return best
}

/** Per heap: size, first (key as `keyOf` knows it, tie) and held slots; then the slots in no heap. */
function bookkeeping(heaps: SlotHeaps, table: SlotTable, keyOf: (slot: number) => number | undefined): string {
  const parts: string[] = []
  const held = new Set<number>()
  for (let h = 0; h < HEAPS; h++) {
    const first = heaps.peek(h)
    const slots = Array.from({ length: SLOTS }, (_, slot) => slot).filter((slot) => heaps.has(h, slot))
    for (const slot of slots) held.add(slot)
    parts.push(`${heaps.size(h)} ${first === undefined ? '-' : `${keyOf(first)}/${table.tie[first]}`} [${slots.join(',')}]`)
  }
  const loose = Array.from({ length: SLOTS }, (_, slot) => slot).filter((slot) => !held.has(slot))
  return `${parts.join(' | ')} | free ${loose.map((slot) => `${slot}@${table.position[slot]}`).join(',')}`
}

/** The same text from the model: positions of slots in no heap are -1. */
function modelBookkeeping(model: readonly Map<number, number>[], table: SlotTable): string {
  const parts = model.map((entries) => {
    const first = modelFirst(entries, table)
    return `${entries.size} ${first === undefined ? '-' : `${first.key}/${first.tie}`} [${[...entries.keys()].sort((x, y) => x - y).join(',')}]`
  })
  const loose = Array.from({ length: SLOTS }, (_, slot) => slot).filter((slot) => model.every((entries) => !entries.has(slot)))
  return `${parts.join(' | ')} | free ${loose.map((slot) => `${slot}@-1`).join(',')}`
}

describe('SlotHeaps', () => {
  it('pops each heap in key-then-tie order after any pushes, pops, removals and re-keyings, with or without a run', () => {
    // Invariant: every heap yields what was put in it, minus what left, in (key, tie) order, and
    // knows exactly which slots it holds; the shared table always names each slot's place.
    fc.assert(
      fc.property(fc.constantFrom(0, 1, 3, 8), fc.array(anyHeapOp, { maxLength: 150, size: 'max' }), (run, ops) => {
        const table = slotTable(SLOTS)
        const heaps = new SlotHeaps(table, { run })
        for (let h = 0; h < HEAPS; h++) expect(heaps.create()).toBe(h)
        const model = Array.from({ length: HEAPS }, () => new Map<number, number>())
        const heapOf = (slot: number): number => model.findIndex((m) => m.has(slot))
        for (const op of ops) {
          if (op.kind === 'push' && heapOf(op.slot) === -1) {
            table.tie[op.slot] = op.tie
            heaps.push(op.heap, op.slot, op.key)
            model[op.heap]!.set(op.slot, op.key)
          } else if (op.kind === 'pop') {
            const expected = modelFirst(model[op.heap]!, table)
            const slot = heaps.pop(op.heap)
            if (expected === undefined) expect(slot).toBeUndefined()
            else {
              expect({ key: model[op.heap]!.get(slot!), tie: table.tie[slot!] }).toEqual(expected)
              model[op.heap]!.delete(slot!)
            }
          } else if (op.kind === 'remove') {
            expect(heaps.remove(op.heap, op.slot)).toBe(model[op.heap]!.delete(op.slot))
          } else if (op.kind === 'rekey') {
            const h = heapOf(op.slot)
            if (h >= 0) {
              table.tie[op.slot] = op.tie
              heaps.rekey(h, op.slot, op.key)
              model[h]!.set(op.slot, op.key)
            }
          }
          // One comparison per step keeps the run fast; the strings name what differs.
          const keyOf = (slot: number): number | undefined => model.find((entries) => entries.has(slot))?.get(slot)
          expect(bookkeeping(heaps, table, keyOf)).toBe(modelBookkeeping(model, table))
        }
        for (let h = 0; h < HEAPS; h++) {
          const probe = { key: 6, tie: 1 }
          const seen: number[] = []
          heaps.forEachBefore(h, probe.key, probe.tie, (slot) => seen.push(slot))
          const before = [...model[h]!].filter(([slot, key]) => key < probe.key || (key === probe.key && table.tie[slot]! < probe.tie)).map(([slot]) => slot)
          expect(seen.sort((a, b) => a - b)).toEqual(before.sort((a, b) => a - b))
        }
      }),
      { numRuns: 200, seed: 11 },
    )
  })

  it('keeps every heap in order while regions grow, shrink, move and the pool is compacted', () => {
    const slots = 12_000
    const table = slotTable(slots)
    const heaps = new SlotHeaps(table, { run: 8 })
    const [a, b, c] = [heaps.create(), heaps.create(), heaps.create()]
    const keyOf = (slot: number): number => Math.imul(slot, 0x9e3779b1) >>> 16
    // A burst far past the compaction floor, spread unevenly, then drained in turns: regions move
    // many times each way and the freed ones soon outweigh those in use.
    for (let slot = 0; slot < slots; slot++) {
      table.tie[slot] = slot
      heaps.push(slot % 5 === 0 ? a : slot % 5 < 3 ? b : c, slot, keyOf(slot))
    }
    const last = [-1, -1, -1]
    let popped = 0
    for (let turn = 0; popped < slots; turn++) {
      const h = turn % 3
      const slot = heaps.pop(h)
      if (slot === undefined) continue
      popped++
      expect(keyOf(slot) * slots + slot).toBeGreaterThan(last[h]!)
      last[h] = keyOf(slot) * slots + slot
      expect(table.position[slot]).toBe(-1)
    }
    expect([heaps.size(a), heaps.size(b), heaps.size(c), heaps.pop(a)]).toEqual([0, 0, 0, undefined])
  })

  it('refuses a run outside 0..8', () => {
    for (const run of [-1, 9, 1.5]) expect(() => new SlotHeaps(slotTable(1), { run })).toThrow(UsageError)
  })
})
