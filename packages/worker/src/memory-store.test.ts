import { describe, expect, it } from 'vitest'
import { UsageError } from '@weft/codec'
import { checkContinuation, createMemoryWorkerStore } from './memory-store.js'
import { contractEvent, describeWorkerStoreContract } from './store-contract.js'

describeWorkerStoreContract({ describe, it, expect }, 'memory store', createMemoryWorkerStore)

describe('memory store specifics', () => {
  it('reports a broken continuation as a UsageError naming the expected sequence', () => {
    const group = 'urn:weft:test:group:1'
    expect(() => checkContinuation(group, 2, [contractEvent(group, 4)])).toThrow(UsageError)
    expect(() => checkContinuation(group, 2, [contractEvent(group, 4)])).toThrow(/continues at sequence 3/)
    expect(() => checkContinuation(group, 2, [contractEvent(group, 3), contractEvent(group, 4)])).not.toThrow()
  })

  it('keeps an ACK-only Group listed after clearProjectionLog and drops Groups that only had Events', () => {
    const store = createMemoryWorkerStore()
    const [a, b] = ['urn:weft:test:group:a', 'urn:weft:test:group:b']
    store.appendEvents(a, [contractEvent(a, 1)])
    store.appendEvents(b, [contractEvent(b, 1)])
    store.setAcked(b, 1)
    store.clearProjectionLog()
    expect(store.groups()).toEqual([b])
    expect(store.acked(b)).toBe(1)
  })

  it('appends a large run in one call', () => {
    const store = createMemoryWorkerStore()
    const group = 'urn:weft:test:group:big'
    const events = Array.from({ length: 200_000 }, (_, i) => contractEvent(group, i + 1))
    store.appendEvents(group, events)
    expect(store.cursor(group)).toBe(200_000)
    expect(store.events(group, 199_998)).toEqual(events.slice(199_998))
  })
})
