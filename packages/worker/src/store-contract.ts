/**
 * The behaviour every {@link WorkerStore} must have, as a reusable test suite: the memory store
 * and `@weft/store-sqlite` run the same cases. The test functions come in as a parameter, so this
 * module needs no test framework at run time; pass vitest's (or any compatible) `describe`, `it`
 * and `expect`.
 * @module
 */
import type { Event } from '@weft/spec'
import type { WorkerStore } from './seams.js'

/** The assertions the suite uses, as vitest's `expect` provides them. */
export interface ContractAssertion {
  toBe(expected: unknown): void
  toEqual(expected: unknown): void
  toThrow(expected?: string | RegExp): void
  toBeUndefined(): void
  toBeGreaterThan(expected: number): void
}

/** The test functions the suite is written against. */
export interface ContractHarness {
  readonly describe: (name: string, body: () => void) => void
  readonly it: (name: string, body: () => void) => void
  readonly expect: (actual: unknown) => ContractAssertion
}

/**
 * A well-formed Group Event for store tests: an Extension Profile fact (§18, so its payload is the
 * profile's own and may nest anything) at `sequence`. The signature is a placeholder; stores keep
 * Events, they do not verify them.
 */
export function contractEvent(groupId: string, sequence: number): Event {
  const id = `${groupId}:event:${sequence}`
  const authority = { type: 'service', id: 'urn:weft:test:authority' } as const
  return {
    protocolVersion: '0.1',
    eventId: id,
    groupId,
    sequence,
    aggregateRevision: sequence,
    kind: 'ext.weft.test.store_probe',
    actor: authority,
    cause: { type: 'timer', id: `${id}:cause` },
    correlationId: `${id}:correlation`,
    occurredAt: '2026-07-15T00:00:00.000Z',
    payload: { text: `probe ${sequence} é ✓`, nested: { n: sequence, list: [1, 'two', null, { deep: [true] }], big: 9007199254740991 } },
    acceptedBy: authority,
    signature: { algorithm: 'Ed25519', keyId: 'urn:weft:test:key', createdAt: '2026-07-15T00:00:00.000Z', value: 'AAAA' },
  }
}

const G1 = 'urn:weft:test:group:1'
const G2 = 'urn:weft:test:group:2'
const G3 = 'urn:weft:test:group:3'
const range = (group: string, from: number, to: number): Event[] => Array.from({ length: to - from + 1 }, (_, i) => contractEvent(group, from + i))
const buffered = (n: number) => ({ groupId: G1, workItemId: `urn:weft:test:work:${n}`, kind: 'work.checkpoint', command: `{"n":${n}}`, bufferedAtMs: 1000 + n })

/**
 * Registers the {@link WorkerStore} contract cases under `describe(name)`. `make` returns a new,
 * empty store each time. With `reopen` (close the store and open the same storage again), the
 * cases that prove durability run too.
 * @example
 * ```ts
 * import { describe, expect, it } from 'vitest'
 * describeWorkerStoreContract({ describe, it, expect }, 'memory store', createMemoryWorkerStore)
 * ```
 */
