import { keyPairFromSeed, UsageError } from '@weft/codec'
import type { EventFeed, FeedGroup, Transport } from '@weft/client'
import { describe, expect, it } from 'vitest'
import * as api from './index.js'
import { createMemoryWorkerStore } from './memory-store.js'
import { contractEvent } from './store-contract.js'
import { createWorker, type WorkerOptions } from './worker.js'

const transport: Transport = {
  submit: async () => {
    throw new Error('no Authority in this test')
  },
}

function recordingFeed() {
  const subscribed: FeedGroup[][] = []
  const feed: EventFeed = {
    subscribe: (groups) => (subscribed.push([...groups]), { close: () => {} }),
    ack: () => {},
  }
  return { feed, subscribed }
}

function options(overrides: Partial<WorkerOptions> = {}): WorkerOptions {
  return {
    actor: { type: 'agent', id: 'urn:weft:test:agent:worker-1' },
    signingKey: { keyId: 'urn:weft:test:key:worker-1', pair: keyPairFromSeed(new Uint8Array(32).fill(3)) },
    sessionEpoch: 1,
    transport,
    feed: recordingFeed().feed,
    slots: 2,
    executor: async () => {
      throw new Error('not run here')
    },
    clock: { now: () => Date.parse('2026-07-15T00:00:00.000Z') },
    ...overrides,
  }
}

describe('createWorker options', () => {
  const bad: readonly [string, Partial<WorkerOptions>][] = [
    ['a human actor', { actor: { type: 'human', id: 'urn:weft:test:human:x' } as never }],
    ['zero slots', { slots: 0 }],
    ['a fractional Session Epoch', { sessionEpoch: 1.5 }],
    ['no executor', { executor: undefined as never, executors: {} }],
    ['an out-of-range preemption urgency', { preemptAtUrgency: 4 }],
    ['a zero lease', { leases: { executionLeaseSeconds: 0 } }],
    ['an unbounded offline grace', { offlineGraceSeconds: 3600 }],
    ['bad admission limits', { admission: { maxQueued: -1 } }],
  ]
  for (const [name, overrides] of bad) {
    it(`refuses ${name} as local misuse`, () => {
      expect(() => createWorker(options(overrides))).toThrow(UsageError)
    })
  }
})

describe('joining and restarting', () => {
  it('subscribes each Group once, after its stored Cursor (§16)', () => {
    const store = createMemoryWorkerStore()
    store.appendEvents('urn:weft:test:group:one', [contractEvent('urn:weft:test:group:one', 1), contractEvent('urn:weft:test:group:one', 2)])
    const { feed, subscribed } = recordingFeed()
    const worker = createWorker(options({ store, feed }))
    worker.join(['urn:weft:test:group:one', 'urn:weft:test:group:two'])
    worker.join(['urn:weft:test:group:one'])
    expect(subscribed).toEqual([
      [
        { groupId: 'urn:weft:test:group:one', afterSequence: 2 },
        { groupId: 'urn:weft:test:group:two', afterSequence: 0 },
      ],
    ])
    expect(worker.projection.group('urn:weft:test:group:one')?.head).toBe(2)
  })

  it('starts offline when Commands are left in the offline buffer, so they are reconciled first (§11.5)', () => {
    const store = createMemoryWorkerStore()
    store.bufferCommand({ groupId: 'urn:weft:test:group:one', workItemId: 'urn:weft:test:work:a', kind: 'work.checkpoint', command: '{}', bufferedAtMs: 1 })
    expect(createWorker(options({ store })).offline).toBe(true)
    expect(createWorker(options()).offline).toBe(false)
  })
})

describe('the package surface', () => {
  it('exports every module of the Worker, its parts included', () => {
    for (const name of [
      'createWorker',
      'createScheduler',
      'urgencyLevel',
      'createProjection',
      'createInbox',
      'createMemoryWorkerStore',
      'workerReducers',
      'applyWorkerEvent',
      'decideAdmission',
      'retryDecision',
      'createOfflineBuffer',
      'createSlot',
      'ExecutorFailure',
      'describeWorkerStoreContract',
    ]) {
      expect(typeof (api as Record<string, unknown>)[name], name).not.toBe('undefined')
    }
  })
})