export function describeWorkerStoreContract(harness: ContractHarness, name: string, make: () => WorkerStore, reopen?: (store: WorkerStore) => WorkerStore): void {
  const { describe, it, expect } = harness
  const withStore = (body: (store: WorkerStore) => void) => () => {
    const store = make()
    try {
      body(store)
    } finally {
      store.close()
    }
  }

  describe(`${name}: WorkerStore contract`, () => {
    it(
      'starts empty',
      withStore((store) => {
        expect(store.cursor(G1)).toBe(0)
        expect(store.groups()).toEqual([])
        expect(store.events(G1)).toEqual([])
        expect(store.acked(G1)).toBe(0)
        expect(store.sideEffect('k')).toBeUndefined()
        expect(store.checkpoint('w')).toBeUndefined()
        expect(store.buffered()).toEqual([])
      }),
    )

    it(
      'appends contiguous Events, advances the cursor and reads them back in pages, equal to what was written',
      withStore((store) => {
        store.appendEvents(G1, range(G1, 1, 3))
        store.appendEvents(G1, range(G1, 4, 10))
        expect(store.cursor(G1)).toBe(10)
        expect(store.events(G1)).toEqual(range(G1, 1, 10))
        expect(store.events(G1, 4, 3)).toEqual(range(G1, 5, 7))
        expect(store.events(G1, 8)).toEqual(range(G1, 9, 10))
        expect(store.events(G1, 10)).toEqual([])
        store.appendEvents(G1, [])
        expect(store.cursor(G1)).toBe(10)
      }),
    )

    it(
      'refuses a gap, an overlap, a disorder or another Group’s Event, and then has written nothing',
      withStore((store) => {
        store.appendEvents(G1, range(G1, 1, 2))
        expect(() => store.appendEvents(G1, range(G1, 4, 5))).toThrow()
        expect(() => store.appendEvents(G1, range(G1, 2, 4))).toThrow()
        expect(() => store.appendEvents(G1, [contractEvent(G1, 4), contractEvent(G1, 3)])).toThrow()
        expect(() => store.appendEvents(G1, [contractEvent(G1, 3), contractEvent(G1, 4), contractEvent(G1, 6)])).toThrow()
        expect(() => store.appendEvents(G1, [contractEvent(G2, 3)])).toThrow()
        expect(() => store.appendEvents(G2, range(G2, 2, 2))).toThrow()
        expect(store.cursor(G1)).toBe(2)
        expect(store.events(G1)).toEqual(range(G1, 1, 2))
        expect(store.cursor(G2)).toBe(0)
        expect(store.events(G2)).toEqual([])
      }),
    )

    it(
      'starts an empty log after a visibility start (§8), continues it from there and refuses a second start',
      withStore((store) => {
        store.startAfter(G1, 4)
        expect(store.cursor(G1)).toBe(4)
        expect(() => store.appendEvents(G1, range(G1, 1, 2))).toThrow()
        store.appendEvents(G1, range(G1, 5, 7))
        expect(store.cursor(G1)).toBe(7)
        expect(store.events(G1)).toEqual(range(G1, 5, 7))
        expect(store.events(G1, 5, 1)).toEqual(range(G1, 6, 6))
        expect(() => store.startAfter(G1, 9)).toThrow()
        store.appendEvents(G2, range(G2, 1, 1))
        expect(() => store.startAfter(G2, 3)).toThrow()
        expect(store.cursor(G2)).toBe(1)
      }),
    )

    it(
      'keeps Groups apart and lists them in first-seen order, an ACK-only Group included',
      withStore((store) => {
        store.appendEvents(G2, range(G2, 1, 2))
        store.setAcked('urn:weft:test:group:3', 5)
        store.appendEvents(G1, range(G1, 1, 1))
        expect(store.groups()).toEqual([G2, 'urn:weft:test:group:3', G1])
        expect(store.cursor(G2)).toBe(2)
        expect(store.cursor(G1)).toBe(1)
      }),
    )

    it(
      'never lowers a stored ACK',
      withStore((store) => {
        store.setAcked(G1, 7)
        store.setAcked(G1, 3)
        expect(store.acked(G1)).toBe(7)
        store.setAcked(G1, 9)
        expect(store.acked(G1)).toBe(9)
        expect(store.acked(G2)).toBe(0)
      }),
    )

    it(
      'records a side effect once, refuses a second record of the key and keeps the first result',
      withStore((store) => {
        const result = { receipt: 'r-1', amounts: [1, 2], ok: true, none: null }
        store.recordSideEffect('k1', result)
        expect(store.sideEffect('k1')).toEqual({ result })
        expect(() => store.recordSideEffect('k1', { receipt: 'r-2' })).toThrow()
        expect(store.sideEffect('k1')).toEqual({ result })
        store.recordSideEffect('k2', null)
        expect(store.sideEffect('k2')).toEqual({ result: null })
        expect(store.sideEffect('k3')).toBeUndefined()
      }),
    )

    it(
      'hands out stored values that the caller cannot alter in the store',
      withStore((store) => {
        const state = { step: 1, list: [1] }
        store.putCheckpoint('w1', 1, state)
        state.list.push(2)
        expect(store.checkpoint('w1')).toEqual({ ownershipEpoch: 1, state: { step: 1, list: [1] } })
        const read = store.checkpoint('w1')?.state as { list: number[] }
        read.list.push(3)
        expect(store.checkpoint('w1')).toEqual({ ownershipEpoch: 1, state: { step: 1, list: [1] } })
      }),
    )

    it(
      'keeps the latest checkpoint per WorkItem',
      withStore((store) => {
        store.putCheckpoint('w1', 1, { step: 1 })
        store.putCheckpoint('w2', 4, 'other')
        store.putCheckpoint('w1', 2, { step: 2 })
        expect(store.checkpoint('w1')).toEqual({ ownershipEpoch: 2, state: { step: 2 } })
        expect(store.checkpoint('w2')).toEqual({ ownershipEpoch: 4, state: 'other' })
      }),
    )

    it(
      'numbers buffered Commands ascending, lists them in that order and drops only those named',
      withStore((store) => {
        const entries = [1, 2, 3, 4].map((n) => store.bufferCommand(buffered(n)))
        for (const [i, entry] of entries.entries()) {
          expect(entry).toEqual({ ...buffered(i + 1), seq: entry.seq })
          if (i > 0) expect(entry.seq).toBeGreaterThan(entries[i - 1]!.seq)
        }
        expect(store.buffered()).toEqual(entries)
        store.dropBuffered([entries[1]!.seq, entries[3]!.seq])
        expect(store.buffered()).toEqual([entries[0], entries[2]])
        const later = store.bufferCommand(buffered(5))
        // A dropped number is never handed out again: replay order stays unambiguous.
        expect(later.seq).toBeGreaterThan(entries[3]!.seq)
        expect(store.buffered()).toEqual([entries[0], entries[2], later])
      }),
    )

    it(
      'forgets logs and cursors on clearProjectionLog, and keeps side effects, checkpoints and the buffer',
      withStore((store) => {
        store.appendEvents(G1, range(G1, 1, 3))
        store.recordSideEffect('k', 1)
        store.putCheckpoint('w', 1, 'cp')
        const entry = store.bufferCommand(buffered(1))
        store.clearProjectionLog()
        expect(store.cursor(G1)).toBe(0)
        expect(store.events(G1)).toEqual([])
        expect(store.sideEffect('k')).toEqual({ result: 1 })
        expect(store.checkpoint('w')).toEqual({ ownershipEpoch: 1, state: 'cp' })
        expect(store.buffered()).toEqual([entry])
        store.appendEvents(G1, range(G1, 1, 2))
        expect(store.cursor(G1)).toBe(2)
      }),
    )

    it('is unusable after close', () => {
      const store = make()
      store.close()
      expect(() => store.cursor(G1)).toThrow()
    })

    if (reopen !== undefined) {
      it('keeps everything it wrote across a reopen', () => {
        const first = make()
        first.appendEvents(G1, range(G1, 1, 5))
        first.appendEvents(G2, range(G2, 1, 2))
        first.startAfter(G3, 6)
        first.setAcked(G1, 4)
        first.recordSideEffect('k', { done: true })
        first.putCheckpoint('w', 3, { step: 9 })
        const entries = [first.bufferCommand(buffered(1)), first.bufferCommand(buffered(2))]
        first.dropBuffered([entries[0]!.seq])
        const store = reopen(first)
        try {
          expect(store.groups()).toEqual([G1, G2, G3])
          expect(store.cursor(G1)).toBe(5)
          expect(store.events(G1)).toEqual(range(G1, 1, 5))
          expect(store.events(G2)).toEqual(range(G2, 1, 2))
          expect(store.cursor(G3)).toBe(6)
          store.appendEvents(G3, range(G3, 7, 7))
          expect(store.events(G3)).toEqual(range(G3, 7, 7))
          expect(store.acked(G1)).toBe(4)
          expect(store.sideEffect('k')).toEqual({ result: { done: true } })
          expect(() => store.recordSideEffect('k', 1)).toThrow()
          expect(store.checkpoint('w')).toEqual({ ownershipEpoch: 3, state: { step: 9 } })
          expect(store.buffered()).toEqual([entries[1]])
          expect(store.bufferCommand(buffered(3)).seq).toBeGreaterThan(entries[1]!.seq)
          store.appendEvents(G1, range(G1, 6, 6))
          expect(() => store.appendEvents(G2, range(G2, 4, 4))).toThrow()
        } finally {
          store.close()
        }
      })
    }
  })
}
